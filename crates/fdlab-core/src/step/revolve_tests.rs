//! The Revolve schedule against an exhaustive search, the closed form and a replay.

use super::*;
use std::collections::{HashMap, VecDeque};

/// The fewest forward steps over every possible sequence of actions (0-1 breadth-first
/// search over (working state, stored states, adjoint steps left)).
fn brute_force(n: usize, s: usize) -> u128 {
    type Node = (usize, u32, usize);
    let start: Node = (0, 0, n);
    let mut best: HashMap<Node, u128> = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        let cost = best[&node];
        let (cur, stored, left) = node;
        if left == 0 {
            return cost;
        }
        let mut next: Vec<(Node, u128)> = vec![];
        if cur + 1 < n {
            next.push(((cur + 1, stored, left), 1));
        }
        if (stored.count_ones() as usize) < s {
            next.push(((cur, stored | 1 << cur, left), 0));
        }
        for j in 0..n {
            if stored & 1 << j != 0 {
                next.push(((j, stored, left), 0));
                next.push(((cur, stored & !(1 << j), left), 0));
            }
        }
        if cur + 1 == left {
            next.push(((cur, stored, left - 1), 0));
        }
        for (m, c) in next {
            let total = cost + c;
            if best.get(&m).is_none_or(|&b| total < b) {
                best.insert(m, total);
                if c == 0 {
                    queue.push_front(m);
                } else {
                    queue.push_back(m);
                }
            }
        }
    }
    unreachable!("the last adjoint step is always reachable with one slot")
}

/// Replays `plan` with "state = step index": checks slots, working states and the order of
/// the adjoint steps; returns the forward steps run.
fn replay(plan: &[Action], n: usize, s: usize) -> u128 {
    let mut cur = 0usize;
    let mut slots: Vec<Option<usize>> = vec![None; s];
    let mut want = n;
    let mut forward = 0;
    for a in plan {
        match *a {
            Action::Advance { to } => {
                assert!(to > cur && to < n, "advance {cur} → {to}");
                forward += (to - cur) as u128;
                cur = to;
            }
            Action::Store { slot, step } => {
                assert_eq!(step, cur);
                slots[slot] = Some(cur);
            }
            Action::Restore { slot, step } => {
                assert_eq!(slots[slot], Some(step));
                cur = step;
            }
            Action::Adjoint { step } => {
                assert_eq!(step, cur, "adjoint of step {step} from state {cur}");
                assert_eq!(step + 1, want, "adjoint steps out of order");
                want = step;
            }
        }
    }
    assert_eq!(want, 0, "not every adjoint step was taken");
    assert_eq!(
        plan.iter()
            .filter(|a| matches!(a, Action::Adjoint { .. }))
            .count(),
        n
    );
    forward
}

#[test]
fn schedules_are_optimal_against_an_exhaustive_search() {
    for n in 1..=9 {
        for s in 1..=4 {
            let plan = schedule(n, s).unwrap();
            let run = replay(&plan, n, s);
            let best = brute_force(n, s);
            assert_eq!(run, best, "N = {n}, s = {s}");
            assert_eq!(forward_steps(&plan), best);
            assert_eq!(optimal_forward_steps(n, s), Some(best), "N = {n}, s = {s}");
        }
    }
}

#[test]
fn long_schedules_meet_the_closed_form() {
    for (n, s) in [(40, 3), (100, 5), (1000, 10), (997, 2), (64, 64), (5000, 1)] {
        let plan = schedule(n, s).unwrap();
        let run = replay(&plan, n, s);
        assert_eq!(Some(run), optimal_forward_steps(n, s), "N = {n}, s = {s}");
    }
    // Known values: one slot is quadratic, N − 1 slots run each step once more.
    assert_eq!(optimal_forward_steps(10, 1), Some(45));
    assert_eq!(optimal_forward_steps(10, 9), Some(9));
    assert_eq!(optimal_forward_steps(40, 3), Some(130));
    let plan = schedule(40, 3).unwrap();
    assert!((recompute_factor(&plan) - 3.25).abs() < 1e-15);
}

#[test]
fn no_slot_is_refused() {
    assert_eq!(schedule(5, 0), Err(RevolveError::NoSlots { steps: 5 }));
    assert_eq!(schedule(0, 0), Ok(vec![]));
    assert_eq!(optimal_forward_steps(5, 0), None);
}
