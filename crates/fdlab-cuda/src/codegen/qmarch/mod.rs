//! 2.5-D marching with a register queue along the march and one shared-memory plane
//! (Micikevicius' 3-D finite-difference scheme, with 16-byte vectors).
//!
//! A block owns an x × other-axis tile and marches along the last axis the stencils use (as
//! the shared-memory march, `smarch`). Each thread keeps its own `vec` x points of `rows` rows for the whole
//! march window (`reach below + 1 + reach above` planes) in registers: the march-axis taps
//! read registers, and each plane's interior is loaded from global memory once, as the front of
//! the queue. Only the centre plane goes to shared memory — its interior from the threads'
//! queues, its x and other-axis halo by coalesced 16-byte loads, both issued one plane ahead —
//! so the taps across the plane read shared memory. Two plane slots alternate: one barrier per
//! plane.
//!
//! Why: the shared-memory march keeps the whole window (9 planes
//! for an 8th-order stencil) in its ring, which for the radius-4 stencils costs occupancy and,
//! with a short tile, reads every plane's 2× halo through L2 per plane; here shared memory holds
//! two planes, and the march-axis reach costs registers, not L2 traffic.
//!
//! Needs every tap off the centre plane to lie on the march-axis column (true of derivatives,
//! gradients and Laplacians), `nx` a multiple of 16 bytes of elements, and periodic or
//! Dirichlet boundaries.

use super::emit::{vec_type, Gen};
use super::source::{CudaSource, KernelSpec};
use fdlab_core::Boundary;

mod phases;
mod tma;

pub(crate) use phases::QMarchParams;
use phases::*;
use tma::qmarch_tma;

pub(crate) fn qmarch(
    spec: &KernelSpec<'_>,
    src: CudaSource,
    p: QMarchParams,
    march_z: bool,
) -> CudaSource {
    if p.tma > 0 {
        return qmarch_tma(spec, src, p, march_z);
    }
    let mut g = Gen::new(spec);
    let q = Queue::new(&g, spec, p, march_z);
    let t = q.t;
    g.shared_march_prologue(t.axes, t.threads, p.bx);
    g.march_tiles(p.chunk, t.tyr, t.tx);
    // The previous tile's readers must be done with both slots.
    g.line(4, "__syncthreads();");
    if q.halo > 0 {
        q.halo_table(&mut g);
    }
    q.own_points(&mut g);
    q.warm_up(&mut g);
    g.line(4, "for (int m = mb; m < me; ++m) {");
    q.fill_slot(&mut g);
    // Next plane's loads, in flight during this plane's sums.
    g.line(5, "if (m + 1 < me) {");
    q.plane_src(&mut g, 6, &format!("m + 1 + {}", t.rzh));
    q.load_own(&mut g, 6);
    g.line(5, "}");
    g.line(5, "if (m + 1 < me) {");
    q.plane_src(&mut g, 6, "m + 1");
    q.load_halo(&mut g, 6);
    g.line(5, "}");
    g.line(5, "__syncthreads();");
    let idx = |x: &str, o: &str, m: &str| t.axes.idx(x, o, m);
    let (ma, oa) = (t.axes.ma, t.axes.oa);
    sums(&mut g, spec, p, [t.w, t.hyl, t.hxl, t.rzl], ma, oa, &idx);
    shift_queue(&mut g, p.rows, t.window, p.vec);
    let shared = 2 * q.plane * t.size;
    finish_tile(g, src, &p, (t.tx, t.tyr, t.axes), shared, Vec::new())
}

/// The register-fed queue march: the tile, and the table of halo granules each thread loads.
struct Queue {
    p: QMarchParams,
    t: Tile,
    periodic: bool,
    /// The vector type of a 16-byte granule.
    gt: &'static str,
    /// Elements of one slot.
    plane: u32,
    /// Halo granules: the other-axis rows (`top` of them above, `band` per row starting at
    /// column `band0`), then `mid` granules of the x halo beside the tile's rows; in all
    /// `halo`, `per_thread` per thread.
    top: u32,
    mid: u32,
    band: u32,
    band0: u32,
    halo: u32,
    per_thread: u32,
    /// x halo granules left and right; the tile's width in granules.
    lv: u32,
    rv: u32,
    txv: u32,
}

impl Queue {
    fn new(g: &Gen, spec: &KernelSpec<'_>, p: QMarchParams, march_z: bool) -> Self {
        let t = Tile::new(g, &p, march_z);
        let Tile {
            vl,
            axes,
            hxl,
            hxr,
            hyl,
            hyh,
            tx,
            tyr,
            w,
            h,
            threads,
            ..
        } = t;
        // Halo granules (16 bytes): the other-axis halo rows (over the interior columns, or
        // the whole width when a tap reads a corner), then the x halo of the tile's rows.
        let corners = spec
            .stencils
            .iter()
            .flat_map(|s| s.taps())
            .any(|t| t.offset[0] != 0 && t.offset[axes.oa] != 0);
        let (wv, lv, rv, txv) = (w / vl, hxl / vl, hxr / vl, tx / vl);
        let band = if corners { wv } else { txv };
        let band0 = if corners { 0 } else { lv };
        let top = hyl * band;
        let mid = tyr * (lv + rv);
        let halo = top + mid + hyh * band;
        Queue {
            p,
            t,
            periodic: spec.boundary == Boundary::Periodic,
            gt: vec_type(spec.precision, vl),
            plane: w * h,
            top,
            mid,
            band,
            band0,
            halo,
            per_thread: halo.div_ceil(threads),
            lv,
            rv,
            txv,
        }
    }

    fn idx(&self, x: &str, o: &str, m: &str) -> String {
        self.t.axes.idx(x, o, m)
    }

    fn wrap(&self, v: &str, n: &str) -> String {
        super::emit::wrap_stmt(self.periodic, v, n)
    }

    /// This thread's halo granules: source offset within a plane, target within a slot.
    fn halo_table(&self, g: &mut Gen) {
        let Queue {
            top,
            mid,
            band,
            band0,
            halo,
            per_thread,
            lv,
            rv,
            txv,
            ..
        } = *self;
        let Tile {
            hyl,
            hxl,
            tyr,
            vl,
            w,
            threads,
            ..
        } = self.t;
        g.line(4, &format!("long long hoff[{per_thread}];"));
        g.line(4, &format!("int hdst[{per_thread}];"));
        g.line(4, &format!("bool hok[{per_thread}];"));
        g.line(4, "#pragma unroll");
        g.line(4, &format!("for (int j = 0; j < {per_thread}; ++j) {{"));
        g.line(5, &format!("const int c = tid + j * {threads};"));
        g.line(5, "int row, col;");
        g.line(
            5,
            &format!("if (c < {top}) {{ row = c / {band}; col = {band0} + c % {band}; }}"),
        );
        if lv + rv > 0 {
            g.line(
                5,
                &format!(
                    "else if (c < {}) {{ const int e = c - {top}; row = {hyl} + e / {}; col = e % {}; if (col >= {lv}) col += {txv}; }}",
                    top + mid,
                    lv + rv,
                    lv + rv
                ),
            );
        }
        g.line(
            5,
            &format!(
                "else {{ const int e = c - {}; row = {} + e / {band}; col = {band0} + e % {band}; }}",
                top + mid,
                hyl + tyr
            ),
        );
        g.line(5, &format!("int gy = y0 - {hyl} + row;"));
        g.line(5, &format!("int gx = x0 - {hxl} + col * {vl};"));
        g.line(5, &self.wrap("gy", "no"));
        g.line(5, &self.wrap("gx", "nx"));
        g.line(
            5,
            &format!("hok[j] = c < {halo} && gx >= 0 && gx < nx && gy >= 0 && gy < no;"),
        );
        g.line(
            5,
            &format!("hoff[j] = hok[j] ? {} : 0;", self.idx("gx", "gy", "0")),
        );
        g.line(
            5,
            &format!("hdst[j] = c < {halo} ? row * {w} + col * {vl} : -1;"),
        );
        g.line(4, "}");
    }

    /// This thread's own points; with periodic images, points of a tile that overhangs the
    /// grid load their wrapped values (neighbours of the last points read them from the
    /// slot), but only points inside the grid are computed.
    fn own_points(&self, g: &mut Gen) {
        let p = self.p;
        g.line(4, &format!("const int x = x0 + threadIdx.x * {};", p.vec));
        g.line(4, "int xl = x;");
        g.line(4, &self.wrap("xl", "nx"));
        for r in 0..p.rows {
            g.line(
                4,
                &format!("const int o{r} = y0 + threadIdx.y * {} + {r};", p.rows),
            );
            g.line(4, &format!("int ol{r} = o{r};"));
            g.line(4, &self.wrap(&format!("ol{r}"), "no"));
            g.line(4, &format!("const bool in{r} = x < nx && o{r} < no;"));
            let load = if self.periodic {
                "true".to_string()
            } else {
                format!("in{r}")
            };
            g.line(4, &format!("const bool ld{r} = {load};"));
            g.line(
                4,
                &format!(
                    "const long long own{r} = ld{r} ? {} : 0;",
                    self.idx("xl", &format!("ol{r}"), "0")
                ),
            );
        }
    }

    /// Zero of type `t` holding `n` elements.
    fn zero(&self, t: &str, n: u32) -> String {
        if n == 1 {
            format!("({})0", self.t.ty)
        } else {
            format!("make_{t}({})", vec!["0"; n as usize].join(", "))
        }
    }

    /// Element `l` of the vector `var`.
    fn comp(&self, var: &str, l: u32) -> String {
        if self.p.vec == 1 {
            var.to_string()
        } else {
            format!("{var}.{}", ["x", "y", "z", "w"][l as usize])
        }
    }

    /// `src`: plane `pl` of the input.
    fn plane_src(&self, g: &mut Gen, indent: usize, pl: &str) {
        g.line(indent, &format!("int pz = {pl};"));
        g.line(indent, &self.wrap("pz", "nm"));
        g.line(
            indent,
            &format!(
                "const {}* const src = in + {};",
                self.t.ty,
                self.idx("0", "0", "pz")
            ),
        );
    }

    /// Loads of the own points of `src` into `nxt{r}`.
    fn load_own(&self, g: &mut Gen, indent: usize) {
        let vt = self.t.vt;
        for r in 0..self.p.rows {
            g.line(
                indent,
                &format!(
                    "nxt{r} = ld{r} ? __ldg(reinterpret_cast<const {vt}*>(src + own{r})) : {};",
                    self.zero(vt, self.p.vec)
                ),
            );
        }
    }

    /// Loads of the halo granules of `src` into `hv`.
    fn load_halo(&self, g: &mut Gen, indent: usize) {
        if self.halo == 0 {
            return;
        }
        let (gt, per_thread) = (self.gt, self.per_thread);
        g.line(indent, "#pragma unroll");
        g.line(indent, &format!("for (int j = 0; j < {per_thread}; ++j) hv[j] = hok[j] ? __ldg(reinterpret_cast<const {gt}*>(src + hoff[j])) : {};", self.zero(gt, self.t.vl)));
    }

    /// The queue: q{r}_{i}_{l} holds plane m - rzl + i of row r, x point l; named scalars so
    /// that every index is fixed at generation time (registers, never local memory). Filled
    /// with planes mb - rzl … mb + rzh - 1; the front plane mb + rzh and the halo of plane mb
    /// in flight.
    fn warm_up(&self, g: &mut Gen) {
        let Tile {
            ty,
            vt,
            window,
            rzl,
            rzh,
            ..
        } = self.t;
        let (p, v) = (self.p, self.p.vec);
        for r in 0..p.rows {
            let names: Vec<String> = (0..window)
                .flat_map(|i| (0..v).map(move |l| format!("q{r}_{i}_{l}")))
                .collect();
            g.line(4, &format!("{ty} {};", names.join(", ")));
            g.line(4, &format!("{vt} nxt{r};"));
        }
        if self.halo > 0 {
            g.line(4, &format!("{} hv[{}];", self.gt, self.per_thread));
        }
        for i in 0..window - 1 {
            g.line(4, "{");
            self.plane_src(g, 5, &format!("mb - {rzl} + {i}"));
            self.load_own(g, 5);
            for r in 0..p.rows {
                for l in 0..v {
                    g.line(
                        5,
                        &format!("q{r}_{i}_{l} = {};", self.comp(&format!("nxt{r}"), l)),
                    );
                }
            }
            g.line(4, "}");
        }
        g.line(4, "{");
        self.plane_src(g, 5, &format!("mb + {rzh}"));
        self.load_own(g, 5);
        g.line(4, "}");
        g.line(4, "{");
        self.plane_src(g, 5, "mb");
        self.load_halo(g, 5);
        g.line(4, "}");
    }

    /// The front plane enters the queue; the centre plane and its halo go to the slot.
    fn fill_slot(&self, g: &mut Gen) {
        let Tile {
            ty,
            vt,
            window,
            rzl,
            hyl,
            hxl,
            w,
            ..
        } = self.t;
        let (p, v) = (self.p, self.p.vec);
        g.line(
            5,
            &format!("{ty}* const slot = sm + ((m - mb) & 1) * {};", self.plane),
        );
        for r in 0..p.rows {
            for l in 0..v {
                g.line(
                    5,
                    &format!(
                        "q{r}_{}_{l} = {};",
                        window - 1,
                        self.comp(&format!("nxt{r}"), l)
                    ),
                );
            }
            let centre: Vec<String> = (0..v).map(|l| format!("q{r}_{rzl}_{l}")).collect();
            let value = if v == 1 {
                centre[0].clone()
            } else {
                format!("make_{vt}({})", centre.join(", "))
            };
            g.line(
                5,
                &format!(
                    "*reinterpret_cast<{vt}*>(slot + ({hyl} + threadIdx.y * {} + {r}) * {w} + {hxl} + threadIdx.x * {v}) = {value};",
                    p.rows
                ),
            );
        }
        if self.halo > 0 {
            g.line(5, "#pragma unroll");
            g.line(
                5,
                &format!("for (int j = 0; j < {}; ++j) if (hdst[j] >= 0) *reinterpret_cast<{}*>(slot + hdst[j]) = hv[j];", self.per_thread, self.gt),
            );
        }
    }
}
