//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while writing or reading an output file.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An `.npy` (or `.vti`, `.pvd`) file is malformed or does not match what was asked.
    #[error("{path}: {detail}")]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
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
    /// An argument is out of range, or a writer thread stopped (the message says which).
    #[error("{0}")]
    Invalid(String),
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Attach a path to an I/O error.
pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
