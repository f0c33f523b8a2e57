//! Seismic modelling on NumPy arrays: receiver traces of the acoustic wave equation with a
//! CPML, and their vector-Jacobian product through the exact discrete adjoint of
//! `fdlab-gradient` (the Python layer, `fdlab.wave`, builds a `torch.autograd.Function` on it).
//!
//! Conventions (Deepwave's): `v` is the model without absorbing layers, NumPy axis order
//! (`[ny, nx]` or `[nz, ny, nx]`); `spacing` and locations follow the same axis order,
//! locations in cells from index 0 (fractional: Hicks' interpolation between grid points);
//! `source_amplitudes [shot, source, time]`, `source_locations [shot, source, ndim]`,
//! `receiver_locations [shot, receiver, ndim]`, traces `[shot, receiver, time]`. The CPML of
//! `pml_width` cells is added outside `v`, its velocity copied from the nearest edge cell.
//! Shots run in parallel; every input is checked before any work.

use fdlab_gradient::{plan_memory, vjp, Model};
use fdlab_solvers::hicks::{self, Edge, Weighted};
use fdlab_solvers::physics::wave_dt_limit;
use fdlab_solvers::{PointSource, WaveBoundary, WaveSetup};
use numpy::prelude::*;
use numpy::{PyArray1, PyArrayDyn, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::sync::Arc;

/// Bytes of checkpoints one shot's reverse sweep may hold when `checkpoints` is not given:
/// every state when they fit, else the most that fit (at least one).
const SHOT_MEMORY_BYTES: u64 = 1_000_000_000;

/// What went wrong, as the exception Python raises: bad input (`ValueError`) or a failure
/// of the run itself (`RuntimeError`, e.g. a forward run that blows up).
enum Failure {
    Value(String),
    Runtime(String),
}

impl From<fdlab_gradient::Error> for Failure {
    fn from(e: fdlab_gradient::Error) -> Self {
        match e {
            fdlab_gradient::Error::NonFinite { step, value } => Failure::Runtime(format!(
                "the wave is not finite at step {step} (value {value}): lower dt or the velocity"
            )),
            e @ fdlab_gradient::Error::Usage(_) => Failure::Value(e.to_string()),
            e => Failure::Runtime(e.to_string()),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Value(m) => PyValueError::new_err(m),
            Failure::Runtime(m) => PyRuntimeError::new_err(m),
        }
    }
}

fn bad(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

/// The options every call shares, as Python passed them (NumPy axis order).
struct Options {
    spacing: Vec<f64>,
    dt: f64,
    accuracy: usize,
    pml_width: usize,
    pml_freq: f64,
    pml_velocity: Option<f64>,
}

/// One shot: its sources (wavelets included) and receivers on the padded grid.
struct Shot {
    sources: Vec<PointSource>,
    receivers: Vec<[usize; 3]>,
    receiver_spread: Vec<Vec<Weighted>>,
}

/// A checked problem: the padded grid's setup without sources and receivers, the padded
/// velocity, the shots.
struct Problem {
    /// NumPy shape of `v`.
    shape: Vec<usize>,
    /// Interior points per axis, x first.
    interior: [usize; 3],
    pad: usize,
    base: WaveSetup,
    velocity: Vec<f64>,
    steps: usize,
    shots: Vec<Shot>,
}

/// A C-contiguous `f64` array's shape and values.
fn read(a: &PyReadonlyArrayDyn<'_, f64>, what: &str) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let values = a
        .as_slice()
        .map_err(|_| {
            bad(format!(
                "{what} is not C-contiguous; pass np.ascontiguousarray"
            ))
        })?
        .to_vec();
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(bad(format!(
            "{what} holds {} at flat index {i}; give finite values",
            values[i]
        )));
    }
    Ok((a.shape().to_vec(), values))
}

/// `shape` has 3 axes, the first `shots` (as `source_amplitudes`) and the last `ndim` (the
/// axes of `v`) when given.
fn check_3(
    shape: &[usize],
    what: &str,
    layout: &str,
    shots: Option<usize>,
    ndim: Option<usize>,
) -> PyResult<()> {
    let ok = shape.len() == 3
        && shots.is_none_or(|s| shape[0] == s)
        && ndim.is_none_or(|l| shape[2] == l);
    if ok {
        return Ok(());
    }
    let mut detail = String::new();
    if let Some(s) = shots {
        detail += &format!(" with {s} shots (as source_amplitudes)");
    }
    if let Some(d) = ndim {
        detail += &format!(" and ndim = {d} (the axes of v)");
    }
    Err(bad(format!(
        "{what} has shape {shape:?}; it must be {layout}{detail}"
    )))
}

/// The grid points and weights of a point at `at` (cells, NumPy axis order, relative to the
/// interior) on the padded grid, and its nearest cell; checked to lie inside the interior.
fn place(at: &[f64], p: &Problem, what: &str) -> PyResult<([usize; 3], Vec<Weighted>)> {
    let dim = at.len();
    let mut x = [0.0; 3];
    let mut cell = [0usize; 3];
    for a in 0..dim {
        let xa = at[dim - 1 - a];
        let n = p.interior[a];
        if !(0.0..=(n - 1) as f64).contains(&xa) {
            return Err(bad(format!(
                "{what} at {at:?} lies outside the model (NumPy axis {} runs from 0 to {}); \
                 move it inside",
                dim - 1 - a,
                n - 1
            )));
        }
        x[a] = xa + p.pad as f64;
        cell[a] = x[a].round() as usize;
    }
    let spread = hicks::spread(&x[..dim], p.base.n, [Edge::Wall; 3]).ok_or_else(|| {
        bad(format!(
            "{what} at {at:?}: its interpolation over {} points per axis does not fit in the \
             grid, even folded at its edges; put it on a grid point or use a larger grid",
            2 * hicks::HALF_WIDTH
        ))
    })?;
    Ok((cell, spread))
}

/// Checks the velocities and the options against `v` of `dim` axes; returns the velocity
/// the CPML is tuned for (`pml_velocity`, else `max(v)`).
fn check_options(v: &[f64], dim: usize, o: &Options) -> PyResult<f64> {
    if let Some(i) = v.iter().position(|c| *c <= 0.0) {
        return Err(bad(format!(
            "v holds {} at flat index {i}; give positive velocities",
            v[i]
        )));
    }
    if o.spacing.len() != dim || o.spacing.iter().any(|h| !(h.is_finite() && *h > 0.0)) {
        return Err(bad(format!(
            "spacing {:?}: give one positive number, or one per axis of v ({dim})",
            o.spacing
        )));
    }
    if !(o.dt.is_finite() && o.dt > 0.0) {
        return Err(bad(format!("dt = {}; give a positive time step", o.dt)));
    }
    if ![2, 4, 6, 8].contains(&o.accuracy) {
        return Err(bad(format!("accuracy = {}; give 2, 4, 6 or 8", o.accuracy)));
    }
    if !(o.pml_freq.is_finite() && o.pml_freq > 0.0) {
        return Err(bad(format!(
            "pml_freq = {}; give a positive frequency",
            o.pml_freq
        )));
    }
    let c_max = v.iter().fold(0.0f64, |m, c| m.max(*c));
    let c_ref = match o.pml_velocity {
        Some(c) if !(c.is_finite() && c > 0.0) => {
            return Err(bad(format!("pml_velocity = {c}; give a positive velocity")));
        }
        Some(c) => c,
        None => c_max,
    };
    let spacing_x: Vec<f64> = o.spacing.iter().rev().copied().collect();
    let limit = wave_dt_limit(o.accuracy, &spacing_x, c_max).map_err(|e| bad(e.to_string()))?;
    if o.dt > limit {
        return Err(bad(format!(
            "dt = {} exceeds the stability limit {limit:.6e} of accuracy {} on this grid \
             with the largest velocity {c_max}; give dt ≤ {limit:.6e}",
            o.dt, o.accuracy
        )));
    }
    Ok(c_ref)
}

/// The padded grid's setup of a model of NumPy `shape` with the options `o`: no sources or
/// receivers, the velocity `c_ref` alone (it sets the CPML's damping), and the interior's
/// points per axis, x first.
fn base_setup(shape: &[usize], o: &Options, c_ref: f64) -> (WaveSetup, [usize; 3]) {
    let dim = shape.len();
    let pad = o.pml_width;
    let (mut interior, mut n, mut spacing) = ([1usize; 3], [1usize; 3], [1.0; 3]);
    for a in 0..dim {
        interior[a] = shape[dim - 1 - a];
        n[a] = interior[a] + 2 * pad;
        spacing[a] = o.spacing[dim - 1 - a];
    }
    let cells: usize = n.iter().product();
    let base = WaveSetup {
        n,
        dim,
        spacing,
        order: o.accuracy,
        dt: o.dt,
        velocity: vec![c_ref],
        density: None,
        boundary: if pad == 0 {
            WaveBoundary::Rigid
        } else {
            WaveBoundary::Cpml {
                thickness: pad,
                f0: o.pml_freq,
            }
        },
        initial: vec![0.0; cells],
        previous: None,
        sources: vec![],
        receivers: vec![],
        receiver_spread: vec![],
    };
    (base, interior)
}

impl Problem {
    /// Checks every input and builds the problem.
    fn new(
        v: &PyReadonlyArrayDyn<'_, f64>,
        o: &Options,
        amplitudes: &PyReadonlyArrayDyn<'_, f64>,
        source_locations: &PyReadonlyArrayDyn<'_, f64>,
        receiver_locations: &PyReadonlyArrayDyn<'_, f64>,
    ) -> PyResult<Problem> {
        let (shape, v) = read(v, "v")?;
        let dim = shape.len();
        if !(2..=3).contains(&dim) || shape.contains(&0) {
            return Err(bad(format!(
                "v has shape {shape:?}; give a 2-D [ny, nx] or 3-D [nz, ny, nx] model with at \
                 least one point per axis"
            )));
        }
        let c_ref = check_options(&v, dim, o)?;
        let (ashape, amps) = read(amplitudes, "source_amplitudes")?;
        check_3(
            &ashape,
            "source_amplitudes",
            "[shot, source, time]",
            None,
            None,
        )?;
        let (shots, sources, steps) = (ashape[0], ashape[1], ashape[2]);
        if shots == 0 || steps == 0 {
            return Err(bad(format!(
                "source_amplitudes has shape {ashape:?}; give at least one shot and one time sample"
            )));
        }
        let (sshape, sloc) = read(source_locations, "source_locations")?;
        check_3(
            &sshape,
            "source_locations",
            "[shot, source, ndim]",
            Some(shots),
            Some(dim),
        )?;
        if sshape[1] != sources {
            return Err(bad(format!(
                "source_locations has {} sources per shot, source_amplitudes {sources}; give \
                 one location per source",
                sshape[1]
            )));
        }
        let (rshape, rloc) = read(receiver_locations, "receiver_locations")?;
        check_3(
            &rshape,
            "receiver_locations",
            "[shot, receiver, ndim]",
            Some(shots),
            Some(dim),
        )?;
        let receivers = rshape[1];

        let (base, interior) = base_setup(&shape, o, c_ref);
        let pad = o.pml_width;
        let mut p = Problem {
            shape,
            interior,
            pad,
            base,
            velocity: vec![],
            steps,
            shots: vec![],
        };
        p.velocity = p.padded(&v);
        for s in 0..shots {
            let mut shot = Shot {
                sources: vec![],
                receivers: vec![],
                receiver_spread: vec![],
            };
            for i in 0..sources {
                let at = &sloc[(s * sources + i) * dim..][..dim];
                let (cell, spread) = place(at, &p, &format!("source {i} of shot {s}"))?;
                let w = &amps[(s * sources + i) * steps..][..steps];
                shot.sources.push(PointSource {
                    cell,
                    amplitude: 1.0,
                    spread,
                    wavelet: Some(Arc::from(w)),
                    ..PointSource::default()
                });
            }
            for r in 0..receivers {
                let at = &rloc[(s * receivers + r) * dim..][..dim];
                let (cell, spread) = place(at, &p, &format!("receiver {r} of shot {s}"))?;
                shot.receivers.push(cell);
                shot.receiver_spread.push(spread);
            }
            p.shots.push(shot);
        }
        Ok(p)
    }

    /// `v` (interior, x fastest) extended over the layers by its nearest edge value.
    fn padded(&self, v: &[f64]) -> Vec<f64> {
        let n = self.base.n;
        (0..n.iter().product::<usize>())
            .map(|c| v[self.interior_index(c, n)])
            .collect()
    }

    /// The interior point whose value padded point `c` holds.
    fn interior_index(&self, c: usize, n: [usize; 3]) -> usize {
        let at = [c % n[0], c / n[0] % n[1], c / (n[0] * n[1])];
        let m = self.interior;
        let i: [usize; 3] = std::array::from_fn(|a| at[a].saturating_sub(self.pad).min(m[a] - 1));
        i[0] + m[0] * (i[1] + m[1] * i[2])
    }

    /// The gradient over the padded grid folded onto the interior: each layer point's
    /// derivative added to the edge point its velocity copies (the transpose of
    /// [`Problem::padded`]).
    fn fold(&self, g: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.interior.iter().product()];
        for (c, g) in g.iter().enumerate() {
            out[self.interior_index(c, self.base.n)] += g;
        }
        out
    }

    /// Shot `s`'s model.
    fn model(&self, s: usize) -> Result<Model, Failure> {
        let shot = &self.shots[s];
        let mut setup = self.base.clone();
        setup.sources = shot.sources.clone();
        setup.receivers = shot.receivers.clone();
        setup.receiver_spread = shot.receiver_spread.clone();
        Ok(Model::new(&setup, self.steps)?.with_velocity(&self.velocity)?)
    }
}

/// Options shared by the two entry points, from Python's arguments.
fn options(
    spacing: Vec<f64>,
    dt: f64,
    accuracy: usize,
    pml_width: usize,
    pml_freq: f64,
    pml_velocity: Option<f64>,
) -> Options {
    Options {
        spacing,
        dt,
        accuracy,
        pml_width,
        pml_freq,
        pml_velocity,
    }
}

/// `[shot][receiver][time]` as a NumPy array of that shape.
fn array3<'py>(
    py: Python<'py>,
    v: Vec<Vec<Vec<f64>>>,
    shape: [usize; 3],
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let flat: Vec<f64> = v.into_iter().flatten().flatten().collect();
    PyArray1::from_vec(py, flat).reshape(shape.to_vec())
}

/// Receiver traces `[shot, receiver, time]` of the acoustic wave equation: sample `n` is the
/// pressure after step `n`; source sample `n` is added at step `n` as `Δt² w / ΔV`.
#[pyfunction]
#[pyo3(signature = (v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
    accuracy, pml_width, pml_freq, pml_velocity = None))]
#[allow(clippy::too_many_arguments)]
pub fn wave_forward<'py>(
    py: Python<'py>,
    v: PyReadonlyArrayDyn<'py, f64>,
    spacing: Vec<f64>,
    dt: f64,
    source_amplitudes: PyReadonlyArrayDyn<'py, f64>,
    source_locations: PyReadonlyArrayDyn<'py, f64>,
    receiver_locations: PyReadonlyArrayDyn<'py, f64>,
    accuracy: usize,
    pml_width: usize,
    pml_freq: f64,
    pml_velocity: Option<f64>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let o = options(spacing, dt, accuracy, pml_width, pml_freq, pml_velocity);
    let p = Problem::new(
        &v,
        &o,
        &source_amplitudes,
        &source_locations,
        &receiver_locations,
    )?;
    let traces = py.allow_threads(|| {
        (0..p.shots.len())
            .into_par_iter()
            .map(|s| Ok(p.model(s)?.forward(&mut |_| {})?))
            .collect::<Result<Vec<_>, Failure>>()
    })?;
    let shape = [p.shots.len(), p.shots[0].receivers.len(), p.steps];
    array3(py, traces, shape)
}

/// What [`wave_vjp`] returns: traces and misfit (with `observed`), `∂J/∂v`, `∂J/∂w`.
type VjpOut<'py> = (
    Option<Bound<'py, PyArrayDyn<f64>>>,
    Option<f64>,
    Bound<'py, PyArrayDyn<f64>>,
    Bound<'py, PyArrayDyn<f64>>,
);

/// The vector-Jacobian product of [`wave_forward`]: with `grad_traces = ∂J/∂traces`
/// (`[shot, receiver, time]`) it returns `(None, None, ∂J/∂v, ∂J/∂source_amplitudes)`; with
/// `observed` instead, `J = ½ Σ (traces − observed)²` and it returns
/// `(traces, J, ∂J/∂v, ∂J/∂source_amplitudes)`. `checkpoints`: states each shot's reverse
/// sweep keeps (Revolve); `None` stores every state when they fit in 1 GB per shot.
#[pyfunction]
#[pyo3(signature = (v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
    accuracy, pml_width, pml_freq, pml_velocity = None, grad_traces = None, observed = None,
    checkpoints = None))]
#[allow(clippy::too_many_arguments)]
pub fn wave_vjp<'py>(
    py: Python<'py>,
    v: PyReadonlyArrayDyn<'py, f64>,
    spacing: Vec<f64>,
    dt: f64,
    source_amplitudes: PyReadonlyArrayDyn<'py, f64>,
    source_locations: PyReadonlyArrayDyn<'py, f64>,
    receiver_locations: PyReadonlyArrayDyn<'py, f64>,
    accuracy: usize,
    pml_width: usize,
    pml_freq: f64,
    pml_velocity: Option<f64>,
    grad_traces: Option<PyReadonlyArrayDyn<'py, f64>>,
    observed: Option<PyReadonlyArrayDyn<'py, f64>>,
    checkpoints: Option<usize>,
) -> PyResult<VjpOut<'py>> {
    let o = options(spacing, dt, accuracy, pml_width, pml_freq, pml_velocity);
    let p = Problem::new(
        &v,
        &o,
        &source_amplitudes,
        &source_locations,
        &receiver_locations,
    )?;
    let (shots, receivers, steps) = (p.shots.len(), p.shots[0].receivers.len(), p.steps);
    let (what, data) = match (&grad_traces, &observed) {
        (Some(g), None) => ("grad_traces", g),
        (None, Some(d)) => ("observed", d),
        _ => return Err(bad("give exactly one of grad_traces and observed".into())),
    };
    let (dshape, data) = read(data, what)?;
    if dshape != [shots, receivers, steps] {
        return Err(bad(format!(
            "{what} has shape {dshape:?}; it must be the traces' [shot, receiver, time] = \
             [{shots}, {receivers}, {steps}]"
        )));
    }
    if checkpoints == Some(0) {
        return Err(bad(
            "checkpoints = 0 leaves no slot for the initial state; give at least 1".into(),
        ));
    }
    let misfit_mode = observed.is_some();
    let per_shot = py.allow_threads(|| {
        (0..shots)
            .into_par_iter()
            .map(|s| {
                let model = p.model(s)?;
                let k = match checkpoints {
                    Some(k) => k.min(steps.saturating_sub(1).max(1)),
                    None => {
                        plan_memory(&model, None, SHOT_MEMORY_BYTES).map_or(1, |m| m.checkpoints)
                    }
                };
                let given: Vec<Vec<f64>> = (0..receivers)
                    .map(|r| data[(s * receivers + r) * steps..][..steps].to_vec())
                    .collect();
                let (traces, misfit, cotangent) = if misfit_mode {
                    let traces = model.forward(&mut |_| {})?;
                    let (j, residual) = fdlab_gradient::misfit(&traces, &given)?;
                    (traces, j, residual)
                } else {
                    (vec![], 0.0, given)
                };
                let out = vjp(&model, &cotangent, k, &mut |_| {})?;
                Ok((traces, misfit, out.velocity_gradient, out.source_gradient))
            })
            .collect::<Result<Vec<_>, Failure>>()
    })?;
    let mut grad_v = vec![0.0; p.velocity.len()];
    let mut traces = vec![];
    let mut grad_w = vec![];
    let mut misfit = 0.0;
    for (t, j, g, w) in per_shot {
        grad_v.iter_mut().zip(&g).for_each(|(a, b)| *a += b);
        traces.push(t);
        grad_w.push(w);
        misfit += j;
    }
    let sources = p.shots[0].sources.len();
    let grad_v = PyArray1::from_vec(py, p.fold(&grad_v)).reshape(p.shape.clone())?;
    let grad_w = array3(py, grad_w, [shots, sources, steps])?;
    if misfit_mode {
        let traces = array3(py, traces, [shots, receivers, steps])?;
        Ok((Some(traces), Some(misfit), grad_v, grad_w))
    } else {
        Ok((None, None, grad_v, grad_w))
    }
}
