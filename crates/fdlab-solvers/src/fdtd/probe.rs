//! Point probes and the electromagnetic energy.

use super::grid::{Component, Fields, Grid};
use fdlab_core::Scalar;

/// Records one component at one cell after every step.
///
/// Sample `s` is taken after step `s + 1`: an electric component at time `(s + 1)·Δt`, a
/// magnetic one at `(s + ½)·Δt`.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The component recorded.
    pub component: Component,
    /// The cell.
    pub cell: [usize; 3],
    /// The time series.
    pub samples: Vec<f64>,
}

/// `½ Σ (ε_r |E|² + |H|²) · ΔV` over the grid, summed in f64.
///
/// E and H are stored half a step apart, so this mixes two times: for a lossless source-free run
/// it oscillates at the relative level `O(Δt·ω)` instead of staying constant. The conserved,
/// time-centred form is what [`super::Fdtd::step_energy`] returns.
pub fn energy<T: Scalar>(grid: &Grid, eps_r: &[f64], f: &Fields<T>) -> f64 {
    let mut e = 0.0;
    let mut h = 0.0;
    for c in 0..grid.cells() {
        let sq = |v: &[T]| v[c].as_f64() * v[c].as_f64();
        e += eps_r[c] * (sq(&f.ex) + sq(&f.ey) + sq(&f.ez));
        h += sq(&f.hx) + sq(&f.hy) + sq(&f.hz);
    }
    0.5 * (e + h) * grid.cell_volume()
}

/// `½ Σ (ε_r E⁰·E¹ + |H|²) · ΔV`: E from two consecutive steps around the stored H.
pub(crate) fn centred_energy<T: Scalar>(
    grid: &Grid,
    eps_r: &[f64],
    e0: &[Vec<T>; 3],
    f: &Fields<T>,
) -> f64 {
    let e1 = [&f.ex, &f.ey, &f.ez];
    let mut e = 0.0;
    let mut h = 0.0;
    for c in 0..grid.cells() {
        let dot: f64 = (0..3).map(|a| e0[a][c].as_f64() * e1[a][c].as_f64()).sum();
        e += eps_r[c] * dot;
        let sq = |v: &[T]| v[c].as_f64() * v[c].as_f64();
        h += sq(&f.hx) + sq(&f.hy) + sq(&f.hz);
    }
    0.5 * (e + h) * grid.cell_volume()
}
