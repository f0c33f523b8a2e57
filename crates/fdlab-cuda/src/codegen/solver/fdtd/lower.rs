//! FDTD step descriptions onto the FDTD kernels: a description in the Yee form
//! ([`YeeForm`], built by [`fdlab_core::step::physics::yee`]) gives the kernels' physics
//! (walls or wraps per axis, the curls' weights, the CPML slabs, Drude currents); the
//! schedule gives the rest of an [`FdtdSpec`] (tile, blocks per SM, medium index, choices).

use super::{FdtdSpec, KernelChoices};
use crate::codegen::solver::Launch;
use fdlab_core::step::{StepDescription, StepError, YeeForm};
use fdlab_core::Grid;

/// A Yee step lowered onto the FDTD kernels: the fields of [`FdtdSpec`] that its description
/// decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoweredFdtd {
    /// Per axis: wraps around (else PEC walls, a CPML's included).
    pub periodic: [bool; 3],
    /// Per axis: `1/Δ`, the E curl's and the CPML terms' difference weight.
    pub inv: [f64; 3],
    /// Per axis: `Δt/Δ`, the H curl's difference weight.
    pub rate: [f64; 3],
    /// `Δt`, the weight of the H side's CPML terms (0 without a CPML).
    pub dt: f64,
    /// Per axis: the CPML's thickness in cells, if the axis has one.
    pub cpml: [Option<usize>; 3],
    /// Whether the step advances Drude currents.
    pub drude: bool,
}

impl LoweredFdtd {
    /// Lowers `d` on `grid`, or says which part is not the Yee form.
    ///
    /// ```
    /// use fdlab_core::step::physics::{yee, Yee};
    /// use fdlab_cuda::codegen::solver::fdtd::lower::LoweredFdtd;
    /// let g = fdlab_core::Grid::new(&[12, 10, 14], &[0.1; 3]).unwrap();
    /// let spec = Yee { dt: 0.05, walls: [true; 3], cpml: [None, None, Some(4)], drude: false };
    /// let l = LoweredFdtd::of(&yee(&g, &spec).unwrap(), &g).unwrap();
    /// assert_eq!(l.cpml, [None, None, Some(4)]);
    /// assert_eq!(l.rate, [0.05 / 0.1; 3]);
    /// ```
    pub fn of(d: &StepDescription, grid: &Grid) -> Result<LoweredFdtd, StepError> {
        let f = YeeForm::of(d, grid)?;
        Ok(LoweredFdtd {
            periodic: f.walls.map(|w| !w),
            inv: f.inv,
            rate: f.rate,
            dt: f.dt,
            cpml: f.cpml,
            drude: f.drude,
        })
    }

    /// The spec of the kernels in `ty` (`"float"` or `"double"`) with the tile `launch`, the
    /// medium index or not (`indexed`) and the schedule's `choices`; no bound on blocks per
    /// SM and no wall skipped (the steppers derive the core blocks' spec with
    /// [`FdtdSpec::clear_of_layers`]).
    pub fn spec(
        &self,
        ty: &'static str,
        launch: Launch,
        indexed: bool,
        choices: KernelChoices,
    ) -> FdtdSpec {
        FdtdSpec {
            ty,
            periodic: self.periodic,
            inv: self.inv,
            rate: self.rate,
            dt: self.dt,
            cpml: self.cpml,
            launch,
            min_blocks: 0,
            indexed,
            drude: self.drude,
            interior: [false; 3],
            choices,
        }
    }
}
