//! `fdlab bench`: the published experiments on one backend, next to its copy bandwidth.

use crate::bench_args::{BenchArgs, CoefficientsArg};
use crate::common::{
    check_distinct, check_out_path, fill_meta, open_backend, progress_bar, refuse_gpu_only,
    results_path, say, suite_options, write_json, OutKind,
};
use anyhow::{bail, Result};
use fdlab::Backend;
use fdlab_bench::report::{header, row};
use fdlab_bench::runner::check_host_memory;
use fdlab_bench::{
    cases, check_suite, select, BenchResult, Case, CpuRunner, CudaRunner, Meta, Report, RunOptions,
    Target,
};
use fdlab_cuda::{Coefficients, Strategy};

/// What the columns mean, printed under the header.
const LEGEND: &str =
    "RMS/MAX err: against the analytic answer; GB/s: minimum bytes moved / median time; \
%copy: of the copy bandwidth measured in this run; chk: yes = every point compared with the \
CPU in this run, no = too large to check; a row's note is in the JSON";

/// Runs one case with its strategy (none on the CPU).
type RunJob<'a> =
    dyn Fn(&Case, Option<Strategy>) -> Result<BenchResult, fdlab_bench::BenchError> + 'a;

/// Checks every option, then runs the selected cases.
pub fn bench(a: BenchArgs) -> Result<()> {
    for s in &a.suites {
        check_suite(s)?;
    }
    let whole_steps = [
        fdlab_bench::SOLVER_SUITE,
        fdlab_bench::FDTD_SUITE,
        fdlab_bench::TEMPORAL_SUITE,
        fdlab_bench::SCALING_SUITE,
    ];
    if let Some(w) = a.suites.iter().find(|s| whole_steps.contains(&s.as_str())) {
        if a.suites.len() > 1 {
            bail!(
                "--suite {w} times whole solver steps and runs on its own: run it in a \
                 separate fdlab bench call"
            );
        }
        if w == fdlab_bench::TEMPORAL_SUITE {
            return crate::bench_temporal::bench_temporal(&a);
        }
        if w == fdlab_bench::SCALING_SUITE {
            crate::bench_args::refuse_schedule(&a, w)?;
            return crate::bench_scaling::bench_scaling(&a);
        }
        return crate::bench_solvers::bench_solvers(&a);
    }
    let first = a
        .suites
        .first()
        .map_or("(the default stencil suites)", String::as_str);
    crate::bench_args::refuse_schedule(&a, first)?;
    let sopts = suite_options(a.size, a.depth, a.precision.as_deref())?;
    let strategies: Vec<Strategy> = a
        .strategies
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    if a.reps == Some(0) {
        bail!("--reps 0: give at least 1 timed run");
    }
    // Output paths are checked before the run, not after it.
    if let (Some(j), Some(p)) = (&a.json, &a.plot) {
        check_distinct(("--json", j), ("--plot", p))?;
    }
    if let Some(p) = &a.json {
        check_out_path("--json", p, OutKind::Json)?;
    }
    if let Some(p) = &a.plot {
        check_out_path("--plot", p, OutKind::Png)?;
    }
    let backend = open_backend(a.backend)?;
    refuse_gpu_only(
        &backend,
        &[
            ("--strategy", !a.strategies.is_empty()),
            ("--coefficients", a.coefficients.is_some()),
        ],
    )?;
    let target = match backend.device() {
        Some(_) => Target::Cuda,
        None => Target::Cpu,
    };
    let suites: Vec<String> = if a.suites.is_empty() {
        let mut v: Vec<String> = ["nvidia-derivative", "laplace-variants", "amd-laplacian"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if target == Target::Cuda {
            v.push("roofline".into());
        }
        v
    } else {
        a.suites.clone()
    };
    let mut all = vec![];
    for s in &suites {
        all.extend(cases(s, target, &sopts)?);
    }
    select(&mut all, &a.only)?;
    let opts = RunOptions {
        reps: a
            .reps
            .unwrap_or(if target == Target::Cuda { 20 } else { 10 }),
        coefficients: match a.coefficients {
            Some(CoefficientsArg::Constant) => Coefficients::Constant,
            _ => Coefficients::Immediate,
        },
        ..Default::default()
    };
    // Memory first: a case too large for the host is refused before anything runs.
    for c in &all {
        check_host_memory(c, opts.check && c.grid.len() <= opts.reference_limit)?;
    }
    add_tuned(&backend, &mut all);
    let jobs = jobs(&all, target, &strategies);
    if jobs.is_empty() {
        bail!("no case matches: check --suite, --strategy and --precision");
    }
    // A case no strategy runs is said, not dropped.
    let idle: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| !jobs.iter().any(|(j, _)| j == i))
        .map(|(_, c)| format!("{} {} {:?}", c.name, c.precision, c.grid.shape()))
        .collect();
    if !idle.is_empty() {
        eprintln!(
            "fdlab bench: no selected strategy runs {} case(s), not run: {}",
            idle.len(),
            idle.join(", ")
        );
    }
    // The default results file too is checked before the first measurement.
    let json = results_path(a.json.clone(), "bench", backend.name())?;
    run_jobs(&a, &json, &backend, &all, &jobs, &opts)
}

/// Roofline cases also run what a plan chooses for them ([`fdlab_cuda::Device::choose`]): the
/// tune cache's winner, else the built-in default of this device class, else the heuristic.
fn add_tuned(backend: &Backend, all: &mut [Case]) {
    if let Some(dev) = backend.device() {
        for c in all.iter_mut().filter(|c| c.suite == "roofline") {
            if let Ok(s) = plan_choice(dev, c)
                && !c.strategies.contains(&s)
            {
                c.strategies.insert(0, s);
            }
        }
    }
}

/// The strategy a plan of `c` runs on `dev`.
fn plan_choice(dev: &fdlab_cuda::Device, c: &Case) -> fdlab_cuda::Result<Strategy> {
    let opts = fdlab_cuda::PlanOptions::default();
    dev.choose(&c.stencils, c.boundary, &c.grid, c.precision, opts)
        .map(|(s, _)| s)
}

/// (case, strategy) jobs. Given strategies run on every case that can take them (not only the
/// ones a suite lists), so that any kernel can be measured on any case.
fn jobs(all: &[Case], target: Target, strategies: &[Strategy]) -> Vec<(usize, Option<Strategy>)> {
    all.iter()
        .enumerate()
        .flat_map(|(i, c)| match target {
            Target::Cpu => vec![(i, None)],
            Target::Cuda if strategies.is_empty() => {
                c.strategies.iter().map(|s| (i, Some(*s))).collect()
            }
            Target::Cuda => strategies
                .iter()
                .filter(|s| {
                    s.supports_spec(&c.stencils, c.boundary, c.precision)
                        .is_ok()
                })
                .map(|s| (i, Some(*s)))
                .collect(),
        })
        .collect()
}

fn run_jobs(
    a: &BenchArgs,
    json: &std::path::Path,
    backend: &Backend,
    all: &[Case],
    jobs: &[(usize, Option<Strategy>)],
    opts: &RunOptions,
) -> Result<()> {
    // 1 GiB, as the measurement rules ask; on the CPU, runs of small cases only copy
    // 4 times their largest case (at least 256 MiB, far beyond the caches).
    let largest = all.iter().map(|c| c.bytes as usize).max().unwrap_or(0);
    let copy_bytes = match backend.device() {
        Some(_) => 1usize << 30,
        None => (4 * largest).clamp(256 << 20, 1 << 30),
    };
    eprintln!(
        "fdlab bench: measuring copy bandwidth over {} MiB ...",
        copy_bytes >> 20
    );
    let cpu_runner;
    let cuda_runner;
    let (mut meta, run): (Meta, Box<RunJob>) = match backend.device() {
        None => {
            cuda_runner = None;
            cpu_runner = CpuRunner::new(copy_bytes);
            let r = &cpu_runner;
            (r.meta.clone(), Box::new(move |c: &Case, _| r.run(c, opts)))
        }
        Some(dev) => {
            cuda_runner = Some(CudaRunner::new(dev.clone(), copy_bytes)?);
            let r = cuda_runner.as_ref().expect("set on this line's branch");
            let pairs: Vec<(&Case, Strategy)> = jobs
                .iter()
                .filter_map(|(i, s)| s.map(|s| (&all[*i], s)))
                .collect();
            eprintln!(
                "fdlab bench: compiling {} kernels in parallel (cached on disk) ...",
                pairs.len()
            );
            let start = std::time::Instant::now();
            r.warm(&pairs, opts.coefficients);
            eprintln!(
                "fdlab bench: kernels ready in {:.1} s",
                start.elapsed().as_secs_f64()
            );
            (
                r.meta.clone(),
                Box::new(move |c: &Case, s: Option<Strategy>| match s {
                    Some(s) => r.run(c, s, opts),
                    None => r.run(c, plan_choice(dev, c)?, opts),
                }),
            )
        }
    };
    println!(
        "{} ({}), copy bandwidth {:.1} GB/s: {}",
        meta.device, meta.backend, meta.copy_gbps, meta.copy_method
    );
    if let Some(dev) = backend.device() {
        let o = fdlab_cuda::overhead(dev, 64)?;
        println!(
            "apply overhead at 64³ (warm plan): host {:.2} µs per plan.apply, {:.2} µs per apply from a graph; device {:.2} µs",
            o.apply_us, o.graph_us, o.device_us
        );
        meta.apply_overhead = Some(fdlab_bench::report::ApplyOverhead {
            n: o.n,
            apply_us: o.apply_us,
            graph_us: o.graph_us,
            device_us: o.device_us,
        });
    }
    fill_meta(&mut meta);
    let pb = progress_bar(jobs.len() as u64);
    say(&pb, header());
    say(&pb, LEGEND);
    let mut report = Report {
        meta,
        results: vec![],
        solvers: vec![],
    };
    let mut failures = vec![];
    for (i, s) in jobs {
        let c = &all[*i];
        let label = format!(
            "{} {} {} {}",
            c.suite,
            c.name,
            c.precision,
            s.map(|s| s.name()).unwrap_or_else(|| "cpu-fast".into())
        );
        pb.set_message(label.clone());
        match run(c, *s) {
            Ok(r) => {
                say(&pb, row(&r));
                report.results.push(r);
                // Written after every case, so a run stopped early keeps what it measured.
                write_json(json, &report)?;
            }
            Err(e) => {
                say(&pb, format!("FAILED {label}: {e}"));
                failures.push(format!("{label}: {e}"));
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    if let Some(r) = cuda_runner.as_ref() {
        eprintln!("fdlab bench: host time by phase: {}", r.phase_summary());
    }
    write_json(json, &report)?;
    eprintln!("wrote {}", json.display());
    if let Some(path) = &a.plot {
        fdlab_bench::plot::roofline_png(&report, path)
            .map_err(|e| anyhow::anyhow!("roofline plot: {e}"))?;
        eprintln!("wrote {}", path.display());
    }
    if !failures.is_empty() {
        bail!(
            "{} case(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}
