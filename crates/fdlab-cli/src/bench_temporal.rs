//! `fdlab bench --suite temporal`: the GPU heat step with k = 1 … 8 steps per pass (temporal
//! blocking) on the 3-D 7-point and 2-D 5-point Laplacians and the 3-D 8th-order wave step,
//! beside the copy bandwidth measured
//! in the same run; with `--schedule`, only that schedule, on the cases of its physics.

use crate::bench_args::BenchArgs;
use crate::common::{
    check_out_path, fill_meta, progress_bar, results_path, say, write_json, OutKind,
};
use anyhow::{bail, Result};
use fdlab::BackendKind;
use fdlab_bench::temporal::{requests, run, setup, temporal_cases};
use fdlab_bench::{CudaRunner, Report};
use fdlab_solvers::gpu::temporal::Request;
use fdlab_solvers::gpu::temporal::K_MAX;

/// Points per axis of the 3-D grid without `--size` (the 2-D grid has 16 times as many per
/// axis: 512³ and 8192², the targets' sizes).
const DEFAULT_SIZE: usize = 512;

/// Runs the temporal suite (`a.suites` is `["temporal"]`).
pub fn bench_temporal(a: &BenchArgs) -> Result<()> {
    let refused = [
        ("--strategy", !a.strategies.is_empty()),
        ("--coefficients", a.coefficients.is_some()),
        ("--depth", a.depth.is_some()),
    ];
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        bail!("{flag} does not apply to --suite temporal (the GPU heat and wave steps, k = 1 … {K_MAX})");
    }
    if a.backend == BackendKind::Cpu {
        bail!("--suite temporal times the GPU's temporal blocking: it runs on --backend cuda only");
    }
    fdlab_solvers::gpu::available().map_err(|why| {
        anyhow::anyhow!("--suite temporal runs on the GPU only, and there is no usable GPU: {why}")
    })?;
    let n = a.size.unwrap_or(DEFAULT_SIZE);
    if !(32..=1024).contains(&n) {
        bail!("--size {n}: the temporal suite needs 32 to 1024 (3-D N³, 2-D (16 N)²)");
    }
    let (precisions, reps) = super::bench_args::precisions_and_reps(a)?;
    // The setup in f64 on the host, its copy in the precision, and the stepper's upload.
    let need = 3 * (n as u64).pow(3) * 8;
    super::bench_args::ensure_host_memory("temporal", n, need)?;
    // Both outputs checked (their folders made) before the first measurement.
    let json = results_path(a.json.clone(), "bench-temporal", "cuda")?;
    if let Some(p) = &a.plot {
        check_out_path("--plot", p, OutKind::Png)?;
    }
    let copy_bytes = (4 * 8 * n.pow(3)).clamp(256 << 20, 1 << 30);
    eprintln!(
        "fdlab bench: measuring copy bandwidth over {} MiB ...",
        copy_bytes >> 20
    );
    let device = fdlab_cuda::Device::open(0)?;
    let runner = CudaRunner::new(device, copy_bytes)?;
    let mut meta = runner.meta.clone();
    fill_meta(&mut meta);
    println!(
        "{} ({}), copy bandwidth {:.1} GB/s: {}",
        meta.device, meta.backend, meta.copy_gbps, meta.copy_method
    );
    let mut cases = temporal_cases(n, 16 * n);
    let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    let keep = super::bench_args::only_cases(&names, &a.only)?;
    cases.retain(|c| keep.contains(&c.name));
    cases.retain(|c| super::bench_args::schedule_fits(a, if c.wave { "wave" } else { "heat" }));
    if cases.is_empty() {
        bail!("--schedule: no case of the temporal suite has its physics (heat or wave)");
    }
    let requests = requests(a.schedule.as_ref());
    let rows = cases.len() * precisions.len() * requests.len();
    let pb = progress_bar(rows as u64);
    say(
        &pb,
        format!(
            "{:<11} {:<5} {:>2} {:>13} {:>10} {:>11} {:>9} {:>9} {:>7}  {}",
            "case", "prec", "k", "shape", "step ms", "steps/s", "GB/s", "copy", "%copy", "shape"
        ),
    );
    say(
        &pb,
        "k: steps per pass; step ms: median time per step over batches of whole passes; GB/s: \
         T_eff per step (heat: the field read and written once, 2 × cells × bytes / step ms; wave: p, p⁻ and c²Δt² read, p⁺ written, 4 × cells × bytes / step ms); copy: \
         the device copy measured just before; --schedule heat:pass=K/SX/SY/P/CHUNK (or wave:) reruns a row's shape",
    );
    let mut report = Report {
        meta,
        results: vec![],
        solvers: vec![],
    };
    for case in &cases {
        pb.set_message(format!("{} setup", case.name));
        let s = setup(case)?;
        for &p in &precisions {
            for &request in &requests {
                let k = match request {
                    Some(Request::Off) => "1".to_string(),
                    Some(Request::K(k)) => k.to_string(),
                    Some(Request::Shape(t)) => t.k.to_string(),
                    None => "default".to_string(),
                };
                pb.set_message(format!("{} {p:?} k={k}", case.name));
                let prec = format!("{p:?}").to_lowercase();
                let Some(r) = run(
                    &runner.device,
                    copy_bytes,
                    case,
                    &s,
                    p,
                    request,
                    a.schedule.as_ref(),
                    reps,
                )?
                else {
                    say(
                        &pb,
                        format!("{:<11} {prec:<5} {k:>2} no tile fits", case.name),
                    );
                    pb.inc(1);
                    continue;
                };
                let mut shape = r
                    .description
                    .split("passes of ")
                    .nth(1)
                    .unwrap_or("single steps")
                    .to_string();
                if request.is_none() && a.schedule.is_none() {
                    shape.push_str(" (default)");
                }
                say(
                    &pb,
                    format!(
                        "{:<11} {prec:<5} {:>2} {:>13} {:>10.4} {:>11.1} {:>9.1} {:>9.1} {:>6.1}%  {shape}",
                        r.case,
                        r.steps_per_pass.unwrap_or(1),
                        r.shape
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join("x"),
                        r.time_ms.median,
                        1e3 / r.time_ms.median,
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
    pb.finish_and_clear();
    eprintln!("wrote {}", json.display());
    if let Some(path) = &a.plot {
        fdlab_bench::plot::temporal_png(&report, path)
            .map_err(|e| anyhow::anyhow!("temporal plot: {e}"))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
