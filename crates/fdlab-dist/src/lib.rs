//! Domain decomposition for fdlab's solvers: a global grid split over a Cartesian process grid,
//! with halo exchange as one more boundary kind (periodic across ranks, zero at the grid's
//! edges) for any halo width.
//!
//! - [`Decomposition`]: each rank's block and neighbours; the process grid given, or chosen to
//!   exchange the least halo surface.
//! - [`Transport`]: paired point-to-point messages; [`LocalTransport`] runs ranks as threads
//!   (what the tests use), `mpi::MpiTransport` (feature `mpi`) as MPI processes.
//! - [`DistStepper`]: one rank's part of a CPU heat or wave stepper, whose field, receiver
//!   traces and checkpoint state are gathered on rank 0; [`run()`] runs a case file with it.
//!
//! ```
//! use fdlab_dist::Decomposition;
//! // 6 processes on a 120 × 40 periodic grid, 4th order (halo 2): split along x only.
//! let d = Decomposition::new([120, 40, 1], 2, 6, None, [true; 3], 2)?;
//! assert_eq!(d.dims(), [6, 1, 1]);
//! assert_eq!(d.subdomain(5).offset, [100, 0, 0]);
//! # Ok::<(), fdlab_dist::Error>(())
//! ```
#![warn(missing_docs)]

pub mod cases;
mod checkpoint;
pub mod decomp;
mod error;
pub mod gpu;
#[cfg(feature = "testing")]
pub mod gpu_check;
#[cfg(feature = "testing")]
pub mod gpu_resume;
pub mod halo;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod part;
mod run;
pub mod slab;
mod state;
pub mod stepper;
pub mod threads;
pub mod transport;

pub use decomp::{Decomposition, Neighbour, Subdomain};
pub use error::{Error, Result};
pub use gpu::DistOptions;
pub use halo::HaloExchange;
pub use local::LocalTransport;
pub use run::{decompose, last_axis_split, run, run_on};
pub use stepper::DistStepper;
pub use transport::Transport;
