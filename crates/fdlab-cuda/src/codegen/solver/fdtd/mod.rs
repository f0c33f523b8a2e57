//! CUDA C for the GPU FDTD step: one fused kernel per half step, a small one for sources
//! and probes, and the end-of-call scan for non-finite values.
//!
//! Each half-step kernel gives a thread one (x, y) column of cells and `chunk` planes along
//! z. It marches up the column and keeps what the next plane needs in registers: the H step
//! reads E at `k + 1` and hands it on as the next cell's own E; the E step reads H at `k` and
//! hands it on as the next cell's H at `k − 1`. x and y neighbours come through the
//! read-only cache, which the adjacent threads of the block fill. The curl, the update and
//! the CPML terms (ψ update and correction, on the layer cells only) happen in the same
//! kernel, so each component is read and written once per half step.
//!
//! The arithmetic is the CPU step's (fdlab-solvers' `fdtd::update` and `fdtd::cpml`) term by
//! term and in the same order: the main update first, then each CPML axis's correction in
//! axis order. Only NVRTC's fused multiply-adds round differently.

use super::{literal, Launch};
use std::fmt::Write;

pub mod fused;
pub mod lower;
pub mod pass;

/// In which order the FDTD two-step pass loads a cell's Drude media bytes and currents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DrudeLoads {
    /// Each component's medium, then its current where the cell is a Drude cell, in turn.
    InTurn,
    /// The three media and the three currents (whether or not the cell is a Drude cell)
    /// before the first is used.
    AllFirst,
    /// The three media, then the currents of the Drude cells' components, before the first
    /// is used.
    MediaFirst,
}

/// What the second step of an FDTD two-step pass takes over from the first at a Drude cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DrudeCarry {
    /// Nothing: the second step loads the media bytes and the current back from memory.
    Nothing,
    /// The media bytes, packed in one register; the second step loads the current.
    Media,
    /// The media bytes and the current, in registers.
    MediaAndCurrents,
}

/// The choices of an FDTD schedule that change the kernels' text (its fields of the same
/// names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelChoices {
    /// Whether the kernels over blocks clear of the CPML skip the wall checks there.
    pub interior: bool,
    /// The order of the two-step pass's Drude loads.
    pub drude_loads: DrudeLoads,
    /// What the pass's second step takes over from the first at a Drude cell.
    pub drude_carry: DrudeCarry,
    /// Whether the first step loads a plane's Drude media ahead of its first barrier.
    pub drude_ahead: bool,
}

/// What the FDTD kernels are generated from.
#[derive(Debug, Clone)]
pub struct FdtdSpec {
    /// `"float"` or `"double"`.
    pub ty: &'static str,
    /// Per axis: wraps around (else PEC walls, a CPML's included).
    pub periodic: [bool; 3],
    /// Per axis: `1/Δ`, the E curl's and the CPML terms' difference weight.
    pub inv: [f64; 3],
    /// Per axis: `Δt/Δ`, the H curl's difference weight.
    pub rate: [f64; 3],
    /// `Δt`, the weight of the H side's CPML terms.
    pub dt: f64,
    /// Per axis: the CPML's thickness in cells, if the axis has one.
    pub cpml: [Option<usize>; 3],
    /// Launch shape (`vec` 1, `ahead` 0).
    pub launch: Launch,
    /// Blocks the one-pass kernel must fit on an SM (`__launch_bounds__`), 0 for the
    /// compiler's choice.
    pub min_blocks: u32,
    /// The one-pass kernel reads E's coefficients as a one-byte medium index per cell into
    /// a table of at most [`MEDIA`] `(ca, cb)` pairs, instead of two values per cell.
    pub indexed: bool,
    /// The case has Drude media: the two-step pass advances their currents itself (the
    /// other kernels leave them to the list kernels around the step).
    pub drude: bool,
    /// Per axis: every cell the kernel's blocks touch, their halo included, lies at least one
    /// cell off the walls (blocks clear of a CPML), so the kernel checks no wall there. Fewer
    /// registers: the two-step core kernel otherwise spills one and reloads it every plane.
    pub interior: [bool; 3],
    /// The schedule's choices the kernels read (Drude loads, the wall checks kept or not).
    pub choices: KernelChoices,
}

/// The most `(ca, cb)` pairs an indexed one-pass kernel's table holds (a byte's values).
pub const MEDIA: usize = 256;

pub(crate) const E: [&str; 3] = ["ex", "ey", "ez"];
pub(crate) const H: [&str; 3] = ["hx", "hy", "hz"];
pub(crate) const AXN: [&str; 3] = ["x", "y", "z"];
pub(crate) const N: [&str; 3] = ["nx", "ny", "nz"];
pub(crate) const IDX: [&str; 3] = ["i", "j", "k"];

/// The curl terms with a derivative along `a`: `(target, source, sign)` (as in `cpml.rs`).
fn terms(a: usize) -> [(usize, usize, f64); 2] {
    let (b, c) = ((a + 1) % 3, (a + 2) % 3);
    [(b, c, -1.0), (c, b, 1.0)]
}

/// How a CPML correction names its memory variables: `read` and `write` spell ψ of axis `{a}`
/// and term `{t}`, an element of a slab (`psi_{a}{t}[s]`) or a register that carries it to
/// another half step (`q_{a}{t}`); the write happens only where `guard` holds, when given.
/// `coef` names the profile, `{coef}{axis}`.
pub(crate) struct Psi {
    pub read: &'static str,
    pub write: &'static str,
    pub coef: &'static str,
    pub guard: Option<&'static str>,
}

impl Psi {
    /// `pattern` for axis `x` and term `term`.
    fn at(pattern: &str, x: &str, term: usize) -> String {
        pattern.replace("{a}", x).replace("{t}", &term.to_string())
    }

    /// The half-step kernels' ψ, updated in place: `psi_x0`, `coef_x`.
    const IN_PLACE: Psi = Psi {
        read: "psi_{a}{t}[s]",
        write: "psi_{a}{t}[s]",
        coef: "coef_",
        guard: None,
    };
}

impl FdtdSpec {
    /// The spec of a march over blocks clear of every CPML layer, their halo included: no
    /// CPML terms, and no wall checks on the CPML axes, whose walls those blocks never touch
    /// (the schedule's `interior=off` keeps the checks).
    pub fn clear_of_layers(&self) -> FdtdSpec {
        let interior = self.choices.interior;
        FdtdSpec {
            cpml: [None; 3],
            interior: self.cpml.map(|c| c.is_some() && interior),
            ..self.clone()
        }
    }

    /// Whether the kernel may meet a wall along axis `a`: not on a periodic axis, nor on one
    /// its blocks keep clear of ([`FdtdSpec::interior`]).
    pub(crate) fn walled(&self, a: usize) -> bool {
        !(self.periodic[a] || self.interior[a])
    }

    pub(crate) fn lit(&self, v: f64) -> String {
        literal(v, self.ty)
    }

    /// The CPML parameters of the kernel signature: two ψ slabs and the profile per axis.
    fn cpml_params(&self) -> String {
        let ty = self.ty;
        let mut p = String::new();
        for a in (0..3).filter(|&a| self.cpml[a].is_some()) {
            let x = AXN[a];
            let _ = write!(
                p,
                ", {ty}* __restrict__ psi_{x}0, {ty}* __restrict__ psi_{x}1, const {ty}* __restrict__ coef_{x}"
            );
        }
        p
    }

    /// Whether the thread's column lies on the x = 0 or y = 0 wall (`wall_x`, `wall_y`;
    /// never on a periodic axis): tangential E there stays zero.
    pub(crate) fn wall_flags(&self, g: &mut String) {
        for a in 0..2 {
            let wall = if self.walled(a) {
                format!("{} == 0", IDX[a])
            } else {
                "false".to_string()
            };
            let _ = writeln!(g, "  const bool wall_{} = {wall};", AXN[a]);
        }
    }

    /// Thread coordinates and the column's planes.
    fn head(&self, g: &mut String, params: &str) {
        let l = self.launch;
        let _ = writeln!(
            g,
            "extern \"C\" __global__ void __launch_bounds__({}) @NAME@({params}{}) {{",
            l.bx * l.by,
            self.cpml_params()
        );
        let _ = writeln!(g, "  const int i = blockIdx.x * {} + threadIdx.x;", l.bx);
        let _ = writeln!(g, "  const int j = blockIdx.y * {} + threadIdx.y;", l.by);
        g.push_str("  if (i >= nx || j >= ny) return;\n");
        let _ = writeln!(g, "  const int k0 = blockIdx.z * {};", l.chunk);
        let _ = writeln!(g, "  const int k1 = min(k0 + {}, nz);", l.chunk);
        g.push_str("  const long long sy = nx, sz = (long long)nx * ny;\n");
        g.push_str("  const long long col = i + sy * j;\n");
        let _ = writeln!(g, "  const {} zero = ({})0;", self.ty, self.ty);
        self.layer_flags(g);
    }

    /// `in_x`, `in_y`: whether the thread's column lies in the x and y CPML layers (axes with
    /// one), which does not change along the column.
    pub(crate) fn layer_flags(&self, g: &mut String) {
        for a in 0..2 {
            if let Some(t) = self.cpml[a] {
                let (ia, n) = (IDX[a], N[a]);
                let _ = writeln!(
                    g,
                    "  const bool in_{} = {ia} < {t} || {ia} >= {n} - {t};",
                    AXN[a]
                );
            }
        }
    }

    /// Offset and validity of the neighbour one cell along axis `a` (x or y) in direction
    /// `up`: wrapped on a periodic axis; past a wall the value read is zero (the CPU's
    /// weight 0).
    pub(crate) fn side(&self, g: &mut String, a: usize, up: bool) {
        let (i, n, s) = (IDX[a], N[a], ["1", "sy"][a]);
        let name = format!("{}{}", AXN[a], if up { "p" } else { "m" });
        if self.periodic[a] {
            let expr = if up {
                format!("({i} + 1 < {n} ? {s} : (1 - (long long){n}) * {s})")
            } else {
                format!("({i} > 0 ? -{s} : ((long long){n} - 1) * {s})")
            };
            let _ = writeln!(g, "  const long long d{name} = {expr};");
            let _ = writeln!(g, "  const bool v{name} = true;");
        } else if self.interior[a] {
            let off = if up { s.to_string() } else { format!("-{s}") };
            let _ = writeln!(g, "  const bool v{name} = true;");
            let _ = writeln!(g, "  const long long d{name} = {off};");
        } else {
            let cond = if up {
                format!("{i} + 1 < {n}")
            } else {
                format!("{i} > 0")
            };
            let off = if up { s.to_string() } else { format!("-{s}") };
            let _ = writeln!(g, "  const bool v{name} = {cond};");
            let _ = writeln!(g, "  const long long d{name} = v{name} ? {off} : 0;");
        }
    }

    /// `const T var = v ? __ldg(arr + c + d) : zero;` for a neighbour from [`FdtdSpec::side`].
    pub(crate) fn near(&self, g: &mut String, var: &str, arr: &str, nb: &str) {
        let ty = self.ty;
        if self.periodic[if nb.starts_with('x') { 0 } else { 1 }] {
            let _ = writeln!(g, "    const {ty} {var} = __ldg({arr} + c + d{nb});");
        } else {
            let _ = writeln!(
                g,
                "    const {ty} {var} = v{nb} ? __ldg({arr} + c + d{nb}) : zero;"
            );
        }
    }

    /// Inside the march loop: whether cell `k` lies in the z layers.
    pub(crate) fn z_layer(&self, g: &mut String) {
        if let Some(t) = self.cpml[2] {
            let _ = writeln!(g, "    const bool in_z = k < {t} || k >= nz - {t};");
        }
    }

    /// The CPML correction of axis `a` for the field being updated: for each term, ψ = b·ψ +
    /// c·D and `new += w·((1/κ − 1)·D + ψ)`. `here`/`there` name the source values at the cell
    /// and at its neighbour (`there − here` for H, `here − there` for E), `weight` the signed
    /// weight of a term, `skip` a target's wall condition (E only).
    pub(crate) fn correction(
        &self,
        g: &mut String,
        a: usize,
        electric: bool,
        weight: &dyn Fn(f64) -> String,
        skip: &dyn Fn(usize) -> Option<String>,
        psi: &Psi,
    ) {
        let Some(t) = self.cpml[a] else { return };
        let (x, ia, n) = (AXN[a], IDX[a], N[a]);
        let _ = writeln!(g, "    if (in_{x}) {{");
        let _ = writeln!(
            g,
            "      const int l = {ia} < {t} ? {ia} : {ia} - ({n} - {});",
            2 * t
        );
        let slab = match a {
            0 => format!("l + {}LL * (j + (long long)ny * k)", 2 * t),
            1 => format!("i + (long long)nx * (l + {}LL * k)", 2 * t),
            _ => "i + (long long)nx * (j + (long long)ny * l)".to_string(),
        };
        let _ = writeln!(g, "      const long long s = {slab};");
        let ty = self.ty;
        let _ = writeln!(
            g,
            "      const {ty} kinv = __ldg({coef}{x} + 3 * l), b = __ldg({coef}{x} + 3 * l + 1), cc = __ldg({coef}{x} + 3 * l + 2);",
            coef = psi.coef
        );
        let inv = self.lit(self.inv[a]);
        for (term, (ti, si, sign)) in terms(a).into_iter().enumerate() {
            let (target, src) = if electric {
                (E[ti], H[si])
            } else {
                (H[ti], E[si])
            };
            let diff = if electric {
                format!("({src}_c - {src}_{x})")
            } else {
                format!("({src}_{x} - {src}_c)")
            };
            let open = match skip(ti) {
                Some(wall) => format!("if (!({wall})) "),
                None => String::new(),
            };
            let _ = writeln!(g, "      {open}{{");
            let _ = writeln!(g, "        const {ty} d = {diff} * {inv};");
            let (read, write) = (Psi::at(psi.read, x, term), Psi::at(psi.write, x, term));
            let _ = writeln!(g, "        const {ty} p = fma(b, {read}, cc * d);");
            match &psi.guard {
                Some(guard) => {
                    let _ = writeln!(g, "        if ({guard}) {write} = p;");
                }
                None => {
                    let _ = writeln!(g, "        {write} = p;");
                }
            }
            let _ = writeln!(
                g,
                "        n{target} = fma({}, fma(kinv, d, p), n{target});",
                weight(sign)
            );
            g.push_str("      }\n");
        }
        g.push_str("    }\n");
    }
}

/// The H half step: `H −= Δt ∇×E`, then the CPML terms.
pub fn h_step(spec: &FdtdSpec) -> String {
    let ty = spec.ty;
    let mut g = String::new();
    let params = format!(
        "{ty}* __restrict__ hx, {ty}* __restrict__ hy, {ty}* __restrict__ hz, const {ty}* __restrict__ ex, const {ty}* __restrict__ ey, const {ty}* __restrict__ ez, const int nx, const int ny, const int nz"
    );
    spec.head(&mut g, &params);
    spec.side(&mut g, 0, true);
    spec.side(&mut g, 1, true);
    // E at this column's first plane; each step loads plane k + 1 and hands it on.
    let _ = writeln!(
        g,
        "  {ty} ex_c = __ldg(ex + col + (long long)k0 * sz), ey_c = __ldg(ey + col + (long long)k0 * sz);"
    );
    g.push_str("  for (int k = k0; k < k1; ++k) {\n");
    g.push_str("    const long long c = col + (long long)k * sz;\n");
    if spec.periodic[2] {
        g.push_str("    const long long cz = col + (long long)(k + 1 < nz ? k + 1 : 0) * sz;\n");
        let _ = writeln!(
            g,
            "    const {ty} ex_z = __ldg(ex + cz), ey_z = __ldg(ey + cz);"
        );
    } else {
        g.push_str("    const bool vzp = k + 1 < nz;\n");
        let _ = writeln!(
            g,
            "    const {ty} ex_z = vzp ? __ldg(ex + c + sz) : zero, ey_z = vzp ? __ldg(ey + c + sz) : zero;"
        );
    }
    let _ = writeln!(g, "    const {ty} ez_c = __ldg(ez + c);");
    spec.near(&mut g, "ey_x", "ey", "xp");
    spec.near(&mut g, "ez_x", "ez", "xp");
    spec.near(&mut g, "ex_y", "ex", "yp");
    spec.near(&mut g, "ez_y", "ez", "yp");
    spec.z_layer(&mut g);
    h_update(spec, &mut g, &format!("{ty} "), "{h}[c]", &Psi::IN_PLACE);
    g.push_str("    hx[c] = nhx;\n    hy[c] = nhy;\n    hz[c] = nhz;\n");
    g.push_str("    ex_c = ex_z;\n    ey_c = ey_z;\n");
    g.push_str("  }\n}\n");
    g
}

/// The E half step: `E = ca·E + cb·∇×H`, tangential E on the walls at index 0 held at zero,
/// then the CPML terms off those walls.
pub fn e_step(spec: &FdtdSpec) -> String {
    let ty = spec.ty;
    let mut g = String::new();
    let params = format!(
        "{ty}* __restrict__ ex, {ty}* __restrict__ ey, {ty}* __restrict__ ez, const {ty}* __restrict__ hx, const {ty}* __restrict__ hy, const {ty}* __restrict__ hz, const {ty}* __restrict__ ca, const {ty}* __restrict__ cb, const int nx, const int ny, const int nz"
    );
    spec.head(&mut g, &params);
    spec.side(&mut g, 0, false);
    spec.side(&mut g, 1, false);
    spec.wall_flags(&mut g);
    // H one plane below this column's first; each step hands its own H on.
    if spec.periodic[2] {
        g.push_str("  const long long cz0 = col + (long long)(k0 > 0 ? k0 - 1 : nz - 1) * sz;\n");
        let _ = writeln!(g, "  {ty} hx_z = __ldg(hx + cz0), hy_z = __ldg(hy + cz0);");
    } else {
        g.push_str("  const long long cz0 = col + (long long)(k0 - 1) * sz;\n");
        let _ = writeln!(
            g,
            "  {ty} hx_z = k0 > 0 ? __ldg(hx + cz0) : zero, hy_z = k0 > 0 ? __ldg(hy + cz0) : zero;"
        );
    }
    g.push_str("  for (int k = k0; k < k1; ++k) {\n");
    g.push_str("    const long long c = col + (long long)k * sz;\n");
    let _ = writeln!(
        g,
        "    const {ty} hx_c = __ldg(hx + c), hy_c = __ldg(hy + c), hz_c = __ldg(hz + c);"
    );
    spec.near(&mut g, "hy_x", "hy", "xm");
    spec.near(&mut g, "hz_x", "hz", "xm");
    spec.near(&mut g, "hx_y", "hx", "ym");
    spec.near(&mut g, "hz_y", "hz", "ym");
    spec.z_layer(&mut g);
    let _ = writeln!(g, "    const {ty} a = __ldg(ca + c), cbc = __ldg(cb + c);");
    e_update(spec, &mut g, "{e}[c]", &Psi::IN_PLACE);
    g.push_str("    ex[c] = nex;\n    ey[c] = ney;\n    ez[c] = nez;\n");
    g.push_str("    hx_z = hx_c;\n    hy_z = hy_c;\n");
    g.push_str("  }\n}\n");
    g
}

/// The H update at cell `c` of plane `k` from E there (`ex_c` …) and at its +x, +y and +z
/// neighbours (`ey_x` …, `ex_z` …): `nhx`, `nhy`, `nhz` (declared with `decl` in front, e.g. the
/// type, or assigned), then the CPML terms. `old` spells the old value of component `{h}`.
///
/// The updates write their multiply-adds out (`fma`): left to the compiler, which of a
/// curl's two products it fuses depends on the code around the expression, and the
/// two-step pass ([`pass`]) must round every update as single steps do.
pub(crate) fn h_update(spec: &FdtdSpec, g: &mut String, decl: &str, old: &str, psi: &Psi) {
    let [rx, ry, rz] = spec.rate.map(|r| spec.lit(r));
    let curls = [
        format!("fma({ry}, ez_y - ez_c, -({rz} * (ey_z - ey_c)))"),
        format!("fma({rz}, ex_z - ex_c, -({rx} * (ez_x - ez_c)))"),
        format!("fma({rx}, ey_x - ey_c, -({ry} * (ex_y - ex_c)))"),
    ];
    for (h, curl) in H.iter().zip(curls) {
        let old = old.replace("{h}", h);
        let _ = writeln!(g, "    {decl}n{h} = {old} - ({curl});");
    }
    let dt = spec.dt;
    for a in 0..3 {
        spec.correction(g, a, false, &|sign| spec.lit(-sign * dt), &|_| None, psi);
    }
}

/// The E update at cell `c` of plane `k` from H there (`hx_c` …), at its −x, −y and −z
/// neighbours (`hy_x` …, `hx_z` …), `a` = ca and `cbc` = cb: `nex`, `ney`, `nez`, tangential E
/// on the walls at index 0 held at zero, then the CPML terms off those walls. `old` spells
/// the old value of component `{e}`.
pub(crate) fn e_update(spec: &FdtdSpec, g: &mut String, old: &str, psi: &Psi) {
    let ty = spec.ty;
    let wall_z = if spec.walled(2) { "k == 0" } else { "false" };
    let _ = writeln!(g, "    const bool wall_z = {wall_z};");
    let [ix, iy, iz] = spec.inv.map(|v| spec.lit(v));
    let _ = writeln!(
        g,
        "    const {ty} curl_x = fma({iy}, hz_c - hz_y, -({iz} * (hy_c - hy_z)));"
    );
    let _ = writeln!(
        g,
        "    const {ty} curl_y = fma({iz}, hx_c - hx_z, -({ix} * (hz_c - hz_x)));"
    );
    let _ = writeln!(
        g,
        "    const {ty} curl_z = fma({ix}, hy_c - hy_x, -({iy} * (hx_c - hx_y)));"
    );
    // Tangential E on a wall at index 0: Ex on y and z walls, Ey on x and z, Ez on x and y.
    let walls = ["wall_y || wall_z", "wall_x || wall_z", "wall_x || wall_y"];
    for ((e, w), curl) in E.iter().zip(walls).zip(["curl_x", "curl_y", "curl_z"]) {
        let old = old.replace("{e}", e);
        let _ = writeln!(
            g,
            "    {ty} n{e} = ({w}) ? zero : fma(a, {old}, cbc * {curl});"
        );
    }
    for a in 0..3 {
        spec.correction(
            g,
            a,
            true,
            &|sign| {
                if sign < 0.0 {
                    "(-cbc)".to_string()
                } else {
                    "cbc".to_string()
                }
            },
            &|ti| Some(walls[ti].to_string()),
            psi,
        );
    }
}

/// After a step, in one thread and in the CPU's order: each soft source subtracts
/// `cb·J` from its component (in f64, as the CPU does), each hard source sets its component,
/// then each probe's value goes to row `row` of `traces`. `soft` and `hard` hold a row of
/// source values (amplitude times waveform, computed on the host) per step of the call.
/// Components are numbered ex, ey, ez, hx, hy, hz.
pub fn after_step(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(32) @NAME@({ty}* __restrict__ ex, {ty}* __restrict__ ey, {ty}* __restrict__ ez, {ty}* __restrict__ hx, {ty}* __restrict__ hy, {ty}* __restrict__ hz, const {ty}* __restrict__ cb, const long long* __restrict__ soft_cell, const int* __restrict__ soft_comp, const double* __restrict__ soft, const int ns, const long long* __restrict__ hard_cell, const int* __restrict__ hard_comp, const double* __restrict__ hard, const int nh, const long long* __restrict__ probe_cell, const int* __restrict__ probe_comp, const int np, double* __restrict__ traces, const int row) {{
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  {ty}* f[6] = {{ex, ey, ez, hx, hy, hz}};
  for (int s = 0; s < ns; ++s) {{
    const long long c = soft_cell[s];
    {ty}* e = f[soft_comp[s]];
    e[c] = ({ty})__dsub_rn((double)e[c], __dmul_rn((double)cb[c], soft[(long long)row * ns + s]));
  }}
  for (int s = 0; s < nh; ++s) f[hard_comp[s]][hard_cell[s]] = ({ty})hard[(long long)row * nh + s];
  for (int p = 0; p < np; ++p) traces[(long long)row * np + p] = (double)f[probe_comp[p]][probe_cell[p]];
}}
"
    )
}

/// Drude currents before the step, `J = kJ·J + βJ·E` (E still at step n), one thread per
/// dispersive cell of one E component; `J`, `kJ` and `βJ` in f64 as on the CPU, with the same
/// roundings (no fused multiply-add). Each cell names its medium's `(kJ, βJ)` in a small table
/// rather than carrying both: the currents' lists are most of a dispersive step's traffic.
/// `J` lies in the box of the dispersive cells (see `fdtd_dispersive`): `slot` is a cell's
/// place there.
pub fn drude_advance(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@(const {ty}* __restrict__ e, const unsigned int* __restrict__ cells, const unsigned int* __restrict__ slot, const unsigned short* __restrict__ medium, const double* __restrict__ kb, double* __restrict__ j, const int n) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
    const int m = medium[i];
    const unsigned int s = slot[i];
    j[s] = __dadd_rn(__dmul_rn(kb[2 * m], j[s]), __dmul_rn(kb[2 * m + 1], (double)e[cells[i]]));
  }}
}}
"
    )
}

/// Drude currents into E after its update, `E −= cb·J`, one thread per dispersive cell of one
/// E component, rounded as on the CPU.
pub fn drude_apply(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@({ty}* __restrict__ e, const {ty}* __restrict__ cb, const unsigned int* __restrict__ cells, const unsigned int* __restrict__ slot, const double* __restrict__ j, const int n) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
    const unsigned int c = cells[i];
    e[c] = ({ty})__dsub_rn((double)e[c], __dmul_rn((double)cb[c], j[slot[i]]));
  }}
}}
"
    )
}

/// Lorentz and Debye cells before the step (E still at step n), one thread per cell of one
/// branch, with the CPU's roundings: Lorentz `P⁺ = c0 P + c1 P⁻ + c2 E` and then `q = P`,
/// `p = P⁺`; Debye keeps `q = Eⁿ` for the solve after the E update.
pub fn poles_advance(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@(const {ty}* __restrict__ e, const long long* __restrict__ cells, const double* __restrict__ c, double* __restrict__ p, double* __restrict__ q, const int n, const int lorentz) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
    const double en = (double)e[cells[i]];
    if (lorentz) {{
      const double next = __dadd_rn(__dadd_rn(__dmul_rn(c[3 * i], p[i]), __dmul_rn(c[3 * i + 1], q[i])), __dmul_rn(c[3 * i + 2], en));
      q[i] = p[i];
      p[i] = next;
    }} else {{
      q[i] = en;
    }}
  }}
}}
"
    )
}

/// Lorentz and Debye cells after the E update, with the CPU's roundings: Lorentz
/// `E −= cb (P⁺ − Pⁿ)/Δt`; Debye solves the trapezoidal rule for `Eⁿ⁺¹` and advances `P`.
pub fn poles_apply(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@({ty}* __restrict__ e, const {ty}* __restrict__ cb, const long long* __restrict__ cells, const double* __restrict__ c, double* __restrict__ p, const double* __restrict__ q, const int n, const int lorentz, const double dt) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
    const long long x = cells[i];
    const double cbx = (double)cb[x];
    if (lorentz) {{
      e[x] = ({ty})__dsub_rn((double)e[x], __ddiv_rn(__dmul_rn(cbx, __dsub_rn(p[i], q[i])), dt));
    }} else {{
      const double r = __ddiv_rn(cbx, dt);
      const double k0 = c[3 * i], k1 = c[3 * i + 1];
      const double num = __dsub_rn((double)e[x], __dmul_rn(r, __dadd_rn(__dmul_rn(__dsub_rn(k0, 1.0), p[i]), __dmul_rn(k1, q[i]))));
      e[x] = ({ty})__ddiv_rn(num, __dadd_rn(1.0, __dmul_rn(r, k1)));
      p[i] = __dadd_rn(__dmul_rn(k0, p[i]), __dmul_rn(k1, __dadd_rn((double)e[x], q[i])));
    }}
  }}
}}
"
    )
}

/// At the end of a call, as the CPU reports it: the smallest cell index holding a non-finite
/// value in any component (the first such component's value), tagged with the call's last
/// step, into the stepper's non-finite flag.
pub fn scan(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void __launch_bounds__(256) @NAME@(const {ty}* __restrict__ ex, const {ty}* __restrict__ ey, const {ty}* __restrict__ ez, const {ty}* __restrict__ hx, const {ty}* __restrict__ hy, const {ty}* __restrict__ hz, const long long cells, unsigned long long* bad, double* badval, const unsigned long long tag) {{
  const {ty}* f[6] = {{ex, ey, ez, hx, hy, hz}};
  for (long long c = blockIdx.x * 256LL + threadIdx.x; c < cells; c += 256LL * gridDim.x) {{
    for (int a = 0; a < 6; ++a) {{
      const {ty} v = f[a][c];
      if (!isfinite(v)) {{
        const unsigned long long key = tag | (unsigned long long)c;
        if (atomicMin(bad, key) > key) *badval = (double)v;
        break;
      }}
    }}
  }}
}}
"
    )
}

/// The running DFT of the monitors, fields of type `ty`: one thread per plane point, adding
/// `v·w` to each of its spectra (`re`, `im`), rounded as the CPU rounds. Components are
/// numbered ex, ey, ez, hx, hy, hz.
pub fn dft(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void @NAME@(const {ty}* __restrict__ ex, const {ty}* __restrict__ ey,\n\
         \x20   const {ty}* __restrict__ ez, const {ty}* __restrict__ hx, const {ty}* __restrict__ hy,\n\
         \x20   const {ty}* __restrict__ hz, const long long* __restrict__ cells,\n\
         \x20   const int* __restrict__ comps, const double* __restrict__ w, double* __restrict__ re,\n\
         \x20   double* __restrict__ im, const int np, const int nc, const int nf) {{\n\
         \x20 const {ty}* const f[6] = {{ex, ey, ez, hx, hy, hz}};\n\
         \x20 for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < np; p += gridDim.x * blockDim.x) {{\n\
         \x20   const long long cell = cells[p];\n\
         \x20   for (int ci = 0; ci < nc; ++ci) {{\n\
         \x20     const double v = (double)f[comps[ci]][cell];\n\
         \x20     for (int fi = 0; fi < nf; ++fi) {{\n\
         \x20       const int k = fi * nc + ci;\n\
         \x20       const long long o = (long long)k * np + p;\n\
         \x20       // As the CPU rounds: the product, then the sum.\n\
         \x20       re[o] = __dadd_rn(re[o], __dmul_rn(v, w[2 * k]));\n\
         \x20       im[o] = __dadd_rn(im[o], __dmul_rn(v, w[2 * k + 1]));\n\
         \x20     }}\n\
         \x20   }}\n\
         \x20 }}\n\
         }}\n"
    )
}

/// The plane waves' corrections, fields of type `ty`: one thread per corrected cell, its
/// corrections in order, each added in f64 and rounded to the field's type as the CPU does.
pub fn tfsf(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void @NAME@({ty}* __restrict__ ex, {ty}* __restrict__ ey,\n\
         \x20   {ty}* __restrict__ ez, {ty}* __restrict__ hx, {ty}* __restrict__ hy,\n\
         \x20   {ty}* __restrict__ hz, const {ty}* __restrict__ cb, const int* __restrict__ comp,\n\
         \x20   const long long* __restrict__ cell, const int* __restrict__ start,\n\
         \x20   const double* __restrict__ k, const int* __restrict__ slot,\n\
         \x20   const double* __restrict__ row, const int n, const int with_cb) {{\n\
         \x20 {ty}* const f[6] = {{ex, ey, ez, hx, hy, hz}};\n\
         \x20 for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < n; g += gridDim.x * blockDim.x) {{\n\
         \x20   {ty}* const a = f[comp[g]];\n\
         \x20   const long long c = cell[g];\n\
         \x20   double v = (double)a[c];\n\
         \x20   for (int j = start[g]; j < start[g + 1]; ++j) {{\n\
         \x20     // H: (Δt·coef)·e; E: (cb·coef)·h, as the CPU multiplies.\n\
         \x20     const double term = with_cb ? __dmul_rn(__dmul_rn((double)cb[c], k[j]), row[slot[j]])\n\
         \x20                                 : __dmul_rn(k[j], row[slot[j]]);\n\
         \x20     v = (double)({ty})__dadd_rn(v, term);\n\
         \x20   }}\n\
         \x20   a[c] = ({ty})v;\n\
         \x20 }}\n\
         }}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FDTD schedule's default kernel choices for `bytes`-byte values.
    fn choices(bytes: usize) -> KernelChoices {
        let f32 = bytes == 4;
        KernelChoices {
            interior: true,
            drude_loads: DrudeLoads::MediaFirst,
            drude_carry: if f32 {
                DrudeCarry::Media
            } else {
                DrudeCarry::Nothing
            },
            drude_ahead: f32,
        }
    }

    fn spec(periodic: [bool; 3], cpml: [Option<usize>; 3]) -> FdtdSpec {
        FdtdSpec {
            ty: "double",
            periodic,
            inv: [1.0, 0.5, 0.25].map(|d| 1.0 / d),
            rate: [1.0, 0.5, 0.25].map(|d| 0.1 / d),
            dt: 0.1,
            cpml,
            launch: Launch::columns(32, 8, 16),
            min_blocks: 0,
            indexed: false,
            interior: [false; 3],
            drude: false,
            choices: choices(8),
        }
    }

    #[test]
    fn cpml_terms_are_generated_only_for_cpml_axes() {
        let s = spec([true, false, false], [None, None, Some(5)]);
        let h = h_step(&s);
        assert!(h.contains("psi_z0") && !h.contains("psi_x0") && !h.contains("psi_y0"));
        // z layer: ψ of Hx from Ey, weight −sign·Δt (term 0 has sign −1).
        assert!(h.contains("nhx = fma(0.1, fma(kinv, d, p), nhx);"), "{h}");
        let e = e_step(&s);
        assert!(e.contains("if (!(wall_y || wall_z)) {"), "{e}");
        assert!(e.contains("const bool wall_x = false;"), "{e}");
    }

    #[test]
    fn the_march_hands_planes_on_in_registers() {
        let s = spec([false; 3], [None; 3]);
        let h = h_step(&s);
        assert!(h.contains("ex_c = ex_z;") && h.contains("vzp ? __ldg(ex + c + sz)"));
        let e = e_step(&s);
        assert!(e.contains("hx_z = hx_c;") && e.contains("k0 > 0 ? __ldg(hx + cz0)"));
    }
}
