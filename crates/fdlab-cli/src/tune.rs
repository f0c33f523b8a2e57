//! `fdlab tune`: search strategies per case on the GPU and remember the winners.

use crate::common::{fill_meta, now_utc, progress_bar, results_path, say, write_json};
use anyhow::{bail, Context, Result};
use fdlab_bench::report::{header, row};
use fdlab_bench::runner::over_limits;
use fdlab_bench::suites::Case;
use fdlab_bench::tune::{candidates, key, Entry, TuneCache};
use fdlab_bench::{
    cases, check_suite, select, BenchResult, CudaRunner, Report, RunOptions, SuiteOptions, Target,
};
use fdlab_cuda::{Device, Strategy};
use std::path::PathBuf;

/// The options of `fdlab tune`.
pub struct TuneArgs {
    pub suites: Vec<String>,
    pub sopts: SuiteOptions,
    pub cases: Vec<String>,
    pub reps: usize,
    pub json: Option<PathBuf>,
    pub only: Vec<String>,
}

/// The search space of a case: the built-in one, or the strategies given that can run it;
/// each strategy once.
fn space(c: &Case, only: &[Strategy]) -> Vec<Strategy> {
    let all = if only.is_empty() {
        candidates(c)
    } else {
        only.iter()
            .copied()
            .filter(|s| {
                s.supports_spec(&c.stencils, c.boundary, c.precision)
                    .is_ok()
            })
            .collect()
    };
    let mut out: Vec<Strategy> = Vec::with_capacity(all.len());
    for s in all {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Times every candidate of every case, checks each winner, saves it in the tune cache.
pub fn tune(a: TuneArgs) -> Result<()> {
    let only: Vec<Strategy> = a.only.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    let suites = if a.suites.is_empty() {
        vec!["roofline".to_string()]
    } else {
        a.suites.clone()
    };
    for s in &suites {
        check_suite(s)?;
    }
    if a.reps == 0 {
        bail!("--reps 0: give at least 1 timed run");
    }
    let dev = Device::open(0).context("fdlab tune measures kernels on a GPU")?;
    let mut all = vec![];
    for s in &suites {
        all.extend(cases(s, Target::Cuda, &a.sopts)?);
    }
    select(&mut all, &a.cases)?;
    // Tune each distinct problem once (suites share cases).
    let mut seen = std::collections::HashSet::new();
    all.retain(|c| seen.insert(key("", c)));
    // Checked (and its folder made) before the first kernel is timed.
    let json = results_path(a.json.clone(), "tune", "cuda")?;
    let runner = CudaRunner::new(dev, 1 << 30)?;
    let name = runner.device.info.name.clone();
    let mut cache = TuneCache::load();
    let mut log: Vec<BenchResult> = vec![];
    let total: usize = all.iter().map(|c| space(c, &only).len()).sum();
    let pb = progress_bar(total as u64);
    say(&pb, header());
    for c in &all {
        let cands = space(c, &only);
        let shape: Vec<String> = c.grid.dims().iter().map(|n| n.to_string()).collect();
        pb.set_message(format!("{} {} {}", c.name, c.precision, shape.join("x")));
        let timed = runner.time_candidates(c, &cands, 2, a.reps)?;
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
                // Over the device's limits: refused before compiling, skipped quietly.
                Err(e) if over_limits(e) => {}
                Err(e) => say(&pb, format!("  skipped {s}: {e}")),
            }
            pb.inc(1);
        }
        let Some((winner, _)) = best else {
            say(&pb, format!("no candidate ran for {}", c.name));
            continue;
        };
        // The winner is checked point by point before it is remembered.
        let opts = RunOptions {
            reps: a.reps,
            ..Default::default()
        };
        let checked = runner.run(c, winner, &opts)?;
        say(&pb, row(&checked));
        cache.entries.insert(
            key(&name, c),
            Entry {
                strategy: winner.name(),
                time_ms: checked.time_ms.median,
                gbps: checked.gbps,
                candidates: cands.len(),
                date: now_utc(),
            },
        );
        // Saved after every case, so an interrupted search keeps what it found.
        cache.save().context("saving the tune cache")?;
        let mut meta = runner.meta.clone();
        fill_meta(&mut meta);
        write_json(
            &json,
            &Report {
                meta,
                results: log.clone(),
                solvers: vec![],
            },
        )?;
    }
    pb.finish_and_clear();
    let path = cache.save().context("saving the tune cache")?;
    println!(
        "tuned {} case(s); winners saved to {}",
        all.len(),
        path.display()
    );
    eprintln!("wrote {}", json.display());
    Ok(())
}
