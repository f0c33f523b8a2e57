//! How a one- or two-step kernel's blocks cover the grid: the tile, where the blocks start,
//! and the box of blocks clear of the CPML layers with the kernel that steps them.

use super::super::schedule::FdtdChoices;
use super::super::{driver, Gpu};
use crate::error::Result;
use crate::fdtd::Boundary;
use cudarc::driver::{sys, CudaEvent, CudaSlice, CudaStream, LaunchConfig};
use fdlab_cuda::codegen::solver::fdtd::fused::{core_blocks, z_origin, Box3, Halo};
use fdlab_cuda::codegen::solver::Launch;
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
    /// Where the core blocks have a kernel of their own: the streams the launches beside the
    /// main one run on (see [`Sides`]).
    sides: Option<Sides>,
}

/// Streams for the launches beside the main one (the core blocks', then the Drude blocks').
/// The launches of a pass write disjoint cells and read only the old copies, so they may run
/// at once: the core launch's blocks then fill the SMs that the main launch's last, longer
/// layer blocks leave idle (at 384³, 1.2–2.6 points of the copy on the CPML cases on an H200,
/// 0.9–2.3 on an H100).
struct Sides {
    /// Recorded on the main stream before the side launches, which wait for it.
    fork: CudaEvent,
    /// Each lane's stream and the event recorded on it after its launch, which the main
    /// stream waits for.
    lanes: Vec<(Arc<CudaStream>, CudaEvent)>,
}

/// Where blocks of `launch`'s tile with `halo` start per axis over a grid of `n` cells with
/// CPML layers of `thickness` (chunks laid from the z layer's edge where `z_aligned`, else
/// from plane 0), and with layers the box of blocks clear of them.
fn place(
    launch: Launch,
    halo: Halo,
    n: [usize; 3],
    thickness: [Option<usize>; 3],
    z_aligned: bool,
) -> ([i64; 3], Option<Box3>) {
    let tile = [launch.bx, launch.by, launch.chunk].map(|v| v as usize);
    let origin = match z_aligned {
        true => [
            0,
            0,
            z_origin(n[2], thickness[2], tile[2], halo.below as usize),
        ],
        false => [0; 3],
    };
    let layers = thickness.iter().any(Option::is_some);
    let clear = core_blocks(n, thickness, tile, origin, halo).filter(|_| layers);
    (origin, clear)
}

/// Whether the box of blocks `inner` lies within `outer` (an empty one does).
pub(super) fn within(inner: &Box3, outer: &Box3) -> bool {
    inner.iter().any(|r| r.is_empty())
        || inner
            .iter()
            .zip(outer)
            .all(|(i, o)| i.start >= o.start && i.end <= o.end)
}

/// `[x0, x1, y0, y1, z0, z1]` of a box.
pub(super) fn flat(r: &Box3) -> [i32; 6] {
    [
        r[0].start, r[0].end, r[1].start, r[1].end, r[2].start, r[2].end,
    ]
    .map(|v| v as i32)
}

impl Sides {
    fn new(gpu: &Gpu, lanes: usize) -> Result<Self> {
        Ok(Sides {
            fork: event(gpu)?,
            lanes: (0..lanes)
                .map(|_| Self::lane(gpu, false))
                .collect::<Result<_>>()?,
        })
    }

    /// A lane's stream and event; with `first`, a stream of the greatest priority, whose
    /// blocks the GPU starts before those of the other streams that wait.
    fn lane(gpu: &Gpu, first: bool) -> Result<(Arc<CudaStream>, CudaEvent)> {
        let context = gpu.stream.context();
        let stream = match first {
            true => {
                let (_, greatest) = cudarc::driver::result::stream::get_priority_range()
                    .map_err(driver("cuCtxGetStreamPriorityRange"))?;
                context.new_stream_with_priority(greatest)
            }
            false => context.new_stream(),
        }
        .map_err(driver("cuStreamCreate"))?;
        Ok((stream, event(gpu)?))
    }
}

/// An event for ordering streams (no timing).
fn event(gpu: &Gpu) -> Result<CudaEvent> {
    gpu.stream
        .context()
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
        .map_err(driver("cuEventCreate"))
}

impl Blocks {
    /// The blocks of a pass whose blocks hold `launch`'s columns and planes plus `halo`
    /// (`extra` threads per axis) over a grid of `n` cells with CPML layers of `thickness`:
    /// chunks laid as the choices `c` say, and with layers the box of blocks clear of them,
    /// stepped by `core_kernel` where there is one and `c` asks for it.
    #[allow(clippy::too_many_arguments)]
    pub fn lay_out(
        gpu: &Gpu,
        launch: Launch,
        extra: u32,
        halo: Halo,
        n: [usize; 3],
        thickness: [Option<usize>; 3],
        core_kernel: Option<&CudaSource>,
        c: &FdtdChoices,
    ) -> Result<Self> {
        let (origin, clear) = place(launch, halo, n, thickness, c.z_aligned);
        let core = match clear {
            Some(r) if c.core => {
                let kernel = core_kernel.map(|k| gpu.kernel(k)).transpose()?;
                Some((kernel, r))
            }
            _ => None,
        };
        let sides = match core {
            Some((Some(_), _)) if c.core_stream => Some(Sides::new(gpu, 1)?),
            _ => None,
        };
        Ok(Blocks {
            launch,
            extra,
            origin,
            core,
            sides,
        })
    }

    /// Gives the launches beside the main one a further stream of their own, where they have
    /// any (the Drude blocks' launch then runs beside the core blocks' one); with `first`, of
    /// the greatest priority.
    pub fn add_lane(&mut self, gpu: &Gpu, first: bool) -> Result<()> {
        let lane = Sides::lane(gpu, first)?;
        match &mut self.sides {
            Some(s) => s.lanes.push(lane),
            None => {
                self.sides = Some(Sides {
                    fork: event(gpu)?,
                    lanes: vec![lane],
                })
            }
        }
        Ok(())
    }

    /// The streams for the launches beside the main one: streams of their own where there
    /// are any, made to wait for `main`'s work queued so far, else just `main`. Launch `k`
    /// beside the main one goes to `lanes[k]`, or the last lane where there are fewer. Call
    /// it before the main launch (else the side launches wait for that too), and
    /// [`Blocks::join`] after all of them.
    pub fn fork<'a>(&'a self, main: &'a Arc<CudaStream>) -> Result<Vec<&'a Arc<CudaStream>>> {
        let Some(sides) = &self.sides else {
            return Ok(vec![main]);
        };
        sides.fork.record(main).map_err(driver("cuEventRecord"))?;
        sides
            .lanes
            .iter()
            .map(|(stream, _)| {
                stream
                    .wait(&sides.fork)
                    .map_err(driver("cuStreamWaitEvent"))?;
                Ok(stream)
            })
            .collect()
    }

    /// Makes `main`'s later work wait for the launches beside it.
    pub fn join(&self, main: &CudaStream) -> Result<()> {
        let Some(sides) = &self.sides else {
            return Ok(());
        };
        for (stream, join) in &sides.lanes {
            join.record(stream).map_err(driver("cuEventRecord"))?;
            main.wait(join).map_err(driver("cuStreamWaitEvent"))?;
        }
        Ok(())
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
        let (bounds, cfg) = self.over(n, r, None);
        Some((kernel, bounds, cfg))
    }

    /// The box of blocks clear of the CPML layers, where the core blocks have a kernel of
    /// their own.
    pub fn core_box(&self) -> Option<&Box3> {
        match &self.core {
            Some((Some(_), r)) => Some(r),
            _ => None,
        }
    }

    /// A launch over the box `r` of blocks (of the lattice the main launch covers): the box
    /// of their cells as bounds, then the blocks it skips, `skip` (relative to `r`'s first
    /// block), and the shape.
    pub fn over(&self, n: [usize; 3], r: &Box3, skip: Option<&Box3>) -> ([i32; 12], LaunchConfig) {
        let l = self.launch;
        let w = [l.bx, l.by, l.chunk].map(|v| v as usize);
        let o = self.origin;
        let at = |a: usize, b: usize| (o[a] + (b * w[a]) as i64) as usize;
        let cells: Box3 = std::array::from_fn(|a| at(a, r[a].start)..at(a, r[a].end).min(n[a]));
        let c = flat(&cells);
        let k = skip.map_or([0; 6], flat);
        let bounds = std::array::from_fn(|i| if i < 6 { c[i] } else { k[i - 6] });
        let grid = [r[0].len() as u32, r[1].len() as u32, r[2].len() as u32];
        (bounds, self.config(grid))
    }

    /// The blocks of the whole lattice over a grid of `n` cells whose cells, with `halo`,
    /// reach the box `cells`. On a periodic axis (`periodic`) the halo wraps round: where the
    /// box lies within the halo of a grid's end, every block along that axis. A wall's
    /// blocks hold no cell beyond it, so there the blocks near the box alone.
    pub fn reaching(&self, n: [usize; 3], periodic: [bool; 3], halo: Halo, cells: &Box3) -> Box3 {
        let l = self.launch;
        let w = [l.bx, l.by, l.chunk].map(i64::from);
        std::array::from_fn(|a| {
            let (o, w, n) = (self.origin[a], w[a], n[a] as i64);
            let blocks = (n - o + w - 1).div_euclid(w);
            let (lo, hi) = (cells[a].start as i64, cells[a].end as i64);
            if periodic[a] && (lo < halo.above || hi > n - halo.below) {
                return 0..blocks as usize;
            }
            // Block b holds cells o + b·w − below … o + b·w + w − 1 + above.
            let first = -(-(lo - halo.above - w + 1 - o)).div_euclid(w);
            let last = (hi - 1 + halo.below - o).div_euclid(w);
            let first = first.clamp(0, blocks);
            let end = (last + 1).clamp(first, blocks);
            first as usize..end as usize
        })
    }
}

/// Per axis, whether it wraps round.
pub(super) fn periodic(boundary: [Boundary; 3]) -> [bool; 3] {
    boundary.map(|b| !b.has_walls())
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

#[cfg(test)]
mod tests {
    use super::{place, within, Blocks, Box3, Halo, Launch};
    use crate::gpu::schedule::FdtdChoices;
    use fdlab_cuda::codegen::solver::fdtd::pass::TWO_STEPS;

    /// The blocks of a two-step pass with a CPML in values of `bytes` bytes over a grid of `n`
    /// cells with layers of `thickness` (no kernels, no streams), and the box of core blocks.
    fn two_step_blocks(
        bytes: usize,
        n: [usize; 3],
        thickness: [Option<usize>; 3],
    ) -> (Blocks, Option<Box3>) {
        let launch = FdtdChoices::choose(bytes, true, None).pass_tile.launch();
        let (origin, core) = place(launch, TWO_STEPS, n, thickness, true);
        let blocks = Blocks {
            launch,
            extra: 3,
            origin,
            core: None,
            sides: None,
        };
        (blocks, core)
    }

    /// The check cases with a Drude slab between z CPML layers cover both arrangements of a
    /// two-step pass: in the shorter grid the blocks that reach the slab include layer blocks
    /// (which run a launch of their own in `f32`, the main kernel's Drude terms in `f64`), in
    /// the longer one they are all core blocks, in both precisions' tiles.
    #[test]
    fn the_drude_slab_check_cases_reach_layer_blocks_in_one_grid_and_not_the_other() {
        for bytes in [4, 8] {
            for (nz, slab, clear) in [(72, 30..46, false), (110, 48..62, true)] {
                let n = [10, 9, nz];
                let (blocks, core) = two_step_blocks(bytes, n, [None, None, Some(5)]);
                let cells: Box3 = [0..10, 0..9, slab];
                let reach = blocks.reaching(n, [false; 3], TWO_STEPS, &cells);
                let core = core.expect("blocks clear of the layers");
                assert_eq!(within(&reach, &core), clear, "{nz} cells, {bytes} bytes");
                // Core blocks reach the slab too: the pass then has all four launches (the
                // layer blocks', the core blocks', and the Drude blocks' in each).
                let meet = (0..3)
                    .all(|a| reach[a].start.max(core[a].start) < reach[a].end.min(core[a].end));
                assert!(meet, "{nz} cells, {bytes} bytes");
            }
        }
    }

    /// The check cases with CPML layers on x and z (the benchmark's arrangement in small) have
    /// core blocks and, in both precisions' tiles, layer blocks of the x layers alone (x tiles
    /// at the ends, core y and z tiles); in the one with a Drude box the blocks that reach it
    /// are x-layer blocks at one end and core blocks, none at the other end.
    #[test]
    fn the_x_and_z_cpml_check_cases_reach_x_layer_and_core_blocks() {
        for bytes in [4, 8] {
            let n = [80, 11, 50];
            let (blocks, core) = two_step_blocks(bytes, n, [Some(5), None, Some(5)]);
            let core = core.expect("blocks clear of the layers");
            let lattice = blocks.main(n).1.grid_dim.0 as usize;
            assert_eq!((lattice, core[0].clone()), (3, 1..2), "{bytes} bytes");
            assert!(!core[2].is_empty(), "{bytes} bytes");
            let cells: Box3 = [20..40, 0..11, 16..28];
            let reach = blocks.reaching(n, [false; 3], TWO_STEPS, &cells);
            assert_eq!(reach[0], 0..2, "{bytes} bytes");
            let meet = reach[2].start.max(core[2].start) < reach[2].end.min(core[2].end);
            assert!(meet, "{bytes} bytes");
        }
    }

    /// `reaching` against every block tested one by one: the blocks whose cells, halo
    /// included, meet the box; on a periodic axis every block along it where the box comes
    /// within the halo of the grid's ends.
    #[test]
    fn the_blocks_reaching_a_box_are_those_whose_cells_meet_it() {
        let halo = Halo { below: 2, above: 1 };
        let n = [100, 37, 90];
        for (origin, periodic) in [
            ([0, 0, 0], [true; 3]),
            ([0, 0, -7], [true; 3]),
            ([0, 0, 0], [false; 3]),
            ([0, 0, -7], [false, true, false]),
        ] {
            let blocks = Blocks {
                launch: Launch::columns(32, 6, 16),
                extra: 3,
                origin,
                core: None,
                sides: None,
            };
            let w = [32i64, 6, 16];
            for (lo, hi) in [
                (10, 20),
                (31, 33),
                (1, 98),
                (3, 4),
                (0, 5),
                (60, 99),
                (45, 46),
            ] {
                let cells: Box3 = std::array::from_fn(|a| lo.min(n[a])..hi.min(n[a]));
                let got = blocks.reaching(n, periodic, halo, &cells);
                for a in 0..3 {
                    let (c, nn, o) = (&cells[a], n[a] as i64, origin[a]);
                    let count = (nn - o + w[a] - 1) / w[a];
                    let near_end = (c.start as i64) < halo.above || c.end as i64 > nn - halo.below;
                    let want: Vec<usize> = (0..count)
                        .filter(|&b| {
                            let first = o + b * w[a] - halo.below;
                            let last = o + b * w[a] + w[a] - 1 + halo.above;
                            (periodic[a] && near_end)
                                || (first < c.end as i64 && last >= c.start as i64)
                        })
                        .map(|b| b as usize)
                        .collect();
                    let have: Vec<usize> = got[a].clone().collect();
                    assert_eq!(
                        have, want,
                        "axis {a}, cells {c:?}, origin {o}, {periodic:?}"
                    );
                }
            }
        }
    }
}
