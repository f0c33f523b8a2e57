//! 2.5-D marching through shared memory with asynchronous copies.
//!
//! A block owns a tile of x and the other axis and marches along the last axis the stencils
//! use (z in 3-D, y for stencils without z reach; the other axis is then z). Each plane of the
//! tile, with its halo, is copied from global to shared memory into a ring of `window + depth`
//! slots: the copies for plane m + reach + depth are issued while plane m is computed, so
//! `depth` planes of loads stay in flight per block. [`SmCopy`] picks the copies: 16-byte
//! `cp.async` per thread (no registers held), coalesced 16-byte loads staged through
//! registers (whole L2 sectors), or TMA bulk copies of row pieces completing on one mbarrier
//! per slot. Every neighbour (x, y and
//! along the march) is then read from shared memory, one barrier per plane.
//!
//! Needs `nx` to be a multiple of 16 bytes of elements (whole 16-byte copies, also across
//! periodic images) and supports periodic and Dirichlet boundaries (Neumann's mirror is not a
//! 16-byte copy).

use super::bulk::{bulk_issue, open_plane, BulkRows};
use super::edge_sectors::EdgeSectors;
use super::emit::{vec_type, Gen, MarchAxes};
use super::source::{CudaSource, KernelSpec};
use crate::strategy::SmCopy;
use fdlab_core::{Boundary, Precision};
use std::collections::BTreeSet;

/// Parameters of a shared-memory marching kernel.
#[derive(Debug, Clone, Copy)]
pub struct SMarchParams {
    /// Threads (and tile points) along x.
    pub bx: u32,
    /// Threads along the other axis.
    pub by: u32,
    /// Rows of the other axis per thread (tile height `by * rows`).
    pub rows: u32,
    /// Planes per block along the marching axis.
    pub chunk: u32,
    /// Planes whose copies are in flight while one is computed.
    pub depth: u32,
    /// x points per thread (1, 2 or 4, at most 16 bytes): read from shared memory and stored
    /// as one vector, which cuts the instructions per point.
    pub vec: u32,
    /// How each plane is copied into the ring.
    pub copy: SmCopy,
    /// The output sectors that rows share with the caller's points read a plane ahead (see
    /// `Strategy::SMarch`).
    pub edge_reads: bool,
}

/// Elements per 16-byte copy.
pub fn elements_per_copy(p: Precision) -> u32 {
    16 / p.size() as u32
}

/// The ring of planes a kernel keeps in shared memory: (row width, rows, slots), in elements.
pub fn ring_shape(
    lo: [usize; 3],
    hi: [usize; 3],
    p: SMarchParams,
    vl: u32,
    march_z: bool,
) -> (u32, u32, u32) {
    let axes = MarchAxes::new(march_z);
    let (ma, oa) = (axes.ma, axes.oa);
    let round = |h: usize| (h as u32).div_ceil(vl) * vl;
    let w = round(lo[0]) + p.bx * p.vec + round(hi[0]);
    let h = lo[oa] as u32 + p.by * p.rows + hi[oa] as u32;
    let window = (lo[ma] + hi[ma] + 1) as u32;
    (w, h, window + p.depth)
}

pub(crate) fn smarch(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    p: SMarchParams,
    march_z: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let k = SMarch::new(&g, spec, p, march_z);
    g.shared_march_prologue(k.axes, k.threads, p.bx);
    if k.bulk {
        k.barriers(&mut g);
    }
    let (ty, vt) = (k.ty, k.vt);
    let idx = |x: &str, o: &str, m: &str| k.axes.idx(x, o, m);
    if k.reads {
        g.line(
            1,
            &format!(
                "{ty}* const fd_edge = reinterpret_cast<{ty}*>(reinterpret_cast<char*>(sm) + {});",
                k.edge.at
            ),
        );
    }
    g.march_tiles(p.chunk, k.ty_rows, k.tx);
    g.line(4, &format!("const int base = mb - {};", k.rzl));
    g.line(4, &format!("const int mend = me + {};", k.rzh));
    // The previous tile's readers must be done before its slots are refilled.
    g.line(4, "__syncthreads();");
    if k.reads {
        // The chunk's first plane's edge sectors (the loop reads each next one).
        k.edge.declare(&mut g, 4, vt);
        k.edge.load(&mut g, 4, "mb", vt, &idx);
        k.edge.store(&mut g, 4, vt);
    }
    if !k.bulk {
        k.copy_table(&mut g);
    }
    if k.bulk {
        let wrap = |v: &str, n: &str| k.wrap(v, n);
        let dims = [k.w, k.h, k.slots, k.window, k.ahead, k.hxl, k.hyl];
        bulk_pipeline(&mut g, &p, dims, &wrap, &idx);
    } else if k.ns > 0 {
        k.staged_pipeline(&mut g);
    } else {
        k.async_pipeline(&mut g);
    }
    if k.reads {
        // The next plane's edge sectors, read with this step's copies and parked at its end.
        k.edge.load(&mut g, 5, "m + 1", vt, &idx);
    }
    k.compute(&mut g);
    // Closes the compute step's loop over rows.
    g.line(5, "}");
    if k.ns > 0 {
        k.stage_shift(&mut g);
    }
    if k.reads {
        k.edge.store(&mut g, 5, vt);
    }
    g.line(4, "}");
    if k.ns == 0 && !k.bulk {
        // No copy may land in a slot once the block moves on.
        g.line(4, "fd_cp_async_wait<0>();");
    }
    g.close_from(3);
    src.block = [p.bx, p.by, 1];
    src.grid_map = [(0, k.tx), (k.axes.oa, k.ty_rows), (k.axes.ma, p.chunk)];
    src.shared_bytes = if k.reads {
        k.edge.at + k.edge.bytes()
    } else {
        k.ring_bytes
    };
    src.x_multiple = k.vl;
    g.finish(src)
}

/// One shared-memory march: its ring of slots, the copies that fill it, and the tile.
struct SMarch<'a> {
    spec: &'a KernelSpec<'a>,
    p: SMarchParams,
    ty: &'static str,
    /// The 16-byte vector type, and its elements.
    vt: &'static str,
    vl: u32,
    axes: MarchAxes,
    /// A slot's row width and rows (elements), slots in the ring, elements per slot.
    w: u32,
    h: u32,
    slots: u32,
    plane: u32,
    hxl: u32,
    hyl: u32,
    /// March-axis reach below and above, and the window they span.
    rzl: i32,
    rzh: i32,
    window: u32,
    threads: u32,
    /// Tile rows and columns.
    ty_rows: u32,
    tx: u32,
    periodic: bool,
    bulk: bool,
    /// Edge sectors read ahead (`-e`, interior-only outputs).
    reads: bool,
    ring_bytes: u32,
    edge: EdgeSectors,
    /// A plane's 16-byte copies: per row, in all, per thread.
    wv: u32,
    total: u32,
    per_thread: u32,
    /// Planes copied ahead of the one computed, and register stages.
    ahead: u32,
    ns: u32,
}

impl<'a> SMarch<'a> {
    fn new(g: &Gen, spec: &'a KernelSpec<'a>, p: SMarchParams, march_z: bool) -> Self {
        let vl = elements_per_copy(spec.precision);
        let axes = MarchAxes::new(march_z);
        let (ma, oa) = (axes.ma, axes.oa);
        let (lo, hi) = g.reach();
        let (w, h, slots) = ring_shape(lo, hi, p, vl, march_z);
        let (rzl, rzh) = (lo[ma] as i32, hi[ma] as i32);
        let window = (rzl + rzh + 1) as u32;
        let plane = w * h;
        let threads = p.bx * p.by;
        let bulk = p.copy == SmCopy::Bulk;
        // The ring, then with bulk copies one 8-byte mbarrier per slot.
        let ring_bytes =
            slots * plane * spec.precision.size() as u32 + if bulk { 8 * slots } else { 0 };
        let edge = EdgeSectors {
            // The parking buffer follows, on a 16-byte boundary.
            at: ring_bytes.next_multiple_of(16),
            outputs: spec.stencils.len() as u32,
            rows: p.by * p.rows,
            cols: p.bx * p.vec,
            threads,
        };
        let wv = w / vl;
        let total = h * wv;
        SMarch {
            spec,
            p,
            ty: g.ty,
            vt: vec_type(spec.precision, vl),
            vl,
            axes,
            w,
            h,
            slots,
            plane,
            hxl: (lo[0] as u32).div_ceil(vl) * vl,
            hyl: lo[oa] as u32,
            rzl,
            rzh,
            window,
            threads,
            ty_rows: p.by * p.rows,
            tx: p.bx * p.vec,
            periodic: spec.boundary == Boundary::Periodic,
            bulk,
            // Edge sectors read ahead (-e): only interior-only outputs leave caller points
            // within computed rows.
            reads: p.edge_reads && spec.boundary == Boundary::Dirichlet,
            ring_bytes,
            edge,
            wv,
            total,
            per_thread: total.div_ceil(threads),
            ahead: window + p.depth - 1,
            ns: match p.copy {
                SmCopy::Registers(n) => n,
                _ => 0,
            },
        }
    }

    fn idx(&self, x: &str, o: &str, m: &str) -> String {
        self.axes.idx(x, o, m)
    }

    fn wrap(&self, v: &str, n: &str) -> String {
        super::emit::wrap_stmt(self.periodic, v, n)
    }

    /// One mbarrier per slot, initialised once; each thread tracks every slot's phase parity
    /// in one bit, flipped at each wait (every filled slot is waited for once).
    fn barriers(&self, g: &mut Gen) {
        let (slots, threads) = (self.slots, self.threads);
        g.line(
            1,
            &format!(
                "unsigned long long* const fd_bars = reinterpret_cast<unsigned long long*>(sm + {});",
                slots * self.plane
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
        g.line(1, "unsigned fd_phase = 0u;");
    }

    /// Each thread's share of a plane's 16-byte copies, the same in every plane: source
    /// offset within the plane, target offset within the slot, and whether the source exists
    /// (chunks outside a Dirichlet grid are zero-filled; no computed point reads them).
    fn copy_table(&self, g: &mut Gen) {
        let (per_thread, threads, wv, total) = (self.per_thread, self.threads, self.wv, self.total);
        let (hyl, hxl, vl, w) = (self.hyl, self.hxl, self.vl, self.w);
        g.line(4, &format!("long long goff[{per_thread}];"));
        g.line(4, &format!("int soff[{per_thread}];"));
        g.line(4, &format!("int csize[{per_thread}];"));
        g.line(4, "#pragma unroll");
        g.line(4, &format!("for (int j = 0; j < {per_thread}; ++j) {{"));
        g.line(5, &format!("const int c = tid + j * {threads};"));
        g.line(
            5,
            &format!("const int row = c / {wv}, col = c - row * {wv};"),
        );
        g.line(5, &format!("int gy = y0 - {hyl} + row;"));
        g.line(5, &format!("int gx = x0 - {hxl} + col * {vl};"));
        g.line(5, &self.wrap("gy", "no"));
        g.line(5, &self.wrap("gx", "nx"));
        g.line(
            5,
            &format!("const bool ok = c < {total} && gx >= 0 && gx < nx && gy >= 0 && gy < no;"),
        );
        g.line(
            5,
            &format!("goff[j] = ok ? {} : 0;", self.idx("gx", "gy", "0")),
        );
        g.line(5, &format!("soff[j] = row * {w} + col * {vl};"));
        g.line(5, &format!("csize[j] = c < {total} ? (ok ? 16 : 0) : -1;"));
        g.line(4, "}");
    }

    fn open_plane(&self, g: &mut Gen, indent: usize, pl: &str) -> usize {
        let wrap = |v: &str, n: &str| self.wrap(v, n);
        let idx = |x: &str, o: &str, m: &str| self.idx(x, o, m);
        open_plane(g, indent, pl, "", &wrap, &idx)
    }

    /// `cp.async` copies of plane `pl` into slot `slot`, committed as one group.
    fn copy_plane(&self, g: &mut Gen, indent: usize, pl: &str, slot: &str) {
        let i = self.open_plane(g, indent, pl);
        g.line(
            i,
            &format!("{}* const dst = sm + ({slot}) * {};", self.ty, self.plane),
        );
        g.line(i, "#pragma unroll");
        g.line(
            i,
            &format!("for (int j = 0; j < {}; ++j) {{", self.per_thread),
        );
        g.line(
            i + 1,
            "if (csize[j] >= 0) fd_cp_async16(dst + soff[j], src + goff[j], csize[j]);",
        );
        g.line(i, "}");
        g.line(indent, "}");
        g.line(indent, "fd_cp_async_commit();");
    }

    /// Staged copies: `st[j]` holds this thread's share of one plane between its loads and
    /// its shared stores. Why: with per-thread 16-byte `cp.async`, Nsight Compute counted L2
    /// read sectors at 2.3x the input for a tile that needs 1.17x, about twice what the tile
    /// moves; warp-wide 16-byte loads are coalesced into whole sectors.
    fn stage_load(&self, g: &mut Gen, indent: usize, pl: &str, stage: u32) {
        let vt = self.vt;
        let i = self.open_plane(g, indent, pl);
        g.line(i, "#pragma unroll");
        g.line(
            i,
            &format!("for (int j = 0; j < {}; ++j) {{", self.per_thread),
        );
        g.line(
            i + 1,
            &format!(
                "st[{stage}][j] = csize[j] > 0 ? __ldg(reinterpret_cast<const {vt}*>(src + goff[j])) : \
                 make_{vt}({});",
                vec!["0"; self.vl as usize].join(", ")
            ),
        );
        g.line(i, "}");
        g.line(indent, "}");
    }

    /// Shared stores of stage 0 into slot `slot`.
    fn stage_store(&self, g: &mut Gen, indent: usize, pl: &str, slot: &str) {
        g.line(indent, &format!("if ({pl} < mend) {{"));
        let i = indent + 1;
        g.line(
            i,
            &format!("{}* const dst = sm + ({slot}) * {};", self.ty, self.plane),
        );
        g.line(i, "#pragma unroll");
        g.line(
            i,
            &format!("for (int j = 0; j < {}; ++j) {{", self.per_thread),
        );
        g.line(
            i + 1,
            &format!(
                "if (csize[j] >= 0) *reinterpret_cast<{}*>(dst + soff[j]) = st[0][j];",
                self.vt
            ),
        );
        g.line(i, "}");
        g.line(indent, "}");
    }

    /// Staged copies: `st[s]` holds plane base + ahead + k + s during iteration k: stage 0 is
    /// stored at the end of the iteration, the others were loaded in earlier iterations.
    fn staged_pipeline(&self, g: &mut Gen) {
        let (ns, ahead) = (self.ns, self.ahead);
        g.line(4, &format!("{} st[{ns}][{}];", self.vt, self.per_thread));
        g.line(4, &format!("for (int k = 0; k < {ahead}; ++k) {{"));
        self.stage_load(g, 5, "base + k", 0);
        self.stage_store(g, 5, "base + k", "k");
        g.line(4, "}");
        for s in 0..ns - 1 {
            self.stage_load(g, 4, &format!("base + {}", ahead + s), s);
        }
        g.line(4, "for (int m = mb; m < me; ++m) {");
        g.line(5, "const int k = m - mb;");
        // Stores of the previous iteration visible; its readers done with the slot refilled
        // at the end of this one (it held plane m - rzl - 1).
        g.line(5, "__syncthreads();");
        self.stage_load(g, 5, &format!("base + {} + k", ahead + ns - 1), ns - 1);
    }

    /// `cp.async` copies: the window and depth - 1 further planes first, then one plane per
    /// step.
    fn async_pipeline(&self, g: &mut Gen) {
        let (ahead, slots) = (self.ahead, self.slots);
        g.line(4, &format!("for (int k = 0; k < {ahead}; ++k) {{"));
        self.copy_plane(g, 5, "base + k", "k");
        g.line(4, "}");
        g.line(4, "for (int m = mb; m < me; ++m) {");
        g.line(5, "const int k = m - mb;");
        // Groups committed so far: window + depth - 1 + k; plane m + rzh is group window - 1 + k.
        g.line(5, &format!("fd_cp_async_wait<{}>();", self.p.depth - 1));
        g.line(5, "__syncthreads();");
        // The slot refilled now held plane m - rzl - 1, last read in the previous iteration.
        self.copy_plane(
            g,
            5,
            &format!("base + {ahead} + k"),
            &format!("({ahead} + k) % {slots}"),
        );
    }

    /// The compute step: slot offsets of the planes the taps read, then the sums, one point
    /// per thread or `vec` of them.
    fn compute(&self, g: &mut Gen) {
        let (ty, w, hyl, hxl) = (self.ty, self.w, self.hyl, self.hxl);
        let (ma, oa) = (self.axes.ma, self.axes.oa);
        let mut dzs: BTreeSet<i32> = BTreeSet::new();
        for s in self.spec.stencils {
            for t in s.taps() {
                dzs.insert(t.offset[ma]);
            }
        }
        let zname = |dz: i32| super::emit::coord_name("sz", dz);
        for &dz in &dzs {
            g.line(
                5,
                &format!(
                    "const int {} = ((k + {}) % {}) * {};",
                    zname(dz),
                    self.rzl + dz,
                    self.slots,
                    self.plane
                ),
            );
        }
        let idx = |x: &str, o: &str, m: &str| self.idx(x, o, m);
        if self.p.vec != 1 {
            let (spec, p) = (self.spec, self.p);
            vector_points(g, spec, p, w, hyl, hxl, ma, oa, &zname, &idx);
            return;
        }
        g.line(5, "const int x = x0 + threadIdx.x;");
        g.line(5, "#pragma unroll");
        g.line(5, &format!("for (int r = 0; r < {}; ++r) {{", self.p.rows));
        g.line(
            6,
            &format!("const int ry = threadIdx.y * {} + r;", self.p.rows),
        );
        g.line(6, "const int o = y0 + ry;");
        g.line(
            6,
            "if (x < ilo || x >= ihi || o < olo || o >= ohi) continue;",
        );
        g.line(
            6,
            &format!("const {ty}* const c = sm + ({hyl} + ry) * {w} + {hxl} + threadIdx.x;"),
        );
        let load = |t: &fdlab_core::Tap| {
            format!(
                "c[{} + {}]",
                zname(t.offset[ma]),
                t.offset[oa] * w as i32 + t.offset[0]
            )
        };
        let at = idx("x", "o", "m");
        let store = |o: usize| format!("out{o}[{at}]");
        g.sums(6, &load, &store);
    }

    /// Staged copies at the step's end: stage 0 into its slot, the other stages shifted.
    fn stage_shift(&self, g: &mut Gen) {
        let (ns, ahead, slots) = (self.ns, self.ahead, self.slots);
        self.stage_store(
            g,
            5,
            &format!("base + {ahead} + k"),
            &format!("({ahead} + k) % {slots}"),
        );
        if ns > 1 {
            g.line(5, "#pragma unroll");
            g.line(5, &format!("for (int s = 0; s < {}; ++s) {{", ns - 1));
            g.line(6, "#pragma unroll");
            g.line(
                6,
                &format!(
                    "for (int j = 0; j < {}; ++j) st[s][j] = st[s + 1][j];",
                    self.per_thread
                ),
            );
            g.line(5, "}");
        }
    }
}

/// The compute step with `p.vec` x points per thread: each row the taps touch is read as
/// whole vectors covering the thread's points and their x reach, the sums are formed per
/// point, and the results stored as one vector (per point where a Dirichlet edge cuts it).
#[allow(clippy::too_many_arguments)]
fn vector_points(
    g: &mut Gen,
    spec: &KernelSpec<'_>,
    p: SMarchParams,
    w: u32,
    hyl: u32,
    hxl: u32,
    ma: usize,
    oa: usize,
    zname: &dyn Fn(i32) -> String,
    idx: &dyn Fn(&str, &str, &str) -> String,
) {
    let ty = g.ty;
    let v = p.vec as i32;
    let vt = vec_type(spec.precision, p.vec);
    let comps = ["x", "y", "z", "w"];
    // Rows (dy, dz) the taps read, each with its x reach.
    let mut rows: std::collections::BTreeMap<(i32, i32), (i32, i32)> = Default::default();
    for s in spec.stencils {
        for t in s.taps() {
            let e = rows.entry((t.offset[oa], t.offset[ma])).or_insert((0, 0));
            e.0 = e.0.min(t.offset[0]);
            e.1 = e.1.max(t.offset[0]);
        }
    }
    let kfirst = |mn: i32| mn.div_euclid(v);
    let klast = |mx: i32| (v - 1 + mx).div_euclid(v);
    let wname = |dy: i32, dz: i32| {
        format!(
            "win_{}_{}",
            super::emit::coord_name("y", dy),
            super::emit::coord_name("z", dz)
        )
    };
    g.line(5, &format!("const int x = x0 + threadIdx.x * {v};"));
    g.line(5, "#pragma unroll");
    g.line(5, &format!("for (int r = 0; r < {}; ++r) {{", p.rows));
    g.line(6, &format!("const int ry = threadIdx.y * {} + r;", p.rows));
    g.line(6, "const int o = y0 + ry;");
    g.line(6, "if (x >= nx || o < olo || o >= ohi) continue;");
    g.line(
        6,
        &format!("const {ty}* const c = sm + ({hyl} + ry) * {w} + {hxl} + threadIdx.x * {v};"),
    );
    for (&(dy, dz), &(mn, mx)) in &rows {
        let (k0, k1) = (kfirst(mn), klast(mx));
        let name = wname(dy, dz);
        g.line(6, &format!("{ty} {name}[{}];", (k1 - k0 + 1) * v));
        for k in k0..=k1 {
            g.line(
                6,
                &format!(
                    "{{ const {vt} t = *reinterpret_cast<const {vt}*>(c + {} + {});",
                    zname(dz),
                    dy * w as i32 + k * v
                ),
            );
            for (l, comp) in comps.iter().enumerate().take(v as usize) {
                g.line(
                    7,
                    &format!("{name}[{}] = t.{comp};", (k - k0) * v + l as i32),
                );
            }
            g.line(6, "}");
        }
    }
    let at = idx("x", "o", "m");
    for (o, stencil) in spec.stencils.iter().enumerate() {
        g.line(6, &format!("{ty} acc{o}[{v}];"));
        g.line(6, "#pragma unroll");
        g.line(6, &format!("for (int l = 0; l < {v}; ++l) {{"));
        g.line(7, &format!("{ty} a = ({ty})0;"));
        for (ti, t) in stencil.taps().iter().enumerate() {
            let key = (t.offset[oa], t.offset[ma]);
            let k0 = kfirst(rows[&key].0);
            g.line(
                7,
                &format!(
                    "a += {} * {}[l + {}];",
                    g.weight(o, ti),
                    wname(key.0, key.1),
                    t.offset[0] - k0 * v
                ),
            );
        }
        g.line(7, &format!("acc{o}[l] = a;"));
        g.line(6, "}");
        let parts: Vec<String> = (0..v).map(|l| format!("acc{o}[{l}]")).collect();
        g.line(6, &format!("if (x >= ilo && x + {v} <= ihi) {{"));
        g.line(
            7,
            &format!(
                "*reinterpret_cast<{vt}*>(out{o} + {at}) = make_{vt}({});",
                parts.join(", ")
            ),
        );
        g.line(6, "} else {");
        g.line(7, "#pragma unroll");
        g.line(7, &format!("for (int l = 0; l < {v}; ++l) {{"));
        let at_l = idx("x + l", "o", "m");
        g.line(
            8,
            &format!("if (x + l >= ilo && x + l < ihi) out{o}[{at_l}] = acc{o}[l];"),
        );
        g.line(7, "}");
        g.line(6, "}");
    }
}

/// The plane copies and waits of [`SmCopy::Bulk`], up to the compute step of iteration `k`:
/// one warp issues, per row of a plane, one `cp.async.bulk` per contiguous piece (a periodic
/// image splits a row where it wraps; pieces outside a Dirichlet grid are skipped: no computed
/// point reads them), each adding its bytes to the slot's mbarrier, then one arrival closes
/// the plane. Dims: `[w, h, slots, window, ahead, hxl, hyl]`.
fn bulk_pipeline(
    g: &mut Gen,
    p: &SMarchParams,
    dims: [u32; 7],
    wrap: &dyn Fn(&str, &str) -> String,
    idx: &dyn Fn(&str, &str, &str) -> String,
) {
    let [w, h, slots, window, ahead, hxl, hyl] = dims;
    let lanes = (p.bx * p.by).min(32);
    let issue = |g: &mut Gen, indent: usize, pl: &str, slot: &str| {
        let rows = BulkRows {
            w,
            h,
            stride: w * h,
            offset: 0,
            x_back: hxl as i32,
            y_back: hyl as i32,
            lanes,
        };
        bulk_issue(g, indent, (pl, slot), rows, wrap, idx);
        g.line(
            indent,
            &format!("if ({pl} < mend && tid == 0) fd_mbar_arrive(fd_bars + ({slot}));"),
        );
    };
    let wait = |g: &mut Gen, indent: usize, slot: &str| {
        g.line(
            indent,
            &format!(
                "{{ const int sl = {slot}; fd_mbar_wait(fd_bars + sl, (fd_phase >> sl) & 1u); fd_phase ^= 1u << sl; }}"
            ),
        );
    };
    // Prologue: the window and depth - 1 further planes; then wait for all of the first
    // window but its front plane, which the first iteration waits for.
    g.line(4, &format!("for (int k = 0; k < {ahead}; ++k) {{"));
    issue(g, 5, "base + k", "k");
    g.line(4, "}");
    g.line(4, &format!("for (int k = 0; k + 1 < {window}; ++k) {{"));
    wait(g, 5, "k");
    g.line(4, "}");
    g.line(4, "for (int m = mb; m < me; ++m) {");
    g.line(5, "const int k = m - mb;");
    // The front plane m + rzh (issued `depth` iterations ago, or in the prologue).
    wait(g, 5, &format!("(k + {}) % {slots}", window - 1));
    // The slot refilled now held plane m - rzl - 1, last read in the previous iteration.
    g.line(5, "__syncthreads();");
    issue(
        g,
        5,
        &format!("base + {ahead} + k"),
        &format!("({ahead} + k) % {slots}"),
    );
}
