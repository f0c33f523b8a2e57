//! 2.5-D marching: each thread owns `vec` consecutive x points of `rows` consecutive rows and
//! marches along the last axis (z in 3-D, y in 2-D), keeping each row's neighbours along that
//! axis in a register queue. Neighbours across rows come from the other rows' queues, or, at
//! the edge of the thread's rows, through the read-only cache; x neighbours come from the
//! adjacent lanes by warp shuffle (or the cache) as aligned 16-byte (or 8-byte) vectors.
//! Neumann threads whose x neighbourhood leaves the grid take a scalar path that maps every
//! read through the boundary.

use super::emit::{coord_name, vec_type, Gen, MarchAxes};
use super::source::{CudaSource, KernelSpec};
use fdlab_core::{Boundary, Tap};
use std::collections::{BTreeMap, BTreeSet};

/// Parameters of a marching kernel.
#[derive(Debug, Clone, Copy)]
pub struct ZMarchParams {
    /// Threads along x.
    pub bx: u32,
    /// Threads along the other (non-marching) axis.
    pub by: u32,
    /// x points per thread, loaded as one vector (1, 2 or 4; 4 only for f32).
    pub vec: u32,
    /// Planes marched per block.
    pub chunk: u32,
    /// Streaming (evict-first) stores.
    pub streaming: bool,
    /// Planes per loop iteration (front loads issued together).
    pub unroll: u32,
    /// Consecutive rows of the other axis per thread.
    pub rows: u32,
}

fn signed(off: i32) -> String {
    if off < 0 {
        format!("- {}", -off)
    } else {
        format!("+ {off}")
    }
}

/// What every phase of one marching kernel needs: the parameters and what follows from the
/// stencils (reach, row sources and their x windows, the buffers of the software pipeline).
struct ZMarch<'a> {
    spec: &'a KernelSpec<'a>,
    p: ZMarchParams,
    ty: &'static str,
    map: &'static str,
    vt: &'static str,
    v: i32,
    nr: i32,
    axes: MarchAxes,
    ma: usize,
    oa: usize,
    rml: i32,
    rmh: i32,
    neumann: bool,
    dirichlet: bool,
    shuffle: bool,
    /// x points below and above i0 that the taps read, in whole vectors.
    vl: i32,
    vh: i32,
    /// Nonzero tap offsets along the march, x and the other axis.
    m_offs: BTreeSet<i32>,
    x_offs: BTreeSet<i32>,
    o_offs: BTreeSet<i32>,
    /// Row sources (d, om) → lowest and highest x offset read.
    sources: BTreeMap<(i32, i32), (i32, i32)>,
    /// Row sources → x window in whole vectors below and above i0.
    windows: BTreeMap<(i32, i32), (i32, i32)>,
    /// Queue length: the march window.
    nq: usize,
    /// Planes per loop iteration.
    u: u32,
    /// Row sources that are not this thread's own rows.
    halo: Vec<(i32, i32)>,
    /// (d, om, w): x sides taken from buffers at warp edges when shuffling.
    sides: Vec<(i32, i32, i32)>,
}

pub(crate) fn zmarch(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    p: ZMarchParams,
    march_z: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let z = ZMarch::new(&g, spec, p, march_z);
    g.march_prologue(z.axes, p.bx * p.by);
    if z.shuffle {
        g.line(1, "const int lane = threadIdx.x & 31;");
    }
    z.loop_heads(&mut g);
    if z.neumann {
        z.scalar_path(&mut g);
    }
    if z.shuffle {
        g.line(4, "const unsigned fd_mask = __activemask();");
    }
    z.row_indices(&mut g);
    z.queues(&mut g);
    z.buffers(&mut g);
    g.line(4, "#pragma unroll");
    g.line(4, &format!("for (int u = 0; u < {}; ++u) {{", z.u));
    z.fill(&mut g, 5, "mb + u", "u");
    g.line(4, "}");
    g.line(4, &format!("for (int mu = mb; mu < me; mu += {}) {{", z.u));
    g.line(5, "#pragma unroll");
    g.line(5, &format!("for (int u = 0; u < {}; ++u) {{", z.u));
    g.line(5, "const int m = mu + u;");
    g.line(5, "if (m < me) {");
    if !z.shuffle {
        z.plane_maps(&mut g, 5);
    }
    z.plane_windows(&mut g);
    for r in 0..z.nr {
        z.sums_and_stores(&mut g, r);
    }
    z.advance(&mut g);
    z.fill(&mut g, 5, &format!("m + {}", z.u), "u");
    g.line(5, "}");
    g.line(5, "}");
    g.close_from(4);
    src.block = [p.bx, p.by, 1];
    src.grid_map = [
        (0, p.bx * p.vec),
        (z.oa, p.by * z.nr as u32),
        (z.ma, p.chunk),
    ];
    g.finish(src)
}

impl<'a> ZMarch<'a> {
    fn new(g: &Gen, spec: &'a KernelSpec<'a>, p: ZMarchParams, march_z: bool) -> Self {
        let v = p.vec as i32;
        let nr = p.rows.max(1) as i32;
        let axes = MarchAxes::new(march_z);
        let (ma, oa) = (axes.ma, axes.oa);
        let (lo, hi) = g.reach();
        let neumann = spec.boundary == Boundary::Neumann;
        let shuffle = p.bx.is_multiple_of(32) && !neumann;
        let all_taps: Vec<Tap> = spec
            .stencils
            .iter()
            .flat_map(|s| s.taps().iter().copied())
            .collect();
        let mut m_offs: BTreeSet<i32> = BTreeSet::new();
        let mut x_offs: BTreeSet<i32> = BTreeSet::new();
        let mut o_offs: BTreeSet<i32> = BTreeSet::new();
        for t in &all_taps {
            if t.offset[ma] != 0 {
                m_offs.insert(t.offset[ma]);
            }
            if t.offset[0] != 0 {
                x_offs.insert(t.offset[0]);
            }
            if t.offset[oa] != 0 {
                o_offs.insert(t.offset[oa]);
            }
        }
        // Row sources: (d, om) with d the row offset from ob; rows 0..nr-1 are this thread's
        // own (their queues), the others come through the cache. Each source has an x window
        // of whole vectors around i0.
        let mut sources: BTreeMap<(i32, i32), (i32, i32)> = BTreeMap::new();
        for r in 0..nr {
            for t in &all_taps {
                let key = (r + t.offset[oa], t.offset[ma]);
                let e = sources.entry(key).or_insert((0, 0));
                e.0 = e.0.min(t.offset[0]);
                e.1 = e.1.max(t.offset[0]);
            }
        }
        let windows: BTreeMap<(i32, i32), (i32, i32)> = sources
            .iter()
            .map(|(&k, &(mn, mx))| (k, ((-mn + v - 1) / v, (mx + v - 1) / v)))
            .collect();
        let halo: Vec<(i32, i32)> = windows
            .keys()
            .copied()
            .filter(|&(d, _)| !(0..nr).contains(&d))
            .collect();
        // Sides taken from buffers: only at warp edges when shuffling; inline loads otherwise.
        let sides: Vec<(i32, i32, i32)> = if shuffle {
            windows
                .iter()
                .flat_map(|(&(d, om), &(wl, wh))| {
                    (-wl..=wh).filter(|&w| w != 0).map(move |w| (d, om, w))
                })
                .collect()
        } else {
            vec![]
        };
        let (rml, rmh) = (lo[ma] as i32, hi[ma] as i32);
        ZMarch {
            spec,
            p,
            ty: g.ty,
            map: g.map,
            vt: vec_type(spec.precision, p.vec),
            v,
            nr,
            axes,
            ma,
            oa,
            rml,
            rmh,
            neumann,
            dirichlet: spec.boundary == Boundary::Dirichlet,
            shuffle,
            vl: (lo[0] as i32 + v - 1) / v,
            vh: (hi[0] as i32 + v - 1) / v,
            m_offs,
            x_offs,
            o_offs,
            sources,
            windows,
            nq: (rml + rmh + 1) as usize,
            u: p.unroll.max(1),
            halo,
            sides,
        }
    }

    fn idx(&self, x: &str, o: &str, m: &str) -> String {
        self.axes.idx(x, o, m)
    }

    fn mname(off: i32) -> String {
        coord_name("m", off)
    }

    fn row_var(d: i32) -> String {
        coord_name("od", d)
    }

    /// A row exists when its index is inside the grid (Dirichlet rows outside read zeros).
    fn row_ok(d: i32) -> String {
        format!("({v} >= 0 && {v} < no)", v = Self::row_var(d))
    }

    fn guard_for(&self, d: i32) -> Option<String> {
        self.dirichlet.then(|| Self::row_ok(d))
    }

    fn own(&self, d: i32) -> bool {
        (0..self.nr).contains(&d)
    }

    fn hname(d: i32, om: i32) -> String {
        format!("bh_{}_{}", coord_name("d", d), coord_name("m", om))
    }

    fn ename(d: i32, om: i32, w: i32) -> String {
        format!(
            "be_{}_{}_{}",
            coord_name("d", d),
            coord_name("m", om),
            coord_name("w", w)
        )
    }

    fn sname(d: i32, om: i32) -> String {
        format!("s_{}_{}", coord_name("d", d), coord_name("m", om))
    }

    fn plane_at(&self, m: &str, om: i32) -> String {
        if om == 0 {
            m.to_string()
        } else {
            format!("{}({m} {}, nm)", self.map, signed(om))
        }
    }

    /// The chunk, row and x loops, and the chunk's march range `mb..me`.
    fn loop_heads(&self, g: &mut Gen) {
        let (p, v, nr) = (&self.p, self.v, self.nr);
        g.line(
            1,
            &format!(
                "for (int cm = blockIdx.z * {c}; cm < nm; cm += gridDim.z * {c}) {{",
                c = p.chunk
            ),
        );
        g.line(2, &format!("for (int ob = (blockIdx.y * {} + threadIdx.y) * {nr}; ob < no; ob += gridDim.y * {}) {{", p.by, p.by as i32 * nr));
        g.line(3, &format!("for (int i0 = (blockIdx.x * {} + threadIdx.x) * {v}; i0 < nx; i0 += gridDim.x * {}) {{", p.bx, p.bx * p.vec));
        g.line(
            4,
            &format!(
                "const int mb = max(cm, mlo), me = min(cm + {}, mhi);",
                p.chunk
            ),
        );
        g.line(4, "if (mb >= me) continue;");
    }

    /// The mapped march-axis coordinates of plane `m`'s neighbours.
    fn plane_maps(&self, g: &mut Gen, indent: usize) {
        for &off in &self.m_offs {
            g.line(
                indent,
                &format!(
                    "const int {} = {}(m {}, nm);",
                    Self::mname(off),
                    self.map,
                    signed(off)
                ),
            );
        }
    }

    /// Neumann threads whose x neighbourhood leaves the grid: every read mapped, one point at
    /// a time.
    fn scalar_path(&self, g: &mut Gen) {
        let (v, nr, map) = (self.v, self.nr, self.map);
        g.line(
            4,
            &format!(
                "if (i0 - {} < 0 || i0 + {} > nx) {{",
                self.vl * v,
                (1 + self.vh) * v
            ),
        );
        g.line(5, &format!("for (int r = 0; r < {nr}; ++r) {{"));
        g.line(6, "const int o = ob + r;");
        g.line(6, "if (o < olo || o >= ohi) continue;");
        for &off in &self.o_offs {
            g.line(
                6,
                &format!(
                    "const int {} = {map}(o {}, no);",
                    coord_name("o", off),
                    signed(off)
                ),
            );
        }
        g.line(6, "for (int m = mb; m < me; ++m) {");
        self.plane_maps(g, 7);
        g.line(
            7,
            &format!("for (int x = i0; x < min(i0 + {v}, ihi); ++x) {{"),
        );
        g.line(8, "if (x < ilo) continue;");
        for &off in &self.x_offs {
            g.line(
                8,
                &format!(
                    "const int {} = {map}(x {}, nx);",
                    coord_name("x", off),
                    signed(off)
                ),
            );
        }
        let (ma, oa) = (self.ma, self.oa);
        let scalar_load = |t: &Tap| {
            let i = self.idx(
                &coord_name("x", t.offset[0]),
                &coord_name("o", t.offset[oa]),
                &Self::mname(t.offset[ma]),
            );
            format!("__ldg(in + {i})")
        };
        let out_scalar = self.idx("x", "o", "m");
        let store_scalar = |o: usize| format!("out{o}[{out_scalar}]");
        g.sums(8, &scalar_load, &store_scalar);
        g.line(7, "}");
        g.line(6, "}");
        g.line(5, "}");
        g.line(5, "continue;");
        g.line(4, "}");
    }

    /// Row indices: own rows (queue rows) and halo rows, wrapped once per chunk.
    fn row_indices(&self, g: &mut Gen) {
        let any_map = match self.spec.boundary {
            Boundary::Periodic => "fd_periodic_any",
            Boundary::Neumann => "fd_neumann_any",
            Boundary::Dirichlet => "fd_dirichlet",
        };
        let mut row_ds: BTreeSet<i32> = (0..self.nr).collect();
        for &(d, _) in self.sources.keys() {
            row_ds.insert(d);
        }
        for &d in &row_ds {
            g.line(
                4,
                &format!(
                    "const int {} = {any_map}(ob {}, no);",
                    Self::row_var(d),
                    signed(d)
                ),
            );
        }
    }

    /// One vector of `vec` points at `at` into `dst[0..vec]`, zeros where `guard` fails.
    fn load_vec(&self, g: &mut Gen, indent: usize, dst: &str, at: &str, guard: Option<String>) {
        let (vt, ty) = (self.vt, self.ty);
        if let Some(gd) = &guard {
            g.line(indent, &format!("if {gd} {{"));
        }
        let ind = indent + guard.is_some() as usize;
        if self.p.vec == 1 {
            g.line(ind, &format!("{dst}[0] = __ldg(in + {at});"));
        } else {
            g.line(
                ind,
                &format!("{{ const {vt} t = __ldg(reinterpret_cast<const {vt}*>(in + {at}));"),
            );
            let comps = ["x", "y", "z", "w"];
            for (c, comp) in comps.iter().enumerate().take(self.p.vec as usize) {
                g.line(ind + 1, &format!("{dst}[{c}] = t.{comp};"));
            }
            g.line(ind, "}");
        }
        if guard.is_some() {
            g.line(indent, "} else {");
            for c in 0..self.v {
                g.line(indent + 1, &format!("{dst}[{c}] = ({ty})0;"));
            }
            g.line(indent, "}");
        }
    }

    /// Each own row's queue, filled with the march window of the chunk's first plane.
    fn queues(&self, g: &mut Gen) {
        let (nr, nq, v) = (self.nr, self.nq, self.v);
        g.line(4, &format!("{} q[{nr}][{nq}][{v}];", self.ty));
        for r in 0..nr {
            for t in 0..(nq as i32) {
                let at = self.idx(
                    "i0",
                    &Self::row_var(r),
                    &format!("{}(mb {}, nm)", self.map, signed(t - self.rml)),
                );
                self.load_vec(g, 4, &format!("q[{r}][{t}]"), &at, self.guard_for(r));
            }
        }
    }

    /// Software pipeline: every value a plane needs that is not in a queue (the front plane
    /// pushed after it, halo-row vectors, x sides at warp edges) lives in a per-plane buffer
    /// `b*[u]` that is refilled for plane m + U right after plane m is computed. Each thread
    /// thus keeps U planes of loads in flight while it computes: the latency of one plane's
    /// loads hides behind U - 1 planes of work instead of stalling every plane.
    fn buffers(&self, g: &mut Gen) {
        let (ty, u, v) = (self.ty, self.u, self.v);
        let ws: BTreeSet<i32> = self.sides.iter().map(|&(_, _, w)| w).collect();
        for &w in &ws {
            let xn = coord_name("xw", w);
            g.line(4, &format!("const int {xn}_raw = i0 + ({});", w * v));
            let wrapped = match self.spec.boundary {
                Boundary::Periodic => format!(
                    "{xn}_raw < 0 ? {xn}_raw + nx : ({xn}_raw >= nx ? {xn}_raw - nx : {xn}_raw)"
                ),
                _ => format!("{xn}_raw"),
            };
            g.line(4, &format!("const int {xn} = {wrapped};"));
            g.line(
                4,
                &format!("const bool {} = lane + ({w}) < 0 || lane + ({w}) > 31 || {xn}_raw < 0 || {xn}_raw >= nx;", coord_name("edge", w)),
            );
        }
        g.line(4, &format!("{ty} bf[{u}][{}][{v}];", self.nr));
        for &(d, om) in &self.halo {
            g.line(4, &format!("{ty} {}[{u}][{v}];", Self::hname(d, om)));
        }
        for &(d, om, w) in &self.sides {
            g.line(4, &format!("{ty} {}[{u}][{v}];", Self::ename(d, om, w)));
        }
    }

    /// Loads of everything plane `mv` needs into slot `slot` (both C expressions).
    fn fill(&self, g: &mut Gen, indent: usize, mv: &str, slot: &str) {
        let (map, rmh) = (self.map, self.rmh);
        g.line(indent, &format!("if ({mv} < me) {{"));
        let i = indent + 1;
        g.line(i, &format!("if ({mv} + 1 < me) {{"));
        for r in 0..self.nr {
            let at = self.idx(
                "i0",
                &Self::row_var(r),
                &format!("{map}({mv} + 1 + {rmh}, nm)"),
            );
            self.load_vec(
                g,
                i + 1,
                &format!("bf[{slot}][{r}]"),
                &at,
                self.guard_for(r),
            );
        }
        g.line(i, "}");
        for &(d, om) in &self.halo {
            let at = self.idx("i0", &Self::row_var(d), &self.plane_at(mv, om));
            let dst = format!("{}[{slot}]", Self::hname(d, om));
            self.load_vec(g, i, &dst, &at, self.guard_for(d));
        }
        for &(d, om, w) in &self.sides {
            let xn = coord_name("xw", w);
            g.line(i, &format!("if ({}) {{", coord_name("edge", w)));
            let at = self.idx(&xn, &Self::row_var(d), &self.plane_at(mv, om));
            let gd = self
                .dirichlet
                .then(|| format!("({xn}_raw >= 0 && {xn}_raw < nx && {})", Self::row_ok(d)));
            let dst = format!("{}[{slot}]", Self::ename(d, om, w));
            self.load_vec(g, i + 1, &dst, &at, gd);
            g.line(i, "}");
        }
        g.line(indent, "}");
    }

    /// Each row source's x window of plane `m` in a local array `s_*`: the centre from the
    /// queue or the halo buffer, the sides by shuffle (buffers at warp edges) or loads.
    fn plane_windows(&self, g: &mut Gen) {
        let (ty, v) = (self.ty, self.v);
        for (&(d, om), &(wl, wh)) in &self.windows {
            // Points of the window that some tap reads: x offsets mn ..= v − 1 + mx from i0.
            // Shuffles of the others would be dead, but ptxas keeps every SHFL.
            let (mn, mx) = self.sources[&(d, om)];
            let needed = |w: i32, c: usize| (mn..=v - 1 + mx).contains(&(w * v + c as i32));
            let s = Self::sname(d, om);
            g.line(5, &format!("{ty} {s}[{}];", ((wl + 1 + wh) * v) as usize));
            let centre = (wl * v) as usize;
            for c in 0..v as usize {
                let from = if self.own(d) {
                    format!("q[{d}][{}][{c}]", om + self.rml)
                } else {
                    format!("{}[u][{c}]", Self::hname(d, om))
                };
                g.line(5, &format!("{s}[{}] = {from};", centre + c));
            }
            for w in (-wl..=wh).filter(|&w| w != 0) {
                let base = ((w + wl) * v) as usize;
                if self.shuffle {
                    let (f, dl) = if w < 0 {
                        ("__shfl_up_sync", -w)
                    } else {
                        ("__shfl_down_sync", w)
                    };
                    for c in (0..v as usize).filter(|&c| needed(w, c)) {
                        g.line(
                            5,
                            &format!(
                                "{s}[{}] = {f}(fd_mask, {s}[{}], {dl});",
                                base + c,
                                centre + c
                            ),
                        );
                    }
                    g.line(5, &format!("if ({}) {{", coord_name("edge", w)));
                    for c in (0..v as usize).filter(|&c| needed(w, c)) {
                        g.line(
                            6,
                            &format!("{s}[{}] = {}[u][{c}];", base + c, Self::ename(d, om, w)),
                        );
                    }
                    g.line(5, "}");
                    continue;
                }
                self.side_load(g, &format!("({s} + {base})"), d, om, w);
            }
        }
    }

    /// The x side `w` of row source (d, om) loaded inline (no shuffle).
    fn side_load(&self, g: &mut Gen, dst: &str, d: i32, om: i32, w: i32) {
        g.line(5, "{");
        g.line(6, &format!("int xw = i0 + ({});", w * self.v));
        let at = self.idx("xw", &Self::row_var(d), &Self::mname(om));
        match self.spec.boundary {
            Boundary::Periodic => {
                g.line(6, "xw = xw < 0 ? xw + nx : (xw >= nx ? xw - nx : xw);");
                self.load_vec(g, 6, dst, &at, None);
            }
            Boundary::Dirichlet => {
                let gd = format!("(xw >= 0 && xw < nx && {})", Self::row_ok(d));
                self.load_vec(g, 6, dst, &at, Some(gd));
            }
            Boundary::Neumann => self.load_vec(g, 6, dst, &at, None),
        }
        g.line(5, "}");
    }

    /// Row `r`'s sums, output by output, and their stores.
    fn sums_and_stores(&self, g: &mut Gen, r: i32) {
        let (ty, v) = (self.ty, self.v);
        g.line(5, &format!("if (ob + {r} >= olo && ob + {r} < ohi) {{"));
        for (o, stencil) in self.spec.stencils.iter().enumerate() {
            g.line(6, &format!("{ty} acc{o}[{v}];"));
            g.line(6, "#pragma unroll");
            g.line(6, &format!("for (int l = 0; l < {v}; ++l) {{"));
            g.line(7, &format!("{ty} a = ({ty})0;"));
            for (ti, t) in stencil.taps().iter().enumerate() {
                let w = g.weight(o, ti);
                let key = (r + t.offset[self.oa], t.offset[self.ma]);
                let (wl, _) = self.windows[&key];
                g.line(
                    7,
                    &format!(
                        "a += {w} * {}[l + {}];",
                        Self::sname(key.0, key.1),
                        wl * v + t.offset[0]
                    ),
                );
            }
            g.line(7, &format!("acc{o}[l] = a;"));
            g.line(6, "}");
            let orow = format!("ob + {r}");
            let at = self.idx("i0", &orow, "m");
            if self.dirichlet {
                // Lanes outside the interior are computed from zeros and must not be stored.
                g.line(6, &format!("if (i0 >= ilo && i0 + {v} <= ihi) {{"));
                self.vector_store(g, 7, o, &at);
                g.line(6, "} else {");
                g.line(7, "#pragma unroll");
                g.line(7, &format!("for (int l = 0; l < {v}; ++l) {{"));
                let at_l = self.idx("i0 + l", &orow, "m");
                g.line(
                    8,
                    &format!("if (i0 + l >= ilo && i0 + l < ihi) out{o}[{at_l}] = acc{o}[l];"),
                );
                g.line(7, "}");
                g.line(6, "}");
            } else {
                self.vector_store(g, 6, o, &at);
            }
        }
        g.line(5, "}");
    }

    /// Output `o`'s vector at `at`, streaming or not.
    fn vector_store(&self, g: &mut Gen, indent: usize, o: usize, at: &str) {
        let (p, vt) = (&self.p, self.vt);
        if p.vec == 1 {
            if p.streaming {
                g.line(indent, &format!("__stcs(out{o} + {at}, acc{o}[0]);"));
            } else {
                g.line(indent, &format!("out{o}[{at}] = acc{o}[0];"));
            }
        } else {
            let parts: Vec<String> = (0..p.vec as usize)
                .map(|c| format!("acc{o}[{c}]"))
                .collect();
            let make = format!("make_{vt}({})", parts.join(", "));
            if p.streaming {
                g.line(
                    indent,
                    &format!("__stcs(reinterpret_cast<{vt}*>(out{o} + {at}), {make});"),
                );
            } else {
                g.line(
                    indent,
                    &format!("*reinterpret_cast<{vt}*>(out{o} + {at}) = {make};"),
                );
            }
        }
    }

    /// Advance every row's queue by one plane.
    fn advance(&self, g: &mut Gen) {
        let (nq, v) = (self.nq, self.v);
        for r in 0..self.nr {
            for t in 0..nq - 1 {
                for c in 0..v {
                    g.line(5, &format!("q[{r}][{t}][{c}] = q[{r}][{}][{c}];", t + 1));
                }
            }
            for c in 0..v {
                g.line(5, &format!("q[{r}][{}][{c}] = bf[u][{r}][{c}];", nq - 1));
            }
        }
    }
}
