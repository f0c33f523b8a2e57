//! The time-stepper interface that every backend implements.

use crate::error::Result;

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
            crate::error::Error::Invalid(format!(
                "checkpoint state has no {name} of the expected size"
            ))
        })
}

/// The points of an `nx × ny` xy plane (x fastest, starting at the field's linear index
/// `start`) that a picture takes: every `stride`-th one along x and along y, from the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneSample {
    /// Linear index of the plane's first point in the field.
    pub start: usize,
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// Distance between samples along both axes (1: every point).
    pub stride: usize,
}

impl PlaneSample {
    /// The plane of `n[0] × n[1]` points starting at `start`, with the smallest stride that
    /// leaves at most `max` samples along each axis.
    pub fn at_most(start: usize, n: [usize; 2], max: usize) -> PlaneSample {
        let stride = n[0].max(n[1]).div_ceil(max.max(1)).max(1);
        PlaneSample {
            start,
            nx: n[0],
            ny: n[1],
            stride,
        }
    }

    /// Samples along x.
    pub fn width(&self) -> usize {
        self.nx.div_ceil(self.stride)
    }

    /// Samples along y.
    pub fn height(&self) -> usize {
        self.ny.div_ceil(self.stride)
    }

    /// The linear indices of the whole plane.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.nx * self.ny
    }

    /// The samples (`width() × height()`, x fastest) of `plane`, the plane's `nx · ny`
    /// values; empty when `plane` is not the whole plane (a process that holds no field).
    pub fn take(&self, plane: &[f64]) -> Vec<f64> {
        if plane.len() != self.nx * self.ny {
            return vec![];
        }
        if self.stride == 1 {
            return plane.to_vec();
        }
        let mut out = Vec::with_capacity(self.width() * self.height());
        for j in (0..self.ny).step_by(self.stride) {
            let row = &plane[j * self.nx..(j + 1) * self.nx];
            out.extend(row.iter().step_by(self.stride));
        }
        out
    }
}

/// A time-stepping solver on one backend: the CPU one lives in this crate, a GPU one can be
/// added beside it (it reads the same coefficient arrays from [`crate::physics`]).
pub trait Stepper: Send {
    /// Advance `n` time steps. Stops with [`crate::error::Error::NonFinite`] at the first step that
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
    /// Every `p.stride`-th point of an xy plane along x and y, as [`PlaneSample::take`]
    /// returns them; what pictures of large grids show. The default takes them from
    /// [`Stepper::values`] (empty where that is); the GPU steppers pick the points on the
    /// device, so that only the samples cross the bus.
    fn plane(&self, p: PlaneSample) -> Result<Vec<f64>> {
        Ok(p.take(&self.values(p.range())?))
    }
    /// Receiver traces so far: one series per receiver, one value per step.
    fn traces(&self) -> &[Vec<f64>];
    /// Everything needed to continue bit-identically.
    fn save_state(&self) -> Result<Vec<StatePart>>;
    /// Restore what [`Stepper::save_state`] wrote, at step `step`.
    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()>;
    /// Replace the point sources and receivers with one shot's, and empty the traces; the
    /// fields stay as they are (a run of several shots then restores the starting state with
    /// [`Stepper::restore_state`]). The stepper keeps its grid, coefficients and kernels, so
    /// that shots pay for them once. Steppers that cannot change their points refuse.
    fn set_points(&mut self, points: &crate::wave::ShotPoints) -> Result<()> {
        let _ = points;
        Err(crate::error::Error::Usage(format!(
            "the {} stepper of this case cannot change its sources between shots; run each              shot as a case of its own",
            self.backend()
        )))
    }
    /// Puts the stepper back at step 0 with every field and memory variable zero and no
    /// traces, if that is the state it was built with (a case with no initial field), and
    /// says whether it did. A run of shots starts each shot so when it can: restoring a saved
    /// state converts every array of a large grid through the host (seconds a shot at
    /// 512×512×256). The default does nothing and returns `false`.
    fn rewind_to_rest(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Whether [`Stepper::save_state`] and [`Stepper::restore_state`] work: a run writes a
    /// checkpoint on a stop (a signal, `stop_at`) only when they do.
    fn saves_state(&self) -> bool {
        true
    }
    /// The backend a checkpoint of this stepper names, and that a checkpoint it resumes must
    /// name: steppers whose states are the same (a CPU run split over processes and one on
    /// a single process) name the same one, so that each resumes the other's.
    fn checkpoint_backend(&self) -> &'static str {
        self.backend()
    }
    /// The stop the run makes before its next step: `asked` is the signal that asked this
    /// process to stop ([`crate::signals::REQUESTED`] for a request), 0 for none. A stepper
    /// split over processes asks them all (collective: every process calls it at the same
    /// step) and returns the same answer everywhere, the first non-zero in rank order; alone,
    /// `asked` itself.
    fn agree_stop(&mut self, asked: i32) -> Result<i32> {
        Ok(asked)
    }
    /// The running DFT monitors' spectra so far (fdtd only; none elsewhere). Fails only
    /// when a device copy fails.
    fn spectra(&self) -> Result<Vec<crate::fdtd::DftMonitor>> {
        Ok(vec![])
    }
    /// Seconds building this stepper spent on its coefficients, its kernels and its device
    /// memory ([`crate::startup::Startup`]'s parts); zero for what it does not report.
    fn build_times(&self) -> crate::startup::BuildTimes {
        crate::startup::BuildTimes::default()
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
    /// The schedule that runs the steps, as `summary.json` records it: on a GPU the name of
    /// its [`crate::gpu::schedule::Schedule`] with every field set (it parses back to the
    /// same schedule); the fused row loop on the CPU.
    fn schedule(&self) -> String {
        "rows: one fused pass per step, rows in parallel".into()
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

#[cfg(test)]
mod tests {
    use super::PlaneSample;

    #[test]
    fn a_plane_sample_takes_every_stride_th_point_from_the_first() {
        // A 5 × 4 plane whose value is its index: samples every 2nd point along both axes.
        let plane: Vec<f64> = (0..20).map(f64::from).collect();
        let p = PlaneSample::at_most(0, [5, 4], 3);
        assert_eq!(p.stride, 2);
        assert_eq!((p.width(), p.height()), (3, 2));
        assert_eq!(p.take(&plane), [0.0, 2.0, 4.0, 10.0, 12.0, 14.0]);
        // Stride 1 keeps everything; a plane that is not whole gives nothing.
        let all = PlaneSample::at_most(7, [5, 4], 1024);
        assert_eq!((all.stride, all.range()), (1, 7..27));
        assert_eq!(all.take(&plane), plane);
        assert!(p.take(&plane[1..]).is_empty());
    }

    #[test]
    fn at_most_never_leaves_more_samples_than_asked() {
        for n in [1, 2, 1023, 1024, 1025, 4097, 8192] {
            for max in [1, 2, 3, 100, 1024] {
                let p = PlaneSample::at_most(0, [n, (n / 3).max(1)], max);
                assert!(p.width() <= max && p.height() <= max, "{n} {max}");
                assert!(p.stride == 1 || n.div_ceil(p.stride - 1) > max, "{n} {max}");
            }
        }
    }
}
