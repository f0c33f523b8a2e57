//! Binomial checkpointing (Griewank–Walther "Revolve"): the order in which to recompute,
//! store and restore forward states so that the adjoint steps of `N` time steps run in
//! reverse with `s` stored states and the fewest forward steps.
//!
//! The model: states are numbered `0..=N` (state `n` is the input of step `n`). One working
//! state is held besides the `s` checkpoint slots; it starts as state 0. The adjoint of step
//! `n` needs the working state to be state `n` (the adjoint step recomputes the inside of
//! step `n` itself; that is not counted here). [`Action::Advance`] runs forward steps, the
//! only cost. With `s` slots the fewest forward steps are
//! `t(N, s) = r·N − β(s+1, r−1)`, where `β(s, r) = C(s+r, s)` and `r` is the smallest
//! integer with `β(s, r) ≥ N` (Griewank 1992); [`optimal_forward_steps`] computes it and
//! [`schedule`] attains it.
//!
//! ```
//! use fdlab_core::step::revolve::{forward_steps, optimal_forward_steps, schedule, Action};
//! let plan = schedule(40, 3).unwrap();
//! assert_eq!(forward_steps(&plan), 130);
//! assert_eq!(optimal_forward_steps(40, 3), Some(130));
//! assert_eq!(plan.last(), Some(&Action::Adjoint { step: 0 }));
//! ```

/// One action of a checkpointing schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Run forward steps from the working state up to state `to` (`to − current` steps).
    Advance {
        /// The state reached.
        to: usize,
    },
    /// Copy the working state (state `step`) into checkpoint slot `slot`.
    Store {
        /// The slot, `0..s`.
        slot: usize,
        /// The state stored (the working state's number).
        step: usize,
    },
    /// Make the working state a copy of slot `slot`, which holds state `step`.
    Restore {
        /// The slot.
        slot: usize,
        /// The state it holds.
        step: usize,
    },
    /// Take the adjoint step of step `step`; the working state is state `step`.
    Adjoint {
        /// The step reversed; they come in the order `N−1, …, 0`.
        step: usize,
    },
}

/// Why no schedule was made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevolveError {
    /// No checkpoint slot to hold the initial state.
    #[error("checkpointing {steps} steps needs at least one slot; give slots ≥ 1")]
    NoSlots {
        /// The number of steps asked for.
        steps: usize,
    },
}

/// `β(s, r) = C(s + r, s)`, saturating; 0 for `r < 0`.
fn beta(s: usize, r: i64) -> u128 {
    if r < 0 {
        return 0;
    }
    let (s, r) = (s as u128, r as u128);
    let k = s.min(r);
    let mut out: u128 = 1;
    for i in 1..=k {
        // C(n, i) = C(n, i−1) · (n − i + 1) / i stays integral at every step.
        out = match out.checked_mul(s + r - i + 1) {
            Some(x) => x / i,
            None => return u128::MAX,
        };
    }
    out
}

/// The repetition number: the smallest `r` with `β(s, r) ≥ n` (`s ≥ 1`, `n ≥ 1`).
fn repetitions(n: usize, s: usize) -> i64 {
    let mut r = 0;
    while beta(s, r) < n as u128 {
        r += 1;
    }
    r
}

/// The fewest forward steps that reverse `steps` steps with `slots` checkpoint slots (the
/// closed form of the module's documentation), or `None` without a slot.
pub fn optimal_forward_steps(steps: usize, slots: usize) -> Option<u128> {
    if steps <= 1 {
        return Some(0);
    }
    if slots == 0 {
        return None;
    }
    let r = repetitions(steps, slots);
    Some(r as u128 * steps as u128 - beta(slots + 1, r - 1))
}

/// The optimal schedule for reversing `steps` steps with `slots` checkpoint slots: it stores
/// state 0 in slot 0, never holds more than `slots` states, takes the adjoint steps
/// `steps−1, …, 0` once each, and advances exactly [`optimal_forward_steps`] steps.
pub fn schedule(steps: usize, slots: usize) -> Result<Vec<Action>, RevolveError> {
    if steps == 0 {
        return Ok(vec![]);
    }
    if slots == 0 {
        return Err(RevolveError::NoSlots { steps });
    }
    let mut out = vec![Action::Store { slot: 0, step: 0 }];
    reverse(0, steps, slots, 0, &mut out);
    Ok(out)
}

/// Reverses steps `a..a+l`: the working state is state `a`, also held in slot `slot`;
/// `s` slots (that one included) may be used, the others above `slot`.
fn reverse(a: usize, l: usize, s: usize, slot: usize, out: &mut Vec<Action>) {
    if l == 1 {
        out.push(Action::Adjoint { step: a });
        return;
    }
    let m = split(l, s);
    out.push(Action::Advance { to: a + m });
    if l - m == 1 {
        out.push(Action::Adjoint { step: a + m });
    } else {
        out.push(Action::Store {
            slot: slot + 1,
            step: a + m,
        });
        reverse(a + m, l - m, s - 1, slot + 1, out);
    }
    out.push(Action::Restore { slot, step: a });
    reverse(a, m, s, slot, out);
}

/// The length of the first advance for `l ≥ 2` steps and `s ≥ 1` slots: any `m` with
/// `β(s, r−2) ≤ m ≤ β(s, r−1)` and `β(s−1, r−1) ≤ l − m ≤ β(s−1, r)` attains the optimum
/// (the costs of the two parts add up to `t(l, s)`); this takes the largest such `m`.
fn split(l: usize, s: usize) -> usize {
    if s == 1 {
        return l - 1;
    }
    let r = repetitions(l, s);
    let l128 = l as u128;
    let lo = [beta(s, r - 2), l128.saturating_sub(beta(s - 1, r)), 1]
        .into_iter()
        .max()
        .unwrap_or(1);
    let hi = [
        beta(s, r - 1),
        l128.saturating_sub(beta(s - 1, r - 1)),
        l128 - 1,
    ]
    .into_iter()
    .min()
    .unwrap_or(1);
    // The two ranges always meet (β(s, r) = β(s, r−1) + β(s−1, r)); fall back to the
    // smallest admissible advance if rounding of saturated values ever made them miss.
    hi.max(lo).min(l128 - 1) as usize
}

/// Forward steps a schedule runs (the sum of its advances), starting from state 0.
pub fn forward_steps(schedule: &[Action]) -> u128 {
    let mut at = 0usize;
    let mut total = 0u128;
    for a in schedule {
        match *a {
            Action::Advance { to } => {
                total += to.saturating_sub(at) as u128;
                at = to;
            }
            Action::Restore { step, .. } => at = step,
            _ => {}
        }
    }
    total
}

/// Forward steps per time step: [`forward_steps`] divided by the number of steps reversed
/// (1 means each step is run once more; with `N − 1` slots it is `(N − 1)/N`).
pub fn recompute_factor(schedule: &[Action]) -> f64 {
    let steps = schedule
        .iter()
        .filter(|a| matches!(a, Action::Adjoint { .. }))
        .count();
    if steps == 0 {
        0.0
    } else {
        forward_steps(schedule) as f64 / steps as f64
    }
}

#[cfg(test)]
#[path = "revolve_tests.rs"]
mod tests;
