//! The time-stepper interface that every backend implements.

use crate::Result;

/// One named part of a stepper's state, as raw little-endian bytes.
pub type StatePart = (String, Vec<u8>);

/// The part `name` of a saved state as `len` values, or an error when a checkpoint lacks it
/// or holds another size.
pub(crate) fn state_part<T: fdlab_core::Scalar>(
    parts: &[StatePart],
    name: &str,
    len: usize,
) -> Result<Vec<T>> {
    parts
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, b)| crate::layout::from_bytes(b, len))
        .ok_or_else(|| {
            crate::Error::Invalid(format!(
                "checkpoint state has no {name} of the expected size"
            ))
        })
}

/// A time-stepping solver on one backend: the CPU one lives in this crate, a GPU one can be
/// added beside it (it reads the same coefficient arrays from [`crate::physics`]).
pub trait Stepper: Send {
    /// Advance `n` time steps. Stops with [`crate::Error::NonFinite`] at the first step that
    /// produces NaN or infinity.
    fn advance(&mut self, n: usize) -> Result<()>;
    /// Steps taken so far.
    fn step(&self) -> u64;
    /// The main field (temperature or pressure) at the grid points, x fastest. Fails only
    /// when a device copy fails.
    fn field(&self) -> Result<Vec<f64>>;
    /// The main field's values at the linear indices `range` (x fastest), e.g. the xy plane a
    /// picture shows. The default takes them from [`Stepper::field`] (collective where that is;
    /// empty where it is); the GPU steppers copy only the range from the device.
    fn values(&self, range: std::ops::Range<usize>) -> Result<Vec<f64>> {
        let field = self.field()?;
        Ok(field.get(range).map(<[f64]>::to_vec).unwrap_or_default())
    }
    /// Receiver traces so far: one series per receiver, one value per step.
    fn traces(&self) -> &[Vec<f64>];
    /// Everything needed to continue bit-identically.
    fn save_state(&self) -> Result<Vec<StatePart>>;
    /// Restore what [`Stepper::save_state`] wrote, at step `step`.
    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()>;
    /// Running DFT monitors (fdtd only; none elsewhere).
    fn spectra(&self) -> &[crate::fdtd::DftMonitor] {
        &[]
    }
    /// Grid points updated per step.
    fn cells(&self) -> usize;
    /// Minimum bytes moved per step (each field read once, each output written once).
    fn bytes_per_step(&self) -> usize;
    /// Backend name, e.g. `"cpu"`.
    fn backend(&self) -> &'static str;
    /// Time steps fused in one pass over the grid (temporal blocking; 1 for one step per
    /// pass, which every stepper but the GPU heat step does).
    fn steps_per_pass(&self) -> usize {
        1
    }
}

/// Find the first non-finite value of a padded row result; used by the fused loops.
pub(crate) fn first_bad(
    results: impl Iterator<Item = Option<(usize, f64)>>,
) -> Option<(usize, f64)> {
    results.flatten().min_by_key(|(i, _)| *i)
}

/// The first non-finite value of a row and its index. The test runs over the whole row
/// without an early exit, so that it vectorises (a `position` search did not, and cost more
/// than the stencil); the search runs only on a row that has one.
pub(crate) fn first_non_finite<T: fdlab_core::Scalar>(row: &[T]) -> Option<(usize, f64)> {
    if !row.iter().fold(false, |bad, v| bad | !v.is_finite()) {
        return None;
    }
    row.iter()
        .position(|v| !v.is_finite())
        .map(|i| (i, row[i].as_f64()))
}

/// Values below the smallest normal number become zero: the front of a stencil's spread decays
/// into subnormals, which cost ~100 cycles per operation on x86 and made f32 waves 3× slower
/// than f64. Writing no subnormals keeps every later read fast.
#[inline(always)]
pub(crate) fn flush<T: fdlab_core::Scalar>(v: T) -> T {
    if v.abs() < T::min_positive_value() {
        T::zero()
    } else {
        v
    }
}
