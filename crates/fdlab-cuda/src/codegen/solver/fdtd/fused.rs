//! CUDA C for the whole FDTD step in one kernel: H and then E, plane by plane, without H
//! going through device memory between the two half steps.
//!
//! Two half-step kernels move about 20 values per cell and step (H: its three components read
//! and written, E's three read; E: the same, plus H's three and the two coefficients); one
//! pass moves the 14 a step needs at least. The price is that a cell's E update needs the new
//! H of its −x and −y neighbours, which other threads compute: a block of `(bx + 1) × (by + 1)`
//! threads computes H on its `bx × by` columns and on one column more on the −x and −y sides
//! (the halo, computed again by the block that owns it), hands H on through shared memory,
//! then the `bx × by` owners update E. Along z a thread marches up its column as in the
//! half-step kernels; a block's first plane recomputes H one plane below it.
//!
//! Because blocks read their neighbours' cells at step n while the owners write step n + 1,
//! the old and new fields live in different arrays (E, H and the H-side CPML ψ; the caller
//! swaps them after each step). The E-side ψ is only ever touched by its owner, in place.
//! The arithmetic is the half-step kernels' term by term, so the results are the same.

use super::{e_update, h_update, FdtdSpec, Psi, AXN, IDX, MEDIA, N};
use std::fmt::Write;

/// The fused step's kernel for `spec`: block `(bx + 1) × (by + 1)`, grid
/// `⌈(x1 − x0)/bx⌉ × ⌈(y1 − y0)/by⌉ × ⌈(z1 − z0)/chunk⌉` for the box of cells it is given.
/// Its blocks in a box of core blocks (clear of every CPML layer, see [`core_blocks`]) are
/// left to another launch or stepped without the CPML terms, as `core` says.
pub fn fused_step(spec: &FdtdSpec, core: Core) -> String {
    let ty = spec.ty;
    let l = spec.launch;
    let (bx, by) = (l.bx as usize, l.by as usize);
    let (tx, ty_) = (bx + 1, by + 1);
    let mut g = String::new();
    let mut params = common_params(spec);
    for a in (0..3).filter(|&a| spec.cpml[a].is_some()) {
        let x = AXN[a];
        let _ = write!(
            params,
            ", const {ty}* __restrict__ psi_ho_{x}0, const {ty}* __restrict__ psi_ho_{x}1, \
             {ty}* __restrict__ psi_hn_{x}0, {ty}* __restrict__ psi_hn_{x}1, \
             const {ty}* __restrict__ coef_h_{x}, \
             {ty}* __restrict__ psi_e_{x}0, {ty}* __restrict__ psi_e_{x}1, \
             const {ty}* __restrict__ coef_e_{x}"
        );
    }
    head(spec, tx * ty_, &params, &mut g);
    // H of the block's plane, double-buffered by plane parity: one barrier per plane.
    let _ = writeln!(g, "  __shared__ {ty} sh[2][3][{ty_}][{tx}];");
    // The launch steps the box of cells [x0, x1) × [y0, y1) × [z0, z1); its blocks in the box
    // [s0, s1) of block indices (see `core_blocks`) hold no CPML cell.
    g.push_str("  const bool core = blockIdx.x >= sx0 && blockIdx.x < sx1 && blockIdx.y >= sy0 && blockIdx.y < sy1 && blockIdx.z >= sz0 && blockIdx.z < sz1;\n");
    match core {
        // Another launch steps them (the whole block returns, so no barrier is left waiting).
        Core::Skip => {
            g.push_str("  if (core) return;\n");
            media_table(spec, &mut g);
            body(spec, &mut g);
        }
        // The same kernel steps them without the CPML terms: the choice is the whole
        // block's, so its threads still meet at every barrier.
        Core::Here => {
            let plain = spec.clear_of_layers();
            media_table(spec, &mut g);
            g.push_str("  if (core) {\n");
            body(&plain, &mut g);
            g.push_str("  } else {\n");
            body(spec, &mut g);
            g.push_str("  }\n");
        }
    }
    g.push_str("}\n");
    g
}

/// The parameters every pass kernel starts with: new fields, old fields, E's coefficients
/// (a medium index and its table, or two arrays), sizes, the box of cells to step and the
/// box of blocks to skip.
pub(crate) fn common_params(spec: &FdtdSpec) -> String {
    let ty = spec.ty;
    let coefficients = if spec.indexed {
        format!("const unsigned char* __restrict__ medium, const {ty}* __restrict__ media, const int nmedia")
    } else {
        format!("const {ty}* __restrict__ ca, const {ty}* __restrict__ cb")
    };
    format!(
        "{ty}* __restrict__ ex, {ty}* __restrict__ ey, {ty}* __restrict__ ez, \
         {ty}* __restrict__ hx, {ty}* __restrict__ hy, {ty}* __restrict__ hz, \
         const {ty}* __restrict__ ex0, const {ty}* __restrict__ ey0, const {ty}* __restrict__ ez0, \
         const {ty}* __restrict__ hx0, const {ty}* __restrict__ hy0, const {ty}* __restrict__ hz0, \
         {coefficients}, \
         const int nx, const int ny, const int nz, \
         const int x0, const int x1, const int y0, const int y1, const int z0, const int z1, const int sx0, const int sx1, const int sy0, const int sy1, const int sz0, const int sz1"
    )
}

/// The kernel's first line for blocks of `threads` threads (and `spec`'s bound on blocks per
/// SM) and its parameters.
pub(crate) fn head(spec: &FdtdSpec, threads: usize, params: &str, g: &mut String) {
    let bounds = match spec.min_blocks {
        0 => format!("{threads}"),
        b => format!("{threads}, {b}"),
    };
    let _ = writeln!(
        g,
        "extern \"C\" __global__ void __launch_bounds__({bounds}) @NAME@({params}) {{"
    );
}

/// A march's chunk of planes (`kb`, clipped to `k0 … k1`), the column's index `col`, `zero`,
/// and the column's place in the x and y layers, its +x and +y neighbours and its walls.
pub(crate) fn column_prologue(spec: &FdtdSpec, g: &mut String) {
    let ty = spec.ty;
    let l = spec.launch;
    // A launch's box may start below the grid along z (see `z_origin`): its first chunk is
    // cut at plane 0.
    let _ = writeln!(g, "  const int kb = z0 + (int)blockIdx.z * {};", l.chunk);
    g.push_str("  const int k0 = max(kb, 0);\n");
    let _ = writeln!(g, "  const int k1 = min(kb + {}, z1);", l.chunk);
    g.push_str("  const long long sy = nx, sz = (long long)nx * ny;\n");
    g.push_str("  const long long col = i + sy * j;\n");
    let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
    spec.layer_flags(g);
    spec.side(g, 0, true);
    spec.side(g, 1, true);
    spec.wall_flags(g);
}

/// An indexed kernel's table of `(ca, cb)` pairs, copied into shared memory once per block:
/// `media` holds the `nmedia` values of `ca`, then (from `MEDIA`) those of `cb`. A cell's
/// lookup then costs a byte of device memory instead of two values.
pub(crate) fn media_table(spec: &FdtdSpec, g: &mut String) {
    if !spec.indexed {
        return;
    }
    let ty = spec.ty;
    let _ = writeln!(g, "  __shared__ {ty} media_a[{MEDIA}], media_b[{MEDIA}];");
    g.push_str("  for (int q = threadIdx.y * blockDim.x + threadIdx.x; q < nmedia; q += blockDim.x * blockDim.y) {\n");
    let _ = writeln!(
        g,
        "    media_a[q] = __ldg(media + q); media_b[q] = __ldg(media + {MEDIA} + q);\n  }}"
    );
    g.push_str("  __syncthreads();\n");
}

/// What a one-pass kernel does with the blocks in its box of core blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    /// Returns at once: another launch steps them.
    Skip,
    /// Steps them itself, with a copy of the march generated without the CPML terms (the
    /// kernel's parameters stay `spec`'s, CPML arrays included).
    Here,
}

/// The march of one block: H and then E at each plane of its chunk.
fn body(spec: &FdtdSpec, g: &mut String) {
    let ty = spec.ty;
    let l = spec.launch;
    let (bx, by) = (l.bx as usize, l.by as usize);
    g.push_str("  const int tx = threadIdx.x, ty = threadIdx.y;\n");
    let _ = writeln!(g, "  const int ri = x0 + blockIdx.x * {bx} + tx - 1;");
    let _ = writeln!(g, "  const int rj = y0 + blockIdx.y * {by} + ty - 1;");
    // The halo column at −1 wraps on a periodic axis and is a wall's zero otherwise.
    for (a, r) in [(0, "ri"), (1, "rj")] {
        let (i, n) = (IDX[a], N[a]);
        if spec.interior[a] {
            let _ = writeln!(g, "  const int {i} = {r};");
        } else if spec.periodic[a] {
            let _ = writeln!(g, "  const int {i} = {r} < 0 ? {n} - 1 : {r};");
        } else {
            let _ = writeln!(g, "  const int {i} = {r} < 0 ? 0 : {r};");
        }
    }
    let inside = |a: usize, r: &str| {
        if spec.walled(a) {
            format!("{r} >= 0")
        } else {
            "true".to_string()
        }
    };
    let _ = writeln!(
        g,
        "  const bool hv = {} && {} && ri < x1 && rj < y1;",
        inside(0, "ri"),
        inside(1, "rj")
    );
    g.push_str("  const bool own = tx > 0 && ty > 0 && ri < x1 && rj < y1;\n");
    column_prologue(spec, g);
    // The march starts one plane below the chunk where that plane exists (H there is needed
    // by the first plane's E); `t` counts planes from the chunk's first.
    let below = if spec.walled(2) {
        "(k0 > 0 ? 0 : 1)"
    } else {
        "0"
    };
    let _ = writeln!(g, "  const int t0 = -1 + {below};");
    g.push_str("  const int kf = t0 < 0 ? (k0 > 0 ? k0 - 1 : nz - 1) : k0;\n");
    let _ = writeln!(
        g,
        "  {ty} ex_c = hv ? __ldg(ex0 + col + (long long)kf * sz) : zero, ey_c = hv ? __ldg(ey0 + col + (long long)kf * sz) : zero;"
    );
    let _ = writeln!(g, "  {ty} hx_z = zero, hy_z = zero;");
    if l.unroll > 0 {
        let _ = writeln!(g, "  #pragma unroll {}", l.unroll);
    }
    g.push_str("  for (int t = t0; k0 + t < k1; ++t) {\n");
    g.push_str("    const int k = t < 0 ? kf : k0 + t;\n");
    g.push_str("    const long long c = col + (long long)k * sz;\n");
    spec.z_layer(g);
    h_part(spec, g);
    g.push_str("    if (t >= 0) {\n");
    g.push_str("      const int b = t & 1;\n");
    g.push_str("      sh[b][0][ty][tx] = nhx; sh[b][1][ty][tx] = nhy; sh[b][2][ty][tx] = nhz;\n");
    g.push_str("      __syncthreads();\n");
    g.push_str("      if (own) {\n");
    e_part(spec, g);
    g.push_str("      }\n    }\n");
    g.push_str("    hx_z = nhx;\n    hy_z = nhy;\n");
    g.push_str("    ex_c = ex_z;\n    ey_c = ey_z;\n");
    g.push_str("  }\n");
}

/// H at the thread's cell and plane `k` from the old fields (zero outside the grid), written
/// by its owner for the chunk's own planes.
fn h_part(spec: &FdtdSpec, g: &mut String) {
    let ty = spec.ty;
    let _ = writeln!(
        g,
        "    {ty} nhx = zero, nhy = zero, nhz = zero, ex_z = zero, ey_z = zero, ez_c = zero;"
    );
    // The E update's own loads go out with H's, ahead of the barrier, which loads do not
    // cross: one wait for memory per plane instead of two. Its old E is the march's.
    if spec.indexed {
        // Only the index is loaded here; the table is read after the barrier (see `e_part`),
        // so that no thread waits for the index before it.
        g.push_str("    const unsigned int mc = own ? __ldg(medium + c) : 0u;\n");
    } else {
        let _ = writeln!(
            g,
            "    const {ty} a = own ? __ldg(ca + c) : zero, cbc = own ? __ldg(cb + c) : zero;"
        );
    }
    g.push_str("    if (hv) {\n");
    if spec.periodic[2] {
        g.push_str("    const long long cz = col + (long long)(k + 1 < nz ? k + 1 : 0) * sz;\n");
        let _ = writeln!(g, "    ex_z = __ldg(ex0 + cz); ey_z = __ldg(ey0 + cz);");
    } else {
        let vzp = if spec.interior[2] {
            "true"
        } else {
            "k + 1 < nz"
        };
        let _ = writeln!(g, "    const bool vzp = {vzp};");
        let _ = writeln!(
            g,
            "    ex_z = vzp ? __ldg(ex0 + c + sz) : zero; ey_z = vzp ? __ldg(ey0 + c + sz) : zero;"
        );
    }
    g.push_str("    ez_c = __ldg(ez0 + c);\n");
    spec.near(g, "ey_x", "ey0", "xp");
    spec.near(g, "ez_x", "ez0", "xp");
    spec.near(g, "ex_y", "ex0", "yp");
    spec.near(g, "ez_y", "ez0", "yp");
    let psi = Psi {
        read: "psi_ho_{a}{t}[s]",
        write: "psi_hn_{a}{t}[s]",
        coef: "coef_h_",
        guard: Some("own && t >= 0"),
    };
    h_update(spec, g, "", "__ldg({h}0 + c)", &psi);
    g.push_str("    if (own && t >= 0) { hx[c] = nhx; hy[c] = nhy; hz[c] = nhz; }\n");
    g.push_str("    }\n");
}

/// E at an owned cell from the old E, the new H (its own, the −x and −y neighbours' from
/// shared memory, the plane below's from the march) and the coefficients.
fn e_part(spec: &FdtdSpec, g: &mut String) {
    let ty = spec.ty;
    let _ = writeln!(
        g,
        "    const {ty} hx_c = nhx, hy_c = nhy, hz_c = nhz;\n    \
         const {ty} hy_x = sh[b][1][ty][tx - 1], hz_x = sh[b][2][ty][tx - 1];\n    \
         const {ty} hx_y = sh[b][0][ty - 1][tx], hz_y = sh[b][2][ty - 1][tx];"
    );
    if spec.indexed {
        let _ = writeln!(g, "    const {ty} a = media_a[mc], cbc = media_b[mc];");
    }
    let psi = Psi {
        read: "psi_e_{a}{t}[s]",
        write: "psi_e_{a}{t}[s]",
        coef: "coef_e_",
        guard: None,
    };
    e_update(spec, g, "{e}_c", &psi);
    g.push_str("    ex[c] = nex;\n    ey[c] = ney;\n    ez[c] = nez;\n");
}

/// A range of indices per axis.
pub type Box3 = [std::ops::Range<usize>; 3];

/// Where the chunks of planes start along z, at or below plane 0, for `nz` planes, a z CPML
/// of thickness `t`, chunks of `chunk` planes and a march that starts `below` planes under
/// its chunk (1 for one step a pass, 2 for two): with a layer, so that a chunk starts
/// `below` planes above the layer's last plane, and the first chunk, cut at plane 0, holds
/// only the layer and those planes. Chunks laid from plane 0 would mix up to `chunk − 1`
/// core planes into each layer chunk, which then run with the CPML terms.
pub fn z_origin(nz: usize, t: Option<usize>, chunk: usize, below: usize) -> i64 {
    match t {
        Some(t) if t + below < nz => match ((t + below) % chunk) as i64 {
            0 => 0,
            r => r - chunk as i64,
        },
        _ => 0,
    }
}

/// The cells a block reads or computes around its own, per axis: `below` under its first
/// and `above` over its last (one step a pass: 1 and 0; two steps: 2 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Halo {
    /// Cells under the block's first, per axis.
    pub below: i64,
    /// Cells over the block's last, per axis.
    pub above: i64,
}

/// The halo of the one-step pass.
pub const ONE_STEP: Halo = Halo { below: 1, above: 0 };

/// The box of blocks (a range of block indices per axis) whose cells, their `halo`
/// included, lie outside every CPML layer: a kernel generated without the CPML terms
/// (fewer registers, no branches) steps them, and the kernel with them skips them. `None`
/// when the box is empty. `t`: the CPML thickness per axis; `n`: cells; `tile`: bx, by,
/// chunk; `origin`: where the blocks start per axis (zero or below, see [`z_origin`]).
pub fn core_blocks(
    n: [usize; 3],
    t: [Option<usize>; 3],
    tile: [usize; 3],
    origin: [i64; 3],
    halo: Halo,
) -> Option<Box3> {
    let mut r: Box3 = Default::default();
    for a in 0..3 {
        let (w, o) = (tile[a] as i64, origin[a]);
        let blocks = (n[a] as i64 - o).div_euclid(w) + i64::from((n[a] as i64 - o) % w != 0);
        r[a] = match t[a] {
            None => 0..blocks as usize,
            // Block b holds cells o + b·w − below … o + b·w + w − 1 + above: all in
            // [t, n − 1 − t].
            Some(t) => {
                let (t, n) = (t as i64, n[a] as i64);
                if n < t + w + halo.above {
                    return None;
                }
                let lo = (t + halo.below - o + w - 1).div_euclid(w);
                let hi = (n - t - w - halo.above - o).div_euclid(w) + 1;
                lo as usize..hi.max(lo) as usize
            }
        };
        if r[a].is_empty() {
            return None;
        }
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::super::{DrudeCarry, DrudeLoads, FdtdSpec, KernelChoices};
    use super::{core_blocks, fused_step, z_origin, Core, Halo, ONE_STEP};
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

    fn spec(min_blocks: u32) -> FdtdSpec {
        FdtdSpec {
            ty: "float",
            periodic: [false; 3],
            inv: [1.0; 3],
            rate: [0.5; 3],
            dt: 0.5,
            cpml: [Some(6); 3],
            launch: Launch::columns(32, 8, 32),
            min_blocks,
            indexed: false,
            drude: false,
            interior: [false; 3],
            choices: choices(4),
        }
    }

    /// A kernel that skips the core blocks holds one march, with the CPML terms; one that
    /// steps them holds a second march without them, chosen per block; the bound on blocks
    /// per SM reaches `__launch_bounds__`.
    #[test]
    fn core_blocks_are_skipped_or_stepped_without_the_cpml_terms() {
        let skip = fused_step(&spec(0), Core::Skip);
        assert!(skip.contains("if (core) return;"), "{skip}");
        assert_eq!(skip.matches("for (int t = t0;").count(), 1);
        assert!(skip.contains("__launch_bounds__(297)"));
        let here = fused_step(&spec(4), Core::Here);
        assert!(!here.contains("if (core) return;") && here.contains("if (core) {"));
        assert_eq!(here.matches("for (int t = t0;").count(), 2);
        assert!(here.contains("__launch_bounds__(297, 4)"));
        // The CPML terms (the layer tests) only in the second march, after `else`.
        let (plain, layers) = here.split_once("} else {").expect("two marches");
        assert!(!plain.contains("if (in_x)") && layers.contains("if (in_x)"));
    }

    /// An indexed kernel copies the media's table once per block, before either march and
    /// after the skipped blocks' return, loads a byte per owned cell with H's loads and looks
    /// the pair up only after the plane's barrier; it never names the per-cell arrays.
    #[test]
    fn an_indexed_kernel_looks_its_coefficients_up_after_the_barrier() {
        for core in [Core::Skip, Core::Here] {
            let k = fused_step(
                &FdtdSpec {
                    indexed: true,
                    drude: false,
                    ..spec(4)
                },
                core,
            );
            assert!(!k.contains("ca + c") && !k.contains("cb + c"), "{k}");
            assert!(k.contains("const unsigned char* __restrict__ medium"));
            let table = k.find("media_a[q] = __ldg(media + q)").expect("table copy");
            let first_march = k.find("for (int t = t0;").expect("march");
            assert!(table < first_march);
            if core == Core::Skip {
                assert!(k.find("if (core) return;").expect("skip") < table);
            }
            // Per march: the byte load before the plane's barrier, the lookup after it.
            for march in k.split("for (int t = t0;").skip(1) {
                let load = march.find("__ldg(medium + c)").expect("index load");
                let barrier = march.find("__syncthreads();").expect("barrier");
                let lookup = march.find("media_a[mc]").expect("lookup");
                assert!(load < barrier && barrier < lookup, "{march}");
            }
        }
        let plain = fused_step(&spec(4), Core::Skip);
        assert!(plain.contains("__ldg(ca + c)") && !plain.contains("medium"));
    }

    /// The box against a direct test of every block's cells, for the halos of one and two
    /// steps a pass.
    #[test]
    fn the_core_box_holds_exactly_the_blocks_clear_of_the_layers() {
        for halo in [ONE_STEP, Halo { below: 2, above: 1 }] {
            for n in [20usize, 37, 64, 100] {
                for w in [4usize, 8, 32] {
                    for t in [4usize, 5, 10] {
                        core_box_case(halo, n, w, t);
                    }
                }
            }
        }
    }

    fn core_box_case(halo: Halo, n: usize, w: usize, t: usize) {
        let shifted = z_origin(n, Some(t), w, halo.below as usize);
        // A chunk starts `below` planes above the layer.
        assert!(shifted <= 0 && shifted > -(w as i64));
        assert_eq!(
            (t as i64 + halo.below - shifted) % w as i64,
            0,
            "{n} {w} {t}"
        );
        for o in [0, shifted] {
            let (wi, ni, ti) = (w as i64, n as i64, t as i64);
            let blocks = (0..).take_while(|&b| o + b * wi < ni).count();
            // Block b holds cells o + b·w − below … o + b·w + w − 1 + above.
            let direct: Vec<usize> = (0..blocks)
                .filter(|&b| {
                    let first = o + b as i64 * wi;
                    first - halo.below >= ti && first + wi - 1 + halo.above <= ni - 1 - ti
                })
                .collect();
            let got = core_blocks([n; 3], [Some(t), None, None], [w, 1, 1], [o, 0, 0], halo);
            let label = format!("{halo:?} {n} {w} {t} {o}");
            match got {
                Some(r) => {
                    assert_eq!(r[0].clone().collect::<Vec<_>>(), direct, "{label}");
                    assert_eq!(r[1], 0..n, "{label}");
                }
                None => assert!(direct.is_empty(), "{label}"),
            }
        }
    }
}
