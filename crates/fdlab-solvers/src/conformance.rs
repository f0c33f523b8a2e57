//! Solver conformance: a candidate stepper (the GPU's, or the CPU's reference loop) against
//! the CPU's fused stepper on random small cases: odd shapes, every boundary, orders 2 to 8,
//! constant and varying coefficients, FDTD media, sources and probes, both precisions; then
//! checkpoint round trips and the non-finite report. `fdlab check --backend cuda` runs it for the GPU steppers.

use crate::error::{Error, Result};
use crate::fdtd::FdtdCpu;
use crate::heat::{HeatCpu, HeatSetup};
use crate::physics::{heat_dt_limit, wave_dt_limit};
use crate::stepper::Stepper;
use crate::wave::{PointSource, WaveBoundary, WaveCpu, WaveSetup};
use crate::wave_vd::WaveVdCpu;
use fdlab_core::Precision;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub use crate::setup::Setup;

/// One conformance case.
#[derive(Debug, Clone)]
pub struct CheckCase {
    /// What it runs, e.g. `heat 3-D order 4 periodic κ(x) f32 37×29×23`.
    pub name: String,
    /// The setup.
    pub setup: Setup,
    /// Precision.
    pub precision: Precision,
}

/// The outcome of one case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckResult {
    /// The case's name and what was compared.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// The largest difference found, relative to the field's largest value.
    pub error: f64,
    /// The tolerance.
    pub tolerance: f64,
    /// What failed, when something did.
    pub detail: String,
}

/// Builds a stepper for a setup at a precision.
pub type MakeStepper<'a> = &'a dyn Fn(&Setup, Precision) -> Result<Box<dyn Stepper>>;

/// The CPU's fused stepper, the reference of the comparisons.
pub fn cpu(setup: &Setup, precision: Precision) -> Result<Box<dyn Stepper>> {
    crate::run::cpu_stepper_for(setup, precision)
}

/// The GPU steppers.
pub fn gpu(setup: &Setup, precision: Precision) -> Result<Box<dyn Stepper>> {
    crate::run::gpu_stepper_for(setup, precision)
}

/// The CPU steppers' per-point reference loops (in f64, point by point): the candidate
/// when there is no GPU, which proves the checks themselves.
pub fn reference(setup: &Setup, precision: Precision) -> Result<Box<dyn Stepper>> {
    Ok(match (setup, precision) {
        (Setup::Heat(s), Precision::F64) => {
            let mut c = HeatCpu::<f64>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Heat(s), Precision::F32) => {
            let mut c = HeatCpu::<f32>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Wave(s), Precision::F64) if s.density.is_some() => {
            let mut c = WaveVdCpu::<f64>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Wave(s), Precision::F32) if s.density.is_some() => {
            let mut c = WaveVdCpu::<f32>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Wave(s), Precision::F64) => {
            let mut c = WaveCpu::<f64>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Wave(s), Precision::F32) => {
            let mut c = WaveCpu::<f32>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Fdtd(s), Precision::F64) => {
            let mut c = FdtdCpu::<f64>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
        (Setup::Fdtd(s), Precision::F32) => {
            let mut c = FdtdCpu::<f32>::new(s)?;
            c.use_reference(true);
            Box::new(c)
        }
    })
}

/// Random values in `[lo, hi)`, one per cell.
pub(crate) fn random_field(rng: &mut SmallRng, cells: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..cells).map(|_| rng.gen_range(lo..hi)).collect()
}

/// An odd shape, or one whose rows are a whole number of 16-byte vectors (the GPU steppers'
/// vector path) with the other axes still odd.
fn shape(dim: usize, vectors: bool) -> [usize; 3] {
    match (dim, vectors) {
        (3, false) => [37, 29, 23],
        (3, true) => [40, 29, 23],
        (_, false) => [61, 47, 1],
        (_, true) => [64, 47, 1],
    }
}

pub(crate) fn label(n: [usize; 3], dim: usize) -> String {
    n[..dim]
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("×")
}

/// The random cases: heat (orders 2, 4, 8; periodic and zero edges; constant and varying κ),
/// wave (orders 2, 4, 8; periodic, rigid and CPML edges; constant and varying c; two
/// sources, one sharing a receiver's cell; and, for the highest order, periodic and rigid
/// cases with sources and receivers between grid points), in 2-D and 3-D, and FDTD (PEC,
/// periodic, mixed and CPML boxes with media, soft and hard sources and probes), f32 and f64. `quick` keeps one order per physics and
/// dimension (for tests without a GPU).
pub fn cases(quick: bool) -> Vec<CheckCase> {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut out = Vec::new();
    let orders: &[usize] = if quick { &[4] } else { &[2, 4, 8] };
    for precision in [Precision::F64, Precision::F32] {
        for dim in [2, 3] {
            let spacing = [1.0, 0.8, 1.3];
            for &order in orders {
                for periodic in [true, false] {
                    for varying in [false, true] {
                        let n = shape(dim, !varying);
                        let cells = n.iter().product();
                        let kappa = if varying {
                            random_field(&mut rng, cells, 0.5, 1.5)
                        } else {
                            vec![0.7]
                        };
                        let kmax = kappa.iter().cloned().fold(0.0, f64::max);
                        let dt = 0.4 * heat_dt_limit(order, &spacing[..dim], kmax).unwrap_or(0.0);
                        out.push(CheckCase {
                            name: format!(
                                "heat {dim}-D order {order} {} {} {precision:?} {}",
                                if periodic { "periodic" } else { "zero-edge" },
                                if varying { "κ(x)" } else { "κ" },
                                label(n, dim)
                            ),
                            setup: Setup::Heat(HeatSetup {
                                n,
                                dim,
                                spacing,
                                order,
                                dt,
                                kappa,
                                periodic,
                                initial: random_field(&mut rng, cells, -1.0, 1.0),
                            }),
                            precision,
                        });
                    }
                }
            }
            for &order in orders {
                let edges = [
                    WaveBoundary::Periodic,
                    WaveBoundary::Rigid,
                    WaveBoundary::Cpml {
                        thickness: 6,
                        f0: 0.08,
                    },
                ];
                for boundary in edges {
                    for varying in [false, true] {
                        let n = shape(dim, !varying);
                        let cells = n.iter().product();
                        let velocity = if varying {
                            random_field(&mut rng, cells, 1.0, 2.0)
                        } else {
                            vec![1.5]
                        };
                        let cmax = velocity.iter().cloned().fold(0.0, f64::max);
                        let dt = 0.5 * wave_dt_limit(order, &spacing[..dim], cmax).unwrap_or(0.0);
                        let mid = [n[0] / 2, n[1] / 2, n[2] / 2];
                        let near = [3, n[1] - 2, n[2].saturating_sub(2)];
                        let source = |cell| PointSource {
                            cell,
                            f0: 0.08,
                            t0: 12.0 * dt,
                            amplitude: 1.0,
                            ..Default::default()
                        };
                        out.push(CheckCase {
                            name: format!(
                                "wave {dim}-D order {order} {} {} {precision:?} {}",
                                match boundary {
                                    WaveBoundary::Periodic => "periodic",
                                    WaveBoundary::Rigid => "rigid",
                                    WaveBoundary::Cpml { .. } => "CPML",
                                },
                                if varying { "c(x)" } else { "c" },
                                label(n, dim)
                            ),
                            setup: Setup::Wave(WaveSetup {
                                n,
                                dim,
                                spacing,
                                order,
                                dt,
                                velocity,
                                density: None,
                                boundary,
                                initial: random_field(&mut rng, cells, -1.0, 1.0),
                                previous: varying.then(|| random_field(&mut rng, cells, -1.0, 1.0)),
                                sources: vec![source(mid), source(near)],
                                receiver_spread: vec![],
                                receivers: vec![mid, [1, 1, 0], near],
                            }),
                            precision,
                        });
                        let cpml = matches!(boundary, WaveBoundary::Cpml { .. });
                        if !varying && !cpml && Some(&order) == orders.last() {
                            out.push(off_grid_case(&out[out.len() - 1]));
                        }
                        // Quick sets (machines without a GPU check against the per-point
                        // reference, which is slow on descriptions): one 2-D CPML case.
                        if varying && (!quick || (dim == 2 && cpml)) {
                            out.push(density_case(&out[out.len() - 1], &mut rng));
                        }
                    }
                }
            }
        }
        for (name, setup) in crate::fdtd_check_cases::cases(&mut rng) {
            out.push(CheckCase {
                name: format!("{name} {precision:?} {}", label(setup.grid.n, 3)),
                setup: Setup::Fdtd(setup),
                precision,
            });
        }
    }
    out
}

/// `case` (a constant-density wave) with its sources and receivers between grid points
/// (Hicks' interpolation, mirrored at walls and wrapped at periodic edges; one receiver beside
/// the low corner's walls) and its second source's wavelet random samples given per step:
/// the after-step kernel's point lists and sample table.
fn off_grid_case(case: &CheckCase) -> CheckCase {
    use crate::hicks::{spread, Edge};
    let mut case = case.clone();
    case.name = format!("{} off-grid points", case.name);
    if let Setup::Wave(w) = &mut case.setup {
        let edges = [match w.boundary {
            WaveBoundary::Periodic => Edge::Periodic,
            _ => Edge::Wall,
        }; 3];
        let at = |c: [usize; 3], d: [f64; 3]| -> Vec<f64> {
            (0..w.dim).map(|a| c[a] as f64 + d[a]).collect()
        };
        let spread_at = |x: Vec<f64>| spread(&x, w.n, edges).unwrap_or_default();
        let mid = w.sources[0].cell;
        w.sources[0].spread = spread_at(at(mid, [0.5, 0.3, 0.7]));
        let near = w.sources[1].cell;
        w.sources[1].spread = spread_at(at(near, [-0.25, 0.4, 0.5]));
        // Its own generator: the other cases' values stay what they were.
        let mut rng = SmallRng::seed_from_u64(11);
        w.sources[1].wavelet = Some(random_field(&mut rng, 40, -1.0, 1.0).into());
        w.receiver_spread = vec![
            spread_at(at(w.receivers[0], [0.25, -0.5, 0.5])),
            spread_at(at(w.receivers[1], [0.4, -0.3, 0.0])),
            vec![],
        ];
    }
    case
}

/// `case` (a wave with varying velocity) with a random density in `[1, 3)`: the
/// variable-density step, its time step from that scheme's limit.
fn density_case(case: &CheckCase, rng: &mut SmallRng) -> CheckCase {
    let mut case = case.clone();
    if let Setup::Wave(w) = &mut case.setup {
        let rho = random_field(rng, w.n.iter().product(), 1.0, 3.0);
        let c_eff = crate::physics::vd_speed(w.n, w.dim, w.order / 2, &rho, &w.velocity);
        w.dt = 0.5
            * crate::physics::wave_vd_dt_limit(w.order, &w.spacing[..w.dim], c_eff).unwrap_or(0.0);
        for s in &mut w.sources {
            s.t0 = 12.0 * w.dt;
        }
        w.density = Some(rho);
        case.name = case.name.replacen("c(x)", "c(x) ρ(x)", 1);
    }
    case
}

/// The cases of a folder of case files (the repository's `examples/cases`), at their own sizes
/// and precisions.
pub fn example_cases(dir: &std::path::Path) -> Result<Vec<CheckCase>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(crate::error::io_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let case = crate::case::Case::load(&path)?;
        let prepared = crate::setup::prepare(&case)?;
        let setup = prepared.setup;
        out.push(CheckCase {
            name: format!(
                "example {} {:?}",
                path.file_name().unwrap_or_default().to_string_lossy(),
                case.spec.precision
            ),
            setup,
            precision: case.spec.precision,
        });
    }
    Ok(out)
}

/// Largest |a − b| over the largest |b| (any difference fails where b is all zeros); infinite
/// for a NaN or a length mismatch.
pub fn relative_error(a: &[f64], b: &[f64]) -> f64 {
    error_on_scale(a, b, b.iter().fold(0.0f64, |m, v| m.max(v.abs())))
}

/// Largest |a − b| over `scale`; infinite for a NaN or a length mismatch.
fn error_on_scale(a: &[f64], b: &[f64], scale: f64) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let diff = a.iter().zip(b).fold(0.0f64, |m, (x, y)| {
        if (x - y).is_nan() {
            f64::INFINITY
        } else {
            m.max((x - y).abs())
        }
    });
    diff / scale.max(f64::MIN_POSITIVE)
}

/// Steps each comparison runs, in two calls (so that state carries across calls).
const STEPS: [usize; 2] = [7, 23];

/// Relative tolerance after [`STEPS`]: rounding differences (fused multiply-adds, sum order)
/// grow with the steps; f32 keeps ~7 digits.
pub(crate) fn tolerance(p: Precision) -> f64 {
    match p {
        Precision::F64 => 1e-10,
        Precision::F32 => 1e-4,
    }
}

/// Runs `case` on the CPU's fused stepper and on `make`'s, compares fields and traces.
pub fn compare(case: &CheckCase, make: MakeStepper<'_>) -> CheckResult {
    let tol = tolerance(case.precision);
    let run = || -> Result<(f64, f64)> {
        let mut want = cpu(&case.setup, case.precision)?;
        let mut got = make(&case.setup, case.precision)?;
        for n in STEPS {
            want.advance(n)?;
            got.advance(n)?;
        }
        let want_field = want.field()?;
        let got_field = got.field()?;
        let mut field_err = relative_error(&got_field, &want_field);
        // A range of the field (what picture outputs copy) equals the same range of the whole.
        let len = got_field.len();
        let part = len / 3..(len / 3 + 1 + len / 4).min(len);
        if got.values(part.clone())? != got_field[part] {
            field_err = f64::INFINITY;
        }
        // So do a picture's samples of the last xy plane, every point and every third.
        let n = case.setup.shape();
        for stride in [1, 3] {
            let plane = crate::stepper::PlaneSample {
                start: n[0] * n[1] * (n[2] - 1),
                nx: n[0],
                ny: n[1],
                stride,
            };
            let whole = got_field.get(plane.range()).unwrap_or_default();
            if got.plane(plane)? != plane.take(whole) || whole.is_empty() {
                field_err = f64::INFINITY;
            }
        }
        // Spectra are sums of Δt times the fields over the steps: compared on that scale or
        // their own, whichever is larger (a plane the wave has not reached, or outside a
        // TFSF box, holds sums of rounding whose rounding differs).
        let (want_sp, got_sp) = (want.spectra()?, got.spectra()?);
        if want_sp.len() != got_sp.len() {
            field_err = f64::INFINITY;
        }
        let run_time = match &case.setup {
            Setup::Fdtd(f) => STEPS.iter().sum::<usize>() as f64 * f.dt,
            _ => 0.0,
        };
        let field_max = want_field.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in got_sp.iter().zip(&want_sp) {
            let flat = |m: &crate::fdtd::DftMonitor| [m.re.clone(), m.im.clone()].concat();
            let own = flat(w).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let scale = own.max(field_max * run_time);
            field_err = field_err.max(error_on_scale(&flat(g), &flat(w), scale));
        }
        // Traces are samples of the field: compared on the field's scale, not their own (a
        // receiver the wave has not reached holds values near zero whose rounding differs).
        let field_scale = want_field.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut trace_err = 0.0f64;
        for (g, w) in got.traces().iter().zip(want.traces()) {
            let own = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            trace_err = trace_err.max(error_on_scale(g, w, own.max(field_scale)));
        }
        if got.traces().len() != want.traces().len() {
            trace_err = f64::INFINITY;
        }
        Ok((field_err, trace_err))
    };
    let name = format!("{}: fields and traces", case.name);
    match run() {
        Ok((f, t)) => {
            let mut r = finish(name, Ok(f.max(t)), tol);
            if !r.passed {
                r.detail = format!("field error {f:.3e}, trace error {t:.3e}, tolerance {tol:.1e}");
            }
            r
        }
        Err(e) => finish(name, Err(e), tol),
    }
}

/// A checkpoint taken mid-run and restored into a new stepper continues bit-identically.
pub fn resume(case: &CheckCase, make: MakeStepper<'_>) -> CheckResult {
    let run = || -> Result<f64> {
        let mut a = make(&case.setup, case.precision)?;
        a.advance(STEPS[0])?;
        let state = a.save_state()?;
        let mut b = make(&case.setup, case.precision)?;
        b.restore_state(a.step(), &state)?;
        a.advance(STEPS[1])?;
        b.advance(STEPS[1])?;
        let (fa, fb) = (a.field()?, b.field()?);
        let same = fa.iter().zip(&fb).all(|(x, y)| x.to_bits() == y.to_bits())
            && a.traces() == b.traces()
            && a.spectra()? == b.spectra()?
            && a.step() == b.step();
        Ok(if same {
            0.0
        } else {
            relative_error(&fb, &fa).max(f64::MIN_POSITIVE)
        })
    };
    finish(format!("{}: resume bit-identical", case.name), run(), 0.0)
}

/// A NaN in the initial field is reported at the same step and cell as the CPU reports it
/// (NaN spreads the same in every order of operations, unlike an overflow).
pub fn non_finite(case: &CheckCase, make: MakeStepper<'_>) -> CheckResult {
    non_finite_after(case, make, 3)
}

/// [`non_finite`] over one call of `steps` steps.
pub(crate) fn non_finite_after(
    case: &CheckCase,
    make: MakeStepper<'_>,
    steps: usize,
) -> CheckResult {
    let mut setup = case.setup.clone();
    let initial = match &mut setup {
        Setup::Heat(s) => Some((&mut s.initial, s.n)),
        Setup::Wave(s) => Some((&mut s.initial, s.n)),
        // Fields start at zero: a source of NaN current puts the NaN in at step 1.
        Setup::Fdtd(s) => {
            crate::fdtd_check_cases::poison(s);
            None
        }
    };
    if let Some((initial, n)) = initial {
        let spot = [n[0] / 3, n[1] / 2, n[2] / 2];
        initial[spot[0] + n[0] * (spot[1] + n[1] * spot[2])] = f64::NAN;
    }
    let report = |m: MakeStepper<'_>| -> Result<Option<(u64, [usize; 3])>> {
        let mut s = m(&setup, case.precision)?;
        match s.advance(steps) {
            Err(Error::NonFinite { step, cell, .. }) => Ok(Some((step, cell))),
            Err(e) => Err(e),
            Ok(()) => Ok(None),
        }
    };
    let name = if steps == 3 {
        format!("{}: non-finite value reported", case.name)
    } else {
        format!(
            "{}: non-finite value reported ({steps} steps in one call)",
            case.name
        )
    };
    match (report(&cpu), report(make)) {
        (Ok(Some(w)), Ok(Some(g))) if w == g => finish(name, Ok(0.0), 0.0),
        (Ok(w), Ok(g)) => CheckResult {
            name,
            passed: false,
            error: f64::INFINITY,
            tolerance: 0.0,
            detail: format!("CPU reported {w:?}, candidate {g:?}"),
        },
        (Err(e), _) | (_, Err(e)) => finish(name, Err(e), 0.0),
    }
}

pub(crate) fn finish(name: String, r: Result<f64>, tolerance: f64) -> CheckResult {
    match r {
        Ok(error) => CheckResult {
            passed: error <= tolerance,
            detail: if error <= tolerance {
                String::new()
            } else {
                format!("error {error:.3e} above {tolerance:.1e}")
            },
            name,
            error,
            tolerance,
        },
        Err(e) => CheckResult {
            name,
            passed: false,
            error: f64::INFINITY,
            tolerance,
            detail: e.to_string(),
        },
    }
}

/// Every check on every case: comparison, resume, and (for the first case of each physics,
/// dimension and precision) the non-finite report. `progress(done, total)` after each.
pub fn run_all(
    cases: &[CheckCase],
    make: MakeStepper<'_>,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<CheckResult> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, c) in cases.iter().enumerate() {
        out.push(compare(c, make));
        out.push(resume(c, make));
        let kind = c.name.split(" order").next().unwrap_or("").to_string();
        if !c.name.starts_with("example") && seen.insert((kind, c.precision == Precision::F32)) {
            out.push(non_finite(c, make));
        }
        progress(i + 1, cases.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal_checks::{fdtd_pass_cases, fdtd_pass_check, run_temporal, temporal_cases};

    /// The CPU's per-point reference loops pass the same checks as a GPU must (this proves
    /// the harness on machines without one), and a deliberately wrong stepper fails them.
    #[test]
    fn reference_loops_conform_and_a_wrong_stepper_does_not() {
        let cases = cases(true);
        let results = run_all(&cases, &reference, &mut |_, _| {});
        let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
        assert!(failed.is_empty(), "{failed:#?}");
        assert!(results.len() > 2 * cases.len());
        // A stepper with a wrong time step must fail the comparison.
        let wrong = |s: &Setup, p: Precision| -> Result<Box<dyn Stepper>> {
            let mut s = s.clone();
            match &mut s {
                Setup::Heat(h) => h.dt *= 1.01,
                Setup::Wave(w) => w.dt *= 1.01,
                Setup::Fdtd(f) => f.dt *= 0.99,
            }
            cpu(&s, p)
        };
        assert!(!compare(&cases[0], &wrong).passed);
        let fdtd = cases.iter().filter(|c| matches!(c.setup, Setup::Fdtd(_)));
        assert!(fdtd.clone().count() >= 8);
        for c in fdtd {
            assert!(!compare(c, &wrong).passed, "{}", c.name);
        }
    }

    /// On a machine with a GPU, its steppers pass every check; elsewhere this says it skipped.
    #[test]
    fn gpu_steppers_conform_when_a_gpu_is_present() {
        if let Err(why) = crate::gpu::available() {
            eprintln!("SKIPPED: no usable GPU ({why})");
            return;
        }
        let cases = cases(false);
        let mut results = run_all(&cases, &gpu, &mut |_, _| {});
        results.extend(run_temporal(&temporal_cases(), &mut |_, _| {}));
        results.extend(fdtd_pass_cases(&cases).into_iter().map(fdtd_pass_check));
        let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }

    /// Monitors, flux planes and plane waves are in the cases every stepper must pass (a case
    /// they made invalid would be left out silently).
    #[test]
    fn some_fdtd_cases_carry_monitors_flux_planes_and_plane_waves() {
        let cases = cases(true);
        let with = cases
            .iter()
            .filter(|c| matches!(&c.setup, Setup::Fdtd(f) if !f.monitors.is_empty() && !f.fluxes.is_empty()))
            .count();
        assert!(with >= 4, "{with} cases (two setups, two precisions)");
        let waves = cases
            .iter()
            .filter(|c| matches!(&c.setup, Setup::Fdtd(f) if !f.plane_waves.is_empty()))
            .count();
        assert!(
            waves >= 4,
            "{waves} cases with plane waves (two setups, two precisions)"
        );
    }

    /// Drude media, with and without a CPML, are among the cases whose two-step passes must
    /// equal single steps.
    #[test]
    fn drude_cases_run_two_steps_a_pass() {
        let cases = cases(true);
        let drude = fdtd_pass_cases(&cases)
            .into_iter()
            .filter(
                |c| matches!(&c.setup, Setup::Fdtd(f) if f.boxes.iter().any(|b| b.drude.is_some())),
            )
            .collect::<Vec<_>>();
        assert_eq!(drude.len(), 10, "five setups, two precisions");
        assert!(drude.iter().any(|c| c.name.contains("CPML")));
    }

    #[test]
    fn example_cases_load() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cases");
        let cases = example_cases(&dir).unwrap();
        assert!(cases.len() >= 6, "{}", cases.len());
        assert!(cases.iter().all(|c| c.name.contains(".toml")));
    }
}
