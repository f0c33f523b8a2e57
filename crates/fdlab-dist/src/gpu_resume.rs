//! `fdlab check` on a GPU, checkpoints of decomposed runs: a setup stepped to a step mid-run
//! on 1, 2 or 3 slabs, its state saved (on several slabs: gathered on rank 0) and compared
//! byte for byte with the one-GPU stepper's state there, then resumed on another number of
//! slabs (one included) and compared with the uninterrupted one-GPU run bit for bit.

use crate::cases;
use crate::gpu::{Exchange, GpuPlacement, GpuScalar};
use crate::gpu_check::{answer_result, failure, whole, Answer, STEPS};
use crate::run::{decompose, last_axis_split};
use crate::stepper::DistStepper;
use crate::threads::on_threads;
use crate::transport::Transport;
use fdlab_core::Precision;
use fdlab_solvers::conformance::CheckResult;
use fdlab_solvers::gpu::{HeatGpu, WaveGpu};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::stepper::StatePart;
use fdlab_solvers::{Stepper, WaveBoundary};
use std::sync::Arc;

/// The step the checkpoint is taken at.
const AT: usize = 17;

/// One checkpoint check.
pub struct ResumeCase {
    /// What it is, for the report.
    pub name: String,
    /// The whole grid's setup.
    pub setup: Setup,
    /// Precision.
    pub precision: Precision,
    /// Slabs the run is checkpointed on (1: the one-GPU stepper).
    pub save_on: usize,
    /// Slabs it resumes on (1: the one-GPU stepper).
    pub resume_on: usize,
}

/// Slabs a case is saved on and resumed on.
type Counts = (usize, usize);

/// The checks: heat and wave (periodic, rigid, CPML), 2-D and 3-D, f32 and f64, saved on 2 or
/// 3 slabs and resumed on 3, 2 or 1, and a one-GPU checkpoint resumed on 3 slabs.
pub fn resume_cases() -> Vec<ResumeCase> {
    let cpml = |thickness| WaveBoundary::Cpml { thickness, f0: 0.0 };
    let list: Vec<(&str, Setup, &[Counts])> = vec![
        (
            "heat 3-D 19×14×23 order 2 periodic",
            cases::heat([19, 14, 23], 3, 2, true, false),
            &[(2, 3), (3, 1)],
        ),
        (
            "heat 2-D 37×29 order 4 Dirichlet, κ per point",
            cases::heat([37, 29, 1], 2, 4, false, true),
            &[(3, 2), (1, 3)],
        ),
        (
            "wave 3-D 20×16×33 order 8 periodic",
            cases::wave([20, 16, 33], 3, 8, WaveBoundary::Periodic),
            &[(2, 3), (3, 1)],
        ),
        (
            "wave 2-D 41×37 order 2 rigid",
            cases::wave([41, 37, 1], 2, 2, WaveBoundary::Rigid),
            &[(3, 2), (1, 2)],
        ),
        (
            "wave 3-D 12×10×16 order 4 CPML 6",
            cases::wave([12, 10, 16], 3, 4, cpml(6)),
            &[(3, 2), (2, 1)],
        ),
        (
            "wave 2-D 41×30 order 4 CPML 12",
            cases::wave([41, 30, 1], 2, 4, cpml(12)),
            &[(2, 3), (1, 3)],
        ),
    ];
    let mut out = vec![];
    for (name, setup, counts) in list {
        for p in [Precision::F64, Precision::F32] {
            for &(save_on, resume_on) in counts {
                out.push(ResumeCase {
                    name: format!(
                        "{name} {p:?} checkpointed at step {AT} on {save_on} and resumed on \
                         {resume_on}"
                    ),
                    setup: setup.clone(),
                    precision: p,
                    save_on,
                    resume_on,
                });
            }
        }
    }
    out
}

/// A one-GPU stepper of the whole setup on GPU 0.
fn one_gpu<T: GpuScalar>(setup: &Setup) -> fdlab_solvers::Result<Box<dyn Stepper>> {
    Ok(match setup {
        Setup::Heat(h) => Box::new(HeatGpu::<T>::on_device(h, 0)?),
        Setup::Wave(w) => Box::new(WaveGpu::<T>::on_device(w, 0)?),
        _ => {
            return Err(fdlab_solvers::Error::Invalid(
                "only heat and wave are decomposed".into(),
            ))
        }
    })
}

/// How to make the exchange of a fresh split run (an NCCL id starts one communicator).
type Fresh<'a> = &'a dyn Fn() -> crate::error::Result<Exchange>;

/// `work` on each of `ranks` slabs of `setup` (rank q on GPU q mod `devices`): rank 0's
/// result.
fn on_slabs<T: GpuScalar, R: Send + 'static>(
    setup: &Setup,
    ranks: usize,
    devices: usize,
    exchange: Exchange,
    work: impl Fn(&mut DistStepper) -> fdlab_solvers::Result<R> + Send + Sync + 'static,
) -> crate::error::Result<R> {
    let dim = match setup {
        Setup::Heat(s) => s.dim,
        Setup::Wave(s) => s.dim,
        _ => 3,
    };
    let d = decompose(setup, ranks, Some(last_axis_split(dim, ranks)))?;
    let setup = setup.clone();
    let mut out = on_threads(ranks, move |t| {
        let placement = GpuPlacement {
            ordinal: t.rank() % devices,
            exchange,
            overlap: true,
        };
        let mut s = DistStepper::on_gpu::<T>(&setup, d.clone(), Box::new(t), placement)?;
        Ok(work(&mut s)?)
    })?;
    Ok(out.swap_remove(0))
}

/// The state at step [`AT`] on `ranks` slabs (1: one GPU).
fn saved<T: GpuScalar>(
    setup: &Setup,
    ranks: usize,
    devices: usize,
    fresh: Fresh,
) -> crate::error::Result<Vec<StatePart>> {
    if ranks == 1 {
        let mut s = one_gpu::<T>(setup)?;
        s.advance(AT)?;
        return Ok(s.save_state()?);
    }
    on_slabs::<T, _>(setup, ranks, devices, fresh()?, |s| {
        s.advance(5)?;
        s.advance(AT - 5)?;
        s.save_state()
    })
}

/// The field and traces at [`STEPS`] after resuming `parts` (step [`AT`]) on `ranks` slabs.
fn resumed<T: GpuScalar>(
    setup: &Setup,
    parts: Vec<StatePart>,
    ranks: usize,
    devices: usize,
    fresh: Fresh,
) -> crate::error::Result<Answer> {
    if ranks == 1 {
        let mut s = one_gpu::<T>(setup)?;
        s.restore_state(AT as u64, &parts)?;
        s.advance(STEPS - AT)?;
        return Ok((s.field()?, s.traces().to_vec()));
    }
    let parts = Arc::new(parts);
    on_slabs::<T, _>(setup, ranks, devices, fresh()?, move |s| {
        s.restore_state(AT as u64, &parts)?;
        s.advance(3)?;
        s.advance(STEPS - AT - 3)?;
        Ok((s.field()?, s.traces().to_vec()))
    })
}

/// Where the saved state differs from the one-GPU state at the same step, if anywhere.
fn state_differs(want: &[StatePart], got: &[StatePart]) -> Option<String> {
    let names = |p: &[StatePart]| p.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(want) != names(got) {
        return Some(format!(
            "the checkpoint's parts are {:?}, not the one-GPU run's {:?}",
            names(got),
            names(want)
        ));
    }
    let differ: Vec<String> = want
        .iter()
        .zip(got)
        .filter(|(w, g)| w.1 != g.1)
        .map(|(w, g)| {
            let bytes = w.1.iter().zip(&g.1).filter(|(a, b)| a != b).count();
            format!(
                "{} ({} vs {} bytes, {bytes} differ)",
                w.0,
                g.1.len(),
                w.1.len()
            )
        })
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "the checkpoint differs from the one-GPU run's in {}",
            differ.join(", ")
        )
    })
}

/// Runs one checkpoint check on a host with `devices` GPUs, each split run's exchange made by
/// `fresh`.
pub fn check_resume(c: &ResumeCase, devices: usize, fresh: Fresh, how: &str) -> CheckResult {
    fn run<T: GpuScalar>(
        c: &ResumeCase,
        devices: usize,
        fresh: Fresh,
    ) -> crate::error::Result<(Answer, Answer, Option<String>)> {
        let want = whole::<T>(&c.setup)?;
        let state = saved::<T>(&c.setup, c.save_on, devices, fresh)?;
        let differs = if c.save_on > 1 {
            state_differs(&saved::<T>(&c.setup, 1, devices, fresh)?, &state)
        } else {
            None
        };
        let got = resumed::<T>(&c.setup, state, c.resume_on, devices, fresh)?;
        Ok((want, got, differs))
    }
    let out = match c.precision {
        Precision::F64 => run::<f64>(c, devices, fresh),
        Precision::F32 => run::<f32>(c, devices, fresh),
    };
    let name = format!("decomposed {} ({how}): fields and traces", c.name);
    match out {
        Ok((want, got, differs)) => {
            let mut r = answer_result(name, want, got);
            if let Some(d) = differs {
                r.passed = false;
                r.detail = format!("{d}; {}", r.detail);
            }
            r
        }
        Err(e) => failure(name, e.to_string()),
    }
}

/// The case of [`run_check`]: a small 2-D wave with CPML layers, a source and two receivers,
/// `@P@` its precision.
const RUN_CASE: &str = r#"
physics = "wave"
precision = "@P@"

[grid]
shape = [71, 53]
spacing = [1.0, 1.0]

[time]
cfl = 0.5
duration = 60.0

[scheme]
order = 4

[material]
velocity = { constant = 1.0 }

[[sources]]
position = [30.0, 20.0]
frequency = 0.08

[[receivers]]
position = [60.0, 40.0]
[[receivers]]
position = [5.0, 5.0]

[boundary.cpml]
thickness = 12

[output]
dir = "out"
every = 40
npy = true
"#;

/// Whether every file of `a` whose name ends with `ext` is in `b` with the same bytes.
fn same_files(a: &std::path::Path, b: &std::path::Path, ext: &str) -> Result<(), String> {
    let names: Vec<String> = std::fs::read_dir(a)
        .map_err(|e| format!("{}: {e}", a.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(ext) && !n.starts_with('.'))
        .collect();
    if names.is_empty() {
        return Err(format!("no {ext} files in {}", a.display()));
    }
    for n in names {
        let (x, y) = (std::fs::read(a.join(&n)), std::fs::read(b.join(&n)));
        if !matches!((&x, &y), (Ok(x), Ok(y)) if x == y) {
            return Err(format!(
                "{n} of {} differs from {}'s",
                b.display(),
                a.display()
            ));
        }
    }
    Ok(())
}

/// `fdlab run --gpus N` with checkpoints, on a 2-D wave case with CPML layers in `precision`:
/// stopped at step 37 on one GPU and on 2 and 3 parts (checkpoints at steps 32 and 37 equal
/// the one-GPU run's file for file), then the 2-part checkpoint resumed on 3 parts, the
/// one-GPU one on 2, the 3-part one on one GPU: every `.npy` output (fields, seismograms)
/// equals the uninterrupted one-GPU run's byte for byte.
pub fn run_check(precision: Precision) -> CheckResult {
    use fdlab_solvers::{BackendKind, Case, RunOptions};
    let name = format!(
        "decomposed fdlab run --gpus, wave 2-D CPML {precision:?}: checkpoints and resume \
         on 1, 2 and 3 parts"
    );
    let p = format!("{precision:?}").to_lowercase();
    let root = std::env::temp_dir().join(format!("fdlab-gpu-ck-{}-{p}", std::process::id()));
    let run = || -> Result<(), String> {
        let _ = std::fs::remove_dir_all(&root);
        let case = Case::parse(&RUN_CASE.replace("@P@", &p), root.join("case.toml"))
            .map_err(|e| e.to_string())?;
        let opts = |dir: &str| RunOptions {
            out_dir: Some(root.join(dir)),
            quiet: true,
            backend: BackendKind::Cuda,
            ..RunOptions::default()
        };
        let one = |o: RunOptions| fdlab_solvers::run(&case, &o).map_err(|e| e.to_string());
        let split = |parts: usize, o: RunOptions| {
            crate::threads::run_on_gpus_with(&case, &o, parts, None, Default::default())
                .map_err(|e| e.to_string())
        };
        let at = 37;
        let stop = |dir: &str| RunOptions {
            stop_at: Some(at),
            checkpoint_every: Some(16),
            ..opts(dir)
        };
        let resume = |dir: &str| RunOptions {
            resume: Some(root.join(dir).join("checkpoints")),
            ..opts(dir)
        };
        one(opts("whole"))?;
        one(stop("one"))?;
        for (parts, dir) in [(2, "two"), (3, "three")] {
            let s = split(parts, stop(dir))?;
            if s.final_step != at {
                return Err(format!("{parts} parts stopped at step {}", s.final_step));
            }
            for step in [32, at] {
                let ck = format!("checkpoints/step-{step:09}");
                same_files(&root.join("one").join(&ck), &root.join(dir).join(&ck), "")?;
            }
        }
        split(3, resume("two"))?;
        split(2, resume("one"))?;
        one(resume("three"))?;
        for dir in ["two", "one", "three"] {
            same_files(&root.join("whole"), &root.join(dir), ".npy")?;
        }
        Ok(())
    };
    let out = run();
    let _ = std::fs::remove_dir_all(&root);
    match out {
        Ok(()) => CheckResult {
            name,
            passed: true,
            error: 0.0,
            tolerance: 0.0,
            detail: "checkpoints and outputs identical byte for byte".into(),
        },
        Err(e) => failure(name, e),
    }
}

#[cfg(test)]
mod tests {
    /// The run check's case is a valid wave case with a CPML in both precisions.
    #[test]
    fn the_run_checks_case_prepares() {
        for p in ["f32", "f64"] {
            let text = super::RUN_CASE.replace("@P@", p);
            let case = fdlab_solvers::Case::parse(&text, "case.toml".into()).unwrap();
            let prepared = fdlab_solvers::setup::prepare(&case).unwrap();
            let fdlab_solvers::setup::Setup::Wave(w) = prepared.setup else {
                panic!("not a wave case")
            };
            assert!(matches!(
                w.boundary,
                fdlab_solvers::WaveBoundary::Cpml { .. }
            ));
            assert!(prepared.plan.steps > 40, "{} steps", prepared.plan.steps);
        }
    }
}
