//! Kernel strategies: how a stencil is mapped onto threads, blocks and memory.

mod conformance;
mod form;
mod parse;
mod supports;
mod table;

pub use parse::StrategyError;
pub(crate) use supports::marches_z;
pub use table::{families, strategies_help, FamilyDoc, OptionDoc, OptionRange, OptionSyntax};

/// How the shared-memory march ([`Strategy::SMarch`]) copies each plane of its tile into the
/// ring of shared-memory slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmCopy {
    /// One 16-byte `cp.async` per thread and piece, `depth` planes in flight without holding
    /// registers. Nsight Compute counted two L2 sector requests per sector.
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
///
/// Its name (`Display`) is what the parser reads back, option by option as [`families`] lists
/// them; anything else is refused with the nearest valid name:
///
/// ```
/// use fdlab_cuda::Strategy;
/// let s: Strategy = "zmarch-32x4-v1-c64-u2-r2".parse().unwrap();
/// assert_eq!(s, Strategy::ZMARCH);
/// assert_eq!(s.to_string(), "zmarch-32x4-v1-c64-u2-r2");
/// let e = "zmarch-32x4-v1-c64-u2-r2-foo".parse::<Strategy>().unwrap_err();
/// assert_eq!(e.nearest(), "zmarch-32x4-v1-c64-u2-r2");
/// ```
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
        /// Laplacian 6 points of the copy bandwidth against its periodic twin.
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
        /// With `accumulate`, name suffix `-uN` (N ≥ 2): N planes per iteration of the march,
        /// written out, so that fewer partial sums move between registers per plane (the
        /// queue's slots change names instead). 1: one plane per iteration.
        unroll: u32,
        /// Name suffix `-cs`: the outputs' vector stores are streaming (`__stcs`, evict-first),
        /// which leaves L2 to the halo rows the neighbouring tiles re-read. Measured on an H100:
        /// +1.3 to +2.3 points for the gradient (three outputs), −2 to −4.5 for the 25-point
        /// Laplacian (one).
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

    /// A short stable name, used in JSON and on the command line: what `Display` prints.
    pub fn name(&self) -> String {
        self.to_string()
    }
}
