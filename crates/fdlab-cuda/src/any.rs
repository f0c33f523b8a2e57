//! Fields and plans whose precision is run-time data (read from a case file or a command
//! line), with a typed error where the precisions of a plan and a field differ.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::field::{DeviceField, FieldMeta};
use crate::plan::{Plan, PlanOptions};
use crate::strategy::Strategy;
use fdlab_core::{Boundary, Grid, Precision, Stencil};

/// A [`DeviceField`] of either precision.
///
/// ```no_run
/// use fdlab_core::{Grid, Precision};
/// use fdlab_cuda::{AnyField, Device};
/// let dev = Device::open(0)?;
/// let f = AnyField::zeros(&dev, &Grid::unit(&[32, 32, 32])?, Precision::F32)?;
/// assert_eq!(f.precision(), Precision::F32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum AnyField {
    /// Single precision.
    F32(DeviceField<f32>),
    /// Double precision.
    F64(DeviceField<f64>),
}

impl AnyField {
    /// Zeros on `grid` in `precision`.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Precision}; use fdlab_cuda::{AnyField, Device};
    /// # let dev = Device::open(0)?;
    /// let f = AnyField::zeros(&dev, &Grid::unit(&[8, 8])?, Precision::F64)?;
    /// assert_eq!(f.meta().shape, [8, 8, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn zeros(dev: &Device, grid: &Grid, precision: Precision) -> Result<AnyField> {
        Ok(match precision {
            Precision::F32 => AnyField::F32(DeviceField::zeros(dev, grid)?),
            Precision::F64 => AnyField::F64(DeviceField::zeros(dev, grid)?),
        })
    }

    /// The element type.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Precision}; use fdlab_cuda::{AnyField, Device};
    /// # let dev = Device::open(0)?;
    /// let f = AnyField::zeros(&dev, &Grid::unit(&[8])?, Precision::F64)?;
    /// assert_eq!(f.precision(), Precision::F64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn precision(&self) -> Precision {
        self.meta().precision
    }

    /// Shape, precision and owner.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Precision}; use fdlab_cuda::{AnyField, Device};
    /// # let dev = Device::open(0)?;
    /// let f = AnyField::zeros(&dev, &Grid::unit(&[8])?, Precision::F32)?;
    /// assert_eq!(f.meta().device, dev.id());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn meta(&self) -> FieldMeta {
        match self {
            AnyField::F32(f) => f.meta(),
            AnyField::F64(f) => f.meta(),
        }
    }
}

impl From<DeviceField<f32>> for AnyField {
    fn from(f: DeviceField<f32>) -> Self {
        AnyField::F32(f)
    }
}

impl From<DeviceField<f64>> for AnyField {
    fn from(f: DeviceField<f64>) -> Self {
        AnyField::F64(f)
    }
}

/// A [`Plan`] of either precision.
///
/// ```no_run
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::{AnyField, AnyPlan, Device, Error, PlanOptions};
/// let dev = Device::open(0)?;
/// let g = Grid::unit(&[64, 64, 64])?;
/// let lap = [Stencil::laplacian(&g, 2)?];
/// let plan = AnyPlan::new(&dev, &lap, Boundary::Periodic, &g, Precision::F64, PlanOptions::default())?;
/// let u = AnyField::zeros(&dev, &g, Precision::F32)?;
/// let mut out = AnyField::zeros(&dev, &g, Precision::F64)?;
/// assert!(matches!(plan.apply(&u, &mut [&mut out]), Err(Error::Precision { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum AnyPlan {
    /// Single precision.
    F32(Plan<f32>),
    /// Double precision.
    F64(Plan<f64>),
}

impl AnyPlan {
    /// [`Device::plan`] in `precision`.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{AnyPlan, Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let p = AnyPlan::new(&dev, &[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g,
    ///     Precision::F32, PlanOptions::default())?;
    /// assert_eq!(p.precision(), Precision::F32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        dev: &Device,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        precision: Precision,
        opts: PlanOptions,
    ) -> Result<AnyPlan> {
        Ok(match precision {
            Precision::F32 => AnyPlan::F32(dev.plan(stencils, boundary, grid, opts)?),
            Precision::F64 => AnyPlan::F64(dev.plan(stencils, boundary, grid, opts)?),
        })
    }

    /// The plan's element type.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{AnyPlan, Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let p = AnyPlan::new(&dev, &[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g,
    ///     Precision::F64, PlanOptions::default())?;
    /// assert_eq!(p.precision(), Precision::F64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn precision(&self) -> Precision {
        match self {
            AnyPlan::F32(_) => Precision::F32,
            AnyPlan::F64(_) => Precision::F64,
        }
    }

    /// The strategy the plan runs.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{AnyPlan, Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let p = AnyPlan::new(&dev, &[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g,
    ///     Precision::F64, PlanOptions::default())?;
    /// println!("{}", p.strategy());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn strategy(&self) -> Strategy {
        match self {
            AnyPlan::F32(p) => p.strategy(),
            AnyPlan::F64(p) => p.strategy(),
        }
    }

    /// [`Plan::apply`], refusing fields of the other precision with [`Error::Precision`].
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{AnyField, AnyPlan, Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let p = AnyPlan::new(&dev, &[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g,
    ///     Precision::F32, PlanOptions::default())?;
    /// let u = AnyField::zeros(&dev, &g, Precision::F32)?;
    /// let mut out = AnyField::zeros(&dev, &g, Precision::F32)?;
    /// p.apply(&u, &mut [&mut out])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self, input: &AnyField, outputs: &mut [&mut AnyField]) -> Result<()> {
        let want = self.precision();
        let wrong = |what: String, got: Precision| Error::Precision {
            what,
            expected: want,
            got,
        };
        match (self, input) {
            (AnyPlan::F32(p), AnyField::F32(u)) => {
                let mut outs = Vec::with_capacity(outputs.len());
                for (n, o) in outputs.iter_mut().enumerate() {
                    match &mut **o {
                        AnyField::F32(f) => outs.push(f),
                        other => return Err(wrong(format!("output {n}"), other.precision())),
                    }
                }
                p.apply(u, &mut outs)
            }
            (AnyPlan::F64(p), AnyField::F64(u)) => {
                let mut outs = Vec::with_capacity(outputs.len());
                for (n, o) in outputs.iter_mut().enumerate() {
                    match &mut **o {
                        AnyField::F64(f) => outs.push(f),
                        other => return Err(wrong(format!("output {n}"), other.precision())),
                    }
                }
                p.apply(u, &mut outs)
            }
            (_, u) => Err(wrong("the input".into(), u.precision())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shareable<T: Send + Sync>() {}

    #[test]
    fn handles_fields_and_plans_cross_threads() {
        // Solvers keep plans and fields in structs moved to worker threads.
        shareable::<Device>();
        shareable::<DeviceField<f32>>();
        shareable::<Plan<f64>>();
        shareable::<AnyPlan>();
        shareable::<AnyField>();
        shareable::<crate::stream::Stream>();
        shareable::<crate::stream::Event>();
    }
}
