//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while loading, validating or running a case.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The case file does not parse or names an unknown key; the message names the key and line.
    #[error("{path}: {detail}")]
    Case {
        /// The case file.
        path: PathBuf,
        /// What is wrong and where.
        detail: String,
    },
    /// A value in the case is out of range (the message says which key and what to use).
    #[error("invalid case: {0}")]
    Invalid(String),
    /// A command-line option or API argument is wrong (the message says which and what to
    /// give instead).
    #[error("{0}")]
    Usage(String),
    /// The time step is above the stability limit.
    #[error(
        "time step {dt:e} is above the stability limit {limit:e} ({why}); use dt <= {limit:e}"
    )]
    Unstable {
        /// The requested time step.
        dt: f64,
        /// The largest stable time step.
        limit: f64,
        /// How the limit was derived.
        why: String,
    },
    /// The solution became NaN or infinite.
    #[error(
        "non-finite value {value} at step {step}, cell {cell:?}; reduce dt or check the inputs"
    )]
    NonFinite {
        /// The step that produced it.
        step: u64,
        /// Grid indices `[i, j, k]` of the first bad cell found.
        cell: [usize; 3],
        /// The value found.
        value: f64,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not enough free disk space for the planned outputs.
    #[error("{path}: the outputs need about {needed} bytes but only {free} are free; free space or write fewer outputs")]
    DiskSpace {
        /// The output directory.
        path: PathBuf,
        /// Estimated bytes needed.
        needed: u64,
        /// Bytes available.
        free: u64,
    },
    /// A checkpoint cannot be resumed with this case.
    #[error("checkpoint {path} refused: {reason}")]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// Why it does not fit.
        reason: String,
    },
    /// An `.npy` file is malformed or does not match the grid.
    #[error("{path}: {detail}")]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A `[geometry]` file (positions or wavelets of shots) is malformed, has the wrong
    /// shape, or holds a position that is not finite or lies outside the grid.
    #[error("{path}: {key}: {detail}")]
    Geometry {
        /// The file.
        path: PathBuf,
        /// The case key that names it, e.g. `geometry.sources`.
        key: String,
        /// What is wrong, with the row or shot, and what to give instead.
        detail: String,
    },
    /// Drawing a picture failed.
    #[error("plot {path}: {detail}")]
    Plot {
        /// The picture being written.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// The GPU could not be used or failed (no device, no NVRTC, out of device memory, a
    /// driver error); the message says which.
    #[error("GPU: {0}")]
    Gpu(#[from] fdlab_cuda::Error),
    /// Filling halos from elsewhere (a neighbouring subdomain) failed.
    #[error("halo exchange failed: {0}")]
    Halo(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A GPU schedule was refused (the message says what is allowed).
    #[error(transparent)]
    Schedule(#[from] crate::gpu::schedule::ScheduleError),
    /// An error from fdlab-core (grid or stencil construction).
    #[error(transparent)]
    Core(#[from] fdlab_core::Error),
    /// A step description was refused (the message says what to change).
    #[error(transparent)]
    Step(#[from] fdlab_core::step::StepError),
    /// An error from the output writers that none of the variants above describes.
    #[error(transparent)]
    Output(fdlab_output::Error),
}

/// The writers' errors keep the variants they had in this crate ([`Error::Io`],
/// [`Error::Npy`], [`Error::Plot`], [`Error::Invalid`]), so that callers matching on them
/// see no difference.
impl From<fdlab_output::Error> for Error {
    fn from(e: fdlab_output::Error) -> Error {
        use fdlab_output::Error as O;
        match e {
            O::Io { path, source } => Error::Io { path, source },
            O::Npy { path, detail } => Error::Npy { path, detail },
            O::Plot { path, detail } => Error::Plot { path, detail },
            O::Invalid(detail) => Error::Invalid(detail),
            other => Error::Output(other),
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Attach a path to an I/O error.
pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
