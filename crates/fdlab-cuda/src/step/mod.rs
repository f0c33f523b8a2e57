//! Runs step descriptions on device fields: the kernels of [`crate::codegen::step`],
//! compiled through the device's kernel caches, one launch per update.

mod check;

pub use check::{step_selftest, StepReference};

use crate::codegen::step::{emit_step, StepKernel};
use crate::device::{CudaScalar, Device, Kernel};
use crate::error::{driver, Error, Result};
use crate::field::DeviceField;
use cudarc::driver::PushKernelArg;
use fdlab_core::step::{Slots, StepDescription, StepError};
use fdlab_core::{Grid, Precision, Region};
use std::sync::Arc;

/// A step description compiled for one device and precision.
///
/// ```no_run
/// use fdlab_core::step::{physics::acoustic_vd, Slots};
/// use fdlab_core::{Boundary, Field, Grid, Precision};
/// use fdlab_cuda::{Device, DeviceField, StepProgram};
/// let dev = Device::open(0)?;
/// let g = Grid::unit(&[128, 128])?;
/// let d = acoustic_vd(&g, 4, Boundary::Dirichlet)?;
/// let prog = StepProgram::new(&dev, &d, Precision::F32)?;
/// let mut s = Slots::new(&d, |_, _| DeviceField::upload(&dev, &Field::<f32>::filled(&g, 1.0)))?;
/// prog.run(&g, &mut s, &[("dt", 1e-3)])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StepProgram {
    desc: StepDescription,
    precision: Precision,
    device_id: u64,
    kernels: Vec<(StepKernel, Arc<Kernel>)>,
}

impl StepProgram {
    /// Generates and compiles (or takes from the caches) the kernels of `d` in `precision`.
    pub fn new(dev: &Device, d: &StepDescription, precision: Precision) -> Result<StepProgram> {
        let generated = emit_step(d, precision)?;
        let sources: Vec<_> = generated.iter().map(|k| k.source.clone()).collect();
        let compiled = dev.kernels(&sources)?;
        Ok(StepProgram {
            desc: d.clone(),
            precision,
            device_id: dev.id(),
            kernels: generated.into_iter().zip(compiled).collect(),
        })
    }

    /// The generated kernels, one per update.
    pub fn kernels(&self) -> impl Iterator<Item = &StepKernel> {
        self.kernels.iter().map(|(k, _)| k)
    }

    /// Runs one step on `slots` (fields of `grid`, on this program's device): each update's
    /// kernel in order on the target field's stream (give every field the same stream), then
    /// the state levels rotate. Asynchronous; errors of the kernels show at the next
    /// synchronization.
    pub fn run<T: CudaScalar>(
        &self,
        grid: &Grid,
        slots: &mut Slots<DeviceField<T>>,
        params: &[(&str, f64)],
    ) -> Result<()> {
        if T::PRECISION != self.precision {
            return Err(Error::Precision {
                what: "step fields".into(),
                expected: self.precision,
                got: T::PRECISION,
            });
        }
        self.desc.validate_on(grid)?;
        let values: Vec<T> = self
            .desc
            .param_values(params)?
            .into_iter()
            .map(T::from_f64)
            .collect();
        self.check_fields(grid, slots)?;
        for (sk, kernel) in &self.kernels {
            let up = &self.desc.updates[sk.update];
            let region = up.region.resolve(grid, up.expr.reach());
            if region.is_empty() {
                continue;
            }
            let (name, level) = (&sk.target.0, sk.target.1);
            let mut out = slots.take(name, level).ok_or_else(|| unknown(name))?;
            let r = launch(kernel, sk, &mut out, slots, &values, grid, region);
            slots.put(name, level, out);
            r?;
        }
        slots.rotate();
        Ok(())
    }

    fn check_fields<T: CudaScalar>(
        &self,
        grid: &Grid,
        slots: &Slots<DeviceField<T>>,
    ) -> Result<()> {
        for (name, l, b) in slots.each() {
            let b = b.ok_or_else(|| unknown(name))?;
            let what = format!("field '{name}' at level {l}");
            if b.shape() != grid.shape() {
                return Err(Error::ShapeMismatch {
                    what,
                    expected: grid.shape(),
                    got: b.shape(),
                });
            }
            if b.device_id() != self.device_id {
                return Err(Error::WrongDevice {
                    what,
                    expected: self.device_id,
                    got: b.device_id(),
                });
            }
        }
        Ok(())
    }
}

fn unknown(name: &str) -> Error {
    Error::Step(StepError::UnknownField { name: name.into() })
}

/// One update's launch over `region`: the launch grid covers the region once (the kernel
/// loops where CUDA's limits cap it).
fn launch<T: CudaScalar>(
    kernel: &Kernel,
    sk: &StepKernel,
    out: &mut DeviceField<T>,
    slots: &Slots<DeviceField<T>>,
    values: &[T],
    grid: &Grid,
    region: Region,
) -> Result<()> {
    let extent = [0, 1, 2].map(|a| region.hi[a] - region.lo[a]);
    let g = sk.source.grid_dims(extent);
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (g[0], g[1], g[2]),
        block_dim: (sk.source.block[0], sk.source.block[1], sk.source.block[2]),
        shared_mem_bytes: 0,
    };
    let inputs = sk
        .inputs
        .iter()
        .map(|(n, l)| slots.get(n, *l).ok_or_else(|| unknown(n)))
        .collect::<Result<Vec<_>>>()?;
    let shape = grid.shape();
    let ints: Vec<i32> = [shape[0], shape[1], shape[2]]
        .into_iter()
        .chain((0..3).flat_map(|a| [region.lo[a], region.hi[a]]))
        .map(|v| v as i32)
        .collect();
    let stream = out.stream();
    let mut b = stream.raw().launch_builder(kernel.function());
    b.arg(out.buffer_mut());
    for f in &inputs {
        b.arg(f.buffer());
    }
    for v in values {
        b.arg(v);
    }
    for v in &ints {
        b.arg(v);
    }
    // SAFETY: the arguments match the generated signature (out, one pointer per input, one
    // scalar per parameter, nx..khi); every buffer holds nx·ny·nz elements (checked against
    // the grid) and the kernel indexes inside the grid only.
    unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
    Ok(())
}
