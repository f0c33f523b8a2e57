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

pub(crate) fn zmarch(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    p: ZMarchParams,
    march_z: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let ty = g.ty;
    let map = g.map;
    let v = p.vec as i32;
    let nr = p.rows.max(1) as i32;
    // (march axis, other axis)
    let axes = MarchAxes::new(march_z);
    let (ma, oa) = (axes.ma, axes.oa);
    let (lo, hi) = g.reach();
    let (rml, rmh) = (lo[ma] as i32, hi[ma] as i32);
    let idx = |x: &str, o: &str, m: &str| axes.idx(x, o, m);
    let neumann = spec.boundary == Boundary::Neumann;
    let dirichlet = spec.boundary == Boundary::Dirichlet;
    let shuffle = p.bx.is_multiple_of(32) && !neumann;
    let all_taps: Vec<Tap> = spec
        .stencils
        .iter()
        .flat_map(|s| s.taps().iter().copied())
        .collect();
    let threads = p.bx * p.by;
    g.march_prologue(axes, threads);
    if shuffle {
        g.line(1, "const int lane = threadIdx.x & 31;");
    }
    let vl = (lo[0] as i32 + v - 1) / v;
    let vh = (hi[0] as i32 + v - 1) / v;
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
    let mname = |off: i32| coord_name("m", off);
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
    let plane_maps = |g: &mut Gen, indent: usize| {
        for &off in &m_offs {
            g.line(
                indent,
                &format!("const int {} = {map}(m {}, nm);", mname(off), signed(off)),
            );
        }
    };
    // Scalar path (Neumann x edges only): every read mapped, one point at a time.
    if neumann {
        g.line(
            4,
            &format!("if (i0 - {} < 0 || i0 + {} > nx) {{", vl * v, (1 + vh) * v),
        );
        g.line(5, &format!("for (int r = 0; r < {nr}; ++r) {{"));
        g.line(6, "const int o = ob + r;");
        g.line(6, "if (o < olo || o >= ohi) continue;");
        for &off in &o_offs {
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
        plane_maps(&mut g, 7);
        g.line(
            7,
            &format!("for (int x = i0; x < min(i0 + {v}, ihi); ++x) {{"),
        );
        g.line(8, "if (x < ilo) continue;");
        for &off in &x_offs {
            g.line(
                8,
                &format!(
                    "const int {} = {map}(x {}, nx);",
                    coord_name("x", off),
                    signed(off)
                ),
            );
        }
        let scalar_load = |t: &Tap| {
            let i = idx(
                &coord_name("x", t.offset[0]),
                &coord_name("o", t.offset[oa]),
                &mname(t.offset[ma]),
            );
            format!("__ldg(in + {i})")
        };
        let out_scalar = idx("x", "o", "m");
        let store_scalar = |o: usize| format!("out{o}[{out_scalar}]");
        g.sums(8, &scalar_load, &store_scalar);
        g.line(7, "}");
        g.line(6, "}");
        g.line(5, "}");
        g.line(5, "continue;");
        g.line(4, "}");
    }
    if shuffle {
        g.line(4, "const unsigned fd_mask = __activemask();");
    }
    // Row sources: (d, om) with d the row offset from ob; rows 0..nr-1 are this thread's own
    // (their queues), the others come through the cache. Each source has an x window of
    // whole vectors around i0.
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
    // Row indices: own rows (queue rows) and halo rows, wrapped once per chunk.
    let any_map = match spec.boundary {
        Boundary::Periodic => "fd_periodic_any",
        Boundary::Neumann => "fd_neumann_any",
        Boundary::Dirichlet => "fd_dirichlet",
    };
    let row_var = |d: i32| coord_name("od", d);
    let mut row_ds: BTreeSet<i32> = (0..nr).collect();
    for &(d, _) in sources.keys() {
        row_ds.insert(d);
    }
    for &d in &row_ds {
        g.line(
            4,
            &format!(
                "const int {} = {any_map}(ob {}, no);",
                row_var(d),
                signed(d)
            ),
        );
    }
    // A row exists when its index is inside the grid (Dirichlet rows outside read zeros).
    let row_ok = |d: i32| format!("({v} >= 0 && {v} < no)", v = row_var(d));
    let vt = vec_type(spec.precision, p.vec);
    let load_vec = |g: &mut Gen, indent: usize, dst: &str, at: &str, guard: Option<String>| {
        if let Some(gd) = &guard {
            g.line(indent, &format!("if {gd} {{"));
        }
        let ind = indent + guard.is_some() as usize;
        if p.vec == 1 {
            g.line(ind, &format!("{dst}[0] = __ldg(in + {at});"));
        } else {
            g.line(
                ind,
                &format!("{{ const {vt} t = __ldg(reinterpret_cast<const {vt}*>(in + {at}));"),
            );
            let comps = ["x", "y", "z", "w"];
            for (c, comp) in comps.iter().enumerate().take(p.vec as usize) {
                g.line(ind + 1, &format!("{dst}[{c}] = t.{comp};"));
            }
            g.line(ind, "}");
        }
        if guard.is_some() {
            g.line(indent, "} else {");
            for c in 0..v {
                g.line(indent + 1, &format!("{dst}[{c}] = ({ty})0;"));
            }
            g.line(indent, "}");
        }
    };
    let guard_for = |d: i32| -> Option<String> { dirichlet.then(|| row_ok(d)) };
    let nq = (rml + rmh + 1) as usize;
    g.line(4, &format!("{ty} q[{nr}][{nq}][{v}];"));
    for r in 0..nr {
        for t in 0..(nq as i32) {
            let at = idx(
                "i0",
                &row_var(r),
                &format!("{map}(mb {}, nm)", signed(t - rml)),
            );
            load_vec(&mut g, 4, &format!("q[{r}][{t}]"), &at, guard_for(r));
        }
    }
    // Software pipeline: every value a plane needs that is not in a queue (the front plane
    // pushed after it, halo-row vectors, x sides at warp edges) lives in a per-plane buffer
    // `b*[u]` that is refilled for plane m + U right after plane m is computed. Each thread
    // thus keeps U planes of loads in flight while it computes: the latency of one plane's
    // loads hides behind U - 1 planes of work instead of stalling every plane.
    let u = p.unroll.max(1);
    let own = |d: i32| (0..nr).contains(&d);
    let halo: Vec<(i32, i32)> = windows.keys().copied().filter(|&(d, _)| !own(d)).collect();
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
    let ws: BTreeSet<i32> = sides.iter().map(|&(_, _, w)| w).collect();
    for &w in &ws {
        let xn = coord_name("xw", w);
        g.line(4, &format!("const int {xn}_raw = i0 + ({});", w * v));
        let wrapped = match spec.boundary {
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
    let hname = |d: i32, om: i32| format!("bh_{}_{}", coord_name("d", d), coord_name("m", om));
    let ename = |d: i32, om: i32, w: i32| {
        format!(
            "be_{}_{}_{}",
            coord_name("d", d),
            coord_name("m", om),
            coord_name("w", w)
        )
    };
    let plane_at = |m: &str, om: i32| {
        if om == 0 {
            m.to_string()
        } else {
            format!("{map}({m} {}, nm)", signed(om))
        }
    };
    g.line(4, &format!("{ty} bf[{u}][{nr}][{v}];"));
    for &(d, om) in &halo {
        g.line(4, &format!("{ty} {}[{u}][{v}];", hname(d, om)));
    }
    for &(d, om, w) in &sides {
        g.line(4, &format!("{ty} {}[{u}][{v}];", ename(d, om, w)));
    }
    // Loads of everything plane `mv` needs into slot `slot` (both C expressions).
    let fill = |g: &mut Gen, indent: usize, mv: &str, slot: &str| {
        g.line(indent, &format!("if ({mv} < me) {{"));
        let i = indent + 1;
        g.line(i, &format!("if ({mv} + 1 < me) {{"));
        for r in 0..nr {
            let at = idx("i0", &row_var(r), &format!("{map}({mv} + 1 + {rmh}, nm)"));
            load_vec(g, i + 1, &format!("bf[{slot}][{r}]"), &at, guard_for(r));
        }
        g.line(i, "}");
        for &(d, om) in &halo {
            let at = idx("i0", &row_var(d), &plane_at(mv, om));
            load_vec(
                g,
                i,
                &format!("{}[{slot}]", hname(d, om)),
                &at,
                guard_for(d),
            );
        }
        for &(d, om, w) in &sides {
            let xn = coord_name("xw", w);
            g.line(i, &format!("if ({}) {{", coord_name("edge", w)));
            let at = idx(&xn, &row_var(d), &plane_at(mv, om));
            let gd =
                dirichlet.then(|| format!("({xn}_raw >= 0 && {xn}_raw < nx && {})", row_ok(d)));
            load_vec(g, i + 1, &format!("{}[{slot}]", ename(d, om, w)), &at, gd);
            g.line(i, "}");
        }
        g.line(indent, "}");
    };
    g.line(4, "#pragma unroll");
    g.line(4, &format!("for (int u = 0; u < {u}; ++u) {{"));
    fill(&mut g, 5, "mb + u", "u");
    g.line(4, "}");
    g.line(4, &format!("for (int mu = mb; mu < me; mu += {u}) {{"));
    g.line(5, "#pragma unroll");
    g.line(5, &format!("for (int u = 0; u < {u}; ++u) {{"));
    g.line(5, "const int m = mu + u;");
    g.line(5, "if (m < me) {");
    if !shuffle {
        plane_maps(&mut g, 5);
    }
    let sname = |d: i32, om: i32| format!("s_{}_{}", coord_name("d", d), coord_name("m", om));
    for (&(d, om), &(wl, wh)) in &windows {
        // Points of the window that some tap reads: x offsets mn ..= v − 1 + mx from i0.
        // Shuffles of the others would be dead, but ptxas keeps every SHFL (session 6).
        let (mn, mx) = sources[&(d, om)];
        let needed = |w: i32, c: usize| (mn..=v - 1 + mx).contains(&(w * v + c as i32));
        let s = sname(d, om);
        g.line(5, &format!("{ty} {s}[{}];", ((wl + 1 + wh) * v) as usize));
        let centre = (wl * v) as usize;
        for c in 0..v as usize {
            let from = if own(d) {
                format!("q[{d}][{}][{c}]", om + rml)
            } else {
                format!("{}[u][{c}]", hname(d, om))
            };
            g.line(5, &format!("{s}[{}] = {from};", centre + c));
        }
        for w in (-wl..=wh).filter(|&w| w != 0) {
            let base = ((w + wl) * v) as usize;
            if shuffle {
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
                        &format!("{s}[{}] = {}[u][{c}];", base + c, ename(d, om, w)),
                    );
                }
                g.line(5, "}");
                continue;
            }
            let dst = format!("({s} + {base})");
            g.line(5, "{");
            g.line(6, &format!("int xw = i0 + ({});", w * v));
            let at = idx("xw", &row_var(d), &mname(om));
            match spec.boundary {
                Boundary::Periodic => {
                    g.line(6, "xw = xw < 0 ? xw + nx : (xw >= nx ? xw - nx : xw);");
                    load_vec(&mut g, 6, &dst, &at, None);
                }
                Boundary::Dirichlet => {
                    let gd = format!("(xw >= 0 && xw < nx && {})", row_ok(d));
                    load_vec(&mut g, 6, &dst, &at, Some(gd));
                }
                Boundary::Neumann => load_vec(&mut g, 6, &dst, &at, None),
            }
            g.line(5, "}");
        }
    }
    // Sums and stores, row by row.
    for r in 0..nr {
        g.line(5, &format!("if (ob + {r} >= olo && ob + {r} < ohi) {{"));
        for (o, stencil) in spec.stencils.iter().enumerate() {
            g.line(6, &format!("{ty} acc{o}[{v}];"));
            g.line(6, "#pragma unroll");
            g.line(6, &format!("for (int l = 0; l < {v}; ++l) {{"));
            g.line(7, &format!("{ty} a = ({ty})0;"));
            for (ti, t) in stencil.taps().iter().enumerate() {
                let w = g.weight(o, ti);
                let key = (r + t.offset[oa], t.offset[ma]);
                let (wl, _) = windows[&key];
                g.line(
                    7,
                    &format!(
                        "a += {w} * {}[l + {}];",
                        sname(key.0, key.1),
                        wl * v + t.offset[0]
                    ),
                );
            }
            g.line(7, &format!("acc{o}[l] = a;"));
            g.line(6, "}");
            let orow = format!("ob + {r}");
            let at = idx("i0", &orow, "m");
            let vector_store = |g: &mut Gen, indent: usize| {
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
            };
            if dirichlet {
                // Lanes outside the interior are computed from zeros and must not be stored.
                g.line(6, &format!("if (i0 >= ilo && i0 + {v} <= ihi) {{"));
                vector_store(&mut g, 7);
                g.line(6, "} else {");
                g.line(7, "#pragma unroll");
                g.line(7, &format!("for (int l = 0; l < {v}; ++l) {{"));
                let at_l = idx("i0 + l", &orow, "m");
                g.line(
                    8,
                    &format!("if (i0 + l >= ilo && i0 + l < ihi) out{o}[{at_l}] = acc{o}[l];"),
                );
                g.line(7, "}");
                g.line(6, "}");
            } else {
                vector_store(&mut g, 6);
            }
        }
        g.line(5, "}");
    }
    // Advance every row's queue by one plane.
    for r in 0..nr {
        for t in 0..nq - 1 {
            for c in 0..v {
                g.line(5, &format!("q[{r}][{t}][{c}] = q[{r}][{}][{c}];", t + 1));
            }
        }
        for c in 0..v {
            g.line(5, &format!("q[{r}][{}][{c}] = bf[u][{r}][{c}];", nq - 1));
        }
    }
    fill(&mut g, 5, &format!("m + {u}"), "u");
    g.line(5, "}");
    g.line(5, "}");
    g.close_from(4);
    src.block = [p.bx, p.by, 1];
    src.grid_map = [(0, p.bx * p.vec), (oa, p.by * nr as u32), (ma, p.chunk)];
    g.finish(src)
}
