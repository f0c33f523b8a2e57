//! The queue march fed by TMA tensor copies into a ring of shared slots.

use super::phases::*;
use crate::codegen::bulk::{bulk_issue, BulkRows};
use crate::codegen::emit::Gen;
use crate::codegen::source::{CudaSource, KernelSpec};
use fdlab_core::Boundary;

/// The queue march fed by the tensor memory accelerator: every plane of the tile, halo
/// included, arrives as one `cp.async.bulk.tensor` copy into a ring of `S` shared slots
/// (128-byte aligned, one mbarrier each), issued by one thread; a slot is refilled, `S` planes
/// on, after the barrier that ends the step which last reads it. No registers hold planes in
/// flight, so the depth costs shared memory only.
///
/// - Value queue (`-tN`): each thread takes its own points of the queue's front plane from its
///   slot, and the taps across the centre plane read the centre plane's slot, `reach above`
///   planes later: `S = reach above + 1 + N`.
/// - Partial-sum queue (`-tNa`): each arriving plane adds its march-column taps to the pending
///   outputs and its in-plane taps to its own output at once, so its slot is free as soon as
///   it is read: `S = 1 + N`.
///
/// Why: the register-fed queue march of the 25-point Laplacian
/// holds 234 registers per thread, and with two blocks per SM only one plane of loads is in
/// flight; 1-D bulk copies of row pieces paid one request per row piece, a tensor copy is one
/// request per plane.
///
/// Dirichlet only: the copy fills points outside the grid with zeros, and no computed point
/// reads one. Needs `nx` a multiple of 16 bytes of elements (the tensor map's row pitch) and a
/// tile, halo included, of at most 256 points along each axis.
///
/// Split slots (`-wNa`, periodic too): a tensor copy lands as a dense box, so a periodic
/// image, which is not contiguous with the tile, cannot share the tile's box. Each slot holds
/// the interior columns with the other-axis halo rows above and below (pitch `tx`), and the
/// left and right x halo columns in arrays of their own: up to five tensor copies per plane,
/// each starting at its own wrapped coordinate. A tile that a periodic grid's edge cuts (or a
/// grid smaller than the halo) is filled by 1-D bulk copies of row pieces into the same layout
/// instead. Why (measured on an H100): the periodic gradient's best kernel, the
/// shared-memory march, keeps nine haloed planes in its ring (one 16-warp block per SM); the
/// partial-sum ring holds three, and bulk copies of each row cost 20–30 points against one
/// tensor copy per piece.
///
/// In the partial-sum queue, a stencil with no march-axis taps (d/dx, d/dy of a gradient) is
/// summed and stored when its plane arrives, holding no queue.
pub(super) fn qmarch_tma(
    spec: &KernelSpec<'_>,
    src: CudaSource,
    p: QMarchParams,
    march_z: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let t = Tile::new(&g, &p, march_z);
    let k = Tma::new(spec, p, t);
    g.tensor_maps = k.boxes.len();
    k.prologue(&mut g);
    g.line(4, &format!("for (int k = 0; k < {}; ++k) {{", k.slots));
    k.issue(&mut g, 5, "base + k", "k");
    g.line(4, "}");
    g.line(4, &format!("const int x = x0 + threadIdx.x * {};", p.vec));
    for r in 0..p.rows {
        g.line(
            4,
            &format!("const int o{r} = y0 + threadIdx.y * {} + {r};", p.rows),
        );
        g.line(4, &format!("const bool in{r} = x < nx && o{r} < no;"));
    }
    if p.accumulate {
        k.partial_sum_queue(&mut g);
    } else {
        k.value_queue(&mut g);
    }
    let shared = k.slots * k.slot * t.size + k.slots * 8;
    finish_tile(g, src, &p, (t.tx, t.tyr, t.axes), shared, k.boxes)
}

/// One piece of a split slot: offset in the slot, tensor map, x and other-axis coordinates,
/// box width and height.
type Piece = (u32, usize, String, String, u32, u32);

/// The ring of slots of a TMA-fed queue march: its layout and the copies that fill it.
struct Tma<'a> {
    spec: &'a KernelSpec<'a>,
    p: QMarchParams,
    t: Tile,
    layout: Layout,
    /// Elements per slot, and slots in the ring.
    slot: u32,
    slots: u32,
    /// Bytes of one whole-slot tensor copy.
    bytes: u32,
    periodic: bool,
    /// The tensor maps' boxes, and a split slot's pieces.
    boxes: Vec<[u32; 3]>,
    pieces: Vec<Piece>,
}

impl<'a> Tma<'a> {
    fn new(spec: &'a KernelSpec<'a>, p: QMarchParams, t: Tile) -> Self {
        let Tile {
            size,
            hxl,
            hxr,
            hyl,
            hyh,
            rzh,
            tx,
            tyr,
            w,
            h,
            ..
        } = t;
        // Slots (and a split slot's pieces) start on 128-byte boundaries, as tensor copies
        // require.
        let r128 = |e: u32| (e * size).div_ceil(128) * 128 / size;
        let layout = if p.split {
            let left = r128(tx * (hyl + tyr + hyh));
            let right = left + r128(hxl * tyr);
            Layout::Split {
                tx,
                hyl,
                hxl,
                hxr,
                left,
                right,
                len: right + r128(hxr * tyr),
            }
        } else {
            Layout::Pitched { w, hyl, hxl }
        };
        let slot = match layout {
            Layout::Split { len, .. } => len,
            Layout::Pitched { .. } => r128(w * h),
        };
        let mut k = Tma {
            spec,
            p,
            t,
            layout,
            slot,
            // The value queue reads a plane's slot until it is the centre, rzh planes after
            // its arrival; the partial-sum queue reads it only on arrival.
            slots: if p.accumulate { 1 } else { rzh + 1 } + p.tma,
            bytes: w * h * size,
            periodic: spec.boundary == Boundary::Periodic,
            boxes: Vec::new(),
            pieces: Vec::new(),
        };
        k.split_pieces();
        k
    }

    fn idx(&self, x: &str, o: &str, m: &str) -> String {
        self.t.axes.idx(x, o, m)
    }

    fn wrap(&self, v: &str, n: &str) -> String {
        crate::codegen::emit::wrap_stmt(self.periodic, v, n)
    }

    /// A tensor copy's coordinates (x, other axis, march axis) in the tensor's axis order.
    fn coords(&self, x: &str, o: &str, pl: &str) -> String {
        let mut c = [""; 3];
        c[0] = x;
        c[self.t.axes.oa] = o;
        c[self.t.axes.ma] = pl;
        c.join(", ")
    }

    /// The tensor maps' boxes and, for split slots, the pieces. Periodic coordinates wrap
    /// once: a tile whose pieces would need more (cut by the grid's edge, or a grid smaller
    /// than the halo) takes the bulk path.
    fn split_pieces(&mut self) {
        let Tile {
            hxl,
            hxr,
            hyl,
            hyh,
            tx,
            tyr,
            w,
            h,
            axes,
            ..
        } = self.t;
        let Layout::Split { left, right, .. } = self.layout else {
            let mut b = [1u32; 3];
            b[0] = w;
            b[axes.oa] = h;
            self.boxes.push(b);
            return;
        };
        let periodic = self.periodic;
        let wrapped = |e: String, n: &str| {
            if periodic {
                format!("fd_wrap1({e}, {n})")
            } else {
                e
            }
        };
        let (boxes, pieces) = (&mut self.boxes, &mut self.pieces);
        let mut piece = |off: u32, bw: u32, bh: u32, x: String, o: String| {
            if bw == 0 || bh == 0 {
                return;
            }
            let mut b = [1u32; 3];
            b[0] = bw;
            b[axes.oa] = bh;
            let map = boxes.iter().position(|&k| k == b).unwrap_or_else(|| {
                boxes.push(b);
                boxes.len() - 1
            });
            pieces.push((off, map, x, o, bw, bh));
        };
        let x0 = || "x0".to_string();
        piece(0, tx, hyl, x0(), wrapped(format!("y0 - {hyl}"), "no"));
        piece(tx * hyl, tx, tyr, x0(), "y0".into());
        let below = wrapped(format!("y0 + {tyr}"), "no");
        piece(tx * (hyl + tyr), tx, hyh, x0(), below);
        let l = wrapped(format!("x0 - {hxl}"), "nx");
        piece(left, hxl, tyr, l, "y0".into());
        let r = wrapped(format!("x0 + {tx}"), "nx");
        piece(right, hxr, tyr, r, "y0".into());
    }

    /// The barriers, the tile loops, and the chunk's first and last planes of copies.
    fn prologue(&self, g: &mut Gen) {
        let Tile {
            hxl,
            hxr,
            hyl,
            hyh,
            tx,
            tyr,
            threads,
            axes,
            rzl,
            rzh,
            ..
        } = self.t;
        let slots = self.slots;
        g.shared_march_prologue_aligned(axes, threads, self.p.bx, 128);
        g.line(
            1,
            &format!(
                "unsigned long long* const fd_bars = reinterpret_cast<unsigned long long*>(sm + {});",
                slots * self.slot
            ),
        );
        g.line(
            1,
            &format!(
                "for (int i = tid; i < {slots}; i += {threads}) fd_mbar_init(fd_bars + i, 1);"
            ),
        );
        g.line(1, "fd_mbar_init_fence();");
        g.line(1, "__syncthreads();");
        // Each thread flips a slot's parity bit at each wait: every filled slot is waited for
        // once.
        g.line(1, "unsigned fd_phase = 0u;");
        g.march_tiles(self.p.chunk, tyr, tx);
        // The previous tile's readers must be done with every slot.
        g.line(4, "__syncthreads();");
        if self.p.split && self.periodic {
            // Tensor copies when the interior lies in the grid and every halo piece lies in it
            // or wraps whole (one period): a piece that straddles the edge needs the bulk path.
            g.line(
                4,
                &format!(
                    "const bool fd_whole = x0 + {tx} <= nx && y0 + {tyr} <= no && nx >= {} && no >= {} \
                     && (y0 >= {hyl} || y0 == 0) && (y0 + {} <= no || y0 + {tyr} == no) \
                     && (x0 >= {hxl} || x0 == 0) && (x0 + {} <= nx || x0 + {tx} == nx);",
                    hxl.max(hxr),
                    hyl.max(hyh),
                    tyr + hyh,
                    tx + hxr
                ),
            );
        }
        g.line(
            4,
            &format!("const int base = mb - {rzl}, mend = me + {rzh};"),
        );
    }

    /// The copies of plane `pl` into slot `sl` (both C expressions).
    fn issue(&self, g: &mut Gen, indent: usize, pl: &str, sl: &str) {
        let Tile {
            ty, hxl, hyl, size, ..
        } = self.t;
        let slot = self.slot;
        let Layout::Split { .. } = self.layout else {
            g.line(
                indent,
                &format!(
                    "if (tid == 0 && {pl} < mend) fd_tma_load3d(sm + ({sl}) * {slot}, &tmap0, {}, {}u, fd_bars + ({sl}));",
                    self.coords(&format!("x0 - {hxl}"), &format!("y0 - {hyl}"), pl),
                    self.bytes
                ),
            );
            return;
        };
        let i = indent + 1;
        g.line(indent, &format!("if ({pl} < mend) {{"));
        if self.periodic {
            g.line(i, "if (fd_whole) {");
        } else {
            g.line(i, "{");
        }
        g.line(i + 1, "if (tid == 0) {");
        g.line(i + 2, &format!("int pz = {pl};"));
        g.line(i + 2, &self.wrap("pz", "nm"));
        g.line(i + 2, &format!("{ty}* const d = sm + ({sl}) * {slot};"));
        g.line(
            i + 2,
            &format!("unsigned long long* const bar = fd_bars + ({sl});"),
        );
        for (off, map, x, o, bw, bh) in &self.pieces {
            g.line(
                i + 2,
                &format!(
                    "fd_tma_piece3d(d + {off}, &tmap{map}, {}, {}u, bar);",
                    self.coords(x, o, "pz"),
                    bw * bh * size
                ),
            );
        }
        g.line(i + 2, "fd_mbar_arrive(bar);");
        g.line(i + 1, "}");
        g.line(i, "}");
        if self.periodic {
            self.issue_bulk(g, i, pl, sl);
        }
        g.line(indent, "}");
    }

    /// A split slot's fall-back: rows of the interior with the other-axis halo, then the x
    /// halo columns, each piece of a row wrapped on its own; one arrival after every lane's
    /// pieces.
    fn issue_bulk(&self, g: &mut Gen, i: usize, pl: &str, sl: &str) {
        let Layout::Split { left, right, .. } = self.layout else {
            return;
        };
        let Tile {
            hxl,
            hxr,
            hyl,
            hyh,
            tx,
            tyr,
            threads,
            ..
        } = self.t;
        g.line(i, "else {");
        let lanes = threads.min(32);
        let rows = |w, h, offset, x_back, y_back| BulkRows {
            w,
            h,
            stride: self.slot,
            offset,
            x_back,
            y_back,
            lanes,
        };
        let wrap = |v: &str, n: &str| self.wrap(v, n);
        let idx = |x: &str, o: &str, m: &str| self.idx(x, o, m);
        let bulk = |g: &mut Gen, r: BulkRows| {
            if r.w > 0 {
                bulk_issue(g, i + 1, (pl, sl), r, &wrap, &idx);
            }
        };
        bulk(g, rows(tx, hyl + tyr + hyh, 0, 0, hyl as i32));
        bulk(g, rows(hxl, tyr, left, hxl as i32, 0));
        bulk(g, rows(hxr, tyr, right, -(tx as i32), 0));
        g.line(
            i + 1,
            &format!("if (tid == 0) fd_mbar_arrive(fd_bars + ({sl}));"),
        );
        g.line(i, "}");
    }

    /// The partial-sum queue: each arriving plane adds its taps to the pending outputs.
    fn partial_sum_queue(&self, g: &mut Gen) {
        let (p, spec) = (self.p, self.spec);
        let Tile {
            ty,
            vt,
            window,
            rzh,
            axes,
            ..
        } = self.t;
        let (v, slots, slot) = (p.vec, self.slots, self.slot);
        let idx = |x: &str, o: &str, m: &str| self.idx(x, o, m);
        // acc{o}_{r}_{i}_{l}: output plane a − rzh + i of stencil o, row r, x point l.
        let queued: Vec<usize> = (0..spec.stencils.len())
            .filter(|&o| !flat(&spec.stencils[o], axes.ma))
            .collect();
        for &o in &queued {
            for r in 0..p.rows {
                let names: Vec<String> = (0..window)
                    .flat_map(|i| (0..v).map(move |l| format!("acc{o}_{r}_{i}_{l} = ({ty})0")))
                    .collect();
                g.line(4, &format!("{ty} {};", names.join(", ")));
            }
        }
        if p.unroll > 1 {
            // Written out by the compiler: the partial sums change names instead of moving.
            g.line(4, &format!("#pragma unroll {}", p.unroll));
        }
        g.line(4, "for (int a = base; a < mend; ++a) {");
        g.line(5, "const int k = a - base;");
        g.line(
            5,
            &format!("const int sl = k % {slots}; fd_mbar_wait(fd_bars + sl, (fd_phase >> sl) & 1u); fd_phase ^= 1u << sl;"),
        );
        g.line(5, &format!("const {ty}* const s = sm + sl * {slot};"));
        accumulate(g, spec, p, self.layout, rzh, (axes.ma, axes.oa), &idx);
        // Every thread has read plane a: its slot takes the plane `slots` on.
        g.line(5, "__syncthreads();");
        self.issue(g, 5, &format!("a + {slots}"), "sl");
        // Output a − rzh has all its taps.
        g.line(5, &format!("const int m = a - {rzh};"));
        g.line(5, "if (m >= mb) {");
        for r in 0..p.rows {
            g.line(6, &format!("if (in{r} && o{r} >= olo && o{r} < ohi) {{"));
            for &o in &queued {
                let acc: Vec<String> = (0..v).map(|l| format!("acc{o}_{r}_0_{l}")).collect();
                store_row(g, p.streaming, 7, &idx, (o, r, "m"), &acc, vt);
            }
            g.line(6, "}");
        }
        g.line(5, "}");
        for &o in &queued {
            for r in 0..p.rows {
                for i in 0..window {
                    for l in 0..v {
                        let next = if i + 1 < window {
                            format!("acc{o}_{r}_{}_{l}", i + 1)
                        } else {
                            format!("({ty})0")
                        };
                        g.line(5, &format!("acc{o}_{r}_{i}_{l} = {next};"));
                    }
                }
            }
        }
    }

    /// Waits for the plane in slot `sl` and moves this thread's points into queue entry `i`.
    fn take(&self, g: &mut Gen, indent: usize, sl: &str, i: u32) {
        let Tile {
            ty,
            vt,
            hyl,
            hxl,
            w,
            ..
        } = self.t;
        let (p, v) = (self.p, self.p.vec);
        let own = |r: u32| {
            format!(
                "({hyl} + threadIdx.y * {} + {r}) * {w} + {hxl} + threadIdx.x * {v}",
                p.rows
            )
        };
        let comps = ["x", "y", "z", "w"];
        g.line(indent, "{");
        g.line(
            indent + 1,
            &format!("const int sl = {sl}; fd_mbar_wait(fd_bars + sl, (fd_phase >> sl) & 1u); fd_phase ^= 1u << sl;"),
        );
        g.line(
            indent + 1,
            &format!("const {ty}* const s = sm + sl * {};", self.slot),
        );
        for r in 0..p.rows {
            if v == 1 {
                g.line(indent + 1, &format!("q{r}_{i}_0 = s[{}];", own(r)));
            } else {
                g.line(
                    indent + 1,
                    &format!(
                        "{{ const {vt} t = *reinterpret_cast<const {vt}*>(s + {}); {} }}",
                        own(r),
                        (0..v)
                            .map(|l| format!("q{r}_{i}_{l} = t.{};", comps[l as usize]))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                );
            }
        }
        g.line(indent, "}");
    }

    /// The value queue: each thread's own points of each plane, the centre plane read across.
    fn value_queue(&self, g: &mut Gen) {
        let Tile {
            ty,
            window,
            rzl,
            rzh,
            w,
            hyl,
            hxl,
            axes,
            ..
        } = self.t;
        let (p, slots) = (self.p, self.slots);
        for r in 0..p.rows {
            let names: Vec<String> = (0..window)
                .flat_map(|i| (0..p.vec).map(move |l| format!("q{r}_{i}_{l}")))
                .collect();
            g.line(4, &format!("{ty} {};", names.join(", ")));
        }
        // Warm-up: the planes below the first centre and up to the plane before the first
        // front. Planes below mb are never a centre: their slots are refilled as soon as all
        // have read.
        for i in 0..window - 1 {
            self.take(g, 4, &format!("{}", i % slots), i);
            if i < rzl {
                g.line(4, "__syncthreads();");
                let (pl, sl) = (format!("base + {}", i + slots), format!("{}", i % slots));
                self.issue(g, 4, &pl, &sl);
            }
        }
        g.line(4, "for (int m = mb; m < me; ++m) {");
        g.line(5, "const int k = m - base;");
        self.take(g, 5, &format!("(k + {rzh}) % {slots}"), window - 1);
        g.line(
            5,
            &format!("{ty}* const slot = sm + (k % {slots}) * {};", self.slot),
        );
        let idx = |x: &str, o: &str, m: &str| self.idx(x, o, m);
        sums(g, self.spec, p, [w, hyl, hxl, rzl], axes.ma, axes.oa, &idx);
        // Every thread is done with the centre plane: its slot takes the plane `slots` on.
        g.line(5, "__syncthreads();");
        self.issue(g, 5, &format!("m + {slots}"), &format!("k % {slots}"));
        shift_queue(g, p.rows, window, p.vec);
    }
}
