//! Explicit heat / diffusion: `u⁺ = u + Δt κ(x) L u`, any even order, 2-D and 3-D.

use crate::bands::sweep;
use crate::error::{Error, Result};
use crate::heat_row::HeatRow;
use crate::layout::{from_bytes, to_bytes, HaloFill, Layout};
use crate::stepper::{StatePart, Stepper};
use fdlab_core::Scalar;

/// Heat equation parameters in backend-neutral form.
#[derive(Debug, Clone)]
pub struct HeatSetup {
    /// Grid sizes (nz = 1 in 2-D).
    pub n: [usize; 3],
    /// Number of axes (2 or 3).
    pub dim: usize,
    /// Spacing per axis.
    pub spacing: [f64; 3],
    /// Spatial accuracy order (even).
    pub order: usize,
    /// Time step.
    pub dt: f64,
    /// Diffusivity: one value, or one per grid point (x fastest).
    pub kappa: Vec<f64>,
    /// Periodic (true) or zero-valued (false) boundaries.
    pub periodic: bool,
    /// Initial field at the grid points.
    pub initial: Vec<f64>,
}

/// CPU heat stepper with a fused row loop parallel over rows.
pub struct HeatCpu<T: Scalar> {
    /// Seconds [`HeatSetup::coefficients`] took while building.
    coefficients_s: f64,
    layout: Layout,
    periodic: bool,
    /// Per axis, weights for offsets 1..=r; the centre weights are summed in `w0`.
    w: [Vec<T>; 3],
    w0: T,
    coef: Vec<T>,
    coef_const: T,
    u: Vec<T>,
    v: Vec<T>,
    step: u64,
    reference: bool,
    /// Whether `u`'s periodic halos hold the images of its interior.
    halos_filled: bool,
    /// Fills `u`'s halos before each step instead of the setup's boundary.
    halo_fill: Option<Box<dyn HaloFill<T>>>,
}

/// The heat update's coefficients as plain f64 arrays: what any backend uploads.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatCoefficients {
    /// Per axis, second-derivative weights for offsets 0..=r (divided by h²; zero on unused axes).
    pub w: [Vec<f64>; 3],
    /// Sum of the centre weights over the axes.
    pub w0: f64,
    /// `Δt κ`: one value, or one per grid point (x fastest).
    pub dt_kappa: Vec<f64>,
}

impl HeatSetup {
    /// The backend-neutral coefficients of this setup.
    pub fn coefficients(&self) -> Result<HeatCoefficients> {
        let (w, w0) = self.weights()?;
        let dt_kappa = crate::par::map(&self.kappa, |k| k * self.dt);
        Ok(HeatCoefficients { w, w0, dt_kappa })
    }

    /// The second-derivative weights per axis and the sum of their centre weights (as in
    /// [`HeatCoefficients`]): what generating the kernels reads, without an array of the
    /// grid's size.
    pub fn weights(&self) -> Result<([Vec<f64>; 3], f64)> {
        let form = fdlab_core::step::StencilUpdate::of(&self.description()?)?;
        Ok(form.symmetric_weights(self.dim, self.order / 2)?)
    }

    /// The step as a description: `u⁺ = u + Δtκ Σ_a ∂²_a u` with this setup's order and
    /// boundary, `Δtκ` a literal when κ is constant, else the field
    /// [`Leapfrog::DT_KAPPA`](fdlab_core::step::physics::Leapfrog::DT_KAPPA).
    pub fn description(&self) -> Result<fdlab_core::step::StepDescription> {
        use fdlab_core::step::physics::{heat, DtKappa};
        let grid = fdlab_core::Grid::new(&self.n[..self.dim], &self.spacing[..self.dim])?;
        let boundary = if self.periodic {
            fdlab_core::Boundary::Periodic
        } else {
            fdlab_core::Boundary::Dirichlet
        };
        let dt_kappa = if self.field_kappa() {
            DtKappa::Field
        } else {
            DtKappa::Constant(self.dt_kappa_first())
        };
        Ok(heat(&grid, self.order, boundary, dt_kappa)?)
    }

    /// Whether the diffusivity is a field (one value per grid point) rather than a constant.
    pub fn field_kappa(&self) -> bool {
        self.kappa.len() > 1
    }

    /// `Δt κ` at the first grid point: the whole of it when κ is constant.
    pub fn dt_kappa_first(&self) -> f64 {
        self.kappa[0] * self.dt
    }
}

impl<T: Scalar> HeatCpu<T> {
    /// Build the stepper; `kappa` of length 1 is a constant diffusivity.
    pub fn new(s: &HeatSetup) -> Result<Self> {
        let layout = Layout::new(s.n, s.dim, s.order / 2);
        let t = std::time::Instant::now();
        let co = s.coefficients()?;
        let coefficients_s = t.elapsed().as_secs_f64();
        let w: [Vec<T>; 3] =
            std::array::from_fn(|a| co.w[a].iter().map(|&x| T::from_f64(x)).collect());
        let w0 = co.w0;
        let (coef, coef_const) = if co.dt_kappa.len() == 1 {
            (vec![], T::from_f64(co.dt_kappa[0]))
        } else {
            (layout.pad(&co.dt_kappa), T::zero())
        };
        let u: Vec<T> = layout.pad(&s.initial);
        Ok(HeatCpu {
            coefficients_s,
            layout,
            periodic: s.periodic,
            w,
            w0: T::from_f64(w0),
            coef,
            coef_const,
            v: u.clone(),
            u,
            step: 0,
            reference: false,
            halos_filled: false,
            halo_fill: None,
        })
    }

    /// Fill the halos with `fill` before every step instead of the setup's boundary (periodic
    /// images or zeros): how a subdomain of a decomposed grid gets its neighbours' values.
    pub fn set_halo_fill(&mut self, fill: Box<dyn HaloFill<T>>) {
        self.periodic = false;
        self.halo_fill = Some(fill);
    }

    /// Use the simple per-point reference loop instead of the fused one (for tests).
    pub fn use_reference(&mut self, on: bool) {
        self.reference = on;
    }

    /// One step: each row in one vectorised pass written straight into `v` with streaming
    /// stores ([`HeatRow`]), rows in parallel bands and halos refilled ([`crate::bands::sweep`]).
    fn step_fused(&mut self) -> Option<(usize, f64)> {
        let kernel = HeatRow {
            l: self.layout,
            w: &self.w,
            w0: self.w0,
            coef: &self.coef,
            cc: self.coef_const,
        };
        let u = &self.u;
        let (isa, periodic) = (HeatRow::<T>::isa(), self.periodic);
        sweep(&self.layout, periodic, &mut self.v, |c, prow: &mut [T]| {
            kernel.run(isa, u, c, prow, periodic)
        })
    }

    fn step_reference(&mut self) -> Option<(usize, f64)> {
        let l = self.layout;
        let mut bad = None;
        for k in 0..l.n[2] {
            for j in 0..l.n[1] {
                for i in 0..l.n[0] {
                    let c = l.idx(i, j, k);
                    let mut lap = self.w0.as_f64() * self.u[c].as_f64();
                    for a in 0..l.dim {
                        let s = l.stride(a);
                        for m in 1..=l.r {
                            let sum = self.u[c - m * s].as_f64() + self.u[c + m * s].as_f64();
                            lap += self.w[a][m].as_f64() * sum;
                        }
                    }
                    let kk = if self.coef.is_empty() {
                        self.coef_const
                    } else {
                        self.coef[c]
                    };
                    let val = self.u[c].as_f64() + kk.as_f64() * lap;
                    self.v[c] = T::from_f64(val);
                    // The stored value: an f32 step can overflow where the f64 sum does not.
                    if bad.is_none() && !self.v[c].is_finite() {
                        bad = Some((c, self.v[c].as_f64()));
                    }
                }
            }
        }
        bad
    }
}

impl<T: Scalar> Stepper for HeatCpu<T> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        crate::startup::BuildTimes {
            coefficients_s: self.coefficients_s,
            ..Default::default()
        }
    }

    fn advance(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            // The fused step leaves its output's halos filled; anything else (a new or
            // restored field, the reference step) needs them filled here.
            if let Some(fill) = self.halo_fill.as_mut() {
                fill.fill(&self.layout, &mut self.u)?;
            } else if self.periodic && !self.halos_filled {
                self.layout.fill_periodic(&mut self.u);
            }
            let bad = if self.reference {
                self.step_reference()
            } else {
                self.step_fused()
            };
            self.halos_filled = !self.reference;
            self.step += 1;
            std::mem::swap(&mut self.u, &mut self.v);
            if let Some((c, value)) = bad {
                return Err(Error::NonFinite {
                    step: self.step,
                    cell: self.layout.point(c),
                    value,
                });
            }
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<Vec<f64>> {
        Ok(self.layout.unpad(&self.u))
    }

    fn traces(&self) -> &[Vec<f64>] {
        &[]
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        let u = self.layout.zero_halos(&self.u, T::zero());
        Ok(vec![("u".into(), to_bytes(&u))])
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let len = self.layout.len();
        let u = parts
            .iter()
            .find(|(n, _)| n == "u")
            .and_then(|(_, b)| from_bytes(b, len))
            .ok_or_else(|| {
                Error::Invalid("checkpoint state has no field u of this grid's size".into())
            })?;
        self.u = u;
        self.step = step;
        self.halos_filled = false;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.layout.cells()
    }

    fn bytes_per_step(&self) -> usize {
        let fields = if self.coef.is_empty() { 2 } else { 3 };
        fields * self.layout.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cpu"
    }
}
