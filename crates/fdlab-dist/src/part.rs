//! One rank's part of a stepper setup: the global setup sliced to its subdomain.

use crate::decomp::Subdomain;
use crate::error::Result;
use fdlab_solvers::physics::CpmlProfile;
use fdlab_solvers::{HeatSetup, PointSource, WaveSetup};

/// The values of a per-point array (x fastest, global shape `n`) inside `sub`; a one-value
/// (constant) array stays as it is.
pub fn slice(data: &[f64], n: [usize; 3], sub: &Subdomain) -> Vec<f64> {
    if data.len() == 1 {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(sub.cells());
    for k in 0..sub.n[2] {
        for j in 0..sub.n[1] {
            let row = sub.offset[0] + n[0] * (sub.offset[1] + j + n[1] * (sub.offset[2] + k));
            out.extend_from_slice(&data[row..row + sub.n[0]]);
        }
    }
    out
}

fn local(cell: [usize; 3], sub: &Subdomain) -> [usize; 3] {
    std::array::from_fn(|a| cell[a] - sub.offset[a])
}

/// The part of source `src` in a block whose local cell of a global one is `local` (`None`
/// outside the block): the points of a spread source that lie in the block, each adding its
/// weight there, so that the blocks together add the whole source. `None` when no point of
/// it lies in the block.
pub(crate) fn local_source(
    src: &PointSource,
    local: impl Fn([usize; 3]) -> Option<[usize; 3]>,
) -> Option<PointSource> {
    if src.spread.is_empty() {
        return Some(PointSource {
            cell: local(src.cell)?,
            ..src.clone()
        });
    }
    let spread: Vec<_> = src
        .spread
        .iter()
        .filter_map(|&(c, w)| Some((local(c)?, w)))
        .collect();
    Some(PointSource {
        cell: spread.first()?.0,
        spread,
        ..src.clone()
    })
}

/// Refuse receivers between grid points: their weighted sums would need the values of
/// several blocks.
pub(crate) fn refuse_spread_receivers(s: &WaveSetup) -> Result<()> {
    if (0..s.receivers.len()).any(|i| s.receiver_points(i).len() > 1) {
        return Err(crate::error::Error::Unsupported(
            "receivers between grid points on several processes or GPUs; put them on grid \
             points or run the case on one"
                .into(),
        ));
    }
    Ok(())
}

/// The heat setup of `sub`. Its boundary flag no longer matters: the halo exchange fills
/// every halo, the grid's edges included.
pub fn heat(s: &HeatSetup, sub: &Subdomain) -> HeatSetup {
    HeatSetup {
        n: sub.n,
        kappa: slice(&s.kappa, s.n, sub),
        initial: slice(&s.initial, s.n, sub),
        ..s.clone()
    }
}

/// The wave setup of `sub`: its material, fields, and the sources and receivers inside it
/// (receivers in their global order). Its CPML profiles, if any, are not the right ones: a
/// stepper of it takes [`cpml_profiles`] instead.
pub fn wave(s: &WaveSetup, sub: &Subdomain) -> Result<WaveSetup> {
    if s.density.is_some() {
        return Err(crate::error::Error::density_refused());
    }
    refuse_spread_receivers(s)?;
    Ok(WaveSetup {
        n: sub.n,
        velocity: slice(&s.velocity, s.n, sub),
        initial: slice(&s.initial, s.n, sub),
        previous: s.previous.as_ref().map(|p| slice(p, s.n, sub)),
        sources: s
            .sources
            .iter()
            .filter_map(|src| local_source(src, |c| sub.contains(c).then(|| local(c, sub))))
            .collect(),
        // Checked above: every receiver is its cell alone.
        receiver_spread: vec![],
        receivers: s
            .receivers
            .iter()
            .filter(|c| sub.contains(**c))
            .map(|c| local(*c, sub))
            .collect(),
        ..s.clone()
    })
}

/// The whole grid's CPML profiles sliced to `sub` (the layers lie at the whole grid's edges,
/// and their damping follows its largest velocity), or `None` without a CPML.
pub fn cpml_profiles(s: &WaveSetup, sub: &Subdomain) -> Result<Option<[CpmlProfile; 3]>> {
    let Some(global) = s.coefficients()?.cpml else {
        return Ok(None);
    };
    Ok(Some(std::array::from_fn(|a| {
        let p = &global[a];
        if a >= s.dim {
            return p.clone();
        }
        let r = sub.offset[a]..sub.offset[a] + sub.n[a];
        CpmlProfile {
            a: p.a[r.clone()].to_vec(),
            b: p.b[r.clone()].to_vec(),
            active: p.active[r].to_vec(),
        }
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_solvers::hicks::{spread, Edge};

    /// A spread source split at x = 20: each block keeps its own points with their weights,
    /// together all of them once; a source with no point in a block is not there.
    #[test]
    fn a_spread_source_is_split_over_the_blocks_it_touches() {
        let n = [40, 30, 1];
        let src = PointSource {
            cell: [20, 15, 0],
            f0: 0.1,
            t0: 15.0,
            amplitude: 2.0,
            spread: spread(&[19.6, 15.25], n, [Edge::Wall; 3]).unwrap(),
            wavelet: None,
        };
        let lo = |c: [usize; 3]| (c[0] < 20).then_some(c);
        let hi = |c: [usize; 3]| (c[0] >= 20).then(|| [c[0] - 20, c[1], c[2]]);
        let (a, b) = (
            local_source(&src, lo).unwrap(),
            local_source(&src, hi).unwrap(),
        );
        assert_eq!(a.spread.len() + b.spread.len(), src.spread.len());
        let mut back: Vec<_> = a.spread.clone();
        back.extend(b.spread.iter().map(|&(c, w)| ([c[0] + 20, c[1], c[2]], w)));
        back.sort_by_key(|p| (p.0[1], p.0[0]));
        let mut want = src.spread.clone();
        want.sort_by_key(|p| (p.0[1], p.0[0]));
        assert_eq!(back, want);
        assert_eq!((a.amplitude, b.f0), (2.0, 0.1));
        let far = |c: [usize; 3]| (c[0] >= 30).then_some(c);
        assert!(local_source(&src, far).is_none());
        // A single-cell source goes where its cell is.
        let one = PointSource {
            spread: vec![],
            ..src.clone()
        };
        assert_eq!(local_source(&one, hi).unwrap().cell, [0, 15, 0]);
        assert!(local_source(&one, lo).is_none());
    }

    #[test]
    fn receivers_between_grid_points_are_refused() {
        let fdlab_solvers::setup::Setup::Wave(mut s) =
            crate::cases::wave([20, 16, 1], 2, 4, fdlab_solvers::WaveBoundary::Periodic)
        else {
            panic!("not a wave setup");
        };
        assert!(refuse_spread_receivers(&s).is_ok());
        let c = s.receivers[0];
        s.receiver_spread = vec![vec![(c, 0.5), ([c[0] + 1, c[1], c[2]], 0.5)]];
        let e = refuse_spread_receivers(&s).unwrap_err().to_string();
        assert!(e.contains("receivers between grid points"), "{e}");
    }
}
