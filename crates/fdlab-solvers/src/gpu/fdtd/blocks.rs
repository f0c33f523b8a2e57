//! How a one- or two-step kernel's blocks cover the grid: the tile, where the blocks start,
//! and the box of blocks clear of the CPML layers with the kernel that steps them.

use super::super::fdtd_fused::Box3;
use super::super::kernels::Launch;
use cudarc::driver::LaunchConfig;
use fdlab_cuda::Kernel;
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
