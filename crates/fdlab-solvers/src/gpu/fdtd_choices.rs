//! The FDTD stepper's launch shapes and switches: the tile, chunk and blocks per SM of each
//! kernel, which kernels a case runs, and when two steps share a pass. The measurements behind
//! each default are beside it; the `FDLAB_FDTD_*` variables override them, for measuring.

use super::kernels::Launch;
use super::{env_count, env_switch};
use crate::fdtd::FdtdSetup;

/// The half-step kernels' shape: 32 × 8 columns per block, 32 planes each, one point per
/// thread (`FDLAB_SOLVER_LAUNCH` overrides the threads and planes, for measuring).
pub(super) fn launch() -> Launch {
    Launch::from_env().map_or(Launch::columns(32, 8, 32), |l| {
        Launch::columns(l.bx, l.by, l.chunk)
    })
}

/// The one-pass step's tile for values of `bytes` bytes, with or without CPML layers:
/// 64 × 4 columns per block (plus the halo threads) over 32 planes without layers, 32 × 8
/// columns over 16 planes with them. With the medium index, on an H100 at 384³ (two runs
/// each, one machine start): PEC box `f64` 98.0–98.8% of the copy for 64 × 4, 128 × 2 and
/// 32 × 4 columns against 92.8–93.3% for 32 × 8, `f32` 90.2–90.8% for 64 × 4 against 88.3%;
/// CPML box 16 planes against 32: `f32` 67.5–67.6% against 65.7–66.2%, `f64` 76.0–76.1%
/// against 75.5–75.8% (64 × 4, 32 × 4 and 32 × 16 columns lost 0.3–38 points). On an H200
/// (`class`, as fdlab-cuda's `device_class`): `f64` without layers over 64 planes, 85.8%
/// against 83.2% (per-cell coefficients). `FDLAB_SOLVER_LAUNCH` overrides it as for the
/// half-step kernels.
pub(super) fn fused_launch(bytes: usize, cpml: bool, class: Option<&str>) -> Launch {
    let fits = |l: &Launch| (l.bx + 1) * (l.by + 1) <= 1024;
    let h200 = class == Some("h200");
    let (bx, by, chunk) = match (bytes, cpml) {
        (_, true) => (32, 8, 16),
        (8, false) if h200 => (64, 4, 64),
        (_, false) => (64, 4, 32),
    };
    // The override's shape only: one point per thread, whatever its vector width says.
    Launch::from_env()
        .filter(fits)
        .map(|l| Launch::columns(l.bx, l.by, l.chunk))
        .unwrap_or(Launch::columns(bx, by, chunk))
}

/// Blocks per SM the one-pass kernel with the CPML terms must fit, for values of `bytes`
/// bytes: four in `f32`, three in `f64` (`FDLAB_FDTD_SHELL_BLOCKS` overrides it, 0 for the
/// compiler's choice). Left to itself the compiler fits three `f32` blocks (56 registers);
/// on an H100 at 384³ with a 10-cell CPML, four ran the step at 63.2% of the copy against
/// 61.4% (five: 50.5%, spilling), and three `f64` blocks 67.8% against 65.6% (four: 61.9%).
pub(super) fn shell_blocks(bytes: usize) -> u32 {
    env_count("FDLAB_FDTD_SHELL_BLOCKS", if bytes == 4 { 4 } else { 3 })
}

/// Whether the blocks clear of the CPML layers run in the same launch as the others (a
/// branch per block between two copies of the march) or in a launch of their own, for
/// values of `bytes` bytes, the coefficients `indexed` or not (`FDLAB_FDTD_MERGED=1` or `0`
/// chooses, for measuring). With two coefficients per cell, on an H100 at 384³ with a
/// 10-cell CPML, in two runs each: `f64` 69.5% of the copy in one launch against 67.3–67.5%
/// in two; `f32` 62.1% against 63.0–63.2%. On an H200 (`class`) two launches in both: `f64`
/// 62.9% against 62.4% (32-plane chunks), 65.2% against 62.6% (16). With a medium index the
/// `f32` core kernel on its own needs only 32 registers and runs slower (H200: 49.8–50.1%
/// in two launches against 57.3–57.6% in one).
pub(super) fn merged_wanted(bytes: usize, class: Option<&str>, indexed: bool) -> bool {
    let one_launch = if bytes == 4 {
        indexed
    } else {
        class != Some("h200")
    };
    env_switch("FDLAB_FDTD_MERGED", one_launch)
}

/// The two-step pass's tile for values of `bytes` bytes, with or without CPML layers, and the
/// blocks per SM its kernels must fit (0: the compiler's choice): the kernel with the CPML
/// terms, then the kernel without them. On an H100 at 384³ (one machine start, % of the
/// copy, T_eff per step): `f32` with a CPML 32 × 6 columns over 32 planes, three blocks,
/// 86.6% (32 × 8: 69.0, two blocks 78.7; 32 × 12: 83.9; 32 × 4 over 64 planes: 82.2); `f32`
/// PEC box 32 × 6 over 64 planes 121.8% (32 × 8: 110.5–113.1, 32 × 4: 111.0–113.5); `f64`
/// with a CPML 32 × 4 over 32 planes 100.3% (over 64: 97.5; 32 × 8: 96.7), PEC box 32 × 4
/// over 128 planes 145.5% (over 64: 145.3; 32 × 8: 141.2–141.6). Taller tiles (32 × 16, 64 ×
/// 8) lost 15–45 points. Then, on another start each, two rounds: the `f32` kernel without
/// the CPML terms bounded to four blocks, H100 PEC box 137.3–137.7% against 128.4–129.5%
/// (compiler's choice), CPML box (its core blocks) 98.5–98.6% against 95.2–95.3% (three);
/// H200 108.3–109.4% against 99.7–100.1%, 75.5–75.7% against 72.0–72.4% (five or more
/// blocks: 47–50%); `f64` keeps the compiler's choice (four blocks: 100–139% against
/// 104–155% on the H100, 77–109% against 82–128% on the H200).
/// `FDLAB_FDTD_PASS_LAUNCH=bx,by,chunk`, `FDLAB_FDTD_PASS_BLOCKS` (the kernel launched over
/// the whole grid) and `FDLAB_FDTD_PASS_CORE_BLOCKS` (the core blocks' own kernel) override
/// them, for measuring.
pub(super) fn pass_launch(bytes: usize, cpml: bool) -> (Launch, u32, u32) {
    let fits = |l: &Launch| (l.bx + 3) * (l.by + 3) <= 1024;
    let (by, chunk, layers, plain) = match (bytes, cpml) {
        (4, true) => (6, 32, 3, 4),
        (4, false) => (6, 64, 4, 4),
        (_, true) => (4, 32, 0, 0),
        (_, false) => (4, 128, 0, 0),
    };
    let launch = std::env::var("FDLAB_FDTD_PASS_LAUNCH")
        .ok()
        .and_then(|v| {
            let v: Vec<u32> = v
                .split(',')
                .map(|x| x.trim().parse().ok())
                .collect::<Option<_>>()?;
            match v[..] {
                [bx, by, chunk] if bx > 0 && by > 0 && chunk > 0 => {
                    Some(Launch::columns(bx, by, chunk))
                }
                _ => None,
            }
        })
        .filter(fits)
        .unwrap_or(Launch::columns(32, by, chunk));
    // The kernel over the whole grid has the CPML terms where the case has a CPML.
    let whole = if cpml { layers } else { plain };
    (
        launch,
        env_count("FDLAB_FDTD_PASS_BLOCKS", whole),
        env_count("FDLAB_FDTD_PASS_CORE_BLOCKS", plain),
    )
}

/// Whether the two-step pass steps the blocks clear of the CPML layers in the same launch
/// as the others (`FDLAB_FDTD_PASS_MERGED=1`) or in a launch of their own (the default: on an
/// H100 at 384³ the kernel with both marches needs the registers of the larger and lost,
/// `f32` 56.2–78.8% of the copy against 66.4–86.6%, `f64` 56.4–86.9% against 76.0–100.3%).
pub(super) fn pass_merged_wanted() -> bool {
    env_switch("FDLAB_FDTD_PASS_MERGED", false)
}

/// Point sources and probes a two-step pass applies itself at most: each costs every cell a
/// comparison.
const PASS_POINTS: usize = 16;

/// Whether `s` has Drude media (a PEC box holds none).
pub(super) fn has_drude(s: &FdtdSetup) -> bool {
    s.boxes.iter().any(|b| b.drude.is_some() && !b.pec)
}

/// Why `s` runs one step a pass (`None`: two steps a pass suit it). Lorentz and Debye media,
/// monitors and plane waves act between the steps with kernels of their own (the pass
/// advances Drude currents itself);
/// `FDLAB_FDTD_PASS=0` asks for single steps.
pub(super) fn single_steps_because(s: &FdtdSetup) -> Option<&'static str> {
    let points = s.sources.len() + s.hard_sources.len() + s.probes.len();
    if !env_switch("FDLAB_FDTD_PASS", true) {
        Some("FDLAB_FDTD_PASS=0")
    } else if !s.plane_waves.is_empty() {
        Some("plane waves")
    } else if s
        .boxes
        .iter()
        .any(|b| (b.lorentz.is_some() || b.debye.is_some()) && !b.pec)
    {
        Some("Lorentz or Debye media")
    } else if !(s.monitors.is_empty() && s.fluxes.is_empty()) {
        Some("DFT monitors or flux planes")
    } else if points > PASS_POINTS {
        Some("more than 16 point sources and probes")
    } else {
        None
    }
}

/// Whether the one-pass step's chunks of planes are laid from the z layer's edge
/// ([`super::fdtd_fused::z_origin`]; the default) or from plane 0 (`FDLAB_FDTD_ZALIGN=0`, for
/// measuring).
pub(super) fn z_aligned_wanted() -> bool {
    env_switch("FDLAB_FDTD_ZALIGN", true)
}

/// Whether blocks clear of the CPML layers run a kernel without their terms (the default), or
/// the kernel with them steps every cell (`FDLAB_FDTD_CORE=0`, for measuring).
pub(super) fn core_wanted() -> bool {
    env_switch("FDLAB_FDTD_CORE", true)
}

/// Whether the core blocks' own launch runs on a stream of its own, beside the main launch
/// (the default), or after it on the same stream (`FDLAB_FDTD_CORE_STREAM=0`, for measuring).
pub(super) fn side_stream_wanted() -> bool {
    env_switch("FDLAB_FDTD_CORE_STREAM", true)
}

/// Whether, with Drude media, only the two-step pass's blocks that reach a Drude cell run
/// the kernel with their terms (the default), or every block (`FDLAB_FDTD_DRUDE_SPLIT=0`, for
/// measuring).
pub(super) fn drude_split_wanted() -> bool {
    env_switch("FDLAB_FDTD_DRUDE_SPLIT", true)
}

/// In which order the two-step pass loads a cell's Drude media bytes and currents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DrudeLoads {
    /// Each component's medium, then its current where the cell is a Drude cell, in turn.
    InTurn,
    /// The three media and the three currents (whether or not the cell is a Drude cell: the
    /// box holds them either way) before the first is used.
    AllFirst,
    /// The three media, then the currents of the Drude cells' components, before the first
    /// is used.
    MediaFirst,
}

/// The order of the two-step pass's Drude loads: [`DrudeLoads::MediaFirst`]. At 384³ on an
/// H200, two rounds, % of the copy, in turn / all first / media first: the PEC box with a Drude
/// sphere `f32` 95.7, 94.7 / 92.9, 93.5 / 98.2, 97.8; `f64` 112.2, 112.4 / 114.6, 114.2 /
/// 115.2, 114.3; with the CPML `f32` 70.7, 70.1 / 69.9, 69.4 / 70.7, 71.0; `f64` 79.3, 78.7 /
/// 80.3, 79.5 / 80.9, 80.6 (all first costs the `f32` kernel, held to 48 registers, spills,
/// and reads the currents of the box's other cells too). `FDLAB_FDTD_DRUDE_LOADS=0`, `1` or
/// `2` chooses in turn, all first or media first, for measuring.
pub(super) fn drude_loads() -> DrudeLoads {
    match std::env::var("FDLAB_FDTD_DRUDE_LOADS").as_deref() {
        Ok("0") => DrudeLoads::InTurn,
        Ok("1") => DrudeLoads::AllFirst,
        _ => DrudeLoads::MediaFirst,
    }
}

/// What the second step of a two-step pass takes over from the first at a Drude cell: the
/// owner's first step found the cell's media bytes and computed its current `J¹` one plane
/// earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DrudeCarry {
    /// Nothing: the second step loads the media bytes and `J¹` back from memory (two round
    /// trips, the second waiting for the first).
    Nothing,
    /// The media bytes, packed in one register; the second step loads `J¹` (one round trip).
    Media,
    /// The media bytes and `J¹`, in registers.
    MediaAndCurrents,
}

/// What the second step takes over from the first at a Drude cell, for values of `bytes`
/// bytes: the media in `f32`, nothing in `f64`. At 384³ on an H200 (% of the copy, two rounds),
/// with the first step's media loaded ahead ([`drude_ahead_wanted`]) and the Drude blocks'
/// kernel at three blocks an SM ([`pass_drude_blocks`]), the CPML box with a Drude sphere `f32`
/// ran at 73.0–73.2% with the media carried and 72.9–73.2% with the currents too, against
/// 70.7–71.7% as before (carrying either alone: 72.6%; held to four blocks, where the registers
/// spill, 67.4–70.8%), the PEC box with the sphere at 99.0–99.3% and 99.7–100.1% against
/// 97.3–98.2%; `f64` lost (79.0% and 60.5% against 80.6%). `FDLAB_FDTD_DRUDE_CARRY=0`, `1` or
/// `2` chooses nothing, the media, or the media and the currents, for measuring.
pub(super) fn drude_carry(bytes: usize) -> DrudeCarry {
    match std::env::var("FDLAB_FDTD_DRUDE_CARRY").as_deref() {
        Ok("0") => DrudeCarry::Nothing,
        Ok("1") => DrudeCarry::Media,
        Ok("2") => DrudeCarry::MediaAndCurrents,
        _ if bytes == 4 => DrudeCarry::Media,
        _ => DrudeCarry::Nothing,
    }
}

/// Whether the first step of a two-step pass loads a plane's Drude media bytes with H¹'s
/// loads, ahead of the plane's first barrier, or where E¹ uses them, for values of `bytes`
/// bytes: ahead in `f32` (see [`drude_carry`]), where used in `f64`.
/// `FDLAB_FDTD_DRUDE_AHEAD=1` or `0` chooses, for measuring.
pub(super) fn drude_ahead_wanted(bytes: usize) -> bool {
    env_switch("FDLAB_FDTD_DRUDE_AHEAD", bytes == 4)
}

/// Blocks per SM the two-step kernel of the blocks that reach a Drude cell must fit, for values
/// of `bytes` bytes, given the core blocks' `core_blocks`: three in `f32` (64 registers: with
/// the media carried, four spill; see [`drude_carry`]), the core blocks' in `f64`.
/// `FDLAB_FDTD_PASS_DRUDE_BLOCKS=N` overrides it, 0 for the compiler's choice.
pub(super) fn pass_drude_blocks(bytes: usize, core_blocks: u32) -> u32 {
    env_count(
        "FDLAB_FDTD_PASS_DRUDE_BLOCKS",
        if bytes == 4 { 3 } else { core_blocks },
    )
}

/// Whether the Drude blocks' stream has the greatest priority, so that the GPU starts their
/// longer blocks before the others' (the default), or the priority of the others
/// (`FDLAB_FDTD_DRUDE_FIRST=0`, for measuring).
pub(super) fn drude_first_wanted() -> bool {
    env_switch("FDLAB_FDTD_DRUDE_FIRST", true)
}

/// Whether, with a CPML and Drude media, the layer blocks that reach a Drude cell run in a
/// launch of their own with the kernel that has both terms, so that the main launch's kernel
/// goes without the Drude terms, or the main kernel keeps them. The default is the former for
/// values of 4 `bytes`, the latter for 8: at 384³ with a Drude sphere reaching a layer, `f32`
/// gained 0.8–2.1 points of the copy on an H100 and 0.7–1.1 on an H200, `f64` lost 0.3–1.7
/// and 0.6 (its kernels hold more registers, so the terms cost the main kernel less than
/// a fourth launch costs the pass). `FDLAB_FDTD_DRUDE_LAYERS=0` or `1` chooses, for measuring.
pub(super) fn drude_layers_wanted(bytes: usize) -> bool {
    env_switch("FDLAB_FDTD_DRUDE_LAYERS", bytes == 4)
}

/// Whether the Drude blocks' launch of a two-step pass runs on a stream of its own beside the
/// others (the default), or after the core blocks' launch on theirs (`FDLAB_FDTD_DRUDE_STREAM=0`,
/// for measuring).
pub(super) fn drude_stream_wanted() -> bool {
    env_switch("FDLAB_FDTD_DRUDE_STREAM", true)
}

/// Whether the one pass reads a medium index per cell (the default, where the case's media
/// fit its table) or two coefficients (`FDLAB_FDTD_MEDIA=0`, for measuring).
pub(super) fn media_wanted() -> bool {
    env_switch("FDLAB_FDTD_MEDIA", true)
}

/// Whether the step runs as one pass (the default) or as two half-step kernels
/// (`FDLAB_FDTD_FUSED=0`, for measuring).
pub(super) fn fused_wanted() -> bool {
    env_switch("FDLAB_FDTD_FUSED", true)
}

#[cfg(test)]
mod tests {
    use super::single_steps_because;
    use crate::gpu::fdtd_example as example;

    /// Cases with only walls, media (Drude ones included), sources and probes run two steps a
    /// pass; Lorentz and Debye media, monitors and plane waves, and too many points, keep one
    /// step a pass, each with its reason.
    #[test]
    fn the_pass_runs_where_nothing_acts_between_the_steps() {
        for two in [
            "fdtd-cavity.toml",
            "fdtd-dipole-cpml.toml",
            "fdtd-dipole-sphere.toml",
        ] {
            assert_eq!(single_steps_because(&example(two)), None, "{two}");
        }
        let mut sphere = example("fdtd-dipole-sphere.toml");
        sphere.boxes[0].lorentz = Some(crate::fdtd::Lorentz {
            delta_eps: 1.0,
            resonance_frequency: 2.0,
            damping: 0.1,
        });
        assert_eq!(
            single_steps_because(&sphere),
            Some("Lorentz or Debye media")
        );
        let drude_slab = example("fdtd-drude-slab.toml");
        assert_eq!(
            single_steps_because(&drude_slab),
            Some("DFT monitors or flux planes")
        );
        let slab = example("fdtd-plane-wave-sphere.toml");
        assert_eq!(single_steps_because(&slab), Some("plane waves"));
        let mut cavity = example("fdtd-cavity.toml");
        let probe = cavity.probes[0];
        cavity.probes = vec![probe; 17 - cavity.sources.len()];
        assert!(single_steps_because(&cavity).is_some_and(|r| r.contains("16")));
        cavity.probes.pop();
        assert_eq!(single_steps_because(&cavity), None);
    }
}
