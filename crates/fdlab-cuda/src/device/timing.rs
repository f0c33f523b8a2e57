//! Timing with CUDA events: kernels, the driver's copy, CUDA graphs.

use super::Device;
use crate::error::{driver, Error, Result};
use cudarc::driver::sys;

impl Device {
    /// Times `work` with CUDA events: `warmup` untimed calls, then `reps` timed ones, each
    /// bracketed by its own events. Returns milliseconds per call.
    pub fn time(
        &self,
        warmup: usize,
        reps: usize,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            work()?;
        }
        self.synchronize()?;
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = self
                .inner
                .ctx
                .new_event(flags)
                .map_err(driver("cuEventCreate"))?;
            let stop = self
                .inner
                .ctx
                .new_event(flags)
                .map_err(driver("cuEventCreate"))?;
            start
                .record(&self.inner.stream)
                .map_err(driver("cuEventRecord"))?;
            work()?;
            stop.record(&self.inner.stream)
                .map_err(driver("cuEventRecord"))?;
            stop.synchronize().map_err(driver("cuEventSynchronize"))?;
            times.push(
                start
                    .elapsed_ms(&stop)
                    .map_err(driver("cuEventElapsedTime"))? as f64,
            );
        }
        Ok(times)
    }

    /// Times the driver's device-to-device copy (`cuMemcpyDtoD`) of `bytes`: milliseconds per
    /// copy. Bandwidth is `2·bytes / t` (read + write).
    pub fn copy_times(&self, bytes: usize, warmup: usize, reps: usize) -> Result<Vec<f64>> {
        let n = bytes / 4;
        let src = self.zeros::<f32>(n)?;
        let mut dst = self.zeros::<f32>(n)?;
        self.time(warmup, reps, || {
            self.inner
                .stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(driver("cuMemcpyDtoD"))
        })
    }

    /// Times `replays` launches captured in one CUDA graph; returns ms per launch per replay.
    pub fn graph_times(
        &self,
        launches: usize,
        reps: usize,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        self.synchronize()?;
        self.inner
            .stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver("cuStreamBeginCapture"))?;
        let mut captured = Ok(());
        for _ in 0..launches {
            captured = work();
            if captured.is_err() {
                break;
            }
        }
        let graph = self
            .inner
            .stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver("cuStreamEndCapture"))?;
        captured?;
        let graph = graph.ok_or_else(|| Error::Driver {
            call: "cuStreamEndCapture".into(),
            detail: "no graph captured".into(),
        })?;
        let times = self.time(2, reps, || graph.launch().map_err(driver("cuGraphLaunch")))?;
        Ok(times.into_iter().map(|t| t / launches as f64).collect())
    }
}
