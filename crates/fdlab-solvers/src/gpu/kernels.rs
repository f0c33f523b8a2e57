//! CUDA C for the fused GPU time steps, generated with the weights as literals.
//!
//! Every step kernel marches: a thread owns one x point of one row of the middle axis (y in
//! 3-D; in 2-D there is none and `no = 1`) and walks `chunk` planes along the last axis (z in
//! 3-D, y in 2-D), keeping the centre column's neighbours along the march in registers. x and
//! middle-axis neighbours come through the read-only cache, which the adjacent threads of the
//! block fill. Each grid point is read from and written to device memory once per step: the
//! stencil, the update and the boundary terms happen in one kernel.
//!
//! Coordinates in the kernels: `x`, `o` (middle axis) and `m` (marching axis); strides 1,
//! `so = nx` and `sm = nx·no`, so the arrays are the grid's own (x fastest, no padding).

use std::fmt::Write;

/// Threads per block along x and along the middle axis, planes per block, and how many
/// planes ahead of the one computed each thread loads (bytes in flight hide the latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    pub bx: u32,
    pub by: u32,
    pub chunk: u32,
    pub ahead: u32,
}

impl Launch {
    /// The shape for a stencil of radius `r` in `dim` dimensions: 32 × 8 threads in 3-D (a
    /// warp spans a 128-byte row in f32) and 256 in a row in 2-D; longer marches for wider
    /// stencils, whose march-axis halo is reloaded at each chunk's start.
    pub(crate) fn for_stencil(dim: usize, r: usize) -> Launch {
        if let Some(l) = Self::from_env() {
            return l;
        }
        let chunk = if r > 2 { 128 } else { 64 };
        let (bx, by) = if dim == 3 { (32, 8) } else { (256, 1) };
        Launch {
            bx,
            by,
            chunk,
            ahead: 4,
        }
    }

    /// Loads no further ahead than the march axis's `nm` points allow: a periodic plane
    /// index is wrapped once, so the furthest plane read must be less than `2 nm` away.
    pub(crate) fn within(self, nm: usize, r: usize) -> Launch {
        Launch {
            ahead: self.ahead.min(nm.saturating_sub(r + 1) as u32),
            ..self
        }
    }

    /// `FDLAB_SOLVER_LAUNCH=bx,by,chunk,ahead`: another shape, for measuring.
    fn from_env() -> Option<Launch> {
        let v: Vec<u32> = std::env::var("FDLAB_SOLVER_LAUNCH")
            .ok()?
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?;
        match v[..] {
            [bx, by, chunk, ahead] if bx * by <= 1024 && bx * by > 0 && chunk > 0 => Some(Launch {
                bx,
                by,
                chunk,
                ahead,
            }),
            _ => None,
        }
    }

    /// Blocks along x, the middle axis and the march for sizes `(nx, no, nm)`.
    pub(crate) fn grid(&self, nx: usize, no: usize, nm: usize) -> [u32; 3] {
        [
            nx.div_ceil(self.bx as usize) as u32,
            no.div_ceil(self.by as usize) as u32,
            nm.div_ceil(self.chunk as usize) as u32,
        ]
    }
}

/// What a step kernel is generated from.
#[derive(Debug, Clone)]
pub(crate) struct StepSpec {
    /// `"float"` or `"double"`.
    pub ty: &'static str,
    /// Stencil radius.
    pub r: usize,
    /// Whether a middle axis exists (3-D).
    pub three: bool,
    /// Periodic (wrap) or zero-valued outside the grid.
    pub periodic: bool,
    /// Second-derivative weights per march-order axis (x, o, m), offsets 0..=r.
    pub w2: [Vec<f64>; 3],
    /// The sum of the centre weights.
    pub w0: f64,
    /// Launch shape.
    pub launch: Launch,
}

/// A literal of `w` in the kernel's type: the value the CPU stepper converts the weight to.
pub(crate) fn literal(w: f64, ty: &str) -> String {
    if ty == "float" {
        format!("{:?}f", w as f32)
    } else {
        format!("{w:?}")
    }
}

impl StepSpec {
    fn axes(&self) -> Vec<usize> {
        if self.three {
            vec![0, 1, 2]
        } else {
            vec![0, 2]
        }
    }

    /// The kernel's opening: thread coordinates, its planes, neighbour offsets (wrapped when
    /// periodic, with inside-the-grid flags otherwise) and the march queue filled up to the
    /// plane before the first.
    fn head(&self, g: &mut String, params: &str) {
        let (ty, r, l) = (self.ty, self.r, self.launch);
        let _ = writeln!(
            g,
            "extern \"C\" __global__ void __launch_bounds__({}) @NAME@({params}) {{",
            l.bx * l.by
        );
        let _ = writeln!(g, "  const int x = blockIdx.x * {} + threadIdx.x;", l.bx);
        let _ = writeln!(g, "  const int o = blockIdx.y * {} + threadIdx.y;", l.by);
        g.push_str("  if (x >= nx || o >= no) return;\n");
        let _ = writeln!(g, "  const int m0 = blockIdx.z * {};", l.chunk);
        let _ = writeln!(g, "  const int m1 = min(m0 + {}, nm);", l.chunk);
        g.push_str("  const long long so = nx, sm = (long long)nx * no;\n");
        g.push_str("  const long long col = x + so * o;\n");
        let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
        for k in 1..=r {
            if self.periodic {
                let _ = writeln!(
                    g,
                    "  const int xm{k} = x >= {k} ? -{k} : nx - {k}, xp{k} = x + {k} < nx ? {k} : {k} - nx;"
                );
                if self.three {
                    let _ = writeln!(
                        g,
                        "  const long long om{k} = (o >= {k} ? -{k} : no - {k}) * so, op{k} = (o + {k} < no ? {k} : {k} - no) * so;"
                    );
                }
            } else {
                let _ = writeln!(g, "  const bool vxm{k} = x >= {k}, vxp{k} = x + {k} < nx;");
                if self.three {
                    let _ = writeln!(g, "  const bool vom{k} = o >= {k}, vop{k} = o + {k} < no;");
                }
            }
        }
        let last = self.last();
        for t in 0..last {
            let _ = writeln!(
                g,
                "  {ty} q{t} = {};",
                self.march_load("u", &format!("m0 + ({})", t as i64 - r as i64))
            );
        }
        let _ = writeln!(g, "  {ty} q{last} = zero;");
    }

    /// The last queue slot: the plane `ahead` planes past the stencil's reach.
    fn last(&self) -> usize {
        2 * self.r + self.launch.ahead as usize
    }

    /// `src` at plane `mm` of this thread's column: wrapped or zero outside.
    fn march_load(&self, src: &str, mm: &str) -> String {
        if self.periodic {
            format!("__ldg({src} + col + fd_wrap({mm}, nm) * sm)")
        } else {
            format!("fd_inside({mm}, nm) ? __ldg({src} + col + (long long)({mm}) * sm) : zero")
        }
    }

    /// The neighbour of `c` at offset `k` below (`up = false`) or above along x (axis 0) or
    /// the middle axis (1), from `src`.
    fn side_load(&self, src: &str, axis: usize, k: usize, up: bool) -> String {
        let (ax, s) = if axis == 0 { ("x", "") } else { ("o", " * so") };
        let dir = if up { "p" } else { "m" };
        if self.periodic {
            format!("__ldg({src} + c + {ax}{dir}{k})")
        } else {
            let sign = if up { "+" } else { "-" };
            format!("(v{ax}{dir}{k} ? __ldg({src} + c {sign} {k}{s}) : zero)")
        }
    }

    /// The sum of axis `a`'s neighbour pairs, `Σ w[k] (u[c − k] + u[c + k])`, as an expression.
    fn pair_sum(&self, a: usize) -> String {
        let terms: Vec<String> = (1..=self.r)
            .map(|k| {
                let w = literal(self.w2[a][k], self.ty);
                let pair = if a == 2 {
                    format!("q{} + q{}", self.r - k, self.r + k)
                } else {
                    format!(
                        "{} + {}",
                        self.side_load("u", a, k, false),
                        self.side_load("u", a, k, true)
                    )
                };
                format!("{w} * ({pair})")
            })
            .collect();
        terms.join(" + ")
    }

    /// The march loop's opening (next plane into the queue, this point's index `c`).
    fn loop_open(&self, g: &mut String) {
        g.push_str("  for (int m = m0; m < m1; ++m) {\n");
        let _ = writeln!(
            g,
            "    q{} = {};",
            self.last(),
            self.march_load("u", &format!("m + {}", self.r + self.launch.ahead as usize))
        );
        g.push_str("    const long long c = col + (long long)m * sm;\n");
    }

    /// Record a non-finite `out`: the smallest step-tagged index wins.
    fn check(g: &mut String) {
        g.push_str("    if (!isfinite(out)) {\n");
        g.push_str("      const unsigned long long key = tag | (unsigned long long)c;\n");
        g.push_str("      if (atomicMin(bad, key) > key) *badval = (double)out;\n");
        g.push_str("    }\n");
    }

    /// Shift the queue by one plane and close the loop and the kernel.
    fn loop_close(&self, g: &mut String) {
        for t in 0..self.last() {
            let _ = writeln!(g, "    q{t} = q{};", t + 1);
        }
        g.push_str("  }\n}\n");
    }
}

/// Helpers the kernels share.
const PRELUDE: &str = "\
#ifndef FDLAB_SOLVER_HELPERS
#define FDLAB_SOLVER_HELPERS
__device__ __forceinline__ int fd_wrap(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }
__device__ __forceinline__ bool fd_inside(int i, int n) { return i >= 0 && i < n; }
#endif
";

/// The heat step `v = u + Δt κ L u`; κ from `kap` per point when `field_kappa`, else the
/// literal `kc`.
pub(crate) fn heat(spec: &StepSpec, field_kappa: bool, kc: f64) -> String {
    let ty = spec.ty;
    let mut g = String::from(PRELUDE);
    let params = format!(
        "const {ty}* __restrict__ u, {ty}* __restrict__ v, const {ty}* __restrict__ kap, const int nx, const int no, const int nm, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag"
    );
    spec.head(&mut g, &params);
    spec.loop_open(&mut g);
    let _ = writeln!(g, "    {ty} lap = {} * q{};", literal(spec.w0, ty), spec.r);
    let axes = spec.axes();
    for k in 1..=spec.r {
        let mut line = "    lap = lap".to_string();
        for &a in &axes {
            let pair = if a == 2 {
                format!("q{} + q{}", spec.r - k, spec.r + k)
            } else {
                format!(
                    "{} + {}",
                    spec.side_load("u", a, k, false),
                    spec.side_load("u", a, k, true)
                )
            };
            let _ = write!(line, " + {} * ({pair})", literal(spec.w2[a][k], ty));
        }
        let _ = writeln!(g, "{line};");
    }
    let k = if field_kappa {
        "__ldg(kap + c)".to_string()
    } else {
        literal(kc, ty)
    };
    let _ = writeln!(g, "    const {ty} out = q{} + {k} * lap;", spec.r);
    g.push_str("    v[c] = out;\n");
    StepSpec::check(&mut g);
    spec.loop_close(&mut g);
    g
}

/// First-derivative weights per march-order axis for the CPML terms.
#[derive(Debug, Clone)]
pub(crate) struct CpmlSpec {
    /// Weights for offsets 0..=r per axis (x, o, m); offset −k has −w[k].
    pub w1: [Vec<f64>; 3],
}

/// The names of the per-axis CPML arrays in march order.
const AX: [&str; 3] = ["x", "o", "m"];

/// The wave step `q = 2p − q + c²Δt² (L p + CPML terms)`, in place on `q` (p⁻ in, p⁺ out).
/// With a CPML, cells flagged in `act_*` also read ψ around them and update their ζ.
pub(crate) fn wave(spec: &StepSpec, cpml: Option<&CpmlSpec>) -> String {
    let ty = spec.ty;
    let r = spec.r;
    let mut g = String::from(PRELUDE);
    let mut params = format!(
        "const {ty}* __restrict__ u, {ty}* __restrict__ q, const {ty}* __restrict__ c2, const int nx, const int no, const int nm, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag"
    );
    if cpml.is_some() {
        for a in AX {
            let _ = write!(
                params,
                ", const {ty}* __restrict__ psi_{a}, {ty}* __restrict__ zeta_{a}, const {ty}* __restrict__ pa_{a}, const {ty}* __restrict__ pb_{a}, const unsigned char* __restrict__ act_{a}"
            );
        }
    }
    spec.head(&mut g, &params);
    let axes = spec.axes();
    if cpml.is_some() {
        g.push_str("  const bool act_x0 = act_x[x];\n");
        if spec.three {
            g.push_str("  const bool act_o0 = act_o[o];\n");
        }
    }
    spec.loop_open(&mut g);
    let _ = writeln!(g, "    const {ty} pc = q{r};");
    let _ = writeln!(g, "    {ty} total = {} * pc;", literal(spec.w0, ty));
    for &a in &axes {
        let _ = writeln!(g, "    const {ty} acc_{} = {};", AX[a], spec.pair_sum(a));
        let _ = writeln!(g, "    total += acc_{};", AX[a]);
    }
    if let Some(cp) = cpml {
        let act: Vec<String> = axes
            .iter()
            .map(|&a| match a {
                0 => "act_x0".to_string(),
                1 => "act_o0".to_string(),
                _ => "act_m[m]".to_string(),
            })
            .collect();
        let _ = writeln!(g, "    if ({}) {{", act.join(" || "));
        for (&a, flag) in axes.iter().zip(&act) {
            let name = AX[a];
            let pos = ["x", "o", "m"][a];
            let (n, s) = match a {
                0 => ("nx", ""),
                1 => ("no", " * so"),
                _ => ("nm", " * sm"),
            };
            let _ = writeln!(g, "      if ({flag}) {{");
            let terms: Vec<String> = (1..=r)
                .map(|k| {
                    let w = literal(cp.w1[a][k], ty);
                    format!(
                        "{w} * (({pos} + {k} < {n} ? psi_{name}[c + {k}{s}] : zero) - ({pos} >= {k} ? psi_{name}[c - {k}{s}] : zero))"
                    )
                })
                .collect();
            let _ = writeln!(g, "        const {ty} dpsi = {};", terms.join(" + "));
            let _ = writeln!(
                g,
                "        const {ty} d2 = {} * pc + acc_{name};",
                literal(spec.w2[a][0], ty)
            );
            let _ = writeln!(
                g,
                "        const {ty} zn = pb_{name}[{pos}] * zeta_{name}[c] + pa_{name}[{pos}] * (d2 + dpsi);"
            );
            let _ = writeln!(g, "        zeta_{name}[c] = zn;");
            g.push_str("        total += dpsi + zn;\n");
            g.push_str("      }\n");
        }
        g.push_str("    }\n");
    }
    let _ = writeln!(
        g,
        "    const {ty} out = pc + pc - q[c] + __ldg(c2 + c) * total;"
    );
    g.push_str("    q[c] = out;\n");
    StepSpec::check(&mut g);
    spec.loop_close(&mut g);
    g
}

/// The CPML memory update `ψ_a = b ψ_a + a ∂_a p` on the layer cells (where an axis's `a` is
/// not zero), before the step: the step reads ψ around each point.
pub(crate) fn psi(spec: &StepSpec, cp: &CpmlSpec) -> String {
    let ty = spec.ty;
    let r = spec.r;
    let l = spec.launch;
    let mut g = String::from(PRELUDE);
    let mut params =
        format!("const {ty}* __restrict__ u, const int nx, const int no, const int nm");
    for a in AX {
        let _ = write!(
            params,
            ", {ty}* __restrict__ psi_{a}, const {ty}* __restrict__ pa_{a}, const {ty}* __restrict__ pb_{a}"
        );
    }
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({}) @NAME@({params}) {{",
        l.bx * l.by
    );
    let _ = writeln!(g, "  const int x = blockIdx.x * {} + threadIdx.x;", l.bx);
    let _ = writeln!(g, "  const int o = blockIdx.y * {} + threadIdx.y;", l.by);
    g.push_str("  if (x >= nx || o >= no) return;\n");
    let _ = writeln!(g, "  const int m0 = blockIdx.z * {};", l.chunk);
    let _ = writeln!(g, "  const int m1 = min(m0 + {}, nm);", l.chunk);
    g.push_str("  const long long so = nx, sm = (long long)nx * no;\n");
    g.push_str("  const long long col = x + so * o;\n");
    let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
    let axes = spec.axes();
    let _ = writeln!(g, "  const {ty} a_x = pa_x[x], b_x = pb_x[x];");
    if spec.three {
        let _ = writeln!(g, "  const {ty} a_o = pa_o[o], b_o = pb_o[o];");
        g.push_str("  const bool side = a_x != zero || a_o != zero;\n");
    } else {
        g.push_str("  const bool side = a_x != zero;\n");
    }
    g.push_str("  for (int m = m0; m < m1; ++m) {\n");
    let _ = writeln!(g, "    const {ty} a_m = pa_m[m], b_m = pb_m[m];");
    g.push_str("    if (!side && a_m == zero) continue;\n");
    g.push_str("    const long long c = col + (long long)m * sm;\n");
    for &a in &axes {
        let name = AX[a];
        let pos = ["x", "o", "m"][a];
        let (n, s) = match a {
            0 => ("nx", ""),
            1 => ("no", " * so"),
            _ => ("nm", " * sm"),
        };
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

/// After a wave step: add each Ricker source's sample to `q` (the new pressure), then copy
/// the receivers' values into row `row` of `traces`. One block; sources may share a cell.
pub(crate) fn after_step(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@({ty}* __restrict__ q, const long long* __restrict__ src_cell, const double* __restrict__ src_f0, const double* __restrict__ src_t0, const double* __restrict__ src_scale, const int ns, const double t, const long long* __restrict__ rec_cell, const int nr, double* __restrict__ traces, const int row) {{
  for (int i = threadIdx.x; i < ns; i += blockDim.x) {{
    const double pa = 3.141592653589793 * src_f0[i] * (t - src_t0[i]);
    const double a = pa * pa;
    atomicAdd(q + src_cell[i], ({ty})(src_scale[i] * (1.0 - 2.0 * a) * exp(-a)));
  }}
  __syncthreads();
  for (int i = threadIdx.x; i < nr; i += blockDim.x) traces[(long long)row * nr + i] = (double)q[rec_cell[i]];
}}
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(periodic: bool, three: bool, r: usize) -> StepSpec {
        StepSpec {
            ty: "float",
            r,
            three,
            periodic,
            w2: std::array::from_fn(|_| vec![-2.0, 1.0, 0.5, 0.25, 0.125][..=r].to_vec()),
            w0: -6.0,
            launch: Launch::for_stencil(if three { 3 } else { 2 }, r),
        }
    }

    #[test]
    fn kernels_have_one_queue_slot_per_plane_of_the_stencil() {
        let k = heat(&spec(true, true, 2), false, 0.1);
        // Radius 2, four planes ahead: slots q0..q8, the newest loaded 6 planes ahead.
        assert!(k.contains("q8 = __ldg(u + col + fd_wrap(m + 6, nm) * sm)"));
        assert!(k.contains("q7 = q8;") && !k.contains("q9"));
        let w = wave(
            &spec(false, false, 4),
            Some(&CpmlSpec {
                w1: std::array::from_fn(|_| vec![0.0, 0.8, -0.2, 0.04, -0.004]),
            }),
        );
        assert!(w.contains("zeta_m[c] = zn;") && !w.contains("zeta_o[c]"));
    }

    #[test]
    fn f32_literals_are_the_rounded_weights() {
        assert_eq!(literal(0.1, "float"), "0.1f");
        assert_eq!(literal(1.0 / 3.0, "double"), "0.3333333333333333");
    }
}
