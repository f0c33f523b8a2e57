//! [`FdtdCpu`]: the Yee stepper behind the [`Stepper`] interface, so that `fdlab run` drives
//! fdtd cases with the same loop, outputs, progress bar and checkpoints as heat and wave.

use super::{Fdtd, FdtdSetup, Fields};
use crate::error::{Error, Result};
use crate::layout::to_bytes;
use crate::stepper::{first_non_finite, StatePart, Stepper};
use fdlab_core::Scalar;

/// A case-file FDTD run on the CPU: the simulation, the plotted component and the probe
/// series as [`Stepper::traces`] returns them.
#[derive(Debug, Clone)]
pub struct FdtdCpu<T: Scalar> {
    sim: Fdtd<T>,
    plot: super::Component,
    traces: Vec<Vec<f64>>,
    /// Step with [`Fdtd::step_reference`] instead of the fused loops (for tests).
    reference: bool,
}

const NAMES: [&str; 6] = ["ex", "ey", "ez", "hx", "hy", "hz"];

impl<T: Scalar> FdtdCpu<T> {
    /// Build the simulation: medium boxes in order, then sources and probes.
    pub fn new(s: &FdtdSetup) -> Result<Self> {
        let mut sim = Fdtd::new(s.grid.clone(), s.dt)?;
        for b in &s.boxes {
            if b.pec {
                sim.set_pec(&b.shape)?;
                continue;
            }
            sim.fill(&b.shape, b.eps_r, b.sigma)?;
            if let Some(d) = b.drude {
                sim.set_drude_in(&b.shape, d)?;
            }
            if let Some(l) = b.lorentz {
                sim.set_lorentz_in(&b.shape, l)?;
            }
            if let Some(d) = b.debye {
                sim.set_debye_in(&b.shape, d)?;
            }
        }
        for src in &s.sources {
            sim.add_source(*src)?;
        }
        for src in &s.hard_sources {
            sim.add_hard_source(*src)?;
        }
        for w in &s.plane_waves {
            sim.add_plane_wave(*w)?;
        }
        for &(c, cell) in &s.probes {
            sim.add_probe(c, cell)?;
        }
        // User monitors first, so that they keep their numbers; each flux plane adds two.
        for m in &s.monitors {
            sim.add_dft_monitor(m.clone(), s.duration)?;
        }
        for m in &s.fluxes {
            sim.add_flux_monitor(m.clone(), s.duration)?;
        }
        Ok(FdtdCpu {
            sim,
            plot: s.plot,
            traces: vec![Vec::new(); s.probes.len()],
            reference: false,
        })
    }

    /// Use the simple point-by-point reference step instead of the fused one (for tests: the
    /// candidate that proves the conformance checks without a GPU).
    pub fn use_reference(&mut self, on: bool) {
        self.reference = on;
    }

    /// The simulation.
    pub fn sim(&self) -> &Fdtd<T> {
        &self.sim
    }

    /// The simulation, to step on its own (without the stepper's checks after each call).
    pub fn into_sim(self) -> Fdtd<T> {
        self.sim
    }

    fn arrays(f: &Fields<T>) -> [&[T]; 6] {
        [&f.ex, &f.ey, &f.ez, &f.hx, &f.hy, &f.hz]
    }

    /// The first non-finite value in any component, as (cell, value).
    fn first_bad(&self) -> Option<([usize; 3], f64)> {
        let n = self.sim.grid().n;
        Self::arrays(self.sim.fields())
            .iter()
            .filter_map(|v| first_non_finite(v))
            .min_by_key(|(i, _)| *i)
            .map(|(i, v)| ([i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])], v))
    }
}

impl<T: Scalar> Stepper for FdtdCpu<T> {
    fn advance(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            if self.reference {
                self.sim.step_reference();
            } else {
                self.sim.step();
            }
        }
        // Checked once per call (the run loop calls with at most 64 steps): a full scan per
        // step would cost about as much as the step itself.
        if let Some((cell, value)) = self.first_bad() {
            return Err(Error::NonFinite {
                step: self.sim.steps(),
                cell,
                value,
            });
        }
        for (t, p) in self.traces.iter_mut().zip(self.sim.probes()) {
            t.extend_from_slice(&p.samples[t.len()..]);
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.sim.steps()
    }

    fn field(&self) -> Result<Vec<f64>> {
        Ok(self
            .sim
            .fields()
            .get(self.plot)
            .iter()
            .map(|v| v.as_f64())
            .collect())
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        let mut parts: Vec<StatePart> = NAMES
            .iter()
            .zip(Self::arrays(self.sim.fields()))
            .map(|(n, v)| (n.to_string(), to_bytes(v)))
            .collect();
        let tr: Vec<f64> = self.traces.iter().flatten().copied().collect();
        parts.push(("probes".into(), to_bytes(&tr)));
        // The CPML's memory variables are state too: without them a resumed run would differ.
        let psi = self.sim.cpml_state();
        if !psi.is_empty() {
            parts.push(("cpml".into(), to_bytes(&psi)));
        }
        // So are the Drude currents and the DFT accumulators: a resumed run must sum the same terms onto them.
        let j = self.sim.drude_state();
        if !j.is_empty() {
            parts.push(("drude".into(), to_bytes(&j)));
        }
        let p = self.sim.dispersion_state();
        if !p.is_empty() {
            parts.push(("dispersion".into(), to_bytes(&p)));
        }
        let lines = self.sim.plane_wave_state();
        if !lines.is_empty() {
            parts.push(("plane_waves".into(), to_bytes(&lines)));
        }
        let dft = self.sim.dft_state();
        if !dft.is_empty() {
            parts.push(("dft".into(), to_bytes(&dft)));
        }
        Ok(parts)
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        use crate::stepper::state_part as get;
        let cells = self.sim.grid().cells();
        let fields = Fields {
            ex: get(parts, "ex", cells)?,
            ey: get(parts, "ey", cells)?,
            ez: get(parts, "ez", cells)?,
            hx: get(parts, "hx", cells)?,
            hy: get(parts, "hy", cells)?,
            hz: get(parts, "hz", cells)?,
        };
        let (np, ns) = (self.traces.len(), step as usize);
        let tr: Vec<f64> = get(parts, "probes", np * ns)?;
        let samples: Vec<Vec<f64>> = (0..np).map(|i| tr[i * ns..(i + 1) * ns].to_vec()).collect();
        self.sim.restore(step, fields, samples.clone())?;
        let psi_len = self.sim.cpml_state().len();
        if psi_len > 0 {
            let psi: Vec<T> = get(parts, "cpml", psi_len)?;
            self.sim.restore_cpml(&psi)?;
        }
        let j_len = self.sim.drude_state().len();
        if j_len > 0 {
            let j: Vec<f64> = get(parts, "drude", j_len)?;
            self.sim.restore_drude(&j)?;
        }
        let p_len = self.sim.dispersion_state().len();
        if p_len > 0 {
            let p: Vec<f64> = get(parts, "dispersion", p_len)?;
            self.sim.restore_dispersion(&p)?;
        }
        let lines_len = self.sim.plane_wave_state().len();
        if lines_len > 0 {
            let lines: Vec<f64> = get(parts, "plane_waves", lines_len)?;
            self.sim.restore_plane_waves(&lines)?;
        }
        let dft_len = self.sim.dft_state().len();
        if dft_len > 0 {
            let dft: Vec<f64> = get(parts, "dft", dft_len)?;
            self.sim.restore_dft(&dft)?;
        }
        self.traces = samples;
        Ok(())
    }

    fn spectra(&self) -> Result<Vec<super::DftMonitor>> {
        Ok(self.sim.monitors().to_vec())
    }

    fn cells(&self) -> usize {
        self.sim.grid().cells()
    }

    fn bytes_per_step(&self) -> usize {
        // Six components read and written, the two E coefficients read.
        14 * self.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cpu"
    }
}
