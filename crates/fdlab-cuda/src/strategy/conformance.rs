//! The strategies the conformance suite checks, as names: each line is what `Display` prints.

use super::Strategy;

/// The conformance strategies, each with why it is in the set.
const CONFORMANCE: &[&str] = &[
    // The defaults of every family and the published kernels.
    "naive-32x4x2",
    "ldg-32x4x2",
    "texture-32x4x2",
    "shared-32x8",
    "pencil-64x4-t64x4",
    "pencil-64x32-t8x32",
    "naive-256x1x1",
    "ppt4-256x1x1",
    "zmarch-32x4-v1-c64-u2-r2",
    // Odd tiles, vectors, unrolls and rows; streaming stores.
    "zmarch-8x3-v2-c5-u3-r3-cs",
    "zmarch-16x2-v4-c7-u4-r1",
    // Warp-wide rows (bx = 32): side vectors by shuffle.
    "zmarch-32x2-v4-c7-u2-r4",
    "zmarch-32x3-v2-c9-u4-r2-cs",
    "smarch-64x4-r2-c64-p4",
    // Odd tiles, short chunks and deep rings: ring wrap-around and tile edges.
    "smarch-12x3-r3-c5-p3",
    // Vector points: windows of whole vectors, partial vectors at Dirichlet edges.
    "smarch-8x3-r2-c5-p2-v2",
    "smarch-16x2-r3-c6-p3-v4",
    "smarch-32x2-r1-c7-p8",
    // Staged copies (through registers): odd tile, one plane of ring beyond the window (the
    // slot refilled last in each iteration), vectors at Dirichlet edges.
    "smarch-12x3-r3-c5-p1-l",
    "smarch-8x3-r2-c5-p2-v2-l",
    // Edge sectors read ahead (-e) with every way of copying planes: odd tiles put the grid's
    // x edges at every position within a sector and in tiles of their own; chunks of two
    // planes (the chunk's first plane read before its loop).
    "smarch-8x3-r2-c5-p1-v2-l-e",
    "smarch-4x2-r3-c2-p2-v4-l2-e",
    "smarch-12x3-r3-c5-p3-e",
    "smarch-8x3-r2-c5-p1-v2-b-e",
    // Two planes of loads in registers: the stage shift and the early loads.
    "smarch-16x2-r2-c7-p2-v2-l2",
    // Bulk copies: an odd tile (rows split over lanes, several pieces per row where a periodic
    // image wraps), a block of fewer than 32 threads (partial issuing warp), one plane beyond
    // the window, and vectors.
    "smarch-12x3-r3-c5-p3-b",
    "smarch-8x3-r2-c5-p1-v2-b",
    "smarch-32x4-r2-c7-p4-v4-b",
    // Queue marches: an odd tile and rows (halo tables over several granules per thread, tiles
    // cut by the grid's edge), short chunks (prologue each few planes), vectors cut by
    // Dirichlet edges, scalar points.
    "qmarch-12x3-r3-c5-v1",
    "qmarch-8x3-r2-c6-v2",
    "qmarch-16x4-r2-c7-v4-cs",
    // TMA tensor copies (Dirichlet cases only): a ring of 2 + reach slots with an odd tile and
    // short chunks, and a deep ring with vectors.
    "qmarch-12x3-r3-c5-v1-t1",
    "qmarch-8x3-r2-c6-v2-t3",
    "qmarch-12x3-r3-c5-v1-t2a",
    "qmarch-8x3-r2-c6-v2-t1a",
    // Split slots (periodic too): an odd tile height and rows with scalar points, short
    // chunks; pairs with a deep ring; quads with a one-plane ring and streaming stores. 32
    // floats or 16 doubles wide, so odd grids get tiles cut by their edge (the bulk fall-back).
    "qmarch-32x3-r3-c5-v1-w2a",
    "qmarch-16x4-r2-c7-v2-w3a",
    "qmarch-8x3-r2-c6-v4-w1a-cs",
    // The partial-sum march written out several planes an iteration: chunks of 7 and 5 planes
    // (a remainder after the written-out iterations), tensor copies and split slots.
    "qmarch-8x3-r2-c7-v2-t1a-u3",
    "qmarch-16x4-r2-c5-v2-w2a-u2",
    // Odd tile sizes catch tiling arithmetic that only works for powers of two.
    "shared-24x5",
    // 34 loads per thread: three load batches, the last one partial.
    "pencil-128x4-t8x2",
    "pencil-40x6-t8x3",
    "pencil-64x32-t8x32-w",
    // Windows: odd tiles and runs (several pencils per thread, a tile longer than small grids'
    // lines, runs of 5 and 16 points, a single-thread run).
    "pencil-40x6-t8x3-w",
    "pencil-128x4-t8x2-w",
    "pencil-24x10-t1x5-w",
];

impl Strategy {
    /// The strategies the conformance suite checks: every family's default, the published
    /// kernels, and odd tiles, vectors and options that exercise each family's edge cases.
    pub fn conformance_set() -> Vec<Strategy> {
        CONFORMANCE
            .iter()
            .map(|name| match name.parse() {
                Ok(s) => s,
                // The list is fixed; a test parses every entry.
                Err(e) => panic!("conformance strategy {name}: {e}"),
            })
            .collect()
    }
}
