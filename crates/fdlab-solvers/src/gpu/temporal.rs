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

pub use fdlab_cuda::codegen::solver::shape::{
    Temporal, K_MAX, K_SHAPE_MAX, MAX_SHARED_PER_BLOCK, SHARED_PER_SM,
};

/// The model's estimate of a step's time with shape `t` relative to one memory-bound single step on a
/// grid of `n` points (lower is better): device memory traffic shared by `k` steps (halo
/// points read again, half of them from L2) against the in-SM work of every level on the
/// whole tile, which overlap only in part; both stretched by the last, partial wave of
/// blocks.
fn estimate(t: &Temporal, dim: usize, bytes: usize, n: [usize; 3]) -> f64 {
    let (ox, oy) = t.out(dim);
    let redundancy = (t.sx * t.sy) as f64 / (ox * oy) as f64;
    let planes = t.chunk.min(n[dim - 1] as u32).max(1) as f64;
    let warm = (planes + 2.0 * t.k as f64) / planes;
    let reads = warm * (1.0 + 0.5 * (redundancy - 1.0));
    let memory = (reads + 1.0) / 2.0 / t.k as f64;
    let compute = work_per_update(dim, bytes) * redundancy * warm;
    let g = t.grid(dim, n[0], if dim == 3 { n[1] } else { 1 }, n[dim - 1]);
    let blocks = g.iter().map(|&b| b as f64).product::<f64>();
    let waves = blocks / (t.blocks_per_sm(dim, bytes).max(1) * super::SMS) as f64;
    let tail = waves.ceil() / waves;
    (memory.max(compute) + 0.25 * memory.min(compute)) * tail
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
        let e = estimate(&t, dim, bytes, n);
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
            let e = estimate(&t, dim, bytes, n);
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
                            estimate(&t, dim, bytes, n),
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
