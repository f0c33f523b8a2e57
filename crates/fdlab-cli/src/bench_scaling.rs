//! `fdlab bench --suite scaling`: the heat and wave steps split along z over the GPUs of this
//! host, one thread per GPU. Weak scaling keeps n³ points per GPU (the grid grows along z),
//! strong scaling splits one (2n)³ grid. Each row also times one GPU's slab alone (its owned
//! planes plus the halo planes, no exchange): the step time above that is the exchange.

use crate::bench_args::precisions_and_reps;
use crate::bench_args::BenchArgs;
use crate::common::{fill_meta, progress_bar, results_path, say, write_json};
use anyhow::{bail, Result};
use fdlab_bench::{CudaRunner, Meta};
use fdlab_core::Precision;
use fdlab_dist::gpu::{Exchange, GpuPlacement, GpuScalar};
use fdlab_dist::threads::{exchange_for, on_threads};
use fdlab_dist::{decompose, last_axis_split, DistStepper};
use fdlab_solvers::gpu::{HeatGpu, WaveGpu};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::{Stepper, WaveBoundary};
use serde::Serialize;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Steps per timed call.
const STEPS: usize = 10;

/// One row of the suite.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingRow {
    /// "scaling".
    pub suite: String,
    /// "heat" or "wave".
    pub case: String,
    /// "weak" or "strong".
    pub kind: String,
    /// GPUs the grid is split over.
    pub gpus: usize,
    /// How halos travel ("nccl", "staged"; "none" on one GPU).
    pub exchange: String,
    /// "cuda".
    pub backend: String,
    /// "f32" or "f64".
    pub precision: String,
    /// The whole grid.
    pub shape: [usize; 3],
    /// Milliseconds per step: median, min, max over the timed calls (each the slowest GPU's).
    pub time_ms: fdlab_bench::report::Timing,
    /// Milliseconds per step of one GPU's slab stepped alone (no exchange), median.
    pub slab_ms: f64,
    /// Share of the step spent beyond the slab's own work: 1 − slab_ms / step ms.
    pub exchange_share: f64,
    /// With NCCL: milliseconds per step when the exchange waits for the whole step (no
    /// overlap), median.
    pub no_overlap_ms: Option<f64>,
    /// With NCCL: the share of the exchange's cost that overlap hides,
    /// (no_overlap_ms − step ms) / (no_overlap_ms − slab_ms).
    pub hidden_by_overlap: Option<f64>,
    /// Weak: one GPU's time / this time. Strong: (one GPU's time / this time) / GPUs.
    pub efficiency: f64,
    /// Cell updates per second, whole grid.
    pub cell_updates_per_s: f64,
    /// Minimum bytes per step (as the solvers suite counts them), whole grid.
    pub bytes: usize,
    /// Effective bandwidth, whole grid, GB/s.
    pub gbps: f64,
    /// One GPU's copy bandwidth measured in this run, GB/s.
    pub copy_gbps: f64,
    /// gbps / (gpus × copy_gbps), percent.
    pub pct_of_copy: f64,
}

/// The suite's JSON.
#[derive(Debug, Serialize)]
struct ScalingReport {
    meta: Meta,
    scaling: Vec<ScalingRow>,
}

/// A heat (order 2, constant κ) or wave (8th order, periodic) setup of `n` points.
fn setup(case: &str, n: [usize; 3]) -> Setup {
    match case {
        "heat" => {
            let mut s = fdlab_dist::cases::heat([4, 4, 4], 3, 2, true, false);
            if let Setup::Heat(h) = &mut s {
                h.n = n;
                h.initial = smooth(n);
            }
            s
        }
        _ => {
            let mut s = fdlab_dist::cases::wave([4, 4, 4], 3, 8, WaveBoundary::Periodic);
            if let Setup::Wave(w) = &mut s {
                w.n = n;
                // Per point, as the solvers suite's wave step (its T_eff counts it); at most
                // 980, below the 1000 the time step was chosen for.
                w.velocity = smooth(n).iter().map(|v| 500.0 * v).collect();
                w.initial = smooth(n);
                w.previous = None;
                w.sources.clear();
                w.receivers.clear();
            }
            s
        }
    }
}

/// A field of `n` points that stays finite and normal (the timing does not depend on the
/// values), cheap to make at 1024³.
fn smooth(n: [usize; 3]) -> Vec<f64> {
    use rayon::prelude::*;
    let cells: usize = n.iter().product();
    (0..cells)
        .into_par_iter()
        .map(|i| 1.0 + 0.01 * (i % 97) as f64)
        .collect()
}

/// Per timed call, the slowest GPU's milliseconds per step of `setup` split over `gpus` GPUs.
fn time_split<T: GpuScalar>(
    setup: &Setup,
    gpus: usize,
    exchange: Exchange,
    overlap: bool,
    reps: usize,
) -> Result<Vec<f64>> {
    let d = decompose(setup, gpus, Some(last_axis_split(3, gpus)))?;
    let setup = Arc::new(setup.clone());
    let barrier = Arc::new(Barrier::new(gpus));
    let per_rank = on_threads(gpus, move |t| {
        use fdlab_dist::Transport;
        let placement = GpuPlacement {
            ordinal: t.rank(),
            exchange,
            overlap,
        };
        let mut s = DistStepper::on_gpu::<T>(&setup, d.clone(), Box::new(t), placement)?;
        s.advance(3)?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            barrier.wait();
            let t0 = Instant::now();
            s.advance(STEPS)?;
            times.push(t0.elapsed().as_secs_f64() * 1e3 / STEPS as f64);
        }
        Ok(times)
    })?;
    Ok((0..reps)
        .map(|i| per_rank.iter().map(|r| r[i]).fold(0.0, f64::max))
        .collect())
}

/// Milliseconds per step of `setup` whole on GPU 0, one per timed call.
fn time_whole<T: GpuScalar>(setup: &Setup, reps: usize) -> Result<Vec<f64>> {
    let mut s: Box<dyn Stepper> = match setup {
        Setup::Heat(h) => Box::new(HeatGpu::<T>::on_device(h, 0)?),
        Setup::Wave(w) => Box::new(WaveGpu::<T>::on_device(w, 0)?),
        _ => bail!("only heat and wave are split"),
    };
    s.advance(3)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t0 = Instant::now();
        s.advance(STEPS)?;
        times.push(t0.elapsed().as_secs_f64() * 1e3 / STEPS as f64);
    }
    Ok(times)
}

/// Runs the scaling suite (`a.suites` is `["scaling"]`).
pub fn bench_scaling(a: &BenchArgs) -> Result<()> {
    if !a.strategies.is_empty() || a.coefficients.is_some() || a.depth.is_some() {
        bail!("--strategy, --coefficients and --depth do not apply to --suite scaling");
    }
    if a.backend == fdlab::BackendKind::Cpu {
        bail!("--suite scaling splits a grid over GPUs; CPU ranks are measured with mpirun");
    }
    let devices = fdlab_solvers::gpu::device_count()
        .map_err(|why| anyhow::anyhow!("--suite scaling: no usable GPU: {why}"))?;
    let n = a.size.unwrap_or(512);
    if !(32..=1024).contains(&n) {
        bail!("--size {n}: the scaling suite takes 32 to 1024 points per axis per GPU");
    }
    let (precisions, reps) = precisions_and_reps(a)?;
    let names = ["heat-weak", "heat-strong", "wave-weak", "wave-strong"];
    let keep = crate::bench_args::only_cases(&names, &a.only)?;
    // Checked (and its folder made) before the first measurement.
    let json = results_path(a.json.clone(), "bench-scaling", "cuda")?;
    let mut gpu_counts = vec![1];
    while gpu_counts.last().unwrap() * 2 <= devices {
        gpu_counts.push(gpu_counts.last().unwrap() * 2);
    }
    let copy_bytes = 1usize << 30;
    eprintln!("fdlab bench: measuring copy bandwidth over 1024 MiB on GPU 0 ...");
    let runner = CudaRunner::new(fdlab_cuda::Device::open(0)?, copy_bytes)?;
    let mut meta = runner.meta.clone();
    fill_meta(&mut meta);
    let copy = meta.copy_gbps;
    drop(runner);
    println!(
        "{} ×{devices}, copy bandwidth {copy:.1} GB/s on GPU 0: {}",
        meta.device, meta.copy_method
    );
    let mut report = ScalingReport {
        meta,
        scaling: vec![],
    };
    let pb = progress_bar((keep.len() * precisions.len() * gpu_counts.len()) as u64);
    say(
        &pb,
        format!(
            "{:<5} {:<4} {:<6} {:>4} {:<7} {:>15} {:>9} {:>9} {:>7} {:>9} {:>7} {:>6} {:>9}",
            "case",
            "prec",
            "kind",
            "gpus",
            "halos",
            "grid",
            "step ms",
            "slab ms",
            "exch",
            "no-ovl ms",
            "hidden",
            "eff",
            "%copy"
        ),
    );
    for &name in &keep {
        let (case, kind) = name.split_once('-').unwrap_or((name, "weak"));
        for &p in &precisions {
            let mut base = None;
            // Strong scaling splits one grid: built once for every GPU count.
            let strong = (kind == "strong").then(|| setup(case, [2 * n; 3]));
            for &g in &gpu_counts {
                pb.set_message(format!("{name} {p:?} on {g}"));
                let shape = match kind {
                    "weak" => [n, n, n * g],
                    _ => [2 * n; 3],
                };
                let weak;
                let whole = match &strong {
                    Some(s) => s,
                    None => {
                        weak = setup(case, shape);
                        &weak
                    }
                };
                let run = Run {
                    case,
                    p,
                    kind,
                    shape,
                    g,
                    devices,
                    reps,
                };
                let row = measure(&run, whole, copy, base)?;
                base.get_or_insert(row.time_ms.median);
                say(
                        &pb,
                        format!(
                            "{:<5} {:<4} {:<6} {:>4} {:<7} {:>15} {:>9.3} {:>9.3} {:>6.1}% {:>9} {:>7} {:>5.1}% {:>8.1}%",
                            row.case,
                            row.precision,
                            row.kind,
                            row.gpus,
                            row.exchange,
                            format!("{}x{}x{}", shape[0], shape[1], shape[2]),
                            row.time_ms.median,
                            row.slab_ms,
                            100.0 * row.exchange_share,
                            row.no_overlap_ms.map_or("-".into(), |v| format!("{v:.3}")),
                            row.hidden_by_overlap
                                .map_or("-".into(), |v| format!("{:.0}%", 100.0 * v)),
                            100.0 * row.efficiency,
                            row.pct_of_copy
                        ),
                    );
                report.scaling.push(row);
                write_json(&json, &report)?;
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    eprintln!("wrote {}", json.display());
    Ok(())
}

/// What one row measures: `case` ("heat" or "wave") in `p`, `kind` ("weak" or "strong"), on
/// `shape` split over `g` of the host's `devices` GPUs, `reps` timed calls.
struct Run<'a> {
    case: &'a str,
    p: Precision,
    kind: &'a str,
    shape: [usize; 3],
    g: usize,
    devices: usize,
    reps: usize,
}

/// One row: `whole` (the setup of `run.shape`) split as `run` says; `base` is one GPU's step
/// time for the same kind (weak: the n³ grid; strong: the whole grid), `None` for the first
/// row.
fn measure(run: &Run, whole: &Setup, copy: f64, base: Option<f64>) -> Result<ScalingRow> {
    let Run {
        case,
        p,
        kind,
        shape,
        g,
        devices,
        reps,
    } = *run;
    let r = if case == "heat" { 1 } else { 4 };
    // A NCCL job id starts one communicator: each split run takes a fresh one.
    let exchange = || -> Result<Exchange> {
        Ok(if g == 1 {
            Exchange::Staged
        } else {
            exchange_for(g, devices)?
        })
    };
    let nccl = !matches!(exchange()?, Exchange::Staged);
    // The split run with its default (overlapped where NCCL carries the halos), the same
    // without overlap, and one GPU's slab alone.
    let time = |overlap: bool| -> Result<Vec<f64>> {
        Ok(match (p, g) {
            (Precision::F32, 1) => time_whole::<f32>(whole, reps)?,
            (Precision::F64, 1) => time_whole::<f64>(whole, reps)?,
            (Precision::F32, _) => time_split::<f32>(whole, g, exchange()?, overlap, reps)?,
            (Precision::F64, _) => time_split::<f64>(whole, g, exchange()?, overlap, reps)?,
        })
    };
    let times = time(nccl)?;
    let after_ms = if nccl {
        Some(fdlab_bench::report::Timing::of(&time(false)?).median)
    } else {
        None
    };
    // One GPU's share: its owned planes plus a halo on each side (on one GPU, the grid).
    let slab_times = if g == 1 {
        times.clone()
    } else {
        let slab = setup(case, [shape[0], shape[1], shape[2].div_ceil(g) + 2 * r]);
        match p {
            Precision::F32 => time_whole::<f32>(&slab, reps)?,
            Precision::F64 => time_whole::<f64>(&slab, reps)?,
        }
    };
    let t = fdlab_bench::report::Timing::of(&times);
    let slab_ms = fdlab_bench::report::Timing::of(&slab_times).median;
    let cells: usize = shape.iter().product();
    let bytes_per = if std::mem::discriminant(&p) == std::mem::discriminant(&Precision::F32) {
        4
    } else {
        8
    };
    // Heat: u read, v written. Wave: p, p⁻ and c²Δt² read, p⁺ written over p⁻.
    let fields = if case == "heat" { 2 } else { 4 };
    let bytes = fields * cells * bytes_per;
    let gbps = bytes as f64 / (t.median * 1e-3) / 1e9;
    let efficiency = match (base, kind) {
        (None, _) => 1.0,
        (Some(b), "weak") => b / t.median,
        (Some(b), _) => b / t.median / g as f64,
    };
    Ok(ScalingRow {
        suite: fdlab_bench::SCALING_SUITE.into(),
        case: case.into(),
        kind: kind.into(),
        gpus: g,
        exchange: match (g, nccl) {
            (1, _) => "none".into(),
            (_, false) => "staged".into(),
            _ => "nccl".into(),
        },
        backend: "cuda".into(),
        precision: format!("{p:?}").to_lowercase(),
        shape,
        time_ms: t,
        slab_ms,
        exchange_share: (1.0f64 - slab_ms / t.median).max(0.0),
        no_overlap_ms: after_ms,
        hidden_by_overlap: after_ms.map(|a| {
            if a > slab_ms {
                ((a - t.median) / (a - slab_ms)).clamp(0.0, 1.0)
            } else {
                0.0
            }
        }),
        efficiency,
        cell_updates_per_s: cells as f64 / (t.median * 1e-3),
        bytes,
        gbps,
        copy_gbps: copy,
        pct_of_copy: 100.0 * gbps / (g as f64 * copy),
    })
}
