//! Checkpoints of a split run (CPU ranks or GPU slabs): the whole grid's state, part for part
//! what a one-process stepper on the same backend saves, gathered on rank 0 (which writes it);
//! and such a state, from a run on any number of processes, cut into the blocks of this one. Also the agreement on when to stop,
//! so that every rank checkpoints at the same step.

use crate::error::{Error, Result};
use crate::state::{decode, encode, interior, place, values_per_point, window};
use crate::stepper::DistStepper;
use crate::transport::tag;
use fdlab_solvers::stepper::StatePart;

/// The state part that holds the receiver traces (one series per receiver, `step` samples
/// each, receivers in order); every other part is a padded per-point array.
pub(crate) const TRACES: &str = "traces";

fn refused(detail: String) -> fdlab_solvers::Error {
    fdlab_solvers::Error::Invalid(format!("checkpoint state: {detail}"))
}

/// The whole grid's state on rank 0 (an empty list elsewhere); collective.
pub(crate) fn save(st: &DistStepper) -> Result<Vec<StatePart>> {
    let (g, l) = st.layouts;
    let d = &st.decomposition;
    let mut out = vec![];
    for (name, bytes) in st.inner.save_state()? {
        if name == TRACES {
            // Rank 0 holds every receiver's trace, gathered after each advance.
            let all: Vec<f64> = st.traces.iter().flatten().copied().collect();
            out.push((name, encode(&all)));
            continue;
        }
        let values = decode(&bytes);
        let vp = values_per_point(&l, values.len()).ok_or_else(|| Error::Transport {
            rank: st.rank,
            detail: format!("state part {name} is not a padded array of the block"),
        })?;
        let counts: Vec<usize> = (0..d.ranks())
            .map(|r| d.subdomain(r).cells() * vp)
            .collect();
        let mine = interior(&l, vp, &values);
        if let Some(all) = st.gather(&mine, &counts, tag::STATE)? {
            let mut whole = vec![0.0; g.len() * vp];
            let mut at = 0;
            for (r, &c) in counts.iter().enumerate() {
                place(&g, vp, &d.subdomain(r), &all[at..at + c], &mut whole);
                at += c;
            }
            out.push((name, encode(&whole)));
        }
    }
    Ok(if st.rank == 0 { out } else { vec![] })
}

/// Take the whole grid's state `parts` at `step` (from a run on any number of processes)
/// and restore this rank's block of it.
pub(crate) fn restore(
    st: &mut DistStepper,
    step: u64,
    parts: &[StatePart],
) -> fdlab_solvers::Result<()> {
    let (g, l) = st.layouts;
    let sub = st.decomposition.subdomain(st.rank);
    let steps = step as usize;
    let mut local = Vec::with_capacity(parts.len());
    for (name, bytes) in parts {
        if name == TRACES {
            let all = decode(bytes);
            let n = st.owners.len();
            if all.len() != n * steps || bytes.len() != 8 * all.len() {
                return Err(refused(format!(
                    "{TRACES} holds {} bytes, not {n} receivers × {steps} steps",
                    bytes.len()
                )));
            }
            let trace = |i: usize| all[i * steps..(i + 1) * steps].to_vec();
            let mine: Vec<f64> = (0..n)
                .filter(|&i| st.owners[i] == st.rank)
                .flat_map(trace)
                .collect();
            if st.rank == 0 {
                st.traces = (0..n).map(trace).collect();
            }
            local.push((name.clone(), encode(&mine)));
            continue;
        }
        let vp = (bytes.len().is_multiple_of(8))
            .then(|| values_per_point(&g, bytes.len() / 8))
            .flatten()
            .ok_or_else(|| {
                refused(format!(
                    "part {name} ({} bytes) is not a padded array of this {:?} grid",
                    bytes.len(),
                    st.decomposition.shape()
                ))
            })?;
        if st.whole_state {
            local.push((name.clone(), bytes.clone()));
        } else {
            local.push((name.clone(), window(&g, &l, vp, &sub, bytes)));
        }
    }
    st.inner.restore_state(step, &local)?;
    st.gathered = steps;
    Ok(())
}

/// The stop every rank makes: rank 0 gathers each rank's `asked` (a signal number, 0 for
/// none) and sends every rank the first non-zero one in rank order; collective.
pub(crate) fn agree_stop(st: &DistStepper, asked: i32) -> Result<i32> {
    let ranks = st.decomposition.ranks();
    let all = st.gather(&[f64::from(asked)], &vec![1; ranks], tag::STOP)?;
    let mut t = st.lock()?;
    match all {
        Some(all) => {
            let agreed = all.iter().copied().find(|&v| v != 0.0).unwrap_or(0.0);
            for r in 1..ranks {
                t.send_recv(Some((r, &[agreed])), None, tag::STOP)?;
            }
            Ok(agreed as i32)
        }
        None => {
            let mut agreed = [0.0];
            t.send_recv(None, Some((0, &mut agreed)), tag::STOP)?;
            Ok(agreed[0] as i32)
        }
    }
}
