//! How a one- or two-step kernel's blocks cover the grid: the tile, where the blocks start,
//! and the box of blocks clear of the CPML layers with the kernel that steps them.

use super::super::fdtd_fused::{core_blocks, z_origin, Box3, Halo};
use super::super::fdtd_sources::{core_wanted, z_aligned_wanted};
use super::super::kernels::Launch;
use super::super::Gpu;
use crate::Result;
use cudarc::driver::{CudaSlice, LaunchConfig};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// The blocks of a pass over the grid.
pub(super) struct Blocks {
    /// The owned columns and planes of a block.
    pub launch: Launch,
    /// Threads a block holds beyond its owned columns, per axis (1 for one step, 3 for two).
    pub extra: u32,
    /// Where the blocks start per axis (zero or below: see `fdtd_fused::z_origin`).
    pub origin: [i64; 3],
    /// With CPML layers, the box of blocks clear of them, and the kernel without their terms
    /// that steps those blocks when the main kernel skips them (`None`: it steps them itself).
    pub core: Option<(Option<Arc<Kernel>>, Box3)>,
}

/// `[x0, x1, y0, y1, z0, z1]` of a box.
fn flat(r: &Box3) -> [i32; 6] {
    [
        r[0].start, r[0].end, r[1].start, r[1].end, r[2].start, r[2].end,
    ]
    .map(|v| v as i32)
}

impl Blocks {
    /// The blocks of a pass whose blocks hold `launch`'s columns and planes plus `halo`
    /// (`extra` threads per axis) over a grid of `n` cells with CPML layers of `thickness`:
    /// chunks laid from the z layer's edge (unless `FDLAB_FDTD_ZALIGN=0`), and with layers the
    /// box of blocks clear of them, stepped by `core_kernel` where there is one.
    pub fn lay_out(
        gpu: &Gpu,
        launch: Launch,
        extra: u32,
        halo: Halo,
        n: [usize; 3],
        thickness: [Option<usize>; 3],
        core_kernel: Option<&CudaSource>,
    ) -> Result<Self> {
        let tile = [launch.bx, launch.by, launch.chunk].map(|v| v as usize);
        let origin = match z_aligned_wanted() {
            true => [
                0,
                0,
                z_origin(n[2], thickness[2], tile[2], halo.below as usize),
            ],
            false => [0; 3],
        };
        let layers = thickness.iter().any(Option::is_some);
        let core = match core_blocks(n, thickness, tile, origin, halo) {
            Some(r) if layers && core_wanted() => {
                let kernel = core_kernel.map(|k| gpu.kernel(k)).transpose()?;
                Some((kernel, r))
            }
            _ => None,
        };
        Ok(Blocks {
            launch,
            extra,
            origin,
            core,
        })
    }

    fn config(&self, grid: [u32; 3]) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (grid[0], grid[1], grid[2]),
            block_dim: (self.launch.bx + self.extra, self.launch.by + self.extra, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The main launch over a grid of `n` cells: its bounds (the whole grid from the blocks'
    /// origin, then the box of blocks it skips or steps without the CPML terms) and shape.
    pub fn main(&self, n: [usize; 3]) -> ([i32; 12], LaunchConfig) {
        let o = self.origin;
        let whole = std::array::from_fn::<i32, 6, _>(|i| match i % 2 {
            0 => o[i / 2] as i32,
            _ => n[i / 2] as i32,
        });
        let skip = self.core.as_ref().map_or([0; 6], |(_, r)| flat(r));
        let bounds = std::array::from_fn(|i| if i < 6 { whole[i] } else { skip[i - 6] });
        let from = |a: usize| (n[a] as i64 - o[a]) as usize;
        (
            bounds,
            self.config(self.launch.grid(from(0), from(1), from(2))),
        )
    }

    /// The launch of the core blocks' own kernel, when they have one: the kernel, the box of
    /// their cells as bounds (nothing skipped) and the shape.
    pub fn core(&self, n: [usize; 3]) -> Option<(&Arc<Kernel>, [i32; 12], LaunchConfig)> {
        let (Some(kernel), r) = self.core.as_ref()? else {
            return None;
        };
        let l = self.launch;
        let w = [l.bx, l.by, l.chunk].map(|v| v as usize);
        let o = self.origin;
        let at = |a: usize, b: usize| (o[a] + (b * w[a]) as i64) as usize;
        let cells: Box3 = std::array::from_fn(|a| at(a, r[a].start)..at(a, r[a].end).min(n[a]));
        let c = flat(&cells);
        let bounds = std::array::from_fn(|i| if i < 6 { c[i] } else { 0 });
        let grid = [r[0].len() as u32, r[1].len() as u32, r[2].len() as u32];
        Some((kernel, bounds, self.config(grid)))
    }
}

/// Second copies, zeroed, of pairs of arrays of the given lengths (the ψ slabs a pass writes
/// while its blocks still read the first).
pub(super) fn second_copies<T: CudaScalar>(
    gpu: &Gpu,
    lengths: impl Iterator<Item = usize>,
) -> Result<Vec<[CudaSlice<T>; 2]>> {
    lengths
        .map(|n| Ok([gpu.zeros(n)?, gpu.zeros(n)?]))
        .collect()
}
