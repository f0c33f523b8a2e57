//! CUDA C for two whole FDTD steps in one pass over the grid: H¹, E¹, H², E² plane by plane,
//! reading the fields at step n and writing them at step n + 2, so that a step moves half
//! the bytes of the one-step pass ([`super::fused`]).
//!
//! # Design
//!
//! A block owns `bx × by` columns and marches up a chunk of planes. The Yee updates reach one
//! cell: H at a cell needs E at its +x, +y and +z neighbours, E needs H at its −x, −y and −z
//! ones. So E² on the owned cells needs H² one cell further on the −x and −y sides, H² needs
//! E¹ one cell further on the +x and +y sides, and so on down to the fields at step n: the
//! block's `(bx + 3) × (by + 3)` threads each take one column, from two cells below the owned
//! ones to one above, and compute the levels where they are valid (H¹ everywhere, E¹ from the
//! second, H² from the second to the last but one, E² on the owned cells). The neighbours'
//! values go through shared memory: H¹ and H² of the plane (one buffer each), E¹ of this
//! plane and the one below (two buffers, by plane parity).
//!
//! Along z the second step lags one plane: when level 1 (H¹ then E¹) reaches plane `t`,
//! level 2 computes plane `t − 1`, whose E¹ neighbours went to shared memory one iteration
//! ago and whose +z neighbour E¹(t) the thread has just computed. Two barriers a plane: after
//! H¹ is stored (E¹ reads it) and after H² is stored (E² reads it). The march starts two
//! planes below the chunk (the levels there are only the halo of the chunk's first planes)
//! and ends one plane above it.
//!
//! Each thread carries its column's state from one plane to the next in registers: E⁰ of
//! the plane (loaded one plane ahead), H¹ and E¹ of the plane below (level 2's old values),
//! H² of the plane below that (E²'s −z neighbour), the medium and, in a CPML layer, ψ after
//! the first step. Blocks read their neighbours' cells at step n while the owners write step
//! n + 2, so every array the pass writes has an old and a new copy, the E-side ψ included
//! (the one-step pass updates that in place).
//!
//! Point sources and probes of the first step are applied inside the pass, in the order of
//! the one-thread kernel that follows a single step: soft sources subtract `cb·J` in `f64`,
//! hard ones set their component, then probes sample (a probe by the thread that owns its
//! cell). That kernel runs after the pass for the second step. The arithmetic of every
//! update is the one-step kernels' term by term, so a pass equals two single steps bit for
//! bit.
//!
//! Drude currents are advanced inside the pass, where E is: each component's `J` lies in a box
//! of cells around the Drude cells, with a byte per box cell naming the cell's medium. Every
//! thread that computes E¹ computes `J¹` from the old copy (its neighbours' too, for their
//! halo), and the cell's owner keeps it in the new copy, where its second step reads it back
//! and overwrites it with `J²`. In `f32` the first step loads the cell's media bytes with H¹'s
//! loads and hands them to the second step in a register, which leaves the second step one
//! round trip to memory (its `J¹`) instead of two.

use super::fused::{column_prologue, common_params, head, media_table, Core};
use super::{e_update, h_update, FdtdSpec, Psi, AXN, IDX, MEDIA, N};
use super::{DrudeCarry, DrudeLoads};
use std::fmt::Write;

/// The halo of a two-step block, per axis (see the module's design).
pub const TWO_STEPS: super::fused::Halo = super::fused::Halo { below: 2, above: 1 };

/// Shared memory of a two-step block of `bx × by` columns, values of `bytes` bytes: H¹ and
/// H² once, E¹ twice, three components each, and an indexed kernel's table.
pub fn shared_bytes(bx: u32, by: u32, bytes: usize, indexed: bool) -> usize {
    let plane = (bx as usize + 3) * (by as usize + 3);
    4 * 3 * plane * bytes + if indexed { 2 * MEDIA * bytes } else { 0 }
}

/// The two-step kernel for `spec`: block `(bx + 3) × (by + 3)`, grid
/// `⌈(x1 − x0)/bx⌉ × ⌈(y1 − y0)/by⌉ × ⌈(z1 − z0)/chunk⌉`, as [`super::fused::fused_step`]
/// lays them (the same bounds, the same box of core blocks and `core`'s choice for them).
/// With `points`, the kernel applies the first step's point sources and probes; with
/// `narrow`, it indexes cells with 32-bit integers (see [`narrow_enough`]); with `also`, it
/// skips a second box of blocks as well as the core box, given after the bounds (`qx0, qx1,
/// qy0, qy1, qz0, qz1`; another launch steps them).
pub fn two_steps(spec: &FdtdSpec, core: Core, points: bool, narrow: bool, also: bool) -> String {
    let ty = spec.ty;
    let l = spec.launch;
    let (tx, ty_) = (l.bx as usize + 3, l.by as usize + 3);
    let mut g = String::new();
    let mut params = common_params(spec);
    if also {
        params.push_str(", const int qx0, const int qx1, const int qy0, const int qy1, const int qz0, const int qz1");
    }
    if points {
        params.push_str(
            ", const long long* __restrict__ soft_cell, const int* __restrict__ soft_comp, const double* __restrict__ soft, const int ns, \
             const long long* __restrict__ hard_cell, const int* __restrict__ hard_comp, const double* __restrict__ hard, const int nh, \
             const long long* __restrict__ probe_cell, const int* __restrict__ probe_comp, const int np, double* __restrict__ traces, const int row",
        );
    }
    for a in (0..3).filter(|&a| spec.cpml[a].is_some()) {
        let x = AXN[a];
        let _ = write!(
            params,
            ", const {ty}* __restrict__ psi_ho_{x}0, const {ty}* __restrict__ psi_ho_{x}1, \
             {ty}* __restrict__ psi_hn_{x}0, {ty}* __restrict__ psi_hn_{x}1, \
             const {ty}* __restrict__ coef_h_{x}, \
             const {ty}* __restrict__ psi_eo_{x}0, const {ty}* __restrict__ psi_eo_{x}1, \
             {ty}* __restrict__ psi_en_{x}0, {ty}* __restrict__ psi_en_{x}1, \
             const {ty}* __restrict__ coef_e_{x}"
        );
    }
    if spec.drude {
        params.push_str(&drude_params());
    }
    head(spec, tx * ty_, &params, &mut g);
    let _ = writeln!(
        g,
        "  __shared__ {ty} s_h1[3][{ty_}][{tx}], s_h2[3][{ty_}][{tx}];"
    );
    let _ = writeln!(g, "  __shared__ {ty} s_e1[2][3][{ty_}][{tx}];");
    g.push_str("  const bool core = blockIdx.x >= sx0 && blockIdx.x < sx1 && blockIdx.y >= sy0 && blockIdx.y < sy1 && blockIdx.z >= sz0 && blockIdx.z < sz1;\n");
    if also {
        g.push_str("  if (blockIdx.x >= qx0 && blockIdx.x < qx1 && blockIdx.y >= qy0 && blockIdx.y < qy1 && blockIdx.z >= qz0 && blockIdx.z < qz1) return;\n");
    }
    match core {
        Core::Skip => {
            g.push_str("  if (core) return;\n");
            media_table(spec, &mut g);
            march(spec, points, narrow, &mut g);
        }
        Core::Here => {
            let plain = spec.clear_of_layers();
            media_table(spec, &mut g);
            g.push_str("  if (core) {\n");
            march(&plain, points, narrow, &mut g);
            g.push_str("  } else {\n");
            march(spec, points, narrow, &mut g);
            g.push_str("  }\n");
        }
    }
    g.push_str("}\n");
    g
}

/// `index` wrapped into `[0, n)` on a periodic axis, as is otherwise.
fn wrapped(periodic: bool, index: &str, n: &str) -> String {
    if periodic {
        format!("((({index}) % {n}) + {n}) % {n}")
    } else {
        index.to_string()
    }
}

/// The registers that carry ψ of the CPML axes from one step to the next: `{prefix}{axis}{term}`.
fn psi_registers(spec: &FdtdSpec, prefix: &str) -> Vec<String> {
    (0..3)
        .filter(|&a| spec.cpml[a].is_some())
        .flat_map(|a| (0..2).map(move |t| format!("{prefix}{}{t}", AXN[a])))
        .collect()
}

/// Whether a grid of `n` cells is small enough for 32-bit cell indices: every index and
/// offset a pass forms (a cell, its neighbour one plane up, a CPML slab's element) stays
/// below 2³¹. They save the pass the 64-bit address arithmetic, a sixth of its
/// instructions.
pub fn narrow_enough(n: [usize; 3]) -> bool {
    n[0].saturating_mul(n[1]).saturating_mul(n[2] + 2) < i32::MAX as usize
}

/// The march of one block, its cell indices 32-bit where `narrow` (the shared index code
/// spells them `long long`, which this replaces).
fn march(spec: &FdtdSpec, points: bool, narrow: bool, g: &mut String) {
    let mut body = String::new();
    march_body(spec, points, &mut body);
    if narrow {
        body = body.replace("long long", "int").replace("LL * ", " * ");
    }
    g.push_str(&body);
}

/// The march of one block (see the module's design).
fn march_body(spec: &FdtdSpec, points: bool, g: &mut String) {
    let ty = spec.ty;
    let l = spec.launch;
    let (bx, by) = (l.bx as usize, l.by as usize);
    let pz = spec.periodic[2];
    g.push_str("  {\n  const int tx = threadIdx.x, ty = threadIdx.y;\n");
    let _ = writeln!(g, "  const int ri = x0 + blockIdx.x * {bx} + tx - 2;");
    let _ = writeln!(g, "  const int rj = y0 + blockIdx.y * {by} + ty - 2;");
    // Cells outside a wall hold zero at every level; on a periodic axis they wrap.
    let mut valid = Vec::new();
    for (a, r) in [(0, "ri"), (1, "rj")] {
        let (i, n) = (IDX[a], N[a]);
        if spec.interior[a] {
            let _ = writeln!(g, "  const int {i} = {r};");
        } else if spec.periodic[a] {
            let _ = writeln!(g, "  const int {i} = {};", wrapped(true, r, n));
        } else {
            let _ = writeln!(g, "  const int {i} = min(max({r}, 0), {n} - 1);");
            valid.push(format!("{r} >= 0 && {r} < {n}"));
        }
    }
    let v = if valid.is_empty() {
        "true".to_string()
    } else {
        valid.join(" && ")
    };
    let _ = writeln!(g, "  const bool v = {v};");
    // Which levels this thread's column computes (see the module's design).
    g.push_str("  const bool e1 = v && tx >= 1 && ty >= 1;\n");
    let _ = writeln!(
        g,
        "  const bool h2 = e1 && tx <= {} && ty <= {};",
        bx + 1,
        by + 1
    );
    let _ = writeln!(
        g,
        "  const bool own = h2 && tx >= 2 && ty >= 2 && ri < x1 && rj < y1;"
    );
    column_prologue(spec, g);
    if spec.drude {
        // Whether the column crosses the box of Drude cells, and where it lies in it.
        g.push_str("  const bool dxy = i >= dx0 && i < dx0 + dnx && j >= dy0 && j < dy0 + dny;\n");
        g.push_str("  const long long dcol = (long long)(i - dx0) + (long long)dnx * (j - dy0);\n");
    }
    // Below plane 0 of a wall's grid everything is zero: the march starts there at most.
    let ks = if !spec.walled(2) {
        "k0 - 2"
    } else {
        "max(k0 - 2, 0)"
    };
    let _ = writeln!(g, "  const int ks = {ks};");
    let _ = writeln!(
        g,
        "  const long long cs = col + (long long)({}) * sz;",
        wrapped(pz, "ks", "nz")
    );
    let _ = writeln!(
        g,
        "  {ty} e0x = v ? __ldg(ex0 + cs) : zero, e0y = v ? __ldg(ey0 + cs) : zero;"
    );
    let _ = writeln!(
        g,
        "  {ty} h1zx = zero, h1zy = zero, p1hx = zero, p1hy = zero, p1hz = zero;"
    );
    let _ = writeln!(
        g,
        "  {ty} q1ex = zero, q1ey = zero, q1ez = zero, h2zx = zero, h2zy = zero;"
    );
    if spec.indexed {
        g.push_str("  unsigned int m1 = 0u;\n");
    } else {
        let _ = writeln!(g, "  {ty} a1 = zero, b1 = zero;");
    }
    for r in psi_registers(spec, "ph1_")
        .into_iter()
        .chain(psi_registers(spec, "pe1_"))
    {
        let _ = writeln!(g, "  {ty} {r} = zero;");
    }
    if spec.drude {
        for r in carried_drude(spec, "dm2_", "dj2_") {
            let _ = writeln!(g, "  {r};");
        }
    }
    if points {
        // Whether a point lies on this thread's column: the others skip the points' loops
        // (which every thread would otherwise run at every plane).
        g.push_str("  bool pts = false;\n");
        for (list, n) in [
            ("soft_cell", "ns"),
            ("hard_cell", "nh"),
            ("probe_cell", "np"),
        ] {
            let _ = writeln!(
                g,
                "  for (int q = 0; q < {n}; ++q) pts |= __ldg({list} + q) % sz == col;"
            );
        }
    }
    g.push_str("  for (int t = ks; t <= k1; ++t) {\n");
    let _ = writeln!(g, "    const int ka = {};", wrapped(pz, "t", "nz"));
    let _ = writeln!(
        g,
        "    const bool la = {};",
        if spec.walled(2) { "t < nz" } else { "true" }
    );
    g.push_str("    const long long ca_ = col + (long long)ka * sz;\n");
    g.push_str("    const int b = t & 1;\n");
    level_one(spec, points, g);
    level_two(spec, points, g);
    // The column's state moves up one plane.
    g.push_str("    h2zx = n2hx; h2zy = n2hy;\n");
    g.push_str("    q1ex = n1ex; q1ey = n1ey; q1ez = n1ez;\n");
    g.push_str("    p1hx = o1hx; p1hy = o1hy; p1hz = o1hz; h1zx = n1hx; h1zy = n1hy;\n");
    g.push_str("    e0x = exz1; e0y = eyz1;\n");
    if spec.indexed {
        g.push_str("    m1 = ma;\n");
    } else {
        g.push_str("    a1 = aa; b1 = ba;\n");
    }
    if spec.drude {
        let carry = spec.choices.drude_carry;
        if carry != DrudeCarry::Nothing {
            g.push_str("    dm2_ = dm1_;\n");
        }
        if carry == DrudeCarry::MediaAndCurrents {
            g.push_str("    dj2_x = dj1_x; dj2_y = dj1_y; dj2_z = dj1_z;\n");
        }
    }
    for (to, from) in psi_registers(spec, "ph1_")
        .into_iter()
        .zip(psi_registers(spec, "q_h_"))
        .chain(
            psi_registers(spec, "pe1_")
                .into_iter()
                .zip(psi_registers(spec, "q_e_")),
        )
    {
        let _ = writeln!(g, "    {to} = {from};");
    }
    g.push_str("  }\n  }\n");
}

/// H¹ and E¹ at plane `ka` (first step), with the first step's point sources.
fn level_one(spec: &FdtdSpec, points: bool, g: &mut String) {
    let ty = spec.ty;
    let _ = writeln!(
        g,
        "    {ty} n1hx = zero, n1hy = zero, n1hz = zero, ezc1 = zero, exz1 = zero, eyz1 = zero;"
    );
    for r in psi_registers(spec, "q_h_")
        .into_iter()
        .chain(psi_registers(spec, "q_e_"))
    {
        let _ = writeln!(g, "    {ty} {r} = zero;");
    }
    if spec.drude {
        for r in carried_drude(spec, "dm1_", "dj1_") {
            let _ = writeln!(g, "    {r};");
        }
        if spec.choices.drude_ahead {
            // E¹'s media bytes go out with H¹'s loads too.
            g.push_str("    const bool din = e1 && la && dxy && ka >= dz0 && ka < dz0 + dnz;\n");
            g.push_str("    const long long dd = dcol + (long long)(ka - dz0) * dnx * dny;\n");
            for a in AXN {
                let _ = writeln!(g, "    const int ma_{a} = din ? __ldg(dm_{a} + dd) : 0;");
            }
        }
    }
    // E¹'s coefficients go out with H¹'s loads, ahead of the barrier.
    if spec.indexed {
        g.push_str("    const unsigned int ma = e1 && la ? __ldg(medium + ca_) : 0u;\n");
    } else {
        let _ = writeln!(
            g,
            "    const {ty} aa = e1 && la ? __ldg(ca + ca_) : zero, ba = e1 && la ? __ldg(cb + ca_) : zero;"
        );
    }
    g.push_str("    if (v && la) {\n");
    g.push_str("    const int k = ka;\n    const long long c = ca_;\n");
    spec.z_layer(g);
    let _ = writeln!(g, "    const {ty} ex_c = e0x, ey_c = e0y;");
    if spec.periodic[2] {
        g.push_str("    const long long cz = col + (long long)(k + 1 < nz ? k + 1 : 0) * sz;\n");
        let _ = writeln!(
            g,
            "    const {ty} ex_z = __ldg(ex0 + cz), ey_z = __ldg(ey0 + cz);"
        );
    } else {
        let vzp = if spec.interior[2] {
            "true"
        } else {
            "k + 1 < nz"
        };
        let _ = writeln!(g, "    const bool vzp = {vzp};");
        let _ = writeln!(
            g,
            "    const {ty} ex_z = vzp ? __ldg(ex0 + c + sz) : zero, ey_z = vzp ? __ldg(ey0 + c + sz) : zero;"
        );
    }
    let _ = writeln!(g, "    const {ty} ez_c = __ldg(ez0 + c);");
    spec.near(g, "ey_x", "ey0", "xp");
    spec.near(g, "ez_x", "ez0", "xp");
    spec.near(g, "ex_y", "ex0", "yp");
    spec.near(g, "ez_y", "ez0", "yp");
    let psi = Psi {
        read: "psi_ho_{a}{t}[s]",
        write: "q_h_{a}{t}",
        coef: "coef_h_",
        guard: None,
    };
    h_update(spec, g, &format!("{ty} "), "__ldg({h}0 + c)", &psi);
    g.push_str("    n1hx = nhx; n1hy = nhy; n1hz = nhz;\n");
    g.push_str("    ezc1 = ez_c; exz1 = ex_z; eyz1 = ey_z;\n");
    g.push_str("    }\n");
    g.push_str("    s_h1[0][ty][tx] = n1hx; s_h1[1][ty][tx] = n1hy; s_h1[2][ty][tx] = n1hz;\n");
    g.push_str("    __syncthreads();\n");
    // H¹ as the second step sees it (after the first step's hard sources).
    let _ = writeln!(
        g,
        "    {ty} o1hx = n1hx, o1hy = n1hy, o1hz = n1hz, n1ex = zero, n1ey = zero, n1ez = zero;"
    );
    g.push_str("    if (e1 && la) {\n");
    g.push_str("    const int k = ka;\n    const long long c = ca_;\n");
    spec.z_layer(g);
    let _ = writeln!(
        g,
        "    const {ty} hx_c = n1hx, hy_c = n1hy, hz_c = n1hz, hx_z = h1zx, hy_z = h1zy;\n    \
         const {ty} hy_x = s_h1[1][ty][tx - 1], hz_x = s_h1[2][ty][tx - 1];\n    \
         const {ty} hx_y = s_h1[0][ty - 1][tx], hz_y = s_h1[2][ty - 1][tx];\n    \
         const {ty} o_ex = e0x, o_ey = e0y, o_ez = ezc1;"
    );
    if spec.indexed {
        let _ = writeln!(g, "    const {ty} a = media_a[ma], cbc = media_b[ma];");
    } else {
        let _ = writeln!(g, "    const {ty} a = aa, cbc = ba;");
    }
    let psi = Psi {
        read: "psi_eo_{a}{t}[s]",
        write: "q_e_{a}{t}",
        coef: "coef_e_",
        guard: None,
    };
    e_update(spec, g, "o_{e}", &psi);
    if spec.drude {
        // J¹ from J⁰ (the old copy) at every cell the level computes; the owners keep it in
        // the new copy, where their second step finds it.
        drude_terms(
            spec,
            g,
            "o_",
            "__ldg(jo_{a} + d)",
            "own && t >= k0 && t < k1",
            Hand::Leave,
        );
    }
    if points {
        sources(spec, g);
    }
    g.push_str("    n1ex = nex; n1ey = ney; n1ez = nez;\n");
    g.push_str("    }\n");
    g.push_str(
        "    s_e1[b][0][ty][tx] = n1ex; s_e1[b][1][ty][tx] = n1ey; s_e1[b][2][ty][tx] = n1ez;\n",
    );
}

/// The Drude parameters: per E component the medium of each cell of the box of Drude
/// cells (0: none, else an index into `dkb`'s `(kJ, βJ)` pairs plus one) and its currents,
/// old and new; the table; the box's corner and sizes.
fn drude_params() -> String {
    let mut p = String::new();
    for a in AXN {
        let _ = write!(p, ", const unsigned char* __restrict__ dm_{a}");
    }
    p.push_str(", const double* __restrict__ dkb");
    for a in AXN {
        let _ = write!(p, ", const double* __restrict__ jo_{a}");
    }
    for a in AXN {
        let _ = write!(p, ", double* __restrict__ jn_{a}");
    }
    p.push_str(", const int dx0, const int dy0, const int dz0, const int dnx, const int dny, const int dnz");
    p
}

/// The Drude currents at cell `c` of plane `k` after E's update, as the list kernels around
/// a single step compute them: `J = kJ·J + βJ·E` from E before the update (`{old}ex`...),
/// `J` read as `read` (`{a}` the axis), then `E −= cb·J`, all in `f64` without fused
/// multiply-adds; `J` goes to the new copy where `keep` holds.
///
/// The three components' media bytes are loaded first, then the Drude cells' currents, all
/// before the first is used, so that a plane waits for two round trips to memory instead of a
/// medium and then a current for each component in turn ([`drude_loads`]). `hand` says which
/// step this is: as [`drude_carry`] and [`drude_ahead_wanted`] ask, the first loads its media
/// bytes ahead of the plane's first barrier and leaves them (and `J¹`) in registers, where the
/// second step, one plane later at the same cell, takes them instead of loading them again.
fn drude_terms(spec: &FdtdSpec, g: &mut String, old: &str, read: &str, keep: &str, hand: Hand) {
    let ty = spec.ty;
    let carry = spec.choices.drude_carry;
    let media_taken = hand == Hand::Take && carry != DrudeCarry::Nothing;
    let currents_taken = hand == Hand::Take && carry == DrudeCarry::MediaAndCurrents;
    g.push_str("    if (dxy && k >= dz0 && k < dz0 + dnz) {\n");
    g.push_str("    const long long d = dcol + (long long)(k - dz0) * dnx * dny;\n");
    let ahead = hand == Hand::Leave && spec.choices.drude_ahead;
    let medium = |n: usize, a: &str| {
        if media_taken {
            format!("(dm2_ >> {}) & 255u", 8 * n)
        } else if ahead {
            format!("ma_{a}")
        } else {
            format!("__ldg(dm_{a} + d)")
        }
    };
    let current = |a: &str| {
        if currents_taken {
            format!("dj2_{a}")
        } else {
            read.replace("{a}", a)
        }
    };
    let order = spec.choices.drude_loads;
    if order != DrudeLoads::InTurn {
        for (n, a) in AXN.iter().enumerate() {
            let _ = writeln!(g, "    const int m_{a} = {};", medium(n, a));
        }
        for a in AXN {
            let j = match order {
                DrudeLoads::AllFirst => current(a),
                _ => format!("m_{a} ? {} : 0.0", current(a)),
            };
            let _ = writeln!(g, "    const double j_{a} = {j};");
        }
    }
    for (n, (a, e)) in AXN.iter().zip(["ex", "ey", "ez"]).enumerate() {
        let (m, j) = match order {
            DrudeLoads::InTurn => (
                format!("const int m_{a} = {};\n    ", medium(n, a)),
                current(a),
            ),
            _ => (String::new(), format!("j_{a}")),
        };
        let leaves = hand == Hand::Leave;
        let leave_m = match leaves && carry != DrudeCarry::Nothing {
            true => format!("dm1_ |= (unsigned int)m_{a} << {};\n    ", 8 * n),
            false => String::new(),
        };
        let leave_j = match leaves && carry == DrudeCarry::MediaAndCurrents {
            true => format!("\n      dj1_{a} = jj;"),
            false => String::new(),
        };
        let _ = writeln!(
            g,
            "    {{ {m}{leave_m}if (m_{a}) {{\n      \
             const double jj = __dadd_rn(__dmul_rn(__ldg(dkb + 2 * m_{a} - 2), {j}), __dmul_rn(__ldg(dkb + 2 * m_{a} - 1), (double){old}{e}));\n      \
             n{e} = ({ty})__dsub_rn((double)n{e}, __dmul_rn((double)cbc, jj));\n      \
             if ({keep}) jn_{a}[d] = jj;{leave_j}\n    }} }}"
        );
    }
    g.push_str("    }\n");
}

/// Which side of the hand-over between the steps a level's Drude terms are on
/// ([`drude_carry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hand {
    /// The first step: it leaves the media bytes (and currents) for the second.
    Leave,
    /// The second step: it takes them.
    Take,
}

/// The declarations of the registers that carry a Drude cell's media bytes (`{media}`) and
/// currents (`{currents}x` …) from the first step to the second, as [`drude_carry`] asks.
fn carried_drude(spec: &FdtdSpec, media: &str, currents: &str) -> Vec<String> {
    let carry = spec.choices.drude_carry;
    let mut r = Vec::new();
    if carry != DrudeCarry::Nothing {
        r.push(format!("unsigned int {media} = 0u"));
    }
    if carry == DrudeCarry::MediaAndCurrents {
        r.push(format!(
            "double {currents}x = 0.0, {currents}y = 0.0, {currents}z = 0.0"
        ));
    }
    r
}

/// The first step's point sources at cell `c`, in the one-thread kernel's order: soft ones
/// subtract `cb·J` (in `f64`), then hard ones set their component. On E they change the E¹
/// that the second step and the neighbours see; on H only the H¹ the second step starts from
/// (E¹ was computed from H¹ before the sources, as in a single step).
fn sources(spec: &FdtdSpec, g: &mut String) {
    let ty = spec.ty;
    let targets = ["nex", "ney", "nez", "o1hx", "o1hy", "o1hz"];
    g.push_str("    if (pts) {\n");
    g.push_str(
        "    for (int q = 0; q < ns; ++q) {\n      if (__ldg(soft_cell + q) != c) continue;\n",
    );
    g.push_str("      const double j = __ldg(soft + (long long)row * ns + q);\n");
    g.push_str("      switch (__ldg(soft_comp + q)) {\n");
    for (n, v) in targets.iter().enumerate() {
        let _ = writeln!(
            g,
            "        case {n}: {v} = ({ty})__dsub_rn((double){v}, __dmul_rn((double)cbc, j)); break;"
        );
    }
    g.push_str("      }\n    }\n");
    g.push_str(
        "    for (int q = 0; q < nh; ++q) {\n      if (__ldg(hard_cell + q) != c) continue;\n",
    );
    let _ = writeln!(
        g,
        "      const {ty} w = ({ty})__ldg(hard + (long long)row * nh + q);"
    );
    g.push_str("      switch (__ldg(hard_comp + q)) {\n");
    for (n, v) in targets.iter().enumerate() {
        let _ = writeln!(g, "        case {n}: {v} = w; break;");
    }
    g.push_str("      }\n    }\n    }\n");
}

/// H² and E² at plane `t − 1` (second step), written by the cells' owners, with the first
/// step's probes.
fn level_two(spec: &FdtdSpec, points: bool, g: &mut String) {
    let ty = spec.ty;
    let pz = spec.periodic[2];
    g.push_str("    const bool lb = t > ks;\n");
    let _ = writeln!(g, "    const int kb2 = {};", wrapped(pz, "t - 1", "nz"));
    g.push_str("    const long long cb_ = col + (long long)kb2 * sz;\n");
    g.push_str("    const bool mine = own && lb && t - 1 >= k0;\n");
    let _ = writeln!(g, "    {ty} n2hx = zero, n2hy = zero, n2hz = zero;");
    g.push_str("    if (h2 && lb) {\n");
    g.push_str("    const int k = kb2;\n    const long long c = cb_;\n");
    spec.z_layer(g);
    let _ = writeln!(
        g,
        "    const {ty} ex_c = q1ex, ey_c = q1ey, ez_c = q1ez, ex_z = n1ex, ey_z = n1ey;\n    \
         const {ty} ey_x = s_e1[b ^ 1][1][ty][tx + 1], ez_x = s_e1[b ^ 1][2][ty][tx + 1];\n    \
         const {ty} ex_y = s_e1[b ^ 1][0][ty + 1][tx], ez_y = s_e1[b ^ 1][2][ty + 1][tx];"
    );
    let psi = Psi {
        read: "ph1_{a}{t}",
        write: "psi_hn_{a}{t}[s]",
        coef: "coef_h_",
        guard: Some("mine"),
    };
    h_update(spec, g, &format!("{ty} "), "p1{h}", &psi);
    g.push_str("    n2hx = nhx; n2hy = nhy; n2hz = nhz;\n");
    g.push_str("    }\n");
    g.push_str("    s_h2[0][ty][tx] = n2hx; s_h2[1][ty][tx] = n2hy; s_h2[2][ty][tx] = n2hz;\n");
    g.push_str("    __syncthreads();\n");
    g.push_str("    if (mine) {\n");
    g.push_str("    const int k = kb2;\n    const long long c = cb_;\n");
    spec.z_layer(g);
    let _ = writeln!(
        g,
        "    const {ty} hx_c = n2hx, hy_c = n2hy, hz_c = n2hz, hx_z = h2zx, hy_z = h2zy;\n    \
         const {ty} hy_x = s_h2[1][ty][tx - 1], hz_x = s_h2[2][ty][tx - 1];\n    \
         const {ty} hx_y = s_h2[0][ty - 1][tx], hz_y = s_h2[2][ty - 1][tx];"
    );
    if spec.indexed {
        let _ = writeln!(g, "    const {ty} a = media_a[m1], cbc = media_b[m1];");
    } else {
        let _ = writeln!(g, "    const {ty} a = a1, cbc = b1;");
    }
    let psi = Psi {
        read: "pe1_{a}{t}",
        write: "psi_en_{a}{t}[s]",
        coef: "coef_e_",
        guard: None,
    };
    e_update(spec, g, "q1{e}", &psi);
    if spec.drude {
        drude_terms(spec, g, "q1", "jn_{a}[d]", "true", Hand::Take);
    }
    g.push_str("    ex[c] = nex; ey[c] = ney; ez[c] = nez;\n");
    g.push_str("    hx[c] = n2hx; hy[c] = n2hy; hz[c] = n2hz;\n");
    if points {
        // The first step's probes, from the values the second step started from.
        g.push_str(
            "    if (pts) for (int q = 0; q < np; ++q) {\n      if (__ldg(probe_cell + q) != c) continue;\n",
        );
        g.push_str("      const int m = __ldg(probe_comp + q);\n");
        let _ = writeln!(
            g,
            "      const {ty} w = m == 0 ? q1ex : m == 1 ? q1ey : m == 2 ? q1ez : m == 3 ? p1hx : m == 4 ? p1hy : p1hz;"
        );
        g.push_str("      traces[(long long)row * np + q] = (double)w;\n    }\n");
    }
    g.push_str("    }\n");
}

#[cfg(test)]
mod tests {
    use super::super::fused::Core;
    use super::super::{DrudeCarry, DrudeLoads, FdtdSpec, KernelChoices};
    use super::{shared_bytes, two_steps};
    use crate::codegen::solver::Launch;

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

    fn spec(indexed: bool) -> FdtdSpec {
        FdtdSpec {
            ty: "float",
            periodic: [false, true, false],
            inv: [1.0; 3],
            rate: [0.5; 3],
            dt: 0.5,
            cpml: [Some(6), None, Some(6)],
            launch: Launch::columns(32, 8, 16),
            min_blocks: 0,
            indexed,
            drude: false,
            interior: [false; 3],
            choices: choices(4),
        }
    }

    /// [`spec`] with Drude media.
    fn drude_spec() -> FdtdSpec {
        FdtdSpec {
            drude: true,
            ..spec(true)
        }
    }

    /// Two barriers a plane in each march, the second step's ψ read from registers and
    /// written only by the owners, E-side ψ double-buffered, point code only when asked.
    #[test]
    fn a_pass_carries_the_first_step_in_registers() {
        let k = two_steps(&spec(true), Core::Here, false, false, false);
        assert!(k.contains("__launch_bounds__(385)"), "{k}");
        let marches: Vec<&str> = k.split("for (int t = ks; t <= k1; ++t)").skip(1).collect();
        assert_eq!(marches.len(), 2);
        for m in &marches {
            assert_eq!(m.matches("__syncthreads();").count(), 2, "{m}");
        }
        let layers = marches[1];
        assert!(layers.contains("fma(b, psi_ho_x0[s], cc * d)") && layers.contains("q_h_x0 = p;"));
        assert!(
            layers.contains("fma(b, ph1_x0, cc * d)")
                && layers.contains("if (mine) psi_hn_x0[s] = p;")
        );
        assert!(
            layers.contains("fma(b, psi_eo_z1[s], cc * d)") && layers.contains("psi_en_z1[s] = p;")
        );
        assert!(
            !marches[0].contains("psi_"),
            "the core march has no CPML terms"
        );
        assert!(!k.contains("soft_cell") && !k.contains("psi_hy0"));
        let p = two_steps(&spec(false), Core::Skip, true, true, false);
        assert!(p.contains("if (core) return;") && p.contains("__ldg(ca + ca_)"));
        assert!(p.contains("traces[(int)row * np + q]"), "{p}");
        assert!(p.contains("const long long* __restrict__ soft_cell"));
        // Narrow: only the point lists' pointers are 64-bit; the body indexes with `int`.
        let body = p.split_once(") {").map_or("", |(_, b)| b);
        assert!(!body.is_empty() && !body.contains("long long"), "{body}");
        assert_eq!(shared_bytes(32, 8, 4, false), 4 * 3 * 35 * 11 * 4);
    }

    /// With Drude media every computed E¹ takes its current from the old copy and only the
    /// owner keeps it; the second step reads the new copy back and writes it; without them
    /// the kernel names no current.
    #[test]
    fn a_pass_advances_drude_currents_where_it_computes_e() {
        let k = two_steps(&drude_spec(), Core::Skip, false, true, false);
        assert!(
            k.contains("double* __restrict__ jn_z, const int dx0"),
            "{k}"
        );
        assert_eq!(k.matches("__ldg(jo_x + d)").count(), 1);
        assert_eq!(
            k.matches("if (own && t >= k0 && t < k1) jn_x[d] = jj;")
                .count(),
            1
        );
        assert_eq!(k.matches("jn_y[d]").count(), 3, "{k}");
        assert!(!two_steps(&spec(true), Core::Skip, false, true, false).contains("dm_x"));
    }

    /// In `f32` the first step loads the media bytes ahead and hands them to the second, which
    /// loads none; in `f64` each step loads its own where it uses them.
    #[test]
    fn the_first_step_hands_the_drude_media_to_the_second_in_f32() {
        let k = two_steps(&drude_spec(), Core::Skip, false, true, false);
        assert_eq!(k.matches("__ldg(dm_x + dd)").count(), 1, "{k}");
        assert!(!k.contains("__ldg(dm_x + d)"), "{k}");
        assert!(k.contains("dm1_ |= (unsigned int)m_y << 8;") && k.contains("dm2_ = dm1_;"));
        assert!(k.contains("const int m_z = (dm2_ >> 16) & 255u;"), "{k}");
        let double = FdtdSpec {
            ty: "double",
            choices: choices(8),
            ..drude_spec()
        };
        let k = two_steps(&double, Core::Skip, false, true, false);
        assert_eq!(k.matches("__ldg(dm_x + d)").count(), 2, "{k}");
        assert!(!k.contains("dm1_") && !k.contains("dm_x + dd"), "{k}");
    }
}
