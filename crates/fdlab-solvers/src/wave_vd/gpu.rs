//! The variable-density step on a GPU: the kernels the one emitter generates from the
//! description, one launch per update.

use super::{bytes_of, prepare, Exec, WaveVd};
use crate::error::{Error, Result};
use crate::startup::BuildTimes;
use crate::wave::WaveSetup;
use fdlab_core::step::Slots;
use fdlab_core::{Field, Grid, Region};
use fdlab_cuda::{CudaScalar, Device, DeviceField, StepProgram};
use std::time::Instant;

/// Fields on the device, stepped by a [`StepProgram`].
pub struct GpuExec<T: CudaScalar> {
    program: StepProgram,
    grid: Grid,
    slots: Slots<DeviceField<T>>,
    /// What building it cost, by part.
    build: BuildTimes,
    // Declared last: the fields and program are freed before the device they live on.
    _dev: Device,
}

fn missing(name: &str, level: i32) -> Error {
    Error::Invalid(format!("the step has no field '{name}' at level {level}"))
}

impl<T: CudaScalar> GpuExec<T> {
    fn field(&self, name: &str, level: i32) -> Result<&DeviceField<T>> {
        self.slots
            .get(name, level)
            .ok_or_else(|| missing(name, level))
    }
}

impl<T: CudaScalar> Exec for GpuExec<T> {
    fn step(&mut self, params: &[(&str, f64)]) -> Result<()> {
        self.program.run(&self.grid, &mut self.slots, params)?;
        Ok(())
    }

    fn read(&self, name: &str, level: i32) -> Result<Vec<f64>> {
        let host = self.field(name, level)?.download()?;
        Ok(host.as_slice().iter().map(|v| v.as_f64()).collect())
    }

    fn write(&mut self, name: &str, level: i32, values: &[f64]) -> Result<()> {
        let host = Field::from_vec(&self.grid, values.iter().map(|v| T::from_f64(*v)).collect())?;
        let f = self
            .slots
            .get_mut(name, level)
            .ok_or_else(|| missing(name, level))?;
        f.copy_from(&host)?;
        Ok(())
    }

    fn sample(&self, name: &str, at: &[usize]) -> Result<Vec<f64>> {
        let f = self.field(name, 0)?;
        let n = self.grid.shape();
        at.iter()
            .map(|&i| {
                let lo = [i % n[0], i / n[0] % n[1], i / (n[0] * n[1])];
                let one = Region {
                    lo,
                    hi: lo.map(|c| c + 1),
                };
                Ok(f.view(one)?.download()?.as_slice()[0].as_f64())
            })
            .collect()
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }

    fn build_times(&self) -> BuildTimes {
        self.build
    }
}

/// The variable-density wave stepper on a GPU.
pub type WaveVdGpu<T> = WaveVd<GpuExec<T>>;

impl<T: CudaScalar> WaveVd<GpuExec<T>> {
    /// Builds the description of `s` (which has a density), compiles its kernels and uploads
    /// its fields to the first GPU.
    pub fn new(s: &WaveSetup) -> Result<Self> {
        let t = Instant::now();
        let p = prepare(s)?;
        let coefficients_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let dev = Device::open(0)?;
        let mut device = t.elapsed();
        let t = Instant::now();
        let program = StepProgram::new(&dev, &p.desc, T::PRECISION)?;
        let kernels_s = t.elapsed().as_secs_f64();
        let grid = p.grid.clone();
        let t = Instant::now();
        let slots = Slots::new(&p.desc, |name, level| -> Result<DeviceField<T>> {
            Ok(DeviceField::upload(&dev, &p.host_field::<T>(name, level)?)?)
        })?;
        device += t.elapsed();
        let exec = GpuExec {
            program,
            grid,
            slots,
            build: BuildTimes {
                coefficients_s,
                kernels_s,
                device_s: device.as_secs_f64(),
            },
            _dev: dev,
        };
        Ok(WaveVd::with_exec(s, &p, exec, bytes_of::<T>()))
    }
}
