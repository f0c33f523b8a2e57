//! The types of a generated kernel: what determines it ([`KernelSpec`]) and what the launcher
//! needs ([`CudaSource`]).

use crate::strategy::{Coefficients, Strategy};
use fdlab_core::{Boundary, Precision, Stencil};
use std::fmt;

/// Everything that determines one generated kernel.
#[derive(Debug, Clone)]
pub struct KernelSpec<'a> {
    /// Stencils applied to the one input, one output each.
    pub stencils: &'a [Stencil],
    /// Boundary handling.
    pub boundary: Boundary,
    /// Element type.
    pub precision: Precision,
    /// Thread/memory mapping.
    pub strategy: Strategy,
    /// Literal weights or a `__constant__` array.
    pub coefficients: Coefficients,
}

/// What the kernel's first parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `const T* __restrict__ in`.
    Pointer,
    /// `unsigned long long tex`: a texture object over the input.
    Texture,
}

/// A `__constant__` weight array the launcher fills before the first launch.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantWeights {
    /// The symbol name in the module.
    pub symbol: String,
    /// The weights, stencil by stencil, tap by tap.
    pub values: Vec<f64>,
}

/// A generated kernel: its source and how to launch it.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaSource {
    /// Kernel name: strategy and a hash of the code, so equal code gets equal names.
    pub name: String,
    /// The kernel (without the shared prelude; see [`CudaSource::source`]).
    pub body: String,
    /// Threads per block.
    pub block: [u32; 3],
    /// For each launch-grid dimension: the grid axis (0 = x, 1 = y, 2 = z) it walks and the
    /// points one block covers along it per pass.
    pub grid_map: [(usize, u32); 3],
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Pointer or texture input.
    pub input: InputKind,
    /// Number of outputs.
    pub outputs: usize,
    /// Weights to copy into `__constant__` memory, if any.
    pub constants: Option<ConstantWeights>,
    /// Element type.
    pub precision: Precision,
    /// The kernel needs `nx` to be a multiple of this (vector loads).
    pub x_multiple: u32,
    /// Each thread does one point and the kernel does not loop: the launch grid must cover
    /// the array in one pass (see [`CudaSource::uncovered`]).
    pub single_pass: bool,
    /// The boxes (points along x, y, z) of the TMA tensor maps over the input that the kernel
    /// takes as its last parameters (`tmap0`, `tmap1`, …), if it takes any: the launcher
    /// encodes one map per box.
    pub tensor_boxes: Vec<[u32; 3]>,
}

/// Blocks per launch along x, y and z that fdlab uses (x is CUDA's 2³¹ − 1, capped lower since
/// kernels that loop need no more).
pub const GRID_LIMITS: [u64; 3] = [1 << 20, 65535, 65535];

/// The helpers every kernel uses, guarded so several kernels can share one module.
pub const PRELUDE: &str = include_str!("prelude.cu");

impl CudaSource {
    /// The complete translation unit: prelude and kernel.
    pub fn source(&self) -> String {
        format!("{PRELUDE}\n{}", self.body)
    }

    /// The launch grid for a grid of `shape`, capped at CUDA's limits (the kernel loops over
    /// what one launch does not cover).
    pub fn grid_dims(&self, shape: [usize; 3]) -> [u32; 3] {
        let caps = GRID_LIMITS;
        let mut g = [1u32; 3];
        for d in 0..3 {
            let (axis, per) = self.grid_map[d];
            let n = shape[axis] as u64;
            g[d] = n.div_ceil(per.max(1) as u64).clamp(1, caps[d]) as u32;
        }
        g
    }

    /// For a [`CudaSource::single_pass`] kernel, the first launch dimension whose blocks for
    /// `shape` exceed CUDA's limit, as (dimension, blocks needed, limit); `None` when the
    /// launch covers the array (always, for kernels that loop).
    pub fn uncovered(&self, shape: [usize; 3]) -> Option<(usize, u64, u64)> {
        if !self.single_pass {
            return None;
        }
        (0..3).find_map(|d| {
            let (axis, per) = self.grid_map[d];
            let blocks = (shape[axis] as u64).div_ceil(per.max(1) as u64);
            (blocks > GRID_LIMITS[d]).then_some((d, blocks, GRID_LIMITS[d]))
        })
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
}

impl fmt::Display for CudaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source())
    }
}

/// Why a kernel could not be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("strategy {strategy} cannot run {stencils}: {reason}")]
pub struct Unsupported {
    /// The strategy asked for.
    pub strategy: String,
    /// The stencils' labels.
    pub stencils: String,
    /// Why.
    pub reason: String,
}

/// FNV-1a, 64 bits: a stable hash for kernel names (std's hasher may change between releases).
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}
