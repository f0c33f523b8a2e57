//! How subdomains talk: a small point-to-point interface that the halo exchange, the output
//! gather and the receiver traces are built on, so that any message layer (threads, MPI) that
//! can pair a send with a receive can carry a decomposed run.

use crate::error::Result;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Point-to-point messages of `f64` between the ranks of a job.
///
/// Every call is paired: when rank A sends to B with a tag, B receives from A with that tag, and
/// messages between two ranks with one tag arrive in the order they were sent. A call must not
/// wait forever: a peer that has ended or does not answer within the transport's timeout is an
/// error (or, where the message layer cannot recover, the end of the whole job).
pub trait Transport: Send {
    /// This process's rank, 0 to `size − 1`.
    fn rank(&self) -> usize;
    /// Processes in the job.
    fn size(&self) -> usize;
    /// Send `send.1` to rank `send.0` while receiving `recv.1.len()` values from rank `recv.0`
    /// into `recv.1`; either side may be absent. Returns when both are done.
    fn send_recv(
        &mut self,
        send: Option<(usize, &[f64])>,
        recv: Option<(usize, &mut [f64])>,
        tag: u32,
    ) -> Result<()>;

    /// Gather every rank's `local` on rank 0, concatenated in rank order; `counts[r]` is how
    /// many values rank `r` sends. Returns `Some` on rank 0 and `None` elsewhere.
    fn gather(&mut self, local: &[f64], counts: &[usize], tag: u32) -> Result<Option<Vec<f64>>> {
        if self.rank() != 0 {
            // Rank 0 skips empty parts, so they are not sent.
            if counts[self.rank()] > 0 {
                self.send_recv(Some((0, local)), None, tag)?;
            }
            return Ok(None);
        }
        let mut all = vec![0.0; counts.iter().sum()];
        let mut at = 0;
        for (r, &c) in counts.iter().enumerate() {
            let dst = &mut all[at..at + c];
            if r == 0 {
                dst.copy_from_slice(local);
            } else if c > 0 {
                self.send_recv(None, Some((r, dst)), tag)?;
            }
            at += c;
        }
        Ok(Some(all))
    }

    /// Return once every rank has called it (collective). The default passes a token to
    /// rank 0 and back, within the transport's timeout; a message layer with a barrier of its
    /// own that waits without a deadline (MPI) overrides it, so that ranks whose tasks end
    /// at different times can wait for each other.
    fn barrier(&mut self) -> Result<()> {
        let counts = vec![1; self.size()];
        self.gather(&[0.0], &counts, tag::BARRIER)?;
        if self.rank() == 0 {
            for r in 1..self.size() {
                self.send_recv(Some((r, &[0.0])), None, tag::BARRIER)?;
            }
        } else {
            let mut token = [0.0];
            self.send_recv(None, Some((0, &mut token)), tag::BARRIER)?;
        }
        Ok(())
    }
}

/// A transport shared by the parts of one rank (its halo exchange and its gathers).
pub type Shared = Arc<Mutex<Box<dyn Transport>>>;

/// Message tags, one per kind of traffic, so that a stray message is caught, not misread.
pub mod tag {
    /// Halo slabs: `HALO + 2·axis + phase`.
    pub const HALO: u32 = 10;
    /// Halo slabs of the CPML's ψ, likewise.
    pub const PSI: u32 = 20;
    /// The field gathered for an output.
    pub const FIELD: u32 = 30;
    /// New receiver samples.
    pub const TRACES: u32 = 31;
    /// A state part gathered for a checkpoint.
    pub const STATE: u32 = 32;
    /// The stop every rank agrees on before a step.
    pub const STOP: u32 = 33;
    /// A barrier's tokens.
    pub const BARRIER: u32 = 34;
}

/// How long a rank waits for a peer before it gives up: `FDLAB_DIST_TIMEOUT_S` seconds, else
/// 60 ([`fdlab_core::config::dist_timeout`]).
pub fn default_timeout() -> Duration {
    fdlab_core::config::dist_timeout()
}
