//! CPU executors for fdlab stencils.
//!
//! - [`mod@reference`]: plain loops, obviously right, slow.
//! - [`fast`]: rayon over blocks of planes, runs of rows, fused AVX2 loops (run-time detected)
//!   with streaming stores and software prefetch; see its module docs.
//! - [`copy`]: the CPU copy reference (a parallel copy with streaming stores) and its measure.
//!
//! Both take the same arguments and write the same points.
#![warn(missing_docs)]
// The SIMD helpers are `unsafe fn`s made of intrinsics, each called only where its CPU feature
// was detected: their bodies stay one unsafe context, as before edition 2024.
#![allow(unsafe_op_in_unsafe_fn)]

mod check;
pub mod copy;
pub mod fast;
mod par;
pub mod reference;
pub mod step;

pub use check::check_apply;
pub use par::Par;
