//! Where the time before a run's first step goes: the `startup` object of each segment of
//! `summary.json`.
//!
//! The parts are consecutive stretches of the one interval from the process's start to the
//! first step, so they add up to [`Startup::first_step_s`] (up to rounding).

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When the process started and how long reading the case file took, as the program that
/// calls [`crate::run()`] measured them (`fdlab run` takes the instant first thing in `main`).
#[derive(Debug, Clone, Copy)]
pub struct ProcessClock {
    /// The process's start.
    pub start: Instant,
    /// Seconds reading and parsing the case file ([`crate::Case::load`]).
    pub case_load_s: f64,
}

/// Seconds building a stepper spent on its coefficients and, on a GPU, its kernels and
/// device memory; what [`crate::Stepper::build_times`] reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BuildTimes {
    /// Coefficient arrays computed from the setup (`c²Δt²`, CPML profiles, …).
    pub coefficients_s: f64,
    /// Kernels compiled, or loaded from the kernel caches.
    pub kernels_s: f64,
    /// The device opened, its memory allocated and the fields and coefficients uploaded.
    pub device_s: f64,
}

/// A GPU stepper's running totals of kernel and device time while it is built; shared by
/// reference, so it counts with atomics.
#[derive(Debug, Default)]
pub(crate) struct BuildMeter {
    kernels_ns: AtomicU64,
    device_ns: AtomicU64,
}

impl BuildMeter {
    /// Runs `f`, counting its time as kernel compiling or loading.
    pub(crate) fn kernels<R>(&self, f: impl FnOnce() -> R) -> R {
        Self::count(&self.kernels_ns, f)
    }

    /// Runs `f`, counting its time as device allocation or upload.
    pub(crate) fn device<R>(&self, f: impl FnOnce() -> R) -> R {
        Self::count(&self.device_ns, f)
    }

    /// Adds `d` to the device time.
    pub(crate) fn add_device(&self, d: Duration) {
        self.device_ns
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    fn count<R>(total: &AtomicU64, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        total.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }

    /// The totals so far, with `coefficients_s` as given.
    pub(crate) fn times(&self, coefficients_s: f64) -> BuildTimes {
        let s = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 * 1e-9;
        BuildTimes {
            coefficients_s,
            kernels_s: s(&self.kernels_ns),
            device_s: s(&self.device_ns),
        }
    }
}

/// Seconds from the process's start to the first step, by part, in the order they happen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Startup {
    /// Before the run began: loading the program and reading the command line (0 when the
    /// caller gave no [`ProcessClock`]).
    pub launch_s: f64,
    /// Reading, parsing and checking the case file and the run's options and output
    /// directory, apart from the coefficients.
    pub case_s: f64,
    /// Material and coefficient arrays: the velocity or diffusivity model, the density, the
    /// initial field, `c²Δt²`, CPML profiles.
    pub coefficients_s: f64,
    /// Building the stepper apart from its coefficients, kernels and device memory: host
    /// fields allocated, padded and converted to the run's precision.
    pub stepper_s: f64,
    /// GPU kernels compiled or loaded from the kernel caches (0 on the CPU).
    pub kernels_s: f64,
    /// The GPU opened, its memory allocated and the fields and coefficients uploaded (0 on
    /// the CPU).
    pub device_s: f64,
    /// The run directory claimed, a checkpoint read and restored (on a resume), the output
    /// writers opened.
    pub run_dir_s: f64,
    /// The outputs of the starting step written (field files, pictures).
    pub initial_outputs_s: f64,
    /// From the process's start (or the run's, without a [`ProcessClock`]) to the start of
    /// the first step: the sum of the parts above.
    pub first_step_s: f64,
}

/// The instants a run passes on its way to the first step, from which [`Startup`] is
/// computed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Marks {
    /// The caller's clock, if it gave one.
    pub clock: Option<ProcessClock>,
    /// When the run began (before validation).
    pub run: Instant,
    /// When the case was validated and prepared.
    pub prepared: Instant,
    /// Seconds of preparing spent on the material and initial fields.
    pub prepare_coefficients_s: f64,
    /// When the stepper was built.
    pub stepper: Instant,
    /// What building the stepper reports.
    pub build: BuildTimes,
    /// When the step loop began.
    pub looping: Instant,
    /// When the first step began.
    pub first_step: Instant,
}

impl Marks {
    /// The parts of the interval up to the first step.
    pub(crate) fn startup(&self) -> Startup {
        let secs = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64();
        let origin = self.clock.map_or(self.run, |c| c.start);
        let case_load_s = self.clock.map_or(0.0, |c| c.case_load_s);
        let before_run = secs(origin, self.run);
        let build = self.build;
        let building = secs(self.prepared, self.stepper);
        let prepare_other = (secs(self.run, self.prepared) - self.prepare_coefficients_s).max(0.0);
        Startup {
            launch_s: (before_run - case_load_s).max(0.0),
            case_s: case_load_s.min(before_run) + prepare_other,
            coefficients_s: self
                .prepare_coefficients_s
                .min(secs(self.run, self.prepared))
                + build.coefficients_s.min(building),
            stepper_s: (building - build.coefficients_s - build.kernels_s - build.device_s)
                .max(0.0),
            kernels_s: build.kernels_s,
            device_s: build.device_s,
            run_dir_s: secs(self.stepper, self.looping),
            initial_outputs_s: secs(self.looping, self.first_step),
            first_step_s: secs(origin, self.first_step),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_to_the_time_to_the_first_step() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let m = Marks {
            clock: Some(ProcessClock {
                start: t0,
                case_load_s: 0.010,
            }),
            run: at(30),
            prepared: at(130),
            prepare_coefficients_s: 0.060,
            stepper: at(430),
            build: BuildTimes {
                coefficients_s: 0.05,
                kernels_s: 0.1,
                device_s: 0.1,
            },
            looping: at(440),
            first_step: at(450),
        };
        let s = m.startup();
        let parts = [
            s.launch_s,
            s.case_s,
            s.coefficients_s,
            s.stepper_s,
            s.kernels_s,
            s.device_s,
            s.run_dir_s,
            s.initial_outputs_s,
        ];
        let want = [0.02, 0.05, 0.11, 0.05, 0.1, 0.1, 0.01, 0.01];
        for (p, w) in parts.iter().zip(want) {
            assert!((p - w).abs() < 1e-9, "{parts:?}");
        }
        assert!((parts.iter().sum::<f64>() - s.first_step_s).abs() < 1e-9);
        assert!((s.first_step_s - 0.45).abs() < 1e-9);
    }
}
