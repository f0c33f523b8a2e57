//! The `[fdtd]` table of a case file (`physics = "fdtd"`) and its validation into an
//! [`FdtdSetup`] that [`super::FdtdCpu`] runs.
//!
//! Positions are physical coordinates (the grid spans `0 ..= n·d` per axis), so a case keeps
//! its geometry when its grid is refined or coarsened. A source or probe uses the cell whose
//! stored position of its component (see [`Component::offset`]) is nearest; a material box
//! fills every cell whose centre lies in `lo ..= hi`. Sources and probes may not lie in a CPML
//! layer.

pub use super::case_waves::{DirectionName, FluxEntry, PlaneWaveSpec};
use super::{
    Boundary, Component, Cpml, Debye, Drude, Grid, Lorentz, MonitorSpec, PointSource, Shape,
    Waveform,
};
use super::{FluxSpec, PlaneWave};
use crate::case::{Case, Plan};
use crate::{Error, Result};
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

/// A source's waveform by name; its parameters are keys beside it (see [`Waveform`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveformName {
    /// `exp(−((t − t0)/tau)²)`: needs `t0`, `tau`.
    Gaussian,
    /// `sin(2π f0 (t − t0))·exp(−((t − t0)/tau)²)`: needs `f0`, `t0`, `tau`.
    ModulatedGaussian,
    /// Ricker wavelet: needs `f0`; `t0` defaults to `1.5 / f0`.
    Ricker,
    /// `sin(2π f0 t)`: needs `f0`.
    Sine,
}

/// `[[fdtd.materials]]`: a box, sphere or slab of dielectric / conductor / perfect conductor /
/// dispersive medium, later ones overriding earlier ones. Give exactly one geometry: `lo` and
/// `hi`, `center` and `radius`, or `slab`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialBox {
    /// Low corner of a box, physical coordinates.
    pub lo: Option<Vec<f64>>,
    /// High corner of a box, physical coordinates; cells whose centres lie in `lo ..= hi` are
    /// filled.
    pub hi: Option<Vec<f64>>,
    /// Centre of a sphere, physical coordinates.
    pub center: Option<Vec<f64>>,
    /// Radius of a sphere; cells whose centres lie within it are filled.
    pub radius: Option<f64>,
    /// A slab (a layer) across the whole grid between two planes normal to an axis.
    pub slab: Option<SlabSpec>,
    /// A perfect electric conductor (default false).
    #[serde(default)]
    pub pec: bool,
    /// Relative permittivity (≥ 1; default 1).
    #[serde(default = "one")]
    pub eps_r: f64,
    /// Conductivity (≥ 0; default 0).
    #[serde(default)]
    pub sigma: f64,
    /// A Drude term on top of `eps_r` (which is then ε∞).
    pub drude: Option<DrudeSpec>,
    /// A one-pole Lorentz term on top of `eps_r` (which is then ε∞); at most one model a box.
    pub lorentz: Option<LorentzSpec>,
    /// A one-pole Debye term on top of `eps_r` (which is then ε∞); at most one model a box.
    pub debye: Option<DebyeSpec>,
}

/// `lorentz = { delta_eps = Δε, resonance_frequency = ω0, damping = δ }` in a material box:
/// `ε(ω) = ε∞ + Δε ω0²/(ω0² − ω² − 2iδω)` (see [`Lorentz`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LorentzSpec {
    /// `Δε` ≥ 0.
    pub delta_eps: f64,
    /// `ω0` in radians per unit time (angular: `2π·f0`), > 0.
    pub resonance_frequency: f64,
    /// `δ` per unit time, ≥ 0 (default 0, lossless).
    #[serde(default)]
    pub damping: f64,
}

/// `debye = { delta_eps = Δε, relaxation_time = τ }` in a material box:
/// `ε(ω) = ε∞ + Δε/(1 − iωτ)` (see [`Debye`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebyeSpec {
    /// `Δε` ≥ 0.
    pub delta_eps: f64,
    /// `τ` > 0.
    pub relaxation_time: f64,
}

/// `drude = { plasma_frequency = ωp, collision_frequency = γ }` in a material box:
/// `ε(ω) = ε∞ − ωp²/(ω² + iγω)` (see [`Drude`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrudeSpec {
    /// `ωp` in radians per unit time (angular: `2π·f_p`), ≥ 0.
    pub plasma_frequency: f64,
    /// `γ` per unit time, ≥ 0 (default 0, lossless).
    #[serde(default)]
    pub collision_frequency: f64,
}

/// `slab = { axis = "z", lo = 1.0, hi = 1.2 }`: every cell whose centre lies between the
/// planes `lo` and `hi` along `axis`, across the whole grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlabSpec {
    /// The slab's normal.
    pub axis: AxisName,
    /// Low plane, physical coordinate.
    pub lo: f64,
    /// High plane, physical coordinate.
    pub hi: f64,
}

fn one() -> f64 {
    1.0
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
    #[serde(default = "one")]
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

/// A waveform's name and parameters as a case gives them.
#[derive(Debug, Clone, Copy)]
pub(super) struct WaveformKeys {
    pub(super) waveform: WaveformName,
    pub(super) f0: Option<f64>,
    pub(super) t0: Option<f64>,
    pub(super) tau: Option<f64>,
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

/// An axis by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AxisName {
    /// x.
    X,
    /// y.
    Y,
    /// z.
    Z,
}

impl AxisName {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// `[[fdtd.monitors]]`: a running DFT of some components on one grid plane (see
/// [`super::DftMonitor`]); each writes `monitor_N.npy`.
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

/// A validated material region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellBox {
    /// The cells it fills.
    pub shape: Shape,
    /// A perfect conductor (its E components held at zero; the other properties unused).
    pub pec: bool,
    /// Relative permittivity.
    pub eps_r: f64,
    /// Conductivity.
    pub sigma: f64,
    /// Drude term, if dispersive.
    pub drude: Option<Drude>,
    /// Lorentz term, if dispersive (at most one of the three models is set).
    pub lorentz: Option<Lorentz>,
    /// Debye term, if dispersive.
    pub debye: Option<Debye>,
}

/// A validated fdtd case, ready for [`super::FdtdCpu::new`].
#[derive(Debug, Clone)]
pub struct FdtdSetup {
    /// The Yee grid.
    pub grid: Grid,
    /// Time step.
    pub dt: f64,
    /// Material boxes, applied in order.
    pub boxes: Vec<CellBox>,
    /// Soft sources.
    pub sources: Vec<PointSource>,
    /// Hard sources.
    pub hard_sources: Vec<PointSource>,
    /// Plane waves, checked against the grid and the boxes.
    pub plane_waves: Vec<PlaneWave>,
    /// Flux planes, checked against the run's duration.
    pub fluxes: Vec<FluxSpec>,
    /// Probes: component and cell.
    pub probes: Vec<(Component, [usize; 3])>,
    /// DFT monitors, checked against the run's duration.
    pub monitors: Vec<MonitorSpec>,
    /// The run's duration `steps·dt`, which the monitors were checked against.
    pub duration: f64,
    /// Component that [`crate::Stepper::field`] returns.
    pub plot: Component,
}

fn positive(v: f64) -> bool {
    v > 0.0 && v.is_finite()
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
    Grid::new(
        [g.shape[0], g.shape[1], g.shape[2]],
        [g.spacing[0], g.spacing[1], g.spacing[2]],
        [b(0), b(1), b(2)],
    )
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
        steps: (t.duration / dt).round().max(1.0) as u64,
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

pub(super) fn extent(grid: &Grid) -> [f64; 3] {
    std::array::from_fn(|a| grid.n[a] as f64 * grid.spacing[a])
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
    let shape = super::case_shapes::shape(case, &key, grid, m)?;
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
        let limit = super::drude_dt_limit(grid, d.plasma_frequency);
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
        if let Some((k, v, want)) = super::dispersion::bad_lorentz(l) {
            return Err(case.invalid(
                &format!("{key}.lorentz.{k}"),
                format!("{v}: use a finite value {want}"),
            ));
        }
        let limit = super::lorentz_dt_limit(grid, l);
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
    if let Some((k, v, want)) = debye.as_ref().and_then(super::dispersion::bad_debye) {
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

/// The waveform of a source or plane wave whose keys sit under `prefix` (e.g.
/// `fdtd.sources[0]`).
pub(super) fn waveform(case: &Case, prefix: &str, s: WaveformKeys) -> Result<Waveform> {
    let key = |k: &str| format!("{prefix}.{k}");
    let need = |k: &str, v: Option<f64>| {
        v.filter(|x| x.is_finite()).ok_or_else(|| {
            case.invalid(
                &key(k),
                format!(
                    "missing or not finite; the {:?} waveform needs it",
                    s.waveform
                ),
            )
        })
    };
    let pos = |k: &str, v: f64| {
        if positive(v) {
            Ok(v)
        } else {
            Err(case.invalid(&key(k), format!("{v}: must be positive")))
        }
    };
    let unused = |k: &str, v: Option<f64>| match v {
        Some(_) => Err(case.invalid(
            &key(k),
            format!("the {:?} waveform takes no {k}; remove it", s.waveform),
        )),
        None => Ok(()),
    };
    Ok(match s.waveform {
        WaveformName::Gaussian => {
            unused("f0", s.f0)?;
            Waveform::Gaussian {
                t0: need("t0", s.t0)?,
                tau: pos("tau", need("tau", s.tau)?)?,
            }
        }
        WaveformName::ModulatedGaussian => Waveform::ModulatedGaussian {
            f0: pos("f0", need("f0", s.f0)?)?,
            t0: need("t0", s.t0)?,
            tau: pos("tau", need("tau", s.tau)?)?,
        },
        WaveformName::Ricker => {
            unused("tau", s.tau)?;
            let f0 = pos("f0", need("f0", s.f0)?)?;
            Waveform::Ricker {
                f0,
                t0: s.t0.unwrap_or(1.5 / f0),
            }
        }
        WaveformName::Sine => {
            unused("t0", s.t0)?;
            unused("tau", s.tau)?;
            Waveform::Sine {
                f0: pos("f0", need("f0", s.f0)?)?,
            }
        }
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
        if let Some(why) = super::monitor::check(&grid, plan.dt, duration, &spec) {
            return Err(case.invalid(&key, format!("monitor {i}: {why}")));
        }
        monitors.push(spec);
    }
    let plane_waves = f
        .plane_waves
        .iter()
        .enumerate()
        .map(|(i, w)| super::case_waves::plane_wave(case, i, &grid, &boxes, w))
        .collect::<Result<Vec<_>>>()?;
    let fluxes = f
        .flux
        .iter()
        .enumerate()
        .map(|(i, s)| super::case_waves::flux(case, i, &grid, plan.dt, duration, s))
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
