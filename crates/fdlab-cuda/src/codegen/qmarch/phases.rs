//! The phases both queue marches share: the tile geometry, the slot layout, the queue shift,
//! the in-plane windows, the sums and the stores.

use crate::codegen::emit::{coord_name, vec_type, Gen, MarchAxes};
use crate::codegen::source::{CudaSource, KernelSpec};
use fdlab_core::Stencil;
use std::collections::BTreeMap;

/// Parameters of a queue-marching kernel.
#[derive(Debug, Clone, Copy)]
pub struct QMarchParams {
    /// Threads along x.
    pub bx: u32,
    /// Threads along the other axis.
    pub by: u32,
    /// Rows of the other axis per thread.
    pub rows: u32,
    /// Planes per block along the march.
    pub chunk: u32,
    /// x points per thread (1, 2 or 4, at most 16 bytes).
    pub vec: u32,
    /// 0: planes through registers; N ≥ 1: TMA tensor copies, N planes in flight beyond the
    /// queue's front (Dirichlet only; see the `tma` module).
    pub tma: u32,
    /// With `tma`: a queue of partial sums, so the ring holds only the planes in flight.
    pub accumulate: bool,
    /// With `tma` and `accumulate`: split slots (`-wNa`), the x halo apart from the interior
    /// and its other-axis halo rows, each piece one tensor copy that wraps on its own.
    pub split: bool,
    /// With `accumulate`: planes per iteration of the march, written out (1: one).
    pub unroll: u32,
    /// Streaming (evict-first) vector stores of the outputs.
    pub streaming: bool,
}

/// The tile geometry both queue marches share: 16-byte granules, the tile with its halo, the
/// march window.
#[derive(Clone, Copy)]
pub(super) struct Tile {
    /// Scalar type, and the vector type of a thread's `vec` points.
    pub(super) ty: &'static str,
    pub(super) vt: &'static str,
    /// Bytes per element; elements per 16-byte granule.
    pub(super) size: u32,
    pub(super) vl: u32,
    pub(super) axes: MarchAxes,
    /// x halo (rounded up to granules), other-axis halo, march-axis reach below and above.
    pub(super) hxl: u32,
    pub(super) hxr: u32,
    pub(super) hyl: u32,
    pub(super) hyh: u32,
    pub(super) rzl: u32,
    pub(super) rzh: u32,
    /// Planes in the queue: `rzl + 1 + rzh`.
    pub(super) window: u32,
    /// Tile points along x and the other axis; the slot's width and height with halo.
    pub(super) tx: u32,
    pub(super) tyr: u32,
    pub(super) w: u32,
    pub(super) h: u32,
    pub(super) threads: u32,
}

impl Tile {
    pub(super) fn new(g: &Gen<'_>, p: &QMarchParams, march_z: bool) -> Tile {
        let ty = g.ty;
        let size = g.spec.precision.size() as u32;
        let vl = 16 / size;
        let vt = vec_type(g.spec.precision, p.vec);
        let axes = MarchAxes::new(march_z);
        let (lo, hi) = g.reach();
        let round = |h: usize| (h as u32).div_ceil(vl) * vl;
        let (hxl, hxr) = (round(lo[0]), round(hi[0]));
        let (hyl, hyh) = (lo[axes.oa] as u32, hi[axes.oa] as u32);
        let (rzl, rzh) = (lo[axes.ma] as u32, hi[axes.ma] as u32);
        let (tx, tyr) = (p.bx * p.vec, p.by * p.rows);
        Tile {
            ty,
            vt: if vt.is_empty() { ty } else { vt },
            size,
            vl,
            axes,
            hxl,
            hxr,
            hyl,
            hyh,
            rzl,
            rzh,
            window: rzl + rzh + 1,
            tx,
            tyr,
            w: hxl + tx + hxr,
            h: hyl + tyr + hyh,
            threads: p.bx * p.by,
        }
    }
}

/// Where a slot of the TMA-fed queue march keeps each point of the tile and its halo.
#[derive(Clone, Copy)]
pub(super) enum Layout {
    /// One array of the tile with its halo, `w` wide: the halo at `hyl` rows and `hxl`
    /// columns from the interior's corner.
    Pitched { w: u32, hyl: u32, hxl: u32 },
    /// The interior columns, `tx` wide, with the other-axis halo rows (`hyl` above, the rest
    /// below); the `hxl` left and `hxr` right halo columns of the interior rows in arrays at
    /// `left` and `right`; `len` elements in all.
    Split {
        tx: u32,
        hyl: u32,
        hxl: u32,
        hxr: u32,
        left: u32,
        right: u32,
        len: u32,
    },
}

impl Layout {
    /// The pointer `c` to the thread's first point of row `r` in slot `s`.
    pub(super) fn centre(&self, rows: u32, r: u32, v: u32) -> String {
        let (w, hyl, hxl) = match *self {
            Layout::Pitched { w, hyl, hxl } => (w, hyl, hxl),
            Layout::Split { tx, hyl, .. } => (tx, hyl, 0),
        };
        format!("s + ({hyl} + threadIdx.y * {rows} + {r}) * {w} + {hxl} + threadIdx.x * {v}")
    }

    /// The address of the vector `kv` points along x and `dy` rows from `c` (row `r` of the
    /// thread): in a split slot, vectors beyond the interior's edge are in the halo arrays.
    pub(super) fn at(&self, rows: u32, r: u32, v: u32, dy: i32, kv: i32) -> String {
        match *self {
            Layout::Pitched { w, .. } => format!("c + {}", dy * w as i32 + kv),
            Layout::Split {
                tx,
                hxl,
                hxr,
                left,
                right,
                ..
            } => {
                let inside = format!("c + {}", dy * tx as i32 + kv);
                if dy != 0 || (0..v as i32).contains(&kv) {
                    return inside;
                }
                let e = format!("(int)threadIdx.x * {v} + {kv}");
                let row = format!("(threadIdx.y * {rows} + {r})");
                let left = format!("s + {left} + {row} * {hxl} + {e} + {hxl}");
                let right = format!("s + {right} + {row} * {hxr} + {e} - {tx}");
                if kv < 0 {
                    format!("({e} < 0 ? {left} : {inside})")
                } else {
                    format!("({e} >= {tx} ? {right} : {inside})")
                }
            }
        }
    }
}

/// Moves every row's queue down one plane (entry i takes entry i + 1).
pub(super) fn shift_queue(g: &mut Gen, rows: u32, window: u32, v: u32) {
    for r in 0..rows {
        for i in 0..window - 1 {
            for l in 0..v {
                g.line(5, &format!("q{r}_{i}_{l} = q{r}_{}_{l};", i + 1));
            }
        }
    }
}

/// Closes the tile loops and fills in the launch shape: one block per `tx × tyr` tile and
/// chunk, `shared` bytes of dynamic shared memory, rows of a multiple of 16 bytes, and the
/// tensor map's box where planes arrive by TMA.
pub(super) fn finish_tile(
    mut g: Gen<'_>,
    mut src: CudaSource,
    p: &QMarchParams,
    (tx, tyr, axes): (u32, u32, MarchAxes),
    shared: u32,
    tensor_boxes: Vec<[u32; 3]>,
) -> CudaSource {
    g.close_from(4);
    src.block = [p.bx, p.by, 1];
    src.grid_map = [(0, tx), (axes.oa, tyr), (axes.ma, p.chunk)];
    src.shared_bytes = shared;
    src.x_multiple = 16 / g.spec.precision.size() as u32;
    src.tensor_boxes = tensor_boxes;
    g.finish(src)
}

/// The rows of the centre plane that the in-plane taps read: other-axis offset → (lowest,
/// highest) x offset. Taps on the march column (the centre included) are not in it.
pub(super) fn plane_rows(spec: &KernelSpec<'_>, ma: usize, oa: usize) -> BTreeMap<i32, (i32, i32)> {
    let mut rows: BTreeMap<i32, (i32, i32)> = BTreeMap::new();
    for s in spec.stencils {
        for t in s.taps() {
            if !on_column(t.offset, ma, oa) {
                let e = rows.entry(t.offset[oa]).or_insert((0, 0));
                e.0 = e.0.min(t.offset[0]);
                e.1 = e.1.max(t.offset[0]);
            }
        }
    }
    rows
}

/// Whether `s` has no tap off the centre plane (summed at once in the partial-sum queue).
pub(super) fn flat(s: &Stencil, ma: usize) -> bool {
    s.taps().iter().all(|t| t.offset[ma] == 0)
}

/// Whether a tap lies on the march column (read from the thread's own points), not across the
/// plane.
pub(super) fn on_column(offset: [i32; 3], ma: usize, oa: usize) -> bool {
    offset[ma] != 0 || (offset[0] == 0 && offset[oa] == 0)
}

/// Loads, from the slot row at `c`, the whole vectors each in-plane row of taps reads, into
/// `win_y…` arrays; returns how to name the value at x offset `dx` of lane `l` on row `dy`.
pub(super) fn plane_windows(
    g: &mut Gen,
    indent: usize,
    rows: &BTreeMap<i32, (i32, i32)>,
    at: &dyn Fn(i32, i32) -> String,
    v: i32,
    vt: &str,
) -> impl Fn(i32, i32, i32) -> String + use<> {
    let ty = g.ty;
    let comps = ["x", "y", "z", "w"];
    let kfirst = move |mn: i32| mn.div_euclid(v);
    let klast = |mx: i32| (v - 1 + mx).div_euclid(v);
    for (&dy, &(mn, mx)) in rows {
        let (k0, k1) = (kfirst(mn), klast(mx));
        let name = format!("win_{}", coord_name("y", dy));
        g.line(indent, &format!("{ty} {name}[{}];", (k1 - k0 + 1) * v));
        for k in k0..=k1 {
            let at = at(dy, k * v);
            if v == 1 {
                g.line(indent, &format!("{name}[{}] = *({at});", k - k0));
            } else {
                g.line(
                    indent,
                    &format!("{{ const {vt} t = *reinterpret_cast<const {vt}*>({at});"),
                );
                for (l, cn) in comps.iter().enumerate().take(v as usize) {
                    g.line(
                        indent + 1,
                        &format!("{name}[{}] = t.{cn};", (k - k0) * v + l as i32),
                    );
                }
                g.line(indent, "}");
            }
        }
    }
    let first: BTreeMap<i32, i32> = rows
        .iter()
        .map(|(&dy, &(mn, _))| (dy, kfirst(mn)))
        .collect();
    move |dy: i32, dx: i32, l: i32| {
        format!("win_{}[{}]", coord_name("y", dy), l + dx - first[&dy] * v)
    }
}

/// Stores lane values `acc` of output `o` at x point `x` of row `o{r}`, plane `m`: one vector
/// store, or one per point where a Dirichlet edge cuts the vector.
pub(super) fn store_row(
    g: &mut Gen,
    streaming: bool,
    indent: usize,
    idx: &dyn Fn(&str, &str, &str) -> String,
    (o, r, m): (usize, u32, &str),
    acc: &[String],
    vt: &str,
) {
    let at = idx("x", &format!("o{r}"), m);
    if acc.len() == 1 {
        g.line(
            indent,
            &format!("if (x >= ilo && x < ihi) out{o}[{at}] = {};", acc[0]),
        );
        return;
    }
    let v = acc.len();
    g.line(indent, &format!("if (x >= ilo && x + {v} <= ihi) {{"));
    let value = format!("make_{vt}({})", acc.join(", "));
    let store = if streaming {
        format!("__stcs(reinterpret_cast<{vt}*>(out{o} + {at}), {value});")
    } else {
        format!("*reinterpret_cast<{vt}*>(out{o} + {at}) = {value};")
    };
    g.line(indent + 1, &store);
    g.line(indent, "} else {");
    for (l, a) in acc.iter().enumerate() {
        let at_l = idx(&format!("x + {l}"), &format!("o{r}"), m);
        g.line(
            indent + 1,
            &format!("if (x + {l} >= ilo && x + {l} < ihi) out{o}[{at_l}] = {a};"),
        );
    }
    g.line(indent, "}");
}

/// The sums of every row of the thread: taps on the centre plane from whole vectors of the
/// slot, march-axis taps from the queue; one vector store per row (per point where a
/// Dirichlet edge cuts the vector). Dims: `[w, hyl, hxl, rzl]`.
pub(super) fn sums(
    g: &mut Gen,
    spec: &KernelSpec<'_>,
    p: QMarchParams,
    dims: [u32; 4],
    ma: usize,
    oa: usize,
    idx: &dyn Fn(&str, &str, &str) -> String,
) {
    let [w, hyl, hxl, rzl] = dims;
    let ty = g.ty;
    let v = p.vec as i32;
    let vt = vec_type(spec.precision, p.vec);
    let rows = plane_rows(spec, ma, oa);
    for r in 0..p.rows {
        g.line(5, &format!("if (in{r} && o{r} >= olo && o{r} < ohi) {{"));
        g.line(
            6,
            &format!(
                "const {ty}* const c = slot + ({hyl} + threadIdx.y * {} + {r}) * {w} + {hxl} + threadIdx.x * {v};",
                p.rows
            ),
        );
        let at = |dy: i32, kv: i32| format!("c + {}", dy * w as i32 + kv);
        let win = plane_windows(g, 6, &rows, &at, v, vt);
        for (o, stencil) in spec.stencils.iter().enumerate() {
            let mut acc = Vec::new();
            for l in 0..v {
                let name = format!("a{o}_{l}");
                g.line(6, &format!("{ty} {name} = ({ty})0;"));
                for (ti, t) in stencil.taps().iter().enumerate() {
                    let wgt = g.weight(o, ti);
                    let val = if on_column(t.offset, ma, oa) {
                        format!("q{r}_{}_{l}", rzl as i32 + t.offset[ma])
                    } else {
                        win(t.offset[oa], t.offset[0], l)
                    };
                    g.line(6, &format!("{name} += {wgt} * {val};"));
                }
                acc.push(name);
            }
            store_row(g, p.streaming, 6, idx, (o, r, "m"), &acc, vt);
        }
        g.line(5, "}");
    }
}

/// The accumulating step of the TMA march for the plane `a` in slot `s`: each row's own points
/// `u` add their march-column taps to the pending outputs `a − rzh … a + rzl` (accumulators
/// `acc{o}_{r}_{i}_{l}` for output `a − rzh + i`), and, for a computed plane, the in-plane taps
/// of output `a` from the slot. Dims: `[w, hyl, hxl, rzh]`.
pub(super) fn accumulate(
    g: &mut Gen,
    spec: &KernelSpec<'_>,
    p: QMarchParams,
    layout: Layout,
    rzh: u32,
    (ma, oa): (usize, usize),
    idx: &dyn Fn(&str, &str, &str) -> String,
) {
    let ty = g.ty;
    let v = p.vec as i32;
    let vt = vec_type(spec.precision, p.vec);
    let mut rows = plane_rows(spec, ma, oa);
    let across = !rows.is_empty() || spec.stencils.iter().any(|s| flat(s, ma));
    // The thread's own points come from row 0 of the window even with no in-plane taps.
    rows.entry(0).or_insert((0, 0));
    for r in 0..p.rows {
        g.line(5, "{");
        g.line(
            6,
            &format!(
                "const {ty}* const c = {};",
                layout.centre(p.rows, r, v as u32)
            ),
        );
        let at = |dy: i32, kv: i32| layout.at(p.rows, r, v as u32, dy, kv);
        let win = plane_windows(g, 6, &rows, &at, v, vt);
        for (o, stencil) in spec.stencils.iter().enumerate() {
            if flat(stencil, ma) {
                continue;
            }
            for l in 0..v {
                for (ti, t) in stencil.taps().iter().enumerate() {
                    if !on_column(t.offset, ma, oa) {
                        continue;
                    }
                    let wgt = g.weight(o, ti);
                    // Plane a is offset d from output a − d: accumulator rzh − d.
                    let i = rzh as i32 - t.offset[ma];
                    g.line(
                        6,
                        &format!("acc{o}_{r}_{i}_{l} += {wgt} * {};", win(0, 0, l)),
                    );
                }
            }
        }
        if across {
            g.line(6, "if (a >= mb && a < me) {");
            for (o, stencil) in spec.stencils.iter().enumerate() {
                if flat(stencil, ma) {
                    continue;
                }
                for l in 0..v {
                    for (ti, t) in stencil.taps().iter().enumerate() {
                        if on_column(t.offset, ma, oa) {
                            continue;
                        }
                        let wgt = g.weight(o, ti);
                        g.line(
                            7,
                            &format!(
                                "acc{o}_{r}_{rzh}_{l} += {wgt} * {};",
                                win(t.offset[oa], t.offset[0], l)
                            ),
                        );
                    }
                }
            }
            // Stencils on the plane alone: complete now, stored at once.
            let flats: Vec<usize> = (0..spec.stencils.len())
                .filter(|&o| flat(&spec.stencils[o], ma))
                .collect();
            if !flats.is_empty() {
                g.line(7, &format!("if (in{r} && o{r} >= olo && o{r} < ohi) {{"));
                for &o in &flats {
                    let mut parts = Vec::new();
                    for l in 0..v {
                        let name = format!("f{o}_{l}");
                        g.line(8, &format!("{ty} {name} = ({ty})0;"));
                        for (ti, t) in spec.stencils[o].taps().iter().enumerate() {
                            let wgt = g.weight(o, ti);
                            let val = win(t.offset[oa], t.offset[0], l);
                            g.line(8, &format!("{name} += {wgt} * {val};"));
                        }
                        parts.push(name);
                    }
                    store_row(g, p.streaming, 8, idx, (o, r, "a"), &parts, vt);
                }
                g.line(7, "}");
            }
            g.line(6, "}");
        }
        g.line(5, "}");
    }
}
