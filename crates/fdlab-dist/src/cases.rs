//! Small random heat and wave setups for the decomposition checks: a split run of any of them
//! must give the single-domain answer.

use fdlab_solvers::physics::{heat_dt_limit, wave_dt_limit};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::{HeatSetup, PointSource, WaveBoundary, WaveSetup};

/// Values in [0.5, 1.5) from a fixed-seed linear congruential generator.
pub fn noise(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            0.5 + (x >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

fn cells(n: [usize; 3]) -> usize {
    n.iter().product()
}

/// A heat setup of `n` points with random diffusivity (per point when `varying`, else one
/// value) and initial field, at half the stable time step.
pub fn heat(n: [usize; 3], dim: usize, order: usize, periodic: bool, varying: bool) -> Setup {
    let spacing = [0.1, 0.12, 0.09];
    let kappa = if varying {
        noise(cells(n), 1)
    } else {
        vec![0.8]
    };
    let kmax = kappa.iter().cloned().fold(0.0, f64::max);
    let dt = 0.5 * heat_dt_limit(order, &spacing[..dim], kmax).expect("a valid order");
    Setup::Heat(HeatSetup {
        n,
        dim,
        spacing,
        order,
        dt,
        kappa,
        periodic,
        initial: noise(cells(n), 2),
    })
}

/// A wave setup of `n` points with random velocity and fields, a Ricker source and three
/// receivers, at half the stable time step.
pub fn wave(n: [usize; 3], dim: usize, order: usize, boundary: WaveBoundary) -> Setup {
    let spacing = [10.0, 12.0, 9.0];
    let velocity: Vec<f64> = noise(cells(n), 3).iter().map(|v| 1000.0 * v).collect();
    let cmax = velocity.iter().cloned().fold(0.0, f64::max);
    let dt = 0.5 * wave_dt_limit(order, &spacing[..dim], cmax).expect("a valid order");
    let at = |f: [f64; 3]| std::array::from_fn(|a| ((n[a] as f64 * f[a]) as usize).min(n[a] - 1));
    Setup::Wave(WaveSetup {
        n,
        dim,
        spacing,
        order,
        dt,
        velocity,
        density: None,
        boundary,
        initial: noise(cells(n), 4),
        previous: Some(noise(cells(n), 5)),
        sources: vec![PointSource {
            cell: at([0.3, 0.6, 0.4]),
            f0: 1.0 / (20.0 * dt),
            t0: 10.0 * dt,
            amplitude: 1e4,
            ..Default::default()
        }],
        receiver_spread: vec![],
        receivers: vec![
            at([0.9, 0.1, 0.8]),
            at([0.1, 0.9, 0.2]),
            at([0.5, 0.5, 0.5]),
        ],
    })
}
