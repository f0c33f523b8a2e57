//! The variable-density step on the CPU: the reference executor of step descriptions.

use super::{bytes_of, prepare, Exec, WaveVd};
use crate::error::{Error, Result};
use crate::wave::WaveSetup;
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Field, Grid, Scalar};

/// Fields on the host, stepped by [`fdlab_cpu::step::run_step`].
pub struct CpuExec<T: Scalar> {
    desc: StepDescription,
    grid: Grid,
    slots: Slots<Field<T>>,
    reference: bool,
}

fn missing(name: &str, level: i32) -> Error {
    Error::Invalid(format!("the step has no field '{name}' at level {level}"))
}

impl<T: Scalar> Exec for CpuExec<T> {
    fn step(&mut self, params: &[(&str, f64)]) -> Result<()> {
        fdlab_cpu::step::run_step_with(
            &self.desc,
            &self.grid,
            &mut self.slots,
            params,
            self.reference,
        )?;
        Ok(())
    }

    fn read(&self, name: &str, level: i32) -> Result<Vec<f64>> {
        let f = self
            .slots
            .get(name, level)
            .ok_or_else(|| missing(name, level))?;
        Ok(f.as_slice().iter().map(|v| v.as_f64()).collect())
    }

    fn write(&mut self, name: &str, level: i32, values: &[f64]) -> Result<()> {
        let f = self
            .slots
            .get_mut(name, level)
            .ok_or_else(|| missing(name, level))?;
        for (d, v) in f.as_mut_slice().iter_mut().zip(values) {
            *d = T::from_f64(*v);
        }
        Ok(())
    }

    fn sample(&self, name: &str, at: &[usize]) -> Result<Vec<f64>> {
        let f = self.slots.get(name, 0).ok_or_else(|| missing(name, 0))?;
        Ok(at.iter().map(|&i| f.as_slice()[i].as_f64()).collect())
    }

    fn backend(&self) -> &'static str {
        "cpu"
    }
}

/// The variable-density wave stepper on the CPU.
pub type WaveVdCpu<T> = WaveVd<CpuExec<T>>;

impl<T: Scalar> WaveVd<CpuExec<T>> {
    /// Builds the description of `s` (which has a density) and its fields on the host.
    pub fn new(s: &WaveSetup) -> Result<Self> {
        let p = prepare(s)?;
        let slots = Slots::new(&p.desc, |name, level| p.host_field::<T>(name, level))?;
        let exec = CpuExec {
            desc: p.desc.clone(),
            grid: p.grid.clone(),
            slots,
            reference: false,
        };
        Ok(WaveVd::with_exec(s, &p, exec, bytes_of::<T>()))
    }

    /// Evaluates point by point (the executor's reference path) instead of a box at a time.
    pub fn use_reference(&mut self, on: bool) {
        self.exec.reference = on;
    }
}
