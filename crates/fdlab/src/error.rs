//! The one error type of the `fdlab` front.

/// Everything that can go wrong through the front. Messages say what to do.
///
/// ```
/// let e = fdlab::Error::UnknownBackend { name: "gpu".into() };
/// assert!(e.to_string().contains("auto, cpu, cuda"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model error: grid, stencil, boundary or field shape.
    #[error(transparent)]
    Core(#[from] fdlab_core::Error),
    /// An error of the CUDA backend (no device, compile, launch, memory).
    #[error(transparent)]
    Cuda(#[from] fdlab_cuda::Error),
    /// A backend name that is not `auto`, `cpu` or `cuda`.
    #[error("unknown backend '{name}'; valid backends: auto, cpu, cuda")]
    UnknownBackend {
        /// The name given.
        name: String,
    },
    /// An option that only the CUDA backend reads, given to the CPU backend.
    #[error("{option} applies to the CUDA backend only; drop it or choose the cuda backend")]
    GpuOnly {
        /// The option.
        option: &'static str,
    },
    /// A field of one backend given to a plan of another.
    #[error("a field on the {got} backend was given to a plan on the {expected} backend; create the field with the plan's backend")]
    WrongBackend {
        /// The plan's backend.
        expected: &'static str,
        /// The field's backend.
        got: &'static str,
    },
    /// A field whose grid differs from the plan's.
    #[error("shape mismatch for {what}: expected {expected:?}, got {got:?}; give fields on the plan's grid")]
    Shape {
        /// Which argument.
        what: &'static str,
        /// The plan's shape.
        expected: [usize; 3],
        /// The field's shape.
        got: [usize; 3],
    },
    /// Not as many output fields as the plan has stencils.
    #[error("the plan writes {expected} output field(s), {got} were given")]
    OutputCount {
        /// Stencils in the plan.
        expected: usize,
        /// Outputs given.
        got: usize,
    },
}

/// `Result` with the front's [`enum@Error`].
pub type Result<T> = std::result::Result<T, Error>;
