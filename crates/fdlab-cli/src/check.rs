//! `fdlab check`: the conformance suite on a backend.

use crate::common::{
    check_out_path, json_path, open_backend, progress_bar, refuse_gpu_only, write_json, BackendArg,
    OutKind,
};
use anyhow::{bail, Result};
use fdlab_bench::check::{check_cpu, check_cuda, CheckRow};
use fdlab_core::Precision;
use fdlab_cuda::Strategy;
use std::path::PathBuf;

/// Runs the conformance suite and prints one row per strategy and precision.
pub fn check(
    backend: BackendArg,
    strategies: Vec<String>,
    precision: Option<String>,
    json: Option<PathBuf>,
) -> Result<()> {
    let precisions: Vec<Precision> = match precision.as_deref() {
        Some(p) => vec![p.parse()?],
        None => Precision::ALL.to_vec(),
    };
    let parsed: Vec<Strategy> = strategies
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    if let Some(p) = &json {
        check_out_path("--json", p, OutKind::Json)?;
    }
    let backend = open_backend(backend)?;
    refuse_gpu_only(
        &backend,
        &[
            ("--strategy", !strategies.is_empty()),
            ("--precision", precision.is_some()),
        ],
    )?;
    let strategies = if parsed.is_empty() {
        Strategy::conformance_set()
    } else {
        parsed
    };
    let pb = progress_bar(0);
    let mut progress = |done: usize, total: usize| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
        // Without a terminal the bar is hidden: a line every tenth keeps logs alive.
        if pb.is_hidden() && done.is_multiple_of((total / 10).max(1)) {
            eprintln!("fdlab check: {done}/{total} cases");
        }
    };
    let rows: Vec<CheckRow> = match backend.device() {
        None => {
            pb.set_message("cpu fast executor");
            check_cpu(&mut progress)
        }
        Some(dev) => {
            pb.set_message(format!("compiling and checking on {}", dev.info.name));
            check_cuda(dev, &strategies, &precisions, &mut progress)?
        }
    };
    pb.finish_and_clear();
    print_rows(&rows);
    let api_failed = match backend.device() {
        Some(dev) => api_checks(dev)?,
        None => 0,
    };
    let path = json_path(json, "check", backend.name());
    write_json(&path, &rows)?;
    eprintln!("wrote {}", path.display());
    let failed: usize = rows.iter().map(|r| r.run - r.passed).sum();
    let run: usize = rows.iter().map(|r| r.run).sum();
    if failed > 0 || api_failed > 0 {
        bail!("{failed} of {run} conformance checks and {api_failed} device API checks failed");
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

fn print_rows(rows: &[CheckRow]) {
    let n_cases = fdlab_core::conformance::cases().len();
    println!(
        "conformance: {n_cases} cases (shapes × stencils × boundaries) per row, random inputs, NaN-poisoned outputs, every point compared with the CPU reference"
    );
    println!(
        "columns: run = cases run; passed = matched the reference; n/a = cases the strategy \
         does not support (not run); limit = cases refused before launch, over the device's limits"
    );
    println!(
        "{:<8} {:<32} {:<5} {:<10} {:>6} {:>7} {:>6} {:>6}  result",
        "backend", "strategy", "prec", "coeffs", "run", "passed", "n/a", "limit"
    );
    for r in rows {
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
}

/// The device API's own checks (fields, plans, graphs, streams, every typed error) against
/// the CPU reference; prints each and returns how many failed.
fn api_checks(dev: &fdlab_cuda::Device) -> Result<usize> {
    use fdlab_core::{Boundary, Field, Stencil};
    let reference = |stencils: &[Stencil],
                     boundary: Boundary,
                     input: &Field<f64>|
     -> std::result::Result<Vec<Field<f64>>, String> {
        let mut outs: Vec<Field<f64>> = stencils.iter().map(|_| Field::nan(input.grid())).collect();
        let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
        fdlab_cpu::reference::apply(stencils, boundary, input.view(), &mut views)
            .map_err(|e| e.to_string())?;
        Ok(outs)
    };
    println!("device API: fields, plans, graphs, streams and typed errors");
    let checks = fdlab_cuda::api_selftest(dev, &reference)?;
    for c in &checks {
        let verdict = if c.passed { "ok  " } else { "FAIL" };
        println!("  {verdict} {}: {}", c.name, c.detail);
    }
    Ok(checks.iter().filter(|c| !c.passed).count())
}
