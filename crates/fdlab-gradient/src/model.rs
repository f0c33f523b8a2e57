//! The forward model of a wave case as one step description: the case's step, its point
//! sources as one-point updates adding a parameter, and a zero coefficient field whose
//! gradient is the image.

use crate::error::{Error, Result};
use fdlab_core::step::physics::{AcousticVd, Leapfrog};
use fdlab_core::step::{Expr, FieldDecl, Role, Slots, StepDescription, StepRegion, Update};
use fdlab_core::{Axis, Field, Grid, Region};
use fdlab_cpu::step::run_step;
use fdlab_solvers::WaveSetup;

/// The coefficient field (zero everywhere) added to the pressure update as `image · pⁿ`: it
/// changes no value, and its gradient is the image `Σ_n pⁿ(x) p̄ⁿ⁺¹(x)` (see
/// [`crate::Sweep::image`]).
pub const IMAGE: &str = "image";

/// A wave case's forward model on the reference executor, in `f64`: the description, the
/// slots before step 0 (coefficients filled), each step's source parameters, the receivers.
///
/// The time step, the grid, the CPML profiles and the densities are fixed; only the velocity
/// varies ([`Model::with_velocity`]).
#[derive(Debug, Clone)]
pub struct Model {
    desc: StepDescription,
    grid: Grid,
    setup: WaveSetup,
    steps: usize,
    inv_dv: f64,
    receivers: Vec<Weights>,
    /// Per source, the parameters it sets and the weight of its value in each.
    source_params: Vec<Vec<(String, f64)>>,
    start: Slots<Field<f64>>,
    velocity: Vec<f64>,
    rho: Option<Vec<f64>>,
}

/// Linear indices (x fastest) and weights: the points a receiver gathers from.
pub type Weights = Vec<(usize, f64)>;

/// A per-point array from one value or one per point.
fn per_point(v: &[f64], cells: usize) -> Vec<f64> {
    if v.len() == 1 {
        vec![v[0]; cells]
    } else {
        v.to_vec()
    }
}

/// Adds [`IMAGE`] to `d` and the term `image · p` to its whole-grid pressure update.
fn add_image(d: &mut StepDescription) -> Result<()> {
    let p = Leapfrog::P;
    let main = d
        .updates
        .iter_mut()
        .find(|u| u.target == p && u.level == 1 && matches!(u.region, StepRegion::All))
        .ok_or_else(|| Error::Usage("the wave step has no whole-grid pressure update".into()))?;
    main.expr = main.expr.clone() + Expr::field(IMAGE) * Expr::field(p);
    d.fields.push(FieldDecl::coefficient(IMAGE));
    Ok(())
}

/// The linear index of `cell` on `n`, or an error naming `what` when it lies outside.
fn linear(n: [usize; 3], cell: [usize; 3], what: &str) -> Result<usize> {
    if (0..3).any(|a| cell[a] >= n[a]) {
        return Err(Error::Usage(format!(
            "{what} at cell {cell:?} lies outside the grid of {n:?} points; move it inside"
        )));
    }
    Ok(cell[0] + n[0] * (cell[1] + n[1] * cell[2]))
}

impl Model {
    /// The model of `setup` over `steps` steps. Constant density: the setup's
    /// [`WaveSetup::description`] (the `acoustic_layers` step) extended with the sources as
    /// `acoustic_vd_layers` has them (`p⁺ += s_i` on a one-point box); `c²Δt²` and the CPML
    /// profiles of [`WaveSetup::coefficients`] broadcast to the grid. Variable density: the
    /// description and fields of [`fdlab_solvers::wave_vd::prepare`] (`b = 1/ρ`, `K = ρc²`).
    pub fn new(setup: &WaveSetup, steps: usize) -> Result<Model> {
        let n = setup.n;
        let cells: usize = n.iter().product();
        if setup.dim < 2 || setup.dim > 3 {
            return Err(Error::Usage(format!(
                "wave setups have 2 or 3 axes, not {}",
                setup.dim
            )));
        }
        let velocity = per_point(&setup.velocity, cells);
        if velocity.len() != cells {
            return Err(Error::Usage(format!(
                "the velocity has {} values for {cells} grid points; give one or one per point",
                velocity.len()
            )));
        }
        let receivers = (0..setup.receivers.len())
            .map(|i| {
                let what = format!("receiver {i}");
                let points = setup.receiver_points(i).into_iter();
                points
                    .map(|(c, w)| Ok((linear(n, c, &what)?, w)))
                    .collect::<Result<Weights>>()
            })
            .collect::<Result<Vec<_>>>()?;
        for (i, src) in setup.sources.iter().enumerate() {
            for (c, _) in src.points() {
                linear(n, c, &format!("source {i}"))?;
            }
        }
        // Constant density: one parameter per source, added with each point's weight by the
        // description. Variable density: its description has one parameter per point, in
        // the order of the sources and their points, each set to the weight times the value.
        let mut next = 0;
        let source_params: Vec<Vec<(String, f64)>> = setup
            .sources
            .iter()
            .enumerate()
            .map(|(i, src)| match setup.density {
                None => vec![(AcousticVd::source(i), 1.0)],
                Some(_) => src
                    .points()
                    .into_iter()
                    .map(|(_, w)| {
                        next += 1;
                        (AcousticVd::source(next - 1), w)
                    })
                    .collect(),
            })
            .collect();
        let dv: f64 = setup.spacing[..setup.dim].iter().product();
        let (desc, grid, values, previous, rho) = match &setup.density {
            Some(density) => {
                let p = fdlab_solvers::wave_vd::prepare(setup)?;
                let rho = per_point(density, cells);
                (p.desc, p.grid, p.values, p.previous, Some(rho))
            }
            None => {
                let (desc, values) = constant_density(setup)?;
                let grid = Grid::new(&n[..setup.dim], &setup.spacing[..setup.dim])?;
                let previous = setup
                    .previous
                    .clone()
                    .unwrap_or_else(|| setup.initial.clone());
                (desc, grid, values, previous, None)
            }
        };
        let mut desc = desc;
        add_image(&mut desc)?;
        desc.validate_on(&grid)?;
        let start = Slots::new(&desc, |name, level| {
            let v = match (name, level) {
                (Leapfrog::P, -1) => Some(&previous),
                (_, 0) => values.iter().find(|(f, _)| f == name).map(|(_, v)| v),
                _ => None,
            };
            match v {
                Some(v) => Field::from_vec(&grid, v.clone()),
                None => Ok(Field::zeros(&grid)),
            }
        })?;
        Ok(Model {
            desc,
            grid,
            setup: setup.clone(),
            steps,
            inv_dv: 1.0 / dv,
            receivers,
            source_params,
            start,
            velocity,
            rho,
        })
    }

    /// The same model with `velocity` (one value per grid point, x fastest) in place of the
    /// case's: `c²Δt²` (constant density) or `K = ρc²` (variable density) recomputed; the time
    /// step, the CPML profiles and the densities unchanged.
    pub fn with_velocity(&self, velocity: &[f64]) -> Result<Model> {
        let cells = self.grid.len();
        if velocity.len() != cells {
            return Err(Error::Usage(format!(
                "{} velocities for {cells} grid points; give one per point",
                velocity.len()
            )));
        }
        if let Some(i) = velocity.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(Error::Usage(format!(
                "velocity {} at point {i}; give positive finite velocities",
                velocity[i]
            )));
        }
        let mut m = self.clone();
        let dt = self.setup.dt;
        let (name, values): (&str, Vec<f64>) = match &self.rho {
            None => (
                Leapfrog::C2DT2,
                velocity.iter().map(|c| c * c * dt * dt).collect(),
            ),
            Some(rho) => (
                AcousticVd::K,
                rho.iter().zip(velocity).map(|(r, c)| r * c * c).collect(),
            ),
        };
        let f = m
            .start
            .get_mut(name, 0)
            .ok_or_else(|| Error::Usage(format!("the model has no field {name}")))?;
        f.as_mut_slice().copy_from_slice(&values);
        m.velocity = velocity.to_vec();
        Ok(m)
    }

    /// The step description (sources and [`IMAGE`] included).
    pub fn description(&self) -> &StepDescription {
        &self.desc
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The setup the model was built from.
    pub fn setup(&self) -> &WaveSetup {
        &self.setup
    }

    /// Steps of a run.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The velocity at every grid point (x fastest).
    pub fn velocity(&self) -> &[f64] {
        &self.velocity
    }

    /// The density at every grid point, for a variable-density model.
    pub fn density(&self) -> Option<&[f64]> {
        self.rho.as_deref()
    }

    /// The points and weights each receiver gathers from (linear indices, x fastest).
    pub fn receivers(&self) -> &[Weights] {
        &self.receivers
    }

    /// Per source, the description's parameters it sets and the weight of its value in
    /// each (see [`Model::params`]).
    pub fn source_params(&self) -> &[Vec<(String, f64)>] {
        &self.source_params
    }

    /// The slots before step 0: `p` at levels 0 and −1, the memory variables zero, the
    /// coefficient fields filled.
    pub fn start(&self) -> &Slots<Field<f64>> {
        &self.start
    }

    /// `Δt² / ΔV`: the factor from a source's wavelet sample `amplitude · s(t)` to the
    /// value its update adds (times each point's weight).
    pub fn source_scale(&self) -> f64 {
        self.setup.dt * self.setup.dt * self.inv_dv
    }

    /// Step `n`'s parameters: `dt` (variable density), then `s_i = Δt² · amplitude_i ·
    /// s_i(nΔt) / ΔV` per source (its Ricker or wavelet file), times each point's weight
    /// where the description has a parameter per point, as the case's steppers add them.
    pub fn params(&self, n: usize) -> Vec<(String, f64)> {
        let s = &self.setup;
        let mut out = vec![];
        if self.rho.is_some() {
            out.push((AcousticVd::DT.to_string(), s.dt));
        }
        for (src, params) in s.sources.iter().zip(&self.source_params) {
            let v = s.dt * s.dt * src.amplitude * src.wavelet_at(n as u64, s.dt) * self.inv_dv;
            out.extend(params.iter().map(|(name, w)| (name.clone(), w * v)));
        }
        out
    }

    /// Bytes of one copy of the slots (what a checkpoint holds: every field and level,
    /// coefficients included).
    pub fn state_bytes(&self) -> u64 {
        let buffers: u64 = self
            .desc
            .fields
            .iter()
            .map(|f| match f.role {
                Role::State { levels } => levels as u64 + 1,
                _ => 1,
            })
            .sum();
        buffers * self.grid.len() as u64 * 8
    }

    /// The number of coefficient fields (one gradient array each).
    pub(crate) fn coefficient_count(&self) -> usize {
        let c = self.desc.fields.iter();
        c.filter(|f| f.role == Role::Coefficient).count()
    }

    /// Runs the model: the traces, receivers × steps (sample `n` after step `n`, at time
    /// `(n+1)Δt`, as `fdlab run`'s seismogram). `tick(n)` is called after each step.
    pub fn forward(&self, tick: &mut dyn FnMut(usize)) -> Result<Vec<Vec<f64>>> {
        let mut slots = self.start.clone();
        let mut traces = vec![Vec::with_capacity(self.steps); self.receivers.len()];
        for n in 0..self.steps {
            let p = self.params(n);
            let p: Vec<(&str, f64)> = p.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            run_step(&self.desc, &self.grid, &mut slots, &p)?;
            let now = slots
                .get(Leapfrog::P, 0)
                .ok_or_else(|| Error::Usage("the model has no pressure field".into()))?
                .as_slice();
            for (tr, points) in traces.iter_mut().zip(&self.receivers) {
                tr.push(points.iter().map(|&(c, w)| w * now[c]).sum());
            }
            if (n % 64 == 63 || n + 1 == self.steps)
                && let Some(v) = now.iter().find(|v| !v.is_finite())
            {
                return Err(Error::NonFinite {
                    step: n + 1,
                    value: *v,
                });
            }
            tick(n + 1);
        }
        Ok(traces)
    }
}

/// Initial values of fields by name (level 0).
type Values = Vec<(String, Vec<f64>)>;

/// The constant-density description of `setup` with its sources, and the values of its
/// fields at level 0 (`p`, `c²Δt²`, the CPML's `A` and `B` broadcast from their profiles).
fn constant_density(setup: &WaveSetup) -> Result<(StepDescription, Values)> {
    let mut desc = setup.description()?;
    let coefs = setup.coefficients()?;
    let n = setup.n;
    let cells: usize = n.iter().product();
    let p = Leapfrog::P;
    let mut values = vec![
        (p.to_string(), setup.initial.clone()),
        (Leapfrog::C2DT2.to_string(), coefs.c2dt2),
    ];
    if let Some(prof) = &coefs.cpml {
        // The layers' 1-D profiles as whole-grid coefficient fields (as the solvers'
        // `descriptions` test fills them).
        let along = |a: usize, v: &[f64]| -> Vec<f64> {
            (0..cells)
                .map(|c| v[[c % n[0], c / n[0] % n[1], c / (n[0] * n[1])][a]])
                .collect()
        };
        for (a, &axis) in Axis::ALL[..setup.dim].iter().enumerate() {
            values.push((Leapfrog::a(axis), along(a, &prof[a].a)));
            values.push((Leapfrog::b(axis), along(a, &prof[a].b)));
        }
    }
    // The sources as `acoustic_vd_layers` adds them, after every update: `p⁺ += w s_i` on
    // each point a source is spread over (one point of weight 1 on the grid).
    for (i, src) in setup.sources.iter().enumerate() {
        let s = AcousticVd::source(i);
        for (cell, w) in src.points() {
            let point = Region {
                lo: cell,
                hi: cell.map(|c| c + 1),
            };
            let add = Expr::at(p, 1, [0; 3]) + Expr::Const(w) * Expr::param(&s);
            desc.updates
                .push(Update::new(p, 1, add).on(StepRegion::Box(point)));
        }
        desc.params.push(s);
    }
    Ok((desc, values))
}
