//! 2.5-D marching: each thread owns `vec` consecutive x points of one row and marches along
//! the last axis (z in 3-D, y in 2-D), keeping that axis's neighbours in a register queue;
//! the other neighbours come through the read-only cache as aligned 16-byte (or 8-byte)
//! vectors. Threads whose x neighbourhood leaves the grid take a scalar path that maps every
//! read through the boundary.

use crate::codegen::{coord_name, CudaSource, Gen, InputKind, KernelSpec};
use fdlab_core::{Boundary, Precision, Tap};
use std::collections::BTreeSet;

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
}

/// Which axis marches: the last axis any stencil uses (z if a 3-D stencil touches z... or the
/// grid is 3-D), `dim3` says whether the grid is 3-D.
fn axes(dim3: bool) -> (usize, usize) {
    // (march axis, other axis)
    if dim3 {
        (2, 1)
    } else {
        (1, 2)
    }
}

fn vec_type(p: Precision, v: u32) -> &'static str {
    match (p, v) {
        (Precision::F32, 2) => "float2",
        (Precision::F32, 4) => "float4",
        (Precision::F64, 2) => "double2",
        _ => "",
    }
}

pub(crate) fn zmarch(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    p: ZMarchParams,
    dim3: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let ty = g.ty;
    let v = p.vec as i32;
    let (ma, oa) = axes(dim3);
    let (lo, hi) = g.reach();
    let (rml, rmh) = (lo[ma] as i32, hi[ma] as i32);
    let n = ["nx", "ny", "nz"];
    // Index expression from (x, other, march) coordinates.
    let idx = |x: &str, o: &str, m: &str| -> String {
        let mut c = ["", "", ""];
        c[0] = x;
        c[oa] = o;
        c[ma] = m;
        format!("FD_IDX({}, {}, {})", c[0], c[1], c[2])
    };
    let threads = p.bx * p.by;
    g.signature(InputKind::Pointer, threads);
    g.region(1);
    let ln = ["i", "j", "k"];
    g.line(1, &format!("const int nm = {}, no = {};", n[ma], n[oa]));
    g.line(
        1,
        &format!(
            "const int mlo = {}lo, mhi = {}hi, olo = {}lo, ohi = {}hi;",
            ln[ma], ln[ma], ln[oa], ln[oa]
        ),
    );
    // Rounded-up x reach in whole vectors.
    let vl = (lo[0] as i32 + v - 1) / v;
    let vh = (hi[0] as i32 + v - 1) / v;
    g.line(
        1,
        &format!(
            "for (int cm = blockIdx.z * {}; cm < nm; cm += gridDim.z * {}) {{",
            p.chunk, p.chunk
        ),
    );
    g.line(
        2,
        &format!(
            "for (int o = blockIdx.y * {} + threadIdx.y; o < no; o += gridDim.y * {}) {{",
            p.by, p.by
        ),
    );
    g.line(3, "if (o < olo || o >= ohi) continue;");
    g.line(3, &format!("for (int i0 = (blockIdx.x * {} + threadIdx.x) * {v}; i0 < nx; i0 += gridDim.x * {}) {{", p.bx, p.bx * p.vec));
    g.line(
        4,
        &format!(
            "const int mb = max(cm, mlo), me = min(cm + {}, mhi);",
            p.chunk
        ),
    );
    g.line(4, "if (mb >= me) continue;");
    // Mapped other-axis rows.
    let oname = |off: i32| coord_name("o", off);
    let mut o_offs: BTreeSet<i32> = BTreeSet::new();
    let mut all_taps: Vec<Tap> = vec![];
    for s in spec.stencils {
        for t in s.taps() {
            all_taps.push(*t);
            if t.offset[oa] != 0 {
                o_offs.insert(t.offset[oa]);
            }
        }
    }
    let map = g.map;
    for &off in &o_offs {
        g.line(
            4,
            &format!(
                "const int {} = {map}(o {} {}, no);",
                oname(off),
                if off < 0 { '-' } else { '+' },
                off.abs()
            ),
        );
    }
    // Scalar path for threads whose vector neighbourhood leaves the grid or the region.
    g.line(
        4,
        &format!(
            "if (i0 - {} < 0 || i0 + {} > nx || i0 < ilo || i0 + {v} > ihi) {{",
            vl * v,
            (1 + vh) * v
        ),
    );
    g.line(5, "for (int m = mb; m < me; ++m) {");
    let mut m_offs: BTreeSet<i32> = BTreeSet::new();
    let mut x_offs: BTreeSet<i32> = BTreeSet::new();
    for t in &all_taps {
        if t.offset[ma] != 0 {
            m_offs.insert(t.offset[ma]);
        }
        if t.offset[0] != 0 {
            x_offs.insert(t.offset[0]);
        }
    }
    let mname = |off: i32| coord_name("m", off);
    let xname = |off: i32| coord_name("x", off);
    for &off in &m_offs {
        g.line(
            6,
            &format!(
                "const int {} = {map}(m {} {}, nm);",
                mname(off),
                if off < 0 { '-' } else { '+' },
                off.abs()
            ),
        );
    }
    g.line(
        6,
        &format!("for (int x = i0; x < min(i0 + {v}, ihi); ++x) {{"),
    );
    g.line(7, "if (x < ilo) continue;");
    for &off in &x_offs {
        g.line(
            7,
            &format!(
                "const int {} = {map}(x {} {}, nx);",
                xname(off),
                if off < 0 { '-' } else { '+' },
                off.abs()
            ),
        );
    }
    let scalar_load = |t: &Tap| {
        let i = idx(
            &xname(t.offset[0]),
            &oname(t.offset[oa]),
            &mname(t.offset[ma]),
        );
        format!("__ldg(in + {i})")
    };
    let out_scalar = idx("x", "o", "m");
    let store_scalar = |o: usize| format!("out{o}[{out_scalar}]");
    g.sums(7, &scalar_load, &store_scalar);
    g.line(6, "}");
    g.line(5, "}");
    g.line(5, "continue;");
    g.line(4, "}");
    // Vector path. Rows needed from the cache: every (other, march) offset pair except the
    // pure march column, which the queue holds; the centre row also needs its side vectors
    // when some tap has an x offset there.
    let nq = (rml + rmh + 1) as usize;
    g.line(4, &format!("{ty} q[{nq}][{v}];"));
    let vt = vec_type(spec.precision, p.vec);
    let load_vec = |g: &mut Gen, indent: usize, dst: &str, at: &str| {
        if p.vec == 1 {
            g.line(indent, &format!("{dst}[0] = __ldg(in + {at});"));
        } else {
            g.line(
                indent,
                &format!("{{ const {vt} t = __ldg(reinterpret_cast<const {vt}*>(in + {at}));"),
            );
            let comps = ["x", "y", "z", "w"];
            for c in 0..p.vec as usize {
                g.line(indent + 1, &format!("{dst}[{c}] = t.{};", comps[c]));
            }
            g.line(indent, "}");
        }
    };
    // Queue fill: planes mb − rml … mb + rmh − 1.
    for t in 0..(nq - 1) {
        let off = t as i32 - rml;
        let at = idx(
            "i0",
            "o",
            &format!(
                "{map}(mb {} {}, nm)",
                if off < 0 { '-' } else { '+' },
                off.abs()
            ),
        );
        load_vec(&mut g, 4, &format!("q[{t}]"), &at);
    }
    let front = idx("i0", "o", &format!("{map}(mb + {rmh}, nm)"));
    load_vec(&mut g, 4, &format!("q[{}]", nq - 1), &front);
    // March `unroll` planes per iteration: their front planes are loaded together first, so
    // each thread has `unroll` vectors in flight (bytes in flight are what feed HBM).
    let u = p.unroll.max(1);
    g.line(4, &format!("for (int mu = mb; mu < me; mu += {u}) {{"));
    g.line(5, &format!("{ty} f[{u}][{v}];"));
    g.line(5, "#pragma unroll");
    g.line(5, &format!("for (int u = 0; u < {u}; ++u) {{"));
    g.line(6, "if (mu + 1 + u < me) {");
    let next = idx("i0", "o", &format!("{map}(mu + 1 + u + {rmh}, nm)"));
    load_vec(&mut g, 7, "f[u]", &next);
    g.line(6, "}");
    g.line(5, "}");
    g.line(5, "#pragma unroll");
    g.line(5, &format!("for (int u = 0; u < {u}; ++u) {{"));
    g.line(5, "const int m = mu + u;");
    g.line(5, "if (m < me) {");
    // Rows (other offset, march offset) read through the cache, with their x windows.
    let mut rows: BTreeSet<(i32, i32)> = BTreeSet::new();
    for t in &all_taps {
        let column = t.offset[0] == 0 && t.offset[oa] == 0;
        if !column {
            rows.insert((t.offset[oa], t.offset[ma]));
        }
    }
    for &off in &m_offs {
        g.line(
            5,
            &format!(
                "const int {} = {map}(m {} {}, nm);",
                mname(off),
                if off < 0 { '-' } else { '+' },
                off.abs()
            ),
        );
    }
    // Each row loads only the vectors its taps reach: window −wl … wh around i0.
    let window = |oo: i32, om: i32| -> (i32, i32) {
        let (mut mn, mut mx) = (0, 0);
        for t in &all_taps {
            if t.offset[oa] == oo && t.offset[ma] == om {
                mn = mn.min(t.offset[0]);
                mx = mx.max(t.offset[0]);
            }
        }
        ((-mn + v - 1) / v, (mx + v - 1) / v)
    };
    let rname = |oo: i32, om: i32| format!("r_{}_{}", coord_name("o", oo), coord_name("m", om));
    for &(oo, om) in &rows {
        let r = rname(oo, om);
        let (wl, wh) = window(oo, om);
        g.line(5, &format!("{ty} {r}[{}];", ((wl + 1 + wh) * v) as usize));
        for w in -wl..=wh {
            let centre_from_queue = oo == 0 && w == 0;
            let dst = format!("{r} + {}", ((w + wl) * v) as usize);
            if centre_from_queue {
                for c in 0..v {
                    g.line(
                        5,
                        &format!("{r}[{}] = q[{}][{c}];", (wl * v + c) as usize, om + rml),
                    );
                }
            } else {
                let x = if w == 0 {
                    "i0".to_string()
                } else {
                    format!("i0 {} {}", if w < 0 { '-' } else { '+' }, (w * v).abs())
                };
                let at = idx(&x, &oname(oo), &mname(om));
                load_vec(&mut g, 5, &format!("({dst})"), &at);
            }
        }
    }
    // Sums per lane.
    let ty2 = ty;
    for o in 0..spec.stencils.len() {
        let taps = spec.stencils[o].taps().to_vec();
        g.line(5, &format!("{ty2} acc{o}[{v}];"));
        g.line(5, "#pragma unroll");
        g.line(5, &format!("for (int l = 0; l < {v}; ++l) {{"));
        g.line(6, &format!("{ty2} a = ({ty2})0;"));
        for (ti, t) in taps.iter().enumerate() {
            let w = g.weight(o, ti);
            let val = if t.offset[0] == 0 && t.offset[oa] == 0 {
                format!("q[{}][l]", t.offset[ma] + rml)
            } else {
                let (wl, _) = window(t.offset[oa], t.offset[ma]);
                format!(
                    "{}[l + {}]",
                    rname(t.offset[oa], t.offset[ma]),
                    wl * v + t.offset[0]
                )
            };
            g.line(6, &format!("a += {w} * {val};"));
        }
        g.line(6, &format!("acc{o}[l] = a;"));
        g.line(5, "}");
        let at = idx("i0", "o", "m");
        if p.vec == 1 {
            if p.streaming {
                g.line(5, &format!("__stcs(out{o} + {at}, acc{o}[0]);"));
            } else {
                g.line(5, &format!("out{o}[{at}] = acc{o}[0];"));
            }
        } else {
            let comps = ["x", "y", "z", "w"];
            let parts: Vec<String> = (0..p.vec as usize)
                .map(|c| format!("acc{o}[{c}]"))
                .collect();
            let make = format!("make_{vt}({})", parts.join(", "));
            let _ = comps;
            if p.streaming {
                g.line(
                    5,
                    &format!("__stcs(reinterpret_cast<{vt}*>(out{o} + {at}), {make});"),
                );
            } else {
                g.line(
                    5,
                    &format!("*reinterpret_cast<{vt}*>(out{o} + {at}) = {make};"),
                );
            }
        }
    }
    // Shift the queue.
    for t in 0..nq - 1 {
        for c in 0..v {
            g.line(5, &format!("q[{t}][{c}] = q[{}][{c}];", t + 1));
        }
    }
    for c in 0..v {
        g.line(5, &format!("q[{}][{c}] = f[u][{c}];", nq - 1));
    }
    g.line(5, "}");
    g.line(5, "}");
    g.line(4, "}");
    g.line(3, "}");
    g.line(2, "}");
    g.line(1, "}");
    g.line(0, "}");
    src.block = [p.bx, p.by, 1];
    src.grid_map = [(0, p.bx * p.vec), (oa, p.by), (ma, p.chunk)];
    let _ = Boundary::Periodic;
    g.finish(src)
}
