//! Point sources and probes of the FDTD stepper on the device: their cells and components,
//! the per-step source values of each call (computed on the host as the CPU stepper does)
//! and the rows of probe values the step kernel writes.

use super::{driver, Gpu};
use crate::error::Result;
use crate::fdtd::{Component, FdtdSetup, Waveform};
use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::Kernel;
use std::sync::Arc;

/// The component's number in the kernels: ex, ey, ez, hx, hy, hz.
pub(super) fn comp(c: Component) -> i32 {
    match c {
        Component::Ex => 0,
        Component::Ey => 1,
        Component::Ez => 2,
        Component::Hx => 3,
        Component::Hy => 4,
        Component::Hz => 5,
    }
}

/// Point sources and probes on the device, the kernel that applies and samples them, and
/// the per-step source values of the current call.
pub(super) struct Points {
    pub(super) kernel: Arc<Kernel>,
    pub(super) soft: Vec<(f64, Waveform)>,
    pub(super) soft_cell: CudaSlice<i64>,
    pub(super) soft_comp: CudaSlice<i32>,
    pub(super) soft_vals: CudaSlice<f64>,
    pub(super) hard: Vec<(f64, Waveform)>,
    pub(super) hard_cell: CudaSlice<i64>,
    pub(super) hard_comp: CudaSlice<i32>,
    pub(super) hard_vals: CudaSlice<f64>,
    pub(super) probe_cell: CudaSlice<i64>,
    pub(super) probe_comp: CudaSlice<i32>,
    /// Soft sources, hard sources and probes.
    pub(super) ns: i32,
    pub(super) nh: i32,
    pub(super) np: i32,
    /// One row of probe values per step of the current call.
    pub(super) rows: CudaSlice<f64>,
}

impl Points {
    pub(super) fn new(
        gpu: &Gpu,
        after: &CudaSource,
        s: &FdtdSetup,
        g: &crate::fdtd::Grid,
    ) -> Result<Self> {
        // Empty lists still need a valid pointer: one unused element.
        let cells = |v: Vec<i64>| if v.is_empty() { vec![0] } else { v };
        let comps = |v: Vec<i32>| if v.is_empty() { vec![0] } else { v };
        let idx = |c: [usize; 3]| g.index(c) as i64;
        let waves = |v: &[crate::fdtd::PointSource]| {
            v.iter()
                .map(|p| (p.amplitude, p.waveform))
                .collect::<Vec<_>>()
        };
        Ok(Points {
            kernel: gpu.kernel(after)?,
            soft: waves(&s.sources),
            soft_cell: gpu.upload(&cells(s.sources.iter().map(|p| idx(p.cell)).collect()))?,
            soft_comp: gpu.upload(&comps(
                s.sources.iter().map(|p| comp(p.component)).collect(),
            ))?,
            soft_vals: gpu.zeros(1)?,
            hard: waves(&s.hard_sources),
            hard_cell: gpu.upload(&cells(s.hard_sources.iter().map(|p| idx(p.cell)).collect()))?,
            hard_comp: gpu.upload(&comps(
                s.hard_sources.iter().map(|p| comp(p.component)).collect(),
            ))?,
            hard_vals: gpu.zeros(1)?,
            probe_cell: gpu.upload(&cells(s.probes.iter().map(|p| idx(p.1)).collect()))?,
            probe_comp: gpu.upload(&comps(s.probes.iter().map(|p| comp(p.0)).collect()))?,
            ns: s.sources.len() as i32,
            nh: s.hard_sources.len() as i32,
            np: s.probes.len() as i32,
            rows: gpu.zeros(1)?,
        })
    }

    /// Pushes the arguments every kernel that applies the points takes after the fields:
    /// soft sources (cells, components, values, count), hard ones, probes (cells, components,
    /// count), the rows of probe values and the call's step `row`.
    pub(super) fn args<'a>(&'a mut self, b: &mut LaunchArgs<'a>, row: &'a i32) {
        b.arg(&self.soft_cell)
            .arg(&self.soft_comp)
            .arg(&self.soft_vals)
            .arg(&self.ns);
        b.arg(&self.hard_cell)
            .arg(&self.hard_comp)
            .arg(&self.hard_vals)
            .arg(&self.nh);
        b.arg(&self.probe_cell).arg(&self.probe_comp).arg(&self.np);
        b.arg(&mut self.rows).arg(row);
    }

    /// Sizes the buffers for `steps` steps from step `first` on and uploads the source values
    /// the CPU would compute: soft ones at `(n + ½)·Δt`, hard ones at `(n + 1)·Δt`.
    pub(super) fn prepare(&mut self, gpu: &Gpu, first: u64, steps: usize, dt: f64) -> Result<()> {
        let values = |list: &[(f64, Waveform)], half: f64| -> Vec<f64> {
            (0..steps)
                .flat_map(|i| {
                    let t = ((first + i as u64) as f64 + half) * dt;
                    list.iter().map(move |(amp, w)| amp * w.value(t))
                })
                .collect()
        };
        for (list, buf, half) in [
            (&self.soft, &mut self.soft_vals, 0.5),
            (&self.hard, &mut self.hard_vals, 1.0),
        ] {
            let v = values(list, half);
            if buf.len() < v.len() {
                *buf = gpu.zeros(v.len())?;
            }
            if !v.is_empty() {
                gpu.stream
                    .memcpy_htod(&v, buf)
                    .map_err(driver("cuMemcpyHtoD"))?;
            }
        }
        let need = steps * self.np.max(1) as usize;
        if self.rows.len() < need {
            self.rows = gpu.zeros(need)?;
        }
        Ok(())
    }
}
