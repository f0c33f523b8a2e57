//! The `[fdtd]` table of a case file (`physics = "fdtd"`) and its validation into an
//! [`FdtdSetup`] that [`crate::fdtd::FdtdCpu`] runs.
//!
//! Positions are physical coordinates (the grid spans `0 ..= n·d` per axis), so a case keeps
//! its geometry when its grid is refined or coarsened. A source or probe uses the cell whose
//! stored position of its component (see [`Component::offset`]) is nearest; a material box
//! fills every cell whose centre lies in `lo ..= hi`. Sources and probes may not lie in a CPML
//! layer.

use super::fdtd_spec::{extent, positive, waveform, WaveformKeys};
pub use super::fdtd_spec::{
    AxisName, DebyeSpec, DrudeSpec, LorentzSpec, MaterialBox, SlabSpec, WaveformName,
};
pub use super::fdtd_waves::{DirectionName, FluxEntry, PlaneWaveSpec};
use super::{Case, Plan};
use crate::error::{Error, Result};
use crate::fdtd::{
    Boundary, CellBox, Component, Cpml, Debye, Drude, FdtdSetup, Grid, Lorentz, MonitorSpec,
    PointSource,
};
use serde::{Deserialize, Serialize};

/// What happens at both ends of one axis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryName {
    /// Perfect electric conductor walls.
    Pec,
    /// Wrap around.
    Periodic,
    /// `{ cpml = { thickness = N } }`: an absorbing layer of N cells inside the grid at both
    /// ends, backed by PEC walls.
    Cpml(CpmlSpec),
}

/// The parameters of `{ cpml = { … } }` (see [`Cpml`] for their meaning and defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpmlSpec {
    /// Layer cells at each end (at least 4 and `order + 2`, fewer than half the axis).
    pub thickness: usize,
    /// Grading order of σ and κ, 1 to 6 (default 3).
    pub order: Option<u32>,
    /// κ at the wall, ≥ 1 (default 1).
    pub kappa_max: Option<f64>,
    /// α at the interface, ≥ 0 (default 0.05).
    pub alpha_max: Option<f64>,
}

impl CpmlSpec {
    /// The solver's parameters, defaults filled in.
    pub fn cpml(&self) -> Cpml {
        let d = Cpml::new(self.thickness);
        Cpml {
            thickness: self.thickness,
            order: self.order.unwrap_or(d.order),
            kappa_max: self.kappa_max.unwrap_or(d.kappa_max),
            alpha_max: self.alpha_max.unwrap_or(d.alpha_max),
        }
    }
}

/// `[[fdtd.sources]]`: a soft current source on one electric component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// `"ex"`, `"ey"` or `"ez"`.
    pub component: Component,
    /// Position, physical coordinates.
    pub position: Vec<f64>,
    /// Time dependence.
    pub waveform: WaveformName,
    /// Frequency parameter of the waveform.
    pub f0: Option<f64>,
    /// Delay parameter of the waveform.
    pub t0: Option<f64>,
    /// Width parameter of the waveform.
    pub tau: Option<f64>,
    /// Current density scale (default 1); for a hard source, the field itself.
    #[serde(default = "super::fdtd_spec::one")]
    pub amplitude: f64,
    /// Hard source: set E to `amplitude · w(t)` each step instead of adding a current
    /// (default false).
    #[serde(default)]
    pub hard: bool,
}

impl SourceSpec {
    fn keys(&self) -> WaveformKeys {
        WaveformKeys {
            waveform: self.waveform,
            f0: self.f0,
            t0: self.t0,
            tau: self.tau,
        }
    }
}

/// `[[fdtd.probes]]`: one component recorded at one point every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Component recorded.
    pub component: Component,
    /// Position, physical coordinates.
    pub position: Vec<f64>,
}

/// `[[fdtd.monitors]]`: a running DFT of some components on one grid plane (see
/// [`crate::fdtd::DftMonitor`]); each writes `monitor_N.npy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorEntry {
    /// The plane's normal, `"x"`, `"y"` or `"z"`.
    pub axis: AxisName,
    /// The plane's coordinate along `axis`, snapped to the nearest cell plane `i·d`.
    pub position: f64,
    /// Components (default: the two E components tangential to the plane).
    #[serde(default)]
    pub components: Vec<Component>,
    /// Frequencies (cycles per unit time); each must be resolvable by the run.
    pub frequencies: Vec<f64>,
}

/// `[fdtd]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdtdSpec {
    /// Boundary per axis, `[x, y, z]`: `"pec"`, `"periodic"` or `{ cpml = { thickness = N } }`.
    pub boundary: Vec<BoundaryName>,
    /// Material boxes (vacuum elsewhere).
    #[serde(default)]
    pub materials: Vec<MaterialBox>,
    /// Sources.
    #[serde(default)]
    pub sources: Vec<SourceSpec>,
    /// Probes; each writes `probe_N.npy`.
    #[serde(default)]
    pub probes: Vec<ProbeSpec>,
    /// DFT monitors; each writes `monitor_N.npy`, described in `monitors.json`.
    #[serde(default)]
    pub monitors: Vec<MonitorEntry>,
    /// Plane waves through total-field/scattered-field boxes.
    #[serde(default)]
    pub plane_waves: Vec<PlaneWaveSpec>,
    /// Flux planes; each writes `flux_N.npy`, described in `flux.json`.
    #[serde(default)]
    pub flux: Vec<FluxEntry>,
    /// Component drawn and written by `[output]` (default `"ex"`).
    #[serde(default)]
    pub plot: Component,
}

/// The `[fdtd]` table; [`Case::parse`] guarantees it exists for fdtd cases.
fn spec(case: &Case) -> Result<&FdtdSpec> {
    case.spec.fdtd.as_ref().ok_or_else(|| {
        case.invalid(
            "fdtd",
            "missing table; give [fdtd] with boundary = [\"pec\", \"pec\", \"pec\"]".into(),
        )
    })
}

/// The grid of an fdtd case: 3 axes, sizes ≥ 2, positive spacings, 3 boundaries.
fn grid(case: &Case) -> Result<Grid> {
    let g = &case.spec.grid;
    if g.shape.len() != 3 {
        return Err(case.invalid(
            "grid.shape",
            format!(
                "{} axes; fdtd cases are 3-D: give [nx, ny, nz]",
                g.shape.len()
            ),
        ));
    }
    if g.spacing.len() != 3 {
        return Err(case.invalid(
            "grid.spacing",
            format!("{} values; give 3, one per axis", g.spacing.len()),
        ));
    }
    if g.shape.iter().any(|&n| n < 2) || !g.spacing.iter().all(|&h| positive(h)) {
        return Err(case.invalid(
            "grid",
            "every axis needs at least 2 cells and a positive spacing".into(),
        ));
    }
    let f = spec(case)?;
    if f.boundary.len() != 3 {
        return Err(case.invalid(
            "fdtd.boundary",
            format!(
                "{} values; give one per axis, e.g. [\"pec\", \"pec\", \"periodic\"]",
                f.boundary.len()
            ),
        ));
    }
    let b = |a: usize| match f.boundary[a] {
        BoundaryName::Pec => Boundary::Pec,
        BoundaryName::Periodic => Boundary::Periodic,
        BoundaryName::Cpml(p) => Boundary::Cpml(p.cpml()),
    };
    for a in 0..3 {
        if let Boundary::Cpml(p) = b(a) {
            // The grid's own check, re-worded to point at the case's key and line.
            p.check(a, g.shape[a]).map_err(|e| {
                let why = e.to_string();
                let why = why.trim_start_matches("invalid case: FDTD CPML ");
                case.invalid("fdtd.boundary", format!("[{a}].cpml: {why}"))
            })?;
        }
    }
    // The spacings and layers are checked above: what is left to refuse is the cell count.
    Grid::new(
        [g.shape[0], g.shape[1], g.shape[2]],
        [g.spacing[0], g.spacing[1], g.spacing[2]],
        [b(0), b(1), b(2)],
    )
    .map_err(|e| {
        let why = e.to_string();
        case.invalid(
            "grid.shape",
            why.trim_start_matches("invalid case: ").into(),
        )
    })
}

/// Time step, steps and the Courant limit of an fdtd case.
pub fn plan(case: &Case) -> Result<Plan> {
    let grid = grid(case)?;
    let t = &case.spec.time;
    let limit = grid.dt_limit();
    let dt = match (t.dt, t.cfl) {
        (Some(dt), None) => dt,
        (None, Some(c)) if c > 0.0 && c <= 1.0 => c * limit,
        (None, Some(c)) => {
            return Err(case.invalid(
                "time.cfl",
                format!("{c}: use 0 < cfl ≤ 1 (a fraction of the Courant limit {limit:e})"),
            ))
        }
        _ => return Err(case.invalid("time", "give exactly one of dt and cfl".into())),
    };
    if !positive(dt) {
        return Err(case.invalid("time.dt", format!("{dt}: must be positive")));
    }
    if dt > limit {
        return Err(Error::Unstable {
            dt,
            limit,
            why: format!(
                "3-D Yee Courant limit 1/(c·sqrt(1/dx² + 1/dy² + 1/dz²)) with c = 1{}",
                case.line_of("dt")
            ),
        });
    }
    if !positive(t.duration) {
        return Err(case.invalid("time.duration", "must be positive".into()));
    }
    Ok(Plan {
        dt,
        limit,
        steps: case.step_count(dt)?,
        material_max: 1.0,
    })
}

/// The cell storing `c` nearest to physical position `x`, if inside the grid.
fn cell_of(grid: &Grid, c: Component, x: &[f64]) -> Option<[usize; 3]> {
    if x.len() != 3 {
        return None;
    }
    let o = c.offset();
    let mut out = [0; 3];
    for a in 0..3 {
        let i = (x[a] / grid.spacing[a] - o[a]).round();
        if !(i >= 0.0 && (i as usize) < grid.n[a]) {
            return None;
        }
        out[a] = i as usize;
    }
    Some(out)
}

fn place(case: &Case, key: &str, grid: &Grid, c: Component, x: &[f64]) -> Result<[usize; 3]> {
    cell_of(grid, c, x).ok_or_else(|| {
        case.invalid(
            key,
            format!(
                "{x:?} is outside the grid (or has not 3 coordinates); use 0 ..= {:?}",
                extent(grid)
            ),
        )
    })
}

/// Refuse a source or probe in a CPML layer, where the fields are damped, not physical.
fn outside_cpml(case: &Case, key: &str, grid: &Grid, cell: [usize; 3], x: &[f64]) -> Result<()> {
    let Some(a) = grid.in_cpml(cell) else {
        return Ok(());
    };
    let t = grid.boundary[a].cpml().map_or(0, |p| p.thickness);
    let d = grid.spacing[a];
    Err(case.invalid(
        key,
        format!(
            "{x:?} lies inside the CPML along axis {a} (its {t} cells at each end absorb the \
             field); move it into {} ..= {} on that axis or make the layer thinner",
            t as f64 * d,
            (grid.n[a] - t) as f64 * d
        ),
    ))
}

fn cell_box(case: &Case, i: usize, grid: &Grid, dt: f64, m: &MaterialBox) -> Result<CellBox> {
    let key = format!("fdtd.materials[{i}]");
    if !(m.eps_r.is_finite() && m.eps_r >= 1.0) {
        return Err(case.invalid(
            &format!("{key}.eps_r"),
            format!(
                "{}: use a finite relative permittivity >= 1 (below 1 light would outrun the \
                 Courant limit, which is computed for vacuum)",
                m.eps_r
            ),
        ));
    }
    if !(m.sigma.is_finite() && m.sigma >= 0.0) {
        return Err(case.invalid(
            &format!("{key}.sigma"),
            format!("{}: use a finite conductivity >= 0", m.sigma),
        ));
    }
    let shape = super::fdtd_shapes::shape(case, &key, grid, m)?;
    let drude = m.drude.map(|d| Drude {
        plasma_frequency: d.plasma_frequency,
        collision_frequency: d.collision_frequency,
    });
    if let Some(d) = drude {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !ok(d.plasma_frequency) || !ok(d.collision_frequency) {
            return Err(case.invalid(
                &format!("{key}.drude"),
                format!(
                    "plasma_frequency {} and collision_frequency {}: use finite values >= 0",
                    d.plasma_frequency, d.collision_frequency
                ),
            ));
        }
        let limit = crate::fdtd::drude_dt_limit(grid, d.plasma_frequency);
        if dt > limit {
            return Err(case.invalid(
                &format!("{key}.drude.plasma_frequency"),
                format!(
                    "{} lowers the stable time step to 1/sqrt(1/dx² + 1/dy² + 1/dz² + ωp²/4) \
                     = {limit:e}, below dt = {dt:e}: lower time.cfl (to at most {:.4}) or \
                     time.dt",
                    d.plasma_frequency,
                    limit / grid.dt_limit()
                ),
            ));
        }
    }
    let models = [
        m.drude.map(|_| "drude"),
        m.lorentz.map(|_| "lorentz"),
        m.debye.map(|_| "debye"),
    ];
    let given: Vec<&str> = models.iter().flatten().copied().collect();
    if given.len() > 1 {
        return Err(case.invalid(
            &format!("{key}.{}", given[1]),
            format!(
                "a box takes at most one dispersion model, but this one has {}: split it into \
                 separate boxes or keep one model",
                given.join(" and ")
            ),
        ));
    }
    let lorentz = m.lorentz.map(|l| Lorentz {
        delta_eps: l.delta_eps,
        resonance_frequency: l.resonance_frequency,
        damping: l.damping,
    });
    if let Some(l) = &lorentz {
        if let Some((k, v, want)) = crate::fdtd::bad_lorentz(l) {
            return Err(case.invalid(
                &format!("{key}.lorentz.{k}"),
                format!("{v}: use a finite value {want}"),
            ));
        }
        let limit = crate::fdtd::lorentz_dt_limit(grid, l);
        if dt > limit {
            return Err(case.invalid(
                &format!("{key}.lorentz.resonance_frequency"),
                format!(
                    "{} (with delta_eps {}) lowers the stable time step to \
                     1/sqrt(1/dx² + 1/dy² + 1/dz² + ω0²(1 + Δε)/4) = {limit:e}, below \
                     dt = {dt:e}: lower time.cfl (to at most {:.4}) or time.dt",
                    l.resonance_frequency,
                    l.delta_eps,
                    limit / grid.dt_limit()
                ),
            ));
        }
    }
    let debye = m.debye.map(|d| Debye {
        delta_eps: d.delta_eps,
        relaxation_time: d.relaxation_time,
    });
    if let Some((k, v, want)) = debye.as_ref().and_then(crate::fdtd::bad_debye) {
        return Err(case.invalid(
            &format!("{key}.debye.{k}"),
            format!("{v}: use a finite value {want}"),
        ));
    }
    if m.pec && (m.drude.is_some() || m.lorentz.is_some() || m.debye.is_some()) {
        return Err(case.invalid(
            &format!("{key}.pec"),
            "a perfect conductor takes no dispersion model: remove one of them".into(),
        ));
    }
    Ok(CellBox {
        shape,
        pec: m.pec,
        eps_r: m.eps_r,
        sigma: m.sigma,
        drude,
        lorentz,
        debye,
    })
}

/// Validate an fdtd case completely (everything checked before step 1) and build its setup.
pub fn prepare(case: &Case) -> Result<(Plan, FdtdSetup)> {
    let plan = plan(case)?;
    let grid = grid(case)?;
    let f = spec(case)?;
    let boxes = f
        .materials
        .iter()
        .enumerate()
        .map(|(i, m)| cell_box(case, i, &grid, plan.dt, m))
        .collect::<Result<Vec<_>>>()?;
    let mut sources = Vec::new();
    let mut hard_sources = Vec::new();
    for (i, s) in f.sources.iter().enumerate() {
        let key = format!("fdtd.sources[{i}]");
        let c = s.component;
        if !c.is_electric() {
            return Err(case.invalid(
                &format!("{key}.component"),
                format!("{:?}: sources drive \"ex\", \"ey\" or \"ez\"", s.component),
            ));
        }
        let cell = place(case, &format!("{key}.position"), &grid, c, &s.position)?;
        outside_cpml(case, &format!("{key}.position"), &grid, cell, &s.position)?;
        if grid.on_pec_wall(c, cell) {
            return Err(case.invalid(
                &format!("{key}.position"),
                format!(
                    "{:?} at {:?} lies on a PEC wall, where {c:?} is held at zero; move it \
                     half a cell or more inside",
                    s.component, s.position
                ),
            ));
        }
        if !s.amplitude.is_finite() {
            return Err(case.invalid(&format!("{key}.amplitude"), "must be finite".into()));
        }
        let src = PointSource {
            component: c,
            cell,
            waveform: waveform(case, &key, s.keys())?,
            amplitude: s.amplitude,
        };
        if s.hard {
            hard_sources.push(src);
        } else {
            sources.push(src);
        }
    }
    let mut probes = Vec::new();
    for (i, p) in f.probes.iter().enumerate() {
        let c = p.component;
        let key = format!("fdtd.probes[{i}].position");
        let cell = place(case, &key, &grid, c, &p.position)?;
        outside_cpml(case, &key, &grid, cell, &p.position)?;
        probes.push((c, cell));
    }
    let duration = plan.steps as f64 * plan.dt;
    let mut monitors = Vec::new();
    for (i, m) in f.monitors.iter().enumerate() {
        let key = format!("fdtd.monitors[{i}]");
        let a = m.axis.index();
        let (n, d) = (grid.n[a], grid.spacing[a]);
        let idx = (m.position / d).round();
        if !(idx >= 0.0 && idx < n as f64) {
            return Err(case.invalid(
                &format!("{key}.position"),
                format!(
                    "{} is outside the grid along {:?}: use 0 ..= {} (planes at i·{d})",
                    m.position,
                    m.axis,
                    (n - 1) as f64 * d
                ),
            ));
        }
        let spec = MonitorSpec {
            axis: a,
            index: idx as usize,
            components: m.components.clone(),
            frequencies: m.frequencies.clone(),
        };
        if let Some(why) = crate::fdtd::check_monitor(&grid, plan.dt, duration, &spec) {
            return Err(case.invalid(&key, format!("monitor {i}: {why}")));
        }
        monitors.push(spec);
    }
    let plane_waves = f
        .plane_waves
        .iter()
        .enumerate()
        .map(|(i, w)| super::fdtd_waves::plane_wave(case, i, &grid, &boxes, w))
        .collect::<Result<Vec<_>>>()?;
    let fluxes = f
        .flux
        .iter()
        .enumerate()
        .map(|(i, s)| super::fdtd_waves::flux(case, i, &grid, plan.dt, duration, s))
        .collect::<Result<Vec<_>>>()?;
    let o = &case.spec.output;
    if o.every == 0 {
        return Err(case.invalid("output.every", "must be at least 1".into()));
    }
    if let Some(z) = o.slice
        && z >= grid.n[2]
    {
        return Err(case.invalid("output.slice", format!("{z} is outside 0..{}", grid.n[2])));
    }
    Ok((
        plan,
        FdtdSetup {
            grid,
            dt: plan.dt,
            boxes,
            sources,
            hard_sources,
            plane_waves,
            fluxes,
            probes,
            monitors,
            duration,
            plot: f.plot,
        },
    ))
}
