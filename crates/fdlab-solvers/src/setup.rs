//! Turning a validated case into backend-neutral stepper setups: material fields, the initial
//! condition, sources and receivers.

use crate::case::{BoundarySpec, Case, FieldSpec, Initial, Physics, Plan};
use crate::error::{Error, Result};
use crate::heat::HeatSetup;
use crate::output::read_npy;
use crate::physics::text_mask;
use crate::wave::{PointSource, WaveBoundary, WaveSetup};

/// A case ready to run: its plan and the setup of its stepper.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Time step, steps and stability limit.
    pub plan: Plan,
    /// The stepper's parameters.
    pub setup: Setup,
}

/// Parameters of one of the steppers.
#[derive(Debug, Clone)]
pub enum Setup {
    /// Heat equation.
    Heat(HeatSetup),
    /// Wave equation.
    Wave(WaveSetup),
    /// Maxwell FDTD.
    Fdtd(crate::fdtd::FdtdSetup),
}

impl Setup {
    /// Grid points along x, y and z (1 along the axes a 2-D case lacks).
    pub fn shape(&self) -> [usize; 3] {
        match self {
            Setup::Heat(s) => s.n,
            Setup::Wave(s) => s.n,
            Setup::Fdtd(s) => s.grid.n,
        }
    }
}

fn shape3(case: &Case) -> [usize; 3] {
    let s = &case.spec.grid.shape;
    [s[0], s[1], *s.get(2).unwrap_or(&1)]
}

fn load_grid_npy(case: &Case, key: &str, p: &std::path::Path) -> Result<Vec<f64>> {
    let path = case.resolve(p);
    let (shape, data) = read_npy(&path)?;
    let mut want: Vec<usize> = case.spec.grid.shape.clone();
    want.reverse();
    if shape != want {
        return Err(Error::Npy {
            path,
            detail: format!("{key}: shape {shape:?} does not match the grid; expected {want:?} (numpy order: slowest axis first)"),
        });
    }
    Ok(data)
}

/// Values of a material field: one value if constant, else one per grid point.
fn material(case: &Case, key: &str, spec: &FieldSpec) -> Result<Vec<f64>> {
    let n = shape3(case);
    let h = &case.spec.grid.spacing;
    match spec {
        FieldSpec::Constant(v) => Ok(vec![*v]),
        FieldSpec::Npy(p) => load_grid_npy(case, key, p),
        FieldSpec::Layered { axis, tops, values } => {
            let a = axis.unwrap_or(case.dim() - 1);
            if a >= case.dim() || tops.len() != values.len() || tops.is_empty() {
                return Err(Error::Invalid(format!(
                    "{key}.layered{}: needs axis < {} and as many tops as values",
                    case.line_of("layered"),
                    case.dim()
                )));
            }
            let mut out = Vec::with_capacity(n[0] * n[1] * n[2]);
            for k in 0..n[2] {
                for j in 0..n[1] {
                    for i in 0..n[0] {
                        let x = [i, j, k][a] as f64 * h[a];
                        let l = tops.iter().rposition(|&t| x >= t).unwrap_or(0);
                        out.push(values[l]);
                    }
                }
            }
            Ok(out)
        }
    }
}

fn initial(case: &Case) -> Result<Vec<f64>> {
    let n = shape3(case);
    let h = &case.spec.grid.spacing;
    let cells = n[0] * n[1] * n[2];
    match &case.spec.initial {
        Initial::Zero => Ok(vec![0.0; cells]),
        Initial::Npy(p) => load_grid_npy(case, "initial.npy", p),
        Initial::Gaussian {
            center,
            width,
            amplitude,
        } => {
            let mut out = Vec::with_capacity(cells);
            for k in 0..n[2] {
                for j in 0..n[1] {
                    for i in 0..n[0] {
                        let idx = [i, j, k];
                        let r2: f64 = (0..case.dim())
                            .map(|a| (idx[a] as f64 * h[a] - center[a]).powi(2))
                            .sum();
                        out.push(amplitude * (-r2 / (2.0 * width * width)).exp());
                    }
                }
            }
            Ok(out)
        }
        Initial::Text { text, value } => {
            let mask = text_mask(text, n[0], n[1])?;
            let mut out = vec![0.0; cells];
            let zs = if n[2] == 1 {
                0..1
            } else {
                n[2] / 2 - n[2] / 8..n[2] / 2 + n[2] / 8 + 1
            };
            for k in zs {
                for (c, m) in mask.iter().enumerate() {
                    out[c + n[0] * n[1] * k] = m * value;
                }
            }
            Ok(out)
        }
    }
}

/// Validate a case completely (material files included) and build its stepper setup.
pub fn prepare(case: &Case) -> Result<Prepared> {
    let s = &case.spec;
    let (key, spec) = match s.physics {
        Physics::Heat => ("material.diffusivity", &s.material.diffusivity),
        Physics::Wave => ("material.velocity", &s.material.velocity),
        Physics::Fdtd => {
            let (plan, setup) = crate::case::fdtd::prepare(case)?;
            return Ok(Prepared {
                plan,
                setup: Setup::Fdtd(setup),
            });
        }
    };
    let spec = spec.as_ref().ok_or_else(|| {
        Error::Invalid(format!(
            "{}: missing key `{key}` (e.g. `{} = {{ constant = 1.0 }}` under [material])",
            case.path.display(),
            key.rsplit('.').next().unwrap_or(key)
        ))
    })?;
    let mat = material(case, key, spec)?;
    if mat.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
        return Err(Error::Invalid(format!(
            "{key}{}: every value must be positive and finite",
            case.line_of(key.rsplit('.').next().unwrap_or(key))
        )));
    }
    let plan = case.validate_with(mat.iter().cloned().fold(0.0, f64::max))?;
    let n = shape3(case);
    let mut spacing = [1.0; 3];
    spacing[..case.dim()].copy_from_slice(&s.grid.spacing);
    let init = initial(case)?;
    let setup = match s.physics {
        Physics::Heat => Setup::Heat(HeatSetup {
            n,
            dim: case.dim(),
            spacing,
            order: s.scheme.order,
            dt: plan.dt,
            kappa: mat,
            periodic: *case.boundary() == BoundarySpec::Periodic,
            initial: init,
        }),
        // Returned at the top of this function, before the material fields.
        Physics::Fdtd => unreachable!("fdtd cases are prepared by case::fdtd::prepare"),
        Physics::Wave => {
            let f0 = s.sources.iter().map(|x| x.frequency).fold(0.0, f64::max);
            let boundary = match *case.boundary() {
                BoundarySpec::Periodic => WaveBoundary::Periodic,
                BoundarySpec::Dirichlet => WaveBoundary::Rigid,
                BoundarySpec::Cpml { thickness } => WaveBoundary::Cpml {
                    thickness,
                    f0: if f0 > 0.0 { f0 } else { 1.0 / (20.0 * plan.dt) },
                },
            };
            let sources = s
                .sources
                .iter()
                .filter_map(|x| {
                    Some(PointSource {
                        cell: case.nearest(&x.position)?,
                        f0: x.frequency,
                        t0: x.delay.unwrap_or(1.5 / x.frequency),
                        amplitude: x.amplitude,
                    })
                })
                .collect();
            let receivers = s
                .receivers
                .iter()
                .filter_map(|r| case.nearest(&r.position))
                .collect();
            Setup::Wave(WaveSetup {
                n,
                dim: case.dim(),
                spacing,
                order: s.scheme.order,
                dt: plan.dt,
                velocity: mat,
                boundary,
                initial: init,
                previous: None,
                sources,
                receivers,
            })
        }
    };
    Ok(Prepared { plan, setup })
}
