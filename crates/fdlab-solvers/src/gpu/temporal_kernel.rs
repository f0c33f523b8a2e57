//! CUDA C of the temporally blocked heat pass (the design is in [`super::temporal`]).
//!
//! The kernel is written once with the shape as `constexpr` counts; its loops over levels and
//! points are fully unrolled, so the per-level register arrays stay in registers.
//! Coordinates as in the one-step kernels: `x`, `o` (middle axis: y in 3-D, none in 2-D) and
//! `m` (the march: z in 3-D, y in 2-D); strides 1, `nx` and `sm = nx·no`.

use super::kernels::literal;
use super::temporal::PassSpec;
use std::fmt::Write;

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
pub(crate) fn heat_pass(spec: &PassSpec) -> String {
    let (ty, t, three, periodic) = (spec.ty, spec.t, spec.dim == 3, spec.periodic);
    let mut g = String::from(HELPERS);
    let threads = t.threads();
    // Blocks the compiler must fit on an SM: the model's minimum (two, and 16 warps), not its
    // estimate, which for small blocks would cap the registers below what the levels need.
    let model = t.blocks_per_sm(spec.dim, if ty == "float" { 4 } else { 8 });
    let blocks = model.min(2.max(512u32.div_ceil(threads)));
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({threads}, {}) @NAME@(const {ty}* __restrict__ u, {ty}* __restrict__ v, const int nx, const int no, const int nm, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag) {{",
        blocks.max(1)
    );
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
    point_setup(&mut g, three, periodic);
    let _ = writeln!(
        g,
        "  // Per level below K and point: planes t-j-1 (lo) and t-j (ce) of level j before advance t.\n  {ty} lo[K][P], ce[K][P];"
    );
    g.push_str("#pragma unroll\n  for (int j = 0; j < K; ++j)\n#pragma unroll\n    for (int q = 0; q < P; ++q) { lo[j][q] = zero; ce[j][q] = zero; }\n");
    // Plane t + 1 is loaded while plane t is computed (into `pre`): the load's latency hides
    // behind the levels' work and the barrier instead of stalling every advance.
    let _ = writeln!(
        g,
        "  {ty} pre[P];  // the next plane of level 0 (the input), loaded one advance ahead"
    );
    if periodic {
        g.push_str("  int mw = fd_tb_mod(m0 - K, nm);  // the plane `pre` loads, wrapped\n");
    }
    load_plane(&mut g, periodic, "m0 - K", "  ");
    if periodic {
        g.push_str("  mw = mw + 1 == nm ? 0 : mw + 1;\n");
    }
    g.push_str("  // Advance t: level 0 takes plane t, level j computes plane t - j; the output (level K)\n");
    g.push_str("  // is plane t - K, so t runs K planes before and after the chunk.\n");
    if let Some(n) = march_unroll(spec) {
        let _ = writeln!(g, "  #pragma unroll {n}");
    }
    g.push_str("  for (int t = m0 - K; t < m1 + K; ++t) {\n");
    let _ = writeln!(
        g,
        "    {ty} nw[P];  // the newest plane of the level below the one being computed"
    );
    g.push_str("#pragma unroll\n    for (int q = 0; q < P; ++q) {\n");
    g.push_str("      nw[q] = pre[q];\n");
    g.push_str("      sh[(t & 1) * PLANE + si[q]] = nw[q];\n    }\n");
    g.push_str(
        "    // Plane t + 1 (past the chunk's last advance: a load in bounds, never used).\n",
    );
    load_plane(&mut g, periodic, "t + 1", "    ");
    if periodic {
        g.push_str("    mw = mw + 1 == nm ? 0 : mw + 1;\n");
    }
    level_loop(&mut g, spec);
    g.push_str("    // Every level's plane of this advance is in shared memory before the next reads it.\n");
    g.push_str("    __syncthreads();\n");
    g.push_str("  }\n}\n");
    g
}

/// Loads plane `plane` of the input at each point into `pre`: plane `mw` (already wrapped)
/// when periodic, zero outside the grid otherwise.
fn load_plane(g: &mut String, periodic: bool, plane: &str, pad: &str) {
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
            "{inner}  pre[q] = __ldg(u + off[q] + (long long)mw * sm);"
        );
    } else {
        let _ = writeln!(
            g,
            "{inner}  pre[q] = (tin && in[q]) ? __ldg(u + off[q] + (long long)tl * sm) : zero;\n{pad}}}"
        );
    }
}

/// Each point's in-plane offset (wrapped when periodic), shared index, inside flag (zero
/// boundary) and whether it is one of this block's outputs.
fn point_setup(g: &mut String, three: bool, periodic: bool) {
    g.push_str("  long long off[P];  // in-plane index of the point (or its periodic image)\n");
    g.push_str("  int si[P];         // its index in a shared plane\n");
    g.push_str(
        "  bool own[P];       // one of this block's outputs (inside the grid, past the halo)\n",
    );
    if !periodic {
        g.push_str(
            "  bool in[P];        // inside the grid in the plane (else zero at every level)\n",
        );
    }
    g.push_str("#pragma unroll\n  for (int q = 0; q < P; ++q) {\n");
    g.push_str(
        "    // Thread-major numbering: consecutive threads take consecutive x (coalesced).\n",
    );
    g.push_str("    const int i = (int)threadIdx.x + q * NT;\n");
    g.push_str("    const int lx = i % SX, gx = xs + lx;\n");
    if three {
        g.push_str("    const int ly = i / SX, gy = ys + ly;\n");
        g.push_str("    si[q] = (ly + 1) * RX + lx + 1;\n");
        g.push_str("    own[q] = lx >= K && lx < SX - K && ly >= K && ly < SY - K && gx < nx && gy < no;\n");
        if periodic {
            g.push_str("    off[q] = fd_tb_mod(gx, nx) + (long long)nx * fd_tb_mod(gy, no);\n");
        } else {
            g.push_str("    in[q] = gx >= 0 && gx < nx && gy >= 0 && gy < no;\n");
            g.push_str("    off[q] = in[q] ? gx + (long long)nx * gy : 0;\n");
        }
    } else {
        g.push_str("    si[q] = lx + 1;\n");
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
fn level_loop(g: &mut String, spec: &PassSpec) {
    let (ty, three, periodic) = (spec.ty, spec.dim == 3, spec.periodic);
    let lit = |w: f64| literal(w, ty);
    g.push_str("#pragma unroll\n    for (int j = 1; j <= K; ++j) {\n");
    g.push_str("      const int pj = t - j;  // the plane level j computes\n");
    let _ = writeln!(
        g,
        "      // Level j-1's plane pj, written during the previous advance.\n      const {ty}* sp = sh + ((j - 1) * 2 + (pj & 1)) * PLANE;"
    );
    if !periodic {
        g.push_str("      const bool pin = pj >= 0 && pj < nm;\n");
    }
    g.push_str("#pragma unroll\n      for (int q = 0; q < P; ++q) {\n");
    let _ = writeln!(
        g,
        "        const {ty} cc = ce[j - 1][q];\n        const int s = si[q];"
    );
    // The one-step kernel's order: w0·c, then (x pair), (middle pair), (march pair).
    let _ = writeln!(g, "        {ty} lap = {} * cc;", lit(spec.w0));
    let mut line = format!(
        "        lap = lap + {} * (sp[s - 1] + sp[s + 1])",
        lit(spec.w[0])
    );
    if three {
        let _ = write!(line, " + {} * (sp[s - RX] + sp[s + RX])", lit(spec.w[1]));
    }
    let _ = write!(line, " + {} * (lo[j - 1][q] + nw[q]);", lit(spec.w[2]));
    let _ = writeln!(g, "{line}");
    let _ = writeln!(g, "        {ty} o = cc + {} * lap;", lit(spec.kc));
    if !periodic {
        g.push_str(
            "        o = (pin && in[q]) ? o : zero;  // outside the grid: zero at every level\n",
        );
    }
    g.push_str("        lo[j - 1][q] = cc;  // level j-1 moves on one plane\n");
    g.push_str("        ce[j - 1][q] = nw[q];\n");
    g.push_str("        nw[q] = o;\n");
    g.push_str("        if (j < K) {\n");
    g.push_str("          sh[(j * 2 + (pj & 1)) * PLANE + s] = o;\n");
    g.push_str("        } else if (own[q] && pj >= m0 && pj < m1) {\n");
    g.push_str("          const long long c = off[q] + (long long)pj * sm;\n");
    g.push_str("          v[c] = o;\n");
    g.push_str("          if (!isfinite(o)) {\n");
    g.push_str("            const unsigned long long key = tag | (unsigned long long)c;\n");
    g.push_str("            if (atomicMin(bad, key) > key) *badval = (double)o;\n");
    g.push_str("          }\n");
    g.push_str("        }\n");
    g.push_str("      }\n    }\n");
}

/// How many times the march over the planes is unrolled (`None`: the compiler's choice).
/// Twice for the 3-D passes of three steps with at most four points per thread, where every
/// shape measured gained (H100, % of the copy unrolled against not: `f64` k=3,32,32,4,64
/// 180.6 against 163.6; `f32` k=3,32,32,2,64 157.0 against 124.2, k=3,32,64,4,128 141.4
/// against 115.3, k=3,64,32,4,128 142.0 against 116.8); with eight points per thread it
/// loses (`f32` k=3,32,64,8,128: 67.9 against 147.7), as it does in 2-D (`f32`
/// k=7,128,1,1,512: 207.8 against 301.7). `FDLAB_TEMPORAL_UNROLL=n` sets it for any pass, for
/// measuring.
pub(crate) fn march_unroll(spec: &PassSpec) -> Option<u32> {
    if let Some(n) = std::env::var("FDLAB_TEMPORAL_UNROLL")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        return Some(n);
    }
    let t = spec.t;
    (spec.dim == 3 && t.k == 3 && t.p <= 4).then_some(2)
}

#[cfg(test)]
mod tests {
    use super::super::temporal::{PassSpec, Temporal};
    use super::*;

    fn spec(dim: usize, periodic: bool) -> PassSpec {
        PassSpec {
            ty: "double",
            dim,
            periodic,
            w: [1.0, 0.5, 0.25],
            w0: -3.5,
            kc: 0.1,
            t: Temporal {
                k: 3,
                sx: 32,
                sy: if dim == 3 { 16 } else { 1 },
                p: 2,
                chunk: 64,
            },
        }
    }

    #[test]
    fn the_update_sums_in_the_one_step_kernels_order() {
        let k = heat_pass(&spec(3, true));
        assert!(
            k.contains("lap = lap + 1.0 * (sp[s - 1] + sp[s + 1]) + 0.5 * (sp[s - RX] + sp[s + RX]) + 0.25 * (lo[j - 1][q] + nw[q]);"),
            "{k}"
        );
        assert!(k.contains("double lap = -3.5 * cc;") && k.contains("cc + 0.1 * lap"));
        assert!(!k.contains("in[q]"));
        let z = heat_pass(&spec(2, false));
        assert!(z.contains("0.25 * (lo[j - 1][q] + nw[q]);") && !z.contains("RX]"));
        assert!(z.contains("o = (pin && in[q]) ? o : zero;"));
    }

    /// Writes pass kernels for a CPU emulation (`FDLAB_TB_DUMP=dir`): each as `NAME.cu` with
    /// its shape and weights as macros, for a harness that runs one thread per CUDA thread.
    #[test]
    #[ignore = "development tool: dumps kernels for the CPU emulation"]
    fn dump_for_emulation() {
        let Ok(dir) = std::env::var("FDLAB_TB_DUMP") else {
            return;
        };
        // Small tiles (several per axis on the emulated grids) and two of the model's.
        let shapes: [(usize, u32, u32, u32, u32, u32); 8] = [
            (3, 3, 32, 16, 2, 8),
            (3, 2, 32, 8, 1, 5),
            (3, 4, 32, 32, 4, 16),
            (3, 3, 32, 64, 8, 128),
            (2, 4, 64, 1, 2, 8),
            (2, 3, 32, 1, 1, 7),
            (2, 8, 128, 1, 4, 16),
            (2, 8, 1024, 1, 4, 256),
        ];
        for (i, &(dim, k, sx, sy, p, chunk)) in shapes.iter().enumerate() {
            for periodic in [true, false] {
                for ty in ["float", "double"] {
                    let spec = PassSpec {
                        ty,
                        dim,
                        periodic,
                        w: [1.0 / 0.64, 1.0 / 1.69, 1.0 / 1.21],
                        w0: -2.0 * (1.0 / 0.64 + 1.0 / 1.69 + 1.0 / 1.21),
                        kc: 0.05,
                        t: Temporal {
                            k,
                            sx,
                            sy,
                            p,
                            chunk,
                        },
                    };
                    let body = heat_pass(&spec).replace("@NAME@", "pass_kernel").replace(
                        "extern __shared__ __align__(16) unsigned char fd_tb_smem[];",
                        "unsigned char* fd_tb_smem = g_smem;",
                    );
                    let l = |w: f64| literal(w, ty);
                    let head = format!(
                        "#define TY {ty}\n#define DIM {dim}\n#define PERIODIC {}\n#define W0 {}\n#define WX {}\n#define WO {}\n#define WM {}\n#define KC {}\n#define K_ {k}\n#define SX_ {sx}\n#define SY_ {sy}\n#define P_ {p}\n#define CH_ {chunk}\n",
                        periodic as u8,
                        l(spec.w0),
                        l(spec.w[0]),
                        l(spec.w[1]),
                        l(spec.w[2]),
                        l(spec.kc)
                    );
                    let name = format!(
                        "{dir}/s{i}_{dim}d_{}_{ty}.cu",
                        if periodic { "per" } else { "zero" }
                    );
                    std::fs::write(name, head + &body).unwrap();
                }
            }
        }
    }
}
