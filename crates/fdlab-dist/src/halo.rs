//! Halo exchange as one more boundary kind: each axis in turn, a subdomain sends the slabs next
//! to its faces to its neighbours and receives theirs into its halos. Slabs span the whole
//! padded extent of the other axes, so edges and corners arrive by the second and third axis,
//! exactly as the single-domain periodic fill makes them. The same exchange serves the fields
//! (one value per point) and the CPML memory variables (three per point).

use crate::decomp::{Neighbour, Subdomain};
use crate::transport::{tag, Shared};
use fdlab_core::Scalar;
use fdlab_solvers::layout::{HaloFill, Layout};

/// Fills a subdomain's halos from its neighbours through a transport: the [`HaloFill`] that a
/// decomposed stepper calls before each step. Faces on the global grid's edge keep zero halos.
pub struct HaloExchange {
    sub: Subdomain,
    transport: Shared,
    /// Tags of this exchange's messages: `tag + 2·axis + phase`.
    tag: u32,
    send: Vec<f64>,
    recv: Vec<f64>,
}

impl HaloExchange {
    /// The exchange of `sub`'s halos of a field over `transport`.
    pub fn new(sub: Subdomain, transport: Shared) -> HaloExchange {
        HaloExchange::tagged(sub, transport, tag::HALO)
    }

    /// The same for another array of the subdomain (e.g. the CPML's ψ), with its own tags so
    /// that its messages are never taken for the field's.
    pub fn tagged(sub: Subdomain, transport: Shared, tag: u32) -> HaloExchange {
        HaloExchange {
            sub,
            transport,
            tag,
            send: vec![],
            recv: vec![],
        }
    }
}

/// Calls `f(start, len)` for each contiguous run of the slab of `l.r` layers along axis `a`
/// starting at padded position `from`, over the whole padded extent of the other axes.
fn slab_runs(l: &Layout, a: usize, from: usize, mut f: impl FnMut(usize, usize)) {
    let mut lo = [0; 3];
    let mut hi = l.p;
    lo[a] = from;
    hi[a] = from + l.r;
    for z in lo[2]..hi[2] {
        for y in lo[1]..hi[1] {
            f(lo[0] + l.p[0] * (y + l.p[1] * z), hi[0] - lo[0]);
        }
    }
}

/// What a halo point holds: one value or several, sent as f64 (exact for f32).
pub trait Point: Copy + Send {
    /// Values per point.
    const VALUES: usize;
    /// Append the point's values to `out`.
    fn put(&self, out: &mut Vec<f64>);
    /// The point from its values.
    fn take(values: &[f64]) -> Self;
}

macro_rules! point {
    ($t:ty) => {
        impl Point for $t {
            const VALUES: usize = 1;
            fn put(&self, out: &mut Vec<f64>) {
                out.push(self.as_f64());
            }
            fn take(values: &[f64]) -> Self {
                <$t as Scalar>::from_f64(values[0])
            }
        }
        impl Point for [$t; 3] {
            const VALUES: usize = 3;
            fn put(&self, out: &mut Vec<f64>) {
                out.extend(self.iter().map(|v| v.as_f64()));
            }
            fn take(values: &[f64]) -> Self {
                std::array::from_fn(|i| <$t as Scalar>::from_f64(values[i]))
            }
        }
    };
}
point!(f32);
point!(f64);

fn pack<V: Point>(l: &Layout, a: usize, from: usize, u: &[V], out: &mut Vec<f64>) {
    out.clear();
    slab_runs(l, a, from, |s, n| {
        for v in &u[s..s + n] {
            v.put(out);
        }
    });
}

fn unpack<V: Point>(l: &Layout, a: usize, to: usize, data: &[f64], u: &mut [V]) {
    let mut at = 0;
    slab_runs(l, a, to, |s, n| {
        for d in &mut u[s..s + n] {
            *d = V::take(&data[at..at + V::VALUES]);
            at += V::VALUES;
        }
    });
}

impl<V: Point> HaloFill<V> for HaloExchange {
    fn fill(&mut self, l: &Layout, u: &mut [V]) -> fdlab_solvers::Result<()> {
        let me = self.sub.rank;
        let r = l.r;
        for a in 0..l.dim {
            let n = l.n[a];
            let [below, above] = self.sub.neighbours[a];
            // Phase 0: the low interior slab goes down while the high halo fills from above;
            // phase 1: the high interior slab goes up while the low halo fills from below.
            let phases = [(below, r, above, r + n), (above, n, below, 0)];
            for (phase, (to, from, source, into)) in phases.into_iter().enumerate() {
                if to == Neighbour::Rank(me) {
                    // A periodic axis kept whole: the far side of this very block.
                    pack(l, a, from, u, &mut self.send);
                    unpack(l, a, into, &self.send, u);
                    continue;
                }
                let to = match to {
                    Neighbour::Rank(t) => {
                        pack(l, a, from, u, &mut self.send);
                        Some(t)
                    }
                    Neighbour::Edge => None,
                };
                let source = match source {
                    Neighbour::Rank(s) => {
                        let mut len = 0;
                        slab_runs(l, a, into, |_, k| len += k * V::VALUES);
                        self.recv.resize(len, 0.0);
                        Some(s)
                    }
                    Neighbour::Edge => None,
                };
                let mut transport = self.transport.lock().map_err(|_| {
                    fdlab_solvers::Error::Invalid("the transport's lock is poisoned".into())
                })?;
                transport
                    .send_recv(
                        to.map(|t| (t, &self.send[..])),
                        source.map(|s| (s, &mut self.recv[..])),
                        self.tag + 2 * a as u32 + phase as u32,
                    )
                    .map_err(|e| fdlab_solvers::Error::Halo(Box::new(e)))?;
                drop(transport);
                if source.is_some() {
                    unpack(l, a, into, &self.recv, u);
                }
            }
        }
        Ok(())
    }
}
