//! The crate's error type.

/// Everything that can go wrong while splitting a grid or running its parts.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No process grid splits the grid into subdomains wide enough for the halo.
    #[error(
        "{ranks} processes cannot split a {shape:?} grid into subdomains of at least {min} \
         points per axis; use fewer processes or a larger grid"
    )]
    CannotSplit {
        /// Processes in the job.
        ranks: usize,
        /// The global grid.
        shape: [usize; 3],
        /// Smallest subdomain extent allowed (the halo width, at least 1).
        min: usize,
    },
    /// A given process grid does not have as many processes as the job.
    #[error("process grid {dims:?} has {product} processes but the job has {ranks}")]
    ProcessCount {
        /// The process grid given.
        dims: [usize; 3],
        /// Its number of processes.
        product: usize,
        /// Processes in the job.
        ranks: usize,
    },
    /// A given process grid splits an axis the grid does not have.
    #[error("process grid {dims:?} splits axis {axis}, but the grid has {dim} axes")]
    UnusedAxis {
        /// The process grid given.
        dims: [usize; 3],
        /// The axis.
        axis: usize,
        /// Axes of the grid.
        dim: usize,
    },
    /// A subdomain is narrower than the halo its neighbours need from it.
    #[error(
        "process grid {dims:?}: along axis {axis} a subdomain has {extent} points, fewer than \
         the halo width {halo}; use fewer processes along that axis"
    )]
    HaloTooWide {
        /// The process grid.
        dims: [usize; 3],
        /// The axis.
        axis: usize,
        /// The narrowest subdomain extent along it.
        extent: usize,
        /// The halo width (stencil radius).
        halo: usize,
    },
    /// The case or option cannot run decomposed (the message says what and what to use).
    #[error("not supported on several processes: {0}")]
    Unsupported(String),
    /// Exchanging data with another process failed (it ended, or did not answer in time).
    #[error("rank {rank}: {detail}")]
    Transport {
        /// The process that saw the failure.
        rank: usize,
        /// What happened.
        detail: String,
    },
    /// An error from the solvers (a case, a stepper, an output).
    #[error(transparent)]
    Solver(#[from] fdlab_solvers::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Variable-density waves run on one process (their fields are a step description's,
    /// which the decomposed steppers do not split yet).
    pub(crate) fn density_refused() -> Error {
        Error::Unsupported(
            "variable-density waves (material.density) on several processes or GPUs; run the \
             case on one"
                .into(),
        )
    }
}
