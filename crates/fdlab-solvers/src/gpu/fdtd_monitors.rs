//! Running DFT monitors of the GPU FDTD stepper (a flux plane is two of them): each monitor's
//! spectra stay on the device and gain one term per step, from a kernel over the plane's
//! points, so that no field leaves the device during the run (the seed's "real-time spectral
//! accumulation"). The terms are the CPU's ([`DftMonitor::accumulate`]): the same weights,
//! computed on the host for every step of a call and uploaded once per call, and the same
//! rounding (a product, then a sum: no fused multiply-add), so the spectra differ from the
//! CPU's only as much as the fields do.

use super::fdtd_points::comp;
use super::{driver, Gpu};
use crate::error::Result;
use crate::fdtd::DftMonitor;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_core::Precision;
use fdlab_cuda::codegen::solver::Launch;
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use std::f64::consts::PI;
use std::sync::Arc;

/// One monitor on the device.
struct DeviceMonitor {
    /// The monitor as the CPU simulation made it: spec, shape and (zero) spectra.
    host: DftMonitor,
    /// Storage index of each plane point.
    cells: CudaSlice<i64>,
    /// Component numbers as in the FDTD kernels (ex, ey, ez, hx, hy, hz).
    comps: CudaSlice<i32>,
    /// `(Δt cos ωt, −Δt sin ωt)` per step of the current call, frequency and component.
    weights: CudaSlice<f64>,
    re: CudaSlice<f64>,
    im: CudaSlice<f64>,
}

/// The monitors of a GPU FDTD stepper and their kernel.
pub(super) struct DeviceMonitors {
    kernel: Arc<Kernel>,
    list: Vec<DeviceMonitor>,
}

/// The kernel for fields of C type `ty`: one thread per plane point, adding `v·w` to each of
/// its spectra.
pub(super) fn source(ty: &str, precision: Precision) -> CudaSource {
    let body = fdlab_cuda::codegen::solver::fdtd::dft(ty);
    let launch = Launch::flat(256);
    super::source("fdtd_dft", &body, precision, launch)
}

impl DeviceMonitors {
    /// The monitors `monitors` (as the CPU simulation made them) on the device, zeroed; `None`
    /// when there are none.
    pub(super) fn new(
        gpu: &Gpu,
        kernel: Arc<Kernel>,
        monitors: &[DftMonitor],
    ) -> Result<Option<Self>> {
        if monitors.is_empty() {
            return Ok(None);
        }
        let mut list = Vec::new();
        for m in monitors {
            let cells: Vec<i64> = m.cells().iter().map(|&c| c as i64).collect();
            let comps: Vec<i32> = m.spec.components.iter().map(|&c| comp(c)).collect();
            list.push(DeviceMonitor {
                host: m.clone(),
                cells: gpu.upload(&cells)?,
                comps: gpu.upload(&comps)?,
                weights: gpu.zeros(2 * comps.len() * m.spec.frequencies.len())?,
                re: gpu.upload(&m.re)?,
                im: gpu.upload(&m.im)?,
            });
        }
        Ok(Some(DeviceMonitors { kernel, list }))
    }

    /// Uploads the weights of the `steps` steps after step `first`: the term of step `n`
    /// (counted after it) is taken at `n·Δt` for E and `(n − ½)·Δt` for H.
    pub(super) fn prepare(&mut self, gpu: &Gpu, first: u64, steps: usize, dt: f64) -> Result<()> {
        for m in &mut self.list {
            let spec = &m.host.spec;
            let mut w =
                Vec::with_capacity(2 * steps * spec.frequencies.len() * spec.components.len());
            for i in 0..steps {
                let n = (first + i as u64 + 1) as f64;
                for &f in &spec.frequencies {
                    for c in &spec.components {
                        let half = if c.is_electric() { 0.0 } else { 0.5 };
                        let (s, co) = (2.0 * PI * f * (n - half) * dt).sin_cos();
                        w.push(co * dt);
                        w.push(-s * dt);
                    }
                }
            }
            if m.weights.len() < w.len() {
                m.weights = gpu.zeros(w.len())?;
            }
            gpu.stream
                .memcpy_htod(&w, &mut m.weights)
                .map_err(driver("cuMemcpyHtoD"))?;
        }
        Ok(())
    }

    /// Queues step `i` of the current call's terms, from the fields after that step.
    pub(super) fn queue<T: CudaScalar>(
        &mut self,
        gpu: &Gpu,
        fields: [&CudaSlice<T>; 6],
        i: usize,
    ) -> Result<()> {
        let kernel = &self.kernel;
        for m in &mut self.list {
            let spec = &m.host.spec;
            let (nc, nf) = (spec.components.len(), spec.frequencies.len());
            let np = m.cells.len();
            let per_step = 2 * nc * nf;
            let w = m.weights.slice(i * per_step..(i + 1) * per_step);
            let (np_i, nc_i, nf_i) = (np as i32, nc as i32, nf as i32);
            let mut b = gpu.stream.launch_builder(kernel.function());
            for f in fields {
                b.arg(f);
            }
            b.arg(&m.cells).arg(&m.comps).arg(&w);
            b.arg(&mut m.re).arg(&mut m.im);
            b.arg(&np_i).arg(&nc_i).arg(&nf_i);
            let cfg = LaunchConfig {
                grid_dim: (np.div_ceil(256).clamp(1, 1024) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the arguments match the kernel above; `cells` holds `np` indices inside
            // the grid, `comps` `nc` numbers below 6, `w` the 2·nc·nf weights of this step and
            // re and im nc·nf·np values each; each thread writes only its own points.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        }
        Ok(())
    }

    /// The monitors with their spectra so far.
    pub(super) fn spectra(&self, gpu: &Gpu) -> Result<Vec<DftMonitor>> {
        let mut out = Vec::with_capacity(self.list.len());
        for m in &self.list {
            let mut h = m.host.clone();
            h.re = gpu.download(&m.re)?;
            h.im = gpu.download(&m.im)?;
            out.push(h);
        }
        Ok(out)
    }

    /// The spectra as the CPU stepper saves them: each monitor's real, then imaginary parts.
    pub(super) fn state(&self, gpu: &Gpu) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        for m in &self.list {
            v.extend(gpu.download(&m.re)?);
            v.extend(gpu.download(&m.im)?);
        }
        Ok(v)
    }

    /// Values [`DeviceMonitors::state`] returns.
    pub(super) fn state_len(&self) -> usize {
        self.list.iter().map(|m| 2 * m.re.len()).sum()
    }

    /// Put back what [`DeviceMonitors::state`] returned (its length checked by the caller).
    pub(super) fn restore(&mut self, gpu: &Gpu, state: &[f64]) -> Result<()> {
        let mut at = 0;
        for m in &mut self.list {
            let n = m.re.len();
            gpu.stream
                .memcpy_htod(&state[at..at + n], &mut m.re)
                .map_err(driver("cuMemcpyHtoD"))?;
            gpu.stream
                .memcpy_htod(&state[at + n..at + 2 * n], &mut m.im)
                .map_err(driver("cuMemcpyHtoD"))?;
            at += 2 * n;
        }
        Ok(())
    }
}
