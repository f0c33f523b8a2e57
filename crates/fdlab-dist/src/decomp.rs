//! A global grid split over a Cartesian process grid: who owns which block, and who its
//! neighbours are.

use crate::error::{Error, Result};

/// What lies beyond one face of a subdomain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Neighbour {
    /// The subdomain of this rank (its halo comes from it; the rank may be itself on a periodic
    /// axis that is not split).
    Rank(usize),
    /// The edge of the global grid: the halo stays zero (the solvers' Dirichlet / rigid wall).
    Edge,
}

/// One rank's block of the global grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subdomain {
    /// The rank that owns it.
    pub rank: usize,
    /// Its position in the process grid.
    pub coords: [usize; 3],
    /// Global index of its first point per axis.
    pub offset: [usize; 3],
    /// Its points per axis (1 on unused axes).
    pub n: [usize; 3],
    /// Per axis, the neighbours below and above (`Edge` on unused axes).
    pub neighbours: [[Neighbour; 2]; 3],
}

impl Subdomain {
    /// Whether global point `p` lies in this block.
    pub fn contains(&self, p: [usize; 3]) -> bool {
        (0..3).all(|a| p[a] >= self.offset[a] && p[a] < self.offset[a] + self.n[a])
    }

    /// Points in the block.
    pub fn cells(&self) -> usize {
        self.n.iter().product()
    }
}

/// A global grid of `shape` points split into `dims[0] × dims[1] × dims[2]` blocks, one per
/// rank. Blocks differ in size by at most one point per axis (the first ones take the extra).
/// Ranks run x fastest: rank = c₀ + d₀ (c₁ + d₁ c₂).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decomposition {
    shape: [usize; 3],
    dim: usize,
    dims: [usize; 3],
    periodic: [bool; 3],
    halo: usize,
}

impl Decomposition {
    /// Split a grid of `shape` points with `dim` axes (2 or 3; `shape[a] = 1` on unused axes)
    /// over `ranks` processes. `dims` gives the process grid, or `None` chooses the one with the
    /// least halo surface (as `MPI_Dims_create` balances a grid, but weighted by the shape).
    /// `periodic[a]` wraps axis `a`; `halo` is the stencil radius, which every subdomain must
    /// be at least as wide as.
    pub fn new(
        shape: [usize; 3],
        dim: usize,
        ranks: usize,
        dims: Option<[usize; 3]>,
        periodic: [bool; 3],
        halo: usize,
    ) -> Result<Decomposition> {
        if !(1..=3).contains(&dim) || ranks == 0 || shape[..dim].contains(&0) {
            return Err(Error::Unsupported(format!(
                "a {dim}-axis grid of shape {shape:?} on {ranks} processes"
            )));
        }
        let mut shape = shape;
        for s in &mut shape[dim..] {
            *s = 1;
        }
        let dims = match dims {
            Some(d) => {
                let product: usize = d.iter().product();
                if product != ranks {
                    return Err(Error::ProcessCount {
                        dims: d,
                        product,
                        ranks,
                    });
                }
                if let Some(axis) = (dim..3).find(|&a| d[a] != 1) {
                    return Err(Error::UnusedAxis { dims: d, axis, dim });
                }
                d
            }
            None => {
                best_dims(shape, dim, ranks, periodic, halo.max(1)).ok_or(Error::CannotSplit {
                    ranks,
                    shape,
                    min: halo.max(1),
                })?
            }
        };
        for a in 0..dim {
            let extent = shape[a] / dims[a];
            // A periodic axis kept whole still copies halos from its own far side.
            if extent == 0 || (extent < halo && (dims[a] > 1 || periodic[a])) {
                return Err(Error::HaloTooWide {
                    dims,
                    axis: a,
                    extent,
                    halo,
                });
            }
        }
        Ok(Decomposition {
            shape,
            dim,
            dims,
            periodic,
            halo,
        })
    }

    /// The global grid's points per axis.
    pub fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// Axes of the grid.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The process grid.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The halo width.
    pub fn halo(&self) -> usize {
        self.halo
    }

    /// Processes in the job.
    pub fn ranks(&self) -> usize {
        self.dims.iter().product()
    }

    /// The rank at process-grid position `c`.
    pub fn rank_at(&self, c: [usize; 3]) -> usize {
        c[0] + self.dims[0] * (c[1] + self.dims[1] * c[2])
    }

    /// The block of `rank` (which must be below [`Decomposition::ranks`]).
    pub fn subdomain(&self, rank: usize) -> Subdomain {
        let d = self.dims;
        let coords = [rank % d[0], (rank / d[0]) % d[1], rank / (d[0] * d[1])];
        let mut offset = [0; 3];
        let mut n = [1; 3];
        let mut neighbours = [[Neighbour::Edge; 2]; 3];
        for a in 0..self.dim {
            let (base, extra) = (self.shape[a] / d[a], self.shape[a] % d[a]);
            let c = coords[a];
            offset[a] = c * base + c.min(extra);
            n[a] = base + usize::from(c < extra);
            let step = |to: Option<usize>| {
                to.map_or(Neighbour::Edge, |t| {
                    let mut cc = coords;
                    cc[a] = t;
                    Neighbour::Rank(self.rank_at(cc))
                })
            };
            let below = if c > 0 {
                Some(c - 1)
            } else {
                self.periodic[a].then_some(d[a] - 1)
            };
            let above = if c + 1 < d[a] {
                Some(c + 1)
            } else {
                self.periodic[a].then_some(0)
            };
            neighbours[a] = [step(below), step(above)];
        }
        Subdomain {
            rank,
            coords,
            offset,
            n,
            neighbours,
        }
    }

    /// The rank whose block holds global point `p`.
    pub fn owner(&self, p: [usize; 3]) -> usize {
        let mut c = [0; 3];
        for a in 0..self.dim {
            let (base, extra) = (self.shape[a] / self.dims[a], self.shape[a] % self.dims[a]);
            // The first `extra` blocks have base + 1 points.
            let split = extra * (base + 1);
            c[a] = if p[a] < split {
                p[a] / (base + 1)
            } else {
                extra + (p[a] - split) / base.max(1)
            };
        }
        self.rank_at(c)
    }
}

/// The process grid with the least halo surface whose blocks are at least `min` points wide;
/// among equals the most even one, then the one that splits x least (x runs are contiguous, so
/// slabs across the later axes pack in long copies).
fn best_dims(
    shape: [usize; 3],
    dim: usize,
    ranks: usize,
    periodic: [bool; 3],
    min: usize,
) -> Option<[usize; 3]> {
    let mut best: Option<([usize; 3], (usize, usize))> = None;
    let divisors = |n: usize| (1..=n).filter(move |d| n.is_multiple_of(*d));
    for d0 in divisors(ranks) {
        for d1 in divisors(ranks / d0) {
            let d2 = ranks / d0 / d1;
            let d = [d0, d1, d2];
            if (dim..3).any(|a| d[a] != 1) || (0..dim).any(|a| shape[a] / d[a] < min) {
                continue;
            }
            // Faces exchanged: each cut carries the area of the other axes.
            let surface: usize = (0..dim)
                .map(|a| {
                    let cuts = d[a] - 1 + usize::from(periodic[a] && d[a] > 1);
                    cuts * shape.iter().product::<usize>() / shape[a]
                })
                .sum();
            // Ties (common on periodic grids) go to the most even grid, as MPI_Dims_create.
            let key = (surface, *d.iter().max().unwrap_or(&1));
            if best.is_none_or(|(_, k)| key < k) {
                best = Some((d, key));
            }
        }
    }
    best.map(|(d, _)| d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_grid_and_owners_agree() {
        let d = Decomposition::new([67, 45, 33], 3, 6, Some([3, 1, 2]), [false; 3], 2).unwrap();
        let mut count = vec![0u8; 67 * 45 * 33];
        for r in 0..6 {
            let s = d.subdomain(r);
            for k in 0..s.n[2] {
                for j in 0..s.n[1] {
                    for i in 0..s.n[0] {
                        let p = [s.offset[0] + i, s.offset[1] + j, s.offset[2] + k];
                        assert_eq!(d.owner(p), r, "{p:?}");
                        count[p[0] + 67 * (p[1] + 45 * p[2])] += 1;
                    }
                }
            }
        }
        assert!(count.iter().all(|&c| c == 1));
    }
}
