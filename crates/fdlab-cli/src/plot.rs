//! `fdlab plot`: a roofline chart from bench or tune JSON, or the temporal-blocking chart from
//! `fdlab bench --suite temporal` JSON.

use crate::common::{check_out_path, OutKind};
use anyhow::{Context, Result};
use fdlab_bench::{BenchResult, Report};
use std::path::PathBuf;

/// Draws the results of `files` (merged) into the PNG `out`.
pub fn plot(files: Vec<PathBuf>, out: PathBuf, best: bool) -> Result<()> {
    check_out_path("--out", &out, OutKind::Png)?;
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
            Some(m) => {
                m.results.extend(r.results);
                m.solvers.extend(r.solvers);
            }
        }
    }
    let mut report = merged.context("give at least one JSON file")?;
    if report.results.is_empty() && report.solvers.iter().any(|r| r.suite == "temporal") {
        fdlab_bench::plot::temporal_png(&report, &out)
            .map_err(|e| anyhow::anyhow!("temporal plot: {e}"))?;
        eprintln!("wrote {} ({} rows)", out.display(), report.solvers.len());
        return Ok(());
    }
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
