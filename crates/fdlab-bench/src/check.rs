//! The conformance suite on a backend: every strategy × case × scalar type (× coefficient mode
//! on CUDA) against the CPU reference, random inputs, NaN-poisoned outputs, every point compared.

use fdlab_core::conformance::{cases, check_case, Case};
use fdlab_core::{FieldView, FieldViewMut, Precision, Scalar};
use fdlab_cpu::Par;
use fdlab_cuda::codegen::{generate, CudaSource, KernelSpec};
use fdlab_cuda::{Coefficients, CudaScalar, Device, Input, Strategy};
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

/// The generated kernel for a conformance case.
fn source_for(
    case: &Case,
    precision: Precision,
    strategy: Strategy,
    coefficients: Coefficients,
) -> Result<CudaSource, fdlab_cuda::codegen::Unsupported> {
    generate(&KernelSpec {
        stencils: &case.stencils,
        boundary: case.boundary,
        precision,
        strategy,
        coefficients,
    })
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

fn cpu_case<T: Scalar>(case: &Case, seed: u64, par: Par) -> Result<(), String> {
    check_case::<T>(case, seed, &mut reference::<T>, &mut |c, input, out| {
        fdlab_cpu::fast::apply(&c.stencils, c.boundary, input, out, par).map_err(|e| e.to_string())
    })
}

/// Runs the conformance suite on a CUDA device for `strategies` and `precisions`, both
/// coefficient modes.
pub fn check_cuda(
    dev: &Device,
    strategies: &[Strategy],
    precisions: &[Precision],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<CheckRow>, fdlab_cuda::Error> {
    let all = cases();
    // Generate and compile every kernel up front: one batch of NVRTC calls in parallel.
    let mut sources: Vec<CudaSource> = vec![];
    let modes = [Coefficients::Immediate, Coefficients::Constant];
    for &p in precisions {
        for &s in strategies {
            for c in modes {
                for case in &all {
                    if let Ok(src) = source_for(case, p, s, c) {
                        sources.push(src);
                    }
                }
            }
        }
    }
    dev.kernels(&sources)?;
    let total = precisions.len() * strategies.len() * modes.len() * all.len();
    let mut done = 0;
    let mut rows = vec![];
    for &p in precisions {
        for &s in strategies {
            for c in modes {
                let mut row = CheckRow {
                    backend: "cuda".into(),
                    strategy: s.name(),
                    precision: p.name().into(),
                    coefficients: match c {
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
                for case in &all {
                    done += 1;
                    progress(done, total);
                    let applies = source_for(case, p, s, c)
                        .map(|k| case.grid.shape()[0] % k.x_multiple as usize == 0)
                        .unwrap_or(false);
                    if !applies {
                        row.not_applicable += 1;
                        continue;
                    }
                    let seed = seed_of(&case.label, 2);
                    let r = match p {
                        Precision::F32 => cuda_case::<f32>(dev, case, s, c, seed),
                        Precision::F64 => cuda_case::<f64>(dev, case, s, c, seed),
                    };
                    match r {
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
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

fn cuda_case<T: CudaScalar>(
    dev: &Device,
    case: &Case,
    strategy: Strategy,
    coefficients: Coefficients,
    seed: u64,
) -> Result<Outcome, String> {
    let mut over_limit = None;
    let r = check_case::<T>(case, seed, &mut reference::<T>, &mut |c, input, out| {
        cuda_apply(dev, c, strategy, coefficients, input, out).map_err(|e| {
            let msg = e.to_string();
            if matches!(e, fdlab_cuda::Error::ResourceLimit { .. }) {
                over_limit = Some(msg.clone());
            }
            msg
        })
    });
    classify(r, over_limit)
}

/// A case's outcome from the comparison's result and, when the device refused the kernel
/// before launch (`fdlab_cuda::Error::ResourceLimit`), the refusal: only such a refusal is
/// "not run"; every other error, a wrong point included, stays a failure.
fn classify(r: Result<(), String>, refusal: Option<String>) -> Result<Outcome, String> {
    match (r, refusal) {
        // Refused before launch with a typed error: the shape cannot run here, nothing ran.
        (Err(_), Some(why)) => Ok(Outcome::OverLimit(why)),
        (r, _) => r.map(|()| Outcome::Passed),
    }
}

/// How a conformance case that did not fail ended on the device.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Every point matched the reference.
    Passed,
    /// The device refused the kernel before launch (a tile shape beyond its limits).
    OverLimit(String),
}

/// Applies `case`'s stencils on the device: uploads the input and the (poisoned) outputs,
/// launches, downloads the outputs.
pub fn cuda_apply<T: CudaScalar>(
    dev: &Device,
    case: &Case,
    strategy: Strategy,
    coefficients: Coefficients,
    input: FieldView<'_, T>,
    out: &mut [FieldViewMut<'_, T>],
) -> Result<(), fdlab_cuda::Error> {
    let src = source_for(case, T::PRECISION, strategy, coefficients)?;
    let kernel = dev.kernel(&src)?;
    let d_in = dev.upload(input.as_slice())?;
    let mut d_out = out
        .iter()
        .map(|o| dev.upload(o.as_slice()))
        .collect::<Result<Vec<_>, _>>()?;
    let tex = dev.texture_for(&src, &d_in)?;
    dev.set_constants::<T>(&kernel, &src)?;
    dev.launch(
        &kernel,
        &Input {
            buffer: &d_in,
            texture: tex.as_ref(),
        },
        &mut d_out,
        case.grid.shape(),
    )?;
    dev.synchronize()?;
    for (o, d) in out.iter_mut().zip(&d_out) {
        let host = dev.download(d)?;
        o.as_mut_slice().copy_from_slice(&host);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{classify, Outcome};

    #[test]
    fn only_a_pre_launch_refusal_is_not_run() {
        assert_eq!(classify(Ok(()), None), Ok(Outcome::Passed));
        let refused =
            "shared memory per block (bytes): requested 332800, the device allows at most 232448";
        assert_eq!(
            classify(Err(refused.into()), Some(refused.into())),
            Ok(Outcome::OverLimit(refused.into()))
        );
        // A mismatch or any other error is a failure, whatever its text says.
        assert_eq!(
            classify(Err(format!("point (3, 4, 5): {refused}")), None),
            Err(format!("point (3, 4, 5): {refused}"))
        );
    }
}
