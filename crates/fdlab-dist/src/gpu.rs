//! One rank's part of a decomposed run on a GPU: a [`Slab`] stepped by the ordinary GPU heat
//! or wave stepper, with its halo planes refilled after every step by an exchange queued on
//! the stepper's stream.
//!
//! Two exchanges: [`Exchange::Staged`] copies the planes through host memory and the job's
//! [`crate::transport::Transport`] (any ranks: threads sharing one GPU, MPI processes), and `Exchange::Nccl`
//! (feature `nccl`) sends them device to device with NCCL, without the host, for ranks on
//! distinct GPUs of one host.

use crate::checkpoint::TRACES;
use crate::error::Result;
use crate::slab::{self, Slab};
use crate::state::{block_of_slab, slab_of_whole, values_per_point};
use crate::transport::{tag, Shared};
use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};
use fdlab_cuda::CudaScalar;
use fdlab_solvers::gpu::{DeviceStepper, HeatGpu, StepExchange, WaveGpu};
use fdlab_solvers::layout::Layout;
use fdlab_solvers::setup::Setup;
use fdlab_solvers::stepper::StatePart;
use fdlab_solvers::Stepper;
use std::sync::Arc;

/// An element type the GPU parts run in (with NCCL, one it can send).
#[cfg(feature = "nccl")]
pub trait GpuScalar: CudaScalar + cudarc::nccl::NcclType {}
/// An element type the GPU parts run in (with NCCL, one it can send).
#[cfg(not(feature = "nccl"))]
pub trait GpuScalar: CudaScalar {}
impl GpuScalar for f32 {}
impl GpuScalar for f64 {}

/// How the halo planes travel between GPU parts.
#[derive(Debug, Clone, Copy)]
pub enum Exchange {
    /// Device → host → transport → host → device.
    Staged,
    /// NCCL send/receive between the GPUs, on the steppers' streams; every rank of the job
    /// passes the same id (made once with `cudarc::nccl::Id::new`).
    #[cfg(feature = "nccl")]
    Nccl(cudarc::nccl::Id),
}

/// Where a rank's part runs: the GPU and the exchange.
#[derive(Debug, Clone, Copy)]
pub struct GpuPlacement {
    /// Device ordinal.
    pub ordinal: usize,
    /// How halos travel.
    pub exchange: Exchange,
    /// Compute each step's interior while its edge planes travel (NCCL only; a wave slab with
    /// a source on an edge plane, and every wave slab with a CPML, exchanges after the whole
    /// step regardless).
    pub overlap: bool,
}

/// How a split GPU run moves its halos: performance choices, given by the caller (never read
/// from the environment) and recorded in the run's schedule (`summary.json`).
///
/// ```
/// let d = fdlab_dist::DistOptions::default();
/// assert!(!d.staged && d.overlap);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistOptions {
    /// Halos through host memory even where NCCL could carry them (default: no).
    pub staged: bool,
    /// Compute each step's interior while its edge planes travel, where NCCL carries them
    /// (default: yes; off for measuring what the overlap hides).
    pub overlap: bool,
}

impl Default for DistOptions {
    fn default() -> DistOptions {
        DistOptions {
            staged: false,
            overlap: true,
        }
    }
}

/// A halo failure as the solvers' error.
fn halo_error(e: impl std::error::Error + Send + Sync + 'static) -> fdlab_solvers::Error {
    fdlab_solvers::Error::Halo(Box::new(e))
}

fn driver_error(rank: usize, call: &str, e: cudarc::driver::DriverError) -> fdlab_solvers::Error {
    halo_error(crate::error::Error::Transport {
        rank,
        detail: format!("{call} failed while exchanging halo planes: {e:?}"),
    })
}

/// The two phases of an exchange: first every rank sends its lowest planes down and receives
/// its upper halo from above, then the reverse. Pairing the phases this way matches every
/// send with its receive even where one rank is both neighbours (two ranks, periodic).
const PHASES: [(usize, usize); 2] = [(0, 1), (1, 0)];

/// The exchange through host memory and a [`Transport`]: the planes are copied into pinned
/// host buffers (the driver then copies straight from and to them, without its own bounce
/// buffer), sent, and copied back from a pinned buffer.
struct Staged<T: GpuScalar> {
    slab: Slab,
    transport: Shared,
    /// This part's rank, for errors.
    rank: usize,
    /// The pinned buffers for the planes sent and received, made at the first exchange,
    /// and the stream their copies go on.
    pinned: Option<([PinnedHostSlice<T>; 2], Arc<CudaStream>)>,
}

impl<T: GpuScalar> Drop for Staged<T> {
    /// The last copy out of the receive buffer may still be running: let it end before the
    /// buffer is freed.
    fn drop(&mut self) {
        if let Some((_, stream)) = &self.pinned {
            let _ = stream.synchronize();
        }
    }
}

impl<T: GpuScalar> Staged<T> {
    /// The send and receive buffers, sized for `r` planes.
    fn buffers(
        &mut self,
        stream: &Arc<CudaStream>,
    ) -> fdlab_solvers::Result<&mut [PinnedHostSlice<T>; 2]> {
        if self.pinned.is_none() {
            let len = self
                .slab
                .send_range(0)
                .len()
                .max(self.slab.halo_range(0).len());
            let ctx = stream.context();
            // SAFETY: every element is written (by a copy from the device, or from a
            // received message) before it is read. Flags 0: ordinary cached pinned memory,
            // which the host reads as fast as any.
            let alloc = || {
                unsafe { ctx.alloc_pinned_with_flags::<T>(len, 0) }
                    .map_err(|e| driver_error(self.rank, "cuMemHostAlloc", e))
            };
            self.pinned = Some(([alloc()?, alloc()?], stream.clone()));
        }
        Ok(&mut self.pinned.as_mut().expect("made just above").0)
    }
}

impl<T: GpuScalar> StepExchange<T> for Staged<T> {
    fn halo(&self) -> [usize; 2] {
        self.slab.halo
    }

    fn edge(&self) -> usize {
        self.slab.r
    }

    /// The host copies wait for the whole step anyway.
    fn overlaps(&self) -> bool {
        false
    }

    fn edges_queued(&mut self, _stream: &Arc<CudaStream>) -> fdlab_solvers::Result<()> {
        Ok(())
    }

    fn finish(&mut self, _stream: &Arc<CudaStream>) -> fdlab_solvers::Result<()> {
        Ok(())
    }

    fn start(
        &mut self,
        stream: &Arc<CudaStream>,
        field: &mut CudaSlice<T>,
    ) -> fdlab_solvers::Result<()> {
        let rank = self.rank;
        let (slab, transport) = (self.slab.clone(), self.transport.clone());
        let [out, inc] = self.buffers(stream)?;
        for (phase, (to_side, from_side)) in PHASES.into_iter().enumerate() {
            let to = slab.neighbours[to_side];
            let from = slab.neighbours[from_side];
            if to.is_some() {
                stream
                    .memcpy_dtoh(&field.slice(slab.send_range(to_side)), out)
                    .map_err(|e| driver_error(rank, "cuMemcpyDtoH", e))?;
            }
            // The copies are asynchronous (and fdlab turns off cudarc's event tracking):
            // wait for this one, and for the last copy out of the receive buffer, before
            // the host touches either buffer.
            stream
                .synchronize()
                .map_err(|e| driver_error(rank, "cuStreamSynchronize", e))?;
            let send: Vec<f64> = match to {
                Some(_) => {
                    let n = slab.send_range(to_side).len();
                    let host = out
                        .as_slice()
                        .map_err(|e| driver_error(rank, "cuEventSynchronize", e))?;
                    host[..n].iter().map(|v| v.as_f64()).collect()
                }
                None => vec![],
            };
            let halo = slab.halo_range(from_side);
            let mut recv = vec![0.0; halo.len()];
            let t = tag::HALO + 2 * slab.axis as u32 + phase as u32;
            {
                let mut tr = transport.lock().map_err(|_| {
                    halo_error(crate::error::Error::Transport {
                        rank,
                        detail: "the transport's lock is poisoned".into(),
                    })
                })?;
                tr.send_recv(
                    to.map(|q| (q, &send[..])),
                    from.map(|q| (q, &mut recv[..])),
                    t,
                )
                .map_err(halo_error)?;
            }
            if from.is_some() {
                let host = inc
                    .as_mut_slice()
                    .map_err(|e| driver_error(rank, "cuEventSynchronize", e))?;
                for (h, &v) in host.iter_mut().zip(&recv) {
                    *h = T::from_f64(v);
                }
                let mut dst = field.slice_mut(halo);
                stream
                    .memcpy_htod(&*inc, &mut dst)
                    .map_err(|e| driver_error(rank, "cuMemcpyHtoD", e))?;
            }
        }
        Ok(())
    }
}

/// The exchange with NCCL, device to device, on a stream of its own.
#[cfg(feature = "nccl")]
struct Nccl {
    slab: Slab,
    /// Communicator on `stream`.
    comm: cudarc::nccl::Comm,
    stream: Arc<CudaStream>,
    /// Recorded on the step's stream when the sent planes are queued.
    computed: cudarc::driver::CudaEvent,
    /// Recorded on `stream` after the exchange.
    exchanged: cudarc::driver::CudaEvent,
    /// Whether the interior is computed while the planes travel.
    overlap: bool,
}

// SAFETY: an NCCL communicator may be used from any one thread at a time; this one is only
// used by the rank that owns it, through `&mut self`.
#[cfg(feature = "nccl")]
unsafe impl Send for Nccl {}

#[cfg(feature = "nccl")]
impl<T: GpuScalar> StepExchange<T> for Nccl {
    fn halo(&self) -> [usize; 2] {
        self.slab.halo
    }

    fn edge(&self) -> usize {
        self.slab.r
    }

    fn overlaps(&self) -> bool {
        self.overlap
    }

    fn edges_queued(&mut self, stream: &Arc<CudaStream>) -> fdlab_solvers::Result<()> {
        self.computed
            .record(stream)
            .map_err(|e| driver_error(self.comm.rank(), "cuEventRecord", e))
    }

    fn finish(&mut self, stream: &Arc<CudaStream>) -> fdlab_solvers::Result<()> {
        stream
            .wait(&self.exchanged)
            .map_err(|e| driver_error(self.comm.rank(), "cuStreamWaitEvent", e))
    }

    fn start(
        &mut self,
        stream: &Arc<CudaStream>,
        field: &mut CudaSlice<T>,
    ) -> fdlab_solvers::Result<()> {
        use cudarc::nccl::result::{group_end, group_start};
        let rank = self.comm.rank();
        let event = |r: std::result::Result<(), cudarc::driver::DriverError>| {
            r.map_err(|e| driver_error(rank, "cuEventRecord / cuStreamWaitEvent", e))
        };
        // Overlapping, the event was recorded when the edges were queued: the exchange waits
        // for them only, while the interior (queued before this call, so that the host's time
        // posting the exchange does not delay it) runs beside it.
        if !self.overlap {
            event(self.computed.record(stream))?;
        }
        event(self.stream.wait(&self.computed))?;
        let nccl = |what: &str, e: cudarc::nccl::result::NcclError| {
            halo_error(crate::error::Error::Transport {
                rank: self.comm.rank(),
                detail: format!("NCCL {what} failed while exchanging halo planes: {e:?}"),
            })
        };
        let [lower, upper] = self.slab.neighbours;
        let (lo, hi) = (self.slab.halo_range(0), self.slab.halo_range(1));
        // Four disjoint parts: lower halo, owned planes, upper halo.
        let (mut halo_lo, mut rest) = field.split_at_mut(lo.end);
        let (owned, mut halo_hi) = rest.split_at_mut(hi.start - lo.end);
        let shift = |r: std::ops::Range<usize>| r.start - lo.end..r.end - lo.end;
        let send_lo = owned.slice(shift(self.slab.send_range(0)));
        let send_hi = owned.slice(shift(self.slab.send_range(1)));
        // One group per step (each group costs a launch). Messages between two ranks are
        // matched in the order they are posted, and both ranks post "down, then up", so the
        // pairs match even where one rank is both neighbours (two ranks, periodic).
        group_start().map_err(|e| nccl("group start", e))?;
        if let Some(q) = lower {
            self.comm
                .send(&send_lo, q as i32)
                .map_err(|e| nccl("send", e))?;
        }
        if let Some(q) = upper {
            self.comm
                .recv(&mut halo_hi, q as i32)
                .map_err(|e| nccl("receive", e))?;
            self.comm
                .send(&send_hi, q as i32)
                .map_err(|e| nccl("send", e))?;
        }
        if let Some(q) = lower {
            self.comm
                .recv(&mut halo_lo, q as i32)
                .map_err(|e| nccl("receive", e))?;
        }
        group_end().map_err(|e| nccl("group end", e))?;
        event(self.exchanged.record(&self.stream))?;
        Ok(())
    }
}

/// A GPU stepper over a [`Slab`] that answers as the block it owns.
///
/// Its [`Stepper::save_state`] gives its block's padded parts (the owned planes as the
/// block's interior), and [`Stepper::restore_state`] takes the whole grid's padded parts (as
/// a one-GPU stepper saves them) and keeps the slab's planes of them, halo planes included.
pub struct SlabGpu<T: GpuScalar> {
    inner: Box<dyn DeviceStepper<T>>,
    exchange: Box<dyn StepExchange<T>>,
    slab: Slab,
    /// The padded layouts of the whole grid and of the slab's array.
    whole: Layout,
    layout: Layout,
    /// How the halos travel, for the schedule.
    how: &'static str,
}

impl<T: GpuScalar> SlabGpu<T> {
    /// The part of `setup` (heat or wave, whole grid) that `slab` holds, on the GPU and with
    /// the exchange `placement` names; `transport` is the job's (the staged exchange uses it).
    /// Returns the stepper and its receivers (the block's, in global order, global cells).
    pub fn new(
        setup: &Setup,
        slab: Slab,
        placement: GpuPlacement,
        transport: &Shared,
        rank: usize,
        ranks: usize,
    ) -> Result<(SlabGpu<T>, Vec<[usize; 3]>)> {
        // A source added after the step's edge planes were sent would be missing from the
        // neighbours' halos: a slab with one there exchanges after the whole step.
        let mut source_on_edge = false;
        // A CPML's terms, after the step kernel, change the planes sent: such a slab
        // exchanges after the whole step too.
        let mut cpml = false;
        let (n, dim, r) = match setup {
            Setup::Heat(s) => (s.n, s.dim, s.order / 2),
            Setup::Wave(s) => (s.n, s.dim, s.order / 2),
            _ => {
                return Err(crate::error::Error::Unsupported(
                    "FDTD cases (only heat and wave are decomposed)".into(),
                ))
            }
        };
        let whole = Layout::new(n, dim, r);
        let layout = Layout::new(slab.shape(n), dim, r);
        let (inner, receivers): (Box<dyn DeviceStepper<T>>, Vec<[usize; 3]>) = match setup {
            Setup::Heat(s) => (
                Box::new(HeatGpu::<T>::on_device(
                    &slab::heat(s, &slab),
                    placement.ordinal,
                )?),
                vec![],
            ),
            Setup::Wave(s) => {
                let part = slab::wave(s, &slab)?;
                source_on_edge = part.sources.iter().any(|p| slab.on_edge(p.cell));
                let profiles = slab::cpml_profiles(s, &slab)?;
                cpml = profiles.is_some();
                (
                    Box::new(WaveGpu::<T>::on_device_with(
                        &part,
                        placement.ordinal,
                        profiles,
                    )?),
                    s.receivers.clone(),
                )
            }
            _ => {
                return Err(crate::error::Error::Unsupported(
                    "FDTD cases (only heat and wave are decomposed)".into(),
                ))
            }
        };
        let how = match placement.exchange {
            Exchange::Staged => "staged through host memory",
            #[cfg(feature = "nccl")]
            Exchange::Nccl(_) => "NCCL",
        };
        let exchange: Box<dyn StepExchange<T>> = match placement.exchange {
            Exchange::Staged => Box::new(Staged {
                slab: slab.clone(),
                transport: transport.clone(),
                rank,
                pinned: None,
            }),
            #[cfg(feature = "nccl")]
            Exchange::Nccl(id) => {
                let fail = |what: String| crate::error::Error::Transport {
                    rank,
                    detail: format!("{what} on GPU {}", placement.ordinal),
                };
                // The highest priority: its kernels take SMs as the interior's blocks
                // retire.
                let compute = inner.stream();
                let stream = cudarc::driver::result::stream::get_priority_range()
                    .and_then(|(_, greatest)| compute.context().new_stream_with_priority(greatest))
                    .map_err(|e| fail(format!("could not create the exchange's stream ({e:?})")))?;
                let event = || {
                    stream
                        .context()
                        .new_event(Some(
                            cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
                        ))
                        .map_err(|e| fail(format!("could not create an event ({e:?})")))
                };
                let (computed, exchanged) = (event()?, event()?);
                // Blocks until every rank of the job has joined.
                let comm = cudarc::nccl::Comm::from_rank(stream.clone(), rank, ranks, id).map_err(
                    |e| {
                        fail(format!(
                            "NCCL could not start ({e:?}); is libnccl.so on the library path?"
                        ))
                    },
                )?;
                let overlap = placement.overlap && !source_on_edge && !cpml;
                Box::new(Nccl {
                    slab: slab.clone(),
                    comm,
                    stream,
                    computed,
                    exchanged,
                    overlap,
                })
            }
        };
        #[cfg(not(feature = "nccl"))]
        let _ = (ranks, source_on_edge, cpml);
        Ok((
            SlabGpu {
                inner,
                exchange,
                slab,
                whole,
                layout,
                how,
            },
            receivers,
        ))
    }

    /// A cell of the slab's array in the block's coordinates.
    fn to_block(&self, e: fdlab_solvers::Error) -> fdlab_solvers::Error {
        match e {
            fdlab_solvers::Error::NonFinite { step, cell, value } => {
                fdlab_solvers::Error::NonFinite {
                    step,
                    cell: self.slab.to_block(cell),
                    value,
                }
            }
            e => e,
        }
    }
}

impl<T: GpuScalar> Stepper for SlabGpu<T> {
    fn advance(&mut self, n: usize) -> fdlab_solvers::Result<()> {
        self.inner
            .advance_with(n, &mut *self.exchange)
            .map_err(|e| self.to_block(e))
    }

    fn step(&self) -> u64 {
        self.inner.step()
    }

    fn field(&self) -> fdlab_solvers::Result<Vec<f64>> {
        self.inner.values(self.slab.owned_range())
    }

    fn traces(&self) -> &[Vec<f64>] {
        self.inner.traces()
    }

    /// The block's padded parts (its owned planes as their interior), and the receivers'
    /// traces.
    fn save_state(&self) -> fdlab_solvers::Result<Vec<StatePart>> {
        let mut parts = self.inner.save_state()?;
        for (name, bytes) in parts.iter_mut().filter(|(name, _)| name != TRACES) {
            let values = bytes_per_point(&self.layout, name, bytes)?;
            *bytes = block_of_slab(
                &self.layout,
                self.slab.halo[0],
                self.slab.owned,
                values,
                bytes,
            );
        }
        Ok(parts)
    }

    /// Takes the whole grid's padded parts (and the traces of the slab's receivers).
    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> fdlab_solvers::Result<()> {
        let mut local = Vec::with_capacity(parts.len());
        for (name, bytes) in parts {
            if name == TRACES {
                local.push((name.clone(), bytes.clone()));
                continue;
            }
            let values = bytes_per_point(&self.whole, name, bytes)?;
            local.push((
                name.clone(),
                slab_of_whole(&self.whole, &self.slab, values, bytes),
            ));
        }
        self.inner.restore_state(step, &local)
    }

    fn cells(&self) -> usize {
        self.slab.owned * self.slab.plane
    }

    fn bytes_per_step(&self) -> usize {
        self.inner.bytes_per_step() / self.slab.planes() * self.slab.owned
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }

    fn schedule(&self) -> String {
        let when = if self.exchange.overlaps() {
            "overlapped with the interior"
        } else {
            "after the step"
        };
        format!("{}; halos {}, {when}", self.inner.schedule(), self.how)
    }
}

/// Numbers per point of the padded state part `name` (`bytes` of little-endian f64) laid out
/// as `l`.
fn bytes_per_point(l: &Layout, name: &str, bytes: &[u8]) -> fdlab_solvers::Result<usize> {
    bytes
        .len()
        .is_multiple_of(8)
        .then(|| values_per_point(l, bytes.len() / 8))
        .flatten()
        .ok_or_else(|| {
            fdlab_solvers::Error::Invalid(format!(
                "checkpoint state: part {name} ({} bytes) is not a padded array of a {:?} grid; \
                 resume from a checkpoint of this case",
                bytes.len(),
                &l.n[..l.dim]
            ))
        })
}
