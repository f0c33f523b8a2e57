//! Turning a validated case into backend-neutral stepper setups: material fields, the initial
//! condition, sources and receivers.

use crate::case::{BoundarySpec, Case, FieldSpec, Initial, Physics, Plan};
use crate::error::{Error, Result};
use crate::heat::HeatSetup;
use crate::output::read_npy;
use crate::physics::{text_mask, vd_speed, wave_vd_dt_limit};
use crate::wave::{PointSource, ShotPoints, WaveBoundary, WaveSetup};
use rayon::prelude::*;
use std::time::Instant;

/// Rows of a field that one parallel task fills at least: enough to outweigh a task's cost.
const ROWS_PER_TASK: usize = 16;

/// A new field of `n` points (x fastest) whose value at row `j` of plane `k` is what `row`
/// writes into that row's slice, the rows filled in parallel.
fn fill_rows(n: [usize; 3], row: impl Fn(usize, usize, &mut [f64]) + Sync) -> Vec<f64> {
    let mut out = vec![0.0; n[0] * n[1] * n[2]];
    out.par_chunks_mut(n[0].max(1))
        .with_min_len(ROWS_PER_TASK)
        .enumerate()
        .for_each(|(r, dst)| row(r % n[1], r / n[1], dst));
    out
}

/// A case ready to run: its plan, the setup of its stepper and what looks wrong but runs.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Time step, steps and stability limit.
    pub plan: Plan,
    /// The stepper's parameters.
    pub setup: Setup,
    /// What the case asks for that runs but probably not as meant (a source in the absorbing
    /// layer, a wavelength of a few cells, a source that peaks after the run), one line each,
    /// starting with the key concerned (e.g. `sources[0]: …`). Nothing here is printed: the
    /// caller shows them.
    pub warnings: Vec<String>,
    /// Each shot's sources and receivers, for a case with shots (empty otherwise); the
    /// setup holds the first shot's.
    pub shots: Vec<ShotPoints>,
    /// Seconds preparing spent building the material and initial fields.
    pub coefficients_s: f64,
    /// When preparing (or, through [`crate::validate`], validating) ended.
    pub ready: Instant,
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
    // Name the key as well as the file: the file's name need not say what it is for.
    let (shape, data) = read_npy(&path).map_err(|e| match Error::from(e) {
        Error::Io { path, source } => Error::Npy {
            detail: format!("{key}: cannot read: {source}"),
            path,
        },
        Error::Npy { path, detail } => Error::Npy {
            detail: format!("{key}: {detail}"),
            path,
        },
        e => e,
    })?;
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
                return Err(case.invalid(
                    &format!("{key}.layered"),
                    format!("needs axis < {} and as many tops as values", case.dim()),
                ));
            }
            // The value along the layering axis, once per coordinate; rows copy or fill it.
            let along: Vec<f64> = (0..n[a])
                .map(|c| {
                    let x = c as f64 * h[a];
                    values[tops.iter().rposition(|&t| x >= t).unwrap_or(0)]
                })
                .collect();
            Ok(fill_rows(n, |j, k, dst| match a {
                0 => dst.copy_from_slice(&along),
                1 => dst.fill(along[j]),
                _ => dst.fill(along[k]),
            }))
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
        } => Ok(fill_rows(n, |j, k, dst| {
            for (i, v) in dst.iter_mut().enumerate() {
                let idx = [i, j, k];
                let r2: f64 = (0..case.dim())
                    .map(|a| (idx[a] as f64 * h[a] - center[a]).powi(2))
                    .sum();
                *v = amplitude * (-r2 / (2.0 * width * width)).exp();
            }
        })),
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

/// Grid cell `[i, j, k]` of point `idx` in x-fastest order.
fn cell_of_index(n: [usize; 3], idx: usize) -> [usize; 3] {
    [idx % n[0], idx / n[0] % n[1], idx / (n[0] * n[1])]
}

/// Where point `idx` of a field is, for a message: the grid cell and, for a field read from a
/// file, the numpy index (slowest axis first), which is how its author addresses it.
fn describe_point(case: &Case, idx: usize, from_npy: bool) -> String {
    let n = shape3(case);
    let c = cell_of_index(n, idx);
    let cell = format!("grid cell {:?}", &c[..case.dim()]);
    if !from_npy {
        return cell;
    }
    let mut np: Vec<usize> = c[..case.dim()].to_vec();
    np.reverse();
    format!("numpy index {np:?}, {cell}")
}

/// Refuse a material field with a value that is not positive and finite, naming the first.
fn check_material(case: &Case, key: &str, spec: &FieldSpec, mat: &[f64]) -> Result<()> {
    let Some(idx) = crate::par::position_first(mat, |v| !(v > 0.0 && v.is_finite())) else {
        return Ok(());
    };
    let v = mat[idx];
    let what = "every value must be positive and finite";
    match spec {
        FieldSpec::Npy(p) => Err(Error::Npy {
            path: case.resolve(p),
            detail: format!("{key}: {v} at {}: {what}", describe_point(case, idx, true)),
        }),
        FieldSpec::Constant(_) => Err(case.invalid(key, format!("{v}: {what}"))),
        FieldSpec::Layered { .. } => Err(case.invalid(
            &format!("{key}.layered"),
            format!("{v} at {}: {what}", describe_point(case, idx, false)),
        )),
    }
}

/// Refuse an initial field with a NaN or an infinity, naming the first: the step would spread
/// it over the grid, and the run would stop at step 1 blaming the time step.
fn check_initial(case: &Case, init: &[f64]) -> Result<()> {
    let Some(idx) = crate::par::position_first(init, |v| !v.is_finite()) else {
        return Ok(());
    };
    let v = init[idx];
    let what = "every value of the initial field must be finite";
    match &case.spec.initial {
        Initial::Npy(p) => Err(Error::Npy {
            path: case.resolve(p),
            detail: format!(
                "initial.npy: {v} at {}: {what}",
                describe_point(case, idx, true)
            ),
        }),
        _ => Err(case.invalid(
            "initial",
            format!("{v} at {}: {what}", describe_point(case, idx, false)),
        )),
    }
}

/// Memory available for new allocations (`MemAvailable` of `/proc/meminfo`), if the system
/// says.
fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuse a grid whose fields would not fit in memory, before allocating them: an allocation
/// that fails aborts the process instead of returning an error. Two f64 arrays of the grid's
/// size are the least any run holds on the host (heat and wave: the initial and material
/// fields that preparing builds; fdtd: any two of its six components); the steppers need
/// more.
fn check_memory(case: &Case, cells: usize) -> Result<()> {
    const GIB: f64 = (1u64 << 30) as f64;
    // Every solver holds two f64 fields of the grid while it prepares; a variable-density
    // wave holds its description's fields too: p (three levels), b, K, and per axis of a CPML
    // two memory variables and four coefficients.
    let fields = match (&case.spec.material.density, case.boundary()) {
        (None, _) => 2,
        (Some(_), BoundarySpec::Cpml { .. }) => 5 + 6 * case.dim(),
        (Some(_), _) => 5,
    };
    let need = cells as u128 * fields as u128 * 8;
    // Above isize::MAX bytes no allocation can succeed, whatever the system says.
    let avail = available_memory().map_or(isize::MAX as u128, |m| m as u128);
    if need <= avail {
        return Ok(());
    }
    Err(case.invalid(
        "grid.shape",
        format!(
            "{:?} is {cells} points; {fields} fields of that size alone need {:.1} GiB, \
             more than the {:.1} GiB of memory available: use a smaller grid",
            case.spec.grid.shape,
            need as f64 / GIB,
            avail as f64 / GIB
        ),
    ))
}

/// `material.density` of a wave case, checked like the other material fields; refused in a
/// heat case (which has no density).
fn density(case: &Case) -> Result<Option<Vec<f64>>> {
    let key = "material.density";
    let Some(spec) = &case.spec.material.density else {
        return Ok(None);
    };
    if case.spec.physics != Physics::Wave {
        return Err(case.invalid(
            key,
            "only wave cases have a density; remove it from this case".into(),
        ));
    }
    let rho = material(case, key, spec)?;
    check_material(case, key, spec, &rho)?;
    Ok(Some(rho))
}

/// The interpolation points of a source or receiver at `x` whose nearest cell is `cell`
/// (checked to fit when the case was validated): empty when it is that cell alone.
fn spread_of(case: &Case, x: &[f64], cell: [usize; 3]) -> Vec<crate::hicks::Weighted> {
    match case.spread(x) {
        Some(points) if points != [(cell, 1.0)] => points,
        _ => vec![],
    }
}

/// The samples of `sources[i].wavelet` (file `p`) for a run of `steps` steps: one dimension,
/// finite values, no more than `steps` of them; fewer add a warning (zero after the end).
fn wavelet(
    case: &Case,
    key: &str,
    p: &std::path::Path,
    row: Option<usize>,
    steps: u64,
    warnings: &mut Vec<String>,
) -> Result<std::sync::Arc<[f64]>> {
    let path = case.resolve(p);
    let refuse = |detail: String| Error::Npy {
        path: path.clone(),
        detail: format!("{key}: {detail}"),
    };
    let (shape, data) = read_npy(&path).map_err(|e| match Error::from(e) {
        Error::Io { source, .. } => refuse(format!("cannot read: {source}")),
        Error::Npy { detail, .. } => refuse(detail),
        e => e,
    })?;
    let data = match (row, shape.as_slice()) {
        (None, [_]) => data,
        (Some(r), [rows, n]) if r < *rows => data[r * n..(r + 1) * n].to_vec(),
        _ => vec![],
    };
    if data.is_empty() {
        return Err(refuse(format!(
            "shape {shape:?}: give a 1-D array of one value per time step"
        )));
    }
    if let Some(k) = data.iter().position(|v| !v.is_finite()) {
        return Err(refuse(format!(
            "sample {k} is {}: every value must be finite",
            data[k]
        )));
    }
    let n = data.len() as u64;
    if n > steps {
        return Err(refuse(format!(
            "{n} samples, more than the run's {steps} steps (one sample per step of dt): \
             resample it to the run's dt, cut it to {steps} samples, or lengthen \
             time.duration"
        )));
    }
    if n < steps {
        warnings.push(format!(
            "{key}: {n} samples for a run of {steps} steps: the source is zero after step {n}"
        ));
    }
    Ok(data.into())
}

/// The sources (their wavelets read) and receivers of `case` for a run of `steps` steps;
/// keys in messages start with `prefix` (e.g. `shots[2].`).
fn shot_points(
    case: &Case,
    prefix: &str,
    steps: u64,
    warnings: &mut Vec<String>,
) -> Result<ShotPoints> {
    let s = &case.spec;
    let mut sources = vec![];
    for (i, x) in s.sources.iter().enumerate() {
        let Some(cell) = case.nearest(&x.position) else {
            continue;
        };
        let wavelet = match &x.wavelet {
            Some(p) => {
                let key = match x.wavelet_row {
                    Some(_) => "geometry.wavelet".to_string(),
                    None => format!("{prefix}sources[{i}].wavelet"),
                };
                Some(wavelet(case, &key, p, x.wavelet_row, steps, warnings)?)
            }
            None => None,
        };
        sources.push(PointSource {
            cell,
            f0: x.frequency,
            t0: x.delay.unwrap_or(1.5 / x.frequency),
            amplitude: x.amplitude,
            spread: spread_of(case, &x.position, cell),
            wavelet,
        });
    }
    let (receivers, receiver_spread) = s
        .receivers
        .iter()
        .filter_map(|r| {
            let cell = case.nearest(&r.position)?;
            Some((cell, spread_of(case, &r.position, cell)))
        })
        .unzip();
    Ok(ShotPoints {
        sources,
        receivers,
        receiver_spread,
    })
}

/// Validate a case completely (material files included) and build its stepper setup.
pub fn prepare(case: &Case) -> Result<Prepared> {
    let s = &case.spec;
    let (key, spec) = match s.physics {
        Physics::Heat => ("material.diffusivity", &s.material.diffusivity),
        Physics::Wave => ("material.velocity", &s.material.velocity),
        Physics::Fdtd => {
            // Validation allocates nothing of the grid's size here; the stepper will.
            let (plan, setup) = crate::case::fdtd::prepare(case)?;
            check_memory(case, setup.grid.cells())?;
            return Ok(Prepared {
                plan,
                setup: Setup::Fdtd(setup),
                warnings: vec![],
                shots: vec![],
                coefficients_s: 0.0,
                ready: Instant::now(),
            });
        }
    };
    // The grid first: everything below is sized or indexed by it.
    let cells = case.check_grid()?;
    check_memory(case, cells)?;
    let spec = spec.as_ref().ok_or_else(|| {
        case.invalid(
            key,
            format!(
                "missing; give e.g. `{} = {{ constant = 1.0 }}` under [material]",
                key.rsplit('.').next().unwrap_or(key)
            ),
        )
    })?;
    let fields = Instant::now();
    let mat = material(case, key, spec)?;
    check_material(case, key, spec, &mat)?;
    let density = density(case)?;
    let mut coefficients_s = fields.elapsed().as_secs_f64();
    let c_max = crate::par::max(&mat, 0.0);
    let plan = match &density {
        // Checked positive and finite: the limit is that of the staggered scheme.
        Some(rho) if c_max > 0.0 && c_max.is_finite() => {
            let c_eff = vd_speed(shape3(case), case.dim(), s.scheme.order / 2, rho, &mat);
            let limit = wave_vd_dt_limit(s.scheme.order, &s.grid.spacing, c_eff)
                .map_err(|e| case.invalid("scheme.order", e.to_string()))?;
            let why = format!(
                "leapfrog CFL of the variable-density step: c_eff·dt·sqrt(λ_max) ≤ 2 with \
                 c_eff = {c_eff} (sqrt of the largest ρc² times the largest 1/ρ it meets), \
                 order {}",
                s.scheme.order
            );
            case.validate_with_limit(c_max, Some((limit, why)))?
        }
        _ => case.validate_with(c_max)?,
    };
    let fields = Instant::now();
    let init = initial(case)?;
    check_initial(case, &init)?;
    coefficients_s += fields.elapsed().as_secs_f64();
    let c_min = crate::par::min(&mat, f64::INFINITY);
    let mut warnings = match s.physics {
        Physics::Wave => crate::case::warnings::wave(case, &plan, c_min),
        _ => vec![],
    };
    let shot_specs = case.shots()?;
    let mut shots = Vec::with_capacity(shot_specs.len());
    for (i, shot) in shot_specs.iter().enumerate() {
        let one = case.shot_case(shot);
        let prefix = format!("shots[{i}].");
        one.check_points(&prefix)?;
        // The shared receivers were looked at above, with the case.
        let own_receivers = shot.receivers != s.receivers;
        let own = crate::case::warnings::wave(&one, &plan, c_min)
            .into_iter()
            .filter(|w| own_receivers || !w.starts_with("receivers["));
        warnings.extend(own.map(|w| format!("{prefix}{w}")));
        shots.push(shot_points(&one, &prefix, plan.steps, &mut warnings)?);
    }
    let n = shape3(case);
    let mut spacing = [1.0; 3];
    spacing[..case.dim()].copy_from_slice(&s.grid.spacing);
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
            // One absorbing layer for every shot: tuned to the highest frequency of all.
            let f0 = s
                .sources
                .iter()
                .chain(shot_specs.iter().flat_map(|shot| &shot.sources))
                .map(|x| x.frequency)
                .fold(0.0, f64::max);
            let boundary = match *case.boundary() {
                BoundarySpec::Periodic => WaveBoundary::Periodic,
                BoundarySpec::Dirichlet => WaveBoundary::Rigid,
                BoundarySpec::Cpml { thickness } => WaveBoundary::Cpml {
                    thickness,
                    f0: if f0 > 0.0 { f0 } else { 1.0 / (20.0 * plan.dt) },
                },
            };
            let points = match shots.first() {
                Some(first) => first.clone(),
                None => shot_points(case, "", plan.steps, &mut warnings)?,
            };
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
                sources: points.sources,
                receivers: points.receivers,
                receiver_spread: points.receiver_spread,
                density,
            })
        }
    };
    // A file shared by the shots (a wavelet) warns once.
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    Ok(Prepared {
        plan,
        setup,
        warnings,
        shots,
        coefficients_s,
        ready: Instant::now(),
    })
}
