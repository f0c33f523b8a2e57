//! The whole reverse sweep of a time loop with binomial checkpointing: forward states
//! recomputed from a few stored ones by a [`revolve`] schedule, one gradient step per step.

use super::{AdjointStep, Gradient};
use crate::step::run_step;
use fdlab_core::step::revolve::{self, Action};
use fdlab_core::step::{Slots, StepError};
use fdlab_core::{Field, Grid, Scalar};

/// What [`AdjointStep::checkpointed_gradient`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Reversed<T> {
    /// `∂J/∂k` for every coefficient field.
    pub gradient: Gradient,
    /// Per step, per declared parameter, `∂J/∂p` of that step (as
    /// [`AdjointStep::gradient_step`] returns it).
    pub params: Vec<Vec<f64>>,
    /// `∂J/∂` of the slots before step 0 (the initial state).
    pub adjoint: Slots<Field<T>>,
    /// Forward steps the schedule ran ([`revolve::optimal_forward_steps`]).
    pub forward_steps: u128,
}

impl AdjointStep {
    /// The gradient of a misfit `J` over `steps` steps from the forward slots `start`,
    /// keeping at most `slots` copies of the slots (besides the working one and the
    /// adjoint): the actions of [`revolve::schedule`]`(steps, slots)`, forward steps by
    /// [`run_step`], one [`AdjointStep::gradient_step`] per step in reverse.
    ///
    /// `params(n)` gives step `n`'s parameter values; `inject(n, adjoint)` adds
    /// `∂J/∂(slots after step n)` to the adjoint slots (e.g. the residuals at the receivers,
    /// recorded by the forward run that evaluated `J`). The result is bit for bit the one of
    /// storing every step.
    pub fn checkpointed_gradient<T: Scalar>(
        &self,
        grid: &Grid,
        start: &Slots<Field<T>>,
        steps: usize,
        slots: usize,
        params: impl Fn(usize) -> Vec<(String, f64)>,
        mut inject: impl FnMut(usize, &mut Slots<Field<T>>),
    ) -> Result<Reversed<T>, StepError> {
        let plan = revolve::schedule(steps, slots).map_err(|e| StepError::Params {
            detail: e.to_string(),
        })?;
        let mut adjoint = Slots::new(self.description(), |_, _| {
            Ok::<_, StepError>(Field::zeros(grid))
        })?;
        let mut gradient = Gradient::zeros(self.description(), grid);
        let mut dparams = vec![vec![]; steps];
        let (mut cur, mut at) = (start.clone(), 0usize);
        let mut stored: Vec<Option<Slots<Field<T>>>> = vec![None; slots];
        for action in &plan {
            match *action {
                Action::Advance { to } => {
                    while at < to {
                        let p = params(at);
                        let p: Vec<(&str, f64)> = p.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                        run_step(self.description(), grid, &mut cur, &p)?;
                        at += 1;
                    }
                }
                Action::Store { slot, .. } => stored[slot] = Some(cur.clone()),
                Action::Restore { slot, step } => {
                    if let Some(s) = &stored[slot] {
                        cur.clone_from(s);
                        at = step;
                    }
                }
                Action::Adjoint { step } => {
                    inject(step, &mut adjoint);
                    let p = params(step);
                    let p: Vec<(&str, f64)> = p.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                    dparams[step] =
                        self.gradient_step(grid, &cur, &p, &mut adjoint, &mut gradient)?;
                }
            }
        }
        Ok(Reversed {
            gradient,
            params: dparams,
            adjoint,
            forward_steps: revolve::forward_steps(&plan),
        })
    }
}
