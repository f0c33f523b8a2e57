//! How a call is cut into work: the stencils resolved into taps ([`PStencil`]), the per-call
//! [`Plan`], the split of the region into one task per thread, and the per-task x-plan (interior
//! and boundary-mapped edge points of a row).

use crate::fast::buffers::Copies;
use crate::fast::options::{Options, Simd, Stores, MAX_GROUP, NT_THRESHOLD_BYTES};
use fdlab_core::{Boundary, Region, Scalar, Stencil};

/// Bytes of a plane's piece per z march in [`Plan::flat`] mode (the length of a 512-point f32
/// row).
pub(crate) const FLAT_CHUNK_BYTES: usize = 2048;

/// Switches `plan` to flat planes, returning the region in those terms, when every stencil
/// reaches along z only, is a pair stencil computed by the AVX-512 pair loop, and the region
/// holds whole planes: the grid is then `[nx·ny, 1, nz]`, each plane one row, and the z march
/// goes over pieces of a plane that end on 64-byte lines of the output.
///
/// Why: with rows of the grid that start inside a cache line (a `Vec` of 512 MiB starts 16
/// bytes into a page), the line that holds the end of one row and the start of the next was
/// written in two parts by ordinary (masked) stores at different times, read from memory for
/// each, between streamed lines (measured on a 2-vCPU Zen 4 VM).
pub(crate) fn flat_planes<T: Scalar>(
    plan: &mut Plan<T>,
    stencils: &[Stencil],
    region: Region,
) -> Region {
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
pub(crate) struct PTap<T> {
    pub(crate) off: [i64; 3],
    pub(crate) w: T,
}

/// One stencil, prepared.
#[derive(Debug)]
pub(crate) struct PStencil<T> {
    pub(crate) taps: Vec<PTap<T>>,
    /// The tap whose row is read first in the loop order (largest z, then y offset).
    pub(crate) lead: usize,
    pub(crate) below_x: usize,
    pub(crate) above_x: usize,
    /// The taps grouped by the row they read (same y and z offsets).
    pub(crate) xrows: Vec<XRow>,
    /// The taps as pairs `(a, b)` with opposite offsets and weights (`w_b = -w_a` exactly),
    /// when every tap is in one pair: a central odd-order derivative. The AVX2 loops then sum
    /// `w_a·(u_a - u_b)`, half the multiplies and weight registers of tap by tap.
    pub(crate) pairs: Option<Vec<(usize, usize)>>,
}

/// The taps of one stencil that read the same row.
#[derive(Debug)]
pub(crate) struct XRow {
    pub(crate) taps: Vec<usize>,
    /// Smallest and largest x offset.
    pub(crate) lo: i64,
    pub(crate) hi: i64,
}

/// Groups the taps of a stencil by (dy, dz).
pub(crate) fn xrows<T>(taps: &[PTap<T>]) -> Vec<XRow> {
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
pub(crate) fn antisymmetric_pairs<T: Scalar>(taps: &[PTap<T>]) -> Option<Vec<(usize, usize)>> {
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
pub(crate) struct Plan<T> {
    pub(crate) boundary: Boundary,
    pub(crate) shape: [usize; 3],
    pub(crate) stencils: Vec<PStencil<T>>,
    pub(crate) total_taps: usize,
    pub(crate) max_taps: usize,
    pub(crate) nt: bool,
    pub(crate) avx2: bool,
    /// The pair loop uses AVX-512F (implies `avx2`).
    pub(crate) avx512: bool,
    pub(crate) group: usize,
    /// Rows per y-block (`usize::MAX`: no blocking).
    pub(crate) j_block: usize,
    /// Prefetch distance in rows (0: off).
    pub(crate) prefetch: usize,
    /// Prefetch distance of the AVX-512 pair loop over long rows along y and of the ring
    /// march along z (0: off).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) pair_prefetch: usize,
    /// Runs go along z (the stencils reach along z but not along y).
    pub(crate) zmarch: bool,
    /// The grid is seen as `[nx·ny, 1, nz]` (`shape` is that): see [`flat_planes`].
    pub(crate) flat: bool,
    /// Most rows per run.
    pub(crate) run: usize,
}

impl<T: Scalar> Plan<T> {
    pub(crate) fn new(
        stencils: &[Stencil],
        boundary: Boundary,
        shape: [usize; 3],
        opts: &Options,
    ) -> Self {
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
        let zmarch = zb + za > 0 && yb + ya == 0;
        // Runs along z prefetch whole planes ahead: a byte distance would mean no more there.
        let prefetch = if opts.prefetch_rows == 0 || zmarch {
            opts.prefetch_rows
        } else {
            opts.prefetch_rows
                .max(opts.prefetch_bytes.div_ceil(row_bytes.max(1)))
        };
        Plan {
            run: opts.run_rows.max(1),
            zmarch,
            flat: false,
            prefetch,
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
pub(crate) fn has_avx2_fma() -> bool {
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
pub(crate) fn has_avx512f() -> bool {
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
pub(crate) struct PfJump {
    pub(crate) row: usize,
    pub(crate) by: isize,
}

impl PfJump {
    /// No jump.
    pub(crate) const NONE: PfJump = PfJump {
        row: usize::MAX,
        by: 0,
    };

    /// The prefetch address of row `r`, given the address `pf` it would have without the jump.
    #[inline]
    pub(crate) fn at<U>(self, pf: *const U, r: usize) -> *const U {
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
pub(crate) struct Task {
    pub(crate) region: Region,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Splits `region` into at most `pieces` contiguous boxes along its outermost axis with more
/// than one point (z, else y, else x), each owning a contiguous range of the output.
pub(crate) fn split(region: Region, shape: [usize; 3], pieces: usize) -> Vec<Task> {
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
pub(crate) fn map_index(boundary: Boundary, q: i64, n: usize) -> usize {
    if q >= 0 && (q as usize) < n {
        return q as usize;
    }
    boundary
        .map(q, n)
        .expect("Boundary::check keeps every tap of a computed point inside the grid")
}

/// The x-range of one stencil within a task: the interior, where every tap stays inside the row,
/// and the edge points with the row index each tap reads.
pub(crate) struct XPlan {
    /// The task's x-range.
    pub(crate) i0: usize,
    pub(crate) i1: usize,
    /// The interior.
    pub(crate) lo: usize,
    pub(crate) hi: usize,
    /// Edge points `i`.
    pub(crate) edges: Vec<usize>,
    /// `taps × edges.len()` row indices, tap-major.
    pub(crate) edge_idx: Vec<usize>,
    /// Vector edges (AVX2 path): per side (left, right) the first output point of a window of
    /// `lanes` points, and per group of taps reading one row ([`PStencil::xrows`]) the window
    /// those taps read, as runs of consecutive row points (see [`Copies`]); empty when the edges
    /// do not fit one window.
    pub(crate) windows: Vec<(usize, Vec<Copies>)>,
    /// Points per vector of `T` (AVX2).
    pub(crate) lanes: usize,
}

pub(crate) fn x_plan<T>(
    s: &PStencil<T>,
    boundary: Boundary,
    i0: usize,
    i1: usize,
    nx: usize,
) -> XPlan {
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
