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
