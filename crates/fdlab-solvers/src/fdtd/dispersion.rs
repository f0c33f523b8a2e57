//! One-pole Lorentz and Debye media through an auxiliary differential equation (ADE) on the
//! polarization `P` (normalized units, `c = ε0 = μ0 = 1`, time dependence `e^{−iωt}` as for
//! [`super::Drude`]).
//!
//! Both enter Ampère's law as the polarization current `∂P/∂t`:
//! `ε∞ ∂E/∂t = ∇×H − σE − ∂P/∂t`, and the E update subtracts `cb·(P^{n+1} − P^n)/Δt`.
//!
//! * [`Lorentz`]: `P_tt + 2δ P_t + ω0² P = Δε ω0² E`, so `ε(ω) = ε∞ + Δε ω0²/(ω0² − ω² − 2iδω)`.
//!   Central differences at step n (Taflove & Hagness, ch. 9) give the explicit
//!   `P^{n+1} = [(2 − ω0²Δt²) P^n − (1 − δΔt) P^{n−1} + Δε ω0² Δt² E^n]/(1 + δΔt)`, computed
//!   before the E update from `E^n`. Lossless, the scheme's discrete dispersion relation is
//!   `ε∞Ω⁴ − Ω²(ε∞ω0² + Δεω0² + K²) + K²ω0² = 0` with `Ω = (2/Δt) sin(ωΔt/2)` and `K² ≤ 4Σ1/d²`;
//!   its roots stay below `4/Δt²` (stable) when `Δt ≤ 1/sqrt(Σ1/d² + ω0²(1 + Δε)/4)` for any
//!   `ε∞ ≥ 1` (see [`lorentz_dt_limit`]); damping only helps.
//! * [`Debye`]: `τ P_t + P = Δε E`, so `ε(ω) = ε∞ + Δε/(1 − iωτ)`. The trapezoidal (bilinear)
//!   rule `P^{n+1} = kP·P^n + bP·(E^{n+1} + E^n)`, `kP = (1 − Δt/2τ)/(1 + Δt/2τ)`,
//!   `bP = Δε (Δt/2τ)/(1 + Δt/2τ)`, involves `E^{n+1}`, so the E update is solved for it in
//!   the Debye cells: `E^{n+1} = (E* − (cb/Δt)·((kP − 1)P^n + bP·E^n))/(1 + cb·bP/Δt)`, where
//!   `E*` is the ordinary (non-dispersive) update. The pole is dissipative and the bilinear
//!   rule A-stable, so the Yee Courant limit is unchanged.
//!
//! A soft source in a Debye cell is added after that solve, unscaled: keep sources outside
//! Debye boxes for exact impressed currents.
//!
//! Only dispersive cells store `P` (one list per E component and model), like the Drude `J`.

use super::grid::{Component, Fields, Grid};
use crate::error::{Error, Result};
use fdlab_core::Scalar;

/// One-pole Lorentz parameters, normalized units: `ε(ω) = ε∞ + Δε ω0²/(ω0² − ω² − 2iδω)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lorentz {
    /// `Δε = ε_s − ε∞` (≥ 0).
    pub delta_eps: f64,
    /// Resonance `ω0` in radians per unit time (> 0).
    pub resonance_frequency: f64,
    /// Damping `δ` per unit time (≥ 0; 0 is lossless).
    pub damping: f64,
}

/// One-pole Debye parameters, normalized units: `ε(ω) = ε∞ + Δε/(1 − iωτ)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Debye {
    /// `Δε = ε_s − ε∞` (≥ 0).
    pub delta_eps: f64,
    /// Relaxation time `τ` (> 0).
    pub relaxation_time: f64,
}

impl Lorentz {
    /// Refuse non-finite values, `Δε < 0`, `ω0 ≤ 0` or `δ < 0`; the message names the key.
    pub fn check(&self) -> Result<()> {
        bad_lorentz(self).map_or(Ok(()), |(k, v, want)| {
            Err(Error::Invalid(format!(
                "Lorentz {k} {v}: use a finite value {want}"
            )))
        })
    }
}

impl Debye {
    /// Refuse non-finite values, `Δε < 0` or `τ ≤ 0`; the message names the key.
    pub fn check(&self) -> Result<()> {
        bad_debye(self).map_or(Ok(()), |(k, v, want)| {
            Err(Error::Invalid(format!(
                "Debye {k} {v}: use a finite value {want}"
            )))
        })
    }
}

/// The first offending Lorentz parameter as (key, value, requirement).
pub(crate) fn bad_lorentz(l: &Lorentz) -> Option<(&'static str, f64, &'static str)> {
    let fin = |v: f64| v.is_finite();
    if !(fin(l.delta_eps) && l.delta_eps >= 0.0) {
        Some(("delta_eps", l.delta_eps, ">= 0"))
    } else if !(fin(l.resonance_frequency) && l.resonance_frequency > 0.0) {
        Some(("resonance_frequency", l.resonance_frequency, "> 0"))
    } else if !(fin(l.damping) && l.damping >= 0.0) {
        Some(("damping", l.damping, ">= 0"))
    } else {
        None
    }
}

/// The first offending Debye parameter as (key, value, requirement).
pub(crate) fn bad_debye(d: &Debye) -> Option<(&'static str, f64, &'static str)> {
    if !(d.delta_eps.is_finite() && d.delta_eps >= 0.0) {
        Some(("delta_eps", d.delta_eps, ">= 0"))
    } else if !(d.relaxation_time.is_finite() && d.relaxation_time > 0.0) {
        Some(("relaxation_time", d.relaxation_time, "> 0"))
    } else {
        None
    }
}

/// The largest stable step of the Yee grid with Lorentz cells `l` (any `ε∞ ≥ 1`):
/// `1/sqrt(1/dx² + 1/dy² + 1/dz² + ω0²(1 + Δε)/4)`.
pub fn lorentz_dt_limit(grid: &Grid, l: &Lorentz) -> f64 {
    let s: f64 = grid.spacing.iter().map(|d| 1.0 / (d * d)).sum();
    let w2 = l.resonance_frequency * l.resonance_frequency;
    1.0 / (s + 0.25 * w2 * (1.0 + l.delta_eps)).sqrt()
}

/// The dispersive cells of one E component under one model: storage indices, the three
/// update coefficients, `p` (`P^n` between steps) and `q` (Lorentz: `P^{n−1}`; Debye: `E^n`).
#[derive(Debug, Clone, Default)]
struct Branch {
    cells: Vec<usize>,
    c: Vec<[f64; 3]>,
    p: Vec<f64>,
    q: Vec<f64>,
}

/// One branch of [`Cells`] as slices (see [`Cells::views`]).
pub(crate) struct PoleView<'a> {
    /// A Lorentz branch (else Debye).
    pub lorentz: bool,
    /// Storage cells.
    pub cells: &'a [usize],
    /// Per cell: Lorentz `(c0, c1, c2)` of `P^{n+1} = c0 P^n + c1 P^{n−1} + c2 E^n`; Debye
    /// `(kP, bP, 0)`.
    pub c: &'a [[f64; 3]],
    /// `P`.
    pub p: &'a [f64],
    /// Lorentz `P^{n−1}` (then `P^n` after the advance); Debye `E^n`.
    pub q: &'a [f64],
}

/// Every Lorentz and Debye cell, one [`Branch`] per E component each (`P` kept in f64).
#[derive(Debug, Clone, Default)]
pub(crate) struct Cells {
    lorentz: [Branch; 3],
    debye: [Branch; 3],
}

const E: [Component; 3] = [Component::Ex, Component::Ey, Component::Ez];

impl Cells {
    /// Set `mask[c]` for every dispersive storage cell `c`.
    pub(crate) fn mark(&self, mask: &mut [bool]) {
        for b in self.branches() {
            for &c in &b.cells {
                mask[c] = true;
            }
        }
    }

    /// Whether no cell is dispersive.
    pub(crate) fn is_empty(&self) -> bool {
        self.branches().all(|b| b.cells.is_empty())
    }

    fn branches(&self) -> impl Iterator<Item = &Branch> {
        self.lorentz.iter().chain(&self.debye)
    }

    fn branches_mut(&mut self) -> impl Iterator<Item = &mut Branch> {
        self.lorentz.iter_mut().chain(&mut self.debye)
    }

    /// Drop the Lorentz/Debye term of every cell marked in `region` (a later material
    /// replaces it).
    pub(crate) fn clear(&mut self, region: &[bool]) {
        for br in self.branches_mut() {
            let keep: Vec<bool> = br.cells.iter().map(|&c| !region[c]).collect();
            let mut it = keep.iter();
            br.cells.retain(|_| *it.next().unwrap_or(&true));
            let mut it = keep.iter();
            br.c.retain(|_| *it.next().unwrap_or(&true));
            for v in [&mut br.p, &mut br.q] {
                let mut it = keep.iter();
                v.retain(|_| *it.next().unwrap_or(&true));
            }
        }
    }

    fn add(branches: &mut [Branch; 3], grid: &Grid, cells: &[usize], c: [f64; 3]) {
        for (br, comp) in branches.iter_mut().zip(E) {
            for &cell in cells {
                // Tangential E on a PEC wall stays zero: no polarization there.
                if grid.on_pec_wall(comp, grid.cell_of_index(cell)) {
                    continue;
                }
                br.cells.push(cell);
                br.c.push(c);
                br.p.push(0.0);
                br.q.push(0.0);
            }
        }
    }

    /// Make the storage cells `cells` Lorentz cells (after [`Cells::clear`] on them).
    pub(crate) fn add_lorentz(&mut self, grid: &Grid, cells: &[usize], l: Lorentz, dt: f64) {
        let (w2, g) = (l.resonance_frequency.powi(2), l.damping * dt);
        let c = [
            (2.0 - w2 * dt * dt) / (1.0 + g),
            -(1.0 - g) / (1.0 + g),
            l.delta_eps * w2 * dt * dt / (1.0 + g),
        ];
        Self::add(&mut self.lorentz, grid, cells, c);
    }

    /// Make the storage cells `cells` Debye cells (after [`Cells::clear`] on them).
    pub(crate) fn add_debye(&mut self, grid: &Grid, cells: &[usize], d: Debye, dt: f64) {
        let h = 0.5 * dt / d.relaxation_time;
        let c = [(1.0 - h) / (1.0 + h), d.delta_eps * h / (1.0 + h), 0.0];
        Self::add(&mut self.debye, grid, cells, c);
    }

    /// Call with E still at step n: Lorentz `P^{n+1}` from `P^n`, `P^{n−1}`, `E^n`; Debye keeps
    /// `E^n` for the implicit solve in [`Cells::apply`].
    pub(crate) fn advance<T: Scalar>(&mut self, f: &Fields<T>) {
        for (br, comp) in self.lorentz.iter_mut().zip(E) {
            let e = f.get(comp);
            for (((p, q), &c), k) in br.p.iter_mut().zip(&mut br.q).zip(&br.cells).zip(&br.c) {
                let next = k[0] * *p + k[1] * *q + k[2] * e[c].as_f64();
                // Now q = P^n and p = P^{n+1}, as apply needs them.
                *q = *p;
                *p = next;
            }
        }
        for (br, comp) in self.debye.iter_mut().zip(E) {
            let e = f.get(comp);
            for (q, &c) in br.q.iter_mut().zip(&br.cells) {
                *q = e[c].as_f64();
            }
        }
    }

    /// After the ordinary E update (and its CPML terms): subtract the polarization current.
    pub(crate) fn apply<T: Scalar>(&mut self, f: &mut Fields<T>, cb: &[T], dt: f64) {
        for (br, comp) in self.lorentz.iter().zip(E) {
            let e = f.get_mut(comp);
            for ((&p, &q), &c) in br.p.iter().zip(&br.q).zip(&br.cells) {
                e[c] = T::from_f64(e[c].as_f64() - cb[c].as_f64() * (p - q) / dt);
            }
        }
        for (br, comp) in self.debye.iter_mut().zip(E) {
            let e = f.get_mut(comp);
            for (((p, &q), &c), k) in br.p.iter_mut().zip(&br.q).zip(&br.cells).zip(&br.c) {
                let r = cb[c].as_f64() / dt;
                let en1 = (e[c].as_f64() - r * ((k[0] - 1.0) * *p + k[1] * q)) / (1.0 + r * k[1]);
                e[c] = T::from_f64(en1);
                // Use the stored (possibly rounded) E so P follows exactly what the grid holds.
                *p = k[0] * *p + k[1] * (e[c].as_f64() + q);
            }
        }
    }

    /// The six branches in [`Cells::state`]'s order (Lorentz x, y, z, then Debye x, y, z),
    /// each as (Lorentz?, storage cells, coefficients, `P`, auxiliary): what a GPU uploads.
    pub(crate) fn views(&self) -> Vec<PoleView<'_>> {
        self.lorentz
            .iter()
            .map(|b| (true, b))
            .chain(self.debye.iter().map(|b| (false, b)))
            .map(|(lorentz, b)| PoleView {
                lorentz,
                cells: &b.cells,
                c: &b.c,
                p: &b.p,
                q: &b.q,
            })
            .collect()
    }

    /// Every `P` and auxiliary value, model by model and component by component.
    pub(crate) fn state(&self) -> Vec<f64> {
        self.branches()
            .flat_map(|b| b.p.iter().chain(&b.q).copied())
            .collect()
    }

    /// Number of values in [`Cells::state`].
    pub(crate) fn len(&self) -> usize {
        self.branches().map(|b| 2 * b.p.len()).sum()
    }

    /// Put back [`Cells::state`]; `false` if the length does not fit.
    pub(crate) fn set_state(&mut self, v: &[f64]) -> bool {
        if v.len() != self.len() {
            return false;
        }
        let mut rest = v;
        for br in self.branches_mut() {
            let n = br.p.len();
            br.p.copy_from_slice(&rest[..n]);
            br.q.copy_from_slice(&rest[n..2 * n]);
            rest = &rest[2 * n..];
        }
        true
    }

    /// Zero every `P`.
    pub(crate) fn zero(&mut self) {
        for br in self.branches_mut() {
            br.p.fill(0.0);
            br.q.fill(0.0);
        }
    }
}
