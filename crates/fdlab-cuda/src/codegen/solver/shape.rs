//! The shapes of the temporally blocked passes: steps per pass and the block's tile, with
//! the resources (shared memory, registers, blocks per SM) a shape takes and whether it can
//! run. The heat pass ([`super::temporal`]) and the wave pass ([`super::wave_pass`]) are
//! generated from them.

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
}

/// Blocks along x, y and the march of a pass whose tiles output `out` points along x and y
/// and `chunk` planes, on `n = (nx, no, nm)` points (kernel order).
pub fn pass_grid(out: (u32, u32), chunk: u32, dim: usize, n: [usize; 3]) -> [u32; 3] {
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

/// A wave pass shape: steps per pass and tile ([`Temporal`]'s fields, the halo `r·k` deep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaveShape {
    /// Steps, tile, points per thread and chunk.
    pub t: Temporal,
    /// The stencil's radius (order / 2).
    pub r: u32,
}

impl WaveShape {
    /// Output points of a tile along x and y (y: 1 in 2-D).
    pub fn out(&self, dim: usize) -> (u32, u32) {
        let h = 2 * self.r * self.t.k;
        let oy = if dim == 3 {
            self.t.sy.saturating_sub(h)
        } else {
            1
        };
        (self.t.sx.saturating_sub(h), oy)
    }

    /// Points of one shared plane: the tile with `r` points of padding each side.
    fn plane(&self, dim: usize) -> u32 {
        let w = self.t.sx + 2 * self.r;
        if dim == 3 {
            w * (self.t.sy + 2 * self.r)
        } else {
            w
        }
    }

    /// Dynamic shared memory per block: levels 0 … k−1, two planes each.
    pub fn shared_bytes(&self, dim: usize, bytes: usize) -> u32 {
        2 * self.t.k * self.plane(dim) * bytes as u32
    }

    /// Estimated registers per thread: the queues (`2r + 1` planes of each level below `k`),
    /// the loads in flight and level 1's inputs, offsets, and the rest of the kernel (ptxas:
    /// 124 for `f32`, r = 4, k = 2, p = 4, against 120 estimated).
    pub fn registers(&self, bytes: usize) -> u32 {
        let (k, p, r) = (self.t.k, self.t.p, self.r);
        let words = (bytes / 4) as u32;
        words * p * (k * (2 * r + 1) + 4) + 2 * p + 24
    }

    /// Why this shape cannot run (`None`: it can).
    pub fn invalid(&self, dim: usize, bytes: usize) -> Option<String> {
        let t = self.t;
        let (ox, oy) = self.out(dim);
        if t.k < 2 || t.k > K_MAX {
            return Some(format!("k = {} outside 2 … {}", t.k, K_MAX));
        }
        if dim == 2 && (t.sy != 1 || t.p != 1) {
            return Some("a 2-D wave tile has sy = 1 and p = 1".into());
        }
        if dim == 3 && (!t.sx.is_multiple_of(32) || t.p == 0 || !t.sy.is_multiple_of(t.p)) {
            return Some(format!(
                "a 3-D wave tile needs sx a multiple of 32 and p dividing sy (sx = {}, sy = {}, p = {})",
                t.sx, t.sy, t.p
            ));
        }
        if ox == 0 || oy == 0 {
            return Some(format!(
                "a {}×{} tile has no output left after 2·r·k = {} halo points",
                t.sx,
                t.sy,
                2 * self.r * t.k
            ));
        }
        let threads = t.threads();
        if threads == 0 || threads > 1024 || !threads.is_multiple_of(32) {
            return Some(format!(
                "{threads} threads per block (needs a multiple of 32, ≤ 1024)"
            ));
        }
        if t.chunk == 0 {
            return Some("chunk = 0".into());
        }
        let shared = self.shared_bytes(dim, bytes);
        if shared > MAX_SHARED_PER_BLOCK {
            return Some(format!(
                "{shared} bytes of shared memory per block (at most {MAX_SHARED_PER_BLOCK})"
            ));
        }
        let regs = self.registers(bytes);
        if regs > 255 {
            return Some(format!(
                "about {regs} registers per thread: more than a thread has"
            ));
        }
        None
    }

    /// Whether the estimated registers of a block fit an SM (the compiler spills otherwise).
    pub fn fits_registers(&self, bytes: usize) -> bool {
        self.registers(bytes).div_ceil(8) * 8 * self.t.threads() <= 65536
    }

    /// Blocks along x, y and the march for sizes `(nx, no, nm)` (kernel order).
    pub fn grid(&self, dim: usize, nx: usize, no: usize, nm: usize) -> [u32; 3] {
        pass_grid(self.out(dim), self.t.chunk, dim, [nx, no, nm])
    }
}
