//! The default schedules per device class (`None`: any device; `"h100"`, `"h200"` as
//! fdlab-cuda's `device_class` names them), as data: the only place a default differs by
//! class. docs/schedules.md gives the measurement behind each.

use super::{DrudeCarry, DrudeLoads, FdtdChoices, Tile};
use fdlab_cuda::codegen::solver::shape::Temporal;
use fdlab_cuda::codegen::solver::Launch;

/// A change of the heat step's one-step launch on one device class.
#[derive(Clone, Copy)]
enum HeatChange {
    /// One plane loaded ahead (where the march allows).
    AheadOne,
    /// The march unrolled this many times.
    Unroll(u32),
}

/// The heat step's launch changes per device class and value bytes (3-D only): `f64` loads a
/// plane ahead on an H200, `f32` unrolls its march twice on an H100.
const HEAT_LAUNCH: [(&str, usize, HeatChange); 2] = [
    ("h200", 8, HeatChange::AheadOne),
    ("h100", 4, HeatChange::Unroll(2)),
];

/// The heat step's one-step launch: the model's ([`Launch::new`]) with its class's change.
pub(crate) fn heat_launch(
    dim: usize,
    r: usize,
    n: [usize; 3],
    bytes: usize,
    class: Option<&str>,
) -> Launch {
    let base = Launch::new(dim, r, n, bytes);
    if dim != 3 {
        return base;
    }
    let change = HEAT_LAUNCH
        .iter()
        .find(|(c, b, _)| class == Some(*c) && *b == bytes);
    match change {
        Some((_, _, HeatChange::AheadOne)) => Launch {
            ahead: 1.min(n[2].saturating_sub(r + 1) as u32),
            ..base
        },
        Some((_, _, HeatChange::Unroll(u))) => Launch { unroll: *u, ..base },
        None => base,
    }
}

const fn t(k: u32, sx: u32, sy: u32, p: u32, chunk: u32) -> Temporal {
    Temporal {
        k,
        sx,
        sy,
        p,
        chunk,
    }
}

/// The fastest temporal-blocking shapes measured (`fdlab bench --suite temporal`, 512³ and
/// 8192²): (class, dimensions, value bytes, shape); a class's row comes before the row for
/// any device (`None`), which the others use.
const TEMPORAL: [(Option<&str>, usize, usize, Temporal); 8] = [
    (Some("h200"), 3, 4, t(3, 64, 64, 8, 64)),
    (None, 3, 4, t(3, 64, 32, 8, 64)),
    (Some("h200"), 3, 8, t(3, 64, 32, 4, 64)),
    (None, 3, 8, t(4, 64, 32, 4, 64)),
    (Some("h200"), 2, 4, t(8, 256, 1, 2, 128)),
    (None, 2, 4, t(7, 128, 1, 1, 512)),
    (Some("h200"), 2, 8, t(7, 128, 1, 2, 128)),
    (None, 2, 8, t(7, 128, 1, 1, 64)),
];

/// The measured temporal-blocking shape for `dim` and `bytes` on a device of `class`.
pub(crate) fn temporal(dim: usize, bytes: usize, class: Option<&str>) -> Option<Temporal> {
    TEMPORAL
        .iter()
        .find(|(c, d, b, _)| *d == dim && *b == bytes && (c.is_none() || *c == class))
        .map(|row| row.3)
}

/// Blocks per SM the wave step's CPML shell kernels must fit: eight in `f32`, six in `f64`.
pub(crate) fn wave_shell_blocks(bytes: usize) -> u32 {
    if bytes == 4 {
        8
    } else {
        6
    }
}

const fn tile(bx: u32, by: u32, chunk: u32) -> Tile {
    Tile { bx, by, chunk }
}

/// The FDTD defaults for any device, per value bytes and CPML: (bytes, cpml, choices).
const FDTD: [(usize, bool, FdtdChoices); 4] = [
    (
        4,
        false,
        fdtd_row(4, tile(64, 4, 32), tile(32, 6, 64), 4, 4),
    ),
    (4, true, fdtd_row(4, tile(32, 8, 16), tile(32, 6, 32), 3, 4)),
    (
        8,
        false,
        fdtd_row(8, tile(64, 4, 32), tile(32, 4, 128), 0, 0),
    ),
    (8, true, fdtd_row(8, tile(32, 8, 16), tile(32, 4, 32), 0, 0)),
];

/// One row of [`FDTD`]: the tiles and blocks that differ by bytes and CPML, the rest by bytes.
const fn fdtd_row(bytes: usize, fused: Tile, pass: Tile, blocks: u32, core: u32) -> FdtdChoices {
    let f32 = bytes == 4;
    FdtdChoices {
        half_tile: tile(32, 8, 32),
        fused: true,
        fused_tile: fused,
        shell_blocks: if f32 { 4 } else { 3 },
        merged_indexed: true,
        merged_coefficients: !f32,
        media: true,
        pass: true,
        pass_tile: pass,
        pass_blocks: blocks,
        pass_core_blocks: core,
        pass_drude_blocks: if f32 { 3 } else { core },
        pass_merged: false,
        z_aligned: true,
        core: true,
        core_stream: true,
        interior: true,
        drude_split: true,
        drude_loads: DrudeLoads::MediaFirst,
        drude_carry: if f32 {
            DrudeCarry::Media
        } else {
            DrudeCarry::Nothing
        },
        drude_ahead: f32,
        drude_first: true,
        drude_layers: f32,
        drude_stream: true,
    }
}

/// The FDTD defaults that differ on one device class: `f64` on an H200 marches 64 planes in
/// the one pass without layers and runs the core blocks in a launch of their own.
fn fdtd_class(c: &mut FdtdChoices, bytes: usize, cpml: bool, class: Option<&str>) {
    if class == Some("h200") && bytes == 8 {
        if !cpml {
            c.fused_tile = tile(64, 4, 64);
        }
        c.merged_indexed = false;
        c.merged_coefficients = false;
    }
}

/// The FDTD defaults for values of `bytes` bytes, with or without CPML layers, on `class`.
pub(crate) fn fdtd(bytes: usize, cpml: bool, class: Option<&str>) -> FdtdChoices {
    let bytes = if bytes == 4 { 4 } else { 8 };
    let mut c = FDTD
        .iter()
        .find(|(b, l, _)| *b == bytes && *l == cpml)
        .map_or(FDTD[3].2, |row| row.2);
    fdtd_class(&mut c, bytes, cpml, class);
    c
}
