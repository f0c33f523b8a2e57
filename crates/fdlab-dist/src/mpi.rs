//! MPI as a [`Transport`] (feature `mpi`, through rsmpi): host buffers, immediate sends and
//! receives polled against a deadline, so that a peer that never answers ends the job instead
//! of hanging it.

use crate::error::Result;
use crate::transport::{default_timeout, Transport};
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Destination, Source};
use std::time::{Duration, Instant};

/// Whether this process was started by an MPI launcher (`mpirun`, `srun`): one of the
/// variables that Open MPI, MPICH and PMIx set for each process is set
/// ([`fdlab_core::config::mpi_launched`]).
pub fn launched() -> bool {
    fdlab_core::config::mpi_launched()
}

/// Start MPI (funnelled threads: only the thread that starts it calls MPI). `None` when MPI
/// was started already.
pub fn initialize() -> Option<Universe> {
    mpi::initialize_with_threading(mpi::Threading::Funneled).map(|(u, _)| u)
}

/// End the whole job now with `code`, after printing `message` (for a rank that failed: its
/// peers would otherwise wait for it).
pub fn abort(message: &str, code: i32) -> ! {
    eprintln!("{message}");
    SimpleCommunicator::world().abort(code)
}

/// Print panics as usual, then end the whole job: a panicking rank must not leave its peers
/// waiting.
pub fn abort_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        SimpleCommunicator::world().abort(101)
    }));
}

/// The world communicator of a started MPI.
pub struct MpiTransport {
    world: SimpleCommunicator,
    timeout: Duration,
}

// SAFETY: MPI is started funnelled; the transport is used by one thread at a time (behind the
// stepper's mutex) and only by the thread that started MPI, where the run loop lives.
unsafe impl Send for MpiTransport {}

impl MpiTransport {
    /// The world of `universe`; a peer that does not answer within [`default_timeout`]
    /// (`FDLAB_DIST_TIMEOUT_S`) ends the job.
    pub fn new(universe: &Universe) -> MpiTransport {
        MpiTransport {
            world: universe.world(),
            timeout: default_timeout(),
        }
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// `MPI_Barrier`: no deadline, since ranks running whole shots end them at different
    /// times (a rank that fails ends the job through `MPI_Abort`).
    fn barrier(&mut self) -> Result<()> {
        self.world.barrier();
        Ok(())
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn send_recv(
        &mut self,
        send: Option<(usize, &[f64])>,
        recv: Option<(usize, &mut [f64])>,
        tag: u32,
    ) -> Result<()> {
        let (world, timeout) = (&self.world, self.timeout);
        let peer = recv.as_ref().map(|r| r.0).or(send.map(|s| s.0));
        mpi::request::scope(|scope| {
            let mut sending = send.map(|(to, buf)| {
                world
                    .process_at_rank(to as i32)
                    .immediate_send_with_tag(scope, buf, tag as i32)
            });
            let mut receiving = recv.map(|(from, buf)| {
                world
                    .process_at_rank(from as i32)
                    .immediate_receive_into_with_tag(scope, buf, tag as i32)
            });
            let deadline = Instant::now() + timeout;
            let mut polls = 0u32;
            loop {
                if let Some(r) = sending.take() {
                    sending = r.test().err();
                }
                if let Some(r) = receiving.take() {
                    receiving = r.test().err();
                }
                if sending.is_none() && receiving.is_none() {
                    return;
                }
                if Instant::now() > deadline {
                    // Pending requests cannot be abandoned safely: the job ends here.
                    abort(
                        &format!(
                            "error: rank {}: rank {} did not answer within {:.0} s \
                             (FDLAB_DIST_TIMEOUT_S); ending the job",
                            world.rank(),
                            peer.unwrap_or(0),
                            timeout.as_secs_f64()
                        ),
                        3,
                    );
                }
                // Spin briefly for a fast exchange, then give the core to others (ranks may
                // outnumber cores).
                polls += 1;
                if polls < 200 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        });
        Ok(())
    }
}

impl MpiTransport {
    /// Where this rank's part runs with `--backend cuda`: GPU `local rank mod devices` of its
    /// host, halos through NCCL (when built with it, and every rank of every host has a GPU of
    /// its own) or else through host memory and MPI. Collective: every rank must call it.
    pub fn gpu_placement(&self, devices: usize) -> Result<crate::gpu::GpuPlacement> {
        self.gpu_placement_with(devices, crate::DistOptions::default())
    }

    /// As [`MpiTransport::gpu_placement`], with the halos moved as `dist` says (every rank
    /// must pass the same).
    pub fn gpu_placement_with(
        &self,
        devices: usize,
        dist: crate::DistOptions,
    ) -> Result<crate::gpu::GpuPlacement> {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let host = self.world.split_shared(self.world.rank());
        let (local_rank, local_size) = (host.rank() as usize, host.size() as usize);
        // The busiest host decides for all, so that every rank picks the same exchange.
        let mut busiest = 0u64;
        self.world
            .all_reduce_into(&(local_size as u64), &mut busiest, SystemOperation::max());
        let exchange = self.exchange(busiest as usize, devices, dist.staged)?;
        Ok(crate::gpu::GpuPlacement {
            ordinal: local_rank % devices.max(1),
            exchange,
            overlap: dist.overlap,
        })
    }

    /// Rank 0 picks the exchange and, for NCCL, makes the job id that it sends to every rank.
    fn exchange(
        &self,
        per_host: usize,
        devices: usize,
        staged: bool,
    ) -> Result<crate::gpu::Exchange> {
        #[cfg(feature = "nccl")]
        {
            use mpi::collective::Root;
            if !staged && per_host <= devices {
                let mut bytes = [0 as std::ffi::c_char; 128];
                if self.world.rank() == 0 {
                    bytes = *crate::threads::new_nccl_id()?.internal();
                }
                self.world.process_at_rank(0).broadcast_into(&mut bytes[..]);
                return Ok(crate::gpu::Exchange::Nccl(cudarc::nccl::Id::uninit(bytes)));
            }
        }
        let _ = (per_host, devices, staged);
        Ok(crate::gpu::Exchange::Staged)
    }
}
