//! CUDA C of the temporally blocked heat pass (the design is in fdlab-solvers' `gpu::temporal`).
//!
//! The kernel is written once with the shape as `constexpr` counts; its loops over levels and
//! points are fully unrolled, so the per-level register arrays stay in registers.
//! Coordinates as in the one-step kernels: `x`, `o` (middle axis: y in 3-D, none in 2-D) and
//! `m` (the march: z in 3-D, y in 2-D); strides 1, `nx` and `sm = nx·no`.

use super::shape::Temporal;
use super::{literal, value_bytes};
use std::fmt::Write;

/// The layout choices of a heat pass kernel (a heat schedule's fields of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassChoices {
    /// The 3-D pass gives each thread a column of consecutive rows (else points a
    /// block apart).
    pub column: bool,
    /// The 3-D column pass addresses its points from fixed offsets, where it applies.
    pub fixed: bool,
    /// A 2-D pass of two points a thread gives each thread two neighbouring x.
    pub pairs: bool,
    /// The pass indexes its points by 32-bit offsets, where the plane allows.
    pub lean: bool,
    /// Advances ahead the pass loads its input (1 to 3).
    pub ahead: u32,
    /// Advances one iteration of the march holds (2: written out; other values:
    /// `#pragma unroll` over one).
    pub unroll: u32,
}

/// What a pass kernel is generated from.
#[derive(Debug, Clone)]
pub struct PassSpec {
    /// `"float"` or `"double"`.
    pub ty: &'static str,
    /// 2 or 3.
    pub dim: usize,
    /// Periodic (wrap) or zero outside the grid.
    pub periodic: bool,
    /// Offset-1 weights per kernel axis (x, middle, march).
    pub w: [f64; 3],
    /// The sum of the centre weights.
    pub w0: f64,
    /// `Δt κ`.
    pub kc: f64,
    /// The grid's points along x, the middle axis and the march (`nx`, `no`, `nm`; `no = 1`
    /// in 2-D).
    pub n: [u32; 3],
    /// The shape.
    pub t: Temporal,
    /// The pass kernel's layout choices.
    pub choices: PassChoices,
}

impl PassSpec {
    /// Whether a plane's points fit 32-bit indices (`nx · no < 2³¹`).
    pub fn narrow(&self) -> bool {
        (self.n[0] as u64) * (self.n[1] as u64) < i32::MAX as u64
    }
}

/// Helpers of the pass kernels (guarded: several kernels may share a module).
const HELPERS: &str = "\
#ifndef FDLAB_TEMPORAL_HELPERS
#define FDLAB_TEMPORAL_HELPERS
// i mod n in 0 … n-1 for any i (tiles and chunks may reach several periods outside).
__device__ __forceinline__ int fd_tb_mod(int i, int n) { i %= n; return i < 0 ? i + n : i; }
#endif
";

/// The pass `v = S^k u` (`S` the heat step), `k = spec.t.k`. Parameters as the one-step heat
/// kernel's, without κ: `(u, v, nx, no, nm, bad, badval, tag)`.
pub fn heat_pass(spec: &PassSpec) -> String {
    let (ty, t, three, periodic) = (spec.ty, spec.t, spec.dim == 3, spec.periodic);
    let mut g = String::from(HELPERS);
    let threads = t.threads();
    // Blocks the compiler must fit on an SM: the model's minimum (two, and 16 warps), not its
    // estimate, which for small blocks would cap the registers below what the levels need.
    let model = t.blocks_per_sm(spec.dim, value_bytes(ty));
    let blocks = model.min(2.max(512u32.div_ceil(threads)));
    let fixed = fixed_points(spec);
    let sizes = if fixed {
        "const int nx_arg, const int no_arg, const int nm_arg"
    } else {
        "const int nx, const int no, const int nm"
    };
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({threads}, {}) @NAME@(const {ty}* __restrict__ u, {ty}* __restrict__ v, {sizes}, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag) {{",
        blocks.max(1)
    );
    if fixed {
        // The extents compiled in: a point's neighbours along the column are then constant
        // offsets from one address (immediates in the loads and stores).
        let [nx, no, nm] = spec.n;
        let _ = writeln!(
            g,
            "  // The grid's extents, compiled in; the launch passes the same.\n  constexpr int nx = {nx}, no = {no}, nm = {nm};\n  if (nx_arg != nx || no_arg != no || nm_arg != nm) __trap();"
        );
    }
    // The shape.
    let _ = writeln!(
        g,
        "  // Steps per pass, tile (halo included), points per thread, threads, output planes.\n  constexpr int K = {}, SX = {}, SY = {}, P = {}, NT = {threads}, CH = {};",
        t.k, t.sx, t.sy, t.p, t.chunk
    );
    g.push_str(
        "  // A shared plane: the tile with one padding point each side (its values are never\n",
    );
    g.push_str("  // valid; only the tile edges, whose results are discarded, read them).\n");
    g.push_str("  constexpr int RX = SX + 2;\n");
    if three {
        g.push_str("  constexpr int PLANE = RX * (SY + 2);\n");
    } else {
        g.push_str("  constexpr int PLANE = RX;\n");
    }
    g.push_str("  extern __shared__ __align__(16) unsigned char fd_tb_smem[];\n");
    let _ = writeln!(
        g,
        "  // Levels 0 … K-1, two planes each: sh[(level * 2 + (plane & 1)) * PLANE + point].\n  {ty}* const sh = reinterpret_cast<{ty}*>(fd_tb_smem);"
    );
    g.push_str("  // A pass earlier in this call met a non-finite value: write nothing, so that the state\n");
    g.push_str("  // before that pass survives for the host to replay with single steps.\n");
    g.push_str("  if (*reinterpret_cast<volatile unsigned long long*>(bad) != ~0ull) return;\n");
    let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
    g.push_str(
        "  // Grid coordinates of the tile's first point (k points of halo before the output).\n",
    );
    g.push_str("  const int xs = (int)blockIdx.x * (SX - 2 * K) - K;\n");
    if three {
        g.push_str("  const int ys = (int)blockIdx.y * (SY - 2 * K) - K;\n");
    }
    g.push_str("  const int m0 = (int)blockIdx.z * CH, m1 = min(m0 + CH, nm);\n");
    g.push_str("  const long long sm = (long long)nx * no;\n");
    let column = column_layout(spec);
    point_setup(&mut g, spec, column);
    let _ = writeln!(
        g,
        "  // Per level below K and point: planes t-j-1 (lo) and t-j (ce) of level j before advance t.\n  {ty} lo[K][P], ce[K][P];"
    );
    g.push_str("#pragma unroll\n  for (int j = 0; j < K; ++j)\n#pragma unroll\n    for (int q = 0; q < P; ++q) { lo[j][q] = zero; ce[j][q] = zero; }\n");
    // Plane t + 1 is loaded while plane t is computed (into `pre`): the load's latency hides
    // behind the levels' work and the barrier instead of stalling every advance.
    // The input planes loaded ahead: `pre` is the next (plane t + 1 at advance t), `pre1` …
    // the ones after it, so that a load has `ahead` advances to arrive.
    let ahead = load_ahead(spec);
    let _ = writeln!(
        g,
        "  {ty} pre[P];  // the next plane of level 0 (the input), loaded {ahead} advance(s) ahead"
    );
    for i in 1..ahead {
        let _ = writeln!(g, "  {ty} pre{i}[P];  // the plane {i} after it");
    }
    if periodic {
        g.push_str(
            "  int mw = fd_tb_mod(m0 - K, nm);  // the plane the next load reads, wrapped\n",
        );
    }
    for i in 0..ahead {
        let (dst, plane) = match i {
            0 => ("pre".to_string(), "m0 - K".to_string()),
            _ => (format!("pre{i}"), format!("m0 - K + {i}")),
        };
        load_plane(&mut g, spec, &dst, &plane, "  ");
        if periodic {
            g.push_str("  mw = mw + 1 == nm ? 0 : mw + 1;\n");
        }
    }
    g.push_str("  // Advance t: level 0 takes plane t, level j computes plane t - j; the output (level K)\n");
    g.push_str("  // is plane t - K, so t runs K planes before and after the chunk.\n");
    match march_unroll(spec) {
        Some(2) => {
            // Two advances per iteration, so that which of a level's two shared planes each
            // reads and writes ((plane - (m0 - K)) & 1) is a constant: every shared address
            // is then a register plus an immediate offset, none computed per advance.
            g.push_str("  int t = m0 - K;\n  for (; t + 1 < m1 + K; t += 2) {\n");
            advance(&mut g, spec, column, Some(0), "t");
            advance(&mut g, spec, column, Some(1), "t + 1");
            g.push_str("  }\n  if (t < m1 + K) {\n");
            advance(&mut g, spec, column, Some(0), "t");
            g.push_str("  }\n}\n");
        }
        n => {
            if let Some(n) = n {
                let _ = writeln!(g, "  #pragma unroll {n}");
            }
            g.push_str("  for (int t = m0 - K; t < m1 + K; ++t) {\n");
            advance(&mut g, spec, column, None, "t");
            g.push_str("  }\n}\n");
        }
    }
    g
}

/// One advance at plane `tc` (an expression): the input plane into shared memory, the next
/// one's load issued, every level, the barrier. `parity`: which of the two shared planes the
/// input plane takes, when known when generating (`None`: `tc & 1`, at run time).
fn advance(g: &mut String, spec: &PassSpec, column: bool, parity: Option<u32>, tc: &str) {
    let (ty, periodic) = (spec.ty, spec.periodic);
    let _ = writeln!(g, "  {{\n    const int tc = {tc};");
    match parity {
        Some(u) => {
            let _ = writeln!(g, "    constexpr int U = {u};  // (tc - (m0 - K)) & 1");
        }
        None => g.push_str("    const int U = tc & 1;\n"),
    }
    let _ = writeln!(
        g,
        "    {ty} nw[P];  // the newest plane of the level below the one being computed"
    );
    g.push_str("#pragma unroll\n    for (int q = 0; q < P; ++q) {\n");
    g.push_str("      nw[q] = pre[q];\n");
    g.push_str(if column {
        "      sh[U * PLANE + S0 + q * RX] = nw[q];\n    }\n"
    } else {
        "      sh[U * PLANE + si[q]] = nw[q];\n    }\n"
    });
    // The planes loaded ahead move on one; the last takes plane tc + ahead (past the chunk's
    // last advances: a load in bounds, never used).
    let ahead = load_ahead(spec);
    let mut dst = "pre".to_string();
    for i in 1..ahead {
        let _ = writeln!(
            g,
            "#pragma unroll\n    for (int q = 0; q < P; ++q) {dst}[q] = pre{i}[q];"
        );
        dst = format!("pre{i}");
    }
    load_plane(g, spec, &dst, &format!("tc + {ahead}"), "    ");
    if periodic {
        g.push_str("    mw = mw + 1 == nm ? 0 : mw + 1;\n");
    }
    level_loop(g, spec, column);
    g.push_str("    // Every level's plane of this advance is in shared memory before the next reads it.\n");
    g.push_str("    __syncthreads();\n  }\n");
}

/// Loads plane `plane` of the input at each point into `dst`: plane `mw` (already wrapped)
/// when periodic, zero outside the grid otherwise.
fn load_plane(g: &mut String, spec: &PassSpec, dst: &str, plane: &str, pad: &str) {
    let periodic = spec.periodic;
    if fixed_points(spec) {
        let ty = spec.ty;
        if periodic {
            let _ = writeln!(
                g,
                "{pad}{{\n{pad}  const {ty}* const up = u + (long long)mw * sm;\n{pad}  if (lin) {{\n#pragma unroll\n{pad}    for (int q = 0; q < P; ++q) {dst}[q] = __ldg(up + b0 + q * QS);\n{pad}  }} else {{\n#pragma unroll\n{pad}    for (int q = 0; q < P; ++q) {dst}[q] = __ldg(up + col + nx * fd_tb_mod(gy0 + q, no));\n{pad}  }}\n{pad}}}"
            );
        } else {
            let _ = writeln!(
                g,
                "{pad}{{\n{pad}  const int tl = {plane};\n{pad}  const bool tin = tl >= 0 && tl < nm;\n{pad}  const {ty}* const up = u + (long long)(tin ? tl : 0) * sm + b0;\n#pragma unroll\n{pad}  for (int q = 0; q < P; ++q) {dst}[q] = (tin && in[q]) ? __ldg(up + q * QS) : zero;\n{pad}}}"
            );
        }
        return;
    }
    if lean_addresses(spec) {
        // One 64-bit plane address, then 32-bit in-plane offsets.
        if periodic {
            let _ = writeln!(
                g,
                "{pad}{{\n{pad}  const {}* const up = u + (long long)mw * sm;\n#pragma unroll\n{pad}  for (int q = 0; q < P; ++q) {dst}[q] = __ldg(up + off[q]);\n{pad}}}",
                spec.ty
            );
        } else {
            let _ = writeln!(
                g,
                "{pad}{{\n{pad}  const int tl = {plane};\n{pad}  const bool tin = tl >= 0 && tl < nm;\n{pad}  const {}* const up = u + (long long)(tin ? tl : 0) * sm;\n#pragma unroll\n{pad}  for (int q = 0; q < P; ++q) {dst}[q] = (tin && in[q]) ? __ldg(up + off[q]) : zero;\n{pad}}}",
                spec.ty
            );
        }
        return;
    }
    if !periodic {
        let _ = writeln!(
            g,
            "{pad}{{\n{pad}  const int tl = {plane};\n{pad}  const bool tin = tl >= 0 && tl < nm;"
        );
    }
    let inner = if periodic {
        pad.to_string()
    } else {
        format!("{pad}  ")
    };
    let _ = writeln!(g, "#pragma unroll\n{inner}for (int q = 0; q < P; ++q)");
    if periodic {
        let _ = writeln!(
            g,
            "{inner}  {dst}[q] = __ldg(u + off[q] + (long long)mw * sm);"
        );
    } else {
        let _ = writeln!(
            g,
            "{inner}  {dst}[q] = (tin && in[q]) ? __ldg(u + off[q] + (long long)tl * sm) : zero;\n{pad}}}"
        );
    }
}

/// Whether the 3-D pass gives each thread a column of `p` consecutive rows at one x (its
/// points' y neighbours inside the column come from its own registers: per level and `p`
/// points, `2p + 2` shared loads instead of `4p`) rather than `p` points a block apart.
/// The schedule's `column` field allows it (docs/schedules.md).
pub fn column_layout(spec: &PassSpec) -> bool {
    spec.dim == 3 && spec.t.sy.is_multiple_of(spec.t.p.max(1)) && spec.choices.column
}

/// Each point's in-plane offset (wrapped when periodic), shared index, inside flag (zero
/// boundary) and whether it is one of this block's outputs.
fn point_setup(g: &mut String, spec: &PassSpec, column: bool) {
    let (three, periodic) = (spec.dim == 3, spec.periodic);
    let oty = if lean_addresses(spec) {
        "int"
    } else {
        "long long"
    };
    let fixed = fixed_points(spec);
    if !fixed {
        let _ = writeln!(
            g,
            "  {oty} off[P];  // in-plane index of the point (or its periodic image)"
        );
    }
    if column {
        g.push_str("  // A column of P rows at one x; consecutive threads take consecutive x (coalesced).\n");
        g.push_str("  const int lx = (int)threadIdx.x % SX, ly0 = ((int)threadIdx.x / SX) * P, gx = xs + lx;\n");
        g.push_str("  const int S0 = (ly0 + 1) * RX + lx + 1;  // the first point's index in a shared plane\n");
    } else {
        g.push_str("  int si[P];         // its index in a shared plane\n");
    }
    g.push_str(
        "  bool own[P];       // one of this block's outputs (inside the grid, past the halo)\n",
    );
    if !periodic {
        g.push_str(
            "  bool in[P];        // inside the grid in the plane (else zero at every level)\n",
        );
    }
    if fixed {
        g.push_str(
            "  // The column's first point: point q is b0 + q * QS in a plane, except where a\n",
        );
        g.push_str("  // periodic column wraps in y (not `lin`: whole warps where sx is a multiple of 32).\n");
        g.push_str("  constexpr int QS = nx;  // between a thread's points in a plane\n");
        g.push_str("  const int gy0 = ys + ly0;\n");
        if periodic {
            g.push_str("  const int col = fd_tb_mod(gx, nx);\n");
            g.push_str("  const bool lin = gy0 >= 0 && gy0 + P <= no;\n");
            g.push_str("  const int b0 = col + nx * gy0;  // own points are inside: b0 + q * QS even where not lin\n");
        } else {
            g.push_str("  const int b0 = gx + nx * gy0;  // read and written only where inside\n");
        }
    }
    g.push_str("#pragma unroll\n  for (int q = 0; q < P; ++q) {\n");
    if fixed {
        g.push_str("    const int ly = ly0 + q, gy = gy0 + q;\n");
    } else if column {
        g.push_str("    const int ly = ly0 + q, gy = ys + ly;\n");
    } else if pairs(spec) {
        // Two neighbouring x a thread (2-D only); even x in the shared plane's first half,
        // odd x in the second, so that a warp's shared accesses stay consecutive words.
        g.push_str("    const int lx = 2 * (int)threadIdx.x + q, gx = xs + lx;\n");
        g.push_str("    si[q] = q == 0 ? (int)threadIdx.x : NT + 2 + (int)threadIdx.x;\n");
    } else {
        g.push_str(
            "    // Thread-major numbering: consecutive threads take consecutive x (coalesced).\n",
        );
        g.push_str("    const int i = (int)threadIdx.x + q * NT;\n");
        g.push_str("    const int lx = i % SX, gx = xs + lx;\n");
        if three {
            g.push_str("    const int ly = i / SX, gy = ys + ly;\n");
            g.push_str("    si[q] = (ly + 1) * RX + lx + 1;\n");
        } else {
            g.push_str("    si[q] = lx + 1;\n");
        }
    }
    if three {
        g.push_str("    own[q] = lx >= K && lx < SX - K && ly >= K && ly < SY - K && gx < nx && gy < no;\n");
        if !periodic {
            g.push_str("    in[q] = gx >= 0 && gx < nx && gy >= 0 && gy < no;\n");
        }
        // A fixed column addresses its points from b0 instead.
        if !fixed && periodic {
            let _ = writeln!(
                g,
                "    off[q] = fd_tb_mod(gx, nx) + ({oty})nx * fd_tb_mod(gy, no);"
            );
        } else if !fixed {
            let _ = writeln!(g, "    off[q] = in[q] ? gx + ({oty})nx * gy : 0;");
        }
    } else {
        g.push_str("    own[q] = lx >= K && lx < SX - K && gx < nx;\n");
        if periodic {
            g.push_str("    off[q] = fd_tb_mod(gx, nx);\n");
        } else {
            g.push_str("    in[q] = gx >= 0 && gx < nx;\n");
            g.push_str("    off[q] = in[q] ? gx : 0;\n");
        }
    }
    g.push_str("  }\n");
}

/// Levels 1 … K of one advance: the update in the one-step kernel's order, the level below
/// moved on one plane, the new plane into shared memory, or (level K) to `v`.
fn level_loop(g: &mut String, spec: &PassSpec, column: bool) {
    let (ty, three, periodic) = (spec.ty, spec.dim == 3, spec.periodic);
    let lit = |w: f64| literal(w, ty);
    g.push_str("#pragma unroll\n    for (int j = 1; j <= K; ++j) {\n");
    g.push_str("      const int pj = tc - j;  // the plane level j computes\n");
    g.push_str("      const int PJ = (U + j) & 1;  // its shared plane (the parity of tc - j)\n");
    let _ = writeln!(
        g,
        "      // Level j-1's plane pj, written during the previous advance.\n      const {ty}* sp = sh + ((j - 1) * 2 + PJ) * PLANE;"
    );
    if !periodic {
        g.push_str("      const bool pin = pj >= 0 && pj < nm;\n");
    }
    let fixed = fixed_points(spec);
    if fixed {
        let _ = writeln!(
            g,
            "      // Level K: whether plane pj is one of this chunk's outputs, and the column's address.\n      const bool wr = pj >= m0 && pj < m1;\n      {ty}* const vp = v + (long long)pj * sm + b0;"
        );
    } else if lean_addresses(spec) {
        let _ = writeln!(
            g,
            "      // Level K: whether plane pj is one of this chunk's outputs, and its address.\n      const bool wr = pj >= m0 && pj < m1;\n      {ty}* const vp = v + (long long)pj * sm;"
        );
    }
    // Every point of the level first (in a column, a point's y neighbours are the level
    // below's values at the points beside it, which move on only after all are computed).
    let _ = writeln!(g, "      {ty} out[P];");
    g.push_str("#pragma unroll\n      for (int q = 0; q < P; ++q) {\n");
    let _ = writeln!(g, "        const {ty} cc = ce[j - 1][q];");
    if column {
        g.push_str("        const int s = S0 + q * RX;\n");
        let _ = writeln!(
            g,
            "        // y neighbours: inside the column from registers, past its ends from shared memory.\n        const {ty} up = q == 0 ? sp[S0 - RX] : ce[j - 1][q > 0 ? q - 1 : 0];\n        const {ty} dn = q == P - 1 ? sp[S0 + P * RX] : ce[j - 1][q + 1 < P ? q + 1 : 0];"
        );
    } else if pairs(spec) {
        // x neighbours: the pair's other point from registers, the one past it from the
        // neighbouring thread's half-plane slot.
        let _ = writeln!(
            g,
            "        const {ty} xl = q == 0 ? sp[NT + 1 + (int)threadIdx.x] : ce[j - 1][0];\n        const {ty} xr = q == 0 ? ce[j - 1][P - 1] : sp[(int)threadIdx.x + 1];"
        );
    } else {
        g.push_str("        const int s = si[q];\n");
    }
    // The one-step kernel's order: w0·c, then (x pair), (middle pair), (march pair).
    let _ = writeln!(g, "        {ty} lap = {} * cc;", lit(spec.w0));
    let xpair = if pairs(spec) {
        "(xl + xr)"
    } else {
        "(sp[s - 1] + sp[s + 1])"
    };
    let mut line = format!("        lap = lap + {} * {xpair}", lit(spec.w[0]));
    if three {
        let pair = if column {
            "(up + dn)"
        } else {
            "(sp[s - RX] + sp[s + RX])"
        };
        let _ = write!(line, " + {} * {pair}", lit(spec.w[1]));
    }
    let _ = write!(line, " + {} * (lo[j - 1][q] + nw[q]);", lit(spec.w[2]));
    let _ = writeln!(g, "{line}");
    let _ = writeln!(g, "        {ty} o = cc + {} * lap;", lit(spec.kc));
    if !periodic {
        g.push_str(
            "        o = (pin && in[q]) ? o : zero;  // outside the grid: zero at every level\n",
        );
    }
    g.push_str("        out[q] = o;\n      }\n");
    if fixed {
        // `o · 0` summed over the advance's outputs: NaN once one is not finite (one FMA a
        // point; a flag or a test a point cost 5–30% more instructions, SASS).
        let _ = writeln!(
            g,
            "      {ty} nf = zero;  // not zero: an output of this advance is not finite"
        );
    }
    g.push_str("#pragma unroll\n      for (int q = 0; q < P; ++q) {\n");
    g.push_str("        const auto o = out[q];\n");
    g.push_str("        lo[j - 1][q] = ce[j - 1][q];  // level j-1 moves on one plane\n");
    g.push_str("        ce[j - 1][q] = nw[q];\n");
    g.push_str("        nw[q] = o;\n");
    g.push_str("        if (j < K) {\n");
    if column {
        g.push_str("          sh[(j * 2 + PJ) * PLANE + S0 + q * RX] = o;\n");
    } else {
        g.push_str("          sh[(j * 2 + PJ) * PLANE + si[q]] = o;\n");
    }
    let report = "            const unsigned long long key = tag | (unsigned long long)c;\n            if (atomicMin(bad, key) > key) *badval = (double)o;\n";
    if fixed {
        // One test per output and one branch per advance: the rare report reads the outputs
        // back (this thread's own writes) instead of keeping them in registers.
        g.push_str("        } else if (wr && own[q]) {\n");
        g.push_str("          vp[q * QS] = o;\n");
        let fma = if ty == "float" { "fmaf" } else { "fma" };
        let _ = writeln!(g, "          nf = {fma}(o, zero, nf);");
        g.push_str("        }\n      }\n");
        g.push_str("      if (j == K && nf != zero) {\n");
        g.push_str("        for (int q = 0; q < P; ++q) {\n");
        g.push_str("          const auto o = (wr && own[q]) ? vp[q * QS] : zero;\n");
        g.push_str("          if (!isfinite(o)) {\n");
        g.push_str("            const long long c = b0 + q * QS + (long long)pj * sm;\n");
        g.push_str(report);
        g.push_str("          }\n        }\n      }\n    }\n");
        return;
    }
    if !lean_addresses(spec) {
        g.push_str("        } else if (own[q] && pj >= m0 && pj < m1) {\n");
        g.push_str("          const long long c = off[q] + (long long)pj * sm;\n");
        g.push_str("          v[c] = o;\n");
        g.push_str("          if (!isfinite(o)) {\n");
        g.push_str(report);
        g.push_str("          }\n        }\n      }\n    }\n");
        return;
    }
    // The output plane's address once per advance, 32-bit offsets into it.
    g.push_str("        } else if (wr && own[q]) {\n");
    g.push_str("          vp[off[q]] = o;\n");
    g.push_str("          if (!isfinite(o)) {\n");
    g.push_str("            const long long c = off[q] + (long long)pj * sm;\n");
    g.push_str(report);
    g.push_str("          }\n        }\n      }\n    }\n");
}

/// Whether the pass compiles in the grid's extents and addresses a column's points as one
/// base plus constant offsets (3-D column layout with 32-bit in-plane offsets): one address
/// per plane instead of one per point, predicated stores, and one non-finite branch per
/// advance instead of one per output (SASS of the 3-D `f32` pass, periodic, k=3,64,64,8,64:
/// 868 → 686 instructions in the loop of two advances without the rare paths; zero edges
/// 1140 → 837). H200, 512³, % of the copy, two rounds on one machine start, against the same
/// shapes without: `f32` k=3,64,64,8,64 204.6 / 205.0 against 161.9 / 162.4, k=3,64,32,8,64
/// 188.5 / 189.6 against 156.1 / 158.1, k=3,64,32,4,64 157.4 / 156.7 against 139.3 / 139.2;
/// `f64` k=3,64,32,4,64 199.0 / 199.8 against 185.5 / 186.4, k=3,32,32,4,64 179.1 / 184.5
/// against 180.0 / 174.0. Not for `f64` passes of four or more steps, which then spill (k=4,
/// 64,32,4,64: 150.4 / 151.1 against 159.2 / 160.4), nor in 2-D, where a thread's two points
/// save nothing by it (SASS of the `f32` pair pass: 399 → 400 instructions periodic, 520 →
/// 543 with zero edges). The schedule's `fixed` field allows it.
fn fixed_points(spec: &PassSpec) -> bool {
    column_layout(spec)
        && lean_addresses(spec)
        && !(value_bytes(spec.ty) == 8 && spec.t.k >= 4)
        && spec.choices.fixed
}

/// Whether a 2-D pass gives each thread two neighbouring x (where `p = 2`; even x in one
/// half of the shared plane, odd x in the other, so a warp's shared accesses stay consecutive
/// words): per point and level one shared load and one store instead of two loads and a store.
/// The 2-D pass is bound by its shared-memory accesses about as much as by issue (docs/
/// solvers.md). H200, 8192², % of the copy, two rounds on one machine start: `f32`
/// k=7,256,1,2,128 325.7 / 324.0 against 242.8 / 243.7 with points a block apart, k=8,256,1,2,128
/// 342.4 / 342.6 against 284.5 / 284.8 for the one-point default k=7,128,1,1,128; `f64`
/// k=7,128,1,2,128 382.4 / 382.5 against 347.9 / 351.1. The schedule's `pairs` field allows
/// it.
fn pairs(spec: &PassSpec) -> bool {
    spec.dim == 2 && spec.t.p == 2 && spec.choices.pairs
}

/// Whether the pass indexes its points by 32-bit in-plane offsets from one plane address per
/// advance (where `spec.narrow`): in 3-D, where it frees registers and instructions of the
/// 64-bit index arithmetic; in 2-D ptxas then recomputes every shared address and the pass
/// loses. H200, 512³ / 8192², % of the copy, two rounds on one machine start: 3-D `f32`
/// k=3,64,32,8,64 155.1 / 155.6 against 152.6 / 152.8, `f64` k=3,32,32,4,64 165.0 / 164.1
/// against 162.7 / 162.9; 2-D `f32` k=7,128,1,1,512 238.6 / 238.1 against 255.8 / 259.6.
/// The schedule's `lean` field asks for it (default: in 3-D).
fn lean_addresses(spec: &PassSpec) -> bool {
    spec.narrow() && spec.choices.lean
}

/// How many advances ahead the input is loaded: 3 for the 3-D `f64` pass, 2 otherwise. One
/// advance of a pass takes about as long as a load's round trip at the pass's bandwidth, so
/// one advance ahead left warps waiting on the input. H200, % of the copy, two rounds on one
/// machine start, 3-D with 32-bit offsets, two / three / one advance(s) ahead: `f64`
/// k=3,64,32,4,64 177.8, 178.2 / 179.0, 186.2 (another start: 175.0 two ahead with 64-bit
/// offsets); k=3,32,32,4,64 174.1, 166.8 / 174.3, 175.7 / 165.0, 164.1; `f32` k=3,64,32,8,64
/// 156.8, 156.9 / 154.2, 152.3 / 155.1, 155.6. 2-D, 64-bit offsets, two against one ahead:
/// `f32` k=7,128,1,1,128 284.8, 285.9 against 281.3, 281.0; `f64` k=7,128,1,1,64 323.9, 325.4
/// against 319.8, 319.8. The schedule's `load-ahead` field sets it.
fn load_ahead(spec: &PassSpec) -> u32 {
    spec.choices.ahead
}

/// How many advances one iteration of the march holds: 2, written out twice, so that which
/// of a level's two shared planes each reads and writes is a constant and every shared
/// address a register plus an immediate. H200, % of the copy with two advances against one
/// (the compiler's unrolling), one machine start each: 3-D column layout `f32` k=4,64,32,4,64
/// 112.1 against 103.9, `f64` k=3,32,32,4,64 162.9 against 149.3; 2-D `f32` k=7,128,1,1,512
/// 255.2 against 199.4, `f64` k=7,128,1,1,64 320.5 against 291.5. The schedule's `unroll`
/// field sets it (2: two advances written out; other values: `#pragma unroll n` over one).
pub fn march_unroll(spec: &PassSpec) -> Option<u32> {
    Some(spec.choices.unroll)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heat schedule's default layout choices for `dim` and `bytes`-byte values.
    fn choices(dim: usize, bytes: usize) -> PassChoices {
        PassChoices {
            column: true,
            fixed: true,
            pairs: true,
            lean: dim == 3,
            ahead: if dim == 3 && bytes == 8 { 3 } else { 2 },
            unroll: 2,
        }
    }

    fn spec(dim: usize, periodic: bool) -> PassSpec {
        PassSpec {
            ty: "double",
            dim,
            periodic,
            w: [1.0, 0.5, 0.25],
            w0: -3.5,
            kc: 0.1,
            n: [40, 30, 20],
            t: Temporal {
                k: 3,
                sx: 32,
                sy: if dim == 3 { 16 } else { 1 },
                p: 2,
                chunk: 64,
            },
            choices: choices(dim, 8),
        }
    }

    #[test]
    fn the_update_sums_in_the_one_step_kernels_order() {
        let k = heat_pass(&spec(3, true));
        assert!(
            k.contains("lap = lap + 1.0 * (sp[s - 1] + sp[s + 1]) + 0.5 * (up + dn) + 0.25 * (lo[j - 1][q] + nw[q]);"),
            "{k}"
        );
        assert!(k.contains("double lap = -3.5 * cc;") && k.contains("cc + 0.1 * lap"));
        assert!(!k.contains("in[q]"));
        let z = heat_pass(&spec(2, false));
        assert!(z.contains("0.25 * (lo[j - 1][q] + nw[q]);") && !z.contains("RX]"));
        assert!(z.contains("o = (pin && in[q]) ? o : zero;"));
    }

    #[test]
    fn shared_planes_are_chosen_when_generating() {
        // Two advances per iteration: each names its shared planes by a constant parity.
        for dim in [2, 3] {
            let k = heat_pass(&spec(dim, true));
            assert!(k.contains("constexpr int U = 0;") && k.contains("constexpr int U = 1;"));
            assert!(!k.contains("tc & 1"), "{k}");
        }
        // 3-D: a column of rows per thread, its y neighbours inside the column in registers.
        let k = heat_pass(&spec(3, false));
        assert!(k.contains("const int S0 = ") && !k.contains("si[q]"), "{k}");
        assert!(k.contains("q == 0 ? sp[S0 - RX] : ce[j - 1]"));
        // A tile whose rows do not divide into columns keeps one point per row group.
        let mut odd = spec(3, true);
        odd.t.sy = 18;
        odd.t.p = 4;
        assert!(heat_pass(&odd).contains("si[q]"));
    }

    #[test]
    fn the_input_is_loaded_ahead_and_3d_points_use_32_bit_offsets() {
        // 3-D f64: three planes ahead, 32-bit offsets from one plane address per advance.
        let k = heat_pass(&spec(3, true));
        assert!(
            k.contains("double pre2[P];") && k.contains("pre1[q] = pre2[q];"),
            "{k}"
        );
        // Its column addressed from one base with the extents compiled in.
        assert!(!k.contains("off[P]"), "{k}");
        assert!(k.contains("constexpr int nx = 40, no = 30, nm = 20;"));
        assert!(k.contains("__ldg(up + b0 + q * QS)") && k.contains("vp[q * QS] = o;"));
        assert!(k.contains("nf = fma(o, zero, nf);") && k.contains("if (j == K && nf != zero)"));
        // Four steps in f64 keep a 32-bit offset a point (the fixed column spills there).
        let mut four = spec(3, true);
        four.t.k = 4;
        let k = heat_pass(&four);
        assert!(k.contains("int off[P];") && !k.contains("long long off[P];"));
        assert!(k.contains("__ldg(up + off[q])") && k.contains("vp[off[q]] = o;"));
        assert!(k.contains("const int nx, const int no, const int nm"));
        // 3-D f32: two ahead.
        let mut f = spec(3, false);
        f.ty = "float";
        f.choices = choices(3, 4);
        let k = heat_pass(&f);
        assert!(k.contains("float pre1[P];") && !k.contains("pre2"), "{k}");
        assert!(
            k.contains("(tin && in[q]) ? __ldg(up + q * QS) : zero;"),
            "{k}"
        );
        assert!(k.contains("nf = fmaf(o, zero, nf);"), "{k}");
        // A plane too large for 32-bit offsets keeps 64-bit ones.
        let mut wide = spec(3, true);
        wide.n = [65536, 65536, 4];
        let k = heat_pass(&wide);
        assert!(k.contains("long long off[P];") && !k.contains("vp[off[q]]"));
        // 2-D keeps 64-bit offsets (ptxas recomputes its shared addresses otherwise).
        let k = heat_pass(&spec(2, true));
        assert!(k.contains("long long off[P];") && k.contains("double pre1[P];"));
    }

    #[test]
    fn a_2d_thread_of_two_points_takes_neighbouring_x() {
        let mut t = spec(2, true);
        t.t.p = 2;
        let k = heat_pass(&t);
        assert!(k.contains("const int lx = 2 * (int)threadIdx.x + q"), "{k}");
        assert!(k.contains("lap = lap + 1.0 * (xl + xr)"), "{k}");
        // Other 2-D shapes keep points a block apart.
        t.t.p = 4;
        let k = heat_pass(&t);
        assert!(k.contains("const int i = (int)threadIdx.x + q * NT;") && !k.contains("xl"));
    }
}
