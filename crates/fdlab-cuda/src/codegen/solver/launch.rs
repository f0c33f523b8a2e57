//! The launch shape of the solver step kernels: threads per block, planes per block, vector
//! width, and the shapes the steps start from.

/// Streaming multiprocessors of the devices the launch shapes are sized for (H100/H200 SXM).
pub const SMS: u32 = 132;

/// Threads per block along x and along the middle axis, planes per block, how many planes
/// ahead of the one computed each thread loads (bytes in flight hide the latency), and the x
/// points each thread owns (one vector load of up to 16 bytes); `tile`: the 3-D wave step
/// puts each plane in shared memory ([`super::tiled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Launch {
    /// Threads along x.
    pub bx: u32,
    /// Threads along the middle axis.
    pub by: u32,
    /// Planes each block marches.
    pub chunk: u32,
    /// Planes loaded ahead of the one computed.
    pub ahead: u32,
    /// x points per thread (one vector load).
    pub vec: u32,
    /// Planes in shared memory (the 3-D wave step).
    pub tile: bool,
    /// `#pragma unroll` factor of the march loop; 0 leaves it to the compiler.
    pub unroll: u32,
    /// With `tile`: planes whose loads are in flight through a ring of shared-memory slots
    /// ([`super::ring`]); 0 for the tiled step's loads through registers.
    pub ring: u32,
}

impl std::fmt::Display for Launch {
    /// The shape as `summary.json` records it, e.g. `256x1 chunk 16 ahead 2 vec 2 tile ring 3`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{} chunk {} ahead {} vec {}",
            self.bx, self.by, self.chunk, self.ahead, self.vec
        )?;
        if self.tile {
            write!(f, " tile")?;
        }
        if self.ring > 0 {
            write!(f, " ring {}", self.ring)?;
        }
        if self.unroll > 0 {
            write!(f, " unroll {}", self.unroll)?;
        }
        Ok(())
    }
}

impl Launch {
    /// A row of `bx` threads, one point each: the shape of the small kernels over lists
    /// (sources, dispersive cells, picture samples).
    pub const fn flat(bx: u32) -> Launch {
        Launch {
            bx,
            by: 1,
            chunk: 1,
            ahead: 0,
            vec: 1,
            tile: false,
            unroll: 0,
            ring: 0,
        }
    }

    /// One thread per (x, y) column of a `bx` × `by` block, marching `chunk` planes, one
    /// point per thread: the shape of the FDTD kernels.
    pub const fn columns(bx: u32, by: u32, chunk: u32) -> Launch {
        Launch {
            bx,
            by,
            chunk,
            ..Launch::flat(bx)
        }
    }

    /// The shape for a stencil of radius `r` on a grid of `n` points in `dim` dimensions,
    /// elements of `bytes` bytes: 32 × 8 threads in 3-D and 128 in a row in 2-D, each with
    /// 16 bytes of x points where `nx` allows; longer marches for wider stencils, whose
    /// march-axis halo is reloaded at each chunk's start.
    pub fn new(dim: usize, r: usize, n: [usize; 3], bytes: usize) -> Launch {
        let wide = (16 / bytes) as u32;
        // The fastest shapes measured at 512³ (docs/schedules.md): planes ahead only for the
        // f32 wide stencil, four rows per block for f64 and wide stencils, 32-plane marches
        // for f32.
        let wide_stencil = r > 2;
        let f32 = bytes == 4;
        let base = Launch {
            bx: if dim == 3 { 32 } else { 128 },
            by: match dim {
                3 if wide_stencil || !f32 => 4,
                3 => 8,
                _ => 1,
            },
            // 16-plane marches for the f32 3-D heat step (docs/schedules.md).
            chunk: match (f32, dim, wide_stencil) {
                (true, 3, false) => 16,
                (true, ..) => 32,
                _ => 64,
            },
            ahead: if wide_stencil && f32 { 2 } else { 0 },
            vec: wide,
            tile: false,
            unroll: 0,
            ring: 0,
        };
        base.fit(dim, r, n, bytes)
    }

    /// This shape fitted to a grid of `n` points in `dim` dimensions, a stencil of radius `r`
    /// and values of `bytes` bytes: the widest vector up to this one's that tiles each row,
    /// and no more planes ahead than the march holds. A fitted shape fits unchanged.
    pub fn fit(self, dim: usize, r: usize, n: [usize; 3], bytes: usize) -> Launch {
        let (nx, nm) = (n[0], n[dim - 1]);
        let wide = (16 / bytes) as u32;
        // Vectors must tile each row exactly: the widest that divides nx.
        let vec = [4, 2, 1]
            .into_iter()
            .find(|&v| v <= self.vec.min(wide) && nx.is_multiple_of(v as usize))
            .unwrap_or(1);
        // A periodic plane index is wrapped once: the furthest plane read must be less than
        // `2 nm` away.
        let ahead = self.ahead.min(nm.saturating_sub(r + 1) as u32);
        Launch { vec, ahead, ..self }
    }

    /// The wave step's shape: as [`Launch::new`], but a 3-D step puts its planes in shared
    /// memory, sixteen rows per block (the halo rows are then a third of each plane's loads),
    /// unrolls the march four times, and keeps its loads in flight through a ring of shared
    /// slots two planes ahead ([`super::ring`]). At 512³, % of the copy, ring against the
    /// same tiles with their loads in registers, same machine start: H100 `f32` 94.1 against
    /// 93.2, `f64` 92.3 against 88.5; H200 `f32` 91.6 against 84.2, `f64` 93.0 against 80.6.
    /// One plane ahead loses 10 to 20 points, three lose up to 5 on an H100 and gain at most
    /// 1.5 on an H200 (docs/solvers-design.md#launch-shapes has the sweep over sizes).
    ///
    /// The march length comes from [`Launch::wave_chunk`]: 64 planes at 512³, shorter where
    /// 64 would leave the last wave of blocks mostly empty.
    pub fn for_wave(dim: usize, r: usize, n: [usize; 3], bytes: usize) -> Launch {
        let base = Launch::new(dim, r, n, bytes);
        if dim != 3 {
            return base;
        }
        let tiled = Launch {
            by: 16,
            chunk: 64,
            // The ring holds the planes ahead; the march queue only the stencil's.
            ahead: 0,
            tile: true,
            unroll: 4,
            ring: 2,
            ..base
        };
        // One block of 512 threads per SM (its ring takes more than half the shared memory).
        Launch {
            chunk: tiled.wave_chunk(r, n, 1),
            ..tiled
        }
    }

    /// The march length (planes per block) of a tiled wave step on `n` points that costs the least
    /// by a model of two losses: each block first loads the `2r` planes before its chunk (the step
    /// moves four fields a plane: `(4c + 2r) / 4c`), and the blocks run in waves of `resident` per
    /// SM on 132 SMs, so a last wave that is partly empty costs a whole one (`⌈W⌉ / W`). The model
    /// ranks the measured marches (docs/decisions.md, "Wave-step marches: 64 planes at 512³,
    /// shorter on smaller grids"), e.g. the H200 `f32` step at 640³: 81.5% with 48 planes (the
    /// pick), 80.5–80.6% with 32 or 64; at 256³ 78.5% with 64 (the pick) against 58.6–75.4% with 32
    /// or 48. At 512³ it picks 64.
    pub fn wave_chunk(&self, r: usize, n: [usize; 3], resident: usize) -> u32 {
        let columns =
            n[0].div_ceil((self.bx * self.vec) as usize) * n[1].div_ceil(self.by as usize);
        let slots = resident * SMS as usize;
        let cost = |c: usize| {
            let blocks = columns * n[2].div_ceil(c);
            let waves = blocks as f64 / slots as f64;
            let warm_up = (4 * c + 2 * r) as f64 / (4 * c) as f64;
            warm_up * waves.ceil() / waves
        };
        // Longest first, so that a tie keeps the longer march.
        [64, 48, 32, 24]
            .into_iter()
            .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
            .unwrap_or(64) as u32
    }

    /// Blocks along x, the middle axis and the march for sizes `(nx, no, nm)`.
    pub fn grid(&self, nx: usize, no: usize, nm: usize) -> [u32; 3] {
        [
            nx.div_ceil((self.bx * self.vec) as usize) as u32,
            no.div_ceil(self.by as usize) as u32,
            nm.div_ceil(self.chunk as usize) as u32,
        ]
    }
}
