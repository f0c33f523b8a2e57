//! `fdlab check`: the conformance suite on a backend.

use crate::common::{
    check_out_path, open_backend, progress_bar, refuse_gpu_only, write_json, OutKind,
};
use anyhow::{bail, Result};
use fdlab::BackendKind;
use fdlab_bench::check::{check_cpu, check_cuda, CheckRow};
use fdlab_core::Precision;
use fdlab_cuda::Strategy;
use std::path::PathBuf;

/// What `fdlab check --only` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    /// The stencil kernels (and the device API).
    Kernels,
    /// The solvers' time steps.
    Solvers,
    /// Only the solvers' decomposed runs (slabs exchanging halos against the whole grid).
    Decomposed,
    /// Only the FDTD cases (random boxes, and the FDTD examples on a GPU) against the CPU.
    Fdtd,
    /// Only the GPU's temporal blocking (heat and wave k-step passes against single steps).
    Temporal,
}

/// Runs the conformance suite and prints one row per strategy and precision, then the
/// solvers' section.
pub fn check(
    backend: BackendKind,
    strategies: Vec<String>,
    precision: Option<String>,
    json: Option<PathBuf>,
    only: Option<Section>,
) -> Result<()> {
    let kernels = only.is_none() || only == Some(Section::Kernels);
    let solvers = only != Some(Section::Kernels) && strategies.is_empty();
    if !kernels && !strategies.is_empty() {
        bail!("--strategy selects kernels: drop it, or drop --only solvers");
    }
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
    let solver_failed = if solvers {
        solver_checks(&backend, &precisions, json.as_deref(), only)?
    } else {
        0
    };
    if !kernels {
        if solver_failed > 0 {
            bail!("{solver_failed} solver checks failed");
        }
        return Ok(());
    }
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
    // Results are files only when asked for: a check run in a clone leaves it clean.
    if let Some(path) = &json {
        write_json(path, &rows)?;
        eprintln!("wrote {}", path.display());
    }
    let failed: usize = rows.iter().map(|r| r.run - r.passed).sum();
    let run: usize = rows.iter().map(|r| r.run).sum();
    if failed > 0 || api_failed > 0 || solver_failed > 0 {
        bail!("{failed} of {run} conformance checks, {api_failed} device API checks and {solver_failed} solver checks failed");
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
    let step_reference = |d: &fdlab_core::step::StepDescription,
                          g: &fdlab_core::Grid,
                          slots: &mut fdlab_core::step::Slots<Field<f64>>,
                          params: &[(&str, f64)]|
     -> std::result::Result<(), String> {
        fdlab_cpu::step::run_step(d, g, slots, params).map_err(|e| e.to_string())
    };
    let print = |checks: &[fdlab_cuda::Check]| {
        for c in checks {
            let verdict = if c.passed { "ok  " } else { "FAIL" };
            println!("  {verdict} {}: {}", c.name, c.detail);
        }
        checks.iter().filter(|c| !c.passed).count()
    };
    let api_failed = print(&checks);
    println!("step descriptions: variable-density acoustics, generated kernels against the CPU");
    let steps = fdlab_cuda::step_selftest(dev, &step_reference)?;
    Ok(api_failed + print(&steps))
}

/// The solvers' section: on a GPU, its heat, wave and FDTD steppers against the CPU's fused ones
/// (every random case: fields and traces, resume, NaN report); on the CPU, the fused
/// steppers against the per-point reference loops. Prints each failure; returns how many.
fn solver_checks(
    backend: &fdlab::Backend,
    precisions: &[Precision],
    json: Option<&std::path::Path>,
    only: Option<Section>,
) -> Result<usize> {
    let only_decomposed = only == Some(Section::Decomposed);
    let only_fdtd = only == Some(Section::Fdtd);
    let only_temporal = only == Some(Section::Temporal);
    let wanted_case = |c: &fdlab_solvers::conformance::CheckCase| {
        !only_decomposed
            && !only_temporal
            && (!only_fdtd || matches!(c.setup, fdlab_solvers::setup::Setup::Fdtd(_)))
    };
    use fdlab_core::Precision;
    use fdlab_solvers::conformance::{cases, gpu, reference, run_all};
    use fdlab_solvers::temporal_checks::{run_temporal, temporal_cases};
    let on_gpu = backend.device().is_some();
    let wanted: Vec<Precision> = precisions
        .iter()
        .map(|p| match p {
            Precision::F32 => Precision::F32,
            Precision::F64 => Precision::F64,
        })
        .collect();
    if (only_decomposed || only_temporal) && !on_gpu {
        bail!(
            "--only decomposed and --only temporal check GPU steppers: give --backend cuda on a machine with a GPU"
        );
    }
    let mut cases: Vec<_> = cases(!on_gpu)
        .into_iter()
        .filter(|c| wanted.contains(&c.precision) && wanted_case(c))
        .collect();
    // The repository's example cases too, at their own sizes, when run from its root (the
    // CPU's reference loops would take minutes on them: GPU only).
    let examples = std::path::Path::new("examples/cases");
    if on_gpu && examples.is_dir() && !only_decomposed && !only_temporal {
        cases.extend(
            fdlab_solvers::conformance::example_cases(examples)?
                .into_iter()
                .filter(|c| wanted_case(c)),
        );
    } else if on_gpu && !only_decomposed && !only_temporal {
        println!("solvers: no examples/cases here (run from the repository root to check them)");
    }
    println!(
        "solvers: {} cases (random heat, wave and FDTD cases, odd shapes, every boundary; on a GPU also the example cases it runs); {} against the CPU's fused steppers: fields and receiver or probe traces after 30 steps, resume from a checkpoint bit-identical, NaN reported at the same step and cell",
        cases.len(),
        if on_gpu { "GPU steppers" } else { "CPU reference loops" }
    );
    let pb = progress_bar(cases.len() as u64);
    pb.set_message("solver steps");
    let mut results = if on_gpu {
        run_all(&cases, &gpu, &mut |done, _| pb.set_position(done as u64))
    } else {
        run_all(&cases, &reference, &mut |done, _| {
            pb.set_position(done as u64)
        })
    };
    pb.finish_and_clear();
    if on_gpu && !only_fdtd {
        // The heat and wave steps with temporal blocking: k-step passes against the CPU and
        // against the GPU's own single steps.
        let temporal: Vec<_> = temporal_cases()
            .into_iter()
            .filter(|c| wanted.contains(&c.case.precision) && !only_decomposed)
            .collect();
        println!(
            "solvers: {} temporal-blocking cases (heat order 2 with k = 2 … 8, wave orders 4 and 8 with k = 2 and 3, odd shapes, both boundaries, small tiles): fields after 100 steps against the CPU and the GPU's single steps, resume, NaN after passes",
            temporal.len()
        );
        let pb = progress_bar(temporal.len() as u64);
        pb.set_message("temporal blocking");
        results.extend(run_temporal(&temporal, &mut |done, _| {
            pb.set_position(done as u64)
        }));
        pb.finish_and_clear();
    }
    if on_gpu && !only_decomposed && !only_temporal {
        let passes = fdlab_solvers::temporal_checks::fdtd_pass_cases(&cases);
        println!(
            "solvers: {} FDTD cases with two steps a pass (every boundary, CPML layers, point sources and probes): fields and probe traces after 100 steps bit-equal to the GPU's single steps",
            passes.len()
        );
        let pb = progress_bar(passes.len() as u64);
        pb.set_message("FDTD two steps a pass");
        for (i, c) in passes.into_iter().enumerate() {
            results.push(fdlab_solvers::temporal_checks::fdtd_pass_check(c));
            pb.set_position(i as u64 + 1);
        }
        pb.finish_and_clear();
    }
    if on_gpu && !only_fdtd && !only_temporal {
        let split = fdlab_dist::gpu_check::count(&wanted);
        println!(
            "solvers: {split} decomposed cases (heat and wave split into 2 and 3 slabs along the last axis, odd shapes, periodic, walls and CPML layers cut inside and outside, orders 2 to 8; and checkpoints of split runs resumed on another number of slabs): the slabs on this GPU exchanging halos through the host, and with NCCL across GPUs where there is a GPU per slab, against the whole grid on the GPU after 40 steps, bit for bit"
        );
        let pb = progress_bar(split as u64);
        pb.set_message("decomposed runs");
        results.extend(fdlab_dist::gpu_check::run_checks(&wanted, &mut |done| {
            pb.set_position(done as u64)
        }));
        pb.finish_and_clear();
    }
    let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
    for f in &failed {
        println!("  FAIL {}: {}", f.name, f.detail);
    }
    let worst = |f32: bool| {
        results
            .iter()
            .filter(|r| r.name.contains("fields") && r.name.contains(" F32") == f32)
            .map(|r| r.error)
            .fold(0.0f64, f64::max)
    };
    println!(
        "solvers: {} of {} checks passed; largest relative difference f64 {:.2e}, f32 {:.2e}",
        results.len() - failed.len(),
        results.len(),
        worst(false),
        worst(true)
    );
    if let Some(p) = json {
        let path = p.with_extension("solvers.json");
        write_json(&path, &results)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(failed.len())
}
