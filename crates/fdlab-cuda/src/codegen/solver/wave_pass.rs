//! Temporal blocking for the GPU wave step `p⁺ = 2p − p⁻ + c²Δt² L p` (any even order, no
//! CPML, sources or receivers): `k` steps fused into one pass over the grid, which reads `p`,
//! `p⁻` and `c²Δt²` once and writes the last two time levels once.
//!
//! # Design
//!
//! As the heat pass ([`super::temporal`]), a block owns an `sx × sy` tile of the plane (the
//! halo included) and marches along the last axis over a chunk of planes, and each thread
//! owns a column of `p` consecutive rows at one x (in 2-D, one point of a strip). What
//! differs is the stencil's radius `r` and the second time level:
//!
//! - Level `j` (the field after `j` steps; level 0 is `p`) computes plane `t − r·j` when
//!   plane `t` of level 0 arrives. Each level below `k` keeps its last `2r + 1` planes at the
//!   thread's points in registers: the march-axis neighbours of the next level, and (its
//!   oldest) the level two steps up's `p⁻`. Level 1's `p⁻` is the input `p⁻`, loaded at plane
//!   `t − r`.
//! - The in-plane neighbours of level `j + 1` are level `j`'s plane `t − r(j + 1)`, which level
//!   `j` computed `r` advances ago. So every level's middle plane goes to shared memory at the
//!   start of an advance, before any level computes, and one barrier per advance serves all
//!   levels (two buffers, by the advance's parity).
//! - A level's queue moves on one slot per advance (register moves). Writing the march out
//!   `2r + 1` advances per iteration instead (every slot a fixed register, no moves) was
//!   slower: more registers (spills at 512 threads) and nine times the code; H200, 3-D
//!   `f32`, k=2,64,32,4,128: 37.0% of the copy against 46.5%.
//! - Level `j` is valid `r·j` points inside the tile and is needed only there: a row group
//!   (a warp's rows, when `sx` is a multiple of 32) outside that band skips the level (H200,
//!   k=2,64,32,4,128: 46.4% of the copy against 27.6% computing every level everywhere).
//!
//! Each pass writes the levels `k` and `k − 1` to two other buffers (neighbouring tiles read
//! the input's halo), so temporal blocking holds two more fields on the device.
//!
//! The update sums its terms in the one-step kernel's order (`w0·c`, then the x, middle and
//! march sums over offsets 1 … r, then `c + c − p⁻ + c²Δt²·sum`): a pass equals `k` single
//! steps within rounding (bit-equal in a CPU emulation, since removed:
//! docs/decisions.md#the-cpu-emulation-of-the-pass-kernels-was-removed).
//!
//! # Why it is off by default
//!
//! It is slower than single steps, which are memory-bound at 92% of the copy: on an H200 at
//! 512³ (`f32`, 8th order) the best shape measured, k=2,64,32,4,128, runs at 46.5% of the copy
//! (one step's bytes over the time per step). ncu: 124 registers, one 512-thread block per
//! SM, issue slots 70% busy, DRAM 23%: the pass is limited by its instructions, about 178
//! per output point and step, against about 30 floating-point operations of a single step.
//! A 25-point stencil's work is large next to its bytes, the `r·k = 8`-point halo makes every
//! level computed on 1.7 times the output (with the row groups outside a level's band
//! skipping it), and the queues cost register moves and the loads address arithmetic.
//! A schedule's `pass=k2` (or a whole shape) runs it, for measuring.

use super::literal;
use super::shape::WaveShape;
use std::fmt::Write;

/// What a wave pass kernel is generated from.
#[derive(Debug, Clone)]
pub struct WavePassSpec {
    /// `"float"` or `"double"`.
    pub ty: &'static str,
    /// 2 or 3.
    pub dim: usize,
    /// Periodic (wrap) or zero outside the grid.
    pub periodic: bool,
    /// Second-derivative weights per kernel axis (x, middle, march), offsets 0 … r.
    pub w2: [Vec<f64>; 3],
    /// The sum of the centre weights.
    pub w0: f64,
    /// The shape.
    pub s: WaveShape,
}

/// Helpers of the pass kernels (guarded: several kernels may share a module).
const HELPERS: &str = "\
#ifndef FDLAB_WAVE_PASS_HELPERS
#define FDLAB_WAVE_PASS_HELPERS
// i mod n in 0 … n-1 for any i (tiles and chunks may reach several periods outside).
__device__ __forceinline__ int fd_wp_mod(int i, int n) { i %= n; return i < 0 ? i + n : i; }
// The next plane index, wrapped.
__device__ __forceinline__ int fd_wp_next(int i, int n) { return i + 1 == n ? 0 : i + 1; }
#endif
";

/// The pass `(v, vq) = (S^k, S^(k−1))` applied to `(u, uq)` (`S` the wave step, `uq` the
/// field one step before `u`). Parameters `(u, uq, c2, v, vq, nx, no, nm, bad, badval, tag)`.
pub fn wave_pass(spec: &WavePassSpec) -> String {
    let (ty, t, r) = (spec.ty, spec.s.t, spec.s.r as usize);
    let three = spec.dim == 3;
    let q = 2 * r + 1;
    let mut g = String::from(HELPERS);
    let threads = t.threads();
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({threads}, 1) @NAME@(const {ty}* __restrict__ u, const {ty}* __restrict__ uq, const {ty}* __restrict__ c2, {ty}* __restrict__ v, {ty}* __restrict__ vq, const int nx, const int no, const int nm, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag) {{"
    );
    let _ = writeln!(
        g,
        "  // Steps per pass, radius, queue length, tile (halo included), rows per thread, threads, output planes.\n  constexpr int K = {}, R = {r}, Q = {q}, SX = {}, SY = {}, P = {}, NT = {threads}, CH = {};",
        t.k, t.sx, t.sy, t.p, t.chunk
    );
    g.push_str("  (void)NT; (void)Q;\n");
    g.push_str(
        "  // A shared plane: the tile with R points of padding each side (never written; only\n",
    );
    g.push_str("  // points whose results are discarded read it).\n");
    g.push_str("  constexpr int RX = SX + 2 * R;\n");
    if three {
        g.push_str("  constexpr int PLANE = RX * (SY + 2 * R);\n");
    } else {
        g.push_str("  constexpr int PLANE = RX;\n");
    }
    g.push_str("  extern __shared__ __align__(16) unsigned char fd_wp_smem[];\n");
    let _ = writeln!(
        g,
        "  // Two buffers (by the advance's parity) of K planes: sh[(parity * K + level) * PLANE + point].\n  {ty}* const sh = reinterpret_cast<{ty}*>(fd_wp_smem);"
    );
    g.push_str("  // A pass earlier in this call met a non-finite value: write nothing, so that the state\n");
    g.push_str("  // before that pass survives for the host to replay with single steps.\n");
    g.push_str("  if (*reinterpret_cast<volatile unsigned long long*>(bad) != ~0ull) return;\n");
    let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
    g.push_str("  const int xs = (int)blockIdx.x * (SX - 2 * R * K) - R * K;\n");
    if three {
        g.push_str("  const int ys = (int)blockIdx.y * (SY - 2 * R * K) - R * K;\n");
    }
    g.push_str("  const int m0 = (int)blockIdx.z * CH, m1 = min(m0 + CH, nm);\n");
    g.push_str("  const long long sm = (long long)nx * no;\n");
    g.push_str(
        "  // A column of P rows at one x; consecutive threads take consecutive x (coalesced).\n",
    );
    if three {
        g.push_str("  const int lx = (int)threadIdx.x % SX, ly0 = ((int)threadIdx.x / SX) * P, gx = xs + lx;\n");
        g.push_str("  const int S0 = (ly0 + R) * RX + lx + R;  // the first point's index in a shared plane\n");
    } else {
        g.push_str("  const int lx = (int)threadIdx.x, ly0 = 0, gx = xs + lx;\n");
        g.push_str("  const int S0 = lx + R;\n");
    }
    g.push_str("  int off[P];  // in-plane index of the point (or its periodic image; planes hold < 2^31)\n");
    g.push_str("  bool own[P];       // one of this block's outputs\n");
    g.push_str("  bool in[P];        // inside the grid in the plane\n");
    g.push_str("#pragma unroll\n  for (int q = 0; q < P; ++q) {\n");
    if three {
        g.push_str("    const int ly = ly0 + q, gy = ys + ly;\n");
        g.push_str("    own[q] = lx >= R * K && lx < SX - R * K && ly >= R * K && ly < SY - R * K && gx < nx && gy < no;\n");
        g.push_str("    in[q] = gx >= 0 && gx < nx && gy >= 0 && gy < no;\n");
        if spec.periodic {
            g.push_str("    off[q] = fd_wp_mod(gx, nx) + nx * fd_wp_mod(gy, no);\n");
        } else {
            g.push_str("    off[q] = in[q] ? gx + nx * gy : 0;\n");
        }
    } else {
        g.push_str("    own[q] = lx >= R * K && lx < SX - R * K && gx < nx;\n");
        g.push_str("    in[q] = gx >= 0 && gx < nx;\n");
        if spec.periodic {
            g.push_str("    off[q] = fd_wp_mod(gx, nx);\n");
        } else {
            g.push_str("    off[q] = in[q] ? gx : 0;\n");
        }
    }
    g.push_str("  }\n");
    g.push_str("  (void)in;\n");
    // Which levels this thread's row group computes: level j is valid (and needed) on rows
    // r·j … sy − r·j − 1; a warp's threads share their rows.
    if three {
        g.push_str(
            "  // Level j is needed on rows R*j … SY-R*j-1 only: a row group outside skips it.\n",
        );
        g.push_str("  bool needs[K + 1];\n#pragma unroll\n  for (int j = 0; j <= K; ++j) needs[j] = ly0 + P > R * j && ly0 < SY - R * j;\n");
    }
    // The queues.
    for j in 0..t.k as usize {
        let slots: Vec<String> = (0..q).map(|s| format!("L{j}_{s}[P]")).collect();
        let _ = writeln!(
            g,
            "  {ty} {};  // level {j}, by age in advances",
            slots.join(", ")
        );
    }
    g.push_str("#pragma unroll\n  for (int q = 0; q < P; ++q) {\n");
    for j in 0..t.k as usize {
        let zeros: Vec<String> = (0..q).map(|s| format!("L{j}_{s}[q] = zero;")).collect();
        let _ = writeln!(g, "    {}", zeros.join(" "));
    }
    g.push_str("  }\n");
    let _ = writeln!(
        g,
        "  {ty} pre[P], prq[P], prc[P];  // u at the next advance's plane; uq and c² R planes behind it"
    );
    g.push_str("  const int t0 = m0 - R * K, t1 = m1 + R * K;\n");
    if spec.periodic {
        g.push_str(
            "  // Wrapped plane indices: u's and uq's next, c²'s per level (plane t - R*j).\n",
        );
        g.push_str("  int wu = fd_wp_mod(t0, nm), wq = fd_wp_mod(t0 - R, nm);\n");
        g.push_str("  int wc[K + 1];  // c²'s plane of level j ≥ 2\n#pragma unroll\n  for (int j = 2; j <= K; ++j) wc[j] = fd_wp_mod(t0 - R * j, nm);\n");
    }
    load_inputs(&mut g, spec.periodic, "t0", "  ");
    g.push_str(
        "  // Advance t: level 0 takes plane t, level j computes plane t - R*j; levels K and K-1\n",
    );
    g.push_str(
        "  // are written at plane t - R*K, so t runs R*K planes before and after the chunk.\n",
    );
    // One advance per iteration; the queues then move on one slot (register moves).
    g.push_str("  for (int t = t0; t < t1; ++t) {\n");
    advance(&mut g, spec);
    g.push_str("#pragma unroll\n    for (int q = 0; q < P; ++q) {\n");
    for j in 0..t.k as usize {
        // Slot s takes slot s + 1's plane (one advance older at the next advance).
        let mut line = format!("      {{ const {ty} f = L{j}_0[q];");
        for s in 0..q - 1 {
            let _ = write!(line, " L{j}_{s}[q] = L{j}_{}[q];", s + 1);
        }
        let _ = writeln!(line, " L{j}_{}[q] = f; }}", q - 1);
        g.push_str(&line);
    }
    g.push_str("    }\n");
    g.push_str("  }\n}\n");
    g
}

/// Loads u at plane `plane`, uq and c² at `plane − R` into `pre`, `prq` and `prc` (zero outside the grid,
/// or the wrapped `wu`, `wq`, which then move on).
fn load_inputs(g: &mut String, periodic: bool, plane: &str, pad: &str) {
    if periodic {
        let _ = writeln!(
            g,
            "{pad}#pragma unroll\n{pad}for (int q = 0; q < P; ++q) {{\n{pad}  pre[q] = __ldg(u + off[q] + (long long)wu * sm);\n{pad}  prq[q] = __ldg(uq + off[q] + (long long)wq * sm);\n{pad}  prc[q] = __ldg(c2 + off[q] + (long long)wq * sm);\n{pad}}}\n{pad}wu = fd_wp_next(wu, nm); wq = fd_wp_next(wq, nm);"
        );
    } else {
        let _ = writeln!(
            g,
            "{pad}{{\n{pad}  const int tl = {plane}, tq = tl - R;\n{pad}  const bool tin = tl >= 0 && tl < nm, qin = tq >= 0 && tq < nm;\n{pad}#pragma unroll\n{pad}  for (int q = 0; q < P; ++q) {{\n{pad}    pre[q] = (tin && in[q]) ? __ldg(u + off[q] + (long long)tl * sm) : zero;\n{pad}    prq[q] = (qin && in[q]) ? __ldg(uq + off[q] + (long long)tq * sm) : zero;\n{pad}    prc[q] = (qin && in[q]) ? __ldg(c2 + off[q] + (long long)tq * sm) : zero;\n{pad}  }}\n{pad}}}"
        );
    }
}

/// One advance (its plane is `t`): level 0's new plane, the next loads, every level's middle
/// plane into shared memory, the barrier, then levels 1 … K.
fn advance(g: &mut String, spec: &WavePassSpec) {
    let (ty, r, k) = (spec.ty, spec.s.r as usize, spec.s.t.k as usize);
    let three = spec.dim == 3;
    let q = 2 * r + 1;
    // The slot of the plane `age` advances old (age 0: this advance's); the rotation after
    // each advance moves slot s + 1 to slot s.
    let slot = |age: usize| (q - age % q) % q;
    g.push_str("  {\n    const int tc = t;\n");
    let _ = writeln!(
        g,
        "    {ty}* const bp = sh + ((tc - t0) & 1) * (K * PLANE);  // this advance's buffer"
    );
    let _ = writeln!(
        g,
        "    {ty} old1[P], c1[P];  // uq and c² at plane tc - R (level 1's p⁻ and c²)"
    );
    let _ = writeln!(
        g,
        "#pragma unroll\n    for (int q = 0; q < P; ++q) {{ L0_{}[q] = pre[q]; old1[q] = prq[q]; c1[q] = prc[q]; }}",
        slot(0)
    );
    load_inputs(g, spec.periodic, "tc + 1", "    ");
    // Middle planes into shared memory.
    g.push_str("    // Each level's plane R advances old (the next level's centre plane) into shared memory.\n");
    for j in 0..k {
        let guard = if three && j > 0 {
            format!("if (needs[{j}]) ")
        } else {
            String::new()
        };
        let _ = writeln!(
            g,
            "    {guard}{{\n#pragma unroll\n      for (int q = 0; q < P; ++q) bp[{j} * PLANE + S0 + q * RX] = L{j}_{}[q];\n    }}",
            slot(r)
        );
    }
    g.push_str("    __syncthreads();\n");
    for j in 1..=k {
        level(g, spec, j, &slot);
    }
    g.push_str("  }\n");
}

/// Level `j`'s plane `tc − R·j` at the thread's points.
fn level(g: &mut String, spec: &WavePassSpec, j: usize, slot: &dyn Fn(usize) -> usize) {
    let (ty, r, k) = (spec.ty, spec.s.r as usize, spec.s.t.k as usize);
    let three = spec.dim == 3;
    let p = spec.s.t.p as usize;
    let lit = |w: f64| literal(w, ty);
    let below = j - 1;
    let guard = if three {
        format!("if (needs[{j}]) ")
    } else {
        String::new()
    };
    let _ = writeln!(g, "    {guard}{{  // level {j}");
    let _ = writeln!(g, "      const int pj = tc - R * {j};");
    if !spec.periodic {
        g.push_str("      const bool pin = pj >= 0 && pj < nm;\n");
    }
    let _ = writeln!(
        g,
        "      const {ty}* const sp = bp + {below} * PLANE;  // level {below}'s plane pj"
    );
    // c² at plane pj: level 1's came with the inputs; the others' level 1 read R·(j−1)
    // advances ago (in cache).
    if j == 1 {
        g.push_str("      const auto& cj = c1;\n");
    } else if spec.periodic {
        let _ = writeln!(
            g,
            "      {ty} cj[P];\n#pragma unroll\n      for (int q = 0; q < P; ++q) cj[q] = __ldg(c2 + off[q] + (long long)wc[{j}] * sm);\n      wc[{j}] = fd_wp_next(wc[{j}], nm);"
        );
    } else {
        let _ = writeln!(
            g,
            "      {ty} cj[P];\n#pragma unroll\n      for (int q = 0; q < P; ++q) cj[q] = (pin && in[q]) ? __ldg(c2 + off[q] + (long long)pj * sm) : zero;"
        );
    }
    // The column's neighbours past its ends, once per column.
    if three {
        for d in 1..=r {
            let _ = writeln!(
                g,
                "      const {ty} ya{d} = sp[S0 - {d} * RX], yb{d} = sp[S0 + {} * RX];",
                p - 1 + d
            );
        }
    }
    let mid = |qq: usize| format!("L{below}_{}[{qq}]", slot(r));
    // Row `qq + d` of the column (d may be negative): a register inside it, else an end.
    let row = |qq: usize, d: i64| -> String {
        let y = qq as i64 + d;
        if y < 0 {
            format!("ya{}", -y)
        } else if y >= p as i64 {
            format!("yb{}", y - p as i64 + 1)
        } else {
            mid(y as usize)
        }
    };
    for qq in 0..p {
        let c = mid(qq);
        let _ = writeln!(g, "      {{");
        let _ = writeln!(g, "        const int s = S0 + {qq} * RX;");
        let _ = writeln!(g, "        {ty} total = {} * {c};", lit(spec.w0));
        let xs: Vec<String> = (1..=r)
            .map(|d| format!("{} * (sp[s - {d}] + sp[s + {d}])", lit(spec.w2[0][d])))
            .collect();
        let _ = writeln!(g, "        const {ty} acc_x = {};", xs.join(" + "));
        g.push_str("        total += acc_x;\n");
        if three {
            let ys: Vec<String> = (1..=r)
                .map(|d| {
                    format!(
                        "{} * ({} + {})",
                        lit(spec.w2[1][d]),
                        row(qq, -(d as i64)),
                        row(qq, d as i64)
                    )
                })
                .collect();
            let _ = writeln!(g, "        const {ty} acc_o = {};", ys.join(" + "));
            g.push_str("        total += acc_o;\n");
        }
        let ms: Vec<String> = (1..=r)
            .map(|d| {
                format!(
                    "{} * (L{below}_{}[{qq}] + L{below}_{}[{qq}])",
                    lit(spec.w2[2][d]),
                    slot(r + d),
                    slot(r - d)
                )
            })
            .collect();
        let _ = writeln!(g, "        const {ty} acc_m = {};", ms.join(" + "));
        g.push_str("        total += acc_m;\n");
        let old = if j == 1 {
            format!("old1[{qq}]")
        } else {
            format!("L{}_{}[{qq}]", j - 2, slot(2 * r))
        };
        let _ = writeln!(g, "        {ty} o = {c} + {c} - {old} + cj[{qq}] * total;");
        if !spec.periodic {
            let _ = writeln!(
                g,
                "        o = (pin && in[{qq}]) ? o : zero;  // outside the grid: zero at every level"
            );
        }
        if j < k {
            let _ = writeln!(g, "        L{j}_{}[{qq}] = o;", slot(0));
        } else {
            let _ = writeln!(
                g,
                "        if (own[{qq}] && pj >= m0 && pj < m1) {{\n          const long long c = off[{qq}] + (long long)pj * sm;\n          v[c] = o;\n          vq[c] = L{}_{}[{qq}];\n          if (!isfinite(o)) {{\n            const unsigned long long key = tag | (unsigned long long)c;\n            if (atomicMin(bad, key) > key) *badval = (double)o;\n          }}\n        }}",
                k - 1,
                slot(r)
            );
        }
        g.push_str("      }\n");
    }
    g.push_str("    }\n");
}

#[cfg(test)]
mod tests {
    use super::super::shape::Temporal;
    use super::*;

    fn spec(dim: usize, periodic: bool, r: usize) -> WavePassSpec {
        let w = (0..=r).map(|d| 1.0 / (d as f64 + 1.0)).collect::<Vec<_>>();
        WavePassSpec {
            ty: "float",
            dim,
            periodic,
            w2: [w.clone(), w.clone(), w],
            w0: -3.0,
            s: WaveShape {
                t: Temporal {
                    k: 2,
                    sx: 64,
                    sy: if dim == 3 { 32 } else { 1 },
                    p: if dim == 3 { 4 } else { 1 },
                    chunk: 16,
                },
                r: r as u32,
            },
        }
    }

    #[test]
    fn the_update_sums_in_the_one_step_kernels_order() {
        let k = wave_pass(&spec(3, true, 4));
        // Level 1's first point: centre the middle slot (age 4), march pairs around it.
        assert!(k.contains("float total = -3.0f * L0_5[0];"), "{k}");
        assert!(k.contains("const float acc_x = 0.5f * (sp[s - 1] + sp[s + 1]) + "));
        assert!(k.contains("0.2f * (L0_1[0] + L0_0[0])"), "{k}");
        assert!(k.contains("float o = L0_5[0] + L0_5[0] - old1[0] + cj[0] * total;"));
        // Level 2's p⁻ is level 0's oldest plane.
        assert!(k.contains("- L0_1[0] + cj[0] * total;"), "{k}");
        // Inside the column the y neighbours are registers; past its ends, shared loads.
        assert!(k.contains("0.5f * (ya1 + L0_5[1])"), "{k}");
        assert!(!k.contains("in[0]) ? o"));
        let z = wave_pass(&spec(2, false, 2));
        assert!(z.contains("o = (pin && in[0]) ? o : zero;") && !z.contains("acc_o"));
    }
}
