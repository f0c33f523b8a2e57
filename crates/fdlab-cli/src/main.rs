//! `fdlab`: finite-difference stencils on GPUs and CPUs at the memory roofline.
//!
//! Subcommands: `info` (backends found), `bench` (the published experiments), `check` (the
//! conformance suite on a backend).

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use fdlab_bench::check::{check_cpu, check_cuda, CheckRow};
use fdlab_bench::report::{header, row};
use fdlab_bench::{
    cases, check_suite, select, BenchResult, Case, CpuRunner, CudaRunner, Meta, Report, RunOptions,
    SuiteOptions, Target,
};
use fdlab_core::Precision;
use fdlab_cuda::{Coefficients, Device, Strategy};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "fdlab",
    version,
    about = "Finite-difference stencils on GPUs and CPUs at the memory roofline"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
enum BackendArg {
    /// The GPU when one is usable, else the CPU.
    Auto,
    /// The CPU executors.
    Cpu,
    /// A CUDA GPU (fails clearly when none is usable).
    Cuda,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
enum CoefficientsArg {
    /// Weights as literals in the generated code.
    Immediate,
    /// Weights in `__constant__` memory, as NVIDIA published.
    Constant,
}

#[derive(Subcommand)]
enum Command {
    /// Show the backends found: CPU model, cores, SIMD; the GPU, or why none.
    Info,
    /// Run the benchmark suites on the best backend present.
    Bench {
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Suite(s) to run (repeatable): nvidia-derivative, laplace-variants, amd-laplacian,
        /// roofline, probes (diagnostic cases for profiling). Default: the first three (and
        /// roofline on a GPU).
        #[arg(long)]
        suite: Vec<String>,
        /// Grid points per axis (replaces each suite's sizes).
        #[arg(long)]
        size: Option<usize>,
        /// Points along z of the 3-D cases of amd-laplacian and roofline (default: as many as
        /// along x and y).
        #[arg(long)]
        depth: Option<usize>,
        /// Only the cases of these names (repeatable), e.g. lap3d-7pt, gradient-8th.
        #[arg(long)]
        case: Vec<String>,
        /// Only this precision (f32 or f64).
        #[arg(long)]
        precision: Option<String>,
        /// Run these GPU strategies (repeatable), e.g. pencil-long, zmarch-32x4-v2-c64-u1-r4,
        /// on every selected case that can take them, instead of each suite's own list.
        #[arg(long)]
        strategy: Vec<String>,
        /// Where GPU kernels read their weights.
        #[arg(long, value_enum, default_value = "immediate")]
        coefficients: CoefficientsArg,
        /// Timed runs per case (median reported; default 20 on a GPU, 10 on the CPU).
        #[arg(long)]
        reps: Option<usize>,
        /// Write the results as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw a roofline chart of the results into this PNG.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Search strategy × tile × points per thread for each case of a suite on the GPU and
    /// remember the winners (in ~/.cache/fdlab/tune.json or $FDLAB_TUNE_CACHE).
    Tune {
        /// Suite(s) whose cases to tune (default: roofline).
        #[arg(long)]
        suite: Vec<String>,
        /// Grid points per axis.
        #[arg(long)]
        size: Option<usize>,
        /// Points along z of the 3-D cases (default: as many as along x and y).
        #[arg(long)]
        depth: Option<usize>,
        /// Only the cases of these names (repeatable), e.g. lap3d-7pt, gradient-8th.
        #[arg(long)]
        case: Vec<String>,
        /// Only this precision.
        #[arg(long)]
        precision: Option<String>,
        /// Timed runs per candidate.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// Write every candidate's timing as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Time only these strategies (repeatable) instead of the built-in search space; those
        /// a case cannot run are skipped for that case.
        #[arg(long)]
        strategy: Vec<String>,
    },
    /// Draw a roofline chart (PNG) from JSON that `fdlab bench` or `fdlab tune` wrote.
    Plot {
        /// Bench or tune JSON files (their results are drawn together; the first one's
        /// device and copy bandwidth label the chart).
        #[arg(required = true)]
        json: Vec<PathBuf>,
        /// Where to write the PNG.
        #[arg(long)]
        out: PathBuf,
        /// Keep only the fastest result per case, precision and shape (a tuner's winners).
        #[arg(long)]
        best: bool,
    },
    /// Run the conformance suite: every strategy × stencil × boundary × scalar type × odd
    /// shape against the CPU reference.
    Check {
        /// Backend to check.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Only these GPU strategies (repeatable); default: the conformance set.
        #[arg(long)]
        strategy: Vec<String>,
        /// Only this precision on the GPU (f32 or f64); default both. Halves a sanitizer run.
        #[arg(long)]
        precision: Option<String>,
        /// Write the table as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Info => info(),
        Command::Bench {
            backend,
            suite,
            size,
            depth,
            case,
            precision,
            strategy,
            coefficients,
            reps,
            json,
            plot,
        } => bench(BenchArgs {
            backend,
            suites: suite,
            size,
            depth,
            only: case,
            precision,
            strategies: strategy,
            coefficients,
            reps,
            json,
            plot,
        }),
        Command::Tune {
            suite,
            size,
            depth,
            case,
            precision,
            reps,
            json,
            strategy,
        } => tune(
            suite,
            suite_options(size, depth, precision.as_deref()).map(|o| (o, case)),
            reps,
            json,
            strategy,
        ),
        Command::Plot { json, out, best } => plot(json, out, best),
        Command::Check {
            backend,
            strategy,
            precision,
            json,
        } => check(backend, strategy, precision, json),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Resolves `--backend`: `Some(device)` for CUDA, `None` for the CPU.
fn pick_backend(arg: BackendArg) -> Result<Option<Device>> {
    match arg {
        BackendArg::Cpu => Ok(None),
        BackendArg::Cuda => Ok(Some(
            Device::open(0).context("--backend cuda was asked for")?,
        )),
        BackendArg::Auto => match Device::open(0) {
            Ok(d) => Ok(Some(d)),
            Err(e) => {
                eprintln!("fdlab: using the CPU ({e})");
                Ok(None)
            }
        },
    }
}

fn info() -> Result<()> {
    println!(
        "fdlab {} ({})",
        env!("CARGO_PKG_VERSION"),
        env!("FDLAB_GIT_SHA")
    );
    let simd: Vec<&str> = {
        #[cfg(target_arch = "x86_64")]
        {
            [
                ("sse4.2", std::is_x86_feature_detected!("sse4.2")),
                ("avx", std::is_x86_feature_detected!("avx")),
                ("avx2", std::is_x86_feature_detected!("avx2")),
                ("fma", std::is_x86_feature_detected!("fma")),
                ("avx512f", std::is_x86_feature_detected!("avx512f")),
            ]
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            vec![]
        }
    };
    println!(
        "cpu:  {} | {} threads | SIMD: {}",
        fdlab_bench::runner::cpu_model(),
        rayon::current_num_threads(),
        if simd.is_empty() {
            "-".to_string()
        } else {
            simd.join(" ")
        }
    );
    match Device::open(0) {
        Ok(d) => {
            let i = &d.info;
            let (free, total) = d.memory()?;
            println!(
                "cuda: {} | sm_{}{} | {} SMs | {:.1} GiB ({:.1} GiB free) | L2 {} MiB | driver {}.{} | NVRTC arch {}",
                i.name,
                i.compute_capability.0,
                i.compute_capability.1,
                i.sm_count,
                total as f64 / 1073741824.0,
                free as f64 / 1073741824.0,
                i.l2_bytes >> 20,
                i.driver_version / 1000,
                (i.driver_version % 1000) / 10,
                i.arch()
            );
        }
        Err(e) => println!("cuda: none: {e}"),
    }
    Ok(())
}

/// The case-list options of `bench` and `tune`, checked.
fn suite_options(
    size: Option<usize>,
    depth: Option<usize>,
    precision: Option<&str>,
) -> Result<SuiteOptions> {
    for (flag, v) in [("--size", size), ("--depth", depth)] {
        if let Some(n) = v {
            if !(9..=1 << 15).contains(&n) {
                bail!("{flag} {n}: give 9 to 32768 points per axis (the 8th-order stencils need at least 9)");
            }
        }
    }
    Ok(SuiteOptions {
        size,
        depth,
        precision: precision.map(str::parse).transpose()?,
    })
}

struct BenchArgs {
    backend: BackendArg,
    suites: Vec<String>,
    size: Option<usize>,
    depth: Option<usize>,
    only: Vec<String>,
    precision: Option<String>,
    strategies: Vec<String>,
    coefficients: CoefficientsArg,
    reps: Option<usize>,
    json: Option<PathBuf>,
    plot: Option<PathBuf>,
}

/// Prints a line above the progress bar; unlike `ProgressBar::println`, also when the bar is
/// hidden because the output is not a terminal (logs of device runs).
fn say(pb: &ProgressBar, line: impl AsRef<str>) {
    pb.suspend(|| println!("{}", line.as_ref()));
}

fn progress_bar(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

fn now_utc() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn fill_meta(meta: &mut Meta) {
    meta.fdlab_version = env!("CARGO_PKG_VERSION").into();
    meta.git_sha = env!("FDLAB_GIT_SHA").into();
    meta.date = now_utc();
    meta.command = std::env::args().collect::<Vec<_>>().join(" ");
}

/// Runs one case with its strategy (none on the CPU).
type RunJob<'a> =
    dyn Fn(&Case, Option<Strategy>) -> Result<BenchResult, fdlab_bench::BenchError> + 'a;

fn bench(a: BenchArgs) -> Result<()> {
    for s in &a.suites {
        check_suite(s)?;
    }
    let sopts = suite_options(a.size, a.depth, a.precision.as_deref())?;
    let strategies: Vec<Strategy> = a
        .strategies
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let device = pick_backend(a.backend)?;
    let target = if device.is_some() {
        Target::Cuda
    } else {
        Target::Cpu
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
            CoefficientsArg::Immediate => Coefficients::Immediate,
            CoefficientsArg::Constant => Coefficients::Constant,
        },
        ..Default::default()
    };
    if opts.reps == 0 {
        bail!("--reps 0: give at least 1 timed run");
    }
    // Roofline cases also run the tuned winner (or the default when nothing was tuned).
    if let Some(dev) = &device {
        let cache = fdlab_bench::tune::TuneCache::load();
        for c in all.iter_mut().filter(|c| c.suite == "roofline") {
            let s = cache.winner(&dev.info.name, c).unwrap_or_else(|| {
                fdlab_bench::tune::default_strategy(c, dev.info.compute_capability.0 >= 9)
            });
            if !c.strategies.contains(&s) {
                c.strategies.insert(0, s);
            }
        }
    }
    // (case, strategy) jobs.
    let jobs: Vec<(usize, Option<Strategy>)> = all
        .iter()
        .enumerate()
        .flat_map(|(i, c)| match target {
            Target::Cpu => vec![(i, None)],
            // Given strategies run on every case that can take them (not only the ones a
            // suite lists), so that any kernel can be measured on any case.
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
        .collect();
    if jobs.is_empty() {
        bail!("no case matches: check --suite, --strategy and --precision");
    }
    let copy_bytes = 1usize << 30;
    eprintln!("fdlab bench: measuring copy bandwidth over 1 GiB ...");
    // One runner for the backend; each job runs the case with its strategy (none on the CPU).
    let cpu_runner;
    let cuda_runner;
    let (mut meta, copy_gbps, run): (Meta, f64, Box<RunJob>) = match device {
        None => {
            cpu_runner = CpuRunner::new(copy_bytes);
            let r = &cpu_runner;
            let o = &opts;
            (
                r.meta.clone(),
                r.copy_gbps,
                Box::new(move |c: &Case, _| r.run(c, o)),
            )
        }
        Some(dev) => {
            cuda_runner = CudaRunner::new(dev, copy_bytes)?;
            let r = &cuda_runner;
            let o = &opts;
            (
                r.meta.clone(),
                r.copy_gbps,
                Box::new(move |c: &Case, s: Option<Strategy>| {
                    r.run(c, s.expect("CUDA jobs carry a strategy"), o)
                }),
            )
        }
    };
    eprintln!("copy bandwidth: {copy_gbps:.1} GB/s ({})", meta.copy_method);
    fill_meta(&mut meta);
    let pb = progress_bar(jobs.len() as u64);
    let mut report = Report {
        meta,
        results: vec![],
    };
    let mut failures = vec![];
    for (i, s) in &jobs {
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
                if let Some(path) = &a.json {
                    write_json(path, &report)?;
                }
            }
            Err(e) => {
                say(&pb, format!("FAILED {label}: {e}"));
                failures.push(format!("{label}: {e}"));
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let meta = &report.meta;
    println!(
        "\n{} ({}), copy bandwidth {:.1} GB/s",
        meta.device, meta.backend, meta.copy_gbps
    );
    println!("{}", header());
    for r in &report.results {
        println!("{}", row(r));
    }
    if let Some(path) = &a.json {
        write_json(path, &report)?;
        eprintln!("wrote {}", path.display());
    }
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

fn plot(files: Vec<PathBuf>, out: PathBuf, best: bool) -> Result<()> {
    let mut merged: Option<Report> = None;
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let r: Report = serde_json::from_str(&text).with_context(|| {
            format!(
                "{}: not a JSON file written by `fdlab bench --json` or `fdlab tune --json`",
                f.display()
            )
        })?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => m.results.extend(r.results),
        }
    }
    let mut report = merged.context("give at least one JSON file")?;
    if best {
        let mut winners: std::collections::BTreeMap<String, BenchResult> = Default::default();
        for r in report.results.drain(..) {
            let key = format!("{}|{}|{:?}", r.case, r.precision, r.shape);
            match winners.get(&key) {
                Some(w) if w.gbps >= r.gbps => {}
                _ => {
                    winners.insert(key, r);
                }
            }
        }
        report.results = winners.into_values().collect();
    }
    fdlab_bench::plot::roofline_png(&report, &out)
        .map_err(|e| anyhow::anyhow!("roofline plot: {e}"))?;
    eprintln!("wrote {} ({} points)", out.display(), report.results.len());
    Ok(())
}

fn write_json<T: serde::Serialize>(path: &PathBuf, value: &T) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn check(
    backend: BackendArg,
    strategies: Vec<String>,
    precision: Option<String>,
    json: Option<PathBuf>,
) -> Result<()> {
    let precisions: Vec<Precision> = match precision.as_deref() {
        Some(p) => vec![p.parse()?],
        None => Precision::ALL.to_vec(),
    };
    let strategies: Vec<Strategy> = if strategies.is_empty() {
        Strategy::conformance_set()
    } else {
        strategies
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()?
    };
    let device = pick_backend(backend)?;
    let pb = progress_bar(0);
    let mut progress = |done: usize, total: usize| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    };
    let rows: Vec<CheckRow> = match &device {
        None => check_cpu(&mut progress),
        Some(dev) => {
            eprintln!("fdlab check: compiling kernels for {} ...", dev.info.name);
            check_cuda(dev, &strategies, &precisions, &mut progress)?
        }
    };
    pb.finish_and_clear();
    let n_cases = fdlab_core::conformance::cases().len();
    println!(
        "conformance: {n_cases} cases (shapes × stencils × boundaries) per row, random inputs, NaN-poisoned outputs, every point compared with the CPU reference"
    );
    println!(
        "{:<8} {:<32} {:<5} {:<10} {:>6} {:>7} {:>6} {:>6}  result",
        "backend", "strategy", "prec", "coeffs", "run", "passed", "n/a", "limit"
    );
    for r in &rows {
        println!(
            "{:<8} {:<32} {:<5} {:<10} {:>6} {:>7} {:>6} {:>6}  {}",
            r.backend,
            r.strategy,
            r.precision,
            r.coefficients,
            r.run,
            r.passed,
            r.not_applicable,
            r.over_limit,
            if r.ok() { "PASS" } else { "FAIL" }
        );
        for f in &r.failures {
            println!("    {f}");
        }
        for why in &r.over_limit_reasons {
            println!("    not run, over the device's limits: {why}");
        }
    }
    let over: usize = rows.iter().map(|r| r.over_limit).sum();
    if over > 0 {
        println!(
            "{over} case(s) not run: the tile shape needs more of the device than it has \
             (column `limit`); a smaller tile or shallower ring runs them"
        );
    }
    if let Some(path) = &json {
        write_json(path, &rows)?;
    }
    let failed: usize = rows.iter().map(|r| r.run - r.passed).sum();
    let run: usize = rows.iter().map(|r| r.run).sum();
    if failed > 0 {
        bail!("{failed} of {run} checks failed");
    }
    if run == 0 {
        // A selection that applies to no case must not read as a pass.
        bail!(
            "nothing was checked: the selected strategies support none of the selected cases \
             (see the n/a column); choose another --strategy or --precision"
        );
    }
    println!("all {run} checks passed");
    Ok(())
}

fn tune(
    suites: Vec<String>,
    sopts: Result<(SuiteOptions, Vec<String>)>,
    reps: usize,
    json: Option<PathBuf>,
    only: Vec<String>,
) -> Result<()> {
    use fdlab_bench::tune::{candidates, key, Entry, TuneCache};
    let only: Vec<Strategy> = only.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    // The search space of a case: the built-in one, or the strategies given that can run it.
    let candidates = |c: &fdlab_bench::suites::Case| -> Vec<Strategy> {
        if only.is_empty() {
            candidates(c)
        } else {
            only.iter()
                .copied()
                .filter(|s| {
                    s.supports_spec(&c.stencils, c.boundary, c.precision)
                        .is_ok()
                })
                .collect()
        }
    };
    let suites = if suites.is_empty() {
        vec!["roofline".to_string()]
    } else {
        suites
    };
    for s in &suites {
        check_suite(s)?;
    }
    if reps == 0 {
        bail!("--reps 0: give at least 1 timed run");
    }
    let (sopts, case_names) = sopts?;
    let dev = Device::open(0).context("fdlab tune measures kernels on a GPU")?;
    let mut all = vec![];
    for s in &suites {
        all.extend(cases(s, Target::Cuda, &sopts)?);
    }
    select(&mut all, &case_names)?;
    // Tune each distinct problem once (suites share cases).
    let mut seen = std::collections::HashSet::new();
    all.retain(|c| seen.insert(key("", c)));
    let runner = CudaRunner::new(dev, 1 << 30)?;
    let name = runner.device.info.name.clone();
    let mut cache = TuneCache::load();
    let mut log: Vec<BenchResult> = vec![];
    let total: usize = all.iter().map(|c| candidates(c).len()).sum();
    let pb = progress_bar(total as u64);
    println!("{}", header());
    for c in &all {
        let cands = candidates(c);
        pb.set_message(format!(
            "{} {} {}",
            c.name,
            c.precision,
            c.grid
                .dims()
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join("x")
        ));
        let timed = runner.time_candidates(c, &cands, 2, reps)?;
        let mut best: Option<(Strategy, f64)> = None;
        for (s, t) in &timed {
            match t {
                Ok(t) => {
                    let mut r = BenchResult {
                        suite: "tune".into(),
                        case: c.name.clone(),
                        backend: "cuda".into(),
                        strategy: s.name(),
                        precision: c.precision.name().into(),
                        shape: c.grid.shape(),
                        time_ms: *t,
                        bytes: c.bytes,
                        flops: c.flops(),
                        ..Default::default()
                    };
                    r.derive(runner.copy_gbps, 1.0);
                    log.push(r);
                    if best.is_none_or(|(_, b)| t.median < b) {
                        best = Some((*s, t.median));
                    }
                }
                Err(e) => say(&pb, format!("  skipped {s}: {e}")),
            }
            pb.inc(1);
        }
        let Some((winner, _)) = best else {
            say(&pb, format!("no candidate ran for {}", c.name));
            continue;
        };
        let b = BenchResult {
            strategy: winner.name(),
            ..Default::default()
        };
        // The winner is checked point by point before it is remembered.
        let checked = runner.run(
            c,
            winner,
            &RunOptions {
                reps,
                ..Default::default()
            },
        )?;
        say(&pb, row(&checked));
        cache.entries.insert(
            key(&name, c),
            Entry {
                strategy: b.strategy.clone(),
                time_ms: checked.time_ms.median,
                gbps: checked.gbps,
                candidates: cands.len(),
                date: now_utc(),
            },
        );
        // Saved after every case, so an interrupted search keeps what it found.
        cache.save().context("saving the tune cache")?;
        if let Some(p) = &json {
            let mut meta = runner.meta.clone();
            fill_meta(&mut meta);
            write_json(
                p,
                &Report {
                    meta,
                    results: log.clone(),
                },
            )?;
        }
    }
    pb.finish_and_clear();
    let path = cache.save().context("saving the tune cache")?;
    println!(
        "tuned {} case(s); winners saved to {}",
        all.len(),
        path.display()
    );
    if let Some(p) = &json {
        let mut meta = runner.meta.clone();
        fill_meta(&mut meta);
        write_json(p, &Report { meta, results: log })?;
    }
    Ok(())
}
