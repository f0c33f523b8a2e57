//! Temporal blocking for the GPU heat step: `k` steps of `v = u + Δt κ L u` (order 2,
//! constant κ) fused into one pass over the grid, so that the grid goes through device memory
//! once per `k` steps instead of once per step.
//!
//! # Design (streaming, as AN5D)
//!
//! A block owns a tile of the plane across the march (an `sx`-point strip of x in 2-D, an
//! `sx × sy` tile of xy in 3-D, the halo included) and marches along the last axis (y in
//! 2-D, z in 3-D) over a chunk of planes. It keeps `k` time levels: level 0 is the input,
//! level `j` the field after `j` steps. When plane `t` of level 0 arrives, level `j` computes
//! plane `t − j` from level `j − 1`'s planes `t − j − 1 … t − j + 1`; level `k` is written to
//! global memory. Each thread owns `p` points of the tile and computes every level at them,
//! so the march-axis neighbours of a level are the thread's own registers (two planes per
//! level, the third just computed); only the in-plane neighbours need other threads' values,
//! through shared memory, which holds each level's last two planes (the plane's parity picks
//! the buffer: one level reads plane `t − j` while the level below writes `t − j + 1`, so one
//! `__syncthreads()` per plane of advance is enough). The input planes are loaded two (3-D
//! `f64`: three) advances ahead, so that their latency hides behind the levels' work and the
//! barriers.
//!
//! In 3-D a thread's points are a column of `p` consecutive rows at one x, so the y
//! neighbours inside the column are its own registers too: per level, `2p + 2` shared loads
//! for `p` points instead of `4p`. The march is written out two advances per iteration, so
//! that the parity of every plane, and with it every shared address, is a constant. The pass
//! is limited inside the SM (instruction issue in `f32`, shared-memory bandwidth in `f64`),
//! and both cut its work per point: 3-D `f32` on an H100 from 171% to 202% of the copy.
//!
//! Each level loses one point of validity per side in the plane: a tile's output is
//! `(sx − 2k) × (sy − 2k)` and neighbouring tiles overlap by `2k` points (redundant compute,
//! no redundant writes). Each chunk starts `k` planes early and ends `k` planes late (its
//! levels' warm-up and drain). Points outside the grid are zero at every level when the
//! boundary is zero-outside (exactly what the one-step kernel sees each step) and periodic
//! images otherwise (loads wrap).
//!
//! The update sums its terms in the one-step kernel's order (`lap = w0·c`, then the x pair,
//! the middle-axis pair and the march pair, then `c + Δtκ·lap`), so a pass equals `k` single
//! steps within rounding (bit-equal where the compiler contracts both alike).
//!
//! Why not more: shared memory (`k × 2 planes × tile`) and registers (`2k × p` values per
//! thread) grow with `k`, and the redundant fraction `1 − out/tile` grows with `k` for a given
//! tile. [`plan`] picks `k` and the tile with a small model of those costs, where the schedule
//! table has no measured shape; a schedule's `pass` field overrides both.
//!
//! A pass first reads the non-finite flag: when a pass earlier in the same call raised it, the
//! pass writes nothing, so the state before the first bad pass survives in one of the two
//! buffers and the stepper replays it with single steps (which name the exact step and cell).

/// Shared memory of an SM (H100/H200: 228 KiB) and the most one block may take (227 KiB, with
/// the opt-in attribute), bytes.
pub const SHARED_PER_SM: u32 = 228 * 1024;
/// The most dynamic shared memory one block may use (H100/H200), bytes.
pub const MAX_SHARED_PER_BLOCK: u32 = 227 * 1024;
/// Shared memory the runtime reserves per resident block, bytes.
const RESERVED_PER_BLOCK: u32 = 1024;
/// 32-bit registers of an SM.
const REGS_PER_SM: u32 = 65536;
/// Threads an SM holds.
const THREADS_PER_SM: u32 = 2048;
/// The most steps per pass the model and a schedule's `pass=kK` consider.
pub const K_MAX: u32 = 8;
/// The most steps per pass a whole shape may ask for (`pass=K/SX/SY/P/CHUNK`).
pub const K_SHAPE_MAX: u32 = 16;

/// A temporal-blocking shape: steps per pass and the block's tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Temporal {
    /// Time steps fused in one pass.
    pub k: u32,
    /// Tile points along x, halo included (the strip width in 2-D).
    pub sx: u32,
    /// Tile points along y, halo included (1 in 2-D).
    pub sy: u32,
    /// Tile points per thread (threads = `sx · sy / p`).
    pub p: u32,
    /// Output planes (rows in 2-D) each block marches.
    pub chunk: u32,
}

impl std::fmt::Display for Temporal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "k={},{},{},{},{}",
            self.k, self.sx, self.sy, self.p, self.chunk
        )
    }
}

impl Temporal {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.sx * self.sy / self.p.max(1)
    }

    /// Output points of a tile along x and y (y: 1 in 2-D).
    pub fn out(&self, dim: usize) -> (u32, u32) {
        let ox = self.sx.saturating_sub(2 * self.k);
        let oy = if dim == 3 {
            self.sy.saturating_sub(2 * self.k)
        } else {
            1
        };
        (ox, oy)
    }

    /// Points of one shared plane: the tile with one padding point each side (x only in 2-D).
    fn plane(&self, dim: usize) -> u32 {
        if dim == 3 {
            (self.sx + 2) * (self.sy + 2)
        } else {
            self.sx + 2
        }
    }

    /// Dynamic shared memory per block: levels 0 … k−1, two planes each.
    pub fn shared_bytes(&self, dim: usize, bytes: usize) -> u32 {
        self.k * 2 * self.plane(dim) * bytes as u32
    }

    /// Estimated registers per thread: two planes per level and point (in 32-bit words), the
    /// points' offsets and flags, and the rest of the kernel.
    pub fn registers(&self, bytes: usize) -> u32 {
        let words = (bytes / 4) as u32;
        2 * self.k * self.p * words + 6 * self.p + 32
    }

    /// Blocks resident per SM by the estimated registers, shared memory and threads.
    pub fn blocks_per_sm(&self, dim: usize, bytes: usize) -> u32 {
        let t = self.threads().max(1);
        let regs = self.registers(bytes).div_ceil(8) * 8;
        let by_regs = REGS_PER_SM / (regs * t);
        let by_shared = SHARED_PER_SM / (self.shared_bytes(dim, bytes) + RESERVED_PER_BLOCK);
        by_regs.min(by_shared).min(THREADS_PER_SM / t).min(32)
    }

    /// Why this shape cannot run (`None`: it can).
    pub fn invalid(&self, dim: usize, bytes: usize) -> Option<String> {
        let (ox, oy) = self.out(dim);
        let t = self.threads();
        if self.k < 2 || self.k > K_SHAPE_MAX {
            return Some(format!("k = {} outside 2 … {K_SHAPE_MAX}", self.k));
        }
        if dim == 2 && self.sy != 1 {
            return Some("a 2-D tile has sy = 1".into());
        }
        if ox == 0 || oy == 0 {
            return Some(format!(
                "a {}×{} tile has no output left after 2k = {} halo points",
                self.sx,
                self.sy,
                2 * self.k
            ));
        }
        if self.p == 0 || !(self.sx * self.sy).is_multiple_of(self.p) {
            return Some(format!("p = {} does not divide the tile", self.p));
        }
        if t == 0 || t > 1024 || !t.is_multiple_of(32) {
            return Some(format!(
                "{t} threads per block (needs a multiple of 32, ≤ 1024)"
            ));
        }
        if self.chunk == 0 {
            return Some("chunk = 0".into());
        }
        if self.shared_bytes(dim, bytes) > MAX_SHARED_PER_BLOCK {
            return Some(format!(
                "{} bytes of shared memory per block (at most {MAX_SHARED_PER_BLOCK})",
                self.shared_bytes(dim, bytes)
            ));
        }
        if self.registers(bytes) > 255 || self.blocks_per_sm(dim, bytes) == 0 {
            return Some(format!(
                "about {} registers per thread: no block fits an SM",
                self.registers(bytes)
            ));
        }
        None
    }

    /// Blocks along x, y and the march for sizes `(nx, no, nm)` (kernel order).
    pub fn grid(&self, dim: usize, nx: usize, no: usize, nm: usize) -> [u32; 3] {
        pass_grid(self.out(dim), self.chunk, dim, [nx, no, nm])
    }

    /// The model's estimate of a step's time relative to one memory-bound single step on a
    /// grid of `n` points (lower is better): device memory traffic shared by `k` steps (halo
    /// points read again, half of them from L2) against the in-SM work of every level on the
    /// whole tile, which overlap only in part; both stretched by the last, partial wave of
    /// blocks.
    fn estimate(&self, dim: usize, bytes: usize, n: [usize; 3]) -> f64 {
        let (ox, oy) = self.out(dim);
        let redundancy = (self.sx * self.sy) as f64 / (ox * oy) as f64;
        let planes = self.chunk.min(n[dim - 1] as u32).max(1) as f64;
        let warm = (planes + 2.0 * self.k as f64) / planes;
        let reads = warm * (1.0 + 0.5 * (redundancy - 1.0));
        let memory = (reads + 1.0) / 2.0 / self.k as f64;
        let compute = work_per_update(dim, bytes) * redundancy * warm;
        let g = self.grid(dim, n[0], if dim == 3 { n[1] } else { 1 }, n[dim - 1]);
        let blocks = g.iter().map(|&b| b as f64).product::<f64>();
        let waves = blocks / (self.blocks_per_sm(dim, bytes).max(1) * super::SMS) as f64;
        let tail = waves.ceil() / waves;
        (memory.max(compute) + 0.25 * memory.min(compute)) * tail
    }
}

/// Blocks along x, y and the march of a pass whose tiles output `out` points along x and y
/// and `chunk` planes, on `n = (nx, no, nm)` points (kernel order).
pub(crate) fn pass_grid(out: (u32, u32), chunk: u32, dim: usize, n: [usize; 3]) -> [u32; 3] {
    [
        n[0].div_ceil(out.0 as usize) as u32,
        if dim == 3 {
            n[1].div_ceil(out.1 as usize) as u32
        } else {
            1
        },
        n[2].div_ceil(chunk as usize) as u32,
    ]
}

/// The in-SM time of one point update of one level (shared loads and stores, the stencil's
/// arithmetic, the barrier's share), relative to the memory time of one single step per point.
/// Rough figures from instruction counts and H100 throughput, not measured: f64 moves twice the
/// bytes per point at half the arithmetic rate.
fn work_per_update(dim: usize, bytes: usize) -> f64 {
    match (dim, bytes) {
        (3, 4) => 0.25,
        (3, _) => 0.16,
        (_, 4) => 0.2,
        _ => 0.13,
    }
}

/// Candidate tiles `(sx, sy, p)` for a dimension.
fn tiles(dim: usize) -> Vec<(u32, u32, u32)> {
    let mut out = vec![];
    let ps = [1, 2, 4, 8];
    if dim == 3 {
        for sx in [32, 64, 128] {
            for sy in [8, 16, 32, 64] {
                for p in ps {
                    out.push((sx, sy, p));
                }
            }
        }
    } else {
        for sx in [128, 256, 512, 1024] {
            for p in ps {
                out.push((sx, 1, p));
            }
        }
    }
    out
}

/// March chunks the model tries: long ones make the `2k` warm-up planes cheap, short ones
/// give more blocks (a fuller last wave).
const CHUNKS: [u32; 5] = [32, 64, 128, 256, 512];

/// The model's best shape with `k` steps per pass for a grid of `n` points in `dim` dimensions
/// and `bytes`-byte values, keeping at least two blocks and 16 warps per SM; `None` when none fits.
pub fn best_for_k(dim: usize, n: [usize; 3], bytes: usize, k: u32) -> Option<Temporal> {
    let mut best: Option<(f64, Temporal)> = None;
    let shapes = tiles(dim).into_iter().flat_map(|(sx, sy, p)| {
        CHUNKS
            .into_iter()
            .filter(move |&c| c >= 4 * k)
            .map(move |chunk| Temporal {
                k,
                sx,
                sy,
                p,
                chunk,
            })
    });
    for t in shapes {
        if t.invalid(dim, bytes).is_some() {
            continue;
        }
        // Two blocks per SM at least, so that one computes while the other waits at its
        // barrier, and 16 warps to hide the latency of loads.
        let blocks = t.blocks_per_sm(dim, bytes);
        if blocks < 2 || blocks * t.threads() < 16 * 32 {
            continue;
        }
        let e = t.estimate(dim, bytes, n);
        if best.is_none_or(|(b, _)| e < b) {
            best = Some((e, t));
        }
    }
    best.map(|(_, t)| t)
}

/// The model's choice over every `k` (the lowest estimate; a higher `k` must beat a lower one
/// by 2% to be taken, since the estimate is rough and a lower `k` risks less).
pub fn best(dim: usize, n: [usize; 3], bytes: usize) -> Option<Temporal> {
    let mut best: Option<(f64, Temporal)> = None;
    for k in 2..=K_MAX {
        if let Some(t) = best_for_k(dim, n, bytes, k) {
            let e = t.estimate(dim, bytes, n);
            if best.is_none_or(|(b, _)| e < 0.98 * b) {
                best = Some((e, t));
            }
        }
    }
    best.map(|(_, t)| t)
}

/// What a schedule asks of temporal blocking (its `pass` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Request {
    /// Single steps (`off`).
    Off,
    /// `k` steps per pass with the model's tile for that `k` (`kK`).
    K(u32),
    /// A whole shape (`K/SX/SY/P/CHUNK`).
    Shape(Temporal),
}

/// The shape to run for `request` (when `None`: the default measured
/// on a device of `class`, as fdlab-cuda's `device_class` names it, else the model's): `None`
/// for single steps. A requested shape that cannot run is an error.
pub fn plan(
    dim: usize,
    n: [usize; 3],
    bytes: usize,
    class: Option<&str>,
    request: Option<Request>,
) -> Result<Option<Temporal>, String> {
    match request {
        Some(Request::Off) => Ok(None),
        Some(Request::K(k)) => best_for_k(dim, n, bytes, k)
            .map(Some)
            .ok_or_else(|| format!("no tile fits k = {k} in {dim}-D with {bytes}-byte values")),
        Some(Request::Shape(t)) => match t.invalid(dim, bytes) {
            Some(why) => Err(format!("temporal shape {t}: {why}")),
            None => Ok(Some(t)),
        },
        None => Ok(measured(dim, bytes, class)
            .filter(|t| t.invalid(dim, bytes).is_none())
            .or_else(|| best(dim, n, bytes))),
    }
}

/// The fastest shapes measured on a device of `class` (`fdlab bench --suite temporal`, 512³ and
/// 8192², on an H100 and an H200; docs/schedules.md#heat): the model's estimates rank them well
/// within a `k` but not across tiles, so the defaults are these where they apply.
pub fn measured(dim: usize, bytes: usize, class: Option<&str>) -> Option<Temporal> {
    super::schedule::table::temporal(dim, bytes, class)
}

/// Every device class's measured default for `dim` and `bytes`, each once (to compile and
/// check them all on any device).
pub fn measured_shapes(dim: usize, bytes: usize) -> Vec<Temporal> {
    let mut out: Vec<Temporal> = vec![];
    for class in super::DEVICE_CLASSES {
        if let Some(t) = measured(dim, bytes, class)
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    out
}

/// What a pass kernel is generated from.
#[derive(Debug, Clone)]
pub(crate) struct PassSpec {
    /// `"float"` or `"double"`.
    pub ty: &'static str,
    /// 2 or 3.
    pub dim: usize,
    /// Periodic (wrap) or zero outside the grid.
    pub periodic: bool,
    /// Offset-1 weights per kernel axis (x, middle, march).
    pub w: [f64; 3],
    /// The sum of the centre weights.
    pub w0: f64,
    /// `Δt κ`.
    pub kc: f64,
    /// The grid's points along x, the middle axis and the march (`nx`, `no`, `nm`; `no = 1`
    /// in 2-D).
    pub n: [u32; 3],
    /// The shape.
    pub t: Temporal,
    /// The pass kernel's layout choices (its `column`, `fixed`, `pairs`, `lean`,
    /// `ahead` and `unroll` fields).
    pub choices: super::schedule::HeatChoices,
}

impl PassSpec {
    /// Whether a plane's points fit 32-bit indices (`nx · no < 2³¹`).
    pub fn narrow(&self) -> bool {
        (self.n[0] as u64) * (self.n[1] as u64) < i32::MAX as u64
    }
}

pub(crate) use super::temporal_kernel::heat_pass;

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes the model is asked about: the benchmark's, odd small ones and a tall 2-D grid.
    const GRIDS: [(usize, [usize; 3]); 6] = [
        (3, [512, 512, 512]),
        (3, [37, 29, 23]),
        (3, [6, 5, 4]),
        (2, [8192, 8192, 1]),
        (2, [67, 45, 1]),
        (2, [100, 100_000, 1]),
    ];

    #[test]
    fn the_measured_defaults_are_valid_and_chosen() {
        for dim in [2, 3] {
            for bytes in [4, 8] {
                let n = if dim == 3 {
                    [64, 64, 64]
                } else {
                    [512, 512, 1]
                };
                for class in crate::gpu::DEVICE_CLASSES {
                    let t = measured(dim, bytes, class).expect("a measured shape");
                    assert_eq!(t.invalid(dim, bytes), None, "{t}");
                    assert!(measured_shapes(dim, bytes).contains(&t));
                    assert_eq!(plan(dim, n, bytes, class, None), Ok(Some(t)));
                }
            }
        }
    }

    #[test]
    fn the_models_choices_fit_the_device_limits() {
        for (dim, n) in GRIDS {
            for bytes in [4, 8] {
                let best = best(dim, n, bytes).expect("some shape fits");
                for k in 2..=K_MAX {
                    let Some(t) = best_for_k(dim, n, bytes, k) else {
                        continue;
                    };
                    assert_eq!(t.invalid(dim, bytes), None, "{t}");
                    assert!(t.shared_bytes(dim, bytes) <= MAX_SHARED_PER_BLOCK, "{t}");
                    assert!(t.blocks_per_sm(dim, bytes) >= 2, "{t}");
                    assert!(t.blocks_per_sm(dim, bytes) * t.threads() >= 512, "{t}");
                    let g = t.grid(dim, n[0], if dim == 3 { n[1] } else { 1 }, n[dim - 1]);
                    assert!(g[1] <= 65535 && g[2] <= 65535, "{t}: {g:?}");
                }
                assert!(best.k >= 2, "{best}");
            }
        }
        // The targets' grids get a k worth having.
        assert!(best(3, [512; 3], 4).unwrap().k >= 3);
        assert!(best(2, [8192, 8192, 1], 4).unwrap().k >= 4);
    }

    #[test]
    fn a_requested_shape_runs_or_is_refused_by_the_plan() {
        let t = Temporal {
            k: 3,
            sx: 64,
            sy: 32,
            p: 4,
            chunk: 128,
        };
        // A shape that cannot run is refused by the plan, not run.
        let huge = Temporal {
            sx: 128,
            sy: 64,
            ..t
        };
        assert!(plan(3, [64; 3], 8, None, Some(Request::Shape(huge))).is_err());
        assert_eq!(plan(3, [64; 3], 8, None, Some(Request::Off)), Ok(None));
        assert_eq!(
            plan(3, [64; 3], 4, None, Some(Request::Shape(t))),
            Ok(Some(t))
        );
    }

    #[test]
    #[ignore = "prints the model's choices"]
    fn print_choices() {
        for (dim, n) in GRIDS {
            for bytes in [4, 8] {
                for k in 2..=K_MAX {
                    if let Some(t) = best_for_k(dim, n, bytes, k) {
                        eprintln!(
                            "{dim}-D {n:?} {bytes}B k={k}: {t} est {:.3} blocks/SM {} regs {} shared {}",
                            t.estimate(dim, bytes, n),
                            t.blocks_per_sm(dim, bytes),
                            t.registers(bytes),
                            t.shared_bytes(dim, bytes)
                        );
                    }
                }
                eprintln!("  best: {:?}", best(dim, n, bytes));
            }
        }
    }
}
