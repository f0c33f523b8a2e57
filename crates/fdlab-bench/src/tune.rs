//! The autotuner's search space: strategy × tile × points per thread for one (device, stencil,
//! size, scalar type). `fdlab tune` times the candidates and remembers the winner through the
//! library's tune cache ([`fdlab_cuda::tune_cache`]), which every plan then consults.

use crate::suites::Case;
use fdlab_core::Precision;
use fdlab_cuda::tune_cache::CaseKey;
pub use fdlab_cuda::tune_cache::{Entry, TuneCache};
use fdlab_cuda::{SmCopy, Strategy};
use std::path::PathBuf;

impl<'a> From<&'a Case> for CaseKey<'a> {
    fn from(case: &'a Case) -> CaseKey<'a> {
        CaseKey {
            stencils: &case.stencils,
            boundary: case.boundary,
            shape: case.grid.shape(),
            precision: case.precision,
        }
    }
}

/// The cache key of `case` on `device` ([`fdlab_cuda::tune_cache::key`]).
pub fn key(device: &str, case: &Case) -> String {
    fdlab_cuda::tune_cache::key(device, &CaseKey::from(case))
}

/// Where the cache lives: `$FDLAB_TUNE_CACHE`, else `<cache dir>/fdlab/tune.json`
/// ([`fdlab_core::config::tune_cache_path`]).
pub fn cache_path() -> Option<PathBuf> {
    fdlab_core::config::tune_cache_path()
}

/// What a plan runs for `case` when nothing was tuned and the device class has no measured
/// default: the library's heuristic ([`fdlab_cuda::choose::heuristic`]). `tma`: the device
/// has the tensor memory accelerator (compute capability 9.0 or later).
pub fn default_strategy(case: &Case, tma: bool) -> Strategy {
    fdlab_cuda::choose::heuristic(
        &case.stencils,
        case.boundary,
        &case.grid,
        case.precision,
        tma,
    )
}

/// The search space for `case`.
pub fn candidates(case: &Case) -> Vec<Strategy> {
    let nx = case.grid.shape()[0];
    let vecs: &[u32] = match case.precision {
        Precision::F32 => &[2, 4],
        Precision::F64 => &[1, 2],
    };
    let mut out = vec![];
    for &vec in vecs.iter().filter(|&&v| nx.is_multiple_of(v as usize)) {
        for (bx, by) in [(32, 4), (32, 8), (64, 2), (128, 1), (128, 2), (256, 1)] {
            for chunk in [32, 64] {
                for (unroll, rows) in [(1, 1), (2, 1), (4, 1), (1, 2), (2, 2), (4, 2)] {
                    out.push(Strategy::ZMarch {
                        bx,
                        by,
                        vec,
                        chunk,
                        streaming: false,
                        unroll,
                        rows,
                    });
                }
            }
            out.push(Strategy::ZMarch {
                bx,
                by,
                vec,
                chunk: 64,
                streaming: true,
                unroll: 2,
                rows: 2,
            });
        }
    }
    // Short chunks with deep unrolling for the 2-D marches: on the H100 the 2-D Laplacian went
    // 88.5 → 94.9% with 16-row chunks of 8 rows per iteration (`zmarch-256x1-v4-c16-u8-r1`),
    // and 86.1 → 89.9% on the H200. On the H200 smaller blocks win again, with 8-row chunks
    // (`zmarch-64x1-v4-c8-u8-r1`: mean 92.7% against 91.0% for 256 threads and 16 rows over
    // six alternated rounds; 128 threads in between).
    if case.grid.dims().len() == 2 {
        for &vec in vecs.iter().filter(|&&v| nx.is_multiple_of(v as usize)) {
            for bx in [1024 / vec, 256 / vec, 512 / vec] {
                for chunk in [8, 16] {
                    for unroll in [4, 8] {
                        out.push(Strategy::ZMarch {
                            bx,
                            by: 1,
                            vec,
                            chunk,
                            streaming: false,
                            unroll,
                            rows: 1,
                        });
                    }
                }
            }
        }
    }
    // Shared-memory marching: tile × rows per thread × planes in flight × x points per thread.
    let copy = 16 / case.precision.size() as u32;
    let staged = |bx, by, rows, chunk, depth, vec, stages, edge_reads| Strategy::SMarch {
        bx,
        by,
        rows,
        chunk,
        depth,
        vec,
        copy: stages,
        edge_reads,
    };
    let smarch = |bx, by, rows, chunk, depth, vec| {
        staged(bx, by, rows, chunk, depth, vec, SmCopy::Async, false)
    };
    let interior = case.boundary == fdlab_core::Boundary::Dirichlet;
    if nx.is_multiple_of(copy as usize) {
        if case.grid.dims().len() == 3 {
            for bx in [32, 64, 128] {
                for (by, rows) in [(4, 2), (8, 1), (4, 4), (8, 2)] {
                    for depth in [2, 4] {
                        out.push(smarch(bx, by, rows, 64, depth, 1));
                    }
                }
            }
            // Several x points per thread: fewer instructions per point.
            for vec in [2, 4].into_iter().filter(|&v| v <= copy) {
                for bx in [32, 64] {
                    for (by, rows) in [(4, 2), (8, 1), (8, 2)] {
                        for depth in [2, 4] {
                            out.push(smarch(bx, by, rows, 64, depth, vec));
                        }
                    }
                }
            }
            // Longer marches of the vector tiles: fewer chunk-boundary planes re-read, which
            // a radius-4 march-axis stencil feels most (H200 d/dz, 256 planes: 89.5–90.7% of
            // the copy against 88.2–89.6% for 64).
            if let Some(vec) = [4, 2].into_iter().find(|&v| v <= copy) {
                for chunk in [128, 256, 512] {
                    out.push(smarch(64, 4, 2, chunk, 2, vec));
                }
                out.push(smarch(64, 4, 2, 256, 3, vec));
            }
            // Wide tiles: longer contiguous rows per plane.
            for (by, rows) in [(4, 1), (4, 2)] {
                out.push(smarch(256, by, rows, 64, 2, 1));
            }
            // Tall tiles (32 rows): a y halo of r rows costs 2r/32 of a plane instead of
            // 2r/8 — the wide stencils' halo.
            for vec in [1, 2, 4].into_iter().filter(|&v| v <= copy) {
                for bx in [32, 64, 128].into_iter().filter(|&b| b * vec <= 256) {
                    for (by, rows) in [(8, 4), (16, 2)] {
                        out.push(smarch(bx, by, rows, 64, 2, vec));
                    }
                }
            }
            // Staged copies (coalesced loads through registers instead of per-thread
            // cp.async, which costs two L2 sector accesses per sector): tiles 128-256 points
            // wide as vectors, 8-16 rows, one or two planes of loads in registers
            // (docs/performance.md, "L2 sectors: `cp.async` against register staging").
            let mut vecs = vec![copy, 2];
            vecs.dedup();
            for (tx, by, rows) in [
                (128, 4, 2),
                (128, 8, 2),
                (128, 2, 4),
                (256, 2, 4),
                (256, 4, 2),
                (128, 4, 4),
                (64, 8, 2),
                // One 512- or 1024-point row per block, 4-8 rows per thread: the H100's winners
                // for the 7-point Laplacian (f64 93.1%, f32 1024³ 92.3% against 89-91% for the
                // 128-wide tiles).
                (512, 1, 4),
                (512, 1, 8),
                (1024, 1, 4),
            ] {
                for &vec in &vecs {
                    for depth in [1, 2] {
                        for stages in [SmCopy::Registers(1), SmCopy::Registers(2)] {
                            out.push(staged(tx / vec, by, rows, 64, depth, vec, stages, false));
                        }
                    }
                    // 128-plane chunks, one or two planes of loads in registers (the H100's
                    // lap7 f32 512³ winner stages two: `smarch-128x1-r8-c128-p1-v4-l2`).
                    for stages in [SmCopy::Registers(1), SmCopy::Registers(2)] {
                        out.push(staged(tx / vec, by, rows, 128, 1, vec, stages, false));
                    }
                    // Interior-only outputs: the rows' partly written edge sectors read a
                    // plane ahead (`-e`). On the H100 it took the 128 × 8 tiles of lap7 f32
                    // 512³ from 88–89% to 90–91%, but cost the 256 × 4 ones 12 points on some
                    // machines and gained on another (docs/performance.md, "Partly written
                    // edge sectors"), so both are in the search.
                    if interior {
                        for chunk in [64, 128] {
                            let stages = SmCopy::Registers(1);
                            out.push(staged(tx / vec, by, rows, chunk, 1, vec, stages, true));
                        }
                    }
                }
            }
            // Bulk (TMA) copies: whole sectors per row like the staged copies, and planes in
            // flight without registers like cp.async. Measured on the H200 they lose 10-30
            // points on every case but d/dz (a tie at 90%), so only the two shapes that came
            // closest stay in the search (docs/performance.md, "TMA: requests and alignment").
            for (tx, by, rows) in [(256, 8, 1), (128, 4, 2)] {
                for &vec in &vecs {
                    out.push(staged(tx / vec, by, rows, 64, 4, vec, SmCopy::Bulk, false));
                }
            }
            // Queue marches: the march-axis reach in registers, one plane (and its halo) in
            // shared memory; taller tiles cut the other-axis halo.
            // Registers, not halo, limit these (ptxas: 80-250 per thread for the 8th-order
            // Laplacian), so scalar and 2-wide points are in the space next to 16-byte ones.
            let mut qvecs = vec![1, 2, copy];
            qvecs.dedup();
            for (tx, by, rows) in [
                (64, 8, 2),
                (128, 4, 2),
                (64, 4, 4),
                (128, 4, 4),
                (64, 16, 1),
                (64, 2, 8),
            ] {
                for &vec in &qvecs {
                    out.push(Strategy::QMarch {
                        bx: tx / vec,
                        by,
                        rows,
                        chunk: 64,
                        vec,
                        tma: 0,
                        accumulate: false,
                        split: false,
                        unroll: 1,
                        streaming: false,
                    });
                }
            }
            // The queue marches fed by TMA tensor copies, one per plane (Dirichlet only).
            // Measured on the H200: the partial-sum queue (`-tNa`, a ring of 1 + N slots) beat
            // the value queue (reach + 1 + N slots) on the 25-point Laplacian, 81.8 against
            // 77.7% (f64); 64-wide, 16-row tiles with two rows per thread won; the value queue
            // keeps one shape.
            if case.boundary == fdlab_core::Boundary::Dirichlet {
                let tma = |tx: u32, by, rows, chunk, tma, accumulate| Strategy::QMarch {
                    bx: tx / copy,
                    by,
                    rows,
                    chunk,
                    vec: copy,
                    tma,
                    accumulate,
                    split: false,
                    unroll: 1,
                    streaming: false,
                };
                out.push(tma(64, 8, 2, 128, 2, false));
                for (tx, by, rows) in [(64, 8, 2), (64, 16, 2), (128, 8, 2), (128, 32, 1)] {
                    for chunk in [64, 128] {
                        out.push(tma(tx, by, rows, chunk, 2, true));
                    }
                }
                // The H100's winners: 16-row tiles with 256-plane chunks (lap25 f64 94.1%) and
                // 128 × 32-point tiles (lap25 f32 81.8%).
                out.push(tma(64, 16, 2, 256, 2, true));
                out.push(tma(128, 16, 2, 64, 2, true));
                out.push(tma(64, 8, 2, 64, 3, true));
                // The H200's f32 winner: 512-byte rows, three planes per iteration written out
                // (lap25 f32 78.6 against 75.1% for one; f64 lost, 77.3 against 80.6%).
                let row = 512 / case.precision.size() as u32;
                let mut unrolled = tma(row, 16, 2, 256, 2, true);
                if let Strategy::QMarch { unroll, .. } = &mut unrolled {
                    *unroll = 3;
                }
                out.push(unrolled);
            }
            // Split slots (`-wNa`, periodic too): the interior and its other-axis halo rows as
            // 128-byte-aligned tensor copies, the x halo apart. On the H100
            // (docs/performance.md, "TMA: requests and alignment"): lap25 f32 82 → 89.5%
            // (512-byte rows, 256-plane chunks), f64 94.4%, the periodic gradient 86.9 → 89.5%
            // against the shared-memory march.
            let split = |tx: u32, by, rows, chunk, vec: u32, streaming| Strategy::QMarch {
                bx: tx / vec,
                by,
                rows,
                chunk,
                vec,
                tma: 2,
                accumulate: true,
                split: true,
                unroll: 1,
                streaming,
            };
            let size = case.precision.size() as u32;
            let mut widths = vec![512 / size, 64];
            widths.dedup();
            for tx in widths {
                for chunk in [128, 256] {
                    out.push(split(tx, 16, 2, chunk, copy, false));
                }
            }
            // One row per thread, 512-byte rows (the f32 gradient's 89.5–90.1%).
            out.push(split(512 / size, 16, 1, 128, copy, false));
            // The f32 gradient's winners: 64-point rows as pairs (two x points per thread);
            // with several outputs, streaming stores (on the H100: +1.3 to +2.3 points for
            // the gradient, −2 to −4.5 for the one-output 25-point Laplacian).
            if copy == 4 {
                out.push(split(64, 16, 2, 256, 2, false));
            }
            if case.stencils.len() > 1 {
                out.push(split(512 / size, 16, 1, 128, copy, true));
                out.push(split(64, 16, 2, 256, 2, true));
                // The H200's: three copies in flight over 512-plane chunks (a whole 512³
                // column, no planes re-read): 91.0–91.5% against 85.9–86.6% for two copies
                // and 256 planes.
                if copy == 4 {
                    let mut deep = split(64, 16, 2, 512, 2, false);
                    if let Strategy::QMarch { tma, .. } = &mut deep {
                        *tma = 3;
                    }
                    out.push(deep);
                }
            }
            // Longer chunks: fewer re-read planes at chunk ends (2r per chunk).
            for chunk in [128, 256] {
                out.push(smarch(128, 8, 2, chunk, 2, 1));
                out.push(smarch(64, 8, 2, chunk, 4, copy));
                out.push(smarch(64, 8, 1, chunk, 2, copy));
                out.push(smarch(32, 8, 1, chunk, 2, 2));
            }
        } else {
            for bx in [64, 128, 256, 512] {
                for depth in [2, 4, 8] {
                    out.push(smarch(bx, 1, 1, 256, depth, 1));
                }
                if bx <= 128 {
                    for depth in [2, 4] {
                        out.push(smarch(bx, 1, 1, 256, depth, copy));
                    }
                }
                out.push(Strategy::QMarch {
                    bx: bx / copy,
                    by: 1,
                    rows: 1,
                    chunk: 256,
                    vec: copy,
                    tma: 0,
                    accumulate: false,
                    split: false,
                    unroll: 1,
                    streaming: false,
                });
            }
        }
    }
    // Whole-line long pencils with the register window (d/dy 92% of copy on the H200), where
    // the tile fits in 96 KiB.
    if let Some(axis) = case.stencils.first().and_then(|s| s.single_axis()) {
        let n = case.grid.shape()[axis.index()];
        if n.is_multiple_of(8) && (n + 8) * 32 * case.precision.size() <= 96 * 1024 {
            out.push(Strategy::Pencil {
                length: n as u32,
                lines: 32,
                threads_along: 8,
                threads_across: 32,
                window: true,
            });
        }
        // Shorter pencils with the window, more blocks for the same lines (H200 d/dy: 64
        // points × 64 lines 98.4–98.7% of the copy, 128 × 32 97.5–98.4%, against 92.1–92.5%
        // for the whole line).
        for (length, lines, threads_along) in [(128, 32, 8), (64, 64, 4), (128, 64, 8)] {
            if n.is_multiple_of(length) {
                out.push(Strategy::Pencil {
                    length: length as u32,
                    lines,
                    threads_along,
                    threads_across: lines,
                    window: true,
                });
            }
        }
    }
    for s in [
        Strategy::PENCIL_LONG,
        Strategy::PENCIL_LONG_WINDOW,
        Strategy::Pencil {
            length: 64,
            lines: 64,
            threads_along: 4,
            threads_across: 64,
            window: false,
        },
        Strategy::Pencil {
            length: 128,
            lines: 32,
            threads_along: 8,
            threads_across: 32,
            window: false,
        },
        Strategy::AMD_PPT,
        Strategy::PointsPerThread {
            block: [128, 2, 1],
            points: 8,
        },
        Strategy::READ_ONLY,
    ] {
        out.push(s);
    }
    out.retain(|s| s.supports(&case.stencils).is_ok());
    // Each strategy once: the lists above overlap (e.g. a pencil that is also a fixed entry).
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert(*s));
    out
}
