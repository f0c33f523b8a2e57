//! The fast executor: rayon over contiguous blocks of planes (rows in 2-D, points in 1-D),
//! tap rows resolved through the boundary once per run of rows, and fused inner loops over up
//! to eight taps, hand-vectorised with AVX2 + FMA where the CPU has them (detected at run time).
//!
//! How a call runs:
//!
//! - [`crate::check_apply`] gives the region of computed points; it is split into one
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
//!   need [`Options::prefetch_rows`] rows later (in the order the rows are computed: across a
//!   y-block's planes, not into the next block). Whole rows one after the other (no x-edges)
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

use crate::check_apply;
use fdlab_core::{Boundary, FieldView, FieldViewMut, Region, Result, Scalar, Stencil};
use rayon::prelude::*;

/// How many threads the fast executor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Par {
    /// One thread.
    Seq,
    /// Rayon's current pool (the global one: all cores), one contiguous block per thread.
    #[default]
    Rayon,
}

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
    /// Into L2, not L1 (`prefetcht0` before session 5): on the 2-vCPU Zen 4 VM the 7-point
    /// Laplacian f64 at 512³ went from ~66-69% to ~81-83% of the paired copy (bench/NOTES.md,
    /// session 5). Likely why (not measured: no hardware counters there): L1 prefetches hold
    /// the core's few L1 miss buffers, so fewer lines are in flight from memory.
    pub prefetch_rows: usize,
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
            pair_prefetch_rows: 4,
            run_rows: 32,
        }
    }
}

/// Same contract as [`crate::reference::apply`]: writes output `o` with stencil `o` at every
/// point of the region [`crate::check_apply`] returns and nowhere else. Sums run in `T`.
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

/// Bytes of a plane's piece per z march in [`Plan::flat`] mode (the length of a 512-point f32
/// row, what the z march went over before).
const FLAT_CHUNK_BYTES: usize = 2048;

/// Switches `plan` to flat planes, returning the region in those terms, when every stencil
/// reaches along z only, is a pair stencil computed by the AVX-512 pair loop, and the region
/// holds whole planes: the grid is then `[nx·ny, 1, nz]`, each plane one row, and the z march
/// goes over pieces of a plane that end on 64-byte lines of the output.
///
/// Why: with rows of the grid that start inside a cache line (a `Vec` of 512 MiB starts 16
/// bytes into a page), the line that holds the end of one row and the start of the next was
/// written in two parts by ordinary (masked) stores at different times, read from memory for
/// each, between streamed lines (bench/runs/2026-11-23-epyc-cpu6/NOTES.md).
fn flat_planes<T: Scalar>(plan: &mut Plan<T>, stencils: &[Stencil], region: Region) -> Region {
    let [nx, ny, nz] = plan.shape;
    let only_z = stencils.iter().all(|s| {
        let (b, a) = (s.reach_below(), s.reach_above());
        b[0] + a[0] + b[1] + a[1] == 0 && b[2] + a[2] > 0
    });
    let pairs = plan
        .stencils
        .iter()
        .all(|s| s.pairs.is_some() && s.taps.len() <= plan.group);
    let whole = region.lo[0] == 0 && region.hi[0] == nx && region.lo[1] == 0 && region.hi[1] == ny;
    if !(plan.avx512 && plan.zmarch && only_z && pairs && whole && ny > 1) {
        return region;
    }
    plan.shape = [nx * ny, 1, nz];
    plan.flat = true;
    let mut r = region;
    r.hi[0] = nx * ny;
    r.hi[1] = 1;
    r
}

/// One tap, with the weight in `T`.
#[derive(Debug, Clone, Copy)]
struct PTap<T> {
    off: [i64; 3],
    w: T,
}

/// One stencil, prepared.
#[derive(Debug)]
struct PStencil<T> {
    taps: Vec<PTap<T>>,
    /// The tap whose row is read first in the loop order (largest z, then y offset).
    lead: usize,
    below_x: usize,
    above_x: usize,
    /// The taps grouped by the row they read (same y and z offsets).
    xrows: Vec<XRow>,
    /// The taps as pairs `(a, b)` with opposite offsets and weights (`w_b = -w_a` exactly),
    /// when every tap is in one pair: a central odd-order derivative. The AVX2 loops then sum
    /// `w_a·(u_a - u_b)`, half the multiplies and weight registers of tap by tap.
    pairs: Option<Vec<(usize, usize)>>,
}

/// The taps of one stencil that read the same row.
#[derive(Debug)]
struct XRow {
    taps: Vec<usize>,
    /// Smallest and largest x offset.
    lo: i64,
    hi: i64,
}

/// Groups the taps of a stencil by (dy, dz).
fn xrows<T>(taps: &[PTap<T>]) -> Vec<XRow> {
    let mut out: Vec<(i64, i64, XRow)> = vec![];
    for (n, t) in taps.iter().enumerate() {
        let (dy, dz, dx) = (t.off[1], t.off[2], t.off[0]);
        match out.iter_mut().find(|(y, z, _)| (*y, *z) == (dy, dz)) {
            Some((_, _, r)) => {
                r.taps.push(n);
                r.lo = r.lo.min(dx);
                r.hi = r.hi.max(dx);
            }
            None => out.push((
                dy,
                dz,
                XRow {
                    taps: vec![n],
                    lo: dx,
                    hi: dx,
                },
            )),
        }
    }
    out.into_iter().map(|(_, _, r)| r).collect()
}

/// [`PStencil::pairs`]: each tap with a negative weight is matched with the tap at the opposite
/// offset; `None` unless every tap is matched exactly once.
fn antisymmetric_pairs<T: Scalar>(taps: &[PTap<T>]) -> Option<Vec<(usize, usize)>> {
    if taps.is_empty() {
        return None;
    }
    let mut pairs = Vec::with_capacity(taps.len() / 2);
    for (b, tb) in taps.iter().enumerate() {
        if tb.w >= T::zero() {
            continue;
        }
        let a = taps
            .iter()
            .position(|ta| ta.off == tb.off.map(|o| -o) && ta.w == -tb.w)?;
        pairs.push((a, b));
    }
    let mut seen: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    seen.sort_unstable();
    seen.dedup();
    (seen.len() == taps.len() && 2 * pairs.len() == taps.len()).then_some(pairs)
}

/// Everything a task needs, computed once per call.
#[derive(Debug)]
struct Plan<T> {
    boundary: Boundary,
    shape: [usize; 3],
    stencils: Vec<PStencil<T>>,
    total_taps: usize,
    max_taps: usize,
    nt: bool,
    avx2: bool,
    /// The pair loop uses AVX-512F (implies `avx2`).
    avx512: bool,
    group: usize,
    /// Rows per y-block (`usize::MAX`: no blocking).
    j_block: usize,
    /// Prefetch distance in rows (0: off).
    prefetch: usize,
    /// Prefetch distance of the AVX-512 pair loop over long rows along y and of the ring
    /// march along z (0: off).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pair_prefetch: usize,
    /// Runs go along z (the stencils reach along z but not along y).
    zmarch: bool,
    /// The grid is seen as `[nx·ny, 1, nz]` (`shape` is that): see [`flat_planes`].
    flat: bool,
    /// Most rows per run.
    run: usize,
}

impl<T: Scalar> Plan<T> {
    fn new(stencils: &[Stencil], boundary: Boundary, shape: [usize; 3], opts: &Options) -> Self {
        let ps: Vec<PStencil<T>> = stencils
            .iter()
            .map(|s| {
                let taps: Vec<PTap<T>> = s
                    .taps()
                    .iter()
                    .map(|t| PTap {
                        off: t.offset.map(i64::from),
                        w: T::from_f64(t.weight),
                    })
                    .collect();
                PStencil {
                    lead: (0..taps.len())
                        .max_by_key(|&t| (taps[t].off[2], taps[t].off[1]))
                        .unwrap_or(0),
                    xrows: xrows(&taps),
                    pairs: antisymmetric_pairs(&taps),
                    taps,
                    below_x: s.reach_below()[0],
                    above_x: s.reach_above()[0],
                }
            })
            .collect();
        let total_taps = ps.iter().map(|s| s.taps.len()).sum();
        let max_taps = ps.iter().map(|s| s.taps.len()).max().unwrap_or(0);
        let out_bytes = shape
            .iter()
            .product::<usize>()
            .saturating_mul(std::mem::size_of::<T>())
            .saturating_mul(stencils.len());
        let nt = cfg!(target_arch = "x86_64")
            && match opts.stores {
                Stores::Auto => out_bytes >= NT_THRESHOLD_BYTES,
                Stores::Temporal => false,
                Stores::NonTemporal => true,
            };
        let avx2 = opts.simd != Simd::Baseline && has_avx2_fma();
        let avx512 = avx2 && opts.simd == Simd::Auto && has_avx512f();
        // Planes and extra rows a y-block of rows reads.
        let (mut zb, mut za, mut yb, mut ya) = (0, 0, 0, 0);
        for s in stencils {
            let (b, a) = (s.reach_below(), s.reach_above());
            zb = zb.max(b[2]);
            za = za.max(a[2]);
            yb = yb.max(b[1]);
            ya = ya.max(a[1]);
        }
        let row_bytes = shape[0] * std::mem::size_of::<T>();
        let j_block = if zb + za == 0 || opts.block_bytes == 0 {
            usize::MAX
        } else {
            let rows = opts.block_bytes / row_bytes.max(1) / (zb + za + 1);
            rows.saturating_sub(yb + ya).max(4)
        };
        Plan {
            run: opts.run_rows.max(1),
            zmarch: zb + za > 0 && yb + ya == 0,
            flat: false,
            prefetch: opts.prefetch_rows,
            pair_prefetch: opts.pair_prefetch_rows,
            boundary,
            shape,
            stencils: ps,
            total_taps,
            max_taps,
            nt,
            avx2,
            avx512,
            group: opts.group.clamp(1, MAX_GROUP),
            j_block,
        }
    }
}

/// Whether the CPU has AVX2 and FMA (cached by `std`).
fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU has AVX-512F (cached by `std`).
fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Where the prefetch stream of a run jumps: output rows `r >= row` of the run prefetch `by`
/// elements past `prefetch` rows ahead. The rows a task computes after the last row of a y-block
/// in one plane are the block's first rows in the next plane, not the rows that follow in
/// memory (those belong to the next y-block, read much later): without the jump, the last
/// `prefetch` rows of each block and plane would fetch lines that are evicted unused, and the
/// block's first rows in the next plane would not be prefetched.
#[derive(Debug, Clone, Copy)]
struct PfJump {
    row: usize,
    by: isize,
}

impl PfJump {
    /// No jump.
    const NONE: PfJump = PfJump {
        row: usize::MAX,
        by: 0,
    };

    /// The prefetch address of row `r`, given the address `pf` it would have without the jump.
    #[inline]
    fn at<U>(self, pf: *const U, r: usize) -> *const U {
        if r >= self.row {
            pf.wrapping_offset(self.by)
        } else {
            pf
        }
    }
}

/// A box of points one thread computes, and the part `start..end` of each output's data that
/// holds them.
#[derive(Debug, Clone, Copy)]
struct Task {
    region: Region,
    start: usize,
    end: usize,
}

/// Splits `region` into at most `pieces` contiguous boxes along its outermost axis with more
/// than one point (z, else y, else x), each owning a contiguous range of the output.
fn split(region: Region, shape: [usize; 3], pieces: usize) -> Vec<Task> {
    let [nx, ny, _] = shape;
    let plane = nx * ny;
    let ext = |a: usize| region.hi[a] - region.lo[a];
    let axis = if ext(2) > 1 {
        2
    } else if ext(1) > 1 {
        1
    } else {
        0
    };
    let (lo, n) = (region.lo[axis], ext(axis));
    let p = pieces.clamp(1, n);
    (0..p)
        .map(|q| {
            let (a, b) = (lo + n * q / p, lo + n * (q + 1) / p);
            let mut r = region;
            r.lo[axis] = a;
            r.hi[axis] = b;
            let (start, end) = match axis {
                2 => (a * plane, b * plane),
                1 => {
                    let base = region.lo[2] * plane;
                    (base + a * nx, base + b * nx)
                }
                _ => {
                    let base = (region.lo[2] * ny + region.lo[1]) * nx;
                    (base + a, base + b)
                }
            };
            Task {
                region: r,
                start,
                end,
            }
        })
        .collect()
}

/// `boundary.map(q, n)` with a fast path for indices inside the grid.
#[inline]
fn map_index(boundary: Boundary, q: i64, n: usize) -> usize {
    if q >= 0 && (q as usize) < n {
        return q as usize;
    }
    boundary
        .map(q, n)
        .expect("Boundary::check keeps every tap of a computed point inside the grid")
}

/// The x-range of one stencil within a task: the interior, where every tap stays inside the row,
/// and the edge points with the row index each tap reads.
struct XPlan {
    /// The task's x-range.
    i0: usize,
    i1: usize,
    /// The interior.
    lo: usize,
    hi: usize,
    /// Edge points `i`.
    edges: Vec<usize>,
    /// `taps × edges.len()` row indices, tap-major.
    edge_idx: Vec<usize>,
    /// Vector edges (AVX2 path): per side (left, right) the first output point of a window of
    /// `lanes` points, and per group of taps reading one row ([`PStencil::xrows`]) the window
    /// those taps read, as runs of consecutive row points (see [`Copies`]); empty when the edges
    /// do not fit one window.
    windows: Vec<(usize, Vec<Copies>)>,
    /// Points per vector of `T` (AVX2).
    lanes: usize,
}

fn x_plan<T>(s: &PStencil<T>, boundary: Boundary, i0: usize, i1: usize, nx: usize) -> XPlan {
    let lo = i0.max(s.below_x);
    let hi = i1.min(nx.saturating_sub(s.above_x));
    let (lo, hi) = if lo < hi { (lo, hi) } else { (i1, i1) };
    let edges: Vec<usize> = (i0..lo.min(i1)).chain(hi.max(i0)..i1).collect();
    let mut edge_idx = Vec::with_capacity(edges.len() * s.taps.len());
    for t in &s.taps {
        for &i in &edges {
            edge_idx.push(map_index(boundary, i as i64 + t.off[0], nx));
        }
    }
    let lanes = 32 / std::mem::size_of::<T>().max(1);
    let (left, right) = (lo - i0, i1 - hi);
    let reach = s.below_x.max(s.above_x);
    let mut windows = vec![];
    if !edges.is_empty()
        && left <= lanes
        && right <= lanes
        && (right == 0 || i1 >= lanes)
        && nx > lanes + 2 * reach
    {
        for (start, keep) in [(i0, left), (i1.saturating_sub(lanes), right)] {
            if keep == 0 {
                continue;
            }
            let copies = s
                .xrows
                .iter()
                .map(|x| {
                    let idx: Vec<usize> = (start as i64 + x.lo
                        ..start as i64 + (lanes as i64) + x.hi)
                        .map(|p| map_index(boundary, p, nx))
                        .collect();
                    Copies::new(&idx)
                })
                .collect();
            windows.push((start, copies));
        }
    }
    XPlan {
        i0,
        i1,
        lo,
        hi,
        edges,
        edge_idx,
        windows,
        lanes,
    }
}

/// Per-task working memory.
struct Bufs<T> {
    /// Partial sums of stencils with more taps than one group, rows on their way to streaming
    /// stores (portable loops), edge windows (AVX2 loops).
    scratch: Vec<T>,
    /// Sums of the edge points of one row (portable edges).
    edge_acc: Vec<T>,
    /// Per tap: where its edge window starts in `scratch`, and its row stride there.
    offs: Vec<(usize, usize)>,
}

/// A window of boundary-mapped row points, as runs `(window offset, row offset, length)` of
/// consecutive points (periodic: two runs; Neumann: the mirrored points one by one).
#[derive(Debug)]
struct Copies {
    len: usize,
    runs: Vec<(usize, usize, usize)>,
}

impl Copies {
    fn new(idx: &[usize]) -> Copies {
        let mut runs: Vec<(usize, usize, usize)> = vec![];
        for (q, &i) in idx.iter().enumerate() {
            match runs.last_mut() {
                Some((_, from, len)) if *from + *len == i => *len += 1,
                _ => runs.push((q, i, 1)),
            }
        }
        Copies {
            len: idx.len(),
            runs,
        }
    }

    /// Fills `win` (`self.len` points) from `row`.
    #[inline]
    fn fill<T: Copy>(&self, win: &mut [T], row: &[T]) {
        for &(at, from, len) in &self.runs {
            for (d, s) in win[at..at + len].iter_mut().zip(&row[from..from + len]) {
                *d = *s;
            }
        }
    }
}

/// Computes every point of `task`; `spans[o]` is output `o`'s data from `task.start` to
/// `task.end`.
fn run_task<T: Scalar>(plan: &Plan<T>, u: &[T], task: &Task, spans: &mut [&mut [T]]) {
    let r = task.region;
    let [nx, ny, nz] = plan.shape;
    let (i0, i1) = (r.lo[0], r.hi[0]);
    let xplans: Vec<XPlan> = plan
        .stencils
        .iter()
        .map(|s| x_plan(s, plan.boundary, i0, i1, nx))
        .collect();
    let mut rows: Vec<&[T]> = Vec::with_capacity(plan.max_taps);
    // Edge windows of a run: `run` rows of every tap row's window, and `run` rows of outputs.
    let windows = xplans
        .iter()
        .zip(&plan.stencils)
        .map(|(xp, s)| {
            s.xrows
                .iter()
                .map(|x| xp.lanes + (x.hi - x.lo) as usize)
                .sum::<usize>()
                + xp.lanes
        })
        .max()
        .unwrap_or(0);
    let mut bufs = Bufs {
        scratch: vec![T::zero(); X_BLOCK.max(plan.run * windows)],
        edge_acc: vec![T::zero(); xplans.iter().map(|x| x.edges.len()).max().unwrap_or(0)],
        offs: vec![(0, 0); plan.max_taps],
    };
    // Output rows come in runs of up to `plan.run` rows handled by one call, along y (rows nx
    // apart) or, for stencils that reach along z but not y, along z (rows a plane apart: the
    // rows a z-stencil reads then stay in L1 from one output row to the next). A run only holds
    // rows whose taps all read inside the grid along the run's axis (no mapping), so that tap
    // rows advance by the same stride as the output rows.
    let plane = nx * ny;
    let (axis, stride, n_axis) = if plan.zmarch {
        (2, plane, nz)
    } else {
        (1, nx, ny)
    };
    let (mut a_lo, mut a_hi) = (0i64, n_axis as i64);
    for s in &plan.stencils {
        for t in &s.taps {
            a_lo = a_lo.max(-t.off[axis]);
            a_hi = a_hi.min(n_axis as i64 - t.off[axis]);
        }
    }
    // Address of output 0's first point in the task (flat planes: where pieces end).
    let out0 = spans.first().map_or(0, |o| o.as_ptr() as usize);
    #[allow(clippy::too_many_arguments)]
    let mut one_row = |spans: &mut [&mut [T]],
                       xps: &[XPlan],
                       i0: usize,
                       i1: usize,
                       j: usize,
                       k: usize,
                       n: usize,
                       jump: PfJump| {
        let ji = j as i64;
        let row_start = (k * ny + j) * nx;
        let span = (n - 1) * stride;
        for ((s, xp), out) in plan.stencils.iter().zip(xps).zip(spans.iter_mut()) {
            rows.clear();
            for t in &s.taps {
                let jj = map_index(plan.boundary, ji + t.off[1], ny);
                let kk = map_index(plan.boundary, k as i64 + t.off[2], nz);
                let st = (kk * ny + jj) * nx;
                rows.push(&u[st..st + span + nx]);
            }
            let seg = &mut out[row_start + i0 - task.start..row_start + span + i1 - task.start];
            row(plan, s, xp, &rows, seg, i0, n, stride, jump, &mut bufs);
        }
    };
    let run = |c: usize, end: usize| {
        let ci = c as i64;
        if ci >= a_lo && ci < a_hi {
            (plan.run.min(end - c) as i64).min(a_hi - ci) as usize
        } else {
            1
        }
    };
    if plan.flat {
        // Each plane is one row (`Plan::flat`): march along z over pieces of it that end on a
        // 64-byte line of output 0 (in the task's first plane).
        let size = std::mem::size_of::<T>();
        let chunk = (FLAT_CHUNK_BYTES / size).max(1);
        // Ring of input pieces for `x86::ring_march`.
        #[cfg(target_arch = "x86_64")]
        let mut ring: Vec<T> = vec![];
        let mut c0 = i0;
        while c0 < i1 {
            let mut c1 = (c0 + chunk).min(i1);
            if c1 < i1 {
                let mis = (out0 + (r.lo[2] * nx + c1 - task.start) * size) % 64;
                if mis.is_multiple_of(size) && mis / size < c1 - c0 {
                    c1 -= mis / size;
                }
            }
            #[cfg(target_arch = "x86_64")]
            if plan.stencils.len() == 1
                && x86::ring_march(
                    plan, u, spans[0], task.start, c0, c1, r.lo[2], r.hi[2], &mut ring,
                )
            {
                c0 = c1;
                continue;
            }
            let xps: Vec<XPlan> = plan
                .stencils
                .iter()
                .map(|s| x_plan(s, plan.boundary, c0, c1, nx))
                .collect();
            let mut k = r.lo[2];
            while k < r.hi[2] {
                let n = run(k, r.hi[2]);
                one_row(spans, &xps, c0, c1, 0, k, n, PfJump::NONE);
                k += n;
            }
            c0 = c1;
        }
    } else if plan.zmarch {
        for j in r.lo[1]..r.hi[1] {
            let mut k = r.lo[2];
            while k < r.hi[2] {
                let n = run(k, r.hi[2]);
                one_row(spans, &xplans, i0, i1, j, k, n, PfJump::NONE);
                k += n;
            }
        }
    } else {
        let mut jb = r.lo[1];
        while jb < r.hi[1] {
            let je = jb.saturating_add(plan.j_block).min(r.hi[1]);
            // After row `je - 1` of plane `k` come rows `jb..` of plane `k + 1`.
            let by = plane as isize - ((je - jb) * nx) as isize;
            for k in r.lo[2]..r.hi[2] {
                let mut j = jb;
                while j < je {
                    let n = run(j, je);
                    let jump = PfJump {
                        row: (je - j).saturating_sub(plan.prefetch),
                        by,
                    };
                    one_row(spans, &xplans, i0, i1, j, k, n, jump);
                    j += n;
                }
            }
            jb = je;
        }
    }
    if plan.nt {
        store_fence();
    }
}

/// `n` output rows `rs` elements apart (a run along y or z): row `r` of `seg` holds points
/// `i0..i1` at `r·rs`, and tap `t` reads row `r` of `rows[t]` at `r·rs` (the rows of a run
/// advance together).
#[allow(clippy::too_many_arguments)]
#[inline]
fn row<T: Scalar>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    i0: usize,
    n: usize,
    rs: usize,
    jump: PfJump,
    bufs: &mut Bufs<T>,
) {
    #[cfg(target_arch = "x86_64")]
    if plan.avx512 && x86::xperiodic(plan, s, xp, rows, seg, n, rs) {
        return;
    }
    // The interior first: its loops prefetch the rows the edges then read.
    if xp.lo < xp.hi {
        interior(plan, s, xp, rows, seg, i0, n, rs, jump, &mut bufs.scratch);
    }
    let nx = plan.shape[0];
    let ne = xp.edges.len();
    #[cfg(target_arch = "x86_64")]
    let ne = if ne > 0 && plan.avx2 && x86::edges(plan, s, xp, rows, seg, n, rs, bufs) {
        0
    } else {
        ne
    };
    if ne > 0 {
        for r in 0..n {
            let o = r * rs;
            // Tap-major, so that the edge points' sums interleave instead of forming one long
            // dependent chain.
            let acc = &mut bufs.edge_acc[..ne];
            acc.fill(T::zero());
            for ((t, row), idx) in s.taps.iter().zip(rows).zip(xp.edge_idx.chunks_exact(ne)) {
                let row = &row[o..o + nx];
                for (a, &ix) in acc.iter_mut().zip(idx) {
                    *a = *a + t.w * row[ix];
                }
            }
            for (&i, &a) in xp.edges.iter().zip(acc.iter()) {
                seg[o + i - i0] = a;
            }
        }
    }
}

/// The x-interior of `n` rows, as in [`row`].
#[allow(clippy::too_many_arguments)]
#[inline]
fn interior<T: Scalar>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    i0: usize,
    n: usize,
    rs: usize,
    jump: PfJump,
    scratch: &mut [T],
) {
    let nx = plan.shape[0];
    let nt = s.taps.len();
    // Whole rows one after the other are one long row, except for the AVX2 pair loop
    // (`PStencil::pairs`): row by row it measured 5-15% faster out of cache on the 2-core VM
    // (bench/NOTES.md); why is not established. The AVX-512 pair loop takes long rows: row by
    // row, the cache line holding the end of one row and the start of the next (rows that start
    // inside a line) is written by two masked ordinary stores (session 6).
    let long = !(plan.avx2 && !plan.avx512 && s.pairs.is_some() && nt <= plan.group);
    // (A long row keeps prefetching the rows that follow in memory: no jump.)
    let (range, n, jump) = if rs == nx && xp.lo == 0 && xp.hi == nx && n > 1 && long {
        (0..n * nx, 1, PfJump::NONE)
    } else {
        (xp.lo..xp.hi, n, jump)
    };
    #[cfg(target_arch = "x86_64")]
    if plan.avx2 && x86::interior(plan, s, rows, seg, i0, range.clone(), n, rs, jump, scratch) {
        return;
    }
    for r in 0..n {
        let o = r * rs;
        let mut b = range.start;
        while b < range.end {
            let e = (b + X_BLOCK).min(range.end);
            let (lo, hi) = (o + b - i0, o + e - i0);
            let dst: &mut [T] = if plan.nt {
                &mut scratch[..e - b]
            } else {
                &mut seg[lo..hi]
            };
            let mut first = true;
            let mut t0 = 0;
            while t0 < nt {
                let t1 = (t0 + plan.group).min(nt);
                group(dst, &rows[t0..t1], &s.taps[t0..t1], o + b, !first);
                first = false;
                t0 = t1;
            }
            if plan.nt {
                stream_copy(&mut seg[lo..hi], &scratch[..e - b]);
            }
            b = e;
        }
    }
}

/// `dst[i] (+)= Σ_t w_t · rows[t][start + i + ox_t]` for up to [`MAX_GROUP`] taps: portable
/// loops the compiler vectorises for the build target.
fn group<T: Scalar>(dst: &mut [T], rows: &[&[T]], taps: &[PTap<T>], start: usize, acc: bool) {
    macro_rules! dispatch {
        ($($n:literal)*) => {
            match (taps.len(), acc) {
                $(
                    ($n, false) => portable::<T, $n, false>(dst, rows, taps, start),
                    ($n, true) => portable::<T, $n, true>(dst, rows, taps, start),
                )*
                _ => unreachable!("groups hold 1 to MAX_GROUP taps"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8);
}

#[inline(always)]
fn portable<T: Scalar, const N: usize, const ACC: bool>(
    dst: &mut [T],
    rows: &[&[T]],
    taps: &[PTap<T>],
    start: usize,
) {
    let len = dst.len();
    let src: [&[T]; N] = std::array::from_fn(|t| {
        let s = (start as i64 + taps[t].off[0]) as usize;
        &rows[t][s..s + len]
    });
    let w: [T; N] = std::array::from_fn(|t| taps[t].w);
    body::<T, N, ACC>(dst, &src, &w);
}

/// `dst[i] (+)= Σ_t w[t] · src[t][i]`, every `src[t]` as long as `dst`. Not inlined, so that
/// `dst` keeps its no-alias guarantee and the loop vectorises without run-time checks.
#[inline(never)]
fn body<T: Scalar, const N: usize, const ACC: bool>(dst: &mut [T], src: &[&[T]; N], w: &[T; N]) {
    let len = dst.len();
    // Slicing to `len` lets the compiler drop the bounds checks in the loop.
    let src: [&[T]; N] = std::array::from_fn(|t| &src[t][..len]);
    for i in 0..len {
        let (mut a, first) = if ACC {
            (dst[i], 0)
        } else {
            (w[0] * src[0][i], 1)
        };
        for t in first..N {
            a = a + w[t] * src[t][i];
        }
        dst[i] = a;
    }
}

/// Hand-written AVX2 + FMA loops for `f32` and `f64` (and an AVX-512F pair loop), storing
/// straight from registers (with streaming stores when asked).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Bufs, PStencil, PfJump, Plan, XPlan, MAX_GROUP, X_BLOCK};
    use fdlab_core::{Boundary, Scalar};
    use std::any::TypeId;
    use std::arch::x86_64::*;

    /// The 256-bit vector operations of one element type.
    ///
    /// # Safety
    /// Every method needs a CPU with AVX2 and FMA; pointers must be valid for a whole vector.
    pub(super) trait Lanes: Scalar {
        /// The vector type.
        type V: Copy;
        /// Elements per vector.
        const W: usize;
        unsafe fn splat(x: Self) -> Self::V;
        unsafe fn load(p: *const Self) -> Self::V;
        unsafe fn vmul(a: Self::V, b: Self::V) -> Self::V;
        unsafe fn vadd(a: Self::V, b: Self::V) -> Self::V;
        unsafe fn vsub(a: Self::V, b: Self::V) -> Self::V;
        /// `a·b + c`.
        unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
        unsafe fn store(p: *mut Self, v: Self::V);
        /// Non-temporal store; `p` 32-byte aligned.
        unsafe fn stream(p: *mut Self, v: Self::V);
        /// The vector `W/2` points after the start of `a`, given `b` right after `a`.
        unsafe fn mid(a: Self::V, b: Self::V) -> Self::V;
        /// The vector `k` points (`-W < k < W`, `k != 0, ±W/2`) after the start of `b`, given
        /// `a`, `b`, `c` consecutive and `m = mid(a, b)`, `p = mid(b, c)`.
        unsafe fn shift(
            a: Self::V,
            b: Self::V,
            c: Self::V,
            m: Self::V,
            p: Self::V,
            k: i64,
        ) -> Self::V;
    }

    // SAFETY (both impls): each method is one intrinsic, which needs AVX2/FMA (the methods are
    // compiled for them and the trait's contract makes callers check the CPU) and, for memory
    // access, a pointer valid for one vector (the trait's contract; `stream`: 32-byte aligned).
    impl Lanes for f32 {
        type V = __m256;
        const W: usize = 8;
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn splat(x: f32) -> __m256 {
            _mm256_set1_ps(x)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load(p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vmul(a: __m256, b: __m256) -> __m256 {
            _mm256_mul_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vadd(a: __m256, b: __m256) -> __m256 {
            _mm256_add_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vsub(a: __m256, b: __m256) -> __m256 {
            _mm256_sub_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
            _mm256_fmadd_ps(a, b, c)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store(p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn stream(p: *mut f32, v: __m256) {
            _mm256_stream_ps(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn mid(a: __m256, b: __m256) -> __m256 {
            _mm256_permute2f128_ps(a, b, 0x21)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn shift(a: __m256, b: __m256, c: __m256, m: __m256, p: __m256, k: i64) -> __m256 {
            // Per 128-bit lane: the bytes of (hi, lo) shifted right by the constant.
            let al = |hi: __m256, lo: __m256, bytes: i32| {
                let (hi, lo) = (_mm256_castps_si256(hi), _mm256_castps_si256(lo));
                _mm256_castsi256_ps(match bytes {
                    4 => _mm256_alignr_epi8::<4>(hi, lo),
                    8 => _mm256_alignr_epi8::<8>(hi, lo),
                    _ => _mm256_alignr_epi8::<12>(hi, lo),
                })
            };
            match k {
                1..=3 => al(p, b, 4 * k as i32),
                5..=7 => al(c, p, 4 * (k - 4) as i32),
                -3..=-1 => al(b, m, 16 + 4 * k as i32),
                _ => al(m, a, 16 + 4 * (k + 4) as i32),
            }
        }
    }

    impl Lanes for f64 {
        type V = __m256d;
        const W: usize = 4;
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn splat(x: f64) -> __m256d {
            _mm256_set1_pd(x)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load(p: *const f64) -> __m256d {
            _mm256_loadu_pd(p)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vmul(a: __m256d, b: __m256d) -> __m256d {
            _mm256_mul_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vadd(a: __m256d, b: __m256d) -> __m256d {
            _mm256_add_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn vsub(a: __m256d, b: __m256d) -> __m256d {
            _mm256_sub_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fmadd(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
            _mm256_fmadd_pd(a, b, c)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store(p: *mut f64, v: __m256d) {
            _mm256_storeu_pd(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn stream(p: *mut f64, v: __m256d) {
            _mm256_stream_pd(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn mid(a: __m256d, b: __m256d) -> __m256d {
            _mm256_permute2f128_pd(a, b, 0x21)
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn shift(
            a: __m256d,
            b: __m256d,
            c: __m256d,
            m: __m256d,
            p: __m256d,
            k: i64,
        ) -> __m256d {
            let al = |hi: __m256d, lo: __m256d| {
                let (hi, lo) = (_mm256_castpd_si256(hi), _mm256_castpd_si256(lo));
                _mm256_castsi256_pd(_mm256_alignr_epi8::<8>(hi, lo))
            };
            match k {
                1 => al(p, b),
                3 => al(c, p),
                -1 => al(b, m),
                _ => al(m, a),
            }
        }
    }

    /// The x-interior `range` of `n` output rows (as in `row`) with the AVX2 loops; false
    /// (nothing done) when `T` is neither `f32` nor `f64`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn interior<T: Scalar>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        rows: &[&[T]],
        seg: &mut [T],
        i0: usize,
        range: std::ops::Range<usize>,
        n: usize,
        rs: usize,
        jump: PfJump,
        scratch: &mut [T],
    ) -> bool {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            interior_as::<T, f32>(plan, s, rows, seg, i0, range, n, rs, jump, scratch);
        } else if TypeId::of::<T>() == TypeId::of::<f64>() {
            interior_as::<T, f64>(plan, s, rows, seg, i0, range, n, rs, jump, scratch);
        } else {
            return false;
        }
        true
    }

    /// [`interior`] with `U`, the same type as `T`.
    #[allow(clippy::too_many_arguments)]
    fn interior_as<T: Scalar, U: Lanes512>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        rows: &[&[T]],
        seg: &mut [T],
        i0: usize,
        range: std::ops::Range<usize>,
        n: usize,
        rs: usize,
        jump: PfJump,
        scratch: &mut [T],
    ) {
        debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
        let nx = plan.shape[0];
        let taps = &s.taps;
        let ntaps = taps.len();
        let groups = ntaps.div_ceil(plan.group);
        let span = (n - 1) * rs;
        let mut b = range.start;
        let align_blocks = plan.avx512 && s.pairs.is_some();
        while b < range.end {
            let mut e = (b + X_BLOCK).min(range.end);
            if align_blocks && e < range.end {
                // End the block on a 64-byte line of the output.
                let mis = (seg.as_ptr() as usize + (e - i0) * std::mem::size_of::<T>()) % 64;
                if mis.is_multiple_of(std::mem::size_of::<T>()) {
                    e -= mis / std::mem::size_of::<T>();
                }
            }
            let len = e - b;
            // Every pointer below comes from a slice that holds all `n` rows of the block
            // (`span + len` elements); casting from T to U (the same type) is the identity.
            let out = seg[b - i0..span + e - i0].as_mut_ptr().cast::<U>();
            let src = |t: usize| {
                let st = (b as i64 + taps[t].off[0]) as usize;
                rows[t][st..st + span + len].as_ptr().cast::<U>()
            };
            let weight = |t: usize| U::from_f64(taps[t].w.as_f64());
            // The lead row `prefetch` rows later, from the leftmost point a tap reads (an
            // address to prefetch, never dereferenced: it may lie outside the input).
            let pf_at = |rows_ahead: usize| {
                if rows_ahead > 0 {
                    let ox = taps[s.lead].off[0] + s.below_x as i64;
                    src(s.lead)
                        .wrapping_sub(ox as usize)
                        .wrapping_add(rows_ahead * rs)
                } else {
                    std::ptr::null()
                }
            };
            let pf = pf_at(plan.prefetch);
            let reach = single_row(plan, s).filter(|&r| b >= r && e + r <= nx);
            if let Some(reach) = reach {
                // All taps on one row within ±4 points: one load per vector, the shifted
                // vectors by shuffles.
                let mut w = [U::zero(); 9];
                for t in taps {
                    w[(t.off[0] + 4) as usize] = U::from_f64(t.w.as_f64());
                }
                let k = XKernel {
                    dst: out,
                    x: rows[0].as_ptr().cast::<U>().wrapping_add(b),
                    before: b,
                    after: nx - b,
                    w,
                    len,
                    rows: n,
                    stride: rs,
                    pf,
                    jump,
                };
                // SAFETY: `plan.avx2`; `rows[0]` (all taps read that row; `span + nx` points)
                // holds every row `r < n` at `r·rs` from `b - before = 0` to `b + after = nx`,
                // with `before = b >= reach` and `len + reach = e - b + reach <= after`;
                // `dst` covers the `len` points of each row; input and output are disjoint.
                unsafe { dispatch_x(reach, &k, plan.nt) };
            } else if let (1, Some(pairs)) = (groups, &s.pairs) {
                let mut k = PairKernel {
                    dst: out,
                    plus: [std::ptr::null(); MAX_PAIRS],
                    minus: [std::ptr::null(); MAX_PAIRS],
                    w: [U::zero(); MAX_PAIRS],
                    len,
                    rows: n,
                    stride: rs,
                    pf,
                    jump,
                };
                for (q, &(a, b)) in pairs.iter().enumerate() {
                    k.plus[q] = src(a);
                    k.minus[q] = src(b);
                    k.w[q] = weight(a);
                }
                if plan.avx512 && len >= 2 * U::ZW {
                    // Along y without a jump (whole rows as one long row), the AVX-512 loop
                    // prefetches `pair_prefetch` rows ahead.
                    if !plan.zmarch && jump.row == PfJump::NONE.row {
                        k.pf = pf_at(plan.pair_prefetch);
                    }
                    // SAFETY: as below; `plan.avx512` means the CPU has AVX-512F, and the
                    // length condition of `pair_kernel512` is checked here.
                    unsafe { dispatch_pairs512(pairs.len(), &k, plan.nt) };
                } else {
                    // SAFETY: as for the tap-by-tap kernel below (`pairs` holds each tap once,
                    // so `plus` and `minus` are the same `src(t)` pointers); `pairs.len() <=
                    // ntaps / 2 <= MAX_PAIRS` since the group holds every tap.
                    unsafe { dispatch_pairs(pairs.len(), &k, plan.nt) };
                }
            } else if groups == 1 {
                let mut p = [std::ptr::null::<U>(); MAX_GROUP];
                let mut w = [U::zero(); MAX_GROUP];
                for t in 0..ntaps {
                    p[t] = src(t);
                    w[t] = weight(t);
                }
                let k = Kernel {
                    dst: out,
                    acc: std::ptr::null(),
                    src: p,
                    w,
                    len,
                    rows: n,
                    dstride: rs,
                    sstride: [rs; MAX_GROUP],
                    pf,
                    jump,
                };
                // SAFETY: `plan.avx2` means `has_avx2_fma()`; the pointers come from slices
                // of `span + len` elements (input for `src`, the output rows for `dst`), so
                // the `len` points of every row `r < n` at `r·rs` lie inside them; output and
                // input are disjoint (one is borrowed shared, the other exclusively).
                unsafe { dispatch(ntaps, &k, plan.nt) };
            } else {
                let tmp = scratch[..len].as_mut_ptr().cast::<U>();
                for r in 0..n {
                    let o = r * rs;
                    for g in 0..groups {
                        let (t0, t1) = (g * plan.group, ((g + 1) * plan.group).min(ntaps));
                        let last = g + 1 == groups;
                        let mut p = [std::ptr::null::<U>(); MAX_GROUP];
                        let mut w = [U::zero(); MAX_GROUP];
                        for t in t0..t1 {
                            p[t - t0] = src(t).wrapping_add(o);
                            w[t - t0] = weight(t);
                        }
                        // Partial sums go to `tmp`; the last group adds them and writes `out`.
                        let k = Kernel {
                            dst: if last { out.wrapping_add(o) } else { tmp },
                            acc: if g == 0 { std::ptr::null() } else { tmp },
                            src: p,
                            w,
                            len,
                            rows: 1,
                            dstride: nx,
                            sstride: [nx; MAX_GROUP],
                            pf: if g == 0 && !pf.is_null() {
                                jump.at(pf, r).wrapping_add(o)
                            } else {
                                std::ptr::null()
                            },
                            jump: PfJump::NONE,
                        };
                        // SAFETY: as above, for row `r` (offset `o < span + 1`, so `o + len`
                        // stays inside the slices); `tmp` is `scratch[..len]`, disjoint from
                        // input and output; `acc` equals `dst` only for middle groups, which
                        // are not streamed.
                        unsafe { dispatch(t1 - t0, &k, last && plan.nt) };
                    }
                }
            }
            b = e;
        }
    }

    /// The x-edge points of `n` output rows (as in `row`) with the vector loops: per side,
    /// the taps reading outside the row read a small window of boundary-mapped copies. False
    /// (nothing done) when the edges or the stencil's reach are too wide for one window, the
    /// row is too short, or `T` is neither `f32` nor `f64`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn edges<T: Scalar>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        xp: &XPlan,
        rows: &[&[T]],
        seg: &mut [T],
        n: usize,
        rs: usize,
        bufs: &mut Bufs<T>,
    ) -> bool {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            edges_as::<T, f32>(plan, s, xp, rows, seg, n, rs, bufs)
        } else if TypeId::of::<T>() == TypeId::of::<f64>() {
            edges_as::<T, f64>(plan, s, xp, rows, seg, n, rs, bufs)
        } else {
            false
        }
    }

    /// [`edges`] with `U`, the same type as `T`.
    #[allow(clippy::too_many_arguments)]
    fn edges_as<T: Scalar, U: Lanes>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        xp: &XPlan,
        rows: &[&[T]],
        seg: &mut [T],
        n: usize,
        rs: usize,
        bufs: &mut Bufs<T>,
    ) -> bool {
        let w = U::W;
        if xp.windows.is_empty() || xp.lanes != w {
            return false;
        }
        let nx = plan.shape[0];
        let i0 = xp.i0;
        let taps = &s.taps;
        let groups = taps.len().div_ceil(plan.group);
        // `n` rows of `w` outputs, then the windows: per tap row, `n` rows of its copies.
        let (outs, wins) = bufs.scratch.split_at_mut(n * w);
        let out_w = outs.as_mut_ptr().cast::<U>();
        // Per tap: offset of its first value in `wins`, and its row stride there.
        let src = &mut bufs.offs;
        for (start, idx) in &xp.windows {
            let start = *start;
            let mut at = 0;
            for (x, copies) in s.xrows.iter().zip(idx) {
                let len = copies.len;
                let win = &mut wins[at..at + n * len];
                for r in 0..n {
                    let row = &rows[x.taps[0]][r * rs..r * rs + nx];
                    copies.fill(&mut win[r * len..r * len + len], row);
                }
                for &t in &x.taps {
                    // `from + w <= len`: the window spans the row's x offsets plus `w`.
                    src[t] = (at + (taps[t].off[0] - x.lo) as usize, len);
                }
                at += n * len;
            }
            let base = wins[..at].as_ptr().cast::<U>();
            for g in 0..groups {
                let (t0, t1) = (g * plan.group, ((g + 1) * plan.group).min(taps.len()));
                let mut ptr = [std::ptr::null::<U>(); MAX_GROUP];
                let mut sstride = [0; MAX_GROUP];
                let mut wt = [U::zero(); MAX_GROUP];
                for t in t0..t1 {
                    // In bounds: `src[t].0 < at`.
                    ptr[t - t0] = base.wrapping_add(src[t].0);
                    sstride[t - t0] = src[t].1;
                    wt[t - t0] = U::from_f64(taps[t].w.as_f64());
                }
                let k = Kernel {
                    dst: out_w,
                    acc: if g == 0 { std::ptr::null() } else { out_w },
                    src: ptr,
                    w: wt,
                    len: w,
                    rows: n,
                    dstride: w,
                    sstride,
                    pf: std::ptr::null(),
                    jump: PfJump::NONE,
                };
                // SAFETY: `plan.avx2`; tap `t` reads `n` rows of `w` elements at stride `len`
                // inside its window (`n·len` elements of `wins[..at]`, from `from` with
                // `from + w <= len`); `dst` is `outs` (`n·w` elements), disjoint from `wins`;
                // `acc` is null or equals `dst` (then not streamed).
                unsafe { dispatch(t1 - t0, &k, false) };
            }
            // Keep the edge points of the window: those left of the interior, or right of it.
            for r in 0..n {
                let o = r * rs;
                for (q, &v) in outs[r * w..r * w + w].iter().enumerate() {
                    let i = start + q;
                    if i >= i0 && (i < xp.lo || (i >= xp.hi && i < xp.i1)) {
                        seg[o + i - i0] = v;
                    }
                }
            }
        }
        true
    }

    /// The reach (1 to 4) of a stencil whose taps all read one row within ±4 points (a
    /// derivative along x), when the shuffle loop applies (AVX2, default fused groups).
    fn single_row<T>(plan: &Plan<T>, s: &PStencil<T>) -> Option<usize> {
        let reach = s.below_x.max(s.above_x);
        (plan.group == MAX_GROUP && s.xrows.len() == 1 && (1..=4).contains(&reach)).then_some(reach)
    }

    /// One call of [`xkernel`]: `rows` rows `stride` apart of `len` points, all taps on the row
    /// `x` (pointing at the row's point for output 0), weights `w[o + 4]` for offset `o`.
    struct XKernel<U> {
        dst: *mut U,
        x: *const U,
        /// Points of the row readable before `x` and from `x` on.
        before: usize,
        after: usize,
        w: [U; 9],
        len: usize,
        rows: usize,
        stride: usize,
        /// Prefetch address for row 0, point 0 (null: no prefetch).
        pf: *const U,
        /// Where the prefetch rows jump.
        jump: PfJump,
    }

    /// Calls [`xkernel`] with reach `r`.
    ///
    /// # Safety
    /// As [`xkernel`].
    #[inline]
    unsafe fn dispatch_x<U: Lanes>(r: usize, k: &XKernel<U>, stream: bool) {
        match (r, stream) {
            (1, false) => xkernel::<U, 1, false>(k),
            (2, false) => xkernel::<U, 2, false>(k),
            (3, false) => xkernel::<U, 3, false>(k),
            (4, false) => xkernel::<U, 4, false>(k),
            (1, true) => xkernel::<U, 1, true>(k),
            (2, true) => xkernel::<U, 2, true>(k),
            (3, true) => xkernel::<U, 3, true>(k),
            (4, true) => xkernel::<U, 4, true>(k),
            _ => unreachable!("single_row gives a reach of 1 to 4"),
        }
    }

    /// For each row `r < k.rows` (offset `o = r·k.stride`) and `i < k.len`:
    /// `dst[o+i] = Σ_{|d|<=R} w[d+4]·x[o+i+d]`. Where the row allows (a vector before and two
    /// after each step), two vectors per step come from two aligned-stride loads and shuffles
    /// of the vectors before and after; elsewhere every offset is loaded (unaligned). Streams
    /// and prefetches as [`kernel`].
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; for every row, `x - before .. x + after` is readable, with
    /// `before >= R` and `len + R <= after`; `dst` is writable for `len` elements and overlaps
    /// no input.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn xkernel<U: Lanes, const R: usize, const NT: bool>(k: &XKernel<U>) {
        // SAFETY (every pointer access below): per row, loads at `x + q + d` with `|d| <= R`
        // and `q + lanes <= len` (inside `-before .. after` by the contract), and in the
        // shuffle loop at `x + i - lanes .. x + i + 3·lanes` with `i >= lo` (so
        // `i - lanes >= -before`) and `fits(i)`; stores and streams as in [`kernel`];
        // prefetch addresses are never dereferenced.
        let lanes = U::W;
        let ri = R as i64;
        let wv: [U::V; 9] = [
            U::splat(k.w[0]),
            U::splat(k.w[1]),
            U::splat(k.w[2]),
            U::splat(k.w[3]),
            U::splat(k.w[4]),
            U::splat(k.w[5]),
            U::splat(k.w[6]),
            U::splat(k.w[7]),
            U::splat(k.w[8]),
        ];
        let size = std::mem::size_of::<U>();
        let align = if NT { 64 } else { 32 };
        let len = k.len;
        // A shuffle step at `i` reads `x[i - lanes .. i + 3·lanes]`.
        let lo = lanes.saturating_sub(k.before);
        let fits = |i: usize| i + 3 * lanes <= k.after;
        for r in 0..k.rows {
            let o = r * k.stride;
            let dst = k.dst.add(o);
            let x = k.x.add(o);
            let pf = k.jump.at(k.pf, r).wrapping_add(o);
            // Into L1 here, unlike the other loops: with L2 (`prefetcht1`) d/dx measured 0-6
            // points lower in 4 of 6 alternated windows on the 2-vCPU Zen 4 VM, within that
            // machine's noise (bench/NOTES.md, session 5); no gain was seen, so it stays as it
            // was.
            let prefetch = |i: usize| {
                if !k.pf.is_null() {
                    _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(i).cast::<i8>());
                }
            };
            let point = |i: usize| {
                let mut a = k.w[4 - R] * *x.add(i).sub(R);
                for d in 1 - ri..=ri {
                    a = k.w[(d + 4) as usize].mul_add(*x.offset(i as isize + d as isize), a);
                }
                a
            };
            // The taps `d` of the stencil, `-R < d <= R`, unrolled (`R` is a constant).
            macro_rules! taps {
                ($v:ident, $get:expr) => {{
                    let get = $get;
                    let mut $v = U::vmul(wv[4 - R], get(-ri));
                    taps!(@ $v, get, -3 -2 -1 0 1 2 3 4);
                    $v
                }};
                (@ $v:ident, $get:ident, $($d:literal)*) => {
                    $(
                        if $d > -ri && $d <= ri {
                            $v = U::fmadd(wv[($d + 4) as usize], $get($d), $v);
                        }
                    )*
                };
            }
            let vector = |i: usize| taps!(v, |d: i64| U::load(x.offset(i as isize + d as isize)));
            // `a0, b0, c0` consecutive vectors from `i - lanes`: the output vector at `i`.
            let shuffled = |a0: U::V, b0: U::V, c0: U::V| {
                let (m, p) = (U::mid(a0, b0), U::mid(b0, c0));
                let half = (lanes / 2) as i64;
                let at = |d: i64| {
                    if d == 0 {
                        b0
                    } else if d == half {
                        p
                    } else if d == -half {
                        m
                    } else if d == lanes as i64 {
                        c0
                    } else if d == -(lanes as i64) {
                        a0
                    } else {
                        U::shift(a0, b0, c0, m, p, d)
                    }
                };
                taps!(v, at)
            };
            if len < 2 * lanes {
                let mut i = 0;
                while i + lanes <= len {
                    U::store(dst.add(i), vector(i));
                    i += lanes;
                }
                while i < len {
                    *dst.add(i) = point(i);
                    i += 1;
                }
                continue;
            }
            let mis = dst as usize % align;
            let mut a = if mis == 0 {
                0
            } else {
                ((align - mis) / size).min(len)
            };
            // Whole aligned steps only where the shuffle loop's reads stay in the row.
            while a < lo {
                a += align / size;
            }
            let a = a.min(len);
            if a > 0 {
                prefetch(0);
            }
            let mut i = a;
            if i + 2 * lanes <= len && fits(i) {
                let mut va = U::load(x.add(i).sub(lanes));
                let mut vb = U::load(x.add(i));
                while i + 2 * lanes <= len && fits(i) {
                    prefetch(i);
                    let vc = U::load(x.add(i + lanes));
                    let vd = U::load(x.add(i + 2 * lanes));
                    let (v0, v1) = (shuffled(va, vb, vc), shuffled(vb, vc, vd));
                    if NT {
                        U::stream(dst.add(i), v0);
                        U::stream(dst.add(i + lanes), v1);
                    } else {
                        U::store(dst.add(i), v0);
                        U::store(dst.add(i + lanes), v1);
                    }
                    va = vc;
                    vb = vd;
                    i += 2 * lanes;
                }
            }
            // Aligned steps the shuffles cannot reach, with loads.
            while i + 2 * lanes <= len {
                prefetch(i);
                let (v0, v1) = (vector(i), vector(i + lanes));
                if NT {
                    U::stream(dst.add(i), v0);
                    U::stream(dst.add(i + lanes), v1);
                } else {
                    U::store(dst.add(i), v0);
                    U::store(dst.add(i + lanes), v1);
                }
                i += 2 * lanes;
            }
            prefetch(i);
            prefetch(i + 2 * lanes);
            for (l, h) in [(0, a), (i, len)] {
                if h - l >= lanes {
                    let mut p = l;
                    while p < h {
                        let q = p.min(h - lanes);
                        U::store(dst.add(q), vector(q));
                        p += lanes;
                    }
                } else {
                    for p in l..h {
                        *dst.add(p) = point(p);
                    }
                }
            }
        }
    }

    /// A derivative along x (taps on one row within ±4 points, as [`single_row`]) over `n`
    /// whole rows (`rs == nx`: a run along y) with the periodic boundary, with AVX-512F:
    /// every 64-byte line of the output is one vector, streamed with `plan.nt`, including the
    /// line that holds the end of one row and the start of the next (its lanes whose taps wrap
    /// around the row read `±nx` away through masked loads). False (nothing done) when it does
    /// not apply (no AVX-512, another boundary or stencil, part rows, rows shorter than
    /// `2·ZW + 2·reach` points, `T` neither `f32` nor `f64`).
    ///
    /// Why (bench/runs/2026-11-23-epyc-cpu7/NOTES.md): rows start 16 bytes into a cache line
    /// (a `Vec` of 512 MiB starts 16 bytes into a page), and the AVX2 path wrote the line
    /// holding a row's end and the next row's start in three parts with ordinary stores (the
    /// interior's head, then the edge points of both rows), plus per-row edge code.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn xperiodic<T: Scalar>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        xp: &XPlan,
        rows: &[&[T]],
        seg: &mut [T],
        n: usize,
        rs: usize,
    ) -> bool {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            xperiodic_as::<T, f32>(plan, s, xp, rows, seg, n, rs)
        } else if TypeId::of::<T>() == TypeId::of::<f64>() {
            xperiodic_as::<T, f64>(plan, s, xp, rows, seg, n, rs)
        } else {
            false
        }
    }

    /// [`xperiodic`] with `U`, the same type as `T`.
    fn xperiodic_as<T: Scalar, U: Lanes512>(
        plan: &Plan<T>,
        s: &PStencil<T>,
        xp: &XPlan,
        rows: &[&[T]],
        seg: &mut [T],
        n: usize,
        rs: usize,
    ) -> bool {
        debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
        let nx = plan.shape[0];
        let Some(reach) = single_row(plan, s) else {
            return false;
        };
        let size = std::mem::size_of::<U>();
        let fits = plan.avx512
            && plan.boundary == Boundary::Periodic
            && xp.i0 == 0
            && xp.i1 == nx
            && (n == 1 || rs == nx)
            && nx >= 2 * U::ZW + 2 * reach
            && (seg.as_ptr() as usize).is_multiple_of(size);
        if !fits {
            return false;
        }
        let total = n * nx;
        let mut w = [U::zero(); 9];
        for t in &s.taps {
            w[(t.off[0] + 4) as usize] = U::from_f64(t.w.as_f64());
        }
        // All taps read `rows[0]` (one row group): `span + nx = total` points from the first
        // row's x = 0; `seg` holds the same `total` points of the output. T and U are the same
        // type.
        let x = rows[0][..total].as_ptr().cast::<U>();
        let dst = seg[..total].as_mut_ptr().cast::<U>();
        // Into L2, `pair_prefetch` rows ahead, as the AVX-512 pair loop along y.
        let pf = if plan.pair_prefetch > 0 {
            x.wrapping_add(plan.pair_prefetch * nx)
        } else {
            std::ptr::null()
        };
        let k = XLong {
            dst,
            x,
            total,
            nx,
            w,
            pf,
        };
        // SAFETY: `plan.avx512`; `x` readable and `dst` writable for `total` points (slices
        // above), disjoint (input borrowed shared, output exclusively); `nx >= 2·ZW + 2·R`;
        // `dst` aligned to its element size. (`PAIRS`: every tap paired with the opposite
        // offset and weight, see `PStencil::pairs`.)
        unsafe {
            macro_rules! arms {
                ($(($r:literal, $nt:literal, $p:literal))*) => {
                    match (reach, plan.nt, s.pairs.is_some()) {
                        $(($r, $nt, $p) => xlong512::<U, $r, $nt, $p>(&k),)*
                        _ => unreachable!("single_row gives a reach of 1 to 4"),
                    }
                };
            }
            arms!((1, false, false)(2, false, false)(3, false, false)(
                4, false, false
            )(1, true, false)(2, true, false)(3, true, false)(
                4, true, false
            )(1, false, true)(2, false, true)(3, false, true)(
                4, false, true
            )(1, true, true)(2, true, true)(3, true, true)(
                4, true, true
            ))
        }
        true
    }

    /// One call of [`xlong512`]: `total / nx` periodic rows of `nx` points one after the other.
    struct XLong<U> {
        dst: *mut U,
        x: *const U,
        total: usize,
        nx: usize,
        /// Weight of offset `o` at `o + 4`.
        w: [U; 9],
        /// Prefetch address for point 0 (null: no prefetch).
        pf: *const U,
    }

    /// For every point `f < total` (row `f / nx`, `i = f % nx`):
    /// `dst[f] = Σ_{|d|<=R} w[d+4]·x[row·nx + (i + d) mod nx]`, one 512-bit vector per 64-byte
    /// line of `dst` (the first and last lines of the span, if partial, by masked stores).
    /// Lines whose points read only inside their own row (and at least a vector from the
    /// span's ends): one load per line, the shifted vectors by two-source permutes
    /// (`vpermt2ps`/`vpermt2pd`, index vectors built once: `valignd` takes the shift as an
    /// immediate, and a `match` over it stayed as jump tables in the loop). Other lines: per tap
    /// three masked loads (the lanes reading inside the row, and those wrapping to `+nx` and
    /// `-nx`).
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` readable and `dst` writable at `0..total`, not overlapping;
    /// `total` a multiple of `nx`; `nx >= 2·ZW + 2·R`; `dst` aligned to `size_of::<U>()`.
    #[target_feature(enable = "avx512f")]
    unsafe fn xlong512<U: Lanes512, const R: usize, const NT: bool, const PAIRS: bool>(
        k: &XLong<U>,
    ) {
        // SAFETY (every access): body lines `i` satisfy `i >= L` and `i + 2·L <= total`, so the
        // loads at `i - L`, `i`, `i + L` are inside `x`, and the store at `i` inside `dst`;
        // edge lines load and store only lanes `g` with `0 <= g < total`, each tap's lanes at
        // `g + d` (inside `g`'s row: `0 <= i + d < nx`), `g + d + nx` (when `i + d < 0`) or
        // `g + d - nx` (when `i + d >= nx`), all in `g`'s row, so inside `0..total`; masked
        // loads and stores do not access masked-off lanes; streamed lines start on a 64-byte
        // boundary of `dst`; prefetch addresses are never dereferenced.
        let l = U::ZW as i64;
        let ri = R as i64;
        let size = std::mem::size_of::<U>();
        let (total, nx) = (k.total as i64, k.nx as i64);
        let (x, dst) = (k.x, k.dst);
        let wv: [U::Z; 9] = std::array::from_fn(|q| U::zsplat(k.w[q]));
        // Lane indices of the shifted vectors, offset `d` at `d + 4`: `d > 0` from the vectors
        // at 0 and `L`, `d < 0` from those at `-L` and 0.
        let idx: [__m512i; 9] = std::array::from_fn(|q| {
            let d = q as i64 - 4;
            U::zidx(if d >= 0 { d } else { l + d } as usize)
        });
        // Line starts: the points `f ≡ phase (mod L)` (`dst + f` on a 64-byte boundary).
        let mis = dst as usize % 64;
        let phase = if mis == 0 {
            0
        } else {
            ((64 - mis) / size) as i64
        };
        let up = |p: i64| phase - (phase - p).div_euclid(l) * l;
        let down = |p: i64| phase + (p - phase).div_euclid(l) * l;
        // The mask of lanes `lo..hi`, clamped to the vector.
        let span = |lo: i64, hi: i64| {
            let lo = lo.clamp(0, l);
            let hi = hi.clamp(lo, l);
            U::lanes(lo as usize, hi as usize)
        };
        let none = U::lanes(0, 0);
        let all = U::lanes(0, U::ZW);
        // `Σ_d w[d + 4]·get(d)` for `-R <= d <= R`, written out (each `get` with a literal
        // offset, so that every shift index and weight is a constant). With `PAIRS` (the
        // weights antisymmetric, no centre tap) as `Σ_{d>0} w[d + 4]·(get(d) − get(−d))`: fewer
        // operations, and no large partial sums of one sign that cancel at the end. Otherwise
        // in two sums by the parity of `d`.
        let center = k.w[4] != U::zero();
        macro_rules! taps {
            ($get:ident) => {{
                if PAIRS {
                    let mut even = U::zmul(wv[5], U::zsub($get!(1), $get!(-1)));
                    if R >= 3 {
                        even = U::zfmadd(wv[7], U::zsub($get!(3), $get!(-3)), even);
                    }
                    if R >= 2 {
                        let mut odd = U::zmul(wv[6], U::zsub($get!(2), $get!(-2)));
                        if R >= 4 {
                            odd = U::zfmadd(wv[8], U::zsub($get!(4), $get!(-4)), odd);
                        }
                        even = U::zadd(even, odd);
                    }
                    even
                } else {
                    let mut even = U::zmul(wv[3], $get!(-1));
                    let mut odd = U::zmul(wv[5], $get!(1));
                    if center {
                        odd = U::zfmadd(wv[4], $get!(0), odd);
                    }
                    if R >= 2 {
                        odd = U::zfmadd(wv[2], $get!(-2), odd);
                        even = U::zfmadd(wv[6], $get!(2), even);
                    }
                    if R >= 3 {
                        even = U::zfmadd(wv[1], $get!(-3), even);
                        odd = U::zfmadd(wv[7], $get!(3), odd);
                    }
                    if R >= 4 {
                        odd = U::zfmadd(wv[0], $get!(-4), odd);
                        even = U::zfmadd(wv[8], $get!(4), even);
                    }
                    U::zadd(even, odd)
                }
            }};
        }
        let put = |f: i64, v: U::Z| {
            if NT {
                U::zstream(dst.offset(f as isize), v);
            } else {
                U::zstore(dst.offset(f as isize), v);
            }
        };
        let prefetch = |f: i64| {
            if !k.pf.is_null() {
                _mm_prefetch::<_MM_HINT_T1>(k.pf.wrapping_offset(f as isize).cast::<i8>());
            }
        };
        // A line holding a row's end or start, or a partial line at the span's ends.
        let edge = |f: i64| {
            prefetch(f);
            let valid = span(-f, total - f);
            // The row boundary nearest the line (the only one whose wrapping taps it can
            // hold: `nx >= 2·L + 2·R`).
            let b = (f + l / 2 + nx / 2).div_euclid(nx) * nx;
            let get = |d: i64| {
                // Lanes whose tap `d` wraps: to `+nx` (first points of a row, `d < 0`) or to
                // `-nx` (last points, `d > 0`).
                let (lo, hi) = if d < 0 {
                    (span(b - f, b - d - f) & valid, none)
                } else if d > 0 {
                    (none, span(b - d - f, b - f) & valid)
                } else {
                    (none, none)
                };
                let p = x.wrapping_offset((f + d) as isize);
                let v = U::zload_mask(valid & !(lo | hi), p);
                let v = U::zload_merge(v, lo, p.wrapping_offset(nx as isize));
                U::zload_merge(v, hi, p.wrapping_offset(-nx as isize))
            };
            macro_rules! eget {
                ($d:literal) => {
                    get($d)
                };
            }
            let v = taps!(eget);
            if valid == all {
                put(f, v);
            } else {
                U::zstore_mask(dst.wrapping_offset(f as isize), valid, v);
            }
        };
        let mut f = up(0);
        if f > 0 {
            f -= l;
        }
        let rows = total / nx;
        for r in 0..rows {
            // Lines inside row `r` whose taps stay in it, at least a line from the span's ends.
            let lo = up((r * nx + ri).max(l));
            let hi = down((r * nx + nx - ri).min(total - l) - l);
            if lo > hi {
                continue;
            }
            while f < lo {
                edge(f);
                f += l;
            }
            let mut a = U::zload(x.offset((f - l) as isize));
            let mut b = U::zload(x.offset(f as isize));
            while f <= hi {
                prefetch(f);
                let c = U::zload(x.offset((f + l) as isize));
                macro_rules! sget {
                    (0) => {
                        b
                    };
                    (-1) => {
                        U::zshift(a, idx[3], b)
                    };
                    (-2) => {
                        U::zshift(a, idx[2], b)
                    };
                    (-3) => {
                        U::zshift(a, idx[1], b)
                    };
                    (-4) => {
                        U::zshift(a, idx[0], b)
                    };
                    (1) => {
                        U::zshift(b, idx[5], c)
                    };
                    (2) => {
                        U::zshift(b, idx[6], c)
                    };
                    (3) => {
                        U::zshift(b, idx[7], c)
                    };
                    (4) => {
                        U::zshift(b, idx[8], c)
                    };
                }
                put(f, taps!(sget));
                a = b;
                b = c;
                f += l;
            }
        }
        while f < total {
            edge(f);
            f += l;
        }
    }

    /// Most tap pairs of [`pair_kernel`].
    const MAX_PAIRS: usize = MAX_GROUP / 2;

    /// The z march of [`super::run_task`] in flat mode (`Plan::flat`) for one stencil, over
    /// the piece `c0..c1` of planes `k0..k1`, through a ring of the input planes' pieces: the
    /// pair loop reads the lead plane (largest z offset) from the input and copies it into the
    /// ring, and every other tap from the ring, so that the tap rows no longer lie a multiple
    /// of 4 KiB apart (all in the same L1 sets). False (nothing done) when the stencil or
    /// piece does not fit (`T` not `f32`/`f64`, no AVX-512, taps off the z axis, a piece
    /// shorter than two vectors, not one stencil).
    ///
    /// Why (bench/runs/2026-11-23-epyc-cpu6/NOTES.md): on `[512, 513, 512]` (planes 2 KiB
    /// further apart mod 4 KiB) the z march ran ~20% faster per point than on 512³.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ring_march<T: Scalar>(
        plan: &Plan<T>,
        u: &[T],
        out: &mut [T],
        out_start: usize,
        c0: usize,
        c1: usize,
        k0: usize,
        k1: usize,
        ring: &mut Vec<T>,
    ) -> bool {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            ring_march_as::<T, f32>(plan, u, out, out_start, c0, c1, k0, k1, ring)
        } else if TypeId::of::<T>() == TypeId::of::<f64>() {
            ring_march_as::<T, f64>(plan, u, out, out_start, c0, c1, k0, k1, ring)
        } else {
            false
        }
    }

    /// [`ring_march`] with `U`, the same type as `T`.
    #[allow(clippy::too_many_arguments)]
    fn ring_march_as<T: Scalar, U: Lanes512>(
        plan: &Plan<T>,
        u: &[T],
        out: &mut [T],
        out_start: usize,
        c0: usize,
        c1: usize,
        k0: usize,
        k1: usize,
        ring: &mut Vec<T>,
    ) -> bool {
        debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
        let [plane, _, nz] = plan.shape;
        let len = c1 - c0;
        let [s] = &plan.stencils[..] else {
            return false;
        };
        let Some(pairs) = &s.pairs else {
            return false;
        };
        let taps = &s.taps;
        let zonly = taps.iter().all(|t| t.off[0] == 0 && t.off[1] == 0);
        if !plan.avx512 || !plan.flat || !zonly || len < 2 * U::ZW || pairs.len() > MAX_PAIRS {
            return false;
        }
        let reach = taps
            .iter()
            .map(|t| t.off[2].unsigned_abs())
            .max()
            .unwrap_or(0) as i64;
        let slots = (2 * reach + 1) as usize;
        // Pairs as (z of the `+w` tap, z of the `-w` tap, w), the lead plane (`+reach`) on the
        // `+w` side of the last pair.
        let mut zp: Vec<(i64, i64, U)> = pairs
            .iter()
            .map(|&(a, b)| {
                let w = U::from_f64(taps[a].w.as_f64());
                let (za, zb) = (taps[a].off[2], taps[b].off[2]);
                if zb == reach {
                    (zb, za, U::zero() - w)
                } else {
                    (za, zb, w)
                }
            })
            .collect();
        let Some(lp) = zp.iter().position(|p| p.0 == reach) else {
            return false;
        };
        let last = zp.len() - 1;
        zp.swap(lp, last);
        // Ring rows of `len` points, `rstride` apart (a whole number of lines plus one, so that
        // the rows spread over the L1 sets), the first aligned like the output's piece in
        // plane `k0`.
        let size = std::mem::size_of::<U>();
        let per_line = 64 / size;
        let rstride = len.div_ceil(per_line) * per_line + per_line;
        ring.resize(slots * rstride + per_line, T::zero());
        let out_ptr = out.as_mut_ptr().cast::<U>();
        let want = (out_ptr as usize + (k0 * plane + c0 - out_start) * size) % 64;
        let have = ring.as_ptr() as usize % 64;
        let shift = ((want + 64 - have) % 64) / size;
        let base = shift;
        let slot = |k: i64| base + (k.rem_euclid(slots as i64) as usize) * rstride;
        let src = |k: i64| {
            let kk = super::map_index(plan.boundary, k, nz);
            &u[kk * plane + c0..kk * plane + c1]
        };
        let lead_at = |k: i64| src(k).as_ptr().cast::<U>();
        // Prime the ring with planes `k0 - reach .. k0 + reach - 1`.
        for k in k0 as i64 - reach..k0 as i64 + reach {
            let at = slot(k);
            ring[at..at + len].copy_from_slice(src(k));
        }
        // T and U are the same type.
        let ring_ptr = ring.as_mut_ptr().cast::<U>();
        let mut k = PairKernel {
            dst: std::ptr::null_mut(),
            plus: [std::ptr::null(); MAX_PAIRS],
            minus: [std::ptr::null(); MAX_PAIRS],
            w: [U::zero(); MAX_PAIRS],
            len,
            rows: 1,
            stride: 0,
            pf: std::ptr::null(),
            jump: PfJump::NONE,
        };
        for (q, p) in zp.iter().enumerate() {
            k.w[q] = p.2;
        }
        for kz in k0..k1 {
            let ki = kz as i64;
            let lead = lead_at(ki + reach);
            // Pieces of the output plane `kz` and of the ring rows; every pointer below stays
            // inside `out` or `ring` (`slot(·) + len <= ring.len()`).
            let o = kz * plane + c0 - out_start;
            k.dst = out[o..o + len].as_mut_ptr().cast::<U>();
            for (q, p) in zp.iter().enumerate() {
                k.plus[q] = ring_ptr.wrapping_add(slot(ki + p.0));
                k.minus[q] = ring_ptr.wrapping_add(slot(ki + p.1));
            }
            k.plus[last] = lead;
            k.pf = if plan.pair_prefetch > 0 {
                k.plus[last].wrapping_add(plan.pair_prefetch * plane)
            } else {
                std::ptr::null()
            };
            let copy = ring_ptr.wrapping_add(slot(ki + reach));
            // SAFETY: `plan.avx512`; `len >= 2·ZW`; `dst` is `len` points of `out`; `plus` /
            // `minus` are `len` points of the input (the lead) or of ring rows other than
            // `copy`'s (the ring has `2·reach + 1` rows and the taps span `-reach..reach`, the
            // lead `+reach` goes to `copy`); `copy` is `len` points of the ring; output, input
            // and ring do not overlap.
            unsafe { dispatch_ring512(zp.len(), &k, copy, plan.nt) };
        }
        true
    }

    /// Calls [`ring_kernel512`] with `n` pairs.
    ///
    /// # Safety
    /// As [`ring_kernel512`].
    #[inline]
    unsafe fn dispatch_ring512<U: Lanes512>(
        n: usize,
        k: &PairKernel<U>,
        copy: *mut U,
        stream: bool,
    ) {
        match (n, stream) {
            (1, false) => ring_kernel512::<U, 1, false>(k, copy),
            (2, false) => ring_kernel512::<U, 2, false>(k, copy),
            (3, false) => ring_kernel512::<U, 3, false>(k, copy),
            (4, false) => ring_kernel512::<U, 4, false>(k, copy),
            (1, true) => ring_kernel512::<U, 1, true>(k, copy),
            (2, true) => ring_kernel512::<U, 2, true>(k, copy),
            (3, true) => ring_kernel512::<U, 3, true>(k, copy),
            (4, true) => ring_kernel512::<U, 4, true>(k, copy),
            _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
        }
    }

    /// One row (`k.rows == 1`) of [`pair_kernel512`] that also copies the `+w` input of the
    /// last pair (`plus[P - 1]`) to `copy`.
    ///
    /// # Safety
    /// As [`pair_kernel512`] for one row; `copy` is writable for `len` elements and overlaps
    /// neither `dst` nor any input.
    #[target_feature(enable = "avx512f")]
    unsafe fn ring_kernel512<U: Lanes512, const P: usize, const NT: bool>(
        k: &PairKernel<U>,
        copy: *mut U,
    ) {
        // SAFETY: the contract of `ring_row512` follows from ours as in `pair_kernel512`.
        let wv: [U::Z; P] = std::array::from_fn(|p| U::zsplat(k.w[p]));
        let lanes = U::ZW;
        let size = std::mem::size_of::<U>();
        let len = k.len;
        let mis = k.dst as usize % 64;
        let a = if mis == 0 { 0 } else { (64 - mis) / size };
        let to = a + (len - a) / lanes * lanes;
        let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p]);
        let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p]);
        ring_row512::<U, P, NT>(k.dst, copy, &plus, &minus, &wv, a, to, len, k.pf);
    }

    /// [`pair_row512`], also storing each vector read from `plus[P - 1]` at the same point of
    /// `copy`.
    ///
    /// # Safety
    /// As [`pair_row512`]; `copy` writable at `0..len`, overlapping neither `dst` nor any
    /// input.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    #[target_feature(enable = "avx512f")]
    unsafe fn ring_row512<U: Lanes512, const P: usize, const NT: bool>(
        dst: *mut U,
        copy: *mut U,
        plus: &[*const U; P],
        minus: &[*const U; P],
        wv: &[U::Z; P],
        a: usize,
        to: usize,
        len: usize,
        pf: *const U,
    ) {
        // SAFETY (every access): as in `pair_row512`; the copy is stored at the points and
        // with the masks of the loads from `plus[P - 1]`, inside `copy`'s `0..len`.
        let (plus, minus, wv) = (*plus, *minus, *wv);
        let vector = |i: usize, m: Option<U::M>| {
            let ld = |p: *const U| match m {
                None => U::zload(p.add(i)),
                Some(m) => U::zload_mask(m, p.wrapping_add(i)),
            };
            let lead = ld(plus[P - 1]);
            match m {
                None => U::zstore(copy.add(i), lead),
                Some(m) => U::zstore_mask(copy.wrapping_add(i), m, lead),
            }
            let d = |p: usize| {
                let x = if p == P - 1 { lead } else { ld(plus[p]) };
                U::zsub(x, ld(minus[p]))
            };
            pair_sum::<U, P>(&wv, d)
        };
        stream_lines::<U, NT>(dst, pf, (a, to, len), vector);
    }

    /// Σₚ w[p]·d(p) over the pairs of an antisymmetric stencil, in two sums (even and odd p):
    /// shorter dependency chains.
    ///
    /// # Safety
    /// As [`Lanes512`]'s methods (a CPU with AVX-512F), and whatever `d` needs.
    #[inline(always)]
    unsafe fn pair_sum<U: Lanes512, const P: usize>(
        wv: &[U::Z; P],
        d: impl Fn(usize) -> U::Z,
    ) -> U::Z {
        let mut even = U::zmul(wv[0], d(0));
        if P == 1 {
            return even;
        }
        let mut odd = U::zmul(wv[1], d(1));
        for (p, &wp) in wv.iter().enumerate().skip(2) {
            if p % 2 == 0 {
                even = U::zfmadd(wp, d(p), even);
            } else {
                odd = U::zfmadd(wp, d(p), odd);
            }
        }
        U::zadd(even, odd)
    }

    /// Writes the outputs `0..len` of a row whose vectors `vector(i, mask)` computes: the
    /// head `0..a` and tail `to..len` as one masked vector each, on the lines of `dst` that
    /// hold them, and the whole lines `a..to` two vectors a step (streamed when `NT`), each
    /// line prefetched into L2 from `pf` (unless null) as it is computed.
    ///
    /// # Safety
    /// A CPU with AVX-512F; `dst` writable at `0..len`, `dst + a` 64-byte aligned when `NT`,
    /// `a <= ZW`, `a <= to <= len`, `to - a` a multiple of `ZW`; and whatever `vector` needs.
    #[inline(always)]
    unsafe fn stream_lines<U: Lanes512, const NT: bool>(
        dst: *mut U,
        pf: *const U,
        (a, to, len): (usize, usize, usize),
        vector: impl Fn(usize, Option<U::M>) -> U::Z,
    ) {
        // SAFETY: the head vector at `a - ZW` and the tail vector at `to` store only the lanes
        // of their masks (`0..a`, `to..len`), whole vectors lie inside `a..to`; prefetch
        // addresses are never dereferenced.
        let lanes = U::ZW;
        let put = |i: usize, v: U::Z| {
            if NT {
                U::zstream(dst.add(i), v);
            } else {
                U::zstore(dst.add(i), v);
            }
        };
        let prefetch = |i: usize| {
            if !pf.is_null() {
                _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
            }
        };
        if a > 0 {
            prefetch(0);
            let q = a.wrapping_sub(lanes);
            let m = U::lanes(lanes - a, lanes);
            U::zstore_mask(dst.wrapping_add(q), m, vector(q, Some(m)));
        }
        let mut i = a;
        while i + 2 * lanes <= to {
            prefetch(i);
            prefetch(i + lanes);
            let (v0, v1) = (vector(i, None), vector(i + lanes, None));
            put(i, v0);
            put(i + lanes, v1);
            i += 2 * lanes;
        }
        if i < to {
            prefetch(i);
            put(i, vector(i, None));
        }
        if to < len {
            prefetch(to);
            let m = U::lanes(0, len - to);
            U::zstore_mask(dst.add(to), m, vector(to, Some(m)));
        }
    }

    /// The 512-bit (AVX-512F) vector operations of one element type, for [`pair_kernel512`].
    ///
    /// # Safety
    /// Every method needs a CPU with AVX-512F; pointers must be valid for a whole vector
    /// (`zstream`: 64-byte aligned; `zload_mask`, `zstore_mask`: for the lanes of the mask,
    /// which are the only lanes the masked `vmovups`/`vmovupd` access).
    pub(super) trait Lanes512: Lanes {
        /// The vector type.
        type Z: Copy;
        /// A mask of lanes.
        type M: Copy
            + PartialEq
            + std::ops::BitAnd<Output = Self::M>
            + std::ops::BitOr<Output = Self::M>
            + std::ops::Not<Output = Self::M>;
        /// Elements per vector (one 64-byte cache line).
        const ZW: usize;
        /// The mask of lanes `lo..hi` (`lo <= hi <= ZW`).
        fn lanes(lo: usize, hi: usize) -> Self::M;
        unsafe fn zsplat(x: Self) -> Self::Z;
        unsafe fn zload(p: *const Self) -> Self::Z;
        /// Loads the lanes of `m` (the others are zero; only the lanes of `m` need be valid).
        unsafe fn zload_mask(m: Self::M, p: *const Self) -> Self::Z;
        /// `v` with the lanes of `m` loaded from `p` (only the lanes of `m` need be valid).
        unsafe fn zload_merge(v: Self::Z, m: Self::M, p: *const Self) -> Self::Z;
        /// The lane indices `k, k + 1, …, k + ZW - 1` (`k < ZW`) for [`Lanes512::zshift`].
        unsafe fn zidx(k: usize) -> __m512i;
        /// Lanes `k..ZW` of `lo` followed by lanes `0..k` of `hi`, given `idx = zidx(k)`: the
        /// vector `k` points after the start of `lo`, given `hi` right after `lo`.
        unsafe fn zshift(lo: Self::Z, idx: __m512i, hi: Self::Z) -> Self::Z;
        unsafe fn zmul(a: Self::Z, b: Self::Z) -> Self::Z;
        unsafe fn zadd(a: Self::Z, b: Self::Z) -> Self::Z;
        unsafe fn zsub(a: Self::Z, b: Self::Z) -> Self::Z;
        /// `a·b + c`.
        unsafe fn zfmadd(a: Self::Z, b: Self::Z, c: Self::Z) -> Self::Z;
        unsafe fn zstore(p: *mut Self, v: Self::Z);
        /// Stores the lanes of `m` only.
        unsafe fn zstore_mask(p: *mut Self, m: Self::M, v: Self::Z);
        /// Non-temporal store; `p` 64-byte aligned.
        unsafe fn zstream(p: *mut Self, v: Self::Z);
    }

    // SAFETY (both impls): each method is one intrinsic, which needs AVX-512F (the methods are
    // compiled for it and the trait's contract makes callers check the CPU) and, for memory
    // access, a pointer valid for the lanes accessed (the trait's contract; `zstream`: 64-byte
    // aligned; a masked store touches only the lanes of its mask).
    impl Lanes512 for f32 {
        type Z = __m512;
        type M = __mmask16;
        const ZW: usize = 16;
        #[inline]
        fn lanes(lo: usize, hi: usize) -> __mmask16 {
            ((1u32 << hi) - (1u32 << lo)) as __mmask16
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zsplat(x: f32) -> __m512 {
            _mm512_set1_ps(x)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload(p: *const f32) -> __m512 {
            _mm512_loadu_ps(p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload_mask(m: __mmask16, p: *const f32) -> __m512 {
            _mm512_maskz_loadu_ps(m, p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload_merge(v: __m512, m: __mmask16, p: *const f32) -> __m512 {
            _mm512_mask_loadu_ps(v, m, p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zidx(k: usize) -> __m512i {
            let iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            _mm512_add_epi32(iota, _mm512_set1_epi32(k as i32))
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zshift(lo: __m512, idx: __m512i, hi: __m512) -> __m512 {
            _mm512_permutex2var_ps(lo, idx, hi)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zmul(a: __m512, b: __m512) -> __m512 {
            _mm512_mul_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zadd(a: __m512, b: __m512) -> __m512 {
            _mm512_add_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zsub(a: __m512, b: __m512) -> __m512 {
            _mm512_sub_ps(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zfmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
            _mm512_fmadd_ps(a, b, c)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstore(p: *mut f32, v: __m512) {
            _mm512_storeu_ps(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstore_mask(p: *mut f32, m: __mmask16, v: __m512) {
            _mm512_mask_storeu_ps(p, m, v)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstream(p: *mut f32, v: __m512) {
            _mm512_stream_ps(p, v)
        }
    }

    impl Lanes512 for f64 {
        type Z = __m512d;
        type M = __mmask8;
        const ZW: usize = 8;
        #[inline]
        fn lanes(lo: usize, hi: usize) -> __mmask8 {
            ((1u32 << hi) - (1u32 << lo)) as __mmask8
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zsplat(x: f64) -> __m512d {
            _mm512_set1_pd(x)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload(p: *const f64) -> __m512d {
            _mm512_loadu_pd(p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload_mask(m: __mmask8, p: *const f64) -> __m512d {
            _mm512_maskz_loadu_pd(m, p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zload_merge(v: __m512d, m: __mmask8, p: *const f64) -> __m512d {
            _mm512_mask_loadu_pd(v, m, p)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zidx(k: usize) -> __m512i {
            let iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
            _mm512_add_epi64(iota, _mm512_set1_epi64(k as i64))
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zshift(lo: __m512d, idx: __m512i, hi: __m512d) -> __m512d {
            _mm512_permutex2var_pd(lo, idx, hi)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zmul(a: __m512d, b: __m512d) -> __m512d {
            _mm512_mul_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zadd(a: __m512d, b: __m512d) -> __m512d {
            _mm512_add_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zsub(a: __m512d, b: __m512d) -> __m512d {
            _mm512_sub_pd(a, b)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zfmadd(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            _mm512_fmadd_pd(a, b, c)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstore(p: *mut f64, v: __m512d) {
            _mm512_storeu_pd(p, v)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstore_mask(p: *mut f64, m: __mmask8, v: __m512d) {
            _mm512_mask_storeu_pd(p, m, v)
        }
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn zstream(p: *mut f64, v: __m512d) {
            _mm512_stream_pd(p, v)
        }
    }

    /// Calls [`pair_kernel512`] with `n` pairs.
    ///
    /// # Safety
    /// As [`pair_kernel512`].
    #[inline]
    unsafe fn dispatch_pairs512<U: Lanes512>(n: usize, k: &PairKernel<U>, stream: bool) {
        match (n, stream) {
            (1, false) => pair_kernel512::<U, 1, false>(k),
            (2, false) => pair_kernel512::<U, 2, false>(k),
            (3, false) => pair_kernel512::<U, 3, false>(k),
            (4, false) => pair_kernel512::<U, 4, false>(k),
            (1, true) => pair_kernel512::<U, 1, true>(k),
            (2, true) => pair_kernel512::<U, 2, true>(k),
            (3, true) => pair_kernel512::<U, 3, true>(k),
            (4, true) => pair_kernel512::<U, 4, true>(k),
            _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
        }
    }

    /// [`pair_kernel`] with 512-bit vectors (one cache line each): per row, the points before
    /// the first 64-byte boundary of the output and after the last whole vector are one vector
    /// each, stored through a lane mask (no point-by-point code); the rest is
    /// [`pair_row512`].
    ///
    /// Why (bench/runs/2026-11-23-epyc-cpu6/NOTES.md): half the instructions per point of the
    /// AVX2 loop, and rows whose start is not on a cache line (a `Vec` of 512 MiB starts 16
    /// bytes into a page) no longer pay for a scalar tail and two overlapping vectors per row.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `k.len >= 2·U::ZW`; for every row, `plus[..P]` and `minus[..P]`
    /// are valid for reading `len` elements and `dst` for writing `len` elements; `dst`
    /// overlaps no input.
    #[target_feature(enable = "avx512f")]
    unsafe fn pair_kernel512<U: Lanes512, const P: usize, const NT: bool>(k: &PairKernel<U>) {
        // SAFETY (every pointer access below): row offsets `o` as in [`pair_kernel`]; the
        // calls of `pair_row512` meet its contract: `len >= 2·ZW > a`, `to` is `a` plus a
        // multiple of `ZW` and at most `len`, `dst + a` is on a 64-byte boundary.
        let wv: [U::Z; P] = std::array::from_fn(|p| U::zsplat(k.w[p]));
        let lanes = U::ZW;
        let size = std::mem::size_of::<U>();
        let len = k.len;
        debug_assert!(len >= 2 * lanes);
        for r in 0..k.rows {
            let o = r * k.stride;
            let dst = k.dst.add(o);
            let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p].add(o));
            let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p].add(o));
            let pf = if k.pf.is_null() {
                std::ptr::null()
            } else {
                k.jump.at(k.pf, r).wrapping_add(o)
            };
            let mis = dst as usize % 64;
            let a = if mis == 0 { 0 } else { (64 - mis) / size };
            let to = a + (len - a) / lanes * lanes;
            pair_row512::<U, P, NT>(dst, &plus, &minus, &wv, a, to, len, pf);
        }
    }

    /// One row of [`pair_kernel512`]: points `0..a` (fewer than a vector, before the first
    /// 64-byte boundary of `dst`) and `to..len` (fewer than a vector) through masked stores
    /// of the vectors at 0 and `len - ZW`; `a..to` in whole vectors (streamed with `NT`),
    /// prefetching `pf + i` for each vector unless `pf` is null.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `len >= ZW`, `a < ZW`, `a <= to <= len`, `to - a` a multiple of
    /// `ZW`, `len - to < ZW`, `dst + a` 64-byte aligned; `plus[p]`, `minus[p]` readable and
    /// `dst` writable at `0..len`; `dst` overlaps no input.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    #[target_feature(enable = "avx512f")]
    unsafe fn pair_row512<U: Lanes512, const P: usize, const NT: bool>(
        dst: *mut U,
        plus: &[*const U; P],
        minus: &[*const U; P],
        wv: &[U::Z; P],
        a: usize,
        to: usize,
        len: usize,
        pf: *const U,
    ) {
        // SAFETY (every access): whole vectors at `i` with `i + ZW <= to <= len` (the body at
        // `a..to`), inside the ranges of the contract; the head vector at `a - ZW` and the tail
        // vector at `to` load and store only the lanes of their masks, points `0..a` and
        // `to..len` (a masked `vmovups`/`vmovupd` does not access its masked-off lanes);
        // streamed vectors at `a` + a multiple of 64 bytes; prefetch addresses are never
        // dereferenced.
        let (plus, minus, wv) = (*plus, *minus, *wv);
        // `m`: `Some(mask)` for the head and tail vectors, which start up to a vector before
        // the row (`i` wraps) and load only the lanes of the mask, all inside the row.
        let vector = |i: usize, m: Option<U::M>| {
            let ld = |p: *const U| match m {
                None => U::zload(p.add(i)),
                Some(m) => U::zload_mask(m, p.wrapping_add(i)),
            };
            let d = |p: usize| U::zsub(ld(plus[p]), ld(minus[p]));
            pair_sum::<U, P>(&wv, d)
        };
        // Head and tail: one masked vector each, on the 64-byte line of `dst` that holds them
        // (a masked store reaching into a line the loop streams made the whole loop ~3x slower
        // on Zen 4 when rows start 16 bytes into a line).
        stream_lines::<U, NT>(dst, pf, (a, to, len), vector);
    }

    /// One call of [`pair_kernel`]: `rows` rows `stride` elements apart (output and every
    /// input), of `len` points each.
    struct PairKernel<U> {
        dst: *mut U,
        /// Per pair, the input read with weight `w` and the one read with `-w`.
        plus: [*const U; MAX_PAIRS],
        minus: [*const U; MAX_PAIRS],
        w: [U; MAX_PAIRS],
        len: usize,
        rows: usize,
        stride: usize,
        /// Prefetch address for row 0, point 0 (null: no prefetch).
        pf: *const U,
        /// Where the prefetch rows jump.
        jump: PfJump,
    }

    /// Calls [`pair_kernel`] with `n` pairs.
    ///
    /// # Safety
    /// As [`pair_kernel`].
    #[inline]
    unsafe fn dispatch_pairs<U: Lanes>(n: usize, k: &PairKernel<U>, stream: bool) {
        match (n, stream) {
            (1, false) => pair_kernel::<U, 1, false>(k),
            (2, false) => pair_kernel::<U, 2, false>(k),
            (3, false) => pair_kernel::<U, 3, false>(k),
            (4, false) => pair_kernel::<U, 4, false>(k),
            (1, true) => pair_kernel::<U, 1, true>(k),
            (2, true) => pair_kernel::<U, 2, true>(k),
            (3, true) => pair_kernel::<U, 3, true>(k),
            (4, true) => pair_kernel::<U, 4, true>(k),
            _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
        }
    }

    /// For each row `r < k.rows` (offset `o = r·k.stride`) and `i < k.len`:
    /// `dst[o+i] = Σ_{p<P} w[p]·(plus[p][o+i] - minus[p][o+i])`, two vectors per step, stored,
    /// streamed and prefetched as in [`kernel`].
    ///
    /// Why not [`kernel`] (measured on the 2-core Zen 4 VM, bench/NOTES.md): with eight taps
    /// its eight weight vectors, two sums and the loads do not fit the 16 ymm registers, so
    /// the loop reloads the weights from the stack (27 loads per 16 points instead of 16)
    /// and each output vector is one chain of eight dependent multiply-adds. Here four
    /// weights stay in registers, the differences go to the FP add pipes, and each vector is
    /// two chains of two multiply(-add)s joined by one add.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; for every row, `plus[..P]` and `minus[..P]` are valid for
    /// reading `len` elements and `dst` for writing `len` elements; `dst` overlaps no input.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn pair_kernel<U: Lanes, const P: usize, const NT: bool>(k: &PairKernel<U>) {
        // SAFETY (every pointer access below): as in [`kernel`] — for each row the indices
        // `i < len` read through `plus[p] + o`, `minus[p] + o` and written through `dst + o`
        // are in bounds by the contract; vectors start at `q` with `q + lanes <= len`;
        // streamed vectors start on a 64-byte boundary of `dst`; prefetch addresses are
        // never dereferenced.
        let wv: [U::V; P] = std::array::from_fn(|p| U::splat(k.w[p]));
        let w = k.w;
        let lanes = U::W;
        let size = std::mem::size_of::<U>();
        let align = if NT { 64 } else { 32 };
        let len = k.len;
        for r in 0..k.rows {
            let o = r * k.stride;
            let dst = k.dst.add(o);
            let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p].add(o));
            let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p].add(o));
            let pf = k.jump.at(k.pf, r).wrapping_add(o);
            let point = |i: usize| {
                let mut a = w[0] * (*plus[0].add(i) - *minus[0].add(i));
                for ((&wp, &pp), &mp) in w.iter().zip(&plus).zip(&minus).skip(1) {
                    a = wp.mul_add(*pp.add(i) - *mp.add(i), a);
                }
                a
            };
            let vector = |i: usize| {
                let d = |p: usize| U::vsub(U::load(plus[p].add(i)), U::load(minus[p].add(i)));
                // Even and odd pairs in two sums: shorter dependency chains.
                let mut even = U::vmul(wv[0], d(0));
                if P == 1 {
                    return even;
                }
                let mut odd = U::vmul(wv[1], d(1));
                for (p, &wp) in wv.iter().enumerate().skip(2) {
                    if p % 2 == 0 {
                        even = U::fmadd(wp, d(p), even);
                    } else {
                        odd = U::fmadd(wp, d(p), odd);
                    }
                }
                U::vadd(even, odd)
            };
            if len < 2 * lanes {
                let mut i = 0;
                while i + lanes <= len {
                    U::store(dst.add(i), vector(i));
                    i += lanes;
                }
                while i < len {
                    *dst.add(i) = point(i);
                    i += 1;
                }
                continue;
            }
            // Ordinary stores before the first aligned point and after the last whole step.
            let mis = dst as usize % align;
            let a = if mis == 0 {
                0
            } else {
                ((align - mis) / size).min(len)
            };
            let prefetch = |i: usize| {
                if !k.pf.is_null() {
                    _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
                }
            };
            if a > 0 {
                prefetch(0);
            }
            let i = a + (len - a) / (2 * lanes) * (2 * lanes);
            let pfi = if k.pf.is_null() { std::ptr::null() } else { pf };
            pair_steps::<U, P, NT>(dst, &plus, &minus, &wv, a, i, pfi);
            prefetch(i);
            prefetch(i + 2 * lanes);
            for (lo, hi) in [(0, a), (i, len)] {
                if hi - lo >= lanes {
                    let mut p = lo;
                    while p < hi {
                        let q = p.min(hi - lanes);
                        U::store(dst.add(q), vector(q));
                        p += lanes;
                    }
                } else {
                    for p in lo..hi {
                        *dst.add(p) = point(p);
                    }
                }
            }
        }
    }

    /// The aligned part `from..to` of one row of [`pair_kernel`] (`to - from` a multiple of two
    /// vectors; with `NT`, `dst + from` on a 64-byte boundary), prefetching `pf + i` at each
    /// step unless `pf` is null.
    ///
    /// A function of its own (not inlined) so that the weights and row pointers stay in
    /// registers: inlined into `pair_kernel`, whose edge code needs many registers too, the
    /// compiler kept them on the stack and reloaded them at every step.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `plus[p]`, `minus[p]` are readable and `dst` writable at
    /// `from..to`; `dst` overlaps no input.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn pair_steps<U: Lanes, const P: usize, const NT: bool>(
        dst: *mut U,
        plus: &[*const U; P],
        minus: &[*const U; P],
        wv: &[U::V; P],
        from: usize,
        to: usize,
        pf: *const U,
    ) {
        // SAFETY (every access): vectors at `i`, `i + lanes` with `i + 2·lanes <= to`, inside
        // the ranges of the contract; streamed vectors at `from` + a multiple of 64 bytes;
        // prefetch addresses are never dereferenced.
        let (plus, minus, wv) = (*plus, *minus, *wv);
        let lanes = U::W;
        let vector = |i: usize| {
            let d = |p: usize| U::vsub(U::load(plus[p].add(i)), U::load(minus[p].add(i)));
            // Even and odd pairs in two sums: shorter dependency chains.
            let mut even = U::vmul(wv[0], d(0));
            if P == 1 {
                return even;
            }
            let mut odd = U::vmul(wv[1], d(1));
            for (p, &wp) in wv.iter().enumerate().skip(2) {
                if p % 2 == 0 {
                    even = U::fmadd(wp, d(p), even);
                } else {
                    odd = U::fmadd(wp, d(p), odd);
                }
            }
            U::vadd(even, odd)
        };
        let step = |i: usize| {
            let (v0, v1) = (vector(i), vector(i + lanes));
            if NT {
                U::stream(dst.add(i), v0);
                U::stream(dst.add(i + lanes), v1);
            } else {
                U::store(dst.add(i), v0);
                U::store(dst.add(i + lanes), v1);
            }
        };
        let mut i = from;
        if pf.is_null() {
            while i < to {
                step(i);
                i += 2 * lanes;
            }
        } else {
            while i < to {
                _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
                step(i);
                i += 2 * lanes;
            }
        }
    }

    /// One call of [`kernel`]: `rows` rows `stride` elements apart, of `len` points each.
    struct Kernel<U> {
        dst: *mut U,
        /// Partial sums to add (null: none).
        acc: *const U,
        src: [*const U; MAX_GROUP],
        w: [U; MAX_GROUP],
        len: usize,
        rows: usize,
        /// Row stride of `dst`, `acc` and `pf`.
        dstride: usize,
        /// Row stride of each `src`.
        sstride: [usize; MAX_GROUP],
        /// Prefetch address for row 0, point 0 (null: no prefetch).
        pf: *const U,
        /// Where the prefetch rows jump.
        jump: PfJump,
    }

    /// Calls [`kernel`] with `n` taps.
    ///
    /// # Safety
    /// As [`kernel`].
    #[inline]
    unsafe fn dispatch<U: Lanes>(n: usize, k: &Kernel<U>, stream: bool) {
        macro_rules! arms {
            ($($n:literal)*) => {
                match (n, k.acc.is_null(), stream) {
                    $(
                        ($n, true, false) => kernel::<U, $n, false, false>(k),
                        ($n, false, false) => kernel::<U, $n, true, false>(k),
                        ($n, true, true) => kernel::<U, $n, false, true>(k),
                        ($n, false, true) => kernel::<U, $n, true, true>(k),
                    )*
                    _ => unreachable!("groups hold 1 to MAX_GROUP taps"),
                }
            };
        }
        arms!(1 2 3 4 5 6 7 8)
    }

    /// For each row `r < k.rows` (offset `o = r·k.dstride`) and `i < k.len`:
    /// `dst[o+i] = (ACC ? acc[o+i] : 0) + Σ_{t<N} w[t]·src[t][r·k.sstride[t] + i]`, two vectors per step; with
    /// `NT`, whole 64-byte lines of `dst` are written with streaming stores. With a non-null
    /// `pf`, the line at `pf + o + i` is prefetched at each step, and a line before and two after
    /// the row (addresses only: they are never dereferenced).
    ///
    /// The ends of a row are covered by unaligned vectors that overlap each other but not the
    /// aligned part (so a streamed line is never also written by an ordinary store), unless
    /// `acc` is `dst` (then by single points).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; for every row, `src[..N]` are valid for reading `len`
    /// elements, `dst` for writing `len` elements, `acc` (when `ACC`) for reading `len`
    /// elements; `dst` overlaps no `src[t]`, and overlaps `acc` only if equal to it, and then
    /// not with `NT`.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel<U: Lanes, const N: usize, const ACC: bool, const NT: bool>(k: &Kernel<U>) {
        // SAFETY (every pointer access below): by the contract above, for each row `r` the
        // indices `i < len` read through `src[t] + r·sstride[t]` and `acc + o`, and written
        // through `dst + o`, are in bounds; vectors are read or written at `q` with
        // `q + lanes <= len`; streamed vectors start on a 64-byte boundary of `dst` (the
        // aligned part begins at `a`); the prefetch addresses are only addresses
        // (`wrapping_add`, never dereferenced; a prefetch cannot fault).
        let mut wv = [U::splat(k.w[0]); N];
        for (v, &x) in wv.iter_mut().zip(&k.w).skip(1) {
            *v = U::splat(x);
        }
        let w = k.w;
        let first = if ACC { 0 } else { 1 };
        let lanes = U::W;
        let size = std::mem::size_of::<U>();
        let align = if NT { 64 } else { 32 };
        for r in 0..k.rows {
            let o = r * k.dstride;
            let dst = k.dst.add(o);
            let acc = if ACC { k.acc.add(o) } else { k.acc };
            let src: [*const U; N] = std::array::from_fn(|t| k.src[t].add(r * k.sstride[t]));
            let pf = k.jump.at(k.pf, r).wrapping_add(o);
            let len = k.len;
            let point = |i: usize| {
                let mut a = if ACC {
                    *acc.add(i)
                } else {
                    w[0] * *src[0].add(i)
                };
                for t in first..N {
                    a = w[t].mul_add(*src[t].add(i), a);
                }
                a
            };
            let vector = |i: usize| {
                let mut v = if ACC {
                    U::load(acc.add(i))
                } else {
                    U::vmul(wv[0], U::load(src[0].add(i)))
                };
                for t in first..N {
                    v = U::fmadd(wv[t], U::load(src[t].add(i)), v);
                }
                v
            };
            let in_place = ACC && std::ptr::eq(acc, dst);
            if in_place || len < 2 * lanes {
                let mut i = 0;
                while i + lanes <= len {
                    U::store(dst.add(i), vector(i));
                    i += lanes;
                }
                while i < len {
                    *dst.add(i) = point(i);
                    i += 1;
                }
                continue;
            }
            // Ordinary stores before the first aligned point and after the last whole step.
            let mis = dst as usize % align;
            let a = if mis == 0 {
                0
            } else {
                ((align - mis) / size).min(len)
            };
            let prefetch = |i: usize| {
                if !k.pf.is_null() {
                    _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
                }
            };
            if a > 0 {
                prefetch(0);
            }
            let i = a + (len - a) / (2 * lanes) * (2 * lanes);
            let pfi = if k.pf.is_null() { std::ptr::null() } else { pf };
            kernel_steps::<U, N, ACC, NT>(dst, acc, &src, &wv, a, i, pfi);
            // The lead row's last points, and its reach past the row's end.
            prefetch(i);
            prefetch(i + 2 * lanes);
            for (lo, hi) in [(0, a), (i, len)] {
                if hi - lo >= lanes {
                    let mut p = lo;
                    while p < hi {
                        let q = p.min(hi - lanes);
                        U::store(dst.add(q), vector(q));
                        p += lanes;
                    }
                } else {
                    for p in lo..hi {
                        *dst.add(p) = point(p);
                    }
                }
            }
        }
    }
    /// The aligned part `from..to` of one row of [`kernel`] (`to - from` a multiple of two
    /// vectors; with `NT`, `dst + from` on a 64-byte boundary), prefetching `pf + i` at each
    /// step unless `pf` is null. Not inlined, as [`pair_steps`].
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `src[t]` (and `acc` when `ACC`) are readable and `dst`
    /// writable at `from..to`; `dst` overlaps no `src[t]` and is not `acc` (in-place rows do
    /// not come here).
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel_steps<U: Lanes, const N: usize, const ACC: bool, const NT: bool>(
        dst: *mut U,
        acc: *const U,
        src: &[*const U; N],
        wv: &[U::V; N],
        from: usize,
        to: usize,
        pf: *const U,
    ) {
        // SAFETY (every access): vectors at `i`, `i + lanes` with `i + 2·lanes <= to`, inside
        // the ranges of the contract; streamed vectors at `from` + a multiple of 64 bytes;
        // prefetch addresses are never dereferenced.
        let (src, wv) = (*src, *wv);
        let lanes = U::W;
        let first = if ACC { 0 } else { 1 };
        let vector = |i: usize| {
            let mut v = if ACC {
                U::load(acc.add(i))
            } else {
                U::vmul(wv[0], U::load(src[0].add(i)))
            };
            for t in first..N {
                v = U::fmadd(wv[t], U::load(src[t].add(i)), v);
            }
            v
        };
        let step = |i: usize| {
            let (v0, v1) = (vector(i), vector(i + lanes));
            if NT {
                U::stream(dst.add(i), v0);
                U::stream(dst.add(i + lanes), v1);
            } else {
                U::store(dst.add(i), v0);
                U::store(dst.add(i + lanes), v1);
            }
        };
        let mut i = from;
        if pf.is_null() {
            while i < to {
                step(i);
                i += 2 * lanes;
            }
        } else {
            while i < to {
                _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
                step(i);
                i += 2 * lanes;
            }
        }
    }
}

/// `dst.copy_from_slice(src)`, with non-temporal stores for the whole 64-byte lines of `dst`.
#[cfg(target_arch = "x86_64")]
fn stream_copy<T: Copy>(dst: &mut [T], src: &[T]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    const LINE: usize = 64;
    assert_eq!(dst.len(), src.len());
    let size = std::mem::size_of::<T>();
    let head_bytes = (LINE - dst.as_ptr() as usize % LINE) % LINE;
    // `%` rather than `is_multiple_of` (Rust 1.87), for the workspace's Rust 1.80.
    #[allow(clippy::manual_is_multiple_of)]
    let odd = size == 0 || LINE % size != 0 || head_bytes % size != 0;
    if odd {
        dst.copy_from_slice(src);
        return;
    }
    let head = (head_bytes / size).min(dst.len());
    let per_line = LINE / size;
    let lines = (dst.len() - head) / per_line;
    let body_end = head + lines * per_line;
    dst[..head].copy_from_slice(&src[..head]);
    let (d, s) = (&mut dst[head..body_end], &src[head..body_end]);
    let (d, s) = (d.as_mut_ptr().cast::<u8>(), s.as_ptr().cast::<u8>());
    for l in 0..lines {
        for q in 0..LINE / 16 {
            let o = l * LINE + q * 16;
            // SAFETY: `o + 16 <= lines·64`, the byte length of `d` and `s` (`lines·per_line`
            // elements of `size` bytes); `d` starts on a 64-byte boundary, so `d + o` is 16-byte
            // aligned as `_mm_stream_si128` requires; `_mm_loadu_si128` takes any alignment;
            // SSE2 is part of the x86-64 baseline. `T: Copy` so a byte copy is a valid copy.
            unsafe {
                _mm_stream_si128(
                    d.add(o).cast::<__m128i>(),
                    _mm_loadu_si128(s.add(o).cast::<__m128i>()),
                );
            }
        }
    }
    dst[body_end..].copy_from_slice(&src[body_end..]);
}

/// `dst.copy_from_slice(src)` (no streaming stores on this target).
#[cfg(not(target_arch = "x86_64"))]
fn stream_copy<T: Copy>(dst: &mut [T], src: &[T]) {
    dst.copy_from_slice(src);
}

/// Orders this thread's streaming stores before anything it does next (the end of the task,
/// which rayon's join publishes to the caller).
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline; `sfence` has no other precondition.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}
