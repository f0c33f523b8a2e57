//! An in-process transport: one thread per rank, one channel per ordered pair of ranks. It
//! runs decomposed steppers in plain `cargo test`, with no MPI installed.

use crate::error::{Error, Result};
use crate::transport::{default_timeout, Transport};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

type Message = (u32, Vec<f64>);

/// One rank's end of an in-process job made by [`LocalTransport::group`].
pub struct LocalTransport {
    rank: usize,
    to: Vec<Sender<Message>>,
    from: Vec<Receiver<Message>>,
    timeout: Duration,
}

impl LocalTransport {
    /// The ends of a job of `ranks` ranks, in rank order; give each to its own thread. A rank
    /// whose end is dropped (its thread failed or ended) makes its peers' receives fail at once.
    pub fn group(ranks: usize) -> Vec<LocalTransport> {
        // Channel (a, b) carries messages from a to b: a holds the sender, b the receiver.
        let mut tx: Vec<Vec<Sender<Message>>> = (0..ranks).map(|_| vec![]).collect();
        let mut rx: Vec<Vec<Receiver<Message>>> = (0..ranks).map(|_| vec![]).collect();
        for to_a in tx.iter_mut() {
            for from_a in rx.iter_mut() {
                let (s, r) = channel();
                to_a.push(s);
                from_a.push(r);
            }
        }
        let timeout = default_timeout();
        tx.into_iter()
            .zip(rx)
            .enumerate()
            .map(|(rank, (to, from))| LocalTransport {
                rank,
                to,
                from,
                timeout,
            })
            .collect()
    }

    /// Wait at most `timeout` for each message.
    pub fn with_timeout(mut self, timeout: Duration) -> LocalTransport {
        self.timeout = timeout;
        self
    }

    fn fail(&self, detail: String) -> Error {
        Error::Transport {
            rank: self.rank,
            detail,
        }
    }
}

impl Transport for LocalTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn send_recv(
        &mut self,
        send: Option<(usize, &[f64])>,
        recv: Option<(usize, &mut [f64])>,
        tag: u32,
    ) -> Result<()> {
        // Channels are unbounded, so sending first never waits on the peer.
        if let Some((to, data)) = send {
            self.to[to]
                .send((tag, data.to_vec()))
                .map_err(|_| self.fail(format!("rank {to} has ended; cannot send to it")))?;
        }
        if let Some((from, buf)) = recv {
            let (got, data) = match self.from[from].recv_timeout(self.timeout) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.fail(format!(
                        "no message from rank {from} within {:.0} s",
                        self.timeout.as_secs_f64()
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.fail(format!("rank {from} has ended")))
                }
            };
            if got != tag || data.len() != buf.len() {
                return Err(self.fail(format!(
                    "from rank {from}: expected tag {tag} with {} values, got tag {got} with {}",
                    buf.len(),
                    data.len()
                )));
            }
            buf.copy_from_slice(&data);
        }
        Ok(())
    }
}
