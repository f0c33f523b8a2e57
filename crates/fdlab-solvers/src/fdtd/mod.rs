//! 3-D FDTD for Maxwell's equations on a Yee grid (CPU).
//!
//! Normalized units: `c = ε0 = μ0 = 1`. The medium has a relative permittivity `ε_r` and a
//! conductivity `σ` per cell (vacuum by default) and `μ_r = 1`. Each step is the leapfrog pair
//! `H^{n+½} = H^{n−½} − Δt ∇×E^n`, then
//! `E^{n+1} = ca·E^n + cb·(∇×H^{n+½} − J^{n+½})` with `ca = (1 − σΔt/2ε)/(1 + σΔt/2ε)` and
//! `cb = (Δt/ε)/(1 + σΔt/2ε)`. Each half step is one fused loop over the three components,
//! parallel over z-planes.
//!
//! A material box may be a Drude medium ([`Fdtd::set_drude`], see [`Drude`]): its cells carry
//! a polarization current advanced by an auxiliary differential equation in a separate pass
//! over those cells only. A box may instead be a one-pole Lorentz or Debye medium
//! ([`Fdtd::set_lorentz`], [`Fdtd::set_debye`], see [`Lorentz`] and [`Debye`]), whose
//! polarization is advanced the same way.
//!
//! Materials fill boxes or spheres ([`Fdtd::fill`], [`Shape`]); a region may instead be a
//! perfect conductor ([`Fdtd::set_pec`]).
//!
//! Running DFT monitors ([`Fdtd::add_dft_monitor`], see [`DftMonitor`]) accumulate the
//! spectrum of chosen components on a grid plane at chosen frequencies, step by step; flux
//! monitors ([`Fdtd::add_flux_monitor`], see [`FluxSpec`]) turn two of them into the Poynting
//! flux through the plane.
//!
//! Besides soft and hard point sources, a plane wave enters through a total-field/scattered-
//! field box ([`Fdtd::add_plane_wave`], see [`PlaneWave`]), fed by a 1-D line with the grid's
//! own dispersion.
//!
//! An axis may end in a convolutional PML ([`Boundary::Cpml`], see [`Cpml`]) that absorbs
//! outgoing waves: its memory variables live in arrays sized to the layers, updated by a pass
//! over the layer cells after each fused half step.
//!
//! `fdlab run` takes these simulations from case files with `physics = "fdtd"` (see [`crate::case::fdtd`]
//! for the `[fdtd]` table); [`FdtdCpu`] puts one behind the [`crate::stepper::Stepper`] interface.
//!
//! ```
//! use fdlab_solvers::fdtd::{Boundary, Component, Fdtd, Grid, PointSource, Waveform};
//! let grid = Grid::new([16, 16, 16], [0.1; 3], [Boundary::Pec; 3])?;
//! let dt = 0.99 * grid.dt_limit();
//! let mut sim = Fdtd::<f64>::new(grid, dt)?;
//! sim.add_source(PointSource {
//!     component: Component::Ez,
//!     cell: [5, 6, 7],
//!     waveform: Waveform::Ricker { f0: 2.0, t0: 0.75 },
//!     amplitude: 1.0,
//! })?;
//! let p = sim.add_probe(Component::Ez, [9, 4, 8])?;
//! sim.run(100);
//! assert_eq!(sim.probe(p).len(), 100);
//! # Ok::<(), fdlab_solvers::Error>(())
//! ```
//!
//! Open space instead of a metal box: a CPML of 5 cells on every side.
//!
//! ```
//! use fdlab_solvers::fdtd::{Boundary, Cpml, Fdtd, Grid};
//! let grid = Grid::new([16, 16, 16], [0.1; 3], [Boundary::Cpml(Cpml::new(5)); 3])?;
//! let sim = Fdtd::<f64>::new(grid, 0.5 * 0.1 / 3f64.sqrt())?;
//! assert!(sim.grid().in_cpml([2, 8, 8]).is_some());
//! # Ok::<(), fdlab_solvers::Error>(())
//! ```

mod cpml;
mod cpml_profile;
mod description;
mod dispersion;
pub(crate) mod drude;
mod flux;
mod grid;
mod materials;
mod monitor;
mod probe;
mod setup;
mod source;
mod stepper;
pub(crate) mod tfsf;
mod update;

pub use cpml_profile::Cpml;
pub(crate) use dispersion::{bad_debye, bad_lorentz};
pub use dispersion::{lorentz_dt_limit, Debye, Lorentz};
pub use drude::{dt_limit as drude_dt_limit, Drude};
pub(crate) use flux::check as check_flux;
pub use flux::{flux, FluxPlane, FluxSpec};
pub use grid::{Boundary, Component, Fields, Grid};
pub use materials::Shape;
pub(crate) use monitor::check as check_monitor;
pub use monitor::{plane_axes, tangential_e, DftMonitor, MonitorSpec, MIN_CELLS_PER_WAVELENGTH};
pub use probe::{energy, Probe};
pub use setup::{CellBox, FdtdSetup};
pub use source::{PointSource, Waveform};
pub use stepper::FdtdCpu;
pub use tfsf::PlaneWave;

use crate::error::{Error, Result};
use fdlab_core::Scalar;

/// A Yee-grid simulation: fields, medium, sources and probes.
#[derive(Debug, Clone)]
pub struct Fdtd<T: Scalar> {
    grid: Grid,
    dt: f64,
    fields: Fields<T>,
    eps_r: Vec<f64>,
    sigma: Vec<f64>,
    /// Perfect-conductor cells: their E components are held at zero.
    pec: Vec<bool>,
    ca: Vec<T>,
    cb: Vec<T>,
    sources: Vec<(usize, PointSource)>,
    /// Hard sources: the driven component is set to the waveform after each E update.
    hard_sources: Vec<(usize, PointSource)>,
    /// Plane waves through TFSF boxes (empty: no extra pass).
    plane_waves: tfsf::PlaneWaves,
    probes: Vec<(usize, Probe)>,
    monitors: Vec<DftMonitor>,
    /// Flux planes; their DFT planes are among `monitors`.
    fluxes: Vec<FluxPlane>,
    /// Drude cells and their polarization currents (empty: no dispersion, no extra pass).
    drude: drude::Cells,
    /// Lorentz and Debye cells and their polarizations (empty: no extra pass).
    poles: dispersion::Cells,
    /// CPML memory variables, sized to the layers only (`None` without a CPML axis).
    cpml: Option<cpml::Layers<T>>,
    steps: u64,
}

impl<T: Scalar> Fdtd<T> {
    /// Zero fields in vacuum; refuses a `dt` above the Courant limit [`Grid::dt_limit`].
    pub fn new(grid: Grid, dt: f64) -> Result<Self> {
        // Re-check in case the grid was built field by field rather than with `Grid::new`.
        let grid = Grid::new(grid.n, grid.spacing, grid.boundary)?;
        grid.check_dt(dt)?;
        let cells = grid.cells();
        let mut sim = Fdtd {
            fields: Fields::zeros(cells),
            eps_r: crate::par::filled(cells, 1.0),
            sigma: vec![0.0; cells],
            pec: vec![false; cells],
            ca: Vec::new(),
            cb: Vec::new(),
            sources: Vec::new(),
            hard_sources: Vec::new(),
            plane_waves: tfsf::PlaneWaves::default(),
            probes: Vec::new(),
            monitors: Vec::new(),
            fluxes: Vec::new(),
            drude: drude::Cells::default(),
            poles: dispersion::Cells::default(),
            cpml: cpml::Layers::new(&grid, dt),
            steps: 0,
            grid,
            dt,
        };
        sim.coefficients();
        Ok(sim)
    }

    /// `ca`, `cb` of every cell from its medium, in parallel (each cell on its own).
    fn coefficients(&mut self) {
        use rayon::prelude::*;
        let dt = self.dt;
        (self.ca, self.cb) = self
            .eps_r
            .par_iter()
            .zip(self.sigma.par_iter())
            .zip(self.pec.par_iter())
            .map(|((&eps, &sig), &pec)| {
                if pec {
                    // E stays at zero: neither its old value nor the curl reaches it.
                    return (T::zero(), T::zero());
                }
                let loss = sig * dt / (2.0 * eps);
                (
                    T::from_f64((1.0 - loss) / (1.0 + loss)),
                    T::from_f64(dt / eps / (1.0 + loss)),
                )
            })
            .unzip();
    }

    /// Set `ε_r` and `σ` of every cell (x fastest); `ε_r` applies to the three E components
    /// stored in the cell. `ε_r` must be ≥ 1 (so the Courant limit still holds) and `σ` ≥ 0.
    pub fn set_medium(&mut self, eps_r: Vec<f64>, sigma: Vec<f64>) -> Result<()> {
        let cells = self.grid.cells();
        if eps_r.len() != cells || sigma.len() != cells {
            return Err(Error::Invalid(format!(
                "FDTD medium has {} permittivities and {} conductivities: give one per cell ({cells})",
                eps_r.len(),
                sigma.len()
            )));
        }
        if let Some(e) = eps_r.iter().find(|e| !(e.is_finite() && **e >= 1.0)) {
            return Err(Error::Invalid(format!(
                "FDTD relative permittivity {e}: use finite values >= 1"
            )));
        }
        if let Some(s) = sigma.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
            return Err(Error::Invalid(format!(
                "FDTD conductivity {s}: use finite values >= 0"
            )));
        }
        self.eps_r = eps_r;
        self.sigma = sigma;
        self.coefficients();
        Ok(())
    }

    /// The Lorentz and Debye polarizations and their auxiliary values, flattened (empty
    /// without such cells), to save with the fields.
    pub fn dispersion_state(&self) -> Vec<f64> {
        self.poles.state()
    }

    /// The plane waves' incident lines, flattened (empty without plane waves), to save with
    /// the fields.
    pub fn plane_wave_state(&self) -> Vec<f64> {
        self.plane_waves.state()
    }

    /// The plane waves (their lines as they stand), for a stepper that applies their
    /// corrections itself.
    pub(crate) fn plane_waves(&self) -> &tfsf::PlaneWaves {
        &self.plane_waves
    }

    /// Put back what [`Fdtd::plane_wave_state`] returned (after [`Fdtd::restore`], which
    /// zeroes the lines).
    pub fn restore_plane_waves(&mut self, v: &[f64]) -> Result<()> {
        if !self.plane_waves.set_state(v) {
            return Err(Error::Invalid(format!(
                "FDTD plane-wave state has {} values, but this simulation's incident lines hold \
                 {}: restore state saved with the same plane waves",
                v.len(),
                self.plane_waves.len()
            )));
        }
        Ok(())
    }

    /// Per storage cell, whether it is plain vacuum: `ε_r = 1`, no loss, no dispersion.
    fn vacuum_mask(&self) -> Vec<bool> {
        let mut dispersive = vec![false; self.grid.cells()];
        self.drude.mark(&mut dispersive);
        self.poles.mark(&mut dispersive);
        use rayon::prelude::*;
        (0..self.grid.cells())
            .into_par_iter()
            .map(|c| self.eps_r[c] == 1.0 && self.sigma[c] == 0.0 && !dispersive[c] && !self.pec[c])
            .collect()
    }

    /// Put back what [`Fdtd::dispersion_state`] returned (after [`Fdtd::restore`], which
    /// zeroes P).
    pub fn restore_dispersion(&mut self, p: &[f64]) -> Result<()> {
        if !self.poles.set_state(p) {
            return Err(Error::Invalid(format!(
                "FDTD Lorentz/Debye state has {} values, but this simulation's dispersive cells \
                 hold {}: restore state saved from the same materials",
                p.len(),
                self.poles.len()
            )));
        }
        Ok(())
    }

    /// The Drude carriers' kinetic energy `½ Σ |J|²/ωp² · ΔV` (0 without Drude cells): with
    /// [`Fdtd::energy`] the total that a lossless run keeps bounded.
    pub fn drude_energy(&self) -> f64 {
        self.drude.energy(&self.grid, self.dt)
    }

    /// The Drude polarization currents, flattened (empty without Drude cells), to save with
    /// the fields.
    pub fn drude_state(&self) -> Vec<f64> {
        self.drude.state()
    }

    /// The Lorentz and Debye cells (for a GPU stepper to upload).
    pub(crate) fn pole_cells(&self) -> &dispersion::Cells {
        &self.poles
    }

    /// The Drude cells (for a GPU stepper to upload).
    pub(crate) fn drude_cells(&self) -> &drude::Cells {
        &self.drude
    }

    /// Put back what [`Fdtd::drude_state`] returned (after [`Fdtd::restore`], which zeroes J).
    pub fn restore_drude(&mut self, j: &[f64]) -> Result<()> {
        if !self.drude.set_state(j) {
            return Err(Error::Invalid(format!(
                "FDTD Drude state has {} values, but this simulation's dispersive cells hold {}: \
                 restore state saved from the same materials",
                j.len(),
                self.drude.len()
            )));
        }
        Ok(())
    }

    /// Add a soft source; it must drive an electric component inside the grid, off the PEC
    /// walls (tangential E there is held at zero) and outside any CPML layer.
    pub fn add_source(&mut self, s: PointSource) -> Result<()> {
        self.check_source(&s)?;
        self.sources.push((self.grid.index(s.cell), s));
        Ok(())
    }

    /// Add a hard source: after each step the driven E component of its cell is set to
    /// `amplitude · w(t)` (at E's time `(n + 1)·Δt`), whatever the update gave. It launches
    /// exactly that field but, unlike a soft source, also reflects waves that come back to it.
    /// The same placement rules as [`Fdtd::add_source`] apply.
    pub fn add_hard_source(&mut self, s: PointSource) -> Result<()> {
        self.check_source(&s)?;
        self.hard_sources.push((self.grid.index(s.cell), s));
        Ok(())
    }

    fn check_source(&self, s: &PointSource) -> Result<()> {
        if !s.component.is_electric() {
            return Err(Error::Invalid(format!(
                "FDTD source on {:?}: drive Ex, Ey or Ez",
                s.component
            )));
        }
        self.grid.check_cell(s.cell, "FDTD source")?;
        if self.grid.on_pec_wall(s.component, s.cell) {
            return Err(Error::Invalid(format!(
                "FDTD source on {:?} at cell {:?} lies on a PEC wall where that component is \
                 zero: move it off index 0 of the wall's axis",
                s.component, s.cell
            )));
        }
        self.outside_cpml(s.cell, "FDTD source")?;
        Ok(())
    }

    /// Add a probe recording `component` at `cell` every step; returns its number for
    /// [`Fdtd::probe`]. The cell must lie outside any CPML layer.
    pub fn add_probe(&mut self, component: Component, cell: [usize; 3]) -> Result<usize> {
        self.grid.check_cell(cell, "FDTD probe")?;
        self.outside_cpml(cell, "FDTD probe")?;
        self.probes.push((
            self.grid.index(cell),
            Probe {
                component,
                cell,
                samples: Vec::new(),
            },
        ));
        Ok(self.probes.len() - 1)
    }

    /// Add a running DFT monitor on a grid plane (see [`DftMonitor`]); returns its number for
    /// [`Fdtd::monitor`]. `duration` is the time the run will cover: a frequency whose period
    /// is longer cannot be resolved, nor one above the Nyquist limit `1/(2Δt)` or with fewer
    /// than [`MIN_CELLS_PER_WAVELENGTH`] cells per wavelength; each is refused here, before
    /// step 1. Accumulation starts at the next step.
    pub fn add_dft_monitor(&mut self, spec: MonitorSpec, duration: f64) -> Result<usize> {
        let id = self.monitors.len();
        if let Some(why) = monitor::check(&self.grid, self.dt, duration, &spec) {
            return Err(Error::Invalid(format!("FDTD DFT monitor {id}: {why}")));
        }
        self.monitors.push(DftMonitor::new(&self.grid, spec));
        Ok(id)
    }

    /// The spectra of monitor `id` so far.
    ///
    /// Panics if `id` was not returned by [`Fdtd::add_dft_monitor`] on this simulation.
    pub fn monitor(&self, id: usize) -> &DftMonitor {
        &self.monitors[id]
    }

    /// All DFT monitors, in the order they were added, with the two planes of each flux
    /// monitor (see [`FluxPlane::monitors`]) among them.
    pub fn monitors(&self) -> &[DftMonitor] {
        &self.monitors
    }

    /// Every monitor's accumulators (re then im, monitor by monitor), to save with the fields.
    pub fn dft_state(&self) -> Vec<f64> {
        let mut v = Vec::new();
        for m in &self.monitors {
            v.extend_from_slice(&m.re);
            v.extend_from_slice(&m.im);
        }
        v
    }

    /// Put back what [`Fdtd::dft_state`] returned (after [`Fdtd::restore`], which zeroes them).
    pub fn restore_dft(&mut self, state: &[f64]) -> Result<()> {
        let need: usize = self.monitors.iter().map(|m| 2 * m.len()).sum();
        if state.len() != need {
            return Err(Error::Invalid(format!(
                "FDTD DFT state has {} values, but this simulation's monitors hold {need}: \
                 restore state saved with the same monitors",
                state.len()
            )));
        }
        let mut rest = state;
        for m in &mut self.monitors {
            let n = m.len();
            m.re.copy_from_slice(&rest[..n]);
            m.im.copy_from_slice(&rest[n..2 * n]);
            rest = &rest[2 * n..];
        }
        Ok(())
    }

    /// Refuse a cell inside a CPML layer, where the fields are not physical.
    fn outside_cpml(&self, cell: [usize; 3], what: &str) -> Result<()> {
        if let Some(a) = self.grid.in_cpml(cell) {
            let t = self.grid.boundary[a].cpml().map_or(0, |p| p.thickness);
            return Err(Error::Invalid(format!(
                "{what} at cell {cell:?} lies inside the CPML along {} (its {t} cells at each \
                 end absorb rather than carry the field): use index {t} ..= {} on that axis",
                ["x", "y", "z"][a],
                self.grid.n[a] - t - 1
            )));
        }
        Ok(())
    }

    /// The samples of probe `id` so far.
    ///
    /// Panics if `id` was not returned by [`Fdtd::add_probe`] on this simulation.
    pub fn probe(&self, id: usize) -> &[f64] {
        &self.probes[id].1.samples
    }

    /// All probes, in the order they were added.
    pub fn probes(&self) -> impl Iterator<Item = &Probe> {
        self.probes.iter().map(|(_, p)| p)
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The fields (E at `steps·Δt`, H half a step earlier).
    pub fn fields(&self) -> &Fields<T> {
        &self.fields
    }

    /// The fields, to set initial values (E at `steps·Δt`, H at `(steps − ½)·Δt`).
    ///
    /// Keep every array's length: the updates index them by the grid's shape.
    pub fn fields_mut(&mut self) -> &mut Fields<T> {
        &mut self.fields
    }

    /// Put back a saved state: `steps` taken, the fields, and each probe's samples (in the
    /// order the probes were added, `steps` samples each). Used to resume from a checkpoint.
    /// A CPML's memory variables, the DFT monitors' spectra and the Drude currents start again
    /// from zero: put them back with [`Fdtd::restore_cpml`], [`Fdtd::restore_dft`],
    /// [`Fdtd::restore_drude`] and [`Fdtd::restore_dispersion`].
    pub fn restore(&mut self, steps: u64, fields: Fields<T>, samples: Vec<Vec<f64>>) -> Result<()> {
        let cells = self.grid.cells();
        let ok = [
            &fields.ex, &fields.ey, &fields.ez, &fields.hx, &fields.hy, &fields.hz,
        ]
        .iter()
        .all(|v| v.len() == cells);
        if !ok || samples.len() != self.probes.len() {
            return Err(Error::Invalid(format!(
                "FDTD state does not fit this simulation: it needs six fields of {cells} cells \
                 and {} probe series",
                self.probes.len()
            )));
        }
        if let Some(s) = samples.iter().find(|s| s.len() as u64 != steps) {
            return Err(Error::Invalid(format!(
                "FDTD probe series has {} samples at step {steps}: it needs one per step",
                s.len()
            )));
        }
        for ((_, p), s) in self.probes.iter_mut().zip(samples) {
            p.samples = s;
        }
        self.fields = fields;
        self.steps = steps;
        if let Some(l) = &mut self.cpml {
            l.clear();
        }
        for m in &mut self.monitors {
            m.clear();
        }
        self.drude.zero();
        self.poles.zero();
        self.plane_waves.clear();
        Ok(())
    }

    /// The CPML memory variables ψ, flattened (empty without a CPML), to save with the fields.
    pub fn cpml_state(&self) -> Vec<T> {
        self.cpml.as_ref().map_or_else(Vec::new, |l| l.state())
    }

    /// Put back what [`Fdtd::cpml_state`] returned (after [`Fdtd::restore`], which zeroes ψ).
    pub fn restore_cpml(&mut self, psi: &[T]) -> Result<()> {
        let ok = match &mut self.cpml {
            Some(l) => l.set_state(psi),
            None => psi.is_empty(),
        };
        if !ok {
            return Err(Error::Invalid(format!(
                "FDTD CPML state has {} values, but this simulation's layers hold {}: restore \
                 state saved from the same grid and boundaries",
                psi.len(),
                self.cpml_state().len()
            )));
        }
        Ok(())
    }

    /// The E update's coefficients `ca` and `cb` per cell (zero in PEC cells).
    pub(crate) fn e_coefficients(&self) -> (&[T], &[T]) {
        (&self.ca, &self.cb)
    }

    /// The CPML axes' profiles (empty without a CPML).
    pub(crate) fn cpml_profiles(&self) -> Vec<cpml::AxisProfile<T>> {
        self.cpml.as_ref().map_or_else(Vec::new, |l| l.profiles())
    }

    /// Relative permittivity per cell.
    pub fn eps_r(&self) -> &[f64] {
        &self.eps_r
    }

    /// One leapfrog step with the fused parallel loops.
    pub fn step(&mut self) {
        self.advance_drude();
        update::update_h(&self.grid, &mut self.fields, self.dt);
        if let Some(l) = &mut self.cpml {
            l.correct_h(&self.grid, &mut self.fields, self.dt);
        }
        self.plane_waves.after_h(&mut self.fields, self.dt);
        update::update_e(&self.grid, &mut self.fields, &self.ca, &self.cb);
        if let Some(l) = &mut self.cpml {
            l.correct_e(&self.grid, &mut self.fields, &self.cb);
        }
        self.finish_e();
        self.apply_drude();
        self.finish_step();
    }

    /// One step with the plain point-by-point reference update (slow; for checking [`Fdtd::step`]).
    pub fn step_reference(&mut self) {
        self.advance_drude();
        let (waves, dt) = (&mut self.plane_waves, self.dt);
        update::reference_step(
            &self.grid,
            &mut self.fields,
            dt,
            &self.ca,
            &self.cb,
            self.cpml.as_mut(),
            |f| waves.after_h(f, dt),
        );
        self.finish_e();
        self.apply_drude();
        self.finish_step();
    }

    /// The plane waves' corrections to `E^{n+1}` (their lines advance to `n + 1`).
    fn finish_e(&mut self) {
        if !self.plane_waves.is_empty() {
            let t = (self.steps + 1) as f64 * self.dt;
            self.plane_waves.after_e(&mut self.fields, &self.cb, t);
        }
    }

    /// `J^{n+½}` from `E^n`; before the E update (E is not touched by the H update).
    fn advance_drude(&mut self) {
        if !self.drude.is_empty() {
            self.drude.advance_j(&self.fields);
        }
        if !self.poles.is_empty() {
            self.poles.advance(&self.fields);
        }
    }

    /// `E^{n+1} −= cb·J^{n+½}` in the dispersive cells, after the E update and its CPML terms.
    fn apply_drude(&mut self) {
        if !self.drude.is_empty() {
            self.drude.apply(&mut self.fields, &self.cb);
        }
        if !self.poles.is_empty() {
            self.poles.apply(&mut self.fields, &self.cb, self.dt);
        }
    }

    /// `steps` calls of [`Fdtd::step`].
    pub fn run(&mut self, steps: u64) {
        for _ in 0..steps {
            self.step();
        }
    }

    /// Sources at the E update's mid time `(n + ½)·Δt`, then the probes and DFT monitors.
    fn finish_step(&mut self) {
        let t = (self.steps as f64 + 0.5) * self.dt;
        for (c, s) in &self.sources {
            let e = self.fields.get_mut(s.component);
            let j = s.amplitude * s.waveform.value(t);
            e[*c] = T::from_f64(e[*c].as_f64() - self.cb[*c].as_f64() * j);
        }
        // Hard sources last: whatever the update and the currents did, E there is w(t).
        let t = (self.steps + 1) as f64 * self.dt;
        for (c, s) in &self.hard_sources {
            self.fields.get_mut(s.component)[*c] = T::from_f64(s.amplitude * s.waveform.value(t));
        }
        self.steps += 1;
        for (c, p) in &mut self.probes {
            p.samples.push(self.fields.get(p.component)[*c].as_f64());
        }
        for m in &mut self.monitors {
            m.accumulate(&self.fields, self.steps, self.dt);
        }
    }

    /// `½ Σ (ε_r |E|² + |H|²) · ΔV` at the stored, half-step-apart times (see [`energy`]).
    pub fn energy(&self) -> f64 {
        energy(&self.grid, &self.eps_r, &self.fields)
    }

    /// Take one step and return the time-centred energy `½ Σ (ε_r E^n·E^{n+1} + |H^{n+½}|²)·ΔV`.
    ///
    /// This is the leapfrog's discrete invariant: without sources and losses it stays constant
    /// to rounding for any `Δt` within the Courant limit. It copies E once.
    pub fn step_energy(&mut self) -> f64 {
        let e0 = [
            self.fields.ex.clone(),
            self.fields.ey.clone(),
            self.fields.ez.clone(),
        ];
        self.step();
        probe::centred_energy(&self.grid, &self.eps_r, &e0, &self.fields)
    }
}
