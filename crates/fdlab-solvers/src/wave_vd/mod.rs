//! Variable-density acoustics `p_tt = ρc² ∇·(ρ⁻¹ ∇p) + s`, run from its step description
//! ([`fdlab_core::step::physics::acoustic_vd_layers`]) on the CPU (the reference executor)
//! or a GPU (the one emitter's kernels): no solver code of its own beyond filling the
//! coefficient fields, the sources' values and the receivers.
//!
//! A wave case with `material.density` runs here; without it the constant-density stepper
//! ([`crate::wave`]) runs. With constant ρ both solve the same equation.

mod cpu;
mod gpu;

use crate::error::{Error, Result};
use crate::layout::to_bytes;
use crate::stepper::{StatePart, Stepper};
use crate::wave::{WaveBoundary, WaveSetup};
use fdlab_core::step::physics::{acoustic_vd_layers, AcousticVd, AcousticVdSpec};
use fdlab_core::step::{Role, StepDescription};
use fdlab_core::{Axis, Boundary, Field, Grid, Precision, Scalar};
use fdlab_cuda::codegen::CudaSource;

pub use cpu::WaveVdCpu;
pub use gpu::WaveVdGpu;

/// Reflection coefficient the CPML's damping is tuned for (as the constant-density layer).
const LAYER_REFLECTION: f64 = 1e-4;

/// What a backend does with a description: hold its fields, run a step, read them back.
pub trait Exec: Send {
    /// One step with `params` (`dt`, then one value per source).
    fn step(&mut self, params: &[(&str, f64)]) -> Result<()>;
    /// Field `name` at `level`, at every grid point.
    fn read(&self, name: &str, level: i32) -> Result<Vec<f64>>;
    /// Overwrites field `name` at `level`.
    fn write(&mut self, name: &str, level: i32, values: &[f64]) -> Result<()>;
    /// The value of `name` at level 0 at the linear indices `at`.
    fn sample(&self, name: &str, at: &[usize]) -> Result<Vec<f64>>;
    /// `"cpu"` or `"cuda"`.
    fn backend(&self) -> &'static str;
    /// What building it cost in kernels and device memory (none on the CPU).
    fn build_times(&self) -> crate::startup::BuildTimes {
        crate::startup::BuildTimes::default()
    }
}

/// The description, grid and coefficient fields of a setup (public for the adjoint runs of
/// `fdlab-gradient`, which run the same description).
pub struct Prepared {
    /// The step, sources included ([`acoustic_vd_layers`]).
    pub desc: StepDescription,
    /// The grid.
    pub grid: Grid,
    /// Initial values of every field (level 0; level −1 of `p` is `previous`).
    pub values: Vec<(String, Vec<f64>)>,
    /// `p` at step −1.
    pub previous: Vec<f64>,
}

impl Prepared {
    /// The starting values of field `name` at `level` as a host field in `T` (zero where the
    /// setup gives none: memory variables, the level being written).
    pub fn host_field<T: Scalar>(&self, name: &str, level: i32) -> Result<Field<T>> {
        let values = match (name, level) {
            (AcousticVd::P, -1) => Some(&self.previous),
            _ => self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v),
        };
        Ok(match values {
            Some(v) => Field::from_vec(&self.grid, v.iter().map(|x| T::from_f64(*x)).collect())?,
            None => Field::zeros(&self.grid),
        })
    }
}

/// The CPML coefficients `(A, B)` at position `x` (in cells, possibly half) of an axis of `n`
/// points with `layer` cells at each end.
fn layer_coefficients(x: f64, n: usize, layer: usize, d0: f64, f0: f64, dt: f64) -> (f64, f64) {
    let t = layer as f64;
    let depth = (t - x).max(x - (n as f64 - 1.0 - t)).max(0.0);
    if depth <= 0.0 || layer == 0 {
        return (0.0, 1.0);
    }
    let r = (depth / t).min(1.0);
    let (sigma, alpha) = (d0 * r * r, std::f64::consts::PI * f0 * (1.0 - r));
    let b = (-(sigma + alpha) * dt).exp();
    (sigma / (sigma + alpha) * (b - 1.0), b)
}

/// A per-point field from one value or one per point.
fn per_point(v: &[f64], cells: usize) -> Vec<f64> {
    if v.len() == 1 {
        vec![v[0]; cells]
    } else {
        v.to_vec()
    }
}

/// The description and initial fields of `s` (which must have a density).
pub fn prepare(s: &WaveSetup) -> Result<Prepared> {
    let density = s.density.as_deref().ok_or_else(|| {
        Error::Usage("the variable-density stepper needs material.density".into())
    })?;
    let grid = Grid::new(&s.n[..s.dim], &s.spacing[..s.dim])?;
    let (boundary, layer, f0) = match s.boundary {
        WaveBoundary::Periodic => (Boundary::Periodic, None, 0.0),
        WaveBoundary::Rigid => (Boundary::Dirichlet, None, 0.0),
        WaveBoundary::Cpml { thickness, f0 } => (Boundary::Dirichlet, Some(thickness), f0),
    };
    let spec = AcousticVdSpec {
        accuracy: s.order,
        boundary,
        layer,
        // A spread source is one source of the description per point.
        sources: s
            .sources
            .iter()
            .flat_map(|src| src.points().into_iter().map(|(c, _)| c))
            .collect(),
    };
    let desc = acoustic_vd_layers(&grid, &spec)?;
    let cells = s.n.iter().product::<usize>();
    let rho = per_point(density, cells);
    let c = per_point(&s.velocity, cells);
    if let Some(i) = rho.iter().position(|r| !(*r > 0.0 && r.is_finite())) {
        return Err(Error::Invalid(format!(
            "material.density is {} at point {i}; give positive densities",
            rho[i]
        )));
    }
    let mut values = vec![
        (AcousticVd::P.to_string(), s.initial.clone()),
        (AcousticVd::B.into(), rho.iter().map(|r| 1.0 / r).collect()),
        (
            AcousticVd::K.into(),
            rho.iter().zip(&c).map(|(r, c)| r * c * c).collect(),
        ),
    ];
    if let Some(layer) = layer {
        let c_max = c.iter().cloned().fold(0.0, f64::max);
        for (a, &axis) in Axis::ALL[..s.dim].iter().enumerate() {
            let h = s.spacing[a];
            let d0 = -3.0 * c_max * LAYER_REFLECTION.ln() / (2.0 * (layer as f64 * h).max(h));
            for half in [false, true] {
                let profile: Vec<(f64, f64)> = (0..s.n[a])
                    .map(|i| {
                        let x = i as f64 + if half { 0.5 } else { 0.0 };
                        layer_coefficients(x, s.n[a], layer, d0, f0, s.dt)
                    })
                    .collect();
                let along = |f: fn(&(f64, f64)) -> f64| -> Vec<f64> {
                    (0..cells)
                        .map(|idx| {
                            let coord =
                                [idx % s.n[0], idx / s.n[0] % s.n[1], idx / (s.n[0] * s.n[1])];
                            f(&profile[coord[a]])
                        })
                        .collect()
                };
                values.push((AcousticVd::a(axis, half), along(|v| v.0)));
                values.push((AcousticVd::b(axis, half), along(|v| v.1)));
            }
        }
    }
    let previous = s.previous.clone().unwrap_or_else(|| s.initial.clone());
    Ok(Prepared {
        desc,
        grid,
        values,
        previous,
    })
}

/// The fields a checkpoint keeps: every level of every field the step writes.
fn written_fields(d: &StepDescription) -> Vec<(String, i32)> {
    let mut out = vec![];
    for f in &d.fields {
        match f.role {
            Role::State { levels } => {
                for l in (1 - levels as i32)..=0 {
                    out.push((f.name.clone(), l));
                }
            }
            Role::Auxiliary => out.push((f.name.clone(), 0)),
            Role::Coefficient => {}
        }
    }
    out
}

/// The variable-density stepper on one backend.
pub struct WaveVd<E> {
    exec: E,
    desc: StepDescription,
    setup: WaveSetup,
    cells: usize,
    inv_dv: f64,
    /// All receivers' points, x-fastest indices, one after the other.
    receivers: Vec<usize>,
    /// Per receiver, the weights of its points in `receivers`.
    receiver_weights: Vec<Vec<f64>>,
    traces: Vec<Vec<f64>>,
    step: u64,
    value_bytes: usize,
}

impl<E: Exec> WaveVd<E> {
    fn with_exec(s: &WaveSetup, p: &Prepared, exec: E, value_bytes: usize) -> WaveVd<E> {
        let n = s.n;
        let dv: f64 = s.spacing[..s.dim].iter().product();
        let points: Vec<_> = (0..s.receivers.len())
            .map(|i| s.receiver_points(i))
            .collect();
        let receivers: Vec<usize> = points
            .iter()
            .flatten()
            .map(|(c, _)| c[0] + n[0] * (c[1] + n[1] * c[2]))
            .collect();
        let receiver_weights = points
            .iter()
            .map(|p| p.iter().map(|x| x.1).collect())
            .collect();
        WaveVd {
            exec,
            desc: p.desc.clone(),
            setup: s.clone(),
            cells: n.iter().product(),
            inv_dv: 1.0 / dv,
            traces: vec![vec![]; s.receivers.len()],
            receivers,
            receiver_weights,
            step: 0,
            value_bytes,
        }
    }

    fn step_once(&mut self) -> Result<()> {
        let s = &self.setup;
        let mut values = vec![];
        for src in &s.sources {
            let v = s.dt * s.dt * src.amplitude * src.wavelet_at(self.step, s.dt) * self.inv_dv;
            values.extend(src.points().into_iter().map(|(_, w)| w * v));
        }
        let names: Vec<String> = (0..values.len()).map(AcousticVd::source).collect();
        let mut params = vec![(AcousticVd::DT, s.dt)];
        params.extend(names.iter().map(String::as_str).zip(values));
        self.exec.step(&params)?;
        self.step += 1;
        let at = self.exec.sample(AcousticVd::P, &self.receivers)?;
        let mut at = at.into_iter();
        for (tr, w) in self.traces.iter_mut().zip(&self.receiver_weights) {
            let vals: Vec<f64> = at.by_ref().take(w.len()).collect();
            tr.push(match (w.as_slice(), vals.as_slice()) {
                ([1.0], [v]) => *v,
                _ => w.iter().zip(&vals).map(|(w, v)| w * v).sum(),
            });
        }
        Ok(())
    }
}

impl<E: Exec> Stepper for WaveVd<E> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        self.exec.build_times()
    }

    fn advance(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            self.step_once()?;
        }
        // A blow-up shows in the field; checking once per call keeps the steps on the device.
        let p = self.exec.read(AcousticVd::P, 0)?;
        if let Some(i) = p.iter().position(|v| !v.is_finite()) {
            let n = self.setup.n;
            return Err(Error::NonFinite {
                step: self.step,
                cell: [i % n[0], i / n[0] % n[1], i / (n[0] * n[1])],
                value: p[i],
            });
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<Vec<f64>> {
        self.exec.read(AcousticVd::P, 0)
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        let mut parts = vec![];
        for (name, level) in written_fields(&self.desc) {
            let v = self.exec.read(&name, level)?;
            parts.push((format!("{name}@{level}"), to_bytes(&v)));
        }
        let tr: Vec<f64> = self.traces.iter().flatten().copied().collect();
        parts.push(("traces".into(), to_bytes(&tr)));
        Ok(parts)
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let get = |name: &str, len: usize| crate::stepper::state_part::<f64>(parts, name, len);
        for (name, level) in written_fields(&self.desc) {
            let v = get(&format!("{name}@{level}"), self.cells)?;
            self.exec.write(&name, level, &v)?;
        }
        let per = step as usize;
        let tr = get("traces", self.receiver_weights.len() * per)?;
        self.traces = tr.chunks(per.max(1)).map(<[f64]>::to_vec).collect();
        self.traces.resize(self.receiver_weights.len(), vec![]);
        self.step = step;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.cells
    }

    fn bytes_per_step(&self) -> usize {
        // p and p⁻ read, p⁺ written, b and K read.
        5 * self.cells * self.value_bytes
    }

    fn backend(&self) -> &'static str {
        self.exec.backend()
    }

    fn schedule(&self) -> String {
        format!(
            "step description: {} updates, one {} pass each",
            self.desc.updates.len(),
            if self.exec.backend() == "cpu" {
                "reference-executor"
            } else {
                "kernel"
            }
        )
    }
}

/// The kernels the GPU stepper of `s` (which has a density) compiles, one per update of its
/// description; generated without a GPU.
pub fn kernel_sources(s: &WaveSetup, precision: Precision) -> Result<Vec<CudaSource>> {
    let p = prepare(s)?;
    Ok(fdlab_cuda::codegen::step::emit_step(&p.desc, precision)?
        .into_iter()
        .map(|k| k.source)
        .collect())
}

/// Bytes of one value of `T`.
fn bytes_of<T: Scalar>() -> usize {
    std::mem::size_of::<T>()
}
