//! The misfit, its gradient through the checkpointed reverse sweep, and the memory plan.

use crate::error::{Error, Result};
use crate::model::{Model, IMAGE};
use fdlab_core::step::physics::{AcousticVd, Leapfrog};
use fdlab_cpu::step::AdjointStep;
use std::time::Instant;

/// Where a long sweep is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// `done` of `total` steps of the forward run that evaluates the misfit.
    Forward {
        /// Steps run.
        done: usize,
        /// Steps in all.
        total: usize,
    },
    /// `done` of `total` adjoint steps of the reverse sweep (recomputations in between).
    Adjoint {
        /// Adjoint steps taken.
        done: usize,
        /// Adjoint steps in all.
        total: usize,
    },
}

/// How many checkpoints a sweep keeps and what it holds in memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryPlan {
    /// Checkpoint slots (copies of the slots) the Revolve schedule may keep.
    pub checkpoints: usize,
    /// Bytes of one checkpoint.
    pub checkpoint_bytes: u64,
    /// Bytes of everything else: the working and adjoint slots, the copy a gradient step
    /// keeps, the coefficient gradients, the traces and residuals.
    pub fixed_bytes: u64,
    /// `fixed_bytes + checkpoints · checkpoint_bytes`: the estimate held against the budget.
    pub total_bytes: u64,
}

/// The most checkpoints a sweep of `steps` steps can use: with `steps − 1` every state is
/// stored and no step runs twice.
fn useful_checkpoints(steps: usize) -> usize {
    steps.saturating_sub(1).max(1)
}

/// The checkpoints of a sweep of `model` within `budget_bytes`: `asked` when given (capped at
/// the `steps − 1` that store every state; refused when it does not fit), else every state
/// stored when that fits, else the most that fit. Refused when not even one fits.
pub fn plan_memory(model: &Model, asked: Option<usize>, budget_bytes: u64) -> Result<MemoryPlan> {
    let per = model.state_bytes();
    let cells = model.grid().len() as u64;
    let traces = 2 * (model.receivers().len() * model.steps()) as u64 * 8;
    let fixed = 3 * per + model.coefficient_count() as u64 * cells * 8 + traces;
    let gb = |b: u64| b as f64 / 1e9;
    let most = useful_checkpoints(model.steps());
    let plan = |k: usize| MemoryPlan {
        checkpoints: k,
        checkpoint_bytes: per,
        fixed_bytes: fixed,
        total_bytes: fixed.saturating_add(per.saturating_mul(k as u64)),
    };
    let refuse = |what: String, k: usize| Error::Memory {
        what,
        needed_gb: gb(plan(k).total_bytes),
        budget_gb: gb(budget_bytes),
        slot_gb: gb(per),
    };
    match asked {
        Some(0) => Err(Error::Usage(
            "--checkpoints 0 leaves no slot for the initial state; give at least 1".into(),
        )),
        Some(k) => {
            let k = k.min(most);
            if plan(k).total_bytes > budget_bytes {
                return Err(refuse(format!("a sweep with {k} checkpoints"), k));
            }
            Ok(plan(k))
        }
        None => {
            let fit = budget_bytes.saturating_sub(fixed) / per.max(1);
            let k = (fit.min(most as u64)) as usize;
            if k == 0 {
                return Err(refuse("a sweep with 1 checkpoint".into(), 1));
            }
            Ok(plan(k))
        }
    }
}

/// `J = ½ Σ_n Σ_r (d_{n,r} − d^obs_{n,r})²` and the residuals `d − d^obs` (receivers ×
/// steps) of `traces` against `observed`, both receivers × steps.
pub fn misfit(traces: &[Vec<f64>], observed: &[Vec<f64>]) -> Result<(f64, Vec<Vec<f64>>)> {
    let same = traces.len() == observed.len()
        && traces.iter().zip(observed).all(|(a, b)| a.len() == b.len());
    if !same {
        return Err(Error::Usage(format!(
            "the observed data hold {} traces of {} samples, the model records {} of {}; \
             give data of the case's receivers and steps",
            observed.len(),
            observed.first().map_or(0, Vec::len),
            traces.len(),
            traces.first().map_or(0, Vec::len)
        )));
    }
    let residual: Vec<Vec<f64>> = traces
        .iter()
        .zip(observed)
        .map(|(d, o)| d.iter().zip(o).map(|(a, b)| a - b).collect())
        .collect();
    let j = 0.5 * residual.iter().flatten().map(|r| r * r).sum::<f64>();
    Ok((j, residual))
}

/// What [`gradient`] returns. Arrays over the grid are x fastest.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// `J = ½ Σ_n Σ_r (d_{n,r} − d^obs_{n,r})²`, `n` over the steps, `r` over the receivers
    /// (no scaling by Δt or the number of samples), in (pressure unit)².
    pub misfit: f64,
    /// `d − d^obs`, receivers × steps.
    pub residual: Vec<Vec<f64>>,
    /// `∂J/∂c` at every grid point: `2cΔt² ∂J/∂(c²Δt²)` (constant density) or
    /// `2ρc ∂J/∂K` with `K = ρc²` (variable density, ρ fixed); in J per (m/s).
    pub velocity_gradient: Vec<f64>,
    /// The image `I(x) = Σ_{n=0}^{N−1} pⁿ(x) p̄ⁿ⁺¹(x)`: `pⁿ` the forward pressure after `n`
    /// steps (`p⁰` the initial field), `p̄ⁿ⁺¹ = ∂J/∂pⁿ⁺¹` the adjoint pressure, the zero-lag
    /// cross-correlation of the two (the gradient of `J` with respect to a term `image · pⁿ`
    /// added to the update of `pⁿ⁺¹`).
    pub image: Vec<f64>,
    /// `∂J/∂w_i(n)`, sources × steps: `w_i(n) = amplitude_i · s(nΔt)` the wavelet sample
    /// source `i` injects at step `n` (it adds `Δt² w_i(n)/ΔV` to the new pressure).
    pub source_gradient: Vec<Vec<f64>>,
    /// Checkpoint slots used.
    pub checkpoints: usize,
    /// Forward steps the reverse sweep ran to recompute states (besides the forward run of
    /// the misfit and the step each gradient step re-runs inside).
    pub forward_steps: u128,
    /// `forward_steps / steps`.
    pub recompute_factor: f64,
    /// Seconds of the forward run.
    pub forward_seconds: f64,
    /// Seconds of the reverse sweep.
    pub adjoint_seconds: f64,
}

/// What [`vjp`] returns: the derivatives of `J = Σ_n Σ_r g_{n,r} d_{n,r}` for a given
/// cotangent `g` (receivers × steps) of the traces `d`. Arrays over the grid are x fastest.
#[derive(Debug, Clone, PartialEq)]
pub struct Vjp {
    /// `∂J/∂c` at every grid point (see [`Sweep::velocity_gradient`]).
    pub velocity_gradient: Vec<f64>,
    /// The image (see [`Sweep::image`]).
    pub image: Vec<f64>,
    /// `∂J/∂w_i(n)`, sources × steps (see [`Sweep::source_gradient`]).
    pub source_gradient: Vec<Vec<f64>>,
    /// Forward steps the reverse sweep ran to recompute states.
    pub forward_steps: u128,
}

/// The vector-Jacobian product of the traces of `model`: given `cotangent = ∂J/∂d`
/// (receivers × steps, sample `n` after step `n` as [`Model::forward`] records it), the
/// reverse sweep with `checkpoints` slots (≥ 1) gives `∂J/∂c`, the image and `∂J/∂w_i(n)`.
/// No forward run is needed besides the one the Revolve schedule recomputes from the start.
/// `progress` is told after each adjoint step.
pub fn vjp(
    model: &Model,
    cotangent: &[Vec<f64>],
    checkpoints: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vjp> {
    let steps = model.steps();
    let receivers = model.receivers().to_vec();
    let same = cotangent.len() == receivers.len() && cotangent.iter().all(|c| c.len() == steps);
    if !same {
        return Err(Error::Usage(format!(
            "the cotangent holds {} traces of {} samples, the model records {} of {steps}; \
             give one value per receiver and step",
            cotangent.len(),
            cotangent.first().map_or(0, Vec::len),
            receivers.len(),
        )));
    }
    let adjoint = AdjointStep::new(model.description())?;
    let mut done = 0;
    let total = steps;
    let reversed = adjoint.checkpointed_gradient(
        model.grid(),
        model.start(),
        steps,
        checkpoints.max(1),
        |n| model.params(n),
        |n, adj| {
            // ∂J/∂(p after step n) = the cotangent at the receivers, spread by their weights.
            if let Some(p) = adj.get_mut(Leapfrog::P, 0) {
                let p = p.as_mut_slice();
                for (r, points) in cotangent.iter().zip(&receivers) {
                    for &(c, w) in points {
                        p[c] += w * r[n];
                    }
                }
            }
            done += 1;
            progress(Progress::Adjoint { done, total });
        },
    )?;
    let g = &reversed.gradient;
    let missing = |name: &str| Error::Usage(format!("no gradient of {name}"));
    let c = model.velocity();
    let dt = model.setup().dt;
    let velocity_gradient: Vec<f64> = match model.density() {
        None => {
            let gk = g
                .get(Leapfrog::C2DT2)
                .ok_or_else(|| missing(Leapfrog::C2DT2))?;
            gk.iter()
                .zip(c)
                .map(|(g, c)| 2.0 * c * dt * dt * g)
                .collect()
        }
        Some(rho) => {
            let gk = g.get(AcousticVd::K).ok_or_else(|| missing(AcousticVd::K))?;
            gk.iter()
                .zip(c)
                .zip(rho)
                .map(|((g, c), r)| 2.0 * r * c * g)
                .collect()
        }
    };
    let image = g.get(IMAGE).ok_or_else(|| missing(IMAGE))?.to_vec();
    let names = &model.description().params;
    let scale = model.source_scale();
    // ∂J/∂w_i(n) = Σ over the source's parameters of weight · ∂J/∂param · Δt²/ΔV.
    let source_gradient = model
        .source_params()
        .iter()
        .map(|params| {
            let slots = params
                .iter()
                .map(|(name, w)| {
                    let k = names.iter().position(|p| p == name);
                    Ok((k.ok_or_else(|| missing(name))?, *w))
                })
                .collect::<Result<Vec<(usize, f64)>>>()?;
            Ok(reversed
                .params
                .iter()
                .map(|p| slots.iter().map(|&(k, w)| w * p[k]).sum::<f64>() * scale)
                .collect())
        })
        .collect::<Result<Vec<Vec<f64>>>>()?;
    Ok(Vjp {
        velocity_gradient,
        image,
        source_gradient,
        forward_steps: reversed.forward_steps,
    })
}

/// The misfit of `model` against `observed` (receivers × steps) and its gradients, with
/// `checkpoints` slots (≥ 1; `steps − 1` stores every state): the forward run, the residual
/// `d − d^obs`, and [`vjp`] of it. `progress` is told after each forward step and each
/// adjoint step.
pub fn gradient(
    model: &Model,
    observed: &[Vec<f64>],
    checkpoints: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Sweep> {
    let steps = model.steps();
    let t = Instant::now();
    let total = steps;
    let traces = model.forward(&mut |done| progress(Progress::Forward { done, total }))?;
    let (misfit, residual) = misfit(&traces, observed)?;
    let forward_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let v = vjp(model, &residual, checkpoints, progress)?;
    Ok(Sweep {
        misfit,
        residual,
        velocity_gradient: v.velocity_gradient,
        image: v.image,
        source_gradient: v.source_gradient,
        checkpoints,
        forward_steps: v.forward_steps,
        recompute_factor: v.forward_steps as f64 / steps.max(1) as f64,
        forward_seconds,
        adjoint_seconds: t.elapsed().as_secs_f64(),
    })
}
