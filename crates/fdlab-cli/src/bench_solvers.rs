//! `fdlab bench --suite solvers`: whole heat, wave and FDTD steps on the CPU or the GPU beside
//! the copy bandwidth measured in the same run.

use crate::bench_args::{ensure_host_memory, only_cases, precisions_and_reps, BenchArgs};
use crate::common::{fill_meta, progress_bar, results_path, say, write_json};
use anyhow::{bail, Result};
use fdlab::BackendKind;
use fdlab_bench::solvers::{run_cpu, run_gpu, solver_cases, SolverResult};
use fdlab_bench::{CpuRunner, CudaRunner, Meta, Report};
use fdlab_core::Precision;

/// Grid points per axis when `--size` is not given on the CPU: 128 MiB per f64 field, far
/// beyond caches.
const DEFAULT_SIZE: usize = 256;

/// The same on the GPU: 512³, the size of the published experiments and the targets.
const DEFAULT_SIZE_GPU: usize = 512;

/// Runs the solvers suite (`a.suites` is `["solvers"]`) or the FDTD suite (`["fdtd"]`: the
/// FDTD case on all CPU cores and, when one is usable, on the GPU, side by side).
pub fn bench_solvers(a: &BenchArgs) -> Result<()> {
    let fdtd_only = a.suites.iter().any(|s| s == fdlab_bench::FDTD_SUITE);
    let refused = [
        ("--strategy", !a.strategies.is_empty()),
        ("--coefficients", a.coefficients.is_some()),
        ("--depth", a.depth.is_some()),
        ("--plot", a.plot.is_some()),
    ];
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply to --suite solvers or fdtd (whole solver steps, no stencil cases)"
        );
    }
    let gpu = match a.backend {
        BackendKind::Cpu => false,
        BackendKind::Cuda => {
            fdlab_solvers::gpu::available()
                .map_err(|why| anyhow::anyhow!("--backend cuda: no usable GPU: {why}"))?;
            true
        }
        BackendKind::Auto => fdlab_solvers::gpu::available().is_ok(),
    };
    // The FDTD suite runs the same case on the CPU too: the CPU's size.
    let n = a.size.unwrap_or(if gpu && !fdtd_only {
        DEFAULT_SIZE_GPU
    } else {
        DEFAULT_SIZE
    });
    if !(32..=2048).contains(&n) {
        bail!("--size {n}: the solvers suite needs 32 to 2048 points per axis");
    }
    let (precisions, reps) = precisions_and_reps(a)?;
    // The largest case in f64: the FDTD step's six components, two coefficient arrays and the
    // medium's two (the wave step with its setup's copies needs less), with room. The GPU
    // runs no FDTD; its wave step's setup holds about six fields on the host.
    let need = if gpu && !fdtd_only { 8 } else { 12 } * (n as u64).pow(3) * 8;
    ensure_host_memory("solvers", n, need)?;
    let mut cases = solver_cases(n);
    if fdtd_only {
        cases.retain(|c| matches!(c.setup, fdlab_bench::solvers::SolverSetup::Fdtd { .. }));
    }
    cases.retain(|c| crate::bench_args::schedule_fits(a, c.physics()));
    if cases.is_empty() {
        bail!("--schedule: no case of the suite has its physics");
    }
    if a.schedule.is_some() && !gpu {
        bail!("--schedule sets a GPU stepper's schedule: give it with a usable GPU");
    }
    let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    let keep = only_cases(&names, &a.only)?;
    cases.retain(|c| keep.contains(&c.name));
    let name = if gpu { "cuda" } else { "cpu" };
    let what = if fdtd_only {
        "bench-fdtd"
    } else {
        "bench-solvers"
    };
    // Checked (and its folder made) before the first measurement.
    let json = results_path(a.json.clone(), what, name)?;
    // As for the stencil suites: 4 times a field (at least 256 MiB, far beyond the caches),
    // at most 1 GiB.
    let copy_bytes = (4 * 8 * n.pow(3)).clamp(256 << 20, 1 << 30);
    eprintln!(
        "fdlab bench: measuring copy bandwidth over {} MiB ...",
        copy_bytes >> 20
    );
    let mut targets = vec![];
    if gpu {
        let device = fdlab_cuda::Device::open(0)?;
        targets.push(Target::Gpu(
            CudaRunner::new(device, copy_bytes)?,
            copy_bytes,
        ));
    }
    if !gpu || fdtd_only {
        targets.push(Target::Cpu(CpuRunner::new(copy_bytes)));
    }
    let mut meta = targets[0].meta();
    fill_meta(&mut meta);
    for t in &targets {
        let m = t.meta();
        println!(
            "{} ({}), copy bandwidth {:.1} GB/s: {}",
            m.device, m.backend, m.copy_gbps, m.copy_method
        );
    }
    let pb = progress_bar((cases.len() * precisions.len() * targets.len()) as u64);
    say(
        &pb,
        format!(
            "{:<27} {:<5} {:<7} {:>15} {:>10} {:>14} {:>9} {:>9} {:>7}",
            "case", "prec", "backend", "shape", "step ms", "cells/s", "GB/s", "copy", "%copy"
        ),
    );
    say(
        &pb,
        "step ms: median of the timed steps; GB/s: minimum bytes a step moves (fields updated \
         read and written once, coefficient fields read once) / step ms; copy: median of the \
         copies paired with the steps",
    );
    let mut report = Report {
        meta,
        results: vec![],
        solvers: vec![],
    };
    for case in &cases {
        for &p in &precisions {
            for target in &targets {
                pb.set_message(format!("{} {p:?}", case.name));
                let Some(r) = target.run(case, p, reps, a.schedule.as_ref())? else {
                    say(
                        &pb,
                        format!(
                            "{:<27} {:<5} runs on the CPU only",
                            case.name,
                            format!("{p:?}").to_lowercase()
                        ),
                    );
                    pb.inc(1);
                    continue;
                };
                say(
                    &pb,
                    format!(
                        "{:<27} {:<5} {:<7} {:>15} {:>10.2} {:>14.3e} {:>9.1} {:>9.1} {:>6.1}%",
                        r.case,
                        r.precision,
                        r.backend,
                        r.shape
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("x"),
                        r.time_ms.median,
                        r.cell_updates_per_s,
                        r.gbps,
                        r.copy_gbps,
                        r.pct_of_copy
                    ),
                );
                report.solvers.push(r);
                write_json(&json, &report)?;
                pb.inc(1);
            }
        }
    }
    if targets.len() > 1 {
        for p in ["f32", "f64"] {
            let rate = |b: &str| {
                report
                    .solvers
                    .iter()
                    .find(|r| r.precision == p && r.backend == b)
                    .map(|r| r.cell_updates_per_s)
            };
            if let (Some(g), Some(c)) = (rate("cuda"), rate("cpu")) {
                say(
                    &pb,
                    format!(
                        "{p}: the GPU updates {:.0}x as many cells per second as the CPU",
                        g / c
                    ),
                );
            }
        }
    }
    pb.finish_and_clear();
    eprintln!("wrote {}", json.display());
    Ok(())
}

/// Where the suite runs.
enum Target {
    Cpu(CpuRunner),
    /// The GPU and the bytes of its copy reference.
    Gpu(CudaRunner, usize),
}

impl Target {
    fn meta(&self) -> Meta {
        match self {
            Target::Cpu(r) => r.meta.clone(),
            Target::Gpu(r, _) => r.meta.clone(),
        }
    }

    /// One row, or `None` for a case without a stepper on this target.
    fn run(
        &self,
        case: &fdlab_bench::solvers::SolverCase,
        p: Precision,
        reps: usize,
        schedule: Option<&fdlab_solvers::gpu::schedule::Schedule>,
    ) -> Result<Option<SolverResult>> {
        Ok(match self {
            Target::Cpu(r) => Some(run_cpu(r, case, p, reps)?),
            Target::Gpu(r, bytes) => run_gpu(&r.device, *bytes, case, p, reps, schedule)?,
        })
    }
}
