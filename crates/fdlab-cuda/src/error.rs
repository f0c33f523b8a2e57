//! The one error type of `fdlab-cuda`.

/// Everything that can go wrong on the CUDA path. Messages say what to do.
///
/// ```
/// use fdlab_cuda::Error;
/// let e = Error::OutputCount { expected: 3, got: 1 };
/// assert_eq!(e.to_string(), "the plan writes 3 output field(s), 1 were given");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable GPU: no driver library, no device, or the driver refused.
    #[error("no CUDA device: {reason}")]
    NoDevice {
        /// Why.
        reason: String,
    },
    /// NVRTC is not installed or not on the library path.
    #[error(
        "NVRTC (libnvrtc) not found: {reason}. Install the CUDA toolkit or \
         `pip install nvidia-cuda-nvrtc==13.0.88` and add its lib folder to LD_LIBRARY_PATH"
    )]
    NoNvrtc {
        /// Why.
        reason: String,
    },
    /// NVRTC rejected a generated kernel.
    #[error("NVRTC could not compile {name}; source written to {source_path}\n{log}")]
    Compile {
        /// Kernel or module name.
        name: String,
        /// The compiler's log.
        log: String,
        /// Where the source was written for inspection.
        source_path: String,
    },
    /// A request beyond the device's limits, refused before launch.
    #[error("{what}: requested {requested}, the device allows at most {max}")]
    ResourceLimit {
        /// What was asked for.
        what: String,
        /// How much.
        requested: u64,
        /// The limit.
        max: u64,
    },
    /// A vector kernel needs `nx` to be a multiple of its vector width.
    #[error("{kernel} loads vectors of {multiple} x points and needs nx to be a multiple of {multiple}, got nx = {nx}; pick a strategy with a smaller vector width")]
    Misaligned {
        /// The kernel.
        kernel: String,
        /// The grid's nx.
        nx: usize,
        /// The multiple needed.
        multiple: u32,
    },
    /// Not enough free device memory, found before allocating.
    #[error(
        "out of device memory: needs {:.2} GiB, {:.2} GiB free ({needed} bytes asked, \
         {free} free, {kept} kept for the driver); use a smaller grid or free device memory",
        gib(*needed),
        gib(*free)
    )]
    OutOfMemory {
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        free: u64,
        /// Bytes kept free for the context and the driver ([`crate::memory::MARGIN`]).
        kept: u64,
    },
    /// A field's shape differs from the plan's (or from the host field it is copied to).
    #[error(
        "shape mismatch for {what}: expected {expected:?}, got {got:?}; give fields on the \
         plan's grid"
    )]
    ShapeMismatch {
        /// Which argument.
        what: String,
        /// The shape required.
        expected: [usize; 3],
        /// The shape given.
        got: [usize; 3],
    },
    /// A field of the wrong scalar type for a plan.
    #[error(
        "precision mismatch for {what}: the plan computes in {expected}, the field holds \
         {got}; convert the field or build a plan for {got}"
    )]
    Precision {
        /// Which argument.
        what: String,
        /// The plan's precision.
        expected: fdlab_core::Precision,
        /// The field's precision.
        got: fdlab_core::Precision,
    },
    /// A field that lives on another device handle than the plan.
    #[error(
        "{what} was allocated on device handle {got}, the plan runs on handle {expected}; \
         allocate fields with the plan's device"
    )]
    WrongDevice {
        /// Which argument.
        what: String,
        /// The plan's device id.
        expected: u64,
        /// The field's device id.
        got: u64,
    },
    /// The wrong number of output fields for a plan.
    #[error("the plan writes {expected} output field(s), {got} were given")]
    OutputCount {
        /// Outputs the plan writes.
        expected: usize,
        /// Outputs given.
        got: usize,
    },
    /// The plan's device handle was dropped.
    #[error("the device this plan was built for is gone (every Device handle was dropped); open the device again and rebuild the plan")]
    DeviceGone,
    /// A sub-box that does not lie inside its field.
    #[error("box {lo:?}..{hi:?} is not inside a field of shape {shape:?}; give lo < hi <= shape on every axis")]
    BadBox {
        /// Lower corner.
        lo: [usize; 3],
        /// Upper corner (exclusive).
        hi: [usize; 3],
        /// The field's shape.
        shape: [usize; 3],
    },
    /// Weights that are not finite, or vanish, in the plan's precision.
    #[error("stencil {stencil}: weight {weight:e} becomes {as_precision} in {precision}; rescale the grid spacing or use f64")]
    Weight {
        /// The stencil's label.
        stencil: String,
        /// The weight.
        weight: f64,
        /// What it becomes (`inf`, `0`).
        as_precision: String,
        /// The plan's precision.
        precision: fdlab_core::Precision,
    },
    /// The strategy cannot run these stencils.
    #[error(transparent)]
    Unsupported(#[from] crate::codegen::Unsupported),
    /// A driver call failed.
    #[error("CUDA driver error in {call}: {detail}")]
    Driver {
        /// The call.
        call: String,
        /// The driver's message.
        detail: String,
    },
    /// Bad grid, stencil or field.
    #[error(transparent)]
    Model(#[from] fdlab_core::Error),
    /// An invalid step description, or parameters that do not match it.
    #[error(transparent)]
    Step(#[from] fdlab_core::step::StepError),
    /// A strategy name that does not parse; the message gives the nearest valid name.
    #[error(transparent)]
    Strategy(#[from] crate::strategy::StrategyError),
    /// The tune cache file could not be read, parsed or written.
    #[error("tune cache {path}: {detail}")]
    TuneCache {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// A name of an option that is not one of its values.
    #[error("{what} `{given}`: expected {expected}")]
    BadName {
        /// The option.
        what: &'static str,
        /// What was given.
        given: String,
        /// The names it accepts.
        expected: &'static str,
    },
}

/// Bytes as GiB, for messages.
pub(crate) fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a driver error with the call that failed.
pub(crate) fn driver(call: &str) -> impl FnOnce(cudarc::driver::DriverError) -> Error + '_ {
    move |e| Error::Driver {
        call: call.to_string(),
        detail: format!("{e:?}"),
    }
}
