//! How a one- or two-step kernel's blocks cover the grid: the tile, where the blocks start,
//! and the box of blocks clear of the CPML layers with the kernel that steps them.

use super::super::fdtd_fused::{core_blocks, z_origin, Box3, Halo};
use super::super::fdtd_sources::{core_wanted, side_stream_wanted, z_aligned_wanted};
use super::super::kernels::Launch;
use super::super::{driver, Gpu};
use crate::Result;
use cudarc::driver::{sys, CudaEvent, CudaSlice, CudaStream, LaunchConfig};
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
    /// Where the core blocks have a kernel of their own: the stream it runs on, beside the
    /// main launch (see [`Side`]).
    side: Option<Side>,
}

/// A second stream for the core blocks' launch. The two launches of a pass write disjoint
/// cells and read only the old copies, so they may run at once: the core launch's blocks
/// then fill the SMs that the main launch's last, longer layer blocks leave idle (at 384³,
/// 1.2–2.6 points of the copy on the CPML cases on an H200, 0.9–2.3 on an H100).
struct Side {
    stream: Arc<CudaStream>,
    /// Recorded on the main stream before the core launch, which waits for it.
    fork: CudaEvent,
    /// Recorded on this stream after the core launch; the main stream waits for it.
    join: CudaEvent,
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
        let side = match core {
            Some((Some(_), _)) if side_stream_wanted() => {
                let ctx = gpu.stream.context();
                let event = || {
                    ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                        .map_err(driver("cuEventCreate"))
                };
                Some(Side {
                    stream: ctx.new_stream().map_err(driver("cuStreamCreate"))?,
                    fork: event()?,
                    join: event()?,
                })
            }
            _ => None,
        };
        Ok(Blocks {
            launch,
            extra,
            origin,
            core,
            side,
        })
    }

    /// The stream for the core blocks' launch: one of its own where there is one, made to
    /// wait for `main`'s work queued so far, else `main`. Call it before the main launch
    /// (else the core launch waits for that too), and [`Blocks::join`] after both.
    pub fn fork<'a>(&'a self, main: &'a Arc<CudaStream>) -> Result<&'a Arc<CudaStream>> {
        let Some(side) = &self.side else {
            return Ok(main);
        };
        side.fork.record(main).map_err(driver("cuEventRecord"))?;
        side.stream
            .wait(&side.fork)
            .map_err(driver("cuStreamWaitEvent"))?;
        Ok(&side.stream)
    }

    /// Makes `main`'s later work wait for the core blocks' launch.
    pub fn join(&self, main: &CudaStream) -> Result<()> {
        let Some(side) = &self.side else {
            return Ok(());
        };
        side.join
            .record(&side.stream)
            .map_err(driver("cuEventRecord"))?;
        main.wait(&side.join).map_err(driver("cuStreamWaitEvent"))
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
