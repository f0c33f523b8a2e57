//! The three schedule families and how each is resolved for a case and a device class.

use super::table;
use super::{family, DrudeCarry, DrudeLoads, Launch, Request, ScheduleError, ShellTile, Tile};

family! {
    /// The heat stepper's schedule: the one-step kernel's launch and the multi-step pass
    /// (temporal blocking) with its kernel's layout choices.
    HeatSchedule, HeatChoices, "heat", {
        /// The one-step kernel's launch.
        launch: Launch = "launch",
        /// Steps per pass and tile of the temporal-blocking pass (`off`: single steps).
        pass: Request = "pass",
        /// The 3-D pass gives each thread a column of consecutive rows (`off`: points a
        /// block apart).
        column: bool = "column",
        /// The 3-D column pass addresses its points from fixed offsets, where it applies.
        fixed: bool = "fixed",
        /// A 2-D pass of two points a thread gives each thread two neighbouring x.
        pairs: bool = "pairs",
        /// The pass indexes its points by 32-bit offsets, where the plane allows.
        lean: bool = "lean",
        /// Advances ahead the pass loads its input (1 to 3).
        ahead: u32 = "load-ahead",
        /// Advances one iteration of the pass's march holds (2: written out; other values:
        /// `#pragma unroll` over one).
        unroll: u32 = "unroll",
    }
}

family! {
    /// The wave stepper's schedule: the step's launch (tiles and ring of shared planes
    /// included), the multi-step pass, and the CPML shell kernels' bound and tile.
    WaveSchedule, WaveChoices, "wave", {
        /// The step kernel's launch.
        launch: Launch = "launch",
        /// Steps per pass and tile of the multi-step pass (`off`: single steps).
        pass: Request = "pass",
        /// Blocks per SM the CPML shell kernels must fit (0: the compiler's choice).
        shell_blocks: u32 = "shell-blocks",
        /// The tile of the shell kernels' march-axis slabs.
        shell_tile: ShellTile = "shell-tile",
    }
}

family! {
    /// The FDTD stepper's schedule: the tiles, blocks per SM, launches and streams of the
    /// half-step kernels, the one-pass step and the two-step pass, and their Drude variants.
    FdtdSchedule, FdtdChoices, "fdtd", {
        /// The half-step kernels' tile.
        half_tile: Tile = "half-tile",
        /// Whether the step runs as one pass (else two half-step kernels).
        fused: bool = "fused",
        /// The one-pass step's tile (without its halo threads).
        fused_tile: Tile = "fused-tile",
        /// Blocks per SM the one-pass kernel with CPML terms must fit (0: the compiler's).
        shell_blocks: u32 = "shell-blocks",
        /// With a medium index, whether the blocks clear of the CPML run in the main launch.
        merged_indexed: bool = "merged-indexed",
        /// With two coefficients per cell, the same.
        merged_coefficients: bool = "merged-coefficients",
        /// Whether the one pass reads a medium index per cell where the media fit its table.
        media: bool = "media",
        /// Whether two steps share a pass where the case allows.
        pass: bool = "pass",
        /// The two-step pass's tile (without its halo threads).
        pass_tile: Tile = "pass-tile",
        /// Blocks per SM of the two-step kernel launched over the whole grid (0: compiler's).
        pass_blocks: u32 = "pass-blocks",
        /// Blocks per SM of the core blocks' two-step kernel (0: the compiler's).
        pass_core_blocks: u32 = "pass-core-blocks",
        /// Blocks per SM of the Drude blocks' two-step kernel (0: the compiler's).
        pass_drude_blocks: u32 = "pass-drude-blocks",
        /// Whether the two-step pass steps the core blocks in the main launch.
        pass_merged: bool = "pass-merged",
        /// Whether the one pass lays its chunks from the z layer's edge (else plane 0).
        z_aligned: bool = "z-aligned",
        /// Whether blocks clear of the CPML run a kernel without its terms.
        core: bool = "core",
        /// Whether the core blocks' launch runs on a stream of its own.
        core_stream: bool = "core-stream",
        /// Whether the kernels over blocks clear of the CPML skip the wall checks there.
        interior: bool = "interior",
        /// Whether only the blocks that reach a Drude cell run the Drude terms.
        drude_split: bool = "drude-split",
        /// The order of the two-step pass's Drude loads.
        drude_loads: DrudeLoads = "drude-loads",
        /// What the pass's second step takes over from the first at a Drude cell.
        drude_carry: DrudeCarry = "drude-carry",
        /// Whether the first step loads a plane's Drude media ahead of its first barrier.
        drude_ahead: bool = "drude-ahead",
        /// Whether the Drude blocks' stream has the greatest priority.
        drude_first: bool = "drude-first",
        /// With a CPML, whether the layer blocks that reach a Drude cell get a launch of
        /// their own.
        drude_layers: bool = "drude-layers",
        /// Whether the Drude blocks' launch runs on a stream of its own.
        drude_stream: bool = "drude-stream",
    }
}

/// The most blocks per SM a bound may ask for (32 resident blocks an SM on sm_90).
const MAX_BLOCKS: u32 = 32;

fn value(family: &'static str, key: &str, shown: String, allowed: &str) -> ScheduleError {
    ScheduleError::Value {
        family,
        key: key.into(),
        value: shown,
        allowed: allowed.into(),
    }
}

/// A launch's check: threads a block, planes, vector width.
fn check_launch(family: &'static str, l: &Option<Launch>) -> Result<(), ScheduleError> {
    use super::knob::Knob;
    match l {
        Some(l)
            if l.bx * l.by > 1024
                || l.bx == 0
                || l.by == 0
                || l.chunk == 0
                || ![1, 2, 4].contains(&l.vec) =>
        {
            Err(value(
                family,
                "launch",
                l.show(),
                "1 to 1024 threads a block, at least one plane, vector width 1, 2 or 4",
            ))
        }
        _ => Ok(()),
    }
}

fn check_blocks(family: &'static str, key: &str, b: Option<u32>) -> Result<(), ScheduleError> {
    match b {
        Some(b) if b > MAX_BLOCKS => Err(value(
            family,
            key,
            b.to_string(),
            "0 (the compiler's choice) to 32 blocks an SM",
        )),
        _ => Ok(()),
    }
}

/// A tile whose block, with `halo` threads more along x and y, fits 1024 threads.
fn check_tile(key: &str, t: Option<Tile>, halo: u32) -> Result<(), ScheduleError> {
    use super::knob::Knob;
    match t {
        Some(t) if (t.bx + halo) * (t.by + halo) > 1024 || t.bx * t.by * t.chunk == 0 => {
            Err(value(
                "fdtd",
                key,
                t.show(),
                &format!("a tile of at least one plane whose block, {halo} halo threads more along x and y, holds at most 1024 threads"),
            ))
        }
        _ => Ok(()),
    }
}

impl HeatSchedule {
    /// Refuses values no kernel can run with, saying what is allowed.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        check_launch("heat", &self.launch)?;
        match self.ahead {
            Some(a) if !(1..=3).contains(&a) => {
                Err(value("heat", "load-ahead", a.to_string(), "1, 2 or 3"))
            }
            _ => Ok(()),
        }
    }
}

impl WaveSchedule {
    /// Refuses values no kernel can run with, saying what is allowed.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        check_launch("wave", &self.launch)?;
        check_blocks("wave", "shell-blocks", self.shell_blocks)
    }
}

impl FdtdSchedule {
    /// Refuses values no kernel can run with, saying what is allowed.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        check_tile("half-tile", self.half_tile, 0)?;
        check_tile("fused-tile", self.fused_tile, 1)?;
        check_tile("pass-tile", self.pass_tile, 3)?;
        for (key, b) in [
            ("shell-blocks", self.shell_blocks),
            ("pass-blocks", self.pass_blocks),
            ("pass-core-blocks", self.pass_core_blocks),
            ("pass-drude-blocks", self.pass_drude_blocks),
        ] {
            check_blocks("fdtd", key, b)?;
        }
        Ok(())
    }
}

impl HeatChoices {
    /// The defaults for a heat step of radius `r` on `n` points in `dim` dimensions, values of
    /// `bytes` bytes, on a device of `class`; `blockable`: whether temporal blocking applies
    /// (order 2, κ constant).
    pub(crate) fn choose(
        dim: usize,
        r: usize,
        n: [usize; 3],
        bytes: usize,
        class: Option<&str>,
        blockable: bool,
    ) -> HeatChoices {
        let pass = if blockable {
            match super::super::temporal::plan(dim, n, bytes, class, None) {
                Ok(Some(t)) => Request::Shape(t),
                _ => Request::Off,
            }
        } else {
            Request::Off
        };
        HeatChoices {
            launch: table::heat_launch(dim, r, n, bytes, class),
            pass,
            column: true,
            fixed: true,
            pairs: true,
            lean: dim == 3,
            ahead: if dim == 3 && bytes == 8 { 3 } else { 2 },
            unroll: 2,
        }
    }
}

impl WaveChoices {
    /// The defaults for a wave step of radius `r` on `n` points in `dim` dimensions, values of
    /// `bytes` bytes (no wave default differs between device classes).
    pub(crate) fn choose(dim: usize, r: usize, n: [usize; 3], bytes: usize) -> WaveChoices {
        let (_, no, _) = super::super::march_sizes(n, dim);
        WaveChoices {
            launch: Launch::for_wave(dim, r, n, bytes),
            pass: Request::Off,
            shell_blocks: table::wave_shell_blocks(bytes),
            shell_tile: if no == 1 {
                ShellTile::Tile(256, 1)
            } else {
                ShellTile::Tile(32, 8)
            },
        }
    }
}

impl FdtdChoices {
    /// The defaults for an FDTD step with values of `bytes` bytes, with or without CPML
    /// layers, on a device of `class`.
    pub(crate) fn choose(bytes: usize, cpml: bool, class: Option<&str>) -> FdtdChoices {
        table::fdtd(bytes, cpml, class)
    }
}
