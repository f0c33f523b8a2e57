//! The wave step's sources and receivers on the device: each a list of grid points and
//! weights (one point of weight 1 on a grid point, [`crate::hicks`]'s spread between them),
//! applied and sampled by one launch of the after-step kernel
//! ([`fdlab_cuda::codegen::solver::step::after_step`]).

use super::{driver, Gpu};
use crate::error::{Error, Result};
use crate::wave::ShotPoints;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// Sources and receivers on the device, and the kernel that applies and samples them.
pub(super) struct Points<T> {
    kernel: Arc<Kernel>,
    pt_cell: CudaSlice<i64>,
    pt_w: CudaSlice<T>,
    pt_src: CudaSlice<i32>,
    np: i32,
    src_f0: CudaSlice<f64>,
    src_t0: CudaSlice<f64>,
    src_scale: CudaSlice<f64>,
    src_off: CudaSlice<i64>,
    src_len: CudaSlice<i64>,
    samples: CudaSlice<f64>,
    rc_cell: CudaSlice<i64>,
    rc_w: CudaSlice<T>,
    rc_start: CudaSlice<i32>,
    /// Number of receivers.
    pub nr: i32,
    /// One row of receiver values per step of the current `advance`.
    pub rows: CudaSlice<f64>,
}

/// Linear index of grid point `c` (x fastest).
fn linear(n: [usize; 3], c: [usize; 3]) -> i64 {
    (c[0] + n[0] * (c[1] + n[1] * c[2])) as i64
}

/// `v`, or one unused element when it is empty: an empty list still needs a valid pointer.
fn or_one<V: Default>(v: Vec<V>) -> Vec<V> {
    or_fill(v, V::default())
}

/// `v`, or `fill` alone when it is empty.
fn or_fill<V>(mut v: Vec<V>, fill: V) -> Vec<V> {
    if v.is_empty() {
        v.push(fill);
    }
    v
}

/// A count as the kernel's `int`, refused past `i32::MAX`.
fn count(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        Error::Invalid(format!(
            "{n} {what}: more than the GPU wave stepper's 2^31; use fewer sources or receivers"
        ))
    })
}

impl<T: CudaScalar> Points<T> {
    /// The device arrays of the sources and receivers `s` on a grid of `n` points stepped by
    /// `dt`; `inv_dv` is `1 / ΔV`.
    pub(super) fn new(
        gpu: &Gpu,
        kernel: Arc<Kernel>,
        n: [usize; 3],
        dt: f64,
        s: &ShotPoints,
        inv_dv: f64,
    ) -> Result<Self> {
        let dt2 = dt * dt;
        let (mut pt_cell, mut pt_w, mut pt_src) = (vec![], vec![], vec![]);
        let (mut src_off, mut src_len, mut samples) = (vec![], vec![], vec![]);
        for (i, src) in s.sources.iter().enumerate() {
            let i = count(i, "sources")?;
            for (c, w) in src.points() {
                pt_cell.push(linear(n, c));
                pt_w.push(T::from_f64(w));
                pt_src.push(i);
            }
            match &src.wavelet {
                Some(w) => {
                    src_off.push(samples.len() as i64);
                    src_len.push(w.len() as i64);
                    samples.extend_from_slice(w);
                }
                None => {
                    src_off.push(-1);
                    src_len.push(0);
                }
            }
        }
        let (mut rc_cell, mut rc_w, mut rc_start) = (vec![], vec![], vec![0]);
        for i in 0..s.receivers.len() {
            for (c, w) in s.receiver_points(i) {
                rc_cell.push(linear(n, c));
                rc_w.push(T::from_f64(w));
            }
            rc_start.push(count(rc_cell.len(), "receiver points")?);
        }
        let src = &s.sources;
        Ok(Points {
            kernel,
            np: count(pt_cell.len(), "source points")?,
            pt_cell: gpu.upload(&or_one(pt_cell))?,
            pt_w: gpu.upload(&or_fill(pt_w, T::zero()))?,
            pt_src: gpu.upload(&or_one(pt_src))?,
            src_f0: gpu.upload(&or_one(src.iter().map(|x| x.f0).collect()))?,
            src_t0: gpu.upload(&or_one(src.iter().map(|x| x.t0).collect()))?,
            src_scale: gpu.upload(&or_one(
                src.iter().map(|x| dt2 * x.amplitude * inv_dv).collect(),
            ))?,
            src_off: gpu.upload(&or_one(src_off))?,
            src_len: gpu.upload(&or_one(src_len))?,
            samples: gpu.upload(&or_one(samples))?,
            nr: count(s.receivers.len(), "receivers")?,
            rc_cell: gpu.upload(&or_one(rc_cell))?,
            rc_w: gpu.upload(&or_fill(rc_w, T::zero()))?,
            rc_start: gpu.upload(&rc_start)?,
            rows: gpu.zeros(1)?,
        })
    }

    /// The after-step kernel, which points of another shot reuse.
    pub(super) fn kernel(&self) -> Arc<Kernel> {
        self.kernel.clone()
    }

    /// Queue the kernel on `stream` after step `step` (time `time`): add the sources to `q`
    /// and write the receivers into row `row` of `rows`.
    pub(super) fn queue(
        &mut self,
        stream: &Arc<CudaStream>,
        q: &mut CudaSlice<T>,
        time: f64,
        step: u64,
        row: i32,
    ) -> Result<()> {
        let k = i64::try_from(step).unwrap_or(i64::MAX);
        let mut b = stream.launch_builder(self.kernel.function());
        b.arg(q)
            .arg(&self.pt_cell)
            .arg(&self.pt_w)
            .arg(&self.pt_src)
            .arg(&self.np)
            .arg(&self.src_f0)
            .arg(&self.src_t0)
            .arg(&self.src_scale)
            .arg(&self.src_off)
            .arg(&self.src_len)
            .arg(&self.samples)
            .arg(&time)
            .arg(&k)
            .arg(&self.rc_cell)
            .arg(&self.rc_w)
            .arg(&self.rc_start)
            .arg(&self.nr)
            .arg(&mut self.rows)
            .arg(&row);
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the generated signature; the cells are inside the grid
        // (checked when the case was prepared), every point's source index is below the
        // number of sources, `rc_start` has one entry per receiver and one more, the samples
        // are read below each source's length, and `rows` holds a row per step.
        unsafe { b.launch(one) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }
}
