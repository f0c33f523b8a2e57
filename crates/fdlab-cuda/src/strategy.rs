//! Kernel strategies: how a stencil is mapped onto threads, blocks and memory.

use fdlab_core::{Boundary, Error as CoreError, Precision, Stencil};
use std::fmt;

/// How the shared-memory march ([`Strategy::SMarch`]) copies each plane of its tile into the
/// ring of shared-memory slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmCopy {
    /// One 16-byte `cp.async` per thread and piece, `depth` planes in flight without holding
    /// registers. ncu counted two L2 sector requests per sector (bench/NOTES.md, session 4).
    Async,
    /// Warp-coalesced 16-byte `__ldg` into registers, then shared stores; N (1 or 2) planes
    /// of loads held in registers per thread.
    Registers(u32),
    /// Tensor-memory-accelerator bulk copies (`cp.async.bulk`, sm_90): one request per
    /// contiguous piece of a row, issued by one warp, completing on a per-slot `mbarrier`;
    /// whole sectors like [`SmCopy::Registers`], `depth` planes in flight like
    /// [`SmCopy::Async`].
    Bulk,
}

/// Where a pointwise kernel reads its input from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadPath {
    /// Plain global loads.
    Global,
    /// `__ldg`: the read-only data cache.
    ReadOnly,
    /// A texture object over the linear input buffer.
    Texture,
}

/// How stencil weights reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Coefficients {
    /// Compile-time literals in the generated source (the compiler folds them into the FMAs).
    #[default]
    Immediate,
    /// A `__constant__` array filled before launch, as NVIDIA's published kernels do.
    Constant,
}

/// A kernel strategy. Every strategy loops over its tiles, so any grid size works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// One point per thread, a 3-D block, plain global loads: the fall-back and the baseline.
    Naive {
        /// Threads per block along x, y, z.
        block: [u32; 3],
    },
    /// As [`Strategy::Naive`], reading through `__ldg`.
    ReadOnly {
        /// Threads per block along x, y, z.
        block: [u32; 3],
    },
    /// As [`Strategy::Naive`], reading through a texture object.
    Texture {
        /// Threads per block along x, y, z.
        block: [u32; 3],
    },
    /// An xy tile with its halo in shared memory; z neighbours read from global memory.
    SharedTile {
        /// Tile width (threads along x).
        bx: u32,
        /// Tile height (threads along y).
        by: u32,
    },
    /// NVIDIA's pencils for a stencil along one axis: a tile of `lines` pencils of `length`
    /// points plus halo in shared memory; block `threads_along × threads_across` (x first for
    /// an x stencil, across-x first otherwise), several points per thread when the block is
    /// smaller than the tile.
    Pencil {
        /// Points along the stencil axis per tile.
        length: u32,
        /// Pencils (lines) per tile.
        lines: u32,
        /// Threads along the stencil axis.
        threads_along: u32,
        /// Threads across.
        threads_across: u32,
        /// Sliding register window (name suffix `-w`): each thread computes a run of
        /// `length / threads_along` consecutive points along the axis, reading one new value
        /// from shared memory per point; block `threads_across × threads_along` for every axis.
        window: bool,
    },
    /// 2.5-D marching along the last axis the stencil uses, that axis's neighbours in a
    /// register queue, the others through the read-only cache as aligned vectors of `vec`
    /// x points per thread (needs `nx` to be a multiple of `vec`).
    ZMarch {
        /// Threads along x.
        bx: u32,
        /// Threads along the other axis.
        by: u32,
        /// x points per thread (1, 2, or 4 for f32).
        vec: u32,
        /// Planes per block along the marching axis.
        chunk: u32,
        /// Streaming (evict-first) stores.
        streaming: bool,
        /// Planes marched per loop iteration, their loads issued together.
        unroll: u32,
        /// Consecutive rows of the other axis per thread (neighbours across rows reused from
        /// registers).
        rows: u32,
    },
    /// 2.5-D marching through shared memory: each plane of an x × y tile and its halo is
    /// copied with 16-byte `cp.async` into a ring of slots, `depth` planes ahead of the plane
    /// being computed; every neighbour is read from shared memory (one point per thread along
    /// x, `rows` rows per thread). Needs `nx` to be a multiple of 16 bytes of elements;
    /// periodic and Dirichlet boundaries.
    SMarch {
        /// Threads (tile points) along x; a multiple of 4.
        bx: u32,
        /// Threads along the other axis.
        by: u32,
        /// Rows per thread.
        rows: u32,
        /// Planes per block along the marching axis.
        chunk: u32,
        /// Planes of copies in flight (1 to 8).
        depth: u32,
        /// x points per thread (1, 2 or 4; at most 16 bytes).
        vec: u32,
        /// How planes reach the ring (name suffix: none, `-l`/`-lN`, `-b`).
        copy: SmCopy,
        /// Name suffix `-e`: the output sectors that an interior-only output writes in part
        /// (a row's edge points belong to the caller) are read a plane ahead, so that L2
        /// holds them whole when the partial stores land. Otherwise the memory reads each to
        /// merge it at write-back, inside the write stream: on the H100 that cost the 7-point
        /// Laplacian 6 points against its periodic twin (bench/NOTES.md, sessions 11–12).
        /// The reads cost some tiles more than they save (the 256 × 4 ones, 12 points on some
        /// H100s, a gain on another), so the tuner tries both.
        edge_reads: bool,
    },
    /// 2.5-D marching with the march-axis neighbours in a register queue and one plane of
    /// the tile (with its halo) in shared memory, filled from the queues and by coalesced
    /// halo loads one plane ahead (see the `qmarch` module). Needs `nx` to be a multiple of
    /// 16 bytes of elements and every off-plane tap on the march column; periodic and
    /// Dirichlet boundaries.
    QMarch {
        /// Threads along x.
        bx: u32,
        /// Threads along the other axis.
        by: u32,
        /// Rows per thread.
        rows: u32,
        /// Planes per block along the march.
        chunk: u32,
        /// x points per thread (1, 2 or 4; at most 16 bytes).
        vec: u32,
        /// 0: planes reach the slot through registers (as described above). N ≥ 1 (name
        /// suffix `-tN`): every plane of the tile, halo included, is one TMA tensor copy
        /// (`cp.async.bulk.tensor`, sm_90) into a ring of shared slots, N planes in flight
        /// beyond the queue's front, no registers held for them; Dirichlet boundaries only
        /// (the copy fills points outside the grid with zeros, which no computed point reads).
        tma: u32,
        /// With `tma`, name suffix `-tNa`: each arriving plane adds its taps to the pending
        /// outputs (a queue of partial sums instead of a queue of values), so its slot is free
        /// as soon as it is read: a ring of 1 + N slots instead of reach + 1 + N.
        accumulate: bool,
        /// With `tma` and `accumulate`, name suffix `-wNa` instead of `-tNa`: each slot holds
        /// the tile's interior with its other-axis halo rows, and its x halo columns apart, so
        /// that every piece is one tensor copy that wraps on its own: periodic images work
        /// (tiles cut by a periodic grid's edge fall back to 1-D bulk copies of row pieces).
        split: bool,
        /// Name suffix `-cs`: the outputs' vector stores are streaming (`__stcs`, evict-first),
        /// which leaves L2 to the halo rows the neighbouring tiles re-read. The H100
        /// (bench/NOTES.md, session 10): +1.3 to +2.3 points for the gradient (three outputs),
        /// −2 to −4.5 for the 25-point Laplacian (one).
        streaming: bool,
    },
    /// AMD's first optimisation: several consecutive z points per thread, loads issued in
    /// ascending address order.
    PointsPerThread {
        /// Threads per block along x, y, z.
        block: [u32; 3],
        /// Consecutive z points per thread.
        points: u32,
    },
}

impl Strategy {
    /// Default naive kernel: 32×4×2 threads.
    pub const NAIVE: Strategy = Strategy::Naive { block: [32, 4, 2] };
    /// Default read-only kernel.
    pub const READ_ONLY: Strategy = Strategy::ReadOnly { block: [32, 4, 2] };
    /// Default texture kernel.
    pub const TEXTURE: Strategy = Strategy::Texture { block: [32, 4, 2] };
    /// Default shared tile: 32×8.
    pub const SHARED: Strategy = Strategy::SharedTile { bx: 32, by: 8 };
    /// NVIDIA's small pencils: 64 points × 4 pencils, one point per thread.
    pub const PENCIL_SMALL: Strategy = Strategy::Pencil {
        length: 64,
        lines: 4,
        threads_along: 64,
        threads_across: 4,
        window: false,
    };
    /// NVIDIA's long pencils: 64 points × 32 pencils, block 32×8 (8 points per thread).
    pub const PENCIL_LONG: Strategy = Strategy::Pencil {
        length: 64,
        lines: 32,
        threads_along: 8,
        threads_across: 32,
        window: false,
    };
    /// [`Strategy::PENCIL_LONG`] with the sliding register window: block 32×8, each thread a
    /// run of 8 consecutive points of one pencil.
    pub const PENCIL_LONG_WINDOW: Strategy = Strategy::Pencil {
        length: 64,
        lines: 32,
        threads_along: 8,
        threads_across: 32,
        window: true,
    };
    /// AMD's baseline: one point per thread, block 256×1×1.
    pub const AMD_BASELINE: Strategy = Strategy::Naive { block: [256, 1, 1] };
    /// AMD's several points per thread (4 along z), block 256×1×1.
    pub const AMD_PPT: Strategy = Strategy::PointsPerThread {
        block: [256, 1, 1],
        points: 4,
    };

    /// Default 2.5-D marching kernel: 32×4 threads, scalar, 64 planes per block.
    pub const ZMARCH: Strategy = Strategy::ZMarch {
        bx: 32,
        by: 4,
        vec: 1,
        chunk: 64,
        streaming: false,
        unroll: 2,
        rows: 2,
    };

    /// Default shared-memory marching kernel: 64×4 threads, 2 rows each, 4 planes in flight.
    pub const SMARCH: Strategy = Strategy::SMarch {
        bx: 64,
        by: 4,
        rows: 2,
        chunk: 64,
        depth: 4,
        vec: 1,
        copy: SmCopy::Async,
        edge_reads: false,
    };

    /// The strategies the conformance suite checks.
    pub fn conformance_set() -> Vec<Strategy> {
        vec![
            Strategy::NAIVE,
            Strategy::READ_ONLY,
            Strategy::TEXTURE,
            Strategy::SHARED,
            Strategy::PENCIL_SMALL,
            Strategy::PENCIL_LONG,
            Strategy::AMD_BASELINE,
            Strategy::AMD_PPT,
            Strategy::ZMARCH,
            Strategy::ZMarch {
                bx: 8,
                by: 3,
                vec: 2,
                chunk: 5,
                streaming: true,
                unroll: 3,
                rows: 3,
            },
            Strategy::ZMarch {
                bx: 16,
                by: 2,
                vec: 4,
                chunk: 7,
                streaming: false,
                unroll: 4,
                rows: 1,
            },
            // Warp-wide rows (bx = 32): side vectors by shuffle.
            Strategy::ZMarch {
                bx: 32,
                by: 2,
                vec: 4,
                chunk: 7,
                streaming: false,
                unroll: 2,
                rows: 4,
            },
            Strategy::ZMarch {
                bx: 32,
                by: 3,
                vec: 2,
                chunk: 9,
                streaming: true,
                unroll: 4,
                rows: 2,
            },
            Strategy::SMARCH,
            // Odd tiles, short chunks and deep rings: ring wrap-around and tile edges.
            Strategy::SMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                depth: 3,
                vec: 1,
                copy: SmCopy::Async,
                edge_reads: false,
            },
            // Vector points: windows of whole vectors, partial vectors at Dirichlet edges.
            Strategy::SMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 5,
                depth: 2,
                vec: 2,
                copy: SmCopy::Async,
                edge_reads: false,
            },
            Strategy::SMarch {
                bx: 16,
                by: 2,
                rows: 3,
                chunk: 6,
                depth: 3,
                vec: 4,
                copy: SmCopy::Async,
                edge_reads: false,
            },
            Strategy::SMarch {
                bx: 32,
                by: 2,
                rows: 1,
                chunk: 7,
                depth: 8,
                vec: 1,
                copy: SmCopy::Async,
                edge_reads: false,
            },
            // Staged copies (through registers): odd tile, one plane of ring beyond the
            // window (the slot refilled last in each iteration), vectors at Dirichlet edges.
            Strategy::SMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                depth: 1,
                vec: 1,
                copy: SmCopy::Registers(1),
                edge_reads: false,
            },
            Strategy::SMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 5,
                depth: 2,
                vec: 2,
                copy: SmCopy::Registers(1),
                edge_reads: false,
            },
            // Edge sectors read ahead (-e) with every way of copying planes: odd tiles put
            // the grid's x edges at every position within a sector and in tiles of their
            // own; chunks of two planes (the chunk's first plane read before its loop).
            Strategy::SMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 5,
                depth: 1,
                vec: 2,
                copy: SmCopy::Registers(1),
                edge_reads: true,
            },
            Strategy::SMarch {
                bx: 4,
                by: 2,
                rows: 3,
                chunk: 2,
                depth: 2,
                vec: 4,
                copy: SmCopy::Registers(2),
                edge_reads: true,
            },
            Strategy::SMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                depth: 3,
                vec: 1,
                copy: SmCopy::Async,
                edge_reads: true,
            },
            Strategy::SMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 5,
                depth: 1,
                vec: 2,
                copy: SmCopy::Bulk,
                edge_reads: true,
            },
            // Two planes of loads in registers: the stage shift and the early loads.
            Strategy::SMarch {
                bx: 16,
                by: 2,
                rows: 2,
                chunk: 7,
                depth: 2,
                vec: 2,
                copy: SmCopy::Registers(2),
                edge_reads: false,
            },
            // Bulk copies: an odd tile (rows split over lanes, several pieces per row where a
            // periodic image wraps), a block of fewer than 32 threads (partial issuing warp),
            // one plane beyond the window, and vectors.
            Strategy::SMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                depth: 3,
                vec: 1,
                copy: SmCopy::Bulk,
                edge_reads: false,
            },
            Strategy::SMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 5,
                depth: 1,
                vec: 2,
                copy: SmCopy::Bulk,
                edge_reads: false,
            },
            Strategy::SMarch {
                bx: 32,
                by: 4,
                rows: 2,
                chunk: 7,
                depth: 4,
                vec: 4,
                copy: SmCopy::Bulk,
                edge_reads: false,
            },
            // Queue marches: an odd tile and rows (halo tables over several granules per
            // thread, tiles cut by the grid's edge), short chunks (prologue each few planes),
            // vectors cut by Dirichlet edges, scalar points.
            Strategy::QMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                vec: 1,
                tma: 0,
                accumulate: false,
                split: false,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 6,
                vec: 2,
                tma: 0,
                accumulate: false,
                split: false,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 16,
                by: 4,
                rows: 2,
                chunk: 7,
                vec: 4,
                tma: 0,
                accumulate: false,
                split: false,
                streaming: true,
            },
            // TMA tensor copies (Dirichlet cases only): a ring of 2 + reach slots with an
            // odd tile and short chunks, and a deep ring with vectors.
            Strategy::QMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                vec: 1,
                tma: 1,
                accumulate: false,
                split: false,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 6,
                vec: 2,
                tma: 3,
                accumulate: false,
                split: false,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 12,
                by: 3,
                rows: 3,
                chunk: 5,
                vec: 1,
                tma: 2,
                accumulate: true,
                split: false,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 6,
                vec: 2,
                tma: 1,
                accumulate: true,
                split: false,
                streaming: false,
            },
            // Split slots (periodic too): an odd tile height and rows with scalar points,
            // short chunks; pairs with a deep ring; quads with a one-plane ring and streaming
            // stores. 32 floats or
            // 16 doubles wide, so odd grids get tiles cut by their edge (the bulk fall-back).
            Strategy::QMarch {
                bx: 32,
                by: 3,
                rows: 3,
                chunk: 5,
                vec: 1,
                tma: 2,
                accumulate: true,
                split: true,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 16,
                by: 4,
                rows: 2,
                chunk: 7,
                vec: 2,
                tma: 3,
                accumulate: true,
                split: true,
                streaming: false,
            },
            Strategy::QMarch {
                bx: 8,
                by: 3,
                rows: 2,
                chunk: 6,
                vec: 4,
                tma: 1,
                accumulate: true,
                split: true,
                streaming: true,
            },
            // Odd tile sizes catch tiling arithmetic that only works for powers of two.
            Strategy::SharedTile { bx: 24, by: 5 },
            // 34 loads per thread: three load batches, the last one partial.
            Strategy::Pencil {
                length: 128,
                lines: 4,
                threads_along: 8,
                threads_across: 2,
                window: false,
            },
            Strategy::Pencil {
                length: 40,
                lines: 6,
                threads_along: 8,
                threads_across: 3,
                window: false,
            },
            Strategy::PENCIL_LONG_WINDOW,
            // Windows: odd tiles and runs (several pencils per thread, a tile longer than
            // small grids' lines, runs of 5 and 16 points, a single-thread run).
            Strategy::Pencil {
                length: 40,
                lines: 6,
                threads_along: 8,
                threads_across: 3,
                window: true,
            },
            Strategy::Pencil {
                length: 128,
                lines: 4,
                threads_along: 8,
                threads_across: 2,
                window: true,
            },
            Strategy::Pencil {
                length: 24,
                lines: 10,
                threads_along: 1,
                threads_across: 5,
                window: true,
            },
        ]
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        match *self {
            Strategy::Naive { block }
            | Strategy::ReadOnly { block }
            | Strategy::Texture { block }
            | Strategy::PointsPerThread { block, .. } => block.iter().product(),
            Strategy::SharedTile { bx, by }
            | Strategy::ZMarch { bx, by, .. }
            | Strategy::SMarch { bx, by, .. }
            | Strategy::QMarch { bx, by, .. } => bx * by,
            Strategy::Pencil {
                threads_along,
                threads_across,
                ..
            } => threads_along * threads_across,
        }
    }

    /// Whether this strategy can run `stencils`; the error says why not.
    pub fn supports(&self, stencils: &[Stencil]) -> Result<(), String> {
        if stencils.is_empty() {
            return Err("no stencil".into());
        }
        let t = self.threads();
        if t == 0 || t > 1024 {
            return Err(format!("{t} threads per block; CUDA allows 1 to 1024"));
        }
        match *self {
            Strategy::Pencil {
                length,
                lines,
                threads_along,
                threads_across,
                ..
            } => {
                if stencils.len() != 1 {
                    return Err("pencils apply one stencil at a time".into());
                }
                if stencils[0].single_axis().is_none() {
                    return Err("pencils need a stencil along one axis".into());
                }
                if length % threads_along != 0 || lines % threads_across != 0 {
                    return Err(format!(
                        "tile {length}×{lines} is not a multiple of the block \
                         {threads_along}×{threads_across}"
                    ));
                }
                Ok(())
            }
            Strategy::ZMarch {
                vec,
                chunk,
                unroll,
                rows,
                ..
            } if !matches!(vec, 1 | 2 | 4)
                || chunk == 0
                || !(1..=8).contains(&unroll)
                || !(1..=8).contains(&rows) =>
            {
                Err(format!(
                    "vector width {vec} (use 1, 2 or 4), chunk {chunk} (use >= 1), unroll \
                     {unroll} or rows {rows} (use 1 to 8)"
                ))
            }
            Strategy::SMarch {
                bx,
                rows,
                chunk,
                depth,
                vec,
                copy,
                ..
            } if !bx.is_multiple_of(4)
                || matches!(copy, SmCopy::Registers(n) if !(1..=2).contains(&n))
                || chunk == 0
                || !(1..=8).contains(&rows)
                || !(1..=8).contains(&depth)
                || !matches!(vec, 1 | 2 | 4) =>
            {
                Err(format!(
                    "tile width {bx} (use a multiple of 4), chunk {chunk} (use >= 1), rows \
                     {rows} or depth {depth} (use 1 to 8), vector {vec} (use 1, 2 or 4), \
                     register stages {copy:?} (use 1 or 2)"
                ))
            }
            Strategy::QMarch {
                rows,
                chunk,
                vec,
                tma,
                accumulate,
                split,
                ..
            } if chunk == 0
                || !(1..=8).contains(&rows)
                || !matches!(vec, 1 | 2 | 4)
                || tma > 8
                || (accumulate && tma == 0)
                || (split && !accumulate) =>
            {
                Err(format!(
                    "chunk {chunk} (use >= 1), rows {rows} (use 1 to 8), vector {vec} (use 1, \
                     2 or 4) or TMA depth {tma} (use 0 to 8; accumulating needs 1 or more; split \
                     slots, -wNa, need the partial-sum queue)"
                ))
            }
            Strategy::QMarch { split: true, .. } if crate::qmarch::has_corners(stencils) => Err(
                "split slots (-wNa) hold no halo corners, and a tap here reads one; use \
                     -tNa or smarch"
                    .into(),
            ),
            Strategy::QMarch { .. } => match crate::qmarch::unsupported(stencils) {
                Some(why) => Err(why),
                None => Ok(()),
            },
            Strategy::PointsPerThread { points: 0, .. } => {
                Err("points per thread must be at least 1".into())
            }
            _ => Ok(()),
        }
    }

    /// [`Strategy::supports`], plus what depends on the boundary and the scalar type.
    pub fn supports_spec(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        precision: Precision,
    ) -> Result<(), String> {
        self.supports(stencils)?;
        match *self {
            Strategy::ZMarch { vec: 4, .. } if precision == Precision::F64 => {
                Err("4 doubles per thread would be a 32-byte load; use vec 1 or 2 for f64".into())
            }
            Strategy::SMarch { vec: 4, .. } if precision == Precision::F64 => {
                Err("4 doubles per thread would be a 32-byte vector; use vec 1 or 2".into())
            }
            Strategy::QMarch { bx, vec, .. }
                if vec as usize * precision.size() > 16
                    || !(bx * vec).is_multiple_of(16 / precision.size() as u32) =>
            {
                Err(format!(
                    "{vec} x points per thread over {bx} threads: the vector must fit 16 bytes \
                     and the tile width be a multiple of 16 bytes"
                ))
            }
            Strategy::QMarch { .. } if boundary == Boundary::Neumann => {
                Err("Neumann's mirror images are not 16-byte loads; use zmarch or shared".into())
            }
            Strategy::QMarch {
                bx,
                by,
                rows,
                vec,
                tma: 1..,
                split,
                ..
            } if tma_box_too_large(stencils, precision, bx * vec, by * rows, split) => {
                Err(format!(
                    "a TMA copy moves at most 256 points per axis, and a {}×{} tile with this \
                 stencil's halo is larger; use a smaller tile",
                    bx * vec,
                    by * rows
                ))
            }
            Strategy::QMarch {
                bx,
                vec,
                split: true,
                ..
            } if !(bx * vec * precision.size() as u32).is_multiple_of(128) => Err(format!(
                "split slots (-wNa) need tiles of a multiple of 128 bytes along x ({} points \
                 of {} bytes here): use a multiple of {} points",
                bx * vec,
                precision.size(),
                128 / precision.size()
            )),
            Strategy::QMarch {
                tma: 1..,
                split: false,
                ..
            } if boundary != Boundary::Dirichlet => Err(
                "TMA tensor copies fill points outside the grid with zeros, not periodic images; \
                 use -t only with Dirichlet boundaries (-wNa wraps its pieces)"
                    .into(),
            ),
            Strategy::SMarch { .. } if boundary == Boundary::Neumann => {
                Err("Neumann's mirror images are not 16-byte copies; use zmarch or shared".into())
            }
            _ => Ok(()),
        }
    }

    /// A short stable name, used in JSON and on the command line.
    pub fn name(&self) -> String {
        self.to_string()
    }
}

/// Whether a TMA box — a `tx × ty` tile of the queue march with the halo of `stencils` (the x
/// halo in whole 16-byte granules) — exceeds the 256 points per axis a tensor copy allows.
/// Whether a tensor copy of the tile would exceed 256 points along an axis: the whole slot
/// (tile and halo in one box) or, with split slots, the largest piece (the tile's width, its
/// height with the halo rows copied apart).
fn tma_box_too_large(
    stencils: &[Stencil],
    precision: Precision,
    tx: u32,
    ty: u32,
    split: bool,
) -> bool {
    if split {
        return tx > 256 || ty > 256;
    }
    let mut r = [0u32; 3];
    for s in stencils {
        for (a, &ra) in s.radius().iter().enumerate() {
            r[a] = r[a].max(ra as u32);
        }
    }
    let vl = 16 / precision.size() as u32;
    let across = if crate::qmarch::marches_z(stencils) {
        1
    } else {
        2
    };
    tx + 2 * r[0].div_ceil(vl) * vl > 256 || ty + 2 * r[across] > 256
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |b: [u32; 3]| format!("{}x{}x{}", b[0], b[1], b[2]);
        match *self {
            Strategy::Naive { block } => write!(f, "naive-{}", b(block)),
            Strategy::ReadOnly { block } => write!(f, "ldg-{}", b(block)),
            Strategy::Texture { block } => write!(f, "texture-{}", b(block)),
            Strategy::SharedTile { bx, by } => write!(f, "shared-{bx}x{by}"),
            Strategy::Pencil {
                length,
                lines,
                threads_along,
                threads_across,
                window,
            } => write!(
                f,
                "pencil-{length}x{lines}-t{threads_along}x{threads_across}{}",
                if window { "-w" } else { "" }
            ),
            Strategy::PointsPerThread { block, points } => {
                write!(f, "ppt{points}-{}", b(block))
            }
            Strategy::QMarch {
                bx,
                by,
                rows,
                chunk,
                vec,
                tma,
                accumulate,
                split,
                streaming,
            } => {
                write!(f, "qmarch-{bx}x{by}-r{rows}-c{chunk}-v{vec}")?;
                if tma > 0 {
                    let kind = if split { 'w' } else { 't' };
                    write!(f, "-{kind}{tma}{}", if accumulate { "a" } else { "" })?;
                }
                if streaming {
                    f.write_str("-cs")?;
                }
                Ok(())
            }
            Strategy::SMarch {
                bx,
                by,
                rows,
                chunk,
                depth,
                vec,
                copy,
                edge_reads,
            } => {
                write!(f, "smarch-{bx}x{by}-r{rows}-c{chunk}-p{depth}")?;
                if vec != 1 {
                    write!(f, "-v{vec}")?;
                }
                match copy {
                    SmCopy::Async => {}
                    SmCopy::Registers(1) => write!(f, "-l")?,
                    SmCopy::Registers(n) => write!(f, "-l{n}")?,
                    SmCopy::Bulk => write!(f, "-b")?,
                }
                if edge_reads {
                    f.write_str("-e")?;
                }
                Ok(())
            }
            Strategy::ZMarch {
                bx,
                by,
                vec,
                chunk,
                streaming,
                unroll,
                rows,
            } => write!(
                f,
                "zmarch-{bx}x{by}-v{vec}-c{chunk}-u{unroll}-r{rows}{}",
                if streaming { "-cs" } else { "" }
            ),
        }
    }
}

fn parse_dims<const N: usize>(s: &str) -> Option<[u32; N]> {
    let v: Vec<u32> = s
        .split('x')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

impl std::str::FromStr for Strategy {
    type Err = CoreError;
    /// Parses the names [`Strategy`]'s `Display` writes, and the short aliases `naive`, `ldg`,
    /// `texture`, `shared`, `pencil-small`, `pencil-long`, `amd`, `amd-ppt`.
    fn from_str(s: &str) -> Result<Self, CoreError> {
        let parsed = match s {
            "naive" => Some(Strategy::NAIVE),
            "ldg" | "readonly" => Some(Strategy::READ_ONLY),
            "texture" => Some(Strategy::TEXTURE),
            "shared" => Some(Strategy::SHARED),
            "pencil-small" => Some(Strategy::PENCIL_SMALL),
            "pencil-long" => Some(Strategy::PENCIL_LONG),
            "pencil-long-w" => Some(Strategy::PENCIL_LONG_WINDOW),
            "amd" => Some(Strategy::AMD_BASELINE),
            "amd-ppt" => Some(Strategy::AMD_PPT),
            "zmarch" => Some(Strategy::ZMARCH),
            "smarch" => Some(Strategy::SMARCH),
            _ => {
                let (head, tail) = s.split_once('-').unwrap_or((s, ""));
                match head {
                    "naive" => parse_dims(tail).map(|block| Strategy::Naive { block }),
                    "ldg" => parse_dims(tail).map(|block| Strategy::ReadOnly { block }),
                    "texture" => parse_dims(tail).map(|block| Strategy::Texture { block }),
                    "shared" => {
                        parse_dims::<2>(tail).map(|[bx, by]| Strategy::SharedTile { bx, by })
                    }
                    "pencil" => tail.split_once("-t").and_then(|(tile, thr)| {
                        let [length, lines] = parse_dims::<2>(tile)?;
                        let (thr, window) = match thr.strip_suffix("-w") {
                            Some(t) => (t, true),
                            None => (thr, false),
                        };
                        let [threads_along, threads_across] = parse_dims::<2>(thr)?;
                        Some(Strategy::Pencil {
                            length,
                            lines,
                            threads_along,
                            threads_across,
                            window,
                        })
                    }),
                    "zmarch" => {
                        let parts: Vec<&str> = tail.split('-').collect();
                        let dims = parts.first().and_then(|d| parse_dims::<2>(d));
                        let vec = parts.get(1).and_then(|v| v.strip_prefix('v')?.parse().ok());
                        let chunk = parts.get(2).and_then(|c| c.strip_prefix('c')?.parse().ok());
                        let unroll = parts.get(3).and_then(|u| u.strip_prefix('u')?.parse().ok());
                        let rows = parts.get(4).and_then(|r| r.strip_prefix('r')?.parse().ok());
                        let streaming = parts.get(5) == Some(&"cs");
                        match (dims, vec, chunk, unroll, rows) {
                            (Some([bx, by]), Some(vec), Some(chunk), Some(unroll), Some(rows)) => {
                                Some(Strategy::ZMarch {
                                    bx,
                                    by,
                                    vec,
                                    chunk,
                                    streaming,
                                    unroll,
                                    rows,
                                })
                            }
                            _ => None,
                        }
                    }
                    "smarch" => {
                        let mut parts: Vec<&str> = tail.split('-').collect();
                        let edge_reads = parts.len() > 4 && parts.last() == Some(&"e");
                        if edge_reads {
                            parts.pop();
                        }
                        let copy = match parts.last().copied() {
                            Some("b") => SmCopy::Bulk,
                            Some("l") => SmCopy::Registers(1),
                            Some(l) if l.starts_with('l') => {
                                SmCopy::Registers(l[1..].parse().unwrap_or(u32::MAX))
                            }
                            _ => SmCopy::Async,
                        };
                        if copy != SmCopy::Async {
                            parts.pop();
                        }
                        let num = |i: usize, pre: char| -> Option<u32> {
                            parts.get(i)?.strip_prefix(pre)?.parse().ok()
                        };
                        let vec = if parts.len() == 5 {
                            num(4, 'v')
                        } else {
                            Some(1)
                        };
                        match (
                            parts.first().and_then(|d| parse_dims::<2>(d)),
                            num(1, 'r'),
                            num(2, 'c'),
                            num(3, 'p'),
                            vec,
                        ) {
                            (Some([bx, by]), Some(rows), Some(chunk), Some(depth), Some(vec))
                                if parts.len() <= 5 =>
                            {
                                Some(Strategy::SMarch {
                                    bx,
                                    by,
                                    rows,
                                    chunk,
                                    depth,
                                    vec,
                                    copy,
                                    edge_reads,
                                })
                            }
                            _ => None,
                        }
                    }
                    "qmarch" => {
                        let mut parts: Vec<&str> = tail.split('-').collect();
                        let streaming = parts.len() > 4 && parts.last() == Some(&"cs");
                        if streaming {
                            parts.pop();
                        }
                        let num = |i: usize, pre: char| -> Option<u32> {
                            parts.get(i)?.strip_prefix(pre)?.parse().ok()
                        };
                        match (
                            parts.first().and_then(|d| parse_dims::<2>(d)),
                            num(1, 'r'),
                            num(2, 'c'),
                            num(3, 'v'),
                        ) {
                            (Some([bx, by]), Some(rows), Some(chunk), Some(vec))
                                if parts.len() == 4 || parts.len() == 5 =>
                            {
                                let suffix = parts.get(4);
                                let split = suffix.is_some_and(|t| t.starts_with('w'));
                                let t = suffix
                                    .and_then(|t| t.strip_prefix('t').or(t.strip_prefix('w')));
                                let (t, accumulate) = match t.map(|t| (t.strip_suffix('a'), t)) {
                                    Some((Some(n), _)) => (Some(n), true),
                                    Some((None, n)) => (Some(n), false),
                                    None => (None, false),
                                };
                                let tma = match t {
                                    Some(n) => n.parse().ok().filter(|&n: &u32| n > 0),
                                    None if parts.len() == 4 => Some(0),
                                    None => None,
                                };
                                tma.map(|tma| Strategy::QMarch {
                                    bx,
                                    by,
                                    rows,
                                    chunk,
                                    vec,
                                    tma,
                                    accumulate,
                                    split,
                                    streaming,
                                })
                            }
                            _ => None,
                        }
                    }
                    h if h.starts_with("ppt") => h[3..].parse().ok().and_then(|points| {
                        parse_dims(tail).map(|block| Strategy::PointsPerThread { block, points })
                    }),
                    _ => None,
                }
            }
        };
        parsed.ok_or_else(|| CoreError::Unknown {
            kind: "strategy",
            name: s.into(),
            valid: [
                "naive",
                "ldg",
                "texture",
                "shared",
                "pencil-small",
                "pencil-long",
                "pencil-long-w",
                "amd",
                "amd-ppt",
                "naive-BXxBYxBZ",
                "shared-BXxBY",
                "pencil-LxP-tAxC[-w]",
                "pptN-BXxBYxBZ",
                "zmarch-BXxBY-vV-cC-uU-rR[-cs]",
                "smarch-BXxBY-rR-cC-pP[-vV][-l|-lN|-b][-e]",
                "qmarch-BXxBY-rR-cC-vV[-tN|-tNa|-wNa][-cs]",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        })
    }
}
