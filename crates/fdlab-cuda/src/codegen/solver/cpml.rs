//! CUDA C for the wave step's CPML: the ψ update before the step and the terms after it, each
//! launched over the layers' shell only ([`Shell`]), one cell per thread. Kept out of the step
//! kernel: in it, their code doubled its registers and halved its speed everywhere.

use super::step::{StepSpec, AX};
use super::{literal, PRELUDE};
use std::fmt::Write;

/// First-derivative weights per march-order axis for the CPML terms.
#[derive(Debug, Clone)]
pub struct CpmlSpec {
    /// Weights for offsets 0..=r per axis (x, o, m); offset −k has −w[k].
    pub w1: [Vec<f64>; 3],
    /// Blocks the shell kernels must fit on an SM (`__launch_bounds__`), 0 for the compiler's
    /// choice.
    pub min_blocks: u32,
}

/// Axis `a`'s position variable, its size and the stride suffix of a step along it, in the
/// shell kernels' names.
fn axis(a: usize) -> (&'static str, &'static str, &'static str) {
    match a {
        0 => ("x", "nx", ""),
        1 => ("o", "no", " * so"),
        _ => ("m", "nm", " * sm"),
    }
}

/// Threads per block of the shell kernels.
pub const SHELL_BLOCK: u32 = 256;

/// The cells a shell kernel visits: per axis (x, middle, march) the first `lo` and last `hi`
/// indices, and every cell with an index in them along some axis. Threads take them in three
/// parts, each a whole number of blocks: the march-axis slabs, by tiles of [`tile`] cells of
/// a plane (a block's tile through every slab plane before the next tile, so the planes a
/// derivative along the march reads are still in L2 when their own turn comes); then the
/// middle-axis slabs, whole rows of the planes between; then the x ends of the rows left, x
/// fastest in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shell {
    /// Indices at the low end of each axis (x, middle, march) in the shell.
    pub lo: [u32; 3],
    /// Indices at the high end of each axis in the shell.
    pub hi: [u32; 3],
    /// The tile of the march-axis slabs ([`tile`]).
    pub tile: [u32; 2],
    /// Threads of the launch: the cells, and the idle threads of tiles that cross the grid's
    /// edge.
    pub threads: u64,
}

impl Shell {
    /// The smallest shell holding every flagged index of each axis (`flags[a]` has one entry
    /// per index of axis `a`; `n`: the sizes in kernel order), with the march-axis slabs in
    /// tiles of `tile` (x, middle).
    pub fn covering_in(n: [usize; 3], flags: [&[bool]; 3], tile: (u64, u64)) -> Shell {
        let mut lo = [0u32; 3];
        let mut hi = [0u32; 3];
        for a in 0..3 {
            let f = flags[a];
            // The runs of flags at each end (a layer's, or a slab of a split grid cut from
            // one, whose flags may run past its middle): exactly the flagged indices.
            let lead = f.iter().position(|&v| !v).unwrap_or(f.len());
            let trail = f[lead..].iter().rev().position(|&v| !v).unwrap_or(0);
            if !f[lead..f.len() - trail].contains(&true) && f.len() == n[a] {
                lo[a] = lead as u32;
                hi[a] = trail as u32;
                continue;
            }
            let half = n[a].div_ceil(2).min(f.len());
            // lo ≤ ⌈n/2⌉ and hi ≤ n − ⌈n/2⌉: the two ends never overlap.
            lo[a] = f[..half].iter().rposition(|&v| v).map_or(0, |i| i + 1) as u32;
            hi[a] = f[half..]
                .iter()
                .position(|&v| v)
                .map_or(0, |i| f.len() - half - i) as u32;
        }
        let [nx, no, nm] = n.map(|v| v as u64);
        let (lo64, hi64) = (lo.map(u64::from), hi.map(u64::from));
        let mi = nm - lo64[2] - hi64[2];
        let oi = no - lo64[1] - hi64[1];
        let (tx, to) = tile;
        let tiles = nx.div_ceil(tx) * no.div_ceil(to);
        let threads = tiles * tx * to * (lo64[2] + hi64[2])
            + (lo64[1] + hi64[1]) * nx * mi
            + (lo64[0] + hi64[0]) * oi * mi;
        Shell {
            lo,
            hi,
            tile: [tx as u32, to as u32],
            threads,
        }
    }

    /// Whether the launch's thread indices fit the kernels' 32-bit arithmetic (a grid that
    /// fits in a GPU's memory with layers of a sensible thickness always does).
    pub fn fits(&self) -> bool {
        self.threads + u64::from(SHELL_BLOCK) < 1 << 32
    }

    /// Blocks of [`SHELL_BLOCK`] threads.
    pub fn blocks(&self) -> u32 {
        self.threads.div_ceil(SHELL_BLOCK as u64) as u32
    }
}

/// The parameters a shell kernel takes after its own: the shell's ends and size.
const SHELL_PARAMS: &str = ", const int xlo, const int xhi, const int olo, const int ohi, const int mlo, const int mhi, const int tx, const int to, const unsigned threads";

/// The opening of the shell kernels: the signature, then the thread's cell (`x`, `o`, `m`),
/// the strides and its index `c` (see [`Shell`] for the numbering).
fn shell_head(g: &mut String, params: &str, ty: &str, min_blocks: u32) {
    let bounds = match min_blocks {
        0 => format!("{SHELL_BLOCK}"),
        b => format!("{SHELL_BLOCK}, {b}"),
    };
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({bounds}) @NAME@({params}{SHELL_PARAMS}) {{"
    );
    // 32-bit index arithmetic (the launch has fewer than 2³² threads, see `Shell::fits`):
    // 64-bit divisions cost the f32 kernels a few points.
    let _ = writeln!(
        g,
        "  const unsigned t = blockIdx.x * {SHELL_BLOCK}u + threadIdx.x;"
    );
    g.push_str(
        "  if (t >= threads) return;
  const long long so = nx, sm = (long long)nx * no;
  const unsigned ntx = (nx + tx - 1) / tx, slabs = mlo + mhi, area = tx * to;
  const unsigned ms = ntx * ((no + to - 1) / to) * slabs * area;
  const unsigned mi = nm - mlo - mhi;                 // planes between the march-axis slabs
  const unsigned orow = (olo + ohi) * nx;             // cells of a plane in the middle slabs
  int x, o, m;
  if (t < ms) {
    const unsigned b = t / area;                      // (tile, plane), planes fastest
    const unsigned w = t - b * area;
    const unsigned p = b % slabs, tile = b / slabs;
    x = (int)((tile % ntx) * tx + w % tx);
    o = (int)((tile / ntx) * to + w / tx);
    if (x >= nx || o >= no) return;
    m = (int)p < mlo ? (int)p : nm - mhi + ((int)p - mlo);
  } else if (t - ms < orow * mi) {
    const unsigned u = t - ms;
    const unsigned p = u / orow, r = u - p * orow;
    const int oo = (int)(r / nx);
    x = (int)r - oo * nx;
    o = oo < olo ? oo : no - ohi + (oo - olo);
    m = mlo + (int)p;
  } else {
    const unsigned u = t - ms - orow * mi;
    const unsigned xw = xlo + xhi, oi = no - olo - ohi;
    const unsigned row = u / xw;
    const int xx = (int)(u - row * xw);
    x = xx < xlo ? xx : nx - xhi + (xx - xlo);
    o = olo + (int)(row % oi);
    m = mlo + (int)(row / oi);
  }
  const long long c = x + so * o + sm * m;
",
    );
    let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
}

/// The CPML memory update `ψ_a = b ψ_a + a ∂_a p` on the layer cells (where an axis's `a` is
/// not zero), before the step: the step reads ψ around each point.
pub fn psi(spec: &StepSpec, cp: &CpmlSpec) -> String {
    let ty = spec.ty;
    let r = spec.r;
    let mut g = String::from(PRELUDE);
    let mut params =
        format!("const {ty}* __restrict__ u, const int nx, const int no, const int nm");
    for a in AX {
        let _ = write!(
            params,
            ", {ty}* __restrict__ psi_{a}, const {ty}* __restrict__ pa_{a}, const {ty}* __restrict__ pb_{a}"
        );
    }
    shell_head(&mut g, &params, ty, cp.min_blocks);
    let axes = spec.axes();
    let _ = writeln!(g, "  const {ty} a_x = pa_x[x], b_x = pb_x[x];");
    if spec.three {
        let _ = writeln!(g, "  const {ty} a_o = pa_o[o], b_o = pb_o[o];");
    }
    let _ = writeln!(g, "  const {ty} a_m = pa_m[m], b_m = pb_m[m];");
    g.push_str("  {\n");
    for &a in &axes {
        let name = AX[a];
        let (pos, n, s) = axis(a);
        let _ = writeln!(g, "    if (a_{name} != zero) {{");
        let terms: Vec<String> = (1..=r)
            .map(|k| {
                let w = literal(cp.w1[a][k], ty);
                format!(
                    "{w} * (({pos} + {k} < {n} ? __ldg(u + c + {k}{s}) : zero) - ({pos} >= {k} ? __ldg(u + c - {k}{s}) : zero))"
                )
            })
            .collect();
        let _ = writeln!(g, "      const {ty} d = {};", terms.join(" + "));
        let _ = writeln!(
            g,
            "      psi_{name}[c] = b_{name} * psi_{name}[c] + a_{name} * d;"
        );
        g.push_str("    }\n");
    }
    g.push_str("  }\n}\n");
    g
}

/// The CPML's terms after the wave step, on the cells within its layers' reach (flagged in
/// `act_*`): `q += c²Δt² Σ_a (∂_a ψ_a + ζ_a)` with `ζ_a = b ζ_a + a (∂²_a p + ∂_a ψ_a)`.
pub fn cpml_terms(spec: &StepSpec, cp: &CpmlSpec) -> String {
    let (ty, r) = (spec.ty, spec.r);
    let mut g = String::from(PRELUDE);
    let mut params = format!(
        "const {ty}* __restrict__ u, {ty}* __restrict__ q, const {ty}* __restrict__ c2, const int nx, const int no, const int nm, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag"
    );
    for a in AX {
        let _ = write!(
            params,
            ", const {ty}* __restrict__ psi_{a}, {ty}* __restrict__ zeta_{a}, const {ty}* __restrict__ pa_{a}, const {ty}* __restrict__ pb_{a}, const unsigned char* __restrict__ act_{a}"
        );
    }
    shell_head(&mut g, &params, ty, cp.min_blocks);
    g.push_str("  const bool act_x0 = act_x[x];\n");
    let axes = spec.axes();
    if spec.three {
        g.push_str("  const bool act_o0 = act_o[o];\n");
    }
    g.push_str("  {\n");
    g.push_str("    const bool act_m0 = act_m[m];\n");
    let _ = writeln!(g, "    const {ty} pc = __ldg(u + c);");
    let _ = writeln!(g, "    {ty} extra = zero;");
    for &a in &axes {
        let name = AX[a];
        let (pos, n, s) = axis(a);
        let near = |arr: &str, k: usize, up: bool| {
            if up {
                format!("({pos} + {k} < {n} ? {arr}[c + {k}{s}] : zero)")
            } else {
                format!("({pos} >= {k} ? {arr}[c - {k}{s}] : zero)")
            }
        };
        let _ = writeln!(g, "    if (act_{name}0) {{");
        let d2: Vec<String> = (1..=r)
            .map(|k| {
                format!(
                    "{} * ({} + {})",
                    literal(spec.w2[a][k], ty),
                    near("u", k, false),
                    near("u", k, true)
                )
            })
            .collect();
        let _ = writeln!(
            g,
            "      const {ty} d2 = {} * pc + {};",
            literal(spec.w2[a][0], ty),
            d2.join(" + ")
        );
        let dpsi: Vec<String> = (1..=r)
            .map(|k| {
                let arr = format!("psi_{name}");
                format!(
                    "{} * ({} - {})",
                    literal(cp.w1[a][k], ty),
                    near(&arr, k, true),
                    near(&arr, k, false)
                )
            })
            .collect();
        let _ = writeln!(g, "      const {ty} dpsi = {};", dpsi.join(" + "));
        let _ = writeln!(
            g,
            "      const {ty} zn = pb_{name}[{pos}] * zeta_{name}[c] + pa_{name}[{pos}] * (d2 + dpsi);"
        );
        let _ = writeln!(g, "      zeta_{name}[c] = zn;");
        g.push_str("      extra += dpsi + zn;\n");
        g.push_str("    }\n");
    }
    let _ = writeln!(g, "    const {ty} out = q[c] + __ldg(c2 + c) * extra;");
    g.push_str("    q[c] = out;\n");
    g.push_str("    if (!isfinite(out)) {\n");
    g.push_str("      const unsigned long long key = tag | (unsigned long long)c;\n");
    g.push_str("      if (atomicMin(bad, key) > key) *badval = (double)out;\n");
    g.push_str("    }\n");
    g.push_str("  }\n}\n");
    g
}

#[cfg(test)]
mod tests {
    use super::Shell;

    /// The kernels' numbering of the shell (`shell_head`'s arithmetic, in Rust); `None` for
    /// an idle thread.
    fn cell(s: &Shell, n: [usize; 3], t: u64) -> Option<[usize; 3]> {
        let (lo, hi) = (s.lo.map(|v| v as u64), s.hi.map(|v| v as u64));
        let [nx, no, nm] = n.map(|v| v as u64);
        let (tx, to) = (s.tile[0] as u64, s.tile[1] as u64);
        let ntx = nx.div_ceil(tx);
        let slabs = lo[2] + hi[2];
        let ms = ntx * no.div_ceil(to) * slabs * tx * to;
        let mi = nm - lo[2] - hi[2];
        let orow = (lo[1] + hi[1]) * nx;
        let end = |i: u64, a: usize, len: u64| {
            if i < lo[a] {
                i
            } else {
                len - hi[a] + (i - lo[a])
            }
        };
        let (x, o, m) = if t < ms {
            let b = t / (tx * to);
            let w = t - b * tx * to;
            let tile = b / slabs;
            let (x, o) = ((tile % ntx) * tx + w % tx, (tile / ntx) * to + w / tx);
            if x >= nx || o >= no {
                return None;
            }
            (x, o, end(b % slabs, 2, nm))
        } else if t - ms < orow * mi {
            let u = t - ms;
            let p = u / orow;
            let r = u - p * orow;
            (r % nx, end(r / nx, 1, no), lo[2] + p)
        } else {
            let u = t - ms - orow * mi;
            let xw = lo[0] + hi[0];
            let oi = no - lo[1] - hi[1];
            let row = u / xw;
            (end(u % xw, 0, nx), lo[1] + row % oi, lo[2] + row / oi)
        };
        Some([x, o, m].map(|v| v as usize))
    }

    /// Every flagged cell is numbered exactly once, and nothing else, for layers of odd
    /// widths, one-sided layers, axes without layers and a 2-D grid's single middle index.
    #[test]
    fn the_shell_numbers_each_cell_in_reach_of_a_layer_once() {
        let ends = |n: usize, lo: usize, hi: usize| -> Vec<bool> {
            (0..n).map(|i| i < lo || i >= n - hi).collect()
        };
        let cases = [
            ([13usize, 7, 9], [(3usize, 2usize), (1, 1), (2, 3)]),
            ([16, 5, 11], [(0, 4), (0, 0), (3, 0)]),
            ([9, 1, 12], [(2, 2), (0, 0), (4, 4)]),
            ([6, 6, 6], [(3, 3), (0, 0), (0, 0)]),
            ([5, 4, 3], [(0, 0), (0, 0), (0, 0)]),
            ([70, 19, 9], [(4, 4), (4, 4), (3, 3)]),
            ([300, 1, 11], [(5, 5), (0, 0), (2, 2)]),
            // Slabs of a split grid: a layer's run past the middle, or over all of it.
            ([8, 5, 9], [(2, 2), (0, 0), (7, 0)]),
            ([8, 5, 9], [(1, 1), (1, 1), (0, 6)]),
            ([6, 4, 5], [(0, 0), (0, 0), (5, 0)]),
        ];
        for (n, w) in cases {
            let flags: Vec<Vec<bool>> = (0..3).map(|a| ends(n[a], w[a].0, w[a].1)).collect();
            let f = [&flags[0][..], &flags[1], &flags[2]];
            let plane = (n[0] as u64, n[1] as u64);
            for tile in [(32, 8.min(plane.1)), (256, 1), plane, (7, 3.min(plane.1))] {
                let s = Shell::covering_in(n, f, tile);
                let mut seen = vec![0u32; n.iter().product()];
                for t in 0..s.threads {
                    let Some([x, o, m]) = cell(&s, n, t) else {
                        continue;
                    };
                    assert!(
                        x < n[0] && o < n[1] && m < n[2],
                        "{n:?} {w:?}: {t} → {x} {o} {m}"
                    );
                    seen[x + n[0] * (o + n[1] * m)] += 1;
                }
                for m in 0..n[2] {
                    for o in 0..n[1] {
                        for x in 0..n[0] {
                            let want = flags[0][x] || flags[1][o] || flags[2][m];
                            let got = seen[x + n[0] * (o + n[1] * m)];
                            assert_eq!(got, want as u32, "{n:?} {w:?} {tile:?} at {x} {o} {m}");
                        }
                    }
                }
            }
        }
    }
}
