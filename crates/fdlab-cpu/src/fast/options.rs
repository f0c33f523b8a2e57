//! The fast executor's options and the constants they default to.

use crate::par::Par;

/// How the fast executor stores its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stores {
    /// Non-temporal stores when the outputs are much larger than a last-level cache
    /// ([`NT_THRESHOLD_BYTES`]), ordinary stores otherwise.
    #[default]
    Auto,
    /// Ordinary stores: the output lines are read for ownership, then written, and stay in
    /// cache.
    Temporal,
    /// Non-temporal (streaming) stores for whole cache lines on x86-64; ordinary stores on other
    /// targets.
    NonTemporal,
}

/// Which instruction set the inner loops use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Simd {
    /// AVX2 and FMA when the CPU has them (detected at run time), the baseline otherwise; and
    /// where the CPU also has AVX-512F, 512-bit loops for the pair loop (first derivatives
    /// along y and z) and for derivatives along x over whole periodic rows.
    #[default]
    Auto,
    /// As [`Simd::Auto`] without the AVX-512 loops (AVX2 and FMA when the CPU has them).
    Avx2,
    /// The baseline of the build target (SSE2 on x86-64): plain multiply and add.
    Baseline,
}

/// Output size from which [`Stores::Auto`] streams: 64 MiB, twice a large last-level cache.
pub const NT_THRESHOLD_BYTES: usize = 64 << 20;

/// Default of [`Options::min_par_work`].
pub const PAR_MIN_WORK: usize = 1 << 17;

/// Points of a row computed per pass over the taps (the row segment stays in L1).
pub(crate) const X_BLOCK: usize = 1024;

/// Tuning knobs of the fast executor. [`apply`] uses `Options::default()` with its `par`.
///
/// ```
/// use fdlab_core::{Boundary, Field, Grid, Stencil};
/// use fdlab_cpu::fast::{apply_with, Options, Par, Stores};
/// let grid = Grid::unit(&[32, 32, 32]).unwrap();
/// let lap = Stencil::laplacian(&grid, 2).unwrap();
/// let u = Field::<f64>::random(&grid, 1);
/// let mut out = Field::<f64>::zeros(&grid);
/// let opts = Options { par: Par::Seq, stores: Stores::Temporal, ..Options::default() };
/// apply_with(&[lap], Boundary::Periodic, u.view(), &mut [out.view_mut()], &opts).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Threads.
    pub par: Par,
    /// Ordinary or streaming stores.
    pub stores: Stores,
    /// Instruction set of the inner loops.
    pub simd: Simd,
    /// Taps fused in one inner loop, 1 to [`MAX_GROUP`] (1: one pass over the row per tap).
    pub group: usize,
    /// Cache budget in bytes for the input planes a block of rows reads (stencils reaching
    /// along z): rows are processed in y-blocks, z innermost, so that the planes the block
    /// needs stay in this much cache. 0: no blocking (whole planes).
    pub block_bytes: usize,
    /// With [`Par::Rayon`], calls with fewer tap evaluations (points × taps) than this run on
    /// one thread, where splitting would cost more than it saves. 0: always split.
    pub min_par_work: usize,
    /// Software prefetch distance in rows (AVX2 loops): while computing an output row, the
    /// input row that the output row this many rows later reads first (its tap with the
    /// largest z, then y offset) is prefetched into L2 (`prefetcht1`; into L1 in the loop for
    /// derivatives along x), one cache line per line of output. 0: off.
    ///
    /// Into L2, not L1: on a 2-vCPU Zen 4 VM, the 7-point Laplacian f64 at 512³ went from
    /// ~66-69% (`prefetcht0`) to ~81-83% of a paired copy. Likely why (not measured: no
    /// hardware counters there): L1 prefetches hold
    /// the core's few L1 miss buffers, so fewer lines are in flight from memory.
    pub prefetch_rows: usize,
    /// With [`Options::prefetch_rows`] above 0 and runs along y, the prefetch distance is
    /// raised to at least this many bytes of rows (rounded up to whole rows; 0: rows only).
    ///
    /// Why bytes: the time a prefetch needs to arrive is a time, not a number of rows. At one
    /// row ahead, a 384-point f32 row (1.5 KiB) gave memory too little notice: the 7-point
    /// Laplacian f32 at 384³ ran at 65-68% of a paired copy, and at 95-102% with 3-6 KiB ahead
    /// (2-vCPU Zen 4 VM; f64 gained too, see docs/performance.md, "CPU").
    pub prefetch_bytes: usize,
    /// Prefetch distance in rows of the AVX-512 pair loop along y where whole rows one after the
    /// other are one long row (first derivatives along y), of the AVX-512 loop over whole
    /// periodic rows along x (derivatives along x), and in planes of the pair loop's z march
    /// through a ring (first derivatives along z); 0: off. Elsewhere [`Options::prefetch_rows`]
    /// applies.
    pub pair_prefetch_rows: usize,
    /// Most output rows handled by one inner-loop call (consecutive rows along y, or along z
    /// for stencils that reach along z but not y, whose taps need no boundary mapping along
    /// that axis). At least 1.
    pub run_rows: usize,
}

/// Largest number of taps fused in one inner loop.
pub const MAX_GROUP: usize = 8;

impl Default for Options {
    fn default() -> Self {
        Options {
            par: Par::Rayon,
            stores: Stores::Auto,
            simd: Simd::Auto,
            group: MAX_GROUP,
            block_bytes: 512 << 10,
            min_par_work: PAR_MIN_WORK,
            prefetch_rows: 1,
            prefetch_bytes: 8 << 10,
            pair_prefetch_rows: 4,
            run_rows: 32,
        }
    }
}
