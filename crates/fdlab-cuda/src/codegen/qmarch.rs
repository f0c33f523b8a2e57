//! 2.5-D marching with a register queue along the march and one shared-memory plane
//! (Micikevicius' 3-D finite-difference scheme, with 16-byte vectors).
//!
//! A block owns an x × other-axis tile and marches along the last axis the stencils use (as
//! [`crate::smarch`]). Each thread keeps its own `vec` x points of `rows` rows for the whole
//! march window (`reach below + 1 + reach above` planes) in registers: the march-axis taps
//! read registers, and each plane's interior is loaded from global memory once, as the front of
//! the queue. Only the centre plane goes to shared memory — its interior from the threads'
//! queues, its x and other-axis halo by coalesced 16-byte loads, both issued one plane ahead —
//! so the taps across the plane read shared memory. Two plane slots alternate: one barrier per
//! plane.
//!
//! Why (bench/NOTES.md, session 5): the shared-memory march keeps the whole window (9 planes
//! for an 8th-order stencil) in its ring, which for the radius-4 stencils costs occupancy and,
//! with a short tile, reads every plane's 2× halo through L2 per plane; here shared memory holds
//! two planes, and the march-axis reach costs registers, not L2 traffic.
//!
//! Needs every tap off the centre plane to lie on the march-axis column (true of derivatives,
//! gradients and Laplacians), `nx` a multiple of 16 bytes of elements, and periodic or
//! Dirichlet boundaries.

use super::emit::{coord_name, vec_type, Gen, MarchAxes};
use super::source::{CudaSource, KernelSpec};
use fdlab_core::{Boundary, Stencil};
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
    /// queue's front (Dirichlet only; see [`qmarch_tma`]).
    pub tma: u32,
    /// With `tma`: a queue of partial sums, so the ring holds only the planes in flight.
    pub accumulate: bool,
    /// With `tma` and `accumulate`: split slots (`-wNa`), the x halo apart from the interior
    /// and its other-axis halo rows, each piece one tensor copy that wraps on its own.
    pub split: bool,
    /// Streaming (evict-first) vector stores of the outputs.
    pub streaming: bool,
}

/// The tile geometry both queue marches share: 16-byte granules, the tile with its halo, the
/// march window.
struct Tile {
    /// Scalar type, and the vector type of a thread's `vec` points.
    ty: &'static str,
    vt: &'static str,
    /// Bytes per element; elements per 16-byte granule.
    size: u32,
    vl: u32,
    axes: MarchAxes,
    /// x halo (rounded up to granules), other-axis halo, march-axis reach below and above.
    hxl: u32,
    hxr: u32,
    hyl: u32,
    hyh: u32,
    rzl: u32,
    rzh: u32,
    /// Planes in the queue: `rzl + 1 + rzh`.
    window: u32,
    /// Tile points along x and the other axis; the slot's width and height with halo.
    tx: u32,
    tyr: u32,
    w: u32,
    h: u32,
    threads: u32,
}

impl Tile {
    fn new(g: &Gen<'_>, p: &QMarchParams, march_z: bool) -> Tile {
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
enum Layout {
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
    fn centre(&self, rows: u32, r: u32, v: u32) -> String {
        let (w, hyl, hxl) = match *self {
            Layout::Pitched { w, hyl, hxl } => (w, hyl, hxl),
            Layout::Split { tx, hyl, .. } => (tx, hyl, 0),
        };
        format!("s + ({hyl} + threadIdx.y * {rows} + {r}) * {w} + {hxl} + threadIdx.x * {v}")
    }

    /// The address of the vector `kv` points along x and `dy` rows from `c` (row `r` of the
    /// thread): in a split slot, vectors beyond the interior's edge are in the halo arrays.
    fn at(&self, rows: u32, r: u32, v: u32, dy: i32, kv: i32) -> String {
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
    let Tile {
        ty,
        vt,
        size,
        vl,
        axes,
        hxl,
        hxr,
        hyl,
        hyh,
        rzl,
        rzh,
        window,
        tx,
        tyr,
        w,
        h,
        threads,
    } = Tile::new(&g, &p, march_z);
    let v = p.vec;
    let gt = vec_type(spec.precision, vl);
    let (ma, oa) = (axes.ma, axes.oa);
    let idx = |x: &str, o: &str, m: &str| axes.idx(x, o, m);
    let plane = w * h;
    let periodic = spec.boundary == Boundary::Periodic;
    // Halo granules (16 bytes): the other-axis halo rows (over the interior columns, or the
    // whole width when a tap reads a corner), then the x halo of the tile's rows.
    let corners = spec
        .stencils
        .iter()
        .flat_map(|s| s.taps())
        .any(|t| t.offset[0] != 0 && t.offset[oa] != 0);
    let (wv, lv, rv, txv) = (w / vl, hxl / vl, hxr / vl, tx / vl);
    let band = if corners { wv } else { txv };
    let band0 = if corners { 0 } else { lv };
    let top = hyl * band;
    let mid = tyr * (lv + rv);
    let halo = top + mid + hyh * band;
    let per_thread = halo.div_ceil(threads);
    let wrap = |v: &str, n: &str| super::emit::wrap_stmt(periodic, v, n);

    g.shared_march_prologue(axes, threads, p.bx);
    g.march_tiles(p.chunk, tyr, tx);
    // The previous tile's readers must be done with both slots.
    g.line(4, "__syncthreads();");
    if halo > 0 {
        // This thread's halo granules: source offset within a plane, target within a slot.
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
        g.line(5, &wrap("gy", "no"));
        g.line(5, &wrap("gx", "nx"));
        g.line(
            5,
            &format!("hok[j] = c < {halo} && gx >= 0 && gx < nx && gy >= 0 && gy < no;"),
        );
        g.line(
            5,
            &format!("hoff[j] = hok[j] ? {} : 0;", idx("gx", "gy", "0")),
        );
        g.line(
            5,
            &format!("hdst[j] = c < {halo} ? row * {w} + col * {vl} : -1;"),
        );
        g.line(4, "}");
    }
    // This thread's own points; with periodic images, points of a tile that overhangs the
    // grid load their wrapped values (neighbours of the last points read them from the slot),
    // but only points inside the grid are computed.
    g.line(4, &format!("const int x = x0 + threadIdx.x * {v};"));
    g.line(4, "int xl = x;");
    g.line(4, &wrap("xl", "nx"));
    for r in 0..p.rows {
        g.line(
            4,
            &format!("const int o{r} = y0 + threadIdx.y * {} + {r};", p.rows),
        );
        g.line(4, &format!("int ol{r} = o{r};"));
        g.line(4, &wrap(&format!("ol{r}"), "no"));
        g.line(4, &format!("const bool in{r} = x < nx && o{r} < no;"));
        let load = if periodic {
            "true".to_string()
        } else {
            format!("in{r}")
        };
        g.line(4, &format!("const bool ld{r} = {load};"));
        g.line(
            4,
            &format!(
                "const long long own{r} = ld{r} ? {} : 0;",
                idx("xl", &format!("ol{r}"), "0")
            ),
        );
    }
    // Loads of plane `pl`: the own points into `dst{r}`, and (with `halo`) the halo granules.
    let zero = |t: &str, n: u32| {
        if n == 1 {
            format!("({ty})0")
        } else {
            format!("make_{t}({})", vec!["0"; n as usize].join(", "))
        }
    };
    let plane_src = |g: &mut Gen, indent: usize, pl: &str| {
        g.line(indent, &format!("int pz = {pl};"));
        g.line(indent, &wrap("pz", "nm"));
        g.line(
            indent,
            &format!("const {ty}* const src = in + {};", idx("0", "0", "pz")),
        );
    };
    let load_own = |g: &mut Gen, indent: usize, dst: &dyn Fn(u32) -> String| {
        for r in 0..p.rows {
            g.line(
                indent,
                &format!(
                    "{} = ld{r} ? __ldg(reinterpret_cast<const {vt}*>(src + own{r})) : {};",
                    dst(r),
                    zero(vt, v)
                ),
            );
        }
    };
    let load_halo = |g: &mut Gen, indent: usize| {
        if halo == 0 {
            return;
        }
        g.line(indent, "#pragma unroll");
        g.line(indent, &format!("for (int j = 0; j < {per_thread}; ++j) hv[j] = hok[j] ? __ldg(reinterpret_cast<const {gt}*>(src + hoff[j])) : {};", zero(gt, vl)));
    };
    // The queue: q{r}_{i}_{l} holds plane m - rzl + i of row r, x point l; named scalars so
    // that every index is fixed at generation time (registers, never local memory).
    let comps = ["x", "y", "z", "w"];
    let comp = |var: &str, l: u32| {
        if v == 1 {
            var.to_string()
        } else {
            format!("{var}.{}", comps[l as usize])
        }
    };
    for r in 0..p.rows {
        let names: Vec<String> = (0..window)
            .flat_map(|i| (0..v).map(move |l| format!("q{r}_{i}_{l}")))
            .collect();
        g.line(4, &format!("{ty} {};", names.join(", ")));
        g.line(4, &format!("{vt} nxt{r};"));
    }
    if halo > 0 {
        g.line(4, &format!("{gt} hv[{per_thread}];"));
    }
    // Prologue: planes mb - rzl … mb + rzh - 1 into the queue; the front plane mb + rzh and
    // the halo of plane mb in flight.
    for i in 0..window - 1 {
        g.line(4, "{");
        plane_src(&mut g, 5, &format!("mb - {rzl} + {i}"));
        load_own(&mut g, 5, &|r| format!("nxt{r}"));
        for r in 0..p.rows {
            for l in 0..v {
                g.line(
                    5,
                    &format!("q{r}_{i}_{l} = {};", comp(&format!("nxt{r}"), l)),
                );
            }
        }
        g.line(4, "}");
    }
    g.line(4, "{");
    plane_src(&mut g, 5, &format!("mb + {rzh}"));
    load_own(&mut g, 5, &|r| format!("nxt{r}"));
    g.line(4, "}");
    g.line(4, "{");
    plane_src(&mut g, 5, "mb");
    load_halo(&mut g, 5);
    g.line(4, "}");

    g.line(4, "for (int m = mb; m < me; ++m) {");
    g.line(
        5,
        &format!("{ty}* const slot = sm + ((m - mb) & 1) * {plane};"),
    );
    // The front plane enters the queue; the centre plane and its halo go to the slot.
    for r in 0..p.rows {
        for l in 0..v {
            g.line(
                5,
                &format!("q{r}_{}_{l} = {};", window - 1, comp(&format!("nxt{r}"), l)),
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
    if halo > 0 {
        g.line(5, "#pragma unroll");
        g.line(
            5,
            &format!("for (int j = 0; j < {per_thread}; ++j) if (hdst[j] >= 0) *reinterpret_cast<{gt}*>(slot + hdst[j]) = hv[j];"),
        );
    }
    // Next plane's loads, in flight during this plane's sums.
    g.line(5, "if (m + 1 < me) {");
    plane_src(&mut g, 6, &format!("m + 1 + {rzh}"));
    load_own(&mut g, 6, &|r| format!("nxt{r}"));
    g.line(5, "}");
    g.line(5, "if (m + 1 < me) {");
    plane_src(&mut g, 6, "m + 1");
    load_halo(&mut g, 6);
    g.line(5, "}");
    g.line(5, "__syncthreads();");
    sums(&mut g, spec, p, [w, hyl, hxl, rzl], ma, oa, &idx);
    shift_queue(&mut g, p.rows, window, v);
    finish_tile(g, src, &p, (tx, tyr, axes), 2 * plane * size, Vec::new())
}

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
/// Why (bench/NOTES.md, session 6): the register-fed queue march of the 25-point Laplacian
/// holds 234 registers per thread, and with two blocks per SM only one plane of loads is in
/// flight; the 1-D bulk copies of session 5 paid one request per row piece, a tensor copy is one
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
/// instead. Why (bench/NOTES.md, session 10): the periodic gradient's best kernel, the
/// shared-memory march, keeps nine haloed planes in its ring (one 16-warp block per SM); the
/// partial-sum ring holds three, and bulk copies of each row cost 20–30 points against one
/// tensor copy per piece.
///
/// In the partial-sum queue, a stencil with no march-axis taps (d/dx, d/dy of a gradient) is
/// summed and stored when its plane arrives, holding no queue.
fn qmarch_tma(
    spec: &KernelSpec<'_>,
    src: CudaSource,
    p: QMarchParams,
    march_z: bool,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let Tile {
        ty,
        vt,
        size,
        axes,
        hxl,
        hxr,
        hyl,
        hyh,
        rzl,
        rzh,
        window,
        tx,
        tyr,
        w,
        h,
        threads,
        ..
    } = Tile::new(&g, &p, march_z);
    let v = p.vec;
    let (ma, oa) = (axes.ma, axes.oa);
    let idx = |x: &str, o: &str, m: &str| axes.idx(x, o, m);
    let bytes = w * h * size;
    // Slots (and a split slot's pieces) start on 128-byte boundaries, as tensor copies require.
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
    // The value queue reads a plane's slot until it is the centre, rzh planes after its
    // arrival; the partial-sum queue reads it only on arrival.
    let slots = if p.accumulate { 1 } else { rzh + 1 } + p.tma;
    let mut tbox = [1u32; 3];
    tbox[0] = w;
    tbox[oa] = h;
    // A tensor copy's coordinates (x, other axis, march axis) in the tensor's axis order.
    let coords = |x: &str, o: &str, pl: &str| {
        let mut c = [""; 3];
        c[0] = x;
        c[oa] = o;
        c[ma] = pl;
        c.join(", ")
    };

    let periodic = spec.boundary == Boundary::Periodic;
    let wrap = |v: &str, n: &str| super::emit::wrap_stmt(periodic, v, n);
    // The split slot's pieces: (offset in the slot, tensor map, x and other-axis coordinate,
    // box width and height). Periodic coordinates wrap once: a tile whose pieces would need
    // more (cut by the grid's edge, or a grid smaller than the halo) takes the bulk path.
    let mut boxes: Vec<[u32; 3]> = Vec::new();
    let mut pieces: Vec<(u32, usize, String, String, u32, u32)> = Vec::new();
    if let Layout::Split { left, right, .. } = layout {
        let wrapped = |e: String, n: &str| {
            if periodic {
                format!("fd_wrap1({e}, {n})")
            } else {
                e
            }
        };
        let mut piece = |off: u32, bw: u32, bh: u32, x: String, o: String| {
            if bw == 0 || bh == 0 {
                return;
            }
            let mut b = [1u32; 3];
            b[0] = bw;
            b[oa] = bh;
            let map = boxes.iter().position(|&k| k == b).unwrap_or_else(|| {
                boxes.push(b);
                boxes.len() - 1
            });
            pieces.push((off, map, x, o, bw, bh));
        };
        piece(
            0,
            tx,
            hyl,
            "x0".into(),
            wrapped(format!("y0 - {hyl}"), "no"),
        );
        piece(tx * hyl, tx, tyr, "x0".into(), "y0".into());
        piece(
            tx * (hyl + tyr),
            tx,
            hyh,
            "x0".into(),
            wrapped(format!("y0 + {tyr}"), "no"),
        );
        piece(
            left,
            hxl,
            tyr,
            wrapped(format!("x0 - {hxl}"), "nx"),
            "y0".into(),
        );
        piece(
            right,
            hxr,
            tyr,
            wrapped(format!("x0 + {tx}"), "nx"),
            "y0".into(),
        );
    } else {
        boxes.push(tbox);
    }
    g.tensor_maps = boxes.len();
    g.shared_march_prologue_aligned(axes, threads, p.bx, 128);
    g.line(
        1,
        &format!(
            "unsigned long long* const fd_bars = reinterpret_cast<unsigned long long*>(sm + {});",
            slots * slot
        ),
    );
    g.line(
        1,
        &format!("for (int i = tid; i < {slots}; i += {threads}) fd_mbar_init(fd_bars + i, 1);"),
    );
    g.line(1, "fd_mbar_init_fence();");
    g.line(1, "__syncthreads();");
    // Each thread flips a slot's parity bit at each wait: every filled slot is waited for once.
    g.line(1, "unsigned fd_phase = 0u;");
    g.march_tiles(p.chunk, tyr, tx);
    // The previous tile's readers must be done with every slot.
    g.line(4, "__syncthreads();");
    if p.split && periodic {
        // Tensor copies when the interior lies in the grid and every halo piece lies in it or
        // wraps whole (one period): a piece that straddles the edge needs the bulk path.
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
    let issue = |g: &mut Gen, indent: usize, pl: &str, sl: &str| {
        let Layout::Split { left, right, .. } = layout else {
            g.line(
                indent,
                &format!(
                    "if (tid == 0 && {pl} < mend) fd_tma_load3d(sm + ({sl}) * {slot}, &tmap0, {}, {bytes}u, fd_bars + ({sl}));",
                    coords(&format!("x0 - {hxl}"), &format!("y0 - {hyl}"), pl)
                ),
            );
            return;
        };
        let i = indent + 1;
        g.line(indent, &format!("if ({pl} < mend) {{"));
        if periodic {
            g.line(i, "if (fd_whole) {");
        } else {
            g.line(i, "{");
        }
        g.line(i + 1, "if (tid == 0) {");
        g.line(i + 2, &format!("int pz = {pl};"));
        g.line(i + 2, &wrap("pz", "nm"));
        g.line(i + 2, &format!("{ty}* const d = sm + ({sl}) * {slot};"));
        g.line(
            i + 2,
            &format!("unsigned long long* const bar = fd_bars + ({sl});"),
        );
        for (off, map, x, o, bw, bh) in &pieces {
            g.line(
                i + 2,
                &format!(
                    "fd_tma_piece3d(d + {off}, &tmap{map}, {}, {}u, bar);",
                    coords(x, o, "pz"),
                    bw * bh * size
                ),
            );
        }
        g.line(i + 2, "fd_mbar_arrive(bar);");
        g.line(i + 1, "}");
        g.line(i, "}");
        if periodic {
            // Rows of the interior with the other-axis halo, then the x halo columns, each
            // piece of a row wrapped on its own; one arrival after every lane's pieces.
            g.line(i, "else {");
            let lanes = threads.min(32);
            let rows = |w, h, offset, x_back, y_back| super::bulk::BulkRows {
                w,
                h,
                stride: slot,
                offset,
                x_back,
                y_back,
                lanes,
            };
            let bulk = |g: &mut Gen, r: super::bulk::BulkRows| {
                if r.w > 0 {
                    super::bulk::bulk_issue(g, i + 1, (pl, sl), r, &wrap, &idx);
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
        g.line(indent, "}");
    };
    g.line(4, &format!("for (int k = 0; k < {slots}; ++k) {{"));
    issue(&mut g, 5, "base + k", "k");
    g.line(4, "}");
    g.line(4, &format!("const int x = x0 + threadIdx.x * {v};"));
    if p.accumulate {
        for r in 0..p.rows {
            g.line(
                4,
                &format!("const int o{r} = y0 + threadIdx.y * {} + {r};", p.rows),
            );
            g.line(4, &format!("const bool in{r} = x < nx && o{r} < no;"));
        }
        // acc{o}_{r}_{i}_{l}: output plane a − rzh + i of stencil o, row r, x point l.
        let queued: Vec<usize> = (0..spec.stencils.len())
            .filter(|&o| !flat(&spec.stencils[o], ma))
            .collect();
        for &o in &queued {
            for r in 0..p.rows {
                let names: Vec<String> = (0..window)
                    .flat_map(|i| (0..v).map(move |l| format!("acc{o}_{r}_{i}_{l} = ({ty})0")))
                    .collect();
                g.line(4, &format!("{ty} {};", names.join(", ")));
            }
        }
        g.line(4, "for (int a = base; a < mend; ++a) {");
        g.line(5, "const int k = a - base;");
        g.line(
            5,
            &format!("const int sl = k % {slots}; fd_mbar_wait(fd_bars + sl, (fd_phase >> sl) & 1u); fd_phase ^= 1u << sl;"),
        );
        g.line(5, &format!("const {ty}* const s = sm + sl * {slot};"));
        accumulate(&mut g, spec, p, layout, rzh, (ma, oa), &idx);
        // Every thread has read plane a: its slot takes the plane `slots` on.
        g.line(5, "__syncthreads();");
        issue(&mut g, 5, &format!("a + {slots}"), "sl");
        // Output a − rzh has all its taps.
        g.line(5, &format!("const int m = a - {rzh};"));
        g.line(5, "if (m >= mb) {");
        for r in 0..p.rows {
            g.line(6, &format!("if (in{r} && o{r} >= olo && o{r} < ohi) {{"));
            for &o in &queued {
                let acc: Vec<String> = (0..v).map(|l| format!("acc{o}_{r}_0_{l}")).collect();
                store_row(&mut g, p.streaming, 7, &idx, (o, r, "m"), &acc, vt);
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
        let shared = slots * slot * size + slots * 8;
        return finish_tile(g, src, &p, (tx, tyr, axes), shared, boxes);
    }
    for r in 0..p.rows {
        g.line(
            4,
            &format!("const int o{r} = y0 + threadIdx.y * {} + {r};", p.rows),
        );
        g.line(4, &format!("const bool in{r} = x < nx && o{r} < no;"));
    }
    let own = |r: u32| {
        format!(
            "({hyl} + threadIdx.y * {} + {r}) * {w} + {hxl} + threadIdx.x * {v}",
            p.rows
        )
    };
    let comps = ["x", "y", "z", "w"];
    for r in 0..p.rows {
        let names: Vec<String> = (0..window)
            .flat_map(|i| (0..v).map(move |l| format!("q{r}_{i}_{l}")))
            .collect();
        g.line(4, &format!("{ty} {};", names.join(", ")));
    }
    // Waits for the plane in slot `sl` and moves this thread's points into queue entry `i`.
    let take = |g: &mut Gen, indent: usize, sl: &str, i: u32| {
        g.line(indent, "{");
        g.line(
            indent + 1,
            &format!("const int sl = {sl}; fd_mbar_wait(fd_bars + sl, (fd_phase >> sl) & 1u); fd_phase ^= 1u << sl;"),
        );
        g.line(
            indent + 1,
            &format!("const {ty}* const s = sm + sl * {slot};"),
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
    };
    // Warm-up: the planes below the first centre and up to the plane before the first front.
    // Planes below mb are never a centre: their slots are refilled as soon as all have read.
    for i in 0..window - 1 {
        take(&mut g, 4, &format!("{}", i % slots), i);
        if i < rzl {
            g.line(4, "__syncthreads();");
            issue(
                &mut g,
                4,
                &format!("base + {}", i + slots),
                &format!("{}", i % slots),
            );
        }
    }
    g.line(4, "for (int m = mb; m < me; ++m) {");
    g.line(5, "const int k = m - base;");
    take(&mut g, 5, &format!("(k + {rzh}) % {slots}"), window - 1);
    g.line(
        5,
        &format!("{ty}* const slot = sm + (k % {slots}) * {slot};"),
    );
    sums(&mut g, spec, p, [w, hyl, hxl, rzl], ma, oa, &idx);
    // Every thread is done with the centre plane: its slot takes the plane `slots` on.
    g.line(5, "__syncthreads();");
    issue(&mut g, 5, &format!("m + {slots}"), &format!("k % {slots}"));
    shift_queue(&mut g, p.rows, window, v);
    let shared = slots * slot * size + slots * 8;
    finish_tile(g, src, &p, (tx, tyr, axes), shared, boxes)
}

/// Moves every row's queue down one plane (entry i takes entry i + 1).
fn shift_queue(g: &mut Gen, rows: u32, window: u32, v: u32) {
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
fn finish_tile(
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
fn plane_rows(spec: &KernelSpec<'_>, ma: usize, oa: usize) -> BTreeMap<i32, (i32, i32)> {
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
fn flat(s: &Stencil, ma: usize) -> bool {
    s.taps().iter().all(|t| t.offset[ma] == 0)
}

/// Whether a tap lies on the march column (read from the thread's own points), not across the
/// plane.
fn on_column(offset: [i32; 3], ma: usize, oa: usize) -> bool {
    offset[ma] != 0 || (offset[0] == 0 && offset[oa] == 0)
}

/// Loads, from the slot row at `c`, the whole vectors each in-plane row of taps reads, into
/// `win_y…` arrays; returns how to name the value at x offset `dx` of lane `l` on row `dy`.
fn plane_windows(
    g: &mut Gen,
    indent: usize,
    rows: &BTreeMap<i32, (i32, i32)>,
    at: &dyn Fn(i32, i32) -> String,
    v: i32,
    vt: &str,
) -> impl Fn(i32, i32, i32) -> String {
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
fn store_row(
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
fn sums(
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

/// The accumulating step of [`qmarch_tma`] for the plane `a` in slot `s`: each row's own points
/// `u` add their march-column taps to the pending outputs `a − rzh … a + rzl` (accumulators
/// `acc{o}_{r}_{i}_{l}` for output `a − rzh + i`), and, for a computed plane, the in-plane taps
/// of output `a` from the slot. Dims: `[w, hyl, hxl, rzh]`.
fn accumulate(
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
