//! The fast executor: rayon over contiguous blocks of planes (rows in 2-D, points in 1-D),
//! tap rows resolved through the boundary once per run of rows, and fused inner loops over up
//! to eight taps, hand-vectorised with AVX2 + FMA where the CPU has them (detected at run time).
//!
//! How a call runs:
//!
//! - [`crate::check::check_apply`] gives the region of computed points; it is split into one
//!   contiguous block per thread along its outermost axis (z, else y, else x), and each thread
//!   gets the contiguous part of every output that holds its block.
//! - Each thread walks its output rows in *runs*: consecutive rows along y (or along z for
//!   stencils that reach along z but not y, so that the rows such a stencil reads stay in L1
//!   from one output row to the next) whose taps need no boundary mapping along that axis.
//!   For a run, each tap's input row is looked up once; the rows then advance together. With
//!   stencils reaching along z, rows go in y-blocks with z innermost, so that the planes a
//!   block reads stay in cache ([`Options::block_bytes`]).
//! - Over the x-interior of a row (every tap inside the row) one loop per group of up to
//!   [`Options::group`] taps computes `out[i] = Σ w·row_t[i + ox_t]` in `T`, two vectors per
//!   step, and prefetches into L2 (L1 for derivatives along x) the input row the loop will
//!   need [`Options::prefetch_rows`] rows later, at least [`Options::prefetch_bytes`] ahead
//!   (in the order the rows are computed: across a y-block's planes, not into the next block). Whole rows one after the other (no x-edges)
//!   are one long row. Stencils whose taps all read one row within ±4 points (derivatives
//!   along x) load each input vector once and build the shifted vectors with shuffles: the
//!   loads, not the arithmetic, limit these loops.
//!   Stencils whose taps pair up with opposite offsets and weights (first derivatives along y or
//!   z) sum `w·(u₊ − u₋)` per pair, so that the weights stay in registers; where the CPU has
//!   AVX-512F, with 512-bit vectors (one cache line each), the few points before the first and
//!   after the last whole line of a row as one masked vector each, whole rows one after the
//!   other as one long row, and (stencils reaching along z only, over whole planes) each plane
//!   as one flat row marched along z in pieces that end on cache lines of the output; with one
//!   such stencil, every tap but the lead plane's is read from a small ring of copied pieces
//!   (tap rows a multiple of 4 KiB apart, as in 512² f32 planes, share their L1 sets).
//! - Derivatives along x over whole periodic rows, where the CPU has AVX-512F: the rows of a run
//!   are one span, every 64-byte line of the output one vector (also the line holding a row's
//!   end and the next row's start: its taps that wrap around the row come through masked loads).
//! - The few points near the x-ends (periodic, Neumann) read small windows of boundary-mapped
//!   copies through the same vector loop (or, without AVX2, sum the taps point by point with
//!   precomputed indices).
//! - All stencils of one call (a gradient) are computed run by run in the same pass, so each
//!   input row is read from memory once for all outputs.
//! - Large outputs are written with non-temporal stores on x86-64 (see [`Stores`]), so that no
//!   memory bandwidth is spent reading output lines before they are overwritten.
//!
//! Points outside the region are never written. Sums run in `T`, in another order than the
//! reference's `f64` sums; [`fdlab_core::compare`]'s tolerances cover the difference.
//!
//! Where the code is: this file holds the options and [`apply_with`]; `plan` cuts a call into
//! tasks and resolves the stencils' taps; `run` walks a task's rows in runs and computes each
//! run's interior and x-edges; `portable` holds the loops without intrinsics; `x86` the AVX2 and
//! AVX-512F loops (one file per loop family, see its module docs); the streaming-store copy the
//! portable loops use is in [`crate::copy`].

use crate::check::check_apply;
use fdlab_core::{Boundary, FieldView, FieldViewMut, Region, Result, Scalar, Stencil};
use rayon::prelude::*;

pub use crate::par::Par;

/// How the fast executor stores its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stores {
    /// Non-temporal stores when the outputs are much larger than a last-level cache
    /// ([`NT_THRESHOLD_BYTES`]), ordinary stores otherwise.
    #[default]
    Auto,
    /// Ordinary stores: the output lines are read for ownership, then written, and stay in
    /// cache.
    Temporal,
    /// Non-temporal (streaming) stores for whole cache lines on x86-64; ordinary stores on other
    /// targets.
    NonTemporal,
}

/// Which instruction set the inner loops use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Simd {
    /// AVX2 and FMA when the CPU has them (detected at run time), the baseline otherwise; and
    /// where the CPU also has AVX-512F, 512-bit loops for the pair loop (first derivatives
    /// along y and z) and for derivatives along x over whole periodic rows.
    #[default]
    Auto,
    /// As [`Simd::Auto`] without the AVX-512 loops (AVX2 and FMA when the CPU has them).
    Avx2,
    /// The baseline of the build target (SSE2 on x86-64): plain multiply and add.
    Baseline,
}

/// Output size from which [`Stores::Auto`] streams: 64 MiB, twice a large last-level cache.
pub const NT_THRESHOLD_BYTES: usize = 64 << 20;

/// Default of [`Options::min_par_work`].
pub const PAR_MIN_WORK: usize = 1 << 17;

/// Points of a row computed per pass over the taps (the row segment stays in L1).
const X_BLOCK: usize = 1024;

/// Tuning knobs of the fast executor. [`apply`] uses `Options::default()` with its `par`.
///
/// ```
/// use fdlab_core::{Boundary, Field, Grid, Stencil};
/// use fdlab_cpu::fast::{apply_with, Options, Par, Stores};
/// let grid = Grid::unit(&[32, 32, 32]).unwrap();
/// let lap = Stencil::laplacian(&grid, 2).unwrap();
/// let u = Field::<f64>::random(&grid, 1);
/// let mut out = Field::<f64>::zeros(&grid);
/// let opts = Options { par: Par::Seq, stores: Stores::Temporal, ..Options::default() };
/// apply_with(&[lap], Boundary::Periodic, u.view(), &mut [out.view_mut()], &opts).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Threads.
    pub par: Par,
    /// Ordinary or streaming stores.
    pub stores: Stores,
    /// Instruction set of the inner loops.
    pub simd: Simd,
    /// Taps fused in one inner loop, 1 to [`MAX_GROUP`] (1: one pass over the row per tap).
    pub group: usize,
    /// Cache budget in bytes for the input planes a block of rows reads (stencils reaching
    /// along z): rows are processed in y-blocks, z innermost, so that the planes the block
    /// needs stay in this much cache. 0: no blocking (whole planes).
    pub block_bytes: usize,
    /// With [`Par::Rayon`], calls with fewer tap evaluations (points × taps) than this run on
    /// one thread, where splitting would cost more than it saves. 0: always split.
    pub min_par_work: usize,
    /// Software prefetch distance in rows (AVX2 loops): while computing an output row, the
    /// input row that the output row this many rows later reads first (its tap with the
    /// largest z, then y offset) is prefetched into L2 (`prefetcht1`; into L1 in the loop for
    /// derivatives along x), one cache line per line of output. 0: off.
    ///
    /// Into L2, not L1: on a 2-vCPU Zen 4 VM, the 7-point Laplacian f64 at 512³ went from
    /// ~66-69% (`prefetcht0`) to ~81-83% of a paired copy. Likely why (not measured: no
    /// hardware counters there): L1 prefetches hold
    /// the core's few L1 miss buffers, so fewer lines are in flight from memory.
    pub prefetch_rows: usize,
    /// With [`Options::prefetch_rows`] above 0 and runs along y, the prefetch distance is
    /// raised to at least this many bytes of rows (rounded up to whole rows; 0: rows only).
    ///
    /// Why bytes: the time a prefetch needs to arrive is a time, not a number of rows. At one
    /// row ahead, a 384-point f32 row (1.5 KiB) gave memory too little notice: the 7-point
    /// Laplacian f32 at 384³ ran at 65-68% of a paired copy, and at 95-102% with 3-6 KiB ahead
    /// (2-vCPU Zen 4 VM; f64 gained too, see docs/performance.md, "CPU").
    pub prefetch_bytes: usize,
    /// Prefetch distance in rows of the AVX-512 pair loop along y where whole rows one after the
    /// other are one long row (first derivatives along y), of the AVX-512 loop over whole
    /// periodic rows along x (derivatives along x), and in planes of the pair loop's z march
    /// through a ring (first derivatives along z); 0: off. Elsewhere [`Options::prefetch_rows`]
    /// applies.
    pub pair_prefetch_rows: usize,
    /// Most output rows handled by one inner-loop call (consecutive rows along y, or along z
    /// for stencils that reach along z but not y, whose taps need no boundary mapping along
    /// that axis). At least 1.
    pub run_rows: usize,
}

/// Largest number of taps fused in one inner loop.
pub const MAX_GROUP: usize = 8;

impl Default for Options {
    fn default() -> Self {
        Options {
            par: Par::Rayon,
            stores: Stores::Auto,
            simd: Simd::Auto,
            group: MAX_GROUP,
            block_bytes: 512 << 10,
            min_par_work: PAR_MIN_WORK,
            prefetch_rows: 1,
            prefetch_bytes: 8 << 10,
            pair_prefetch_rows: 4,
            run_rows: 32,
        }
    }
}

/// Same contract as [`crate::reference::apply`]: writes output `o` with stencil `o` at every
/// point of the region [`crate::check::check_apply`] returns and nowhere else. Sums run in `T`.
///
/// ```
/// use fdlab_core::{Axis, Boundary, Field, Grid, Stencil};
/// use fdlab_cpu::{fast, Par};
/// let grid = Grid::unit(&[64, 16, 8]).unwrap();
/// let dx = Stencil::derivative(&grid, Axis::X, 1, 8).unwrap();
/// let u = Field::<f32>::from_fn(&grid, |x| (2.0 * std::f64::consts::PI * x[0]).sin());
/// let mut du = Field::<f32>::zeros(&grid);
/// fast::apply(&[dx], Boundary::Periodic, u.view(), &mut [du.view_mut()], Par::Rayon).unwrap();
/// assert!((du.at(0, 3, 2) - 2.0 * std::f32::consts::PI).abs() < 1e-3);
/// ```
pub fn apply<T: Scalar>(
    stencils: &[Stencil],
    boundary: Boundary,
    input: FieldView<'_, T>,
    outputs: &mut [FieldViewMut<'_, T>],
    par: Par,
) -> Result<()> {
    let opts = Options {
        par,
        ..Options::default()
    };
    apply_with(stencils, boundary, input, outputs, &opts)
}

/// [`apply`] with explicit [`Options`].
pub fn apply_with<T: Scalar>(
    stencils: &[Stencil],
    boundary: Boundary,
    input: FieldView<'_, T>,
    outputs: &mut [FieldViewMut<'_, T>],
    opts: &Options,
) -> Result<()> {
    let region = check_apply(stencils, boundary, &input, outputs)?;
    if region.is_empty() {
        return Ok(());
    }
    let shape = input.grid().shape();
    let mut plan = Plan::new(stencils, boundary, shape, opts);
    let region = flat_planes(&mut plan, stencils, region);
    let u = input.as_slice();

    let work = region.len().saturating_mul(plan.total_taps.max(1));
    let pieces = match opts.par {
        Par::Seq => 1,
        Par::Rayon if work < opts.min_par_work => 1,
        Par::Rayon => rayon::current_num_threads().max(1),
    };
    let tasks = split(region, shape, pieces);

    // Hand each task the contiguous part of every output that holds its points.
    let mut spans: Vec<Vec<&mut [T]>> = tasks.iter().map(|_| Vec::new()).collect();
    for out in outputs.iter_mut() {
        let mut rest = &mut out.as_mut_slice()[tasks[0].start..];
        for (task, span) in tasks.iter().zip(spans.iter_mut()) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(task.end - task.start);
            span.push(mine);
            rest = tail;
        }
    }

    if tasks.len() == 1 {
        run_task(&plan, u, &tasks[0], &mut spans[0]);
    } else {
        tasks
            .par_iter()
            .zip(spans.par_iter_mut())
            .for_each(|(task, span)| run_task(&plan, u, task, span));
    }
    Ok(())
}

mod plan;
mod portable;
mod run;
#[cfg(target_arch = "x86_64")]
mod x86;

use crate::copy::{store_fence, stream_copy_lines as stream_copy};
use plan::*;
use portable::*;
use run::*;
