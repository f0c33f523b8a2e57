//! The one error type of `fdlab-cuda`.

/// Everything that can go wrong on the CUDA path. Messages say what to do.
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
    /// Not enough free device memory.
    #[error(
        "out of device memory: need {needed} bytes ({:.2} GiB), {free} free ({:.2} GiB); \
         use a smaller grid",
        *needed as f64 / 1073741824.0,
        *free as f64 / 1073741824.0
    )]
    OutOfMemory {
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        free: u64,
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
