//! NVIDIA's pencils: a tile of pencils along the stencil's axis in shared memory, loaded
//! coalesced, one or several points per thread (the sliding window is in `pencil_window`).

use super::emit::Gen;
use super::pencil_window::{pencil_fast_load, pencil_window, FastLoad, WindowLayout};
use super::source::{CudaSource, InputKind, KernelSpec};
use fdlab_core::{Boundary, Tap};

/// A pencil tile and its block (see [`crate::strategy::Strategy::Pencil`]).
pub(super) struct PencilParams {
    pub(super) length: u32,
    pub(super) lines: u32,
    pub(super) t_along: u32,
    pub(super) t_across: u32,
    pub(super) window: bool,
}

/// NVIDIA's pencils along the stencil's one axis, generalised to any tile and block; with
/// `window`, each thread computes a run of consecutive points from a sliding register window.
pub(super) fn pencil(spec: &KernelSpec<'_>, mut src: CudaSource, pp: PencilParams) -> CudaSource {
    let mut g = Gen::new(spec);
    let k = Pencil::new(spec, &pp);
    k.header(&mut g);
    if pp.window {
        pencil_fast_load(
            &mut g,
            &FastLoad {
                axis: k.axis,
                rl: k.rl,
                rh: k.rh,
                l: k.l,
                p: k.p,
                lw_row: k.lw_row,
                threads: k.threads as usize,
                load_idx: k.xyz("ga", "gb", "c"),
                base_idx: if k.axis == 0 {
                    k.xyz("a0 + ci0", "b0 + oi0", "c")
                } else {
                    k.xyz("a0 + oi0", "b0 + ci0", "c")
                },
            },
        );
        g.line(4, "} else {");
    }
    k.batched_load(&mut g);
    if pp.window {
        g.line(4, "}");
    }
    g.line(4, "__syncthreads();");
    if pp.window {
        pencil_window(
            &mut g,
            &WindowLayout {
                axis: k.axis,
                rl: k.rl,
                rh: k.rh,
                l: k.l,
                p: k.p,
                lw_row: k.lw_row,
                t_along: pp.t_along as usize,
                t_across: pp.t_across as usize,
                out_idx: k.xyz("a", "b", "c"),
            },
        );
    } else {
        k.points(&mut g);
    }
    g.line(4, "__syncthreads();");
    g.line(3, "}");
    g.line(2, "}");
    g.line(1, "}");
    g.line(0, "}");
    let axis = k.axis;
    src.block = if axis == 0 && !pp.window {
        [pp.t_along, pp.t_across, 1]
    } else {
        [pp.t_across, pp.t_along, 1]
    };
    src.grid_map = if axis == 0 {
        [(axis, pp.length), (k.b_axis, pp.lines), (k.c_axis, 1)]
    } else {
        [(k.b_axis, pp.lines), (axis, pp.length), (k.c_axis, 1)]
    };
    src.shared_bytes = (k.lw_row * k.p * spec.precision.size()) as u32;
    g.finish(src)
}

/// One pencil kernel's geometry: the stencil's axis (along), the across axis `b` and the third
/// axis `c`; the tile of `l` points (`lw` with the halo) by `p` pencils.
///
/// Shared layout: rows are pencils for an x stencil (x contiguous), rows are positions along
/// the axis otherwise (the across direction, x, contiguous): both match global coalescing.
///
/// Window kernels give every axis the same thread mapping: lane = pencil (tb = threadIdx.x,
/// 32 consecutive pencils in a warp when threads_across >= 32), ta = threadIdx.y picks the
/// run of m = length / threads_along consecutive points along the axis. A warp's shared
/// load for run position j then reads, in 4-byte words (f32):
///
/// ```text
///   y, z: tile[(ta*m + j) * lines + tb]  -> 32 consecutive words: 32 distinct banks;
///   x:    tile[tb * S + ta*m + j]        -> bank (tb * S + const) mod 32, distinct for the
///         32 lanes iff the row stride S is odd (gcd(S, 32) = 1). So x rows are padded from
///         lw = length + halo to S = lw | 1 (lw = 520 for a 512 line: S = 521).
/// ```
///
/// f64 (8-byte words, served per half-warp of 16 lanes): tb * S mod 16 is again distinct
/// for odd S, and y/z read 16 consecutive doubles per half-warp.
struct Pencil {
    axis: usize,
    b_axis: usize,
    c_axis: usize,
    rl: usize,
    rh: usize,
    lw: usize,
    l: usize,
    p: usize,
    lw_row: usize,
    threads: u32,
    t_along: u32,
    t_across: u32,
    window: bool,
    dirichlet: bool,
}

impl Pencil {
    fn new(spec: &KernelSpec<'_>, pp: &PencilParams) -> Self {
        let stencil = &spec.stencils[0];
        let axis = stencil.single_axis().map(|a| a.index()).unwrap_or(0);
        let rl = stencil.reach_below()[axis];
        let rh = stencil.reach_above()[axis];
        let lw = pp.length as usize + rl + rh;
        let (b_axis, c_axis) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        Pencil {
            axis,
            b_axis,
            c_axis,
            rl,
            rh,
            lw,
            l: pp.length as usize,
            p: pp.lines as usize,
            lw_row: if pp.window && axis == 0 { lw | 1 } else { lw },
            threads: pp.t_along * pp.t_across,
            t_along: pp.t_along,
            t_across: pp.t_across,
            window: pp.window,
            dirichlet: spec.boundary == Boundary::Dirichlet,
        }
    }

    /// `FD_IDX` of the point at (along, across, third) coordinates `a`, `b`, `c`.
    fn xyz(&self, a: &str, b: &str, c: &str) -> String {
        let mut v = [""; 3];
        v[self.axis] = a;
        v[self.b_axis] = b;
        v[self.c_axis] = c;
        format!("FD_IDX({}, {}, {})", v[0], v[1], v[2])
    }

    /// The tile element at position `a` along the axis of pencil `b`.
    fn tile(&self, a: &str, b: &str) -> String {
        if self.axis == 0 {
            format!("tile[({b}) * {} + ({a})]", self.lw_row)
        } else {
            format!("tile[({a}) * {} + ({b})]", self.p)
        }
    }

    /// Signature, shared tile, thread coordinates, and the loops over tiles.
    fn header(&self, g: &mut Gen) {
        let (ty, axis, p, l) = (g.ty, self.axis, self.p, self.l);
        let n = ["nx", "ny", "nz"];
        g.signature(InputKind::Pointer, self.threads);
        g.line(1, "extern __shared__ double fd_smem[];");
        g.line(
            1,
            &format!("{ty}* tile = reinterpret_cast<{ty}*>(fd_smem);"),
        );
        g.line(
            1,
            &format!(
                "const int na = {}, nb = {}, nc = {};",
                n[axis], n[self.b_axis], n[self.c_axis]
            ),
        );
        let (alo, ahi) = if self.dirichlet {
            (self.rl, self.rh)
        } else {
            (0, 0)
        };
        g.line(1, &format!("const int alo = {alo}, ahi = na - {ahi};"));
        // Thread coordinates: x is along for an x stencil, across otherwise; window kernels
        // put the pencils across x for every axis (see the bank arithmetic above).
        if self.window {
            g.line(1, "const int tb = threadIdx.x, ta = threadIdx.y;");
        } else if axis == 0 {
            g.line(1, "const int ta = threadIdx.x, tb = threadIdx.y;");
        } else {
            g.line(1, "const int tb = threadIdx.x, ta = threadIdx.y;");
        }
        g.line(1, "const int tid = threadIdx.y * blockDim.x + threadIdx.x;");
        // Block x walks the x axis, as NVIDIA's launches do (grid mx/sPencils × mz for a y
        // stencil): the blocks in flight together then read neighbouring pieces of the same
        // rows instead of rows a plane apart.
        let (bi_a, bi_b) = if axis == 0 { ("x", "y") } else { ("y", "x") };
        g.line(1, "for (int c = blockIdx.z; c < nc; c += gridDim.z) {");
        g.line(
            2,
            &format!(
                "for (int b0 = blockIdx.{bi_b} * {p}; b0 < nb; b0 += gridDim.{bi_b} * {p}) {{"
            ),
        );
        g.line(
            3,
            &format!(
                "for (int a0 = blockIdx.{bi_a} * {l}; a0 < na; a0 += gridDim.{bi_a} * {l}) {{"
            ),
        );
    }

    /// The tile load: two unrolled phases per batch, so that every load of a batch is in
    /// flight before its first shared store. Batches of at most 16 loads per thread keep a
    /// whole-line tile (NVIDIA's tile spans the line) out of local memory.
    fn batched_load(&self, g: &mut Gen) {
        let (ty, lw, p, rl, rh, threads) = (g.ty, self.lw, self.p, self.rl, self.rh, self.threads);
        let n_tile = lw * p;
        let iters = n_tile.div_ceil(threads as usize);
        let batch = iters.min(16);
        let batches = iters.div_ceil(batch);
        let split = |g: &mut Gen| {
            if self.axis == 0 {
                g.line(7, &format!("const int al = s % {lw}, pl = s / {lw};"));
            } else {
                g.line(7, &format!("const int pl = s % {p}, al = s / {p};"));
            }
        };
        g.line(4, "#pragma unroll 1");
        g.line(4, &format!("for (int rb = 0; rb < {batches}; ++rb) {{"));
        g.line(5, &format!("{ty} v[{batch}];"));
        g.line(5, "#pragma unroll");
        g.line(5, &format!("for (int r = 0; r < {batch}; ++r) {{"));
        g.line(
            6,
            &format!("const int s = tid + (rb * {batch} + r) * {threads};"),
        );
        g.line(6, &format!("v[r] = ({ty})0;"));
        g.line(6, &format!("if (s < {n_tile}) {{"));
        split(g);
        g.line(
            7,
            &format!("int ga = a0 + al - {rl}; const int gb = b0 + pl;"),
        );
        let idx = self.xyz("ga", "gb", "c");
        if self.dirichlet {
            g.line(
                7,
                &format!("if (gb < nb && ga >= 0 && ga < na) v[r] = in[{idx}];"),
            );
        } else {
            let map = g.map;
            g.line(7, &format!("if (gb < nb && ga >= -{rl} && ga < na + {rh}) {{ ga = {map}(ga, na); v[r] = in[{idx}]; }}"));
        }
        g.line(6, "}");
        g.line(5, "}");
        g.line(5, "#pragma unroll");
        g.line(5, &format!("for (int r = 0; r < {batch}; ++r) {{"));
        g.line(
            6,
            &format!("const int s = tid + (rb * {batch} + r) * {threads};"),
        );
        g.line(6, &format!("if (s < {n_tile}) {{"));
        split(g);
        let t = self.tile("al", "pl");
        g.line(7, &format!("{t} = v[r];"));
        g.line(6, "}");
        g.line(5, "}");
        g.line(4, "}");
    }

    /// One point per thread and pass, the taps read from the tile.
    fn points(&self, g: &mut Gen) {
        let (t_along, t_across, rl, axis) = (self.t_along, self.t_across, self.rl, self.axis);
        g.line(4, "#pragma unroll");
        g.line(
            4,
            &format!(
                "for (int qb = 0; qb < {}; ++qb) {{",
                self.p / t_across as usize
            ),
        );
        g.line(5, &format!("const int pl = tb + qb * {t_across};"));
        // Full unrolling of a whole-line tile's 64 points per thread only bloats the code.
        g.line(5, "#pragma unroll 8");
        g.line(
            5,
            &format!(
                "for (int qa = 0; qa < {}; ++qa) {{",
                self.l / t_along as usize
            ),
        );
        g.line(6, &format!("const int al = ta + qa * {t_along};"));
        g.line(6, "const int a = a0 + al, b = b0 + pl;");
        g.line(6, "if (a >= alo && a < ahi && b < nb) {");
        let load = |tp: &Tap| self.tile(&format!("al + {}", rl as i32 + tp.offset[axis]), "pl");
        let out_idx = self.xyz("a", "b", "c");
        let store = |o: usize| format!("out{o}[{out_idx}]");
        g.sums(7, &load, &store);
        g.line(6, "}");
        g.line(5, "}");
        g.line(4, "}");
    }
}
