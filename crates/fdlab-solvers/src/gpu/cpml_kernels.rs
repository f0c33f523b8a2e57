//! CUDA C for the wave step's CPML: the ψ update before the step and the terms after it, each
//! over the layers' shell only, one point per thread. Kept out of the step kernel: in it, their
//! code doubled its registers and halved its speed everywhere.

use super::kernels::{literal, Launch, StepSpec, AX, PRELUDE};
use std::fmt::Write;

/// First-derivative weights per march-order axis for the CPML terms.
#[derive(Debug, Clone)]
pub(crate) struct CpmlSpec {
    /// Weights for offsets 0..=r per axis (x, o, m); offset −k has −w[k].
    pub w1: [Vec<f64>; 3],
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

/// The opening of the one-point-per-thread shell kernels: signature, the thread's x, row and
/// run of planes, strides and its column's first index.
fn shell_head(g: &mut String, params: &str, ty: &str, l: Launch) {
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
    shell_head(&mut g, &params, ty, l);
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
pub(crate) fn cpml_terms(spec: &StepSpec, cp: &CpmlSpec) -> String {
    let (ty, r, l) = (spec.ty, spec.r, spec.launch);
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
    shell_head(&mut g, &params, ty, l);
    g.push_str("  const bool act_x0 = act_x[x];\n");
    let axes = spec.axes();
    if spec.three {
        g.push_str("  const bool act_o0 = act_o[o];\n");
        g.push_str("  const bool side = act_x0 || act_o0;\n");
    } else {
        g.push_str("  const bool side = act_x0;\n");
    }
    g.push_str("  for (int m = m0; m < m1; ++m) {\n");
    g.push_str("    const bool act_m0 = act_m[m];\n");
    g.push_str("    if (!side && !act_m0) continue;\n");
    g.push_str("    const long long c = col + (long long)m * sm;\n");
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
