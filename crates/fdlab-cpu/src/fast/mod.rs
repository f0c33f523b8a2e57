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
use fdlab_core::{Boundary, FieldView, FieldViewMut, Result, Scalar, Stencil};
use rayon::prelude::*;

pub use crate::par::Par;
pub use options::{Options, Simd, Stores, MAX_GROUP, NT_THRESHOLD_BYTES, PAR_MIN_WORK};

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

mod buffers;
mod options;
mod plan;
mod portable;
mod run;
#[cfg(target_arch = "x86_64")]
mod x86;

use plan::{flat_planes, split, Plan};
use run::run_task;
