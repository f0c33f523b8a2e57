//! The `temporal` suite: the GPU heat step (order 2, periodic, constant κ: the 3-D 7-point
//! and 2-D 5-point Laplacians) and the 3-D 8th-order wave step (periodic, two time levels)
//! with k = 1 … 8 time steps fused per pass over the grid ([`fdlab_solvers::gpu::temporal`],
//! [`fdlab_solvers::gpu::wave_pass`]), beside the copy bandwidth measured in the same run.
//!
//! A row's effective bandwidth is that of a single step (each field read once and the new
//! one written once, [`fdlab_solvers::Stepper::bytes_per_step`]) over the time per step, so k passes
//! that move the grid once per k steps can exceed the copy bandwidth: that ratio is the
//! speed-up of the blocking over a memory-bound single step.

use crate::report::Timing;
use crate::solvers::{result, SolverCase, SolverResult, SolverSetup};
use fdlab_core::Precision;
use fdlab_solvers::gpu::schedule::Schedule;
use fdlab_solvers::gpu::temporal::Request;
use fdlab_solvers::gpu::{HeatGpu, WaveGpu};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::{HeatSetup, Stepper, WaveBoundary, WaveSetup};
use std::time::Instant;

/// One grid of the suite.
#[derive(Debug, Clone)]
pub struct TemporalCase {
    /// Short name, e.g. `heat3d-2nd`.
    pub name: &'static str,
    /// What it runs.
    pub description: &'static str,
    /// 2 or 3.
    pub dim: usize,
    /// Grid points (nz = 1 in 2-D).
    pub n: [usize; 3],
    /// The 8th-order wave step (else the 2nd-order heat step).
    pub wave: bool,
}

/// The suite's grids: the 3-D heat and wave steps on `n3`³ points (default 512) and the 2-D
/// heat step on `n2`² points (default 8192).
pub fn temporal_cases(n3: usize, n2: usize) -> Vec<TemporalCase> {
    vec![
        TemporalCase {
            name: "heat3d-2nd",
            description: "heat step, 7-point Laplacian, periodic, constant diffusivity",
            dim: 3,
            n: [n3; 3],
            wave: false,
        },
        TemporalCase {
            name: "heat2d-2nd",
            description: "heat step, 5-point Laplacian, periodic, constant diffusivity",
            dim: 2,
            n: [n2, n2, 1],
            wave: false,
        },
        TemporalCase {
            name: "wave3d-8th",
            description: "acoustic wave step, 8th-order Laplacian, periodic, c²Δt² per point",
            dim: 3,
            n: [n3; 3],
            wave: true,
        },
    ]
}

/// The case's setup: unit spacing, half the stable time step (unit diffusivity or velocity),
/// a wide Gaussian pulse (every value stays a normal number, as in a real run).
pub fn setup(case: &TemporalCase) -> Result<Setup, fdlab_solvers::Error> {
    let (dim, n) = (case.dim, case.n);
    let spacing = [1.0; 3];
    let width = n[0] as f64 / 4.0;
    let centre = |i: usize, a: usize| i as f64 - n[a] as f64 / 2.0;
    let mut initial = Vec::with_capacity(n.iter().product());
    for z in 0..n[2] {
        for y in 0..n[1] {
            for x in 0..n[0] {
                let mut r2 = centre(x, 0).powi(2) + centre(y, 1).powi(2);
                if dim == 3 {
                    r2 += centre(z, 2).powi(2);
                }
                initial.push((-r2 / (2.0 * width * width)).exp());
            }
        }
    }
    if case.wave {
        let dt = 0.5 * fdlab_solvers::physics::wave_dt_limit(8, &spacing[..dim], 1.0)?;
        return Ok(Setup::Wave(WaveSetup {
            n,
            dim,
            spacing,
            order: 8,
            dt,
            velocity: vec![1.0],
            density: None,
            boundary: WaveBoundary::Periodic,
            initial,
            previous: None,
            sources: vec![],
            receiver_spread: vec![],
            receivers: vec![],
        }));
    }
    let dt = 0.5 * fdlab_solvers::physics::heat_dt_limit(2, &spacing[..dim], 1.0)?;
    Ok(Setup::Heat(HeatSetup {
        n,
        dim,
        spacing,
        order: 2,
        dt,
        kappa: vec![1.0],
        periodic: true,
        initial,
    }))
}

/// Steps timed together: a multiple of `k` (whole passes, one synchronisation per batch for
/// the non-finite check) near 24.
pub fn batch(k: usize) -> usize {
    k * 24usize.div_ceil(k)
}

/// The requests of the suite: k = 1 (single steps), the device's default (`None`: what a run
/// uses as shipped), then k = 2 … 8 with the model's tile for each; or, with a `schedule`
/// (to measure other shapes and kernel choices), only that schedule as given (`None`).
pub fn requests(schedule: Option<&Schedule>) -> Vec<Option<Request>> {
    use fdlab_solvers::gpu::temporal::K_MAX;
    if schedule.is_some() {
        return vec![None];
    }
    [Some(Request::Off), None]
        .into_iter()
        .chain((2..=K_MAX).map(|k| Some(Request::K(k))))
        .collect()
}

/// Runs `case` (set up as `s`) in `precision` with `schedule` (`None`: the device's
/// defaults) and temporal blocking as `request` says (`None`: the schedule's) for `reps`
/// timed batches of [`batch`] steps (wall clock, after one untimed batch), beside the
/// device's copy bandwidth over `copy_bytes` measured just before. `None` when no tile fits
/// (shared memory or registers), the shape does not suit the case's dimension or the
/// schedule is another physics'.
#[allow(clippy::too_many_arguments)]
pub fn run(
    device: &fdlab_cuda::Device,
    copy_bytes: usize,
    case: &TemporalCase,
    s: &Setup,
    precision: Precision,
    request: Option<Request>,
    schedule: Option<&Schedule>,
    reps: usize,
) -> Result<Option<SolverResult>, fdlab_solvers::Error> {
    let bytes = match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    let class = fdlab_cuda::choose::device_class(&device.info.name);
    let (mut stepper, shape): (Box<dyn Stepper>, Option<String>) = match s {
        Setup::Heat(s) => {
            let Ok(h) = schedule.map(Schedule::heat).transpose() else {
                return Ok(None);
            };
            let mut h = h.copied().unwrap_or_default();
            h.pass = request.or(h.pass);
            if fdlab_solvers::gpu::temporal::plan(s.dim, s.n, bytes, class, h.pass).is_err() {
                return Ok(None);
            }
            match precision {
                Precision::F32 => {
                    let g = HeatGpu::<f32>::with_schedule(s, Some(&h))?;
                    let shape = g.temporal().map(|t| t.to_string());
                    (Box::new(g), shape)
                }
                Precision::F64 => {
                    let g = HeatGpu::<f64>::with_schedule(s, Some(&h))?;
                    let shape = g.temporal().map(|t| t.to_string());
                    (Box::new(g), shape)
                }
            }
        }
        Setup::Wave(s) => {
            let Ok(w) = schedule.map(Schedule::wave).transpose() else {
                return Ok(None);
            };
            let mut w = w.copied().unwrap_or_default();
            w.pass = request.or(w.pass);
            let r = (s.order / 2) as u32;
            let pass = w.pass.unwrap_or(Request::Off);
            if fdlab_solvers::gpu::wave_pass::plan(s.dim, r, bytes, pass).is_err() {
                return Ok(None);
            }
            match precision {
                Precision::F32 => {
                    let g = WaveGpu::<f32>::with_schedule(s, Some(&w))?;
                    let shape = g.temporal().map(|t| t.t.to_string());
                    (Box::new(g), shape)
                }
                Precision::F64 => {
                    let g = WaveGpu::<f64>::with_schedule(s, Some(&w))?;
                    let shape = g.temporal().map(|t| t.t.to_string());
                    (Box::new(g), shape)
                }
            }
        }
        Setup::Fdtd(_) => {
            return Err(fdlab_solvers::Error::Invalid(
                "the temporal suite runs the heat and wave steps".into(),
            ));
        }
    };
    let copies = device.copy_times(copy_bytes, 2, 5)?;
    let copy_gbps = 2.0 * copy_bytes as f64 / (Timing::of(&copies).median * 1e-3) / 1e9;
    let steps = batch(stepper.steps_per_pass());
    stepper.advance(steps)?;
    let mut times = vec![];
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        stepper.advance(steps)?;
        times.push(t.elapsed().as_secs_f64() * 1e3 / steps as f64);
    }
    let solver_case = SolverCase {
        name: case.name,
        description: case.description,
        setup: SolverSetup::Toml(String::new()),
    };
    let shape_axes = case.n[..case.dim].to_vec();
    let what = (stepper.backend(), stepper.cells(), stepper.bytes_per_step());
    let mut r = result(&solver_case, precision, shape_axes, what, &times, copy_gbps);
    r.suite = "temporal".into();
    r.steps_per_pass = Some(stepper.steps_per_pass());
    r.as_shipped = Some(request.is_none() && schedule.is_none());
    r.schedule = Some(stepper.schedule());
    if let Some(t) = shape {
        r.description = format!("{}; passes of {t}", r.description);
    }
    Ok(Some(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a schedule: single steps, the device's default once, then every k ≥ 2; with
    /// one, only it.
    #[test]
    fn the_suite_times_the_default_beside_every_k() {
        use fdlab_solvers::gpu::temporal::K_MAX;
        let given: Schedule = "heat:pass=k3".parse().expect("a schedule");
        assert_eq!(requests(Some(&given)), vec![None]);
        let r = requests(None);
        assert_eq!(r[0], Some(Request::Off));
        assert_eq!(r.iter().filter(|x| x.is_none()).count(), 1);
        let ks: Vec<u32> = r
            .iter()
            .filter_map(|x| match x {
                Some(Request::K(k)) => Some(*k),
                _ => None,
            })
            .collect();
        assert_eq!(ks, (2..=K_MAX).collect::<Vec<_>>());
    }

    #[test]
    fn batches_are_whole_passes_and_setups_are_stable() {
        for k in 1..=8 {
            assert_eq!(batch(k) % k, 0);
            assert!((24..32).contains(&batch(k)), "{k}");
        }
        let cases = temporal_cases(16, 32);
        let Setup::Heat(s) = setup(&cases[1]).unwrap() else {
            panic!("the 2-D case is a heat step");
        };
        assert_eq!(s.initial.len(), 32 * 32);
        assert!(s.initial.iter().all(|v| v.is_normal()));
        let Setup::Wave(w) = setup(&cases[2]).unwrap() else {
            panic!("the third case is a wave step");
        };
        assert_eq!((w.order, w.n), (8, [16; 3]));
        assert!(w.initial.iter().all(|v| v.is_normal()));
    }
}
