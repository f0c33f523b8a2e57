//! Boundary conditions, as the index a stencil reads outside the grid maps to.

use crate::error::{Error, Result};
use crate::grid::{Grid, Region, AXIS_NAMES};
use crate::stencil::Stencil;

/// How a stencil treats points outside the grid. Kernels update points; a boundary says where
/// reads that leave the grid land (halo filling), or that such points are not computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Period `n` on every axis: index `i` reads `i mod n`.
    Periodic,
    /// Interior only (Dirichlet): a point is computed only when every tap lies inside the grid;
    /// other outputs are left untouched (their values belong to the caller, e.g. fixed boundary
    /// values). AMD's Laplacian runs this way.
    Dirichlet,
    /// Zero normal derivative: reads mirror about the boundary point, `u[-i] = u[i]`,
    /// `u[n-1+i] = u[n-1-i]`.
    Neumann,
}

impl Boundary {
    /// All boundary kinds.
    pub const ALL: [Boundary; 3] = [Boundary::Periodic, Boundary::Dirichlet, Boundary::Neumann];

    /// `"periodic"`, `"dirichlet"` or `"neumann"`.
    pub fn name(self) -> &'static str {
        match self {
            Boundary::Periodic => "periodic",
            Boundary::Dirichlet => "dirichlet",
            Boundary::Neumann => "neumann",
        }
    }

    /// The grid index that index `i` (possibly outside `0..n`) reads, or `None` when it is
    /// outside the grid under [`Boundary::Dirichlet`]. Valid when `|reach| < n`.
    #[inline]
    pub fn map(self, i: i64, n: usize) -> Option<usize> {
        let n = n as i64;
        match self {
            Boundary::Periodic => Some(i.rem_euclid(n) as usize),
            Boundary::Dirichlet => (0..n).contains(&i).then_some(i as usize),
            Boundary::Neumann => Some(if i < 0 {
                -i
            } else if i >= n {
                2 * (n - 1) - i
            } else {
                i
            } as usize),
        }
    }

    /// Checks that every stencil fits the grid under this boundary, and returns the region of
    /// points that are computed.
    pub fn check(self, grid: &Grid, stencils: &[Stencil]) -> Result<Region> {
        if stencils.is_empty() {
            return Err(Error::Stencil {
                detail: "no stencil given".into(),
            });
        }
        let shape = grid.shape();
        let mut region = Region::all(grid);
        for s in stencils {
            s.check_axes(grid)?;
            let (below, above) = (s.reach_below(), s.reach_above());
            for a in 0..grid.dim() {
                let needed = match self {
                    Boundary::Periodic | Boundary::Dirichlet => below[a] + above[a] + 1,
                    Boundary::Neumann => below[a].max(above[a]) + 1,
                };
                if shape[a] < needed {
                    return Err(Error::StencilTooWide {
                        axis: AXIS_NAMES[a],
                        radius: below[a].max(above[a]),
                        n: shape[a],
                        needed,
                        boundary: self.name(),
                    });
                }
                if self == Boundary::Dirichlet {
                    region.lo[a] = region.lo[a].max(below[a]);
                    region.hi[a] = region.hi[a].min(shape[a] - above[a]);
                }
            }
        }
        Ok(region)
    }
}

impl std::fmt::Display for Boundary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Boundary {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "periodic" => Ok(Boundary::Periodic),
            "dirichlet" | "interior" => Ok(Boundary::Dirichlet),
            "neumann" => Ok(Boundary::Neumann),
            _ => Err(Error::Unknown {
                kind: "boundary",
                name: s.into(),
                valid: Boundary::ALL.iter().map(|b| b.name().to_string()).collect(),
            }),
        }
    }
}
