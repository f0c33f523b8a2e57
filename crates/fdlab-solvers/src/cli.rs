//! A minimal `fdlab run`-like command line for this crate's `solve` example and its tests,
//! which start runs as child processes without the `fdlab` binary. The `fdlab` binary does not
//! use it: its options, with their help, are one clap struct in fdlab-cli (`RunArgs`).

use crate::case::Case;
use crate::error::{Error, Result};
use crate::run::{run, validate, RunOptions};
use std::path::PathBuf;

/// Usage text of this parser.
pub const USAGE: &str = "usage: solve CASE.toml [--check] [--checkpoint-every N] [--resume DIR] [--out DIR] [--stop-at STEP] [--backend auto|cpu|cuda] [--quiet] [--overwrite]";

/// The arguments of `fdlab run`, parsed.
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// The case file.
    pub case: PathBuf,
    /// Only validate (`--check`).
    pub check: bool,
    /// Everything else.
    pub opts: RunOptions,
}

/// Run a case with these arguments, printing what it does. Returns the process exit status on
/// success paths (0; 128 + the signal's number when a signal stopped the run).
pub fn run_command(args: &[String]) -> Result<i32> {
    let RunArgs {
        case: case_path,
        check,
        opts,
    } = parse_args(args)?;
    let case = Case::load(&case_path)?;
    if check {
        let p = validate(&case, &opts)?;
        println!("{}", check_line(&case_path, &case, &p));
        for w in &p.warnings {
            eprintln!("warning: {w}");
        }
        return Ok(0);
    }
    let s = run(&case, &opts)?;
    println!("{s}");
    if let Some(c) = &s.checkpoint {
        println!("last checkpoint: {}", c.display());
    }
    Ok(s.exit_code())
}

/// What `--check` prints for a valid case.
pub fn check_line(path: &std::path::Path, case: &Case, p: &crate::setup::Prepared) -> String {
    format!(
        "{}: ok ({:?}, {:?} grid, dt = {:e} (limit {:e}), {} steps)",
        path.display(),
        case.spec.physics,
        case.spec.grid.shape,
        p.plan.dt,
        p.plan.limit,
        p.plan.steps
    )
}

/// Parse the arguments (after the program name).
pub fn parse_args(args: &[String]) -> Result<RunArgs> {
    let mut case_path = None;
    let mut check = false;
    let mut opts = RunOptions::default();
    let mut it = args.iter();
    // Option errors are the caller's, not the case file's: `Usage`, not `Invalid`.
    let bad = |m: String| Error::Usage(format!("{m}\n{USAGE}"));
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| bad(format!("{name} needs a value")))
        };
        match a.as_str() {
            "--check" => check = true,
            "--quiet" | "-q" => opts.quiet = true,
            "--overwrite" => opts.overwrite = true,
            "--checkpoint-every" => {
                let v = value(a)?;
                opts.checkpoint_every =
                    Some(v.parse().ok().filter(|&n: &u64| n >= 1).ok_or_else(|| {
                        bad(format!("--checkpoint-every {v}: give a positive integer"))
                    })?);
            }
            "--stop-at" => {
                let v = value(a)?;
                opts.stop_at = Some(
                    v.parse()
                        .map_err(|_| bad(format!("--stop-at {v}: give a step number")))?,
                );
            }
            "--backend" => {
                let v = value(a)?;
                opts.backend = v
                    .parse()
                    .map_err(|_| bad(format!("--backend {v}: use auto, cpu or cuda")))?;
            }
            "--resume" => opts.resume = Some(PathBuf::from(value(a)?)),
            "--out" => opts.out_dir = Some(PathBuf::from(value(a)?)),
            s if s.starts_with('-') => return Err(bad(format!("unknown option {s}"))),
            s => {
                if case_path.replace(PathBuf::from(s)).is_some() {
                    return Err(bad("give one case file".into()));
                }
            }
        }
    }
    let case = case_path.ok_or_else(|| bad("no case file given".into()))?;
    Ok(RunArgs { case, check, opts })
}
