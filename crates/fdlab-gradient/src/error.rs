//! What can go wrong, each message saying what to do.

use std::path::PathBuf;

/// Errors of misfit and gradient runs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The case, its setup or its run failed in the solvers.
    #[error(transparent)]
    Solver(#[from] fdlab_solvers::Error),
    /// The step description or its adjoint refused the model.
    #[error(transparent)]
    Step(#[from] fdlab_core::step::StepError),
    /// A grid or field was refused.
    #[error(transparent)]
    Core(#[from] fdlab_core::Error),
    /// An output file could not be read or written.
    #[error(transparent)]
    Output(#[from] fdlab_output::Error),
    /// The case is not a wave case.
    #[error("{path}: fdlab gradient takes wave cases (physics = \"wave\"), not {physics}")]
    NotWave {
        /// The case file.
        path: PathBuf,
        /// Its physics.
        physics: String,
    },
    /// The case has no receivers, so the misfit is zero.
    #[error("the case has no receivers: add [[receivers]] where the observed data were recorded")]
    NoReceivers,
    /// The observed data are missing.
    #[error(
        "no observed data at {path}: run the observed model with `fdlab run OBSERVED.toml --out \
         DIR` and give --observed DIR (the folder holding its seismogram.npy)"
    )]
    ObservedMissing {
        /// The file looked for.
        path: PathBuf,
    },
    /// The observed seismogram's shape is not receivers × steps of the case.
    #[error(
        "{path} has shape {found:?}, but the case records {receivers} receivers × {steps} steps \
         = [{receivers}, {steps}]: record the observed data with the same receivers, time step \
         and duration (give [time] dt rather than cfl, so that a different velocity keeps the \
         step), or fix the case"
    )]
    ObservedShape {
        /// The seismogram file.
        path: PathBuf,
        /// Its shape.
        found: Vec<usize>,
        /// Receivers of the case.
        receivers: usize,
        /// Steps of the case.
        steps: usize,
    },
    /// The observed data hold a value that is not finite.
    #[error("{path}: sample {index} is {value}; the observed data must be finite")]
    ObservedNonFinite {
        /// The seismogram file.
        path: PathBuf,
        /// Flat index of the sample.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// The checkpoints asked for do not fit the memory budget.
    #[error(
        "{what} needs {needed_gb:.3} GB, more than the memory budget of {budget_gb:.3} GB: give \
         a larger --memory, or fewer --checkpoints (each holds {slot_gb:.3} GB)"
    )]
    Memory {
        /// What was asked for.
        what: String,
        /// Bytes needed, in GB.
        needed_gb: f64,
        /// The budget, in GB.
        budget_gb: f64,
        /// Bytes of one checkpoint, in GB.
        slot_gb: f64,
    },
    /// The output directory holds another run's gradient files.
    #[error(
        "{dir} already holds {files}: give --overwrite to replace them, or --out DIR to write \
         elsewhere"
    )]
    OutputExists {
        /// The directory.
        dir: PathBuf,
        /// The files found, comma separated.
        files: String,
    },
    /// A value of the model or the options is out of range.
    #[error("{0}")]
    Usage(String),
    /// The forward run blew up.
    #[error(
        "the forward run is not finite at step {step} (value {value}): the model is unstable \
         with this time step; lower [time] dt or the velocity"
    )]
    NonFinite {
        /// The step (1-based: after that many steps).
        step: usize,
        /// The first bad value.
        value: f64,
    },
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The exit status a command line should give: 2 when the inputs do not fit together
    /// (observed data, receivers, memory budget, output directory, options), 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NotWave { .. }
            | Error::NoReceivers
            | Error::ObservedMissing { .. }
            | Error::ObservedShape { .. }
            | Error::ObservedNonFinite { .. }
            | Error::Memory { .. }
            | Error::OutputExists { .. }
            | Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
