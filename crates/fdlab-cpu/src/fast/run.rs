//! One task: the walk over its output rows in runs (y-blocks, z marches, flat planes), and
//! per run the interior loop and the x-edge points.

#[cfg(target_arch = "x86_64")]
use super::x86;
use crate::copy::{store_fence, stream_copy_lines as stream_copy};
use crate::fast::buffers::Bufs;
use crate::fast::options::X_BLOCK;
use crate::fast::plan::{map_index, x_plan, PStencil, PfJump, Plan, Task, XPlan, FLAT_CHUNK_BYTES};
use crate::fast::portable::group;
use fdlab_core::Scalar;

/// Computes every point of `task`; `spans[o]` is output `o`'s data from `task.start` to
/// `task.end`.
pub(crate) fn run_task<T: Scalar>(plan: &Plan<T>, u: &[T], task: &Task, spans: &mut [&mut [T]]) {
    let mut walk = Walk::new(plan, u, task, spans);
    if plan.flat {
        walk.flat_planes(spans);
    } else if plan.zmarch {
        walk.z_runs(spans);
    } else {
        walk.y_blocks(spans);
    }
    if plan.nt {
        store_fence();
    }
}

/// The state of one task's walk over its output rows.
///
/// Output rows come in runs of up to `plan.run` rows handled by one call, along y (rows nx
/// apart) or, for stencils that reach along z but not y, along z (rows a plane apart: the rows
/// a z-stencil reads then stay in L1 from one output row to the next). A run only holds rows
/// whose taps all read inside the grid along the run's axis (no mapping), so that tap rows
/// advance by the same stride as the output rows.
struct Walk<'a, T> {
    plan: &'a Plan<T>,
    u: &'a [T],
    task: &'a Task,
    /// The x-plan of each stencil over the task's x-range.
    xplans: Vec<XPlan>,
    /// The tap rows of the current run (reused).
    rows: Vec<&'a [T]>,
    bufs: Bufs<T>,
    /// Distance between the rows of a run (a row along y, a plane along z).
    stride: usize,
    /// The rows along the run's axis whose taps need no boundary mapping: `a_lo..a_hi`.
    a_lo: i64,
    a_hi: i64,
    /// Address of output 0's first point in the task (flat planes: where pieces end).
    out0: usize,
}

impl<'a, T: Scalar> Walk<'a, T> {
    /// Phase 1: plans the task's rows and allocates its working memory.
    fn new(plan: &'a Plan<T>, u: &'a [T], task: &'a Task, spans: &[&mut [T]]) -> Self {
        let r = task.region;
        let [nx, ny, nz] = plan.shape;
        let (i0, i1) = (r.lo[0], r.hi[0]);
        let xplans: Vec<XPlan> = plan
            .stencils
            .iter()
            .map(|s| x_plan(s, plan.boundary, i0, i1, nx))
            .collect();
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
        let bufs = Bufs {
            scratch: vec![T::zero(); X_BLOCK.max(plan.run * windows)],
            edge_acc: vec![T::zero(); xplans.iter().map(|x| x.edges.len()).max().unwrap_or(0)],
            offs: vec![(0, 0); plan.max_taps],
        };
        let (axis, stride, n_axis) = if plan.zmarch {
            (2, nx * ny, nz)
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
        Walk {
            plan,
            u,
            task,
            xplans,
            rows: Vec::with_capacity(plan.max_taps),
            bufs,
            stride,
            a_lo,
            a_hi,
            out0: spans.first().map_or(0, |o| o.as_ptr() as usize),
        }
    }

    /// Rows in the run that starts at row `c` of the run's axis (at most `end - c`).
    fn run_len(&self, c: usize, end: usize) -> usize {
        let ci = c as i64;
        if ci >= self.a_lo && ci < self.a_hi {
            (self.plan.run.min(end - c) as i64).min(self.a_hi - ci) as usize
        } else {
            1
        }
    }

    /// One run of `n` rows from row `j` of plane `k`, points `i0..i1`, for every stencil
    /// (`xps`: their x-plans over `i0..i1`).
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        spans: &mut [&mut [T]],
        xps: &[XPlan],
        (i0, i1): (usize, usize),
        j: usize,
        k: usize,
        n: usize,
        jump: PfJump,
    ) {
        let plan = self.plan;
        let [nx, ny, nz] = plan.shape;
        let (stride, start) = (self.stride, self.task.start);
        let row_start = (k * ny + j) * nx;
        let span = (n - 1) * stride;
        for ((s, xp), out) in plan.stencils.iter().zip(xps).zip(spans.iter_mut()) {
            self.rows.clear();
            for t in &s.taps {
                let jj = map_index(plan.boundary, j as i64 + t.off[1], ny);
                let kk = map_index(plan.boundary, k as i64 + t.off[2], nz);
                let st = (kk * ny + jj) * nx;
                self.rows.push(&self.u[st..st + span + nx]);
            }
            let seg = &mut out[row_start + i0 - start..row_start + span + i1 - start];
            row(
                plan,
                s,
                xp,
                &self.rows,
                seg,
                i0,
                n,
                stride,
                jump,
                &mut self.bufs,
            );
        }
    }

    /// Phase 2 (flat planes, `Plan::flat`): each plane is one row; march along z over pieces
    /// of it that end on a 64-byte line of output 0 (in the task's first plane).
    fn flat_planes(&mut self, spans: &mut [&mut [T]]) {
        let (plan, r) = (self.plan, self.task.region);
        let nx = plan.shape[0];
        let size = std::mem::size_of::<T>();
        let chunk = (FLAT_CHUNK_BYTES / size).max(1);
        // Ring of input pieces for `x86::ring_march`.
        #[cfg(target_arch = "x86_64")]
        let mut ring: Vec<T> = vec![];
        let (mut c0, i1) = (r.lo[0], r.hi[0]);
        while c0 < i1 {
            let mut c1 = (c0 + chunk).min(i1);
            if c1 < i1 {
                let mis = (self.out0 + (r.lo[2] * nx + c1 - self.task.start) * size) % 64;
                if mis.is_multiple_of(size) && mis / size < c1 - c0 {
                    c1 -= mis / size;
                }
            }
            #[cfg(target_arch = "x86_64")]
            if plan.stencils.len() == 1
                && x86::ring_march(
                    plan,
                    self.u,
                    spans[0],
                    self.task.start,
                    c0,
                    c1,
                    r.lo[2],
                    r.hi[2],
                    &mut ring,
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
                let n = self.run_len(k, r.hi[2]);
                self.run(spans, &xps, (c0, c1), 0, k, n, PfJump::NONE);
                k += n;
            }
            c0 = c1;
        }
    }

    /// Phase 2 (stencils reaching along z but not y): runs along z, row by row along y.
    fn z_runs(&mut self, spans: &mut [&mut [T]]) {
        let r = self.task.region;
        let xps = std::mem::take(&mut self.xplans);
        for j in r.lo[1]..r.hi[1] {
            let mut k = r.lo[2];
            while k < r.hi[2] {
                let n = self.run_len(k, r.hi[2]);
                self.run(spans, &xps, (r.lo[0], r.hi[0]), j, k, n, PfJump::NONE);
                k += n;
            }
        }
        self.xplans = xps;
    }

    /// Phase 2 (all other stencils): runs along y in y-blocks of `plan.j_block` rows, z
    /// innermost, so that the planes a block reads stay in cache.
    fn y_blocks(&mut self, spans: &mut [&mut [T]]) {
        let (plan, r) = (self.plan, self.task.region);
        let [nx, ny, _] = plan.shape;
        let xps = std::mem::take(&mut self.xplans);
        let mut jb = r.lo[1];
        while jb < r.hi[1] {
            let je = jb.saturating_add(plan.j_block).min(r.hi[1]);
            // After row `je - 1` of plane `k` come rows `jb..` of plane `k + 1`.
            let by = (nx * ny) as isize - ((je - jb) * nx) as isize;
            for k in r.lo[2]..r.hi[2] {
                let mut j = jb;
                while j < je {
                    let n = self.run_len(j, je);
                    let jump = PfJump {
                        row: (je - j).saturating_sub(plan.prefetch),
                        by,
                    };
                    self.run(spans, &xps, (r.lo[0], r.hi[0]), j, k, n, jump);
                    j += n;
                }
            }
            jb = je;
        }
        self.xplans = xps;
    }
}

/// `n` output rows `rs` elements apart (a run along y or z): row `r` of `seg` holds points
/// `i0..i1` at `r·rs`, and tap `t` reads row `r` of `rows[t]` at `r·rs` (the rows of a run
/// advance together).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn row<T: Scalar>(
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
pub(crate) fn interior<T: Scalar>(
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
    // (`PStencil::pairs`): row by row it measured 5-15% faster out of cache on a 2-vCPU VM;
    // why is not established. The AVX-512 pair loop takes long rows: row by row, the cache
    // line holding the end of one row and the start of the next (rows that start inside a
    // line) would be written by two masked ordinary stores.
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
