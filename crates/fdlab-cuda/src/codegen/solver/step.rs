//! CUDA C for the fused GPU time steps, generated with the weights as literals.
//!
//! Every step kernel marches: a thread owns `vec` consecutive x points (one 16-byte vector
//! where the row length allows) of one row of the middle axis (y in 3-D; in 2-D there is none
//! and `no = 1`) and walks `chunk` planes along the last axis (z in 3-D, y in 2-D), keeping
//! its columns' neighbours along the march in registers. x and middle-axis neighbours come as
//! vectors through the read-only cache, which the adjacent threads of the block fill. Each grid point is read from and written to device memory once per step: the
//! stencil and the update happen in one kernel; a CPML's terms, on its layers' cells only,
//! in two small ones around it.
//!
//! Coordinates in the kernels: `x`, `o` (middle axis) and `m` (marching axis); strides 1,
//! `so = nx` and `sm = nx·no`, so the arrays are the grid's own (x fastest, no padding).

use super::{literal, Launch, PRELUDE};
use std::fmt::Write;

/// What a step kernel is generated from.
#[derive(Debug, Clone)]
pub struct StepSpec {
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
    /// The planes come from the `mlo`, `mhi` arguments (a split run's slabs and edges), not
    /// the whole grid.
    pub ranged: bool,
}

impl StepSpec {
    pub(crate) fn axes(&self) -> Vec<usize> {
        if self.three {
            vec![0, 1, 2]
        } else {
            vec![0, 2]
        }
    }

    /// Points per thread along x (one vector load).
    pub(crate) fn v(&self) -> usize {
        self.launch.vec as usize
    }

    /// The CUDA vector type of [`StepSpec::v`] elements.
    pub(crate) fn vt(&self) -> String {
        format!("{}{}", self.ty, self.v())
    }

    /// Declares `name_0 … name_{v-1}`.
    pub(crate) fn decl(&self, g: &mut String, indent: usize, name: &str) {
        let names: Vec<String> = (0..self.v()).map(|l| format!("{name}_{l}")).collect();
        let _ = writeln!(g, "{:indent$}{} {};", "", self.ty, names.join(", "));
    }

    /// Loads the `v` values of `src` at `idx` into `dst_0 …` (declared), or zeros where
    /// `inside` is false.
    pub(crate) fn vload(
        &self,
        g: &mut String,
        indent: usize,
        dst: &str,
        src: &str,
        idx: &str,
        inside: Option<&str>,
    ) {
        let pad = " ".repeat(indent);
        if self.v() == 1 {
            let load = format!("__ldg({src} + {idx})");
            let value = match inside {
                Some(c) => format!("({c}) ? {load} : zero"),
                None => load,
            };
            let _ = writeln!(g, "{pad}{dst}_0 = {value};");
            return;
        }
        let vt = self.vt();
        let load = format!("__ldg(reinterpret_cast<const {vt}*>({src} + {idx}))");
        let value = match inside {
            Some(c) => format!("({c}) ? {load} : {vt}{{}}"),
            None => load,
        };
        self.unpack(g, &pad, dst, &value);
    }

    /// `dst_0 … = ` the lanes of the vector expression `value`, in a block of their own.
    fn unpack(&self, g: &mut String, pad: &str, dst: &str, value: &str) {
        let _ = writeln!(g, "{pad}{{");
        let _ = writeln!(g, "{pad}  const {} t = {value};", self.vt());
        for (l, comp) in ["x", "y", "z", "w"].iter().enumerate().take(self.v()) {
            let _ = writeln!(g, "{pad}  {dst}_{l} = t.{comp};");
        }
        let _ = writeln!(g, "{pad}}}");
    }

    /// Stores `val_0 …` to `dst` at `idx`.
    pub(crate) fn vstore(&self, g: &mut String, dst: &str, idx: &str, val: &str) {
        if self.v() == 1 {
            let _ = writeln!(g, "    {dst}[{idx}] = {val}_0;");
            return;
        }
        let vt = self.vt();
        let parts: Vec<String> = (0..self.v()).map(|l| format!("{val}_{l}")).collect();
        let _ = writeln!(
            g,
            "    *reinterpret_cast<{vt}*>({dst} + {idx}) = make_{vt}({});",
            parts.join(", ")
        );
    }

    /// Loads the wave's `p⁻` at `idx` into `dst_0 …`: a plain (coherent) load, since this
    /// thread overwrites it after.
    pub(crate) fn vload_coherent(
        &self,
        g: &mut String,
        indent: usize,
        dst: &str,
        src: &str,
        idx: &str,
    ) {
        let pad = " ".repeat(indent);
        if self.v() == 1 {
            let _ = writeln!(g, "{pad}{dst}_0 = {src}[{idx}];");
            return;
        }
        let value = format!("*reinterpret_cast<const {}*>({src} + {idx})", self.vt());
        self.unpack(g, &pad, dst, &value);
    }

    /// The first and end planes of the block's march: its chunk of the planes `mlo..mhi`
    /// named by the arguments when [`StepSpec::ranged`], else of the whole grid. Why two:
    /// with the bounds from arguments the compiler no longer unrolls the march by itself
    /// (40 registers instead of 56 for the `f64` heat step, 87% of the copy against 94.5% on an
    /// H100), so only the steppers of a split run pay for them.
    pub(crate) fn march_bounds(&self, g: &mut String) {
        let c = self.launch.chunk;
        if self.ranged {
            let _ = writeln!(g, "  const int m0 = mlo + blockIdx.z * {c};");
            let _ = writeln!(g, "  const int m1 = min(m0 + {c}, mhi);");
        } else {
            let _ = writeln!(g, "  const int m0 = blockIdx.z * {c};");
            let _ = writeln!(g, "  const int m1 = min(m0 + {c}, nm);");
        }
    }

    /// `#pragma unroll` before the march loop when the launch asks for it.
    pub(crate) fn unroll_pragma(&self, g: &mut String) {
        if self.launch.unroll > 0 {
            let _ = writeln!(g, "  #pragma unroll {}", self.launch.unroll);
        }
    }

    /// Whole vectors each side along x that the stencil reaches.
    pub(crate) fn x_vectors(&self) -> usize {
        self.r.div_ceil(self.v())
    }

    /// The kernel's opening: thread coordinates, its planes, neighbour offsets (wrapped when
    /// periodic, with inside-the-grid flags otherwise) and the march queue filled up to the
    /// plane before the first.
    fn head(&self, g: &mut String, params: &str) {
        let (r, l, v) = (self.r, self.launch, self.v());
        let _ = writeln!(
            g,
            "extern \"C\" __global__ void __launch_bounds__({}) @NAME@({params}) {{",
            l.bx * l.by
        );
        let _ = writeln!(
            g,
            "  const int x0 = (blockIdx.x * {} + threadIdx.x) * {v};",
            l.bx
        );
        let _ = writeln!(g, "  const int o = blockIdx.y * {} + threadIdx.y;", l.by);
        g.push_str("  if (x0 >= nx || o >= no) return;\n");
        self.march_bounds(g);
        g.push_str("  const long long so = nx, sm = (long long)nx * no;\n");
        g.push_str("  const long long col = x0 + so * o;\n");
        let _ = writeln!(g, "  const {} zero = ({})0;", self.ty, self.ty);
        for w in 1..=self.x_vectors() {
            let d = w * v;
            if self.periodic {
                let _ = writeln!(
                    g,
                    "  const int dxl{w} = x0 >= {d} ? -{d} : nx - {d}, dxr{w} = x0 + {d} < nx ? {d} : {d} - nx;"
                );
            } else {
                let _ = writeln!(
                    g,
                    "  const bool vxl{w} = x0 >= {d}, vxr{w} = x0 + {d} < nx;"
                );
            }
        }
        if self.three {
            for k in 1..=r {
                if self.periodic {
                    let _ = writeln!(
                        g,
                        "  const long long dom{k} = (o >= {k} ? -{k} : no - {k}) * so, dop{k} = (o + {k} < no ? {k} : {k} - no) * so;"
                    );
                } else {
                    let _ = writeln!(g, "  const bool vom{k} = o >= {k}, vop{k} = o + {k} < no;");
                }
            }
        }
        let last = self.last();
        for t in 0..=last {
            self.decl(g, 2, &format!("q{t}"));
        }
        for t in 0..last {
            self.march_load(
                g,
                2,
                &format!("q{t}"),
                "u",
                &format!("m0 + ({})", t as i64 - r as i64),
            );
        }
    }

    /// The last queue slot: the plane `ahead` planes past the stencil's reach.
    pub(crate) fn last(&self) -> usize {
        2 * self.r + self.launch.ahead as usize
    }

    /// Loads `src` at plane `mm` of this thread's column into `dst`: wrapped or zero outside.
    pub(crate) fn march_load(&self, g: &mut String, indent: usize, dst: &str, src: &str, mm: &str) {
        if self.periodic {
            self.vload(
                g,
                indent,
                dst,
                src,
                &format!("col + fd_wrap({mm}, nm) * sm"),
                None,
            );
        } else {
            let inside = format!("fd_inside({mm}, nm)");
            self.vload(
                g,
                indent,
                dst,
                src,
                &format!("col + (long long)({mm}) * sm"),
                Some(&inside),
            );
        }
    }

    /// Loads this plane's x-side vectors (`xl{w}`, `xr{w}`) and middle-axis rows (`om{k}`,
    /// `op{k}`) of `u` around `c`.
    fn side_loads(&self, g: &mut String) {
        for w in 1..=self.x_vectors() {
            let d = w * self.v();
            for (name, side, sign) in [("xl", "l", "-"), ("xr", "r", "+")] {
                let var = format!("{name}{w}");
                self.decl(g, 4, &var);
                if self.periodic {
                    self.vload(g, 4, &var, "u", &format!("c + dx{side}{w}"), None);
                } else {
                    let inside = format!("vx{side}{w}");
                    self.vload(g, 4, &var, "u", &format!("c {sign} {d}"), Some(&inside));
                }
            }
        }
        if self.three {
            for k in 1..=self.r {
                for (name, dir, sign) in [("om", "m", "-"), ("op", "p", "+")] {
                    let var = format!("{name}{k}");
                    self.decl(g, 4, &var);
                    if self.periodic {
                        self.vload(g, 4, &var, "u", &format!("c + do{dir}{k}"), None);
                    } else {
                        let inside = format!("vo{dir}{k}");
                        self.vload(
                            g,
                            4,
                            &var,
                            "u",
                            &format!("c {sign} {k} * so"),
                            Some(&inside),
                        );
                    }
                }
            }
        }
    }

    /// The value at x offset `p` from the thread's first point, in this plane.
    fn x_at(&self, p: i64) -> String {
        let v = self.v() as i64;
        if p < 0 {
            let w = (-p + v - 1) / v;
            format!("xl{w}_{}", p + w * v)
        } else if p >= v {
            let w = (p - v) / v + 1;
            format!("xr{w}_{}", (p - v) % v)
        } else {
            format!("q{}_{p}", self.r)
        }
    }

    /// Lane `l`'s neighbour pair at distance `k` along axis `a` (x, middle, march).
    fn pair(&self, a: usize, l: usize, k: usize) -> String {
        match a {
            0 => format!(
                "{} + {}",
                self.x_at(l as i64 - k as i64),
                self.x_at((l + k) as i64)
            ),
            1 => format!("om{k}_{l} + op{k}_{l}"),
            _ => format!("q{}_{l} + q{}_{l}", self.r - k, self.r + k),
        }
    }

    /// Lane `l`'s `Σ w[k] (u[c − k] + u[c + k])` along axis `a`, as an expression.
    fn pair_sum(&self, a: usize, l: usize) -> String {
        let terms: Vec<String> = (1..=self.r)
            .map(|k| {
                format!(
                    "{} * ({})",
                    literal(self.w2[a][k], self.ty),
                    self.pair(a, l, k)
                )
            })
            .collect();
        terms.join(" + ")
    }

    /// The march loop's opening: the next plane into the queue, this thread's first index
    /// `c`, and the plane's side values.
    fn loop_open(&self, g: &mut String) {
        self.unroll_pragma(g);
        g.push_str("  for (int m = m0; m < m1; ++m) {\n");
        let ahead = self.r + self.launch.ahead as usize;
        self.march_load(
            g,
            4,
            &format!("q{}", self.last()),
            "u",
            &format!("m + {ahead}"),
        );
        g.push_str("    const long long c = col + (long long)m * sm;\n");
        self.side_loads(g);
    }

    /// Records lane `l`'s non-finite `out_l`: the smallest step-tagged index wins.
    pub(crate) fn check(&self, g: &mut String) {
        for l in 0..self.v() {
            let _ = writeln!(g, "    if (!isfinite(out_{l})) {{");
            let _ = writeln!(
                g,
                "      const unsigned long long key = tag | (unsigned long long)(c + {l});"
            );
            let _ = writeln!(
                g,
                "      if (atomicMin(bad, key) > key) *badval = (double)out_{l};"
            );
            g.push_str("    }\n");
        }
    }

    /// Shifts the queue by one plane and closes the loop and the kernel.
    fn loop_close(&self, g: &mut String) {
        for t in 0..self.last() {
            for l in 0..self.v() {
                let _ = writeln!(g, "    q{t}_{l} = q{}_{l};", t + 1);
            }
        }
        g.push_str("  }\n}\n");
    }
}

/// The heat step `v = u + Δt κ L u`; κ from `kap` per point when `field_kappa`, else the
/// literal `kc`.
pub fn heat(spec: &StepSpec, field_kappa: bool, kc: f64) -> String {
    let ty = spec.ty;
    let mut g = String::from(PRELUDE);
    let params = format!(
        "const {ty}* __restrict__ u, {ty}* __restrict__ v, const {ty}* __restrict__ kap, const int nx, const int no, const int nm, const int mlo, const int mhi, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag"
    );
    spec.head(&mut g, &params);
    spec.loop_open(&mut g);
    if field_kappa {
        spec.decl(&mut g, 4, "kk");
        spec.vload(&mut g, 4, "kk", "kap", "c", None);
    }
    let axes = spec.axes();
    for l in 0..spec.v() {
        let pair = |a: usize, l: usize, k: usize| spec.pair(a, l, k);
        heat_update(&mut g, 4, spec, &axes, l, (field_kappa, kc), &pair);
    }
    spec.vstore(&mut g, "v", "c", "out");
    spec.check(&mut g);
    spec.loop_close(&mut g);
    g
}

/// Lane `l`'s heat update `out_l = q_l + κ Σ …` (κ is `kk_l` when it varies, else the literal
/// `kappa.1`), summing per offset over `axes` in the order every heat kernel uses (so the
/// register-queue and shared-memory kernels give the same bits); `pair(a, l, k)` is the
/// expression of lane `l`'s two neighbours at distance `k` along axis `a`.
pub(crate) fn heat_update(
    g: &mut String,
    indent: usize,
    spec: &StepSpec,
    axes: &[usize],
    l: usize,
    kappa: (bool, f64),
    pair: &dyn Fn(usize, usize, usize) -> String,
) {
    let (ty, r, pad) = (spec.ty, spec.r, " ".repeat(indent));
    let _ = writeln!(
        g,
        "{pad}{ty} lap_{l} = {} * q{r}_{l};",
        literal(spec.w0, ty)
    );
    for k in 1..=r {
        let mut line = format!("{pad}lap_{l} = lap_{l}");
        for &a in axes {
            let _ = write!(
                line,
                " + {} * ({})",
                literal(spec.w2[a][k], ty),
                pair(a, l, k)
            );
        }
        let _ = writeln!(g, "{line};");
    }
    let k = if kappa.0 {
        format!("kk_{l}")
    } else {
        literal(kappa.1, ty)
    };
    let _ = writeln!(g, "{pad}const {ty} out_{l} = q{r}_{l} + {k} * lap_{l};");
}

/// The names of the per-axis CPML arrays in march order.
pub(crate) const AX: [&str; 3] = ["x", "o", "m"];

/// The wave step `q = 2p − q + c²Δt² L p`, in place on `q` (p⁻ in, p⁺ out). A CPML adds its
/// terms on its layers' cells afterwards ([`super::cpml::cpml_terms`]): kept out of this kernel, their
/// code doubled its registers and halved its speed everywhere.
pub fn wave(spec: &StepSpec) -> String {
    let (ty, r, v) = (spec.ty, spec.r, spec.v());
    let mut g = String::from(PRELUDE);
    let params = format!(
        "const {ty}* __restrict__ u, {ty}* __restrict__ q, const {ty}* __restrict__ c2, const int nx, const int no, const int nm, const int mlo, const int mhi, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag"
    );
    spec.head(&mut g, &params);
    let axes = spec.axes();
    spec.loop_open(&mut g);
    spec.decl(&mut g, 4, "old");
    spec.vload_coherent(&mut g, 4, "old", "q", "c");
    spec.decl(&mut g, 4, "cc");
    spec.vload(&mut g, 4, "cc", "c2", "c", None);
    for l in 0..v {
        let _ = writeln!(
            g,
            "    {ty} total_{l} = {} * q{r}_{l};",
            literal(spec.w0, ty)
        );
        for &a in &axes {
            let _ = writeln!(
                g,
                "    const {ty} acc_{}_{l} = {};",
                AX[a],
                spec.pair_sum(a, l)
            );
            let _ = writeln!(g, "    total_{l} += acc_{}_{l};", AX[a]);
        }
    }
    for l in 0..v {
        let _ = writeln!(
            g,
            "    const {ty} out_{l} = q{r}_{l} + q{r}_{l} - old_{l} + cc_{l} * total_{l};"
        );
    }
    spec.vstore(&mut g, "q", "c", "out");
    spec.check(&mut g);
    spec.loop_close(&mut g);
    g
}

/// After a wave step: add the sources to `q` (the new pressure), then write the receivers'
/// values into row `row` of `traces`; one launch of one block for all of them.
///
/// Sources are lists of points: point `i` adds `pt_w[i]` (a weight in the run's precision)
/// times the value of source `pt_src[i]` at cell `pt_cell[i]`. A source's value is
/// `src_scale` times its Ricker at time `t` (`src_off < 0`) or its sample `k` of `samples`
/// (from `src_off`, zero from `src_len` on). Receiver `i` is the sum of `rc_w[j] ·
/// q[rc_cell[j]]` over its points `rc_start[i] .. rc_start[i + 1]`, in double. A source or
/// receiver on a grid point is one point of weight 1. Points may share a cell (atomics).
pub fn after_step(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@({ty}* __restrict__ q, const long long* __restrict__ pt_cell, const {ty}* __restrict__ pt_w, const int* __restrict__ pt_src, const int np, const double* __restrict__ src_f0, const double* __restrict__ src_t0, const double* __restrict__ src_scale, const long long* __restrict__ src_off, const long long* __restrict__ src_len, const double* __restrict__ samples, const double t, const long long k, const long long* __restrict__ rc_cell, const {ty}* __restrict__ rc_w, const int* __restrict__ rc_start, const int nr, double* __restrict__ traces, const int row) {{
  for (int i = threadIdx.x; i < np; i += blockDim.x) {{
    const int s = pt_src[i];
    double v;
    if (src_off[s] < 0) {{
      const double pa = 3.141592653589793 * src_f0[s] * (t - src_t0[s]);
      const double a = pa * pa;
      v = src_scale[s] * (1.0 - 2.0 * a) * exp(-a);
    }} else {{
      v = k < src_len[s] ? src_scale[s] * samples[src_off[s] + k] : 0.0;
    }}
    atomicAdd(q + pt_cell[i], pt_w[i] * ({ty})v);
  }}
  __syncthreads();
  for (int i = threadIdx.x; i < nr; i += blockDim.x) {{
    const int j0 = rc_start[i], j1 = rc_start[i + 1];
    double acc = (double)(rc_w[j0] * q[rc_cell[j0]]);
    for (int j = j0 + 1; j < j1; ++j) acc += (double)(rc_w[j] * q[rc_cell[j]]);
    traces[(long long)row * nr + i] = acc;
  }}
}}
"
    )
}

#[cfg(test)]
mod tests {
    use super::super::Launch;
    use super::*;

    fn spec(periodic: bool, three: bool, r: usize) -> StepSpec {
        StepSpec {
            ty: "float",
            r,
            three,
            periodic,
            w2: std::array::from_fn(|_| vec![-2.0, 1.0, 0.5, 0.25, 0.125][..=r].to_vec()),
            w0: -6.0,
            launch: Launch::new(if three { 3 } else { 2 }, r, [64, 64, 64], 4),
            ranged: false,
        }
    }

    /// The picks the sweeps confirmed (docs/decisions.md, "Wave-step marches"): 64 planes where the
    /// blocks fill their waves (256³ and 512³, and 640³ `f64`), shorter marches at 384³ and 48
    /// planes for the `f32` step at 640³.
    #[test]
    fn the_wave_march_is_shorter_where_long_chunks_leave_the_last_wave_empty() {
        let chunk = |n: usize, bytes: usize| Launch::for_wave(3, 4, [n; 3], bytes).chunk;
        assert_eq!(chunk(512, 4), 64);
        assert_eq!(chunk(256, 4), 64);
        assert!([24, 32].contains(&chunk(384, 4)), "{}", chunk(384, 4));
        assert_eq!(chunk(640, 4), 48);
        assert_eq!(chunk(512, 8), 64);
        assert_eq!(chunk(640, 8), 64);
        assert_eq!(chunk(384, 8), 48);
        // Small grids: whatever the pick, a valid march.
        for n in [9, 23, 64, 100] {
            assert!([24, 32, 48, 64].contains(&chunk(n, 4)));
        }
    }

    #[test]
    fn only_a_ranged_step_reads_its_planes_from_the_arguments() {
        let whole = heat(&spec(true, true, 1), false, 0.1);
        let c = spec(true, true, 1).launch.chunk;
        assert!(whole.contains(&format!("min(m0 + {c}, nm)")) && !whole.contains("= mlo +"));
        let slab = heat(
            &StepSpec {
                ranged: true,
                ..spec(true, true, 1)
            },
            false,
            0.1,
        );
        assert!(slab.contains("const int m0 = mlo + ") && slab.contains(", mhi);"));
    }

    #[test]
    fn kernels_have_one_queue_slot_per_plane_of_the_stencil() {
        // Radius 2, no plane ahead, four x points per thread: slots q0..q4, the newest
        // loaded 2 planes ahead.
        let k = heat(&spec(true, true, 2), false, 0.1);
        assert!(k.contains("col + fd_wrap(m + 2, nm) * sm"), "{k}");
        assert!(k.contains("q3_3 = q4_3;") && !k.contains("q5"));
        // x neighbours of the first and last lanes come from the side vectors.
        assert!(k.contains("xl1_2 + xr1_1") || k.contains("xl1_2"), "{k}");
        let w = super::super::cpml::cpml_terms(
            &spec(false, false, 4),
            &super::super::cpml::CpmlSpec {
                w1: std::array::from_fn(|_| vec![0.0, 0.8, -0.2, 0.04, -0.004]),
                min_blocks: 0,
            },
        );
        assert!(w.contains("zeta_m[c] = zn;") && !w.contains("zeta_o[c]"));
    }

    #[test]
    fn the_after_step_kernel_takes_point_lists_and_compiles_in_both_precisions() {
        for ty in ["float", "double"] {
            let k = after_step(ty);
            // Weights in the run's precision; cells, sources and receiver ranges as lists.
            assert!(k.contains(&format!("const {ty}* __restrict__ pt_w")), "{k}");
            assert!(k.contains(&format!("const {ty}* __restrict__ rc_w")), "{k}");
            assert!(k.contains("const int* __restrict__ pt_src") && k.contains("rc_start[i + 1]"));
            if !crate::nvrtc::available() {
                assert_ne!(
                    std::env::var("FDLAB_REQUIRE_NVRTC").as_deref(),
                    Ok("1"),
                    "FDLAB_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
                );
                eprintln!("SKIPPED: libnvrtc not found");
                return;
            }
            let name = format!("wave_after_{ty}");
            let ptx = crate::nvrtc::compile(&name, &k.replace("@NAME@", &name), "sm_90");
            assert!(ptx.is_ok(), "{ty}: {:?}", ptx.err());
        }
    }

    #[test]
    fn f32_literals_are_the_rounded_weights() {
        assert_eq!(literal(0.1, "float"), "0.1f");
        assert_eq!(literal(1.0 / 3.0, "double"), "0.3333333333333333");
    }
}
