//! The conformance suite on a backend: every strategy × case × scalar type (× coefficient mode
//! on CUDA) against the CPU reference, random inputs, NaN-poisoned outputs, every point compared.

use fdlab::{Backend, Plan, PlanOptions, Real};
use fdlab_core::conformance::{cases, check_case, Case};
use fdlab_core::{Field, FieldView, FieldViewMut, Precision, Scalar};
use fdlab_cpu::Par;
use fdlab_cuda::{Coefficients, Device, PlanSpec, Strategy};
use rayon::prelude::*;
use serde::Serialize;

/// What one strategy × precision × coefficient mode did over all cases.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    /// "cpu" or "cuda".
    pub backend: String,
    /// Strategy name.
    pub strategy: String,
    /// "f32" or "f64".
    pub precision: String,
    /// "immediate" or "constant" (CUDA), "-" on the CPU.
    pub coefficients: String,
    /// Cases run.
    pub run: usize,
    /// Cases that matched the reference at every point.
    pub passed: usize,
    /// Cases this strategy does not support (e.g. pencils on a Laplacian), not run.
    pub not_applicable: usize,
    /// Cases whose kernel the device refused before launch because this tile shape needs
    /// more than the device has (e.g. a 256-wide tile's shared-memory ring for a radius-4
    /// stencil): not run, neither passed nor failed; the first reasons are kept.
    pub over_limit: usize,
    /// The first over-limit refusals, with the resource asked for.
    pub over_limit_reasons: Vec<String>,
    /// The first failures, with the mismatch.
    pub failures: Vec<String>,
}

impl CheckRow {
    /// Whether every run case passed.
    pub fn ok(&self) -> bool {
        self.passed == self.run
    }
}

fn reference<T: Scalar>(
    case: &Case,
    input: FieldView<'_, T>,
    out: &mut [FieldViewMut<'_, T>],
) -> Result<(), String> {
    fdlab_cpu::reference::apply(&case.stencils, case.boundary, input, out)
        .map_err(|e| e.to_string())
}

fn seed_of(label: &str, salt: u64) -> u64 {
    fdlab_cuda::codegen::fnv1a(label) ^ salt
}

/// Runs the conformance suite on the CPU fast executor.
pub fn check_cpu(progress: &mut dyn FnMut(usize, usize)) -> Vec<CheckRow> {
    let all = cases();
    let mut rows = vec![];
    let total = 4 * all.len();
    let mut done = 0;
    // The one-thread row calls the executor directly (the front always runs on all cores);
    // the all-cores row runs through the front, as users do.
    for (par, pname) in [(Par::Seq, "cpu-fast-seq"), (Par::Rayon, "cpu-fast-rayon")] {
        for p in Precision::ALL {
            let mut row = CheckRow {
                backend: "cpu".into(),
                strategy: pname.into(),
                precision: p.name().into(),
                coefficients: "-".into(),
                run: 0,
                passed: 0,
                not_applicable: 0,
                over_limit: 0,
                over_limit_reasons: vec![],
                failures: vec![],
            };
            for case in &all {
                let seed = seed_of(&case.label, 1);
                let r = match p {
                    Precision::F32 => cpu_case::<f32>(case, seed, par),
                    Precision::F64 => cpu_case::<f64>(case, seed, par),
                };
                row.run += 1;
                match r {
                    Ok(()) => row.passed += 1,
                    Err(e) => {
                        if row.failures.len() < 5 {
                            row.failures.push(format!("{}: {e}", case.label));
                        }
                    }
                }
                done += 1;
                progress(done, total);
            }
            rows.push(row);
        }
    }
    rows
}

fn cpu_case<T: Real>(case: &Case, seed: u64, par: Par) -> Result<(), String> {
    if par == Par::Rayon {
        let cpu = Backend::cpu();
        let plan = cpu
            .plan::<T>(
                &case.stencils,
                case.boundary,
                &case.grid,
                PlanOptions::default(),
            )
            .map_err(|e| e.to_string())?;
        return check_case::<T>(case, seed, &mut reference::<T>, &mut |_, input, out| {
            apply_through(&cpu, &plan, input, out).map_err(|e| e.to_string())
        });
    }
    check_case::<T>(case, seed, &mut reference::<T>, &mut |c, input, out| {
        fdlab_cpu::fast::apply(&c.stencils, c.boundary, input, out, par).map_err(|e| e.to_string())
    })
}

/// Runs the conformance suite on a CUDA device for `strategies` and `precisions`, both
/// coefficient modes, through the front's plans: one plan (one kernel generation and
/// compile) per case and row, the row's plans built in parallel.
pub fn check_cuda(
    dev: &Device,
    strategies: &[Strategy],
    precisions: &[Precision],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<CheckRow>, fdlab_cuda::Error> {
    let backend = Backend::from_device(dev.clone());
    let all = cases();
    prepare(dev, &all, strategies, precisions);
    let total = precisions.len() * strategies.len() * 2 * all.len();
    let mut done = 0;
    let mut rows = vec![];
    for &p in precisions {
        let mut step = Step {
            backend: &backend,
            all: &all,
            done: &mut done,
            total,
            progress,
        };
        match p {
            Precision::F32 => step.precision::<f32>(strategies, &mut rows),
            Precision::F64 => step.precision::<f64>(strategies, &mut rows),
        }
    }
    Ok(rows)
}

/// Compiles every kernel the check's plans will load, each once and all in parallel, so that
/// the rows that follow build their plans from memory. Without this, the rows compiled one
/// chunk of cases at a time and compiled again a kernel shared by cases of other shapes.
fn prepare(dev: &Device, all: &[Case], strategies: &[Strategy], precisions: &[Precision]) {
    let mut specs = vec![];
    for &precision in precisions {
        for &s in strategies {
            for coefficients in [Coefficients::Immediate, Coefficients::Constant] {
                let opts = fdlab_cuda::PlanOptions {
                    strategy: Some(s),
                    coefficients,
                    ..Default::default()
                };
                specs.extend(all.iter().map(|case| PlanSpec {
                    stencils: &case.stencils,
                    boundary: case.boundary,
                    grid: &case.grid,
                    precision,
                    opts,
                }));
            }
        }
    }
    let t0 = std::time::Instant::now();
    let kernels = dev.prepare_plans(&specs);
    eprintln!(
        "fdlab check: {kernels} kernels for {} plans compiled (or read from the kernel cache) \
         in {:.1} s",
        specs.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// What every row of a CUDA check shares.
struct Step<'a, 'p> {
    backend: &'a Backend,
    all: &'a [Case],
    done: &'a mut usize,
    total: usize,
    progress: &'a mut (dyn FnMut(usize, usize) + 'p),
}

/// The reference's outputs per case label, computed once per case and precision and reused by
/// every strategy's row (inputs and poison depend only on the case's seed).
type RefCache<T> = std::sync::Mutex<std::collections::HashMap<String, Vec<Vec<T>>>>;

/// The reference through `cache`.
fn cached_reference<T: Scalar>(
    cache: &RefCache<T>,
    case: &Case,
    input: FieldView<'_, T>,
    out: &mut [FieldViewMut<'_, T>],
) -> Result<(), String> {
    if let Some(hit) = cache.lock().map_err(|e| e.to_string())?.get(&case.label) {
        for (o, h) in out.iter_mut().zip(hit) {
            o.as_mut_slice().copy_from_slice(h);
        }
        return Ok(());
    }
    reference(case, input, out)?;
    let copy = out.iter().map(|o| o.as_slice().to_vec()).collect();
    cache
        .lock()
        .map_err(|e| e.to_string())?
        .insert(case.label.clone(), copy);
    Ok(())
}

impl Step<'_, '_> {
    /// Every row of precision `T`: references first (all cases in parallel), then each
    /// strategy in both coefficient modes.
    fn precision<T: Real>(&mut self, strategies: &[Strategy], rows: &mut Vec<CheckRow>) {
        let cache: RefCache<T> = Default::default();
        self.all.par_iter().for_each(|case| {
            // Only the reference runs here (its result is cached); the comparison with the
            // untouched poison fails and is ignored.
            let _ = check_case::<T>(
                case,
                seed_of(&case.label, 2),
                &mut |c, i, o| cached_reference(&cache, c, i, o),
                &mut |_, _, _| Ok(()),
            );
        });
        for &s in strategies {
            for c in [Coefficients::Immediate, Coefficients::Constant] {
                let row = check_row::<T>(
                    self.backend,
                    self.all,
                    s,
                    c,
                    &cache,
                    self.done,
                    self.total,
                    self.progress,
                );
                rows.push(row);
            }
        }
    }
}

/// One row: `strategy` with `coefficients` in precision `T` over every case.
#[allow(clippy::too_many_arguments)]
fn check_row<T: Real>(
    backend: &Backend,
    all: &[Case],
    strategy: Strategy,
    coefficients: Coefficients,
    cache: &RefCache<T>,
    done: &mut usize,
    total: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> CheckRow {
    let mut row = CheckRow {
        backend: "cuda".into(),
        strategy: strategy.name(),
        precision: T::PRECISION.name().into(),
        coefficients: match coefficients {
            Coefficients::Immediate => "immediate".into(),
            Coefficients::Constant => "constant".into(),
        },
        run: 0,
        passed: 0,
        not_applicable: 0,
        over_limit: 0,
        over_limit_reasons: vec![],
        failures: vec![],
    };
    let opts = PlanOptions {
        strategy: Some(strategy),
        coefficients,
        ..Default::default()
    };
    // Cases run in parallel: each builds its plan (NVRTC, module load) and prepares its
    // fields on its own thread while the others' launches run on the device; one case at a
    // time left the GPU idle for most of the check. Progress is reported per chunk.
    let one = |case: &Case| -> Result<Outcome, String> {
        match backend.plan::<T>(&case.stencils, case.boundary, &case.grid, opts) {
            Ok(plan) => check_case::<T>(
                case,
                seed_of(&case.label, 2),
                &mut |c, i, o| cached_reference(cache, c, i, o),
                &mut |_, input, out| {
                    apply_through(backend, &plan, input, out).map_err(|e| e.to_string())
                },
            )
            .map(|()| Outcome::Passed),
            Err(e) => refused(e),
        }
    };
    let chunk = 4 * rayon::current_num_threads().max(1);
    for cases in all.chunks(chunk) {
        let outcomes: Vec<Result<Outcome, String>> = cases.par_iter().map(one).collect();
        for (case, r) in cases.iter().zip(outcomes) {
            *done += 1;
            match r {
                Ok(Outcome::NotApplicable) => row.not_applicable += 1,
                Ok(Outcome::OverLimit(why)) => {
                    row.over_limit += 1;
                    if row.over_limit_reasons.len() < 2 {
                        row.over_limit_reasons
                            .push(format!("{}: {why}", case.label));
                    }
                }
                Ok(Outcome::Passed) => {
                    row.run += 1;
                    row.passed += 1;
                }
                Err(e) => {
                    row.run += 1;
                    if row.failures.len() < 5 {
                        row.failures.push(format!("{}: {e}", case.label));
                    }
                }
            }
        }
        progress(*done, total);
    }
    row
}

/// A plan the device refused to build: a strategy that does not support the case (not
/// applicable), a tile beyond the device's limits (not run), or a failure.
fn refused(e: fdlab::Error) -> Result<Outcome, String> {
    match e {
        fdlab::Error::Cuda(fdlab_cuda::Error::Unsupported(_))
        | fdlab::Error::Cuda(fdlab_cuda::Error::Misaligned { .. }) => Ok(Outcome::NotApplicable),
        fdlab::Error::Cuda(e @ fdlab_cuda::Error::ResourceLimit { .. }) => {
            Ok(Outcome::OverLimit(e.to_string()))
        }
        e => Err(e.to_string()),
    }
}

/// How a conformance case that did not fail ended.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Every point matched the reference.
    Passed,
    /// The strategy does not support the case: not run.
    NotApplicable,
    /// The device refused the kernel before building it (a tile shape beyond its limits).
    OverLimit(String),
}

/// Applies `plan` to host data through `backend`: uploads the input and the (poisoned)
/// outputs, applies, copies the outputs back.
pub fn apply_through<T: Real>(
    backend: &Backend,
    plan: &Plan<T>,
    input: FieldView<'_, T>,
    out: &mut [FieldViewMut<'_, T>],
) -> Result<(), fdlab::Error> {
    let grid = input.grid();
    let u = backend.upload(&Field::from_vec(grid, input.as_slice().to_vec())?)?;
    let mut outs = out
        .iter()
        .map(|o| backend.upload(&Field::from_vec(grid, o.as_slice().to_vec())?))
        .collect::<Result<Vec<_>, fdlab::Error>>()?;
    let mut refs: Vec<_> = outs.iter_mut().collect();
    plan.apply(&u, &mut refs)?;
    plan.synchronize()?;
    for (o, d) in out.iter_mut().zip(&outs) {
        o.as_mut_slice().copy_from_slice(d.to_host()?.as_slice());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{cached_reference, check_case, reference, refused, seed_of, Outcome, RefCache};

    #[test]
    fn a_cached_reference_is_the_reference() {
        let all = fdlab_core::conformance::cases();
        let mut labels: Vec<&str> = all.iter().map(|c| c.label.as_str()).collect();
        labels.sort();
        labels.dedup();
        assert_eq!(
            labels.len(),
            all.len(),
            "labels key the cache: they must be unique"
        );
        let cache: RefCache<f64> = Default::default();
        for case in all.iter().step_by(7) {
            // Twice through the cache (a miss, then a hit) against the reference itself.
            for _ in 0..2 {
                check_case::<f64>(
                    case,
                    seed_of(&case.label, 2),
                    &mut reference::<f64>,
                    &mut |c, i, o| cached_reference(&cache, c, i, o),
                )
                .unwrap();
            }
        }
    }

    #[test]
    fn only_a_pre_build_refusal_is_not_run() {
        let limit = fdlab_cuda::Error::ResourceLimit {
            what: "shared memory per block (bytes)".into(),
            requested: 332800,
            max: 232448,
        };
        let why = limit.to_string();
        assert_eq!(refused(limit.into()), Ok(Outcome::OverLimit(why)));
        let misaligned = fdlab_cuda::Error::Misaligned {
            kernel: "k".into(),
            nx: 67,
            multiple: 4,
        };
        assert_eq!(refused(misaligned.into()), Ok(Outcome::NotApplicable));
        // Any other error is a failure.
        let other = fdlab_cuda::Error::DeviceGone;
        assert!(refused(other.into()).is_err());
    }
}
