//! Streams and events: queues of device work, and points in them to wait on or time.

use crate::device::Device;
use crate::error::{driver, Result};
use cudarc::driver::{sys, CudaEvent, CudaStream};
use std::sync::Arc;

/// A queue of device work. Work queued on one stream runs in order; nothing waits for it
/// until [`Stream::synchronize`], an [`Event`], or a download.
///
/// ```no_run
/// use fdlab_cuda::Device;
/// let dev = Device::open(0)?;
/// let side = dev.new_stream()?;
/// let start = side.record()?;
/// // ... queue work on `side` ...
/// let stop = side.record()?;
/// stop.synchronize()?;
/// println!("{:.3} ms", start.elapsed_ms(&stop)?);
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
#[derive(Clone)]
pub struct Stream {
    pub(crate) raw: Arc<CudaStream>,
    pub(crate) device_id: u64,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.device_id)
            .finish()
    }
}

impl Stream {
    /// Waits until every piece of work queued so far has finished; reports errors of earlier
    /// launches.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// dev.default_stream().synchronize()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.raw
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))
    }

    /// Records a timing event at this point of the stream.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let e = dev.default_stream().record()?;
    /// e.synchronize()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn record(&self) -> Result<Event> {
        let raw = self
            .raw
            .context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("cuEventCreate"))?;
        raw.record(&self.raw).map_err(driver("cuEventRecord"))?;
        Ok(Event { raw })
    }

    /// Makes work queued on this stream after this call wait for `event` (on the device; the
    /// host does not wait).
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let (a, b) = (dev.new_stream()?, dev.new_stream()?);
    /// let done = a.record()?;
    /// b.wait(&done)?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn wait(&self, event: &Event) -> Result<()> {
        self.raw
            .wait(&event.raw)
            .map_err(driver("cuStreamWaitEvent"))
    }

    /// The id of the device handle the stream belongs to.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// assert_eq!(dev.default_stream().device_id(), dev.id());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn device_id(&self) -> u64 {
        self.device_id
    }

    /// The cudarc stream, for work fdlab does not wrap.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let _raw = dev.default_stream().raw();
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn raw(&self) -> &Arc<CudaStream> {
        &self.raw
    }
}

/// A point in a stream's work: wait for it, ask whether it passed, time between two.
///
/// ```no_run
/// let dev = fdlab_cuda::Device::open(0)?;
/// let s = dev.default_stream();
/// let (a, b) = (s.record()?, s.record()?);
/// b.synchronize()?;
/// assert!(a.elapsed_ms(&b)? >= 0.0);
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
pub struct Event {
    raw: CudaEvent,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl Event {
    /// Waits on the host until the stream has passed this event.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// dev.default_stream().record()?.synchronize()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.raw.synchronize().map_err(driver("cuEventSynchronize"))
    }

    /// Whether the stream has passed this event (never blocks).
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let e = dev.default_stream().record()?;
    /// e.synchronize()?;
    /// assert!(e.is_complete()?);
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn is_complete(&self) -> Result<bool> {
        self.raw.try_is_complete().map_err(driver("cuEventQuery"))
    }

    /// Milliseconds of device time from this event to `end` (both must have completed).
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let s = dev.default_stream();
    /// let a = s.record()?;
    /// let b = s.record()?;
    /// b.synchronize()?;
    /// let _ms = a.elapsed_ms(&b)?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64> {
        self.raw
            .elapsed_ms(&end.raw)
            .map(f64::from)
            .map_err(driver("cuEventElapsedTime"))
    }
}

impl Device {
    /// The stream plans and fields use unless given another.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// dev.default_stream().synchronize()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn default_stream(&self) -> Stream {
        Stream {
            raw: self.inner.stream.clone(),
            device_id: self.inner.id,
        }
    }

    /// A new stream on this device. fdlab does not order work across streams: use
    /// [`Stream::wait`] with an [`Event`] where one stream reads what another wrote.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let s = dev.new_stream()?;
    /// s.synchronize()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn new_stream(&self) -> Result<Stream> {
        Ok(Stream {
            raw: self
                .inner
                .ctx
                .new_stream()
                .map_err(driver("cuStreamCreate"))?,
            device_id: self.inner.id,
        })
    }
}
