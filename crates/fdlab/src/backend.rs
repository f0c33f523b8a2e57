//! Backends: where fields live and plans run.

use crate::error::{Error, Result};
use crate::field::{BackendField, Real};
use fdlab_core::{Field, Grid};
use fdlab_cuda::Device;

/// The environment variable [`Backend::from_env`] reads: `auto`, `cpu` or `cuda` (read through
/// [`fdlab_core::config::backend`], with the rest of fdlab's configuration).
pub const BACKEND_ENV: &str = fdlab_core::config::BACKEND;

pub use fdlab_core::BackendKind;

impl From<fdlab_core::UnknownBackend> for Error {
    fn from(e: fdlab_core::UnknownBackend) -> Error {
        Error::UnknownBackend { name: e.name }
    }
}

/// Where fields live and plans run: the CPU or one CUDA device. Cheap to clone.
///
/// ```
/// let cpu = fdlab::Backend::cpu();
/// assert_eq!(cpu.name(), "cpu");
/// assert!(cpu.device().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct Backend {
    inner: Inner,
    fallback: Option<String>,
}

#[derive(Debug, Clone)]
enum Inner {
    Cpu,
    Cuda(Device),
}

impl Backend {
    /// The CPU backend: fields in host memory, plans run by `fdlab_cpu::fast` on all cores.
    ///
    /// ```
    /// assert_eq!(fdlab::Backend::cpu().name(), "cpu");
    /// ```
    pub fn cpu() -> Backend {
        Backend {
            inner: Inner::Cpu,
            fallback: None,
        }
    }

    /// CUDA device `ordinal`, or an error that says why it cannot be used.
    ///
    /// ```
    /// match fdlab::Backend::cuda(0) {
    ///     Ok(b) => assert_eq!(b.name(), "cuda"),
    ///     Err(why) => println!("no GPU: {why}"),
    /// }
    /// ```
    pub fn cuda(ordinal: usize) -> Result<Backend> {
        Ok(Backend::from_device(Device::open(ordinal)?))
    }

    /// A backend on an already opened device.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let b = fdlab::Backend::from_device(dev);
    /// assert_eq!(b.name(), "cuda");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_device(device: Device) -> Backend {
        Backend {
            inner: Inner::Cuda(device),
            fallback: None,
        }
    }

    /// CUDA device 0 when it can be used, else the CPU; [`Backend::fallback_reason`] then
    /// says why the GPU was not taken.
    ///
    /// ```
    /// let b = fdlab::Backend::auto();
    /// if b.name() == "cpu" {
    ///     println!("CPU: {}", b.fallback_reason().unwrap_or("asked for"));
    /// }
    /// ```
    pub fn auto() -> Backend {
        match Device::open(0) {
            Ok(dev) => Backend::from_device(dev),
            Err(why) => Backend {
                inner: Inner::Cpu,
                fallback: Some(why.to_string()),
            },
        }
    }

    /// Opens the backend `kind` names.
    ///
    /// ```
    /// use fdlab::{Backend, BackendKind};
    /// assert_eq!(Backend::open(BackendKind::Cpu).unwrap().name(), "cpu");
    /// ```
    pub fn open(kind: BackendKind) -> Result<Backend> {
        match kind {
            BackendKind::Auto => Ok(Backend::auto()),
            BackendKind::Cpu => Ok(Backend::cpu()),
            BackendKind::Cuda => Backend::cuda(0),
        }
    }

    /// The backend [`BACKEND_ENV`] (`FDLAB_BACKEND`) names; `auto` when it is unset.
    ///
    /// ```
    /// // SAFETY: nothing else runs in this program yet.
    /// unsafe { std::env::set_var("FDLAB_BACKEND", "cpu") };
    /// assert_eq!(fdlab::Backend::from_env().unwrap().name(), "cpu");
    /// ```
    pub fn from_env() -> Result<Backend> {
        Backend::open(BackendKind::from_env()?)
    }

    /// `"cpu"` or `"cuda"`.
    ///
    /// ```
    /// assert_eq!(fdlab::Backend::cpu().name(), "cpu");
    /// ```
    pub fn name(&self) -> &'static str {
        match self.inner {
            Inner::Cpu => "cpu",
            Inner::Cuda(_) => "cuda",
        }
    }

    /// The CUDA device, for device-only work (event timing, copy peak); `None` on the CPU.
    ///
    /// ```
    /// assert!(fdlab::Backend::cpu().device().is_none());
    /// ```
    pub fn device(&self) -> Option<&Device> {
        match &self.inner {
            Inner::Cpu => None,
            Inner::Cuda(d) => Some(d),
        }
    }

    /// Why [`Backend::auto`] chose the CPU, if it did.
    ///
    /// ```
    /// assert!(fdlab::Backend::cpu().fallback_reason().is_none());
    /// ```
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// A copy of `host` on this backend.
    ///
    /// ```
    /// use fdlab::{Backend, Field, Grid};
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let u = Field::<f64>::random(&g, 1);
    /// let b = Backend::cpu();
    /// assert_eq!(b.upload(&u)?.to_host()?, u);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn upload<T: Real>(&self, host: &Field<T>) -> Result<BackendField<T>> {
        match &self.inner {
            Inner::Cpu => Ok(BackendField::host(host.clone())),
            Inner::Cuda(d) => Ok(BackendField::device(fdlab_cuda::DeviceField::upload(
                d, host,
            )?)),
        }
    }

    /// A field of zeros on `grid`, on this backend.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[4, 4, 4])?;
    /// let z = Backend::cpu().zeros::<f32>(&g)?;
    /// assert!(z.to_host()?.as_slice().iter().all(|&v| v == 0.0));
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn zeros<T: Real>(&self, grid: &Grid) -> Result<BackendField<T>> {
        match &self.inner {
            Inner::Cpu => Ok(BackendField::host(Field::zeros(grid))),
            Inner::Cuda(d) => Ok(BackendField::device(fdlab_cuda::DeviceField::zeros(
                d, grid,
            )?)),
        }
    }

    /// Waits for all work queued on this backend (the CPU never queues).
    ///
    /// ```
    /// fdlab::Backend::cpu().synchronize()?;
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        if let Inner::Cuda(d) = &self.inner {
            d.synchronize()?;
        }
        Ok(())
    }
}
