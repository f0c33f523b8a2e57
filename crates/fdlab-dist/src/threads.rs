//! A job run as threads of this process, one per rank, over [`LocalTransport`]: how one
//! process drives several GPUs (`fdlab run --gpus N`), and how the checks split a grid on one.

use crate::error::{Error, Result};
use crate::gpu::{DistOptions, Exchange, GpuPlacement};
use crate::local::LocalTransport;
use crate::transport::Transport;
use fdlab_solvers::{Case, RunOptions, Summary};
use std::sync::mpsc::channel;
use std::sync::Arc;

/// Run `work(rank, transport)` on one thread per rank and return the results in rank order.
/// The first error any rank returns (or a panic) is returned at once, without waiting for the
/// other ranks: a rank blocked on a peer that failed may never end by itself (a device-side
/// exchange cannot time out), so a caller that gets an error should end the process.
pub fn on_threads<R, F>(ranks: usize, work: F) -> Result<Vec<R>>
where
    R: Send + 'static,
    F: Fn(LocalTransport) -> Result<R> + Send + Sync + 'static,
{
    let work = Arc::new(work);
    let (tx, rx) = channel();
    for t in LocalTransport::group(ranks) {
        let (work, tx) = (work.clone(), tx.clone());
        std::thread::spawn(move || {
            let rank = t.rank();
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(t)))
                .unwrap_or_else(|_| {
                    Err(Error::Transport {
                        rank,
                        detail: "the rank's thread panicked".into(),
                    })
                });
            // The receiver is gone only once the job has already failed.
            let _ = tx.send((rank, out));
        });
    }
    drop(tx);
    let mut results: Vec<Option<R>> = (0..ranks).map(|_| None).collect();
    for _ in 0..ranks {
        let (rank, out) = rx.recv().map_err(|_| Error::Transport {
            rank: 0,
            detail: "a rank's thread ended without a result".into(),
        })?;
        results[rank] = Some(out?);
    }
    Ok(results.into_iter().flatten().collect())
}

/// How halos travel between `ranks` GPU parts on a host with `devices` GPUs: NCCL (when built
/// with it) when every rank has a GPU of its own, else through host memory.
pub fn exchange_for(ranks: usize, devices: usize) -> Result<Exchange> {
    exchange_with(ranks, devices, false)
}

/// As [`exchange_for`]; `staged` asks for halos through host memory even where NCCL could
/// carry them ([`DistOptions::staged`]).
pub fn exchange_with(ranks: usize, devices: usize, staged: bool) -> Result<Exchange> {
    if staged || ranks > devices {
        return Ok(Exchange::Staged);
    }
    #[cfg(feature = "nccl")]
    return Ok(Exchange::Nccl(new_nccl_id()?));
    #[cfg(not(feature = "nccl"))]
    Ok(Exchange::Staged)
}

/// A fresh NCCL job id (one id starts one communicator: make one per job).
#[cfg(feature = "nccl")]
pub fn new_nccl_id() -> Result<cudarc::nccl::Id> {
    // SAFETY: only tries to open the library by its usual names.
    if !unsafe { cudarc::nccl::sys::is_culib_present() } {
        return Err(Error::Transport {
            rank: 0,
            detail: "NCCL (libnccl.so) was not found: put its folder on LD_LIBRARY_PATH, \
                     or exchange the halos through host memory (the staged exchange)"
                .into(),
        });
    }
    cudarc::nccl::Id::new().map_err(|e| Error::Transport {
        rank: 0,
        detail: format!(
            "NCCL could not make a job id ({e:?}); put libnccl.so on the library path or \
             exchange the halos through host memory (the staged exchange)"
        ),
    })
}

/// Run `case` split over `ranks` GPU parts, one thread each, rank `q` on GPU `q mod devices`;
/// rank 0 writes the outputs and shows the progress. `dims`: the process grid (default: the
/// last axis split `ranks` ways). Halos as [`DistOptions::default`] moves them.
pub fn run_on_gpus(
    case: &Case,
    opts: &RunOptions,
    ranks: usize,
    dims: Option<[usize; 3]>,
) -> Result<Summary> {
    run_on_gpus_with(case, opts, ranks, dims, DistOptions::default())
}

/// As [`run_on_gpus`], with the halos moved as `dist` says; the summary's schedule names the
/// exchange and whether it overlapped the interior.
pub fn run_on_gpus_with(
    case: &Case,
    opts: &RunOptions,
    ranks: usize,
    dims: Option<[usize; 3]>,
    dist: DistOptions,
) -> Result<Summary> {
    let devices = fdlab_solvers::gpu::device_count()
        .map_err(|e| Error::Solver(fdlab_solvers::Error::Invalid(format!("--gpus: {e}"))))?;
    let exchange = exchange_with(ranks, devices, dist.staged)?;
    let (case, opts) = (case.clone(), opts.clone());
    let mut summaries = on_threads(ranks, move |t| {
        let ordinal = t.rank() % devices;
        crate::run::run_on(
            &case,
            &opts,
            Box::new(t),
            dims,
            Some(GpuPlacement {
                ordinal,
                exchange,
                overlap: dist.overlap,
            }),
        )
    })?;
    Ok(summaries.swap_remove(0))
}
