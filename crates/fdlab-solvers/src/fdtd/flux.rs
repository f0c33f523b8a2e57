//! Flux monitors: the time-averaged Poynting flux through a grid plane, per frequency, from
//! running DFTs of the tangential fields.
//!
//! On a plane normal to axis `a` at node `i`, with `(a, b, c)` cyclic, `S_a = E_b H_c − E_c H_b`.
//! The Yee grid stores `E_b` and `H_c` (and `E_c` and `H_b`) at the same in-plane point, but the
//! H components half a cell off the plane on either side: their mean over the cells `i − 1`
//! and `i` puts them on it. The flux is `P(f) = ½ Re Σ (E_b H_c* − E_c H_b*)·Δb·Δc` over the
//! plane's points outside any CPML layer, with `E(f)` and `H(f)` the running DFTs (each sampled
//! at its own time, so the half-step stagger in time is accounted for).
//!
//! For a steady sinusoid of complex amplitude `E` this is the time-averaged power through the
//! plane; for a pulse it is the energy crossing per unit of frequency, up to one factor common
//! to every plane: ratios of two monitors (transmittance, reflectance) are what to read.

use super::grid::{Component, Grid};
use super::monitor::{self, plane_axes, DftMonitor, MonitorSpec};
use super::Fdtd;
use crate::error::{Error, Result};
use fdlab_core::Scalar;

const AXES: [&str; 3] = ["x", "y", "z"];
const E: [Component; 3] = [Component::Ex, Component::Ey, Component::Ez];
const H: [Component; 3] = [Component::Hx, Component::Hy, Component::Hz];

/// A flux plane: normal axis, node index and frequencies.
#[derive(Debug, Clone, PartialEq)]
pub struct FluxSpec {
    /// The plane's normal axis, 0 (x), 1 (y) or 2 (z); the flux counts positive along it.
    pub axis: usize,
    /// The plane's node index along `axis` (at `index·d`).
    pub index: usize,
    /// Frequencies in cycles per unit time; the same rules as a DFT monitor's.
    pub frequencies: Vec<f64>,
}

/// A flux monitor: its spec and the two DFT planes it reads (E and H on the plane, H one cell
/// below), which live among the simulation's monitors.
#[derive(Debug, Clone, PartialEq)]
pub struct FluxPlane {
    /// What is measured.
    pub spec: FluxSpec,
    /// Indices in [`Fdtd::monitors`] of the plane at `index` and the one at `index − 1`.
    pub monitors: [usize; 2],
}

/// `(b, c)`: the in-plane axes with `(axis, b, c)` cyclic.
fn cyclic(axis: usize) -> (usize, usize) {
    ((axis + 1) % 3, (axis + 2) % 3)
}

/// The two DFT planes of a flux plane: `[E_b, E_c, H_b, H_c]` at `index`, `[H_b, H_c]` below.
pub(crate) fn planes(grid: &Grid, spec: &FluxSpec) -> [MonitorSpec; 2] {
    let (b, c) = cyclic(spec.axis);
    let below = (spec.index + grid.n[spec.axis] - 1) % grid.n[spec.axis];
    [
        MonitorSpec {
            axis: spec.axis,
            index: spec.index,
            components: vec![E[b], E[c], H[b], H[c]],
            frequencies: spec.frequencies.clone(),
        },
        MonitorSpec {
            axis: spec.axis,
            index: below,
            components: vec![H[b], H[c]],
            frequencies: spec.frequencies.clone(),
        },
    ]
}

/// Why `spec` cannot be measured by a run of `duration`, as a sentence; `None` if it can.
pub fn check(grid: &Grid, dt: f64, duration: f64, spec: &FluxSpec) -> Option<String> {
    if spec.axis > 2 {
        return Some(format!(
            "axis {} does not exist: use 0 (x), 1 (y) or 2 (z)",
            spec.axis
        ));
    }
    let (a, n) = (spec.axis, grid.n[spec.axis]);
    let t = grid.boundary[a].cpml().map_or(0, |p| p.thickness);
    let walls = grid.boundary[a].has_walls();
    // H is read one cell below the plane: on a walled axis that cell must exist and lie
    // outside the layer, as must the cell of the plane itself.
    let (first, last) = if walls {
        (t + 1, n - t - 1)
    } else {
        (0, n - 1)
    };
    if spec.index < first || spec.index > last {
        return Some(format!(
            "plane node {} along {} is not where the flux can be measured: use nodes \
             {first} ..= {last} (positions {} ..= {}; the plane and the cell below it must lie \
             inside the grid and outside any CPML)",
            spec.index,
            AXES[a],
            first as f64 * grid.spacing[a],
            last as f64 * grid.spacing[a]
        ));
    }
    monitor::check(grid, dt, duration, &planes(grid, spec)[0])
}

/// The flux per frequency from the two DFT planes of a flux plane (see the module docs).
pub fn flux(grid: &Grid, spec: &FluxSpec, at: &DftMonitor, below: &DftMonitor) -> Vec<f64> {
    let [sa, sb] = plane_axes(spec.axis);
    let (b, c) = cyclic(spec.axis);
    let cpml = |axis: usize, i: usize| {
        grid.boundary[axis]
            .cpml()
            .is_some_and(|p| i < p.thickness || i + p.thickness >= grid.n[axis])
    };
    let area = grid.spacing[b] * grid.spacing[c];
    let [na, nb] = at.shape;
    (0..spec.frequencies.len())
        .map(|f| {
            let mut s = 0.0;
            for ia in 0..na {
                if cpml(sa, ia) {
                    continue;
                }
                for ib in 0..nb {
                    if cpml(sb, ib) {
                        continue;
                    }
                    let p = ia * nb + ib;
                    let mean = |k: usize| {
                        let (r0, i0) = at.value(f, 2 + k, p);
                        let (r1, i1) = below.value(f, k, p);
                        (0.5 * (r0 + r1), 0.5 * (i0 + i1))
                    };
                    let (eb, ec) = (at.value(f, 0, p), at.value(f, 1, p));
                    let (hb, hc) = (mean(0), mean(1));
                    // Re(x·conj(y)) = xr·yr + xi·yi.
                    s += (eb.0 * hc.0 + eb.1 * hc.1) - (ec.0 * hb.0 + ec.1 * hb.1);
                }
            }
            0.5 * s * area
        })
        .collect()
}

impl<T: Scalar> Fdtd<T> {
    /// Add a flux monitor (see [`FluxSpec`] and the module docs of [`flux`]); returns its
    /// number for [`Fdtd::flux`]. Refused before step 1 where a DFT monitor would be, and on a
    /// plane in a CPML layer or on a PEC wall. It adds two DFT planes to [`Fdtd::monitors`].
    pub fn add_flux_monitor(&mut self, spec: FluxSpec, duration: f64) -> Result<usize> {
        let id = self.fluxes.len();
        if let Some(why) = check(&self.grid, self.dt, duration, &spec) {
            return Err(Error::Invalid(format!("FDTD flux monitor {id}: {why}")));
        }
        let first = self.monitors.len();
        for m in planes(&self.grid, &spec) {
            self.monitors.push(DftMonitor::new(&self.grid, m));
        }
        self.fluxes.push(FluxPlane {
            spec,
            monitors: [first, first + 1],
        });
        Ok(id)
    }

    /// The flux through plane `id` per frequency, from the spectra so far.
    ///
    /// Panics if `id` was not returned by [`Fdtd::add_flux_monitor`] on this simulation.
    pub fn flux(&self, id: usize) -> Vec<f64> {
        let p = &self.fluxes[id];
        let [at, below] = p.monitors;
        flux(
            &self.grid,
            &p.spec,
            &self.monitors[at],
            &self.monitors[below],
        )
    }

    /// All flux monitors, in the order they were added.
    pub fn flux_monitors(&self) -> &[FluxPlane] {
        &self.fluxes
    }
}
