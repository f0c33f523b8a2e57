//! Running cases: the CPU runner (fast executor, timed with the wall clock) and the CUDA runner
//! (generated kernels, timed with CUDA events), both checking every output against the CPU.

use crate::report::BenchResult;
use crate::suites::Case;
use fdlab::{Backend, BackendField, Plan, Real};
use fdlab_core::{compare, max_abs, Field, Precision, Scalar};
use fdlab_cuda::Coefficients;
use rayon::prelude::*;
use std::time::Instant;

mod cpu;
mod cuda;

pub use cpu::CpuRunner;
pub use cuda::{over_limits, CandidateTiming, CudaRunner};

/// Why a case failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// Bad model input.
    #[error(transparent)]
    Model(#[from] fdlab_core::Error),
    /// CUDA failure.
    #[error(transparent)]
    Cuda(#[from] fdlab_cuda::Error),
    /// A failure reported by the front.
    #[error(transparent)]
    Front(#[from] fdlab::Error),
    /// The case needs more host memory than is available; found before allocating.
    #[error("{case} needs {:.2} GiB of host memory, {:.2} GiB available; use a smaller --size", *needed as f64 / 1073741824.0, *available as f64 / 1073741824.0)]
    HostMemory {
        /// Case.
        case: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The output disagreed with the CPU.
    #[error("{case} ({strategy}): output differs from the CPU: {detail}")]
    Mismatch {
        /// Case.
        case: String,
        /// Strategy.
        strategy: String,
        /// The first mismatch.
        detail: String,
    },
}

/// Knobs for a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Timed runs per case (median reported).
    pub reps: usize,
    /// Untimed runs first.
    pub warmup: usize,
    /// Grids up to this many points are checked against the slow reference; larger ones
    /// against the CPU fast executor (itself tested against the reference).
    pub reference_limit: usize,
    /// Check against the CPU at all (the GPU path always compares unless this is false).
    pub check: bool,
    /// Literal weights or `__constant__` memory (CUDA).
    pub coefficients: Coefficients,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            reps: 20,
            warmup: 3,
            reference_limit: 1 << 22,
            check: true,
            coefficients: Coefficients::Immediate,
        }
    }
}

pub(super) fn base_result(case: &Case, backend: &str, strategy: &str) -> BenchResult {
    BenchResult {
        suite: case.suite.to_string(),
        case: case.name.clone(),
        backend: backend.into(),
        strategy: strategy.into(),
        precision: case.precision.name().into(),
        shape: case.grid.shape(),
        bytes: case.bytes,
        flops: case.flops(),
        latency_bound: case.latency_bound,
        note: case.note.clone(),
        ..Default::default()
    }
}

/// The CPU's answer for `case` on `input`: the reference for small grids (outputs in
/// parallel), else the fast executor through the front.
pub(super) fn cpu_answer<T: Real>(
    case: &Case,
    input: &Field<T>,
    opts: &RunOptions,
) -> Result<(Vec<Field<T>>, &'static str), BenchError> {
    if case.grid.len() <= opts.reference_limit {
        let outs = case
            .stencils
            .par_iter()
            .map(|s| {
                let mut out = Field::nan(&case.grid);
                fdlab_cpu::reference::apply(
                    std::slice::from_ref(s),
                    case.boundary,
                    input.view(),
                    &mut [out.view_mut()],
                )
                .map(|_| out)
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((outs, "cpu-reference"));
    }
    // The fast executor on the host fields themselves: no copies of gigabyte grids.
    let mut outs: Vec<Field<T>> = case
        .stencils
        .iter()
        .map(|_| Field::nan(&case.grid))
        .collect();
    let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
    let par = fdlab_cpu::fast::Par::Rayon;
    fdlab_cpu::fast::apply(&case.stencils, case.boundary, input.view(), &mut views, par)?;
    Ok((outs, "cpu-fast"))
}

/// One NaN-poisoned output per stencil on `backend`.
pub(super) fn nan_fields<T: Real>(
    backend: &Backend,
    case: &Case,
) -> Result<Vec<BackendField<T>>, BenchError> {
    let nan = Field::<T>::nan(&case.grid);
    Ok(case
        .stencils
        .iter()
        .map(|_| backend.upload(&nan))
        .collect::<Result<Vec<_>, _>>()?)
}

/// `plan.apply` on a vector of outputs.
pub(super) fn apply_all<T: Real>(
    plan: &Plan<T>,
    input: &BackendField<T>,
    outs: &mut [BackendField<T>],
) -> Result<(), fdlab::Error> {
    let mut refs: Vec<&mut BackendField<T>> = outs.iter_mut().collect();
    plan.apply(input, &mut refs)
}

/// Available host memory in bytes (`MemAvailable`), when the system says.
pub fn host_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Host bytes a case needs: the input, the outputs and, when checked, the CPU's answer.
pub fn host_bytes(case: &Case, checked: bool) -> u64 {
    let fields = 1 + case.stencils.len() * if checked { 2 } else { 1 };
    (fields * case.grid.len() * case.precision.size()) as u64
}

/// Refuses a case whose fields do not fit in the available host memory.
pub fn check_host_memory(case: &Case, checked: bool) -> Result<(), BenchError> {
    let needed = host_bytes(case, checked);
    match host_available() {
        Some(available) if needed > available => Err(BenchError::HostMemory {
            case: format!("{} {} {:?}", case.name, case.precision, case.grid.shape()),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

/// Compares `got` with `want` at every point (in parallel over planes).
pub(super) fn check_outputs<T: Scalar, G: AsRef<[T]>>(
    case: &Case,
    strategy: &str,
    input: &Field<T>,
    got: &[G],
    want: &[Field<T>],
) -> Result<(), BenchError> {
    let region = case.boundary.check(&case.grid, &case.stencils)?;
    let amp = max_abs(input.as_slice());
    for (o, s) in case.stencils.iter().enumerate() {
        compare(
            &case.grid,
            region,
            got[o].as_ref(),
            want[o].as_slice(),
            s.abs_sum() * amp,
        )
        .map_err(|m| BenchError::Mismatch {
            case: case.name.clone(),
            strategy: strategy.into(),
            detail: format!("output {o}: {m}"),
        })?;
    }
    Ok(())
}

/// Errors of the outputs against the analytic answer (the worst output's RMS and MAX).
pub(super) fn analytic_errors<T: Scalar, G: AsRef<[T]>>(
    case: &Case,
    got: &[G],
) -> Result<(f64, f64), BenchError> {
    if got.len() != case.exact.len() {
        return Ok((f64::NAN, f64::NAN));
    }
    let region = case.boundary.check(&case.grid, &case.stencils)?;
    let mut rms = 0.0f64;
    let mut max = 0.0f64;
    for (o, exact) in case.exact.iter().enumerate() {
        let e = exact.errors(&case.grid, region, got[o].as_ref());
        rms = rms.max(e.rms);
        max = if e.max.is_nan() {
            f64::NAN
        } else {
            max.max(e.max)
        };
    }
    Ok((rms, max))
}

/// CPU peak arithmetic estimate: cores × clock × SIMD lanes (AVX2) × 2 FMA units × 2.
pub fn cpu_peak_gflops(p: Precision) -> f64 {
    let mhz = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .unwrap_or(2500.0);
    let lanes = match p {
        Precision::F32 => 8.0,
        Precision::F64 => 4.0,
    };
    rayon::current_num_threads() as f64 * mhz * 1e-3 * lanes * 2.0 * 2.0
}

/// CPU model name.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// One parallel copy of `src` into `dst` with non-temporal stores
/// ([`fdlab_cpu::copy::stream_copy`], one piece per thread): milliseconds.
///
/// The reference is a streaming-store copy rather than `copy_from_slice`: below glibc's
/// threshold `memcpy` writes through the cache and reads each destination line first, so it
/// moves less than the memory can and flatters every stencil measured against it.
pub fn cpu_copy_gbps(src: &[f64], dst: &std::sync::Mutex<Vec<f64>>) -> f64 {
    let mut dst = dst.lock().expect("copy buffer lock");
    let t = Instant::now();
    // Equal lengths by construction (both buffers are made together in `CpuRunner::new`).
    let copied = fdlab_cpu::copy::stream_copy(src, &mut dst[..], fdlab_cpu::Par::Rayon);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    debug_assert!(copied.is_ok());
    std::hint::black_box(&*dst);
    ms
}
