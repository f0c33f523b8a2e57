//! `fdlab check` on a GPU, decomposed: random heat and wave setups split into two and three
//! slabs (odd shapes, uneven slabs, periodic, walls and CPML layers cut inside and outside,
//! orders 2 to 8, f32 and f64), every slab on one GPU exchanging its halos through the same
//! code path a multi-GPU run uses, against the same setup stepped whole on that GPU, bit for
//! bit; and checkpoints of split runs ([`crate::gpu_resume`]).

use crate::cases;
use crate::gpu::{Exchange, GpuPlacement, GpuScalar};
use crate::gpu_resume::{check_resume, resume_cases, ResumeCase};
use crate::run::{decompose, last_axis_split};
use crate::stepper::DistStepper;
use crate::threads::on_threads;
use crate::transport::Transport;
use fdlab_core::Precision;
use fdlab_solvers::conformance::{relative_error, CheckResult};
use fdlab_solvers::gpu::{HeatGpu, WaveGpu};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::{Stepper, WaveBoundary};

/// Steps each case runs, in uneven calls with a field gathered midway.
pub(crate) const STEPS: usize = 40;

/// A run's gathered field and receiver traces.
pub(crate) type Answer = (Vec<f64>, Vec<Vec<f64>>);

/// One decomposition check: a setup, its precision, and the ranks it is split over.
pub struct SplitCase {
    /// What it is, for the report.
    pub name: String,
    /// The whole grid's setup.
    pub setup: Setup,
    /// Precision.
    pub precision: Precision,
    /// Slabs.
    pub ranks: usize,
}

/// The checks: heat and wave, 2-D and 3-D, periodic and walled, several orders, both
/// precisions, split two and three ways.
pub fn split_cases() -> Vec<SplitCase> {
    use Precision::{F32, F64};
    let mut out = vec![];
    let mut add = |name: &str, setup: Setup, ranks: &[usize]| {
        for p in [F64, F32] {
            for &r in ranks {
                out.push(SplitCase {
                    name: format!("{name} {p:?} on {r} slabs"),
                    setup: setup.clone(),
                    precision: p,
                    ranks: r,
                });
            }
        }
    };
    add(
        "heat 3-D 19×14×23 order 2 periodic",
        cases::heat([19, 14, 23], 3, 2, true, false),
        &[2, 3],
    );
    add(
        "heat 3-D 17×12×21 order 4 Dirichlet, κ per point",
        cases::heat([17, 12, 21], 3, 4, false, true),
        &[2, 3],
    );
    add(
        "heat 2-D 37×29 order 6 periodic",
        cases::heat([37, 29, 1], 2, 6, true, false),
        &[3],
    );
    add(
        "wave 3-D 20×16×33 order 8 periodic",
        cases::wave([20, 16, 33], 3, 8, WaveBoundary::Periodic),
        &[2, 3],
    );
    add(
        "wave 3-D 13×11×19 order 4 rigid",
        cases::wave([13, 11, 19], 3, 4, WaveBoundary::Rigid),
        &[2],
    );
    add(
        "wave 2-D 41×37 order 2 rigid",
        cases::wave([41, 37, 1], 2, 2, WaveBoundary::Rigid),
        &[3],
    );
    let cpml = |thickness| WaveBoundary::Cpml { thickness, f0: 0.0 };
    // Layers 6 planes thick at z 0..6 and 10..16, their terms reaching 2 planes further:
    // 2 slabs cut at z 8 (between the layers, inside the terms' reach), 3 at 6 (a layer's
    // inner face) and 11 (inside the upper layer).
    add(
        "wave 3-D 12×10×16 order 4 CPML 6",
        cases::wave([12, 10, 16], 3, 4, cpml(6)),
        &[2, 3],
    );
    // Layers at z 0..4 and 24..28: cuts at 14 (far from both) and 10, 19 (2 slabs; 3 slabs).
    add(
        "wave 3-D 14×9×28 order 8 CPML 4",
        cases::wave([14, 9, 28], 3, 8, cpml(4)),
        &[2, 3],
    );
    // Layers at y 0..12 and 18..30: 3 slabs cut at 10 and 20, both inside a layer; 2 at 15,
    // between them.
    add(
        "wave 2-D 41×30 order 4 CPML 12",
        cases::wave([41, 30, 1], 2, 4, cpml(12)),
        &[2, 3],
    );
    // Slabs thinner than the layers: 4 planes each, layers 10 planes thick.
    add(
        "wave 2-D 23×12 order 2 CPML 10",
        cases::wave([23, 12, 1], 2, 2, cpml(10)),
        &[3],
    );
    out
}

/// How many checks [`run_checks`] makes on one GPU (without NCCL) for the precisions
/// `wanted`: the split cases, the checkpoint cases and a checkpointed `fdlab run --gpus` per
/// precision.
pub fn count(wanted: &[Precision]) -> usize {
    let split = split_cases()
        .iter()
        .filter(|c| wanted.contains(&c.precision))
        .count();
    let resume = crate::gpu_resume::resume_cases()
        .iter()
        .filter(|c| wanted.contains(&c.precision))
        .count();
    split + resume + wanted.len()
}

/// The whole setup's field and traces after [`STEPS`] steps on GPU 0.
pub(crate) fn whole<T: GpuScalar>(setup: &Setup) -> fdlab_solvers::Result<Answer> {
    let mut s: Box<dyn Stepper> = match setup {
        Setup::Heat(h) => Box::new(HeatGpu::<T>::on_device(h, 0)?),
        Setup::Wave(w) => Box::new(WaveGpu::<T>::on_device(w, 0)?),
        _ => {
            return Err(fdlab_solvers::Error::Invalid(
                "only heat and wave are decomposed".into(),
            ))
        }
    };
    s.advance(STEPS)?;
    Ok((s.field()?, s.traces().to_vec()))
}

/// The setup split over `ranks` slabs on threads (rank q on GPU q mod `devices`, with
/// `exchange`): rank 0's gathered field and traces.
fn split<T: GpuScalar>(
    setup: &Setup,
    ranks: usize,
    devices: usize,
    exchange: Exchange,
    overlap: bool,
) -> crate::error::Result<Answer> {
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
            overlap,
        };
        let mut s = DistStepper::on_gpu::<T>(&setup, d.clone(), Box::new(t), placement)?;
        s.advance(7)?;
        s.field()?;
        s.advance(STEPS - 8)?;
        s.advance(1)?;
        Ok((s.field()?, s.traces().to_vec()))
    })?;
    Ok(out.swap_remove(0))
}

/// The largest difference of `got` from `want`, relative to `want`'s largest magnitude (the
/// conformance suite's measure: a NaN counts as infinite), and how many values differ in
/// their bits (a zero's sign included).
fn compare(want: &[f64], got: &[f64]) -> (f64, usize) {
    let differ = want
        .iter()
        .zip(got)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    (relative_error(got, want), differ)
}

/// Runs one case with `exchange` on a host with `devices` GPUs.
fn check_one(
    c: &SplitCase,
    devices: usize,
    exchange: Exchange,
    overlap: bool,
    how: &str,
) -> CheckResult {
    let run = || -> crate::error::Result<(Answer, Answer)> {
        Ok(match c.precision {
            Precision::F64 => {
                let w = whole::<f64>(&c.setup)?;
                (
                    w,
                    split::<f64>(&c.setup, c.ranks, devices, exchange, overlap)?,
                )
            }
            Precision::F32 => {
                let w = whole::<f32>(&c.setup)?;
                (
                    w,
                    split::<f32>(&c.setup, c.ranks, devices, exchange, overlap)?,
                )
            }
        })
    };
    let name = format!("decomposed {} ({how}): fields and traces", c.name);
    match run() {
        Err(e) => failure(name, e.to_string()),
        Ok((want, got)) => answer_result(name, want, got),
    }
}

/// A check that could not run.
pub(crate) fn failure(name: String, detail: String) -> CheckResult {
    CheckResult {
        name,
        passed: false,
        error: f64::INFINITY,
        tolerance: 0.0,
        detail,
    }
}

/// The check of a split (or resumed) run's answer `got` against the whole grid's `want`: the
/// split changes no sum, so it passes only bit for bit (the largest relative difference is
/// reported where it fails).
pub(crate) fn answer_result(name: String, want: Answer, got: Answer) -> CheckResult {
    let ((want, want_traces), (got, got_traces)) = (want, got);
    let mut detail = vec![];
    let (mut worst, mut differ) = (0.0f64, 0usize);
    if got.len() != want.len() || got_traces.len() != want_traces.len() {
        detail.push(format!(
            "sizes differ: field {} vs {}, traces {} vs {}",
            got.len(),
            want.len(),
            got_traces.len(),
            want_traces.len()
        ));
        worst = f64::INFINITY;
    } else {
        let (e, d) = compare(&want, &got);
        worst = worst.max(e);
        differ += d;
        for (w, g) in want_traces.iter().zip(&got_traces) {
            if w.len() != g.len() {
                detail.push(format!("a trace has {} samples, not {}", g.len(), w.len()));
                worst = f64::INFINITY;
            } else {
                let (e, d) = compare(w, g);
                worst = worst.max(e);
                differ += d;
            }
        }
    }
    if !want.iter().all(|v| v.is_finite()) {
        detail.push("the whole-grid run is not finite".into());
        worst = f64::INFINITY;
    }
    let passed = differ == 0 && worst == 0.0;
    if passed {
        detail.push("bit-identical".into());
    } else {
        detail.push(format!(
            "{differ} values differ in their bits; largest relative difference {worst:.2e}"
        ));
    }
    CheckResult {
        name,
        passed,
        error: worst,
        tolerance: 0.0,
        detail: detail.join("; "),
    }
}

/// Every split case with the staged exchange, all slabs on GPU 0; with NCCL (when built with
/// it and the host has a GPU per slab) every case again across GPUs. `progress(done, total)`.
pub fn run_checks(wanted: &[Precision], progress: &mut dyn FnMut(usize)) -> Vec<CheckResult> {
    let devices = fdlab_solvers::gpu::device_count().unwrap_or(0);
    let cases: Vec<SplitCase> = split_cases()
        .into_iter()
        .filter(|c| wanted.contains(&c.precision))
        .collect();
    let mut out = vec![];
    for c in &cases {
        out.push(check_one(
            c,
            1,
            Exchange::Staged,
            false,
            "one GPU, through the host",
        ));
        progress(out.len());
    }
    let resumes: Vec<ResumeCase> = resume_cases()
        .into_iter()
        .filter(|c| wanted.contains(&c.precision))
        .collect();
    for c in &resumes {
        let staged = || Ok(Exchange::Staged);
        out.push(check_resume(c, 1, &staged, "one GPU, through the host"));
        progress(out.len());
    }
    for &p in wanted {
        out.push(crate::gpu_resume::run_check(p));
        progress(out.len());
    }
    #[cfg(feature = "nccl")]
    for c in resumes
        .iter()
        .filter(|c| c.save_on.max(c.resume_on) <= devices)
    {
        let ranks = c.save_on.max(c.resume_on);
        let nccl = || crate::threads::exchange_for(ranks, devices);
        out.push(check_resume(c, devices, &nccl, "GPU per slab, NCCL"));
        progress(out.len());
    }
    #[cfg(feature = "nccl")]
    for c in cases.iter().filter(|c| c.ranks <= devices) {
        // A NCCL job id starts one communicator: a fresh one for each run.
        for overlap in [true, false] {
            let how = if overlap {
                "GPU per slab, NCCL, overlapped"
            } else {
                "GPU per slab, NCCL, after the step"
            };
            match crate::threads::exchange_for(c.ranks, devices) {
                Ok(e @ Exchange::Nccl(_)) => out.push(check_one(c, devices, e, overlap, how)),
                Ok(Exchange::Staged) => {}
                Err(e) => out.push(CheckResult {
                    name: format!("decomposed {} ({how})", c.name),
                    passed: false,
                    error: f64::INFINITY,
                    tolerance: 0.0,
                    detail: e.to_string(),
                }),
            }
        }
        progress(out.len());
    }
    let _ = devices;
    out
}
