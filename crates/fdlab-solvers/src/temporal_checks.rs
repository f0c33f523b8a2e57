//! Conformance of the GPU heat and wave steps with temporal blocking ([`crate::gpu::temporal`],
//! [`crate::gpu::wave_pass`]): k-step passes on odd shapes (none a multiple of a tile, some
//! smaller than one), both boundaries and both precisions, against the CPU's fused stepper and
//! against the GPU's own single steps, over 100 steps in calls that mix passes and single
//! steps; resume from a checkpoint; the non-finite report after a pass met it (replayed with
//! single steps).

use crate::conformance::{
    cpu, finish, label, non_finite_after, random_field, relative_error, resume, tolerance,
    CheckCase, CheckResult, MakeStepper, Setup,
};
use crate::error::{Error, Result};
use crate::gpu::temporal::{best_for_k, measured_shapes, Request, Temporal};
use crate::heat::HeatSetup;
use crate::physics::{heat_dt_limit, wave_dt_limit};
use crate::stepper::Stepper;
use crate::wave::{WaveBoundary, WaveSetup};
use fdlab_core::Precision;
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// A heat or wave case and the temporal blocking its GPU stepper is asked to run.
#[derive(Debug, Clone)]
pub struct TemporalCase {
    /// The case (heat: order 2, constant κ; wave: no CPML, sources or receivers).
    pub case: CheckCase,
    /// Steps per pass and tile.
    pub request: Request,
}

/// Steps of the comparison, in calls of these lengths (each mixes passes and single steps).
const CALLS: [usize; 2] = [37, 63];

/// Largest relative difference from the GPU's own single steps: the pass sums every update in
/// the one-step kernel's order, so only the compiler's contractions may differ.
fn single_step_tolerance(p: Precision) -> f64 {
    match p {
        Precision::F64 => 1e-14,
        Precision::F32 => 1e-6,
    }
}

/// The cases: 2-D 67×45, 1031×29 and 9×6, 3-D 37×29×23, 70×41×19 and 6×5×4, periodic and
/// zero outside, f64 and f32, each with the model's tile for k = 2, 4 and 8 where it fits,
/// with the default shape (on the first grid) and with a small tile that makes several tiles
/// and chunks per axis.
pub fn temporal_cases() -> Vec<TemporalCase> {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut out = vec![];
    let small = |dim: usize| {
        Request::Shape(if dim == 3 {
            Temporal {
                k: 3,
                sx: 32,
                sy: 16,
                p: 2,
                chunk: 8,
            }
        } else {
            Temporal {
                k: 4,
                sx: 64,
                sy: 1,
                p: 2,
                chunk: 8,
            }
        })
    };
    for precision in [Precision::F64, Precision::F32] {
        for dim in [2, 3] {
            let shapes = grids(dim);
            for periodic in [true, false] {
                for (i, n) in shapes.into_iter().enumerate() {
                    let bytes = if precision == Precision::F32 { 4 } else { 8 };
                    // The first shape with every k and the default shape; the others with
                    // one each.
                    let requests: Vec<Request> = match i {
                        0 => [Request::K(2), Request::K(4), Request::K(8), small(dim)]
                            .into_iter()
                            .chain(measured_shapes(dim, bytes).into_iter().map(Request::Shape))
                            .collect(),
                        1 => vec![small(dim)],
                        _ => vec![Request::K(3)],
                    };
                    // k = 8 has no tile in 3-D f64 (shared memory): left out where none fits.
                    let fits = |r: &Request| match *r {
                        Request::K(k) => best_for_k(dim, n, bytes, k).is_some(),
                        _ => true,
                    };
                    for request in requests.into_iter().filter(fits) {
                        let spacing = [1.0, 0.8, 1.3];
                        let cells = n.iter().product();
                        let dt = 0.4 * heat_dt_limit(2, &spacing[..dim], 0.7).unwrap_or(0.0);
                        let what = label_of(request);
                        out.push(TemporalCase {
                            case: CheckCase {
                                name: format!(
                                    "heat {dim}-D order 2 {} κ {precision:?} {} temporal {what}",
                                    if periodic { "periodic" } else { "zero-edge" },
                                    label(n, dim)
                                ),
                                setup: Setup::Heat(HeatSetup {
                                    n,
                                    dim,
                                    spacing,
                                    order: 2,
                                    dt,
                                    kappa: vec![0.7],
                                    periodic,
                                    initial: random_field(&mut rng, cells, -1.0, 1.0),
                                }),
                                precision,
                            },
                            request,
                        });
                    }
                }
            }
        }
    }
    out.extend(wave_cases(&mut rng));
    out
}

/// The wave cases: 3-D 37×29×23, 70×41×19 and 6×5×4 and 2-D 67×45, 1031×29 and 9×6, order 8
/// (and order 4 with three steps per pass on the first grid), periodic and rigid, f64 and f32,
/// a velocity that varies in space and a `p⁻` unlike `p`: two steps per pass with the default
/// tile on the first grid, a small tile (several tiles and chunks per axis) on the others.
fn wave_cases(rng: &mut SmallRng) -> Vec<TemporalCase> {
    let mut out = vec![];
    let small = |dim: usize, r: u32| {
        Request::Shape(if dim == 3 {
            Temporal {
                k: 2,
                sx: 32,
                sy: 8 * r,
                p: r,
                chunk: 8,
            }
        } else {
            Temporal {
                k: 2,
                sx: 32,
                sy: 1,
                p: 1,
                chunk: 7,
            }
        })
    };
    for precision in [Precision::F64, Precision::F32] {
        for dim in [2, 3] {
            let shapes = grids(dim);
            for boundary in [WaveBoundary::Periodic, WaveBoundary::Rigid] {
                for (i, n) in shapes.into_iter().enumerate() {
                    let runs: Vec<(usize, Request)> = match i {
                        0 => vec![(8, Request::K(2)), (4, Request::K(3))],
                        _ => vec![(8, small(dim, 4))],
                    };
                    for (order, request) in runs {
                        let spacing = [1.0, 0.8, 1.3];
                        let cells = n.iter().product();
                        let velocity = random_field(rng, cells, 1.0, 2.0);
                        let dt = 0.5 * wave_dt_limit(order, &spacing[..dim], 2.0).unwrap_or(0.0);
                        let what = label_of(request);
                        out.push(TemporalCase {
                            case: CheckCase {
                                name: format!(
                                    "wave {dim}-D order {order} {} c(x) {precision:?} {} temporal {what}",
                                    if boundary == WaveBoundary::Periodic {
                                        "periodic"
                                    } else {
                                        "rigid"
                                    },
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
                                    initial: random_field(rng, cells, -1.0, 1.0),
                                    previous: Some(random_field(rng, cells, -1.0, 1.0)),
                                    sources: vec![],
                                    receiver_spread: vec![],
                                    receivers: vec![],
                                }),
                                precision,
                            },
                            request,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The grids of the cases in `dim` dimensions: none a multiple of a tile, the last smaller
/// than one.
fn grids(dim: usize) -> [[usize; 3]; 3] {
    if dim == 3 {
        [[37, 29, 23], [70, 41, 19], [6, 5, 4]]
    } else {
        [[67, 45, 1], [1031, 29, 1], [9, 6, 1]]
    }
}

/// How a case's name gives its request.
fn label_of(request: Request) -> String {
    match request {
        Request::Shape(t) => format!("pass {t}"),
        Request::K(k) => format!("k={k}"),
        Request::Off => "off".into(),
    }
}

/// The GPU heat or wave stepper with temporal blocking as `request` says.
fn gpu_with(request: Request) -> impl Fn(&Setup, Precision) -> Result<Box<dyn Stepper>> + Copy {
    use crate::gpu::{HeatGpu, WaveGpu};
    move |setup, precision| match (setup, precision) {
        (Setup::Heat(s), Precision::F64) => {
            Ok(Box::new(HeatGpu::<f64>::with_temporal(s, Some(request))?))
        }
        (Setup::Heat(s), Precision::F32) => {
            Ok(Box::new(HeatGpu::<f32>::with_temporal(s, Some(request))?))
        }
        (Setup::Wave(s), Precision::F64) => {
            Ok(Box::new(WaveGpu::<f64>::with_temporal(s, Some(request))?))
        }
        (Setup::Wave(s), Precision::F32) => {
            Ok(Box::new(WaveGpu::<f32>::with_temporal(s, Some(request))?))
        }
        _ => Err(Error::Invalid(
            "temporal blocking runs the heat and wave steps only".into(),
        )),
    }
}

/// The steps per pass `request` must give.
fn wanted_k(request: Request) -> usize {
    match request {
        Request::Off => 1,
        Request::K(k) => k as usize,
        Request::Shape(t) => t.k as usize,
    }
}

/// 100 steps with passes against the CPU's fused stepper and against the GPU's single steps;
/// fails when the stepper does not run the requested steps per pass.
fn compare(case: &CheckCase, make: MakeStepper<'_>, request: Request) -> CheckResult {
    let tol = tolerance(case.precision);
    let tight = single_step_tolerance(case.precision);
    let single = gpu_with(Request::Off);
    let run = || -> Result<(f64, f64)> {
        let mut want = cpu(&case.setup, case.precision)?;
        let mut got = make(&case.setup, case.precision)?;
        let mut plain = single(&case.setup, case.precision)?;
        let k = got.steps_per_pass();
        if k != wanted_k(request) || plain.steps_per_pass() != 1 {
            return Err(Error::Invalid(format!(
                "runs {k} steps per pass, not {}",
                wanted_k(request)
            )));
        }
        for n in CALLS {
            want.advance(n)?;
            got.advance(n)?;
            plain.advance(n)?;
        }
        let field = got.field()?;
        Ok((
            relative_error(&field, &want.field()?),
            relative_error(&field, &plain.field()?),
        ))
    };
    let name = format!("{}: fields after 100 steps", case.name);
    match run() {
        // The error reported is the CPU's (as the other cases'); the detail gives both, so
        // that a run shows whether the passes were bit-equal to single steps.
        Ok((cpu_err, gpu_err)) => CheckResult {
            passed: cpu_err <= tol && gpu_err <= tight,
            detail: format!(
                "against the CPU {cpu_err:.3e} (tolerance {tol:.1e}), against single GPU steps {gpu_err:.3e} (tolerance {tight:.1e})"
            ),
            name,
            error: cpu_err,
            tolerance: tol,
        },
        Err(e) => finish(name, Err(e), tol),
    }
}

/// Every temporal check on every case: fields after 100 steps, resume bit-identical, and the
/// non-finite report after calls of `2k + 1` and `3k + 1` steps (an even and an odd number of
/// passes before the replay). `progress(done, total)` after each case.
pub fn run_temporal(
    cases: &[TemporalCase],
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<CheckResult> {
    let mut out = vec![];
    for (i, c) in cases.iter().enumerate() {
        let make = gpu_with(c.request);
        out.push(compare(&c.case, &make, c.request));
        out.push(resume(&c.case, &make));
        let k = wanted_k(c.request);
        for passes in [2, 3] {
            out.push(non_finite_after(&c.case, &make, passes * k + 1));
        }
        progress(i + 1, cases.len());
    }
    out
}

/// The GPU FDTD stepper with two steps a pass against its own single steps on `case`, over
/// calls of 37 and 63 steps (passes and one single step at each call's end): fields and probe
/// traces must be bit-equal, since a pass applies every update in the single step's order.
/// Cases that run one step a pass anyway (dispersive media, monitors, plane waves) pass
/// trivially and are left out by [`fdtd_pass_cases`].
pub fn fdtd_pass_check(case: &CheckCase) -> CheckResult {
    use crate::gpu::FdtdGpu;
    let Setup::Fdtd(s) = &case.setup else {
        return finish(
            format!("{}: two steps a pass", case.name),
            Err(Error::Invalid("not an FDTD case".into())),
            0.0,
        );
    };
    let run = || -> Result<f64> {
        let (mut pass, mut single): (Box<dyn Stepper>, Box<dyn Stepper>) = match case.precision {
            Precision::F64 => (
                Box::new(FdtdGpu::<f64>::new(s)?),
                Box::new(FdtdGpu::<f64>::single_steps(s)?),
            ),
            Precision::F32 => (
                Box::new(FdtdGpu::<f32>::new(s)?),
                Box::new(FdtdGpu::<f32>::single_steps(s)?),
            ),
        };
        if pass.steps_per_pass() != 2 || single.steps_per_pass() != 1 {
            return Err(Error::Invalid(format!(
                "runs {} and {} steps a pass, not 2 and 1",
                pass.steps_per_pass(),
                single.steps_per_pass()
            )));
        }
        for n in CALLS {
            pass.advance(n)?;
            single.advance(n)?;
        }
        let (a, b) = (pass.field()?, single.field()?);
        let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
            && pass.traces() == single.traces();
        Ok(if same {
            0.0
        } else {
            relative_error(&a, &b).max(f64::MIN_POSITIVE)
        })
    };
    finish(
        format!("{}: two steps a pass equal single steps", case.name),
        run(),
        0.0,
    )
}

/// The FDTD cases among `cases` that run two steps a pass on the GPU.
pub fn fdtd_pass_cases(cases: &[CheckCase]) -> Vec<&CheckCase> {
    cases
        .iter()
        .filter(|c| match &c.setup {
            Setup::Fdtd(s) => crate::gpu::fdtd_runs_passes(s),
            _ => false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_cover_both_boundaries_precisions_and_dimensions() {
        let cases = temporal_cases();
        assert!(cases.len() >= 32, "{}", cases.len());
        for want in [
            "periodic",
            "zero-edge",
            "F32",
            "F64",
            "2-D",
            "3-D",
            "k=8",
            "pass k=",
            "wave 3-D order 8",
            "wave 2-D order 4",
            "rigid",
        ] {
            assert!(cases.iter().any(|c| c.case.name.contains(want)), "{want}");
        }
    }
}
