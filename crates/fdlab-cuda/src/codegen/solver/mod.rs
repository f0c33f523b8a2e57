//! CUDA C of the solvers' time steps: the heat and wave steps (register queues, shared-memory
//! tiles, rings of `cp.async` slots), their CPML, the temporally blocked passes and the FDTD
//! kernels. Pure: each generator takes a plain spec of this module and returns the kernel's
//! text, its name left as `@NAME@` for the caller to fill in; the solvers translate a setup
//! and its schedule into these specs and launch what comes out.
//!
//! Weights are literals in the kernel's type ([`literal`]); `ty` is `"float"` or `"double"`
//! throughout.

// The generators index per-axis arrays (weights, names, sizes) by the same axis number.
#![allow(clippy::needless_range_loop)]

pub mod cpml;
pub mod fdtd;
mod launch;
pub mod lower;
pub mod ring;
pub mod shape;
pub mod step;
pub mod temporal;
pub mod tiled;
pub mod wave_pass;

pub use launch::{Launch, SMS};
pub use lower::{Family, Lowered};
pub use shape::{Temporal, WaveShape};
pub use step::StepSpec;

/// The bytes of one value of the kernel's type (`"float"` or `"double"`).
pub fn value_bytes(ty: &str) -> usize {
    if ty == "float" {
        4
    } else {
        8
    }
}

/// A literal of `w` in the kernel's type: the value the CPU stepper converts the weight to.
pub fn literal(w: f64, ty: &str) -> String {
    if ty == "float" {
        format!("{:?}f", w as f32)
    } else {
        format!("{w:?}")
    }
}

/// Helpers the step kernels share (`fd_wrap`, `fd_inside`), guarded so that several kernels
/// can include them.
pub const PRELUDE: &str = "\
#ifndef FDLAB_SOLVER_HELPERS
#define FDLAB_SOLVER_HELPERS
__device__ __forceinline__ int fd_wrap(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }
__device__ __forceinline__ bool fd_inside(int i, int n) { return i >= 0 && i < n; }
#endif
";

/// Copies the `w × h` samples `u[start + j·stride·nx + i·stride]` into `out` as `double`
/// (`ty`: the field's type), one thread per sample: a picture's strided plane picked on the
/// device so that only the samples cross the bus.
pub fn sample_plane(ty: &str) -> String {
    format!(
        "extern \"C\" __global__ void @NAME@(const {t}* __restrict__ u, double* __restrict__ out,\n\
         \x20   unsigned long long start, long long nx, long long stride, int w, int h) {{\n\
         \x20 int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;\n\
         \x20 if (i < w && j < h) out[(long long)j * w + i] = (double)u[start + j * stride * nx + i * stride];\n\
         }}\n",
        t = ty
    )
}
