//! `fdlab`: finite-difference stencils on GPUs and CPUs at the memory roofline.
//!
//! Subcommands: `info` (backends found), `bench` (the published experiments and the solver
//! steps), `tune` (search GPU strategies), `plot` (charts from bench JSON), `run` (a heat, wave
//! or FDTD case), `gradient` (misfit gradients and images of a wave case against observed
//! data), `strategies` (the GPU kernel families), `check` (the conformance suite on a
//! backend). Each subcommand's options are one clap struct or variant.

mod bench;
mod bench_args;
mod bench_scaling;
mod bench_solvers;
mod bench_temporal;
mod check;
mod common;
#[cfg(feature = "mpi")]
mod dist;
mod gradient;
mod info;
mod plot;
mod run_args;
mod run_case;
mod tune;

use bench_args::{BenchArgs, CoefficientsArg};
use clap::{Parser, Subcommand};
use common::{backend_parser, configured_or_auto, suite_options};
use fdlab::BackendKind;
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

#[derive(Subcommand)]
enum Command {
    /// Show the backends found: CPU model, cores, SIMD; the GPU, or why none.
    Info {
        /// Also measure the host time of `plan.apply` at 64³ (warm plan, and from a graph).
        #[arg(long)]
        overhead: bool,
    },
    /// Run the benchmark suites on the best backend present.
    Bench {
        /// Backend to run on (also read from FDLAB_BACKEND).
        #[arg(long, value_parser = backend_parser(), default_value_t = configured_or_auto())]
        backend: BackendKind,
        /// Suite(s) to run (repeatable). Stencil suites: nvidia-derivative, laplace-variants,
        /// amd-laplacian, roofline, probes (diagnostic cases for profiling); default: the
        /// first three (and roofline on a GPU). Whole solver steps, each in a call of its own:
        /// `solvers` (the heat, wave and FDTD steps on the GPU when one is usable, else on
        /// the CPU; --size default 512 on the GPU, 256 on the CPU), `fdtd` (the FDTD step on
        /// all CPU cores and, when one is usable, on the GPU, side by side; default 256),
        /// `temporal` (GPU only: the heat and 8th-order wave steps with k = 1 … 8 steps per
        /// pass; --size N gives 3-D N³ and 2-D (16 N)², default 512), `scaling` (GPU only:
        /// the heat and wave steps split over 1, 2, 4 … of the host's GPUs, weak and strong;
        /// --size per GPU, default 512).
        #[arg(long)]
        suite: Vec<String>,
        /// Grid points per axis, 9 to 32768, for every case of every suite: 1-D cases get N
        /// points, 2-D cases N x N, 3-D cases N x N x N. Cases too large for the memory are
        /// refused before the run.
        #[arg(long, value_name = "N")]
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
        /// Where GPU kernels read their weights (default: immediate).
        #[arg(long, value_enum)]
        coefficients: Option<CoefficientsArg>,
        /// Timed runs per case (median reported; default 20 on a GPU, 10 on the CPU).
        #[arg(long)]
        reps: Option<usize>,
        /// Write the results as JSON here (default: fdlab-results/bench-BACKEND-TIME.json).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw a chart of the results into this PNG: the roofline, or for `--suite temporal`
        /// % of the copy against the steps fused per pass.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// GPU solver schedule for --suite solvers, fdtd or temporal, e.g. fdtd:pass=off or
        /// heat:pass=k3 (docs/schedules.md); only the cases of its physics run.
        #[arg(long, value_name = "NAME")]
        schedule: Option<fdlab_solvers::gpu::schedule::Schedule>,
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
        /// Write every candidate's timing as JSON here (default: fdlab-results/tune-cuda-TIME.json).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Time only these strategies (repeatable) instead of the built-in search space; those
        /// a case cannot run are skipped for that case.
        #[arg(long)]
        strategy: Vec<String>,
    },
    /// Draw a roofline chart (PNG) from JSON that `fdlab bench` or `fdlab tune` wrote (the
    /// temporal-blocking chart for `fdlab bench --suite temporal` JSON).
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
    /// Run a simulation described by a case file: heat, acoustic wave or FDTD Maxwell, on the
    /// GPU when one is usable (e.g. `fdlab run examples/cases/heat-letters.toml --check`).
    Run(run_args::RunArgs),
    /// The misfit of a wave case against observed data (a seismogram from `fdlab run`), its
    /// gradient with respect to the velocity and the sources' wavelets, and its image, by
    /// exact discrete adjoints on the CPU (docs/gradients.md).
    Gradient(gradient::GradientArgs),
    /// List every kernel strategy family, what it does, and its options (the names that
    /// `--strategy` accepts).
    Strategies,
    /// Run the conformance suite: every strategy × stencil × boundary × scalar type × odd
    /// shape against the CPU reference.
    Check {
        /// Backend to check (also read from FDLAB_BACKEND).
        #[arg(long, value_parser = backend_parser(), default_value_t = configured_or_auto())]
        backend: BackendKind,
        /// Only these GPU strategies (repeatable); default: the conformance set.
        #[arg(long)]
        strategy: Vec<String>,
        /// Only this precision on the GPU (f32 or f64); default both. Halves a sanitizer run.
        #[arg(long)]
        precision: Option<String>,
        /// Write the results as JSON here: the kernels' table in FILE, the solvers' checks in
        /// FILE with the extension solvers.json (e.g. c.json and c.solvers.json). Without it
        /// nothing is written.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Only the stencil kernels, or only the solvers' time steps (GPU steppers against
        /// the CPU's); default both. Given strategies imply kernels.
        #[arg(long, value_enum)]
        only: Option<check::Section>,
    },
}

fn main() {
    // The origin of summary.json's startup times: first, before anything else runs.
    let process_start = std::time::Instant::now();
    // Output piped into a reader that stops early (`fdlab info | head -1`) ends the process
    // quietly, as for other command-line tools, instead of a failed print panicking.
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A bad FDLAB_BACKEND is an error before any work, as a bad --backend is.
    if let Err(e) = common::configured_backend() {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Info { overhead } => info::info(overhead),
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
            schedule,
        } => bench::bench(BenchArgs {
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
            schedule,
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
        } => suite_options(size, depth, precision.as_deref()).and_then(|sopts| {
            tune::tune(tune::TuneArgs {
                suites: suite,
                sopts,
                cases: case,
                reps,
                json,
                only: strategy,
            })
        }),
        Command::Plot { json, out, best } => plot::plot(json, out, best),
        Command::Run(args) => {
            // Under an MPI launcher every rank runs its part of the case (never returns).
            #[cfg(feature = "mpi")]
            if fdlab_dist::mpi::launched() {
                dist::run_case(&args, process_start);
            }
            run_case::run_case(&args, process_start).map(|code| {
                if code != 0 {
                    std::process::exit(code);
                }
            })
        }
        Command::Gradient(args) => {
            let code = gradient::gradient(&args);
            if code != 0 {
                std::process::exit(code);
            }
            Ok(())
        }
        Command::Strategies => {
            print!("{}", fdlab_cuda::strategies_help());
            Ok(())
        }

        Command::Check {
            backend,
            strategy,
            precision,
            json,
            only,
        } => check::check(backend, strategy, precision, json, only),
    };
    if let Err(e) = r {
        eprintln!("error: {}", common::error_text(&e));
        std::process::exit(1);
    }
}
