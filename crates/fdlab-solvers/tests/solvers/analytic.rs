//! Analytic checks of the CPU steppers: Fourier modes, Green's functions and CPML absorption.

use fdlab_solvers::physics::{heat_dt_limit, ricker, second_symbol, second_weights, wave_dt_limit};
use fdlab_solvers::{HeatCpu, HeatSetup, PointSource, Stepper, WaveBoundary, WaveCpu, WaveSetup};
use std::f64::consts::PI;

fn mode(n: [usize; 3], h: f64, k: [f64; 3]) -> Vec<f64> {
    let mut v = Vec::new();
    for kk in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let x = [i as f64 * h, j as f64 * h, kk as f64 * h];
                v.push((0..3).map(|a| (k[a] * x[a]).cos()).product());
            }
        }
    }
    v
}

fn heat_setup(
    n: [usize; 3],
    dim: usize,
    h: f64,
    order: usize,
    dt: f64,
    init: Vec<f64>,
) -> HeatSetup {
    HeatSetup {
        n,
        dim,
        spacing: [h; 3],
        order,
        dt,
        kappa: vec![0.7],
        periodic: true,
        initial: init,
    }
}

#[test]
fn heat_mode_decays_by_the_discrete_factor() {
    let (n, h, order) = ([32, 16, 1], 1.0, 4);
    let k = [2.0 * PI * 2.0 / 32.0, 2.0 * PI / 16.0, 0.0];
    let w = second_weights(order, h).unwrap();
    let lambda = second_symbol(&w, k[0], h) + second_symbol(&w, k[1], h);
    // Small enough that the mode keeps ~10% after 1000 steps: rounding noise in slower modes
    // (the mean never decays) must stay far below it.
    let dt = 0.04 * heat_dt_limit(order, &[h, h], 0.7).unwrap();
    let u0 = mode(n, h, k);
    let mut s = HeatCpu::<f64>::new(&heat_setup(n, 2, h, order, dt, u0.clone())).unwrap();
    s.advance(1000).unwrap();
    let g = (1.0 - dt * 0.7 * lambda).powi(1000);
    let u = s.field().unwrap();
    let scale = g * u0.iter().cloned().fold(0.0, f64::max);
    let err = u
        .iter()
        .zip(&u0)
        .map(|(a, b)| (a - g * b).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "heat mode: relative error {:.2e} after 1000 steps",
        err / scale
    );
    assert!(err / scale < 1e-10, "relative error {:e}", err / scale);
}

/// Measured decay rate of the mode cos(2πx) on [0, 1) with `n` points, relative error to 4π²κ.
fn heat_rate_error(n: usize, order: usize, dt: f64, t_end: f64) -> f64 {
    let h = 1.0 / n as f64;
    let k = [2.0 * PI, 0.0, 0.0];
    let steps = (t_end / dt).round() as usize;
    let u0 = mode([n, 4, 1], h, k);
    let mut s = HeatCpu::<f64>::new(&heat_setup([n, 4, 1], 2, h, order, dt, u0)).unwrap();
    s.advance(steps).unwrap();
    let rate = -(s.field().unwrap()[0]).ln() / (steps as f64 * dt);
    let exact = 0.7 * 4.0 * PI * PI;
    (rate - exact).abs() / exact
}

#[test]
fn heat_decay_rate_converges_at_the_scheme_order() {
    for order in [2usize, 4] {
        // dt ∝ h^order keeps the first-order time error at the spatial order.
        let e: Vec<f64> = [8usize, 16, 32]
            .iter()
            .map(|&n| {
                let h = 1.0 / n as f64;
                heat_rate_error(n, order, 0.02 * h.powi(order as i32), 0.002)
            })
            .collect();
        eprintln!(
            "heat rate errors, order {order}, n = 8, 16, 32: {:?}",
            e.iter().map(|v| format!("{v:.3e}")).collect::<Vec<_>>()
        );
        for w in e.windows(2) {
            let p = (w[0] / w[1]).log2();
            assert!(
                (p - order as f64).abs() < 0.3,
                "order {order}: errors {e:?}, observed {p}"
            );
        }
    }
    // Time: forward Euler is first order (8th-order space makes the spatial error negligible).
    let e: Vec<f64> = [4e-5, 2e-5, 1e-5]
        .iter()
        .map(|&dt| heat_rate_error(32, 8, dt, 0.02))
        .collect();
    eprintln!(
        "heat rate errors, dt halved: {:?}",
        e.iter().map(|v| format!("{v:.3e}")).collect::<Vec<_>>()
    );
    for w in e.windows(2) {
        let p = (w[0] / w[1]).log2();
        assert!((p - 1.0).abs() < 0.05, "time: errors {e:?}, observed {p}");
    }
}

#[test]
fn heat_fused_matches_reference_on_odd_3d_grid() {
    let n = [13, 9, 7];
    let len = n[0] * n[1] * n[2];
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let init: Vec<f64> = (0..len).map(|_| rnd()).collect();
    let kappa: Vec<f64> = (0..len).map(|_| 0.5 + rnd()).collect();
    for periodic in [true, false] {
        let mut st = heat_setup(n, 3, 0.3, 6, 0.002, init.clone());
        st.kappa = kappa.clone();
        st.periodic = periodic;
        let mut fast = HeatCpu::<f64>::new(&st).unwrap();
        let mut slow = HeatCpu::<f64>::new(&st).unwrap();
        slow.use_reference(true);
        fast.advance(5).unwrap();
        slow.advance(5).unwrap();
        let err = fast
            .field()
            .unwrap()
            .iter()
            .zip(slow.field().unwrap())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-12, "periodic {periodic}: {err:e}");
    }
}

/// The fused heat step against the per-point reference: every radius the row kernel
/// specialises (and one beyond, orders 2 to 10), 2-D and 3-D, periodic and zero boundaries,
/// constant and variable diffusivity, f32 and f64, odd sizes.
#[test]
fn heat_fused_matches_reference_everywhere() {
    fn run<T: fdlab_core::Scalar>(st: &HeatSetup, steps: usize) -> f64 {
        let mut fast = HeatCpu::<T>::new(st).unwrap();
        let mut slow = HeatCpu::<T>::new(st).unwrap();
        slow.use_reference(true);
        fast.advance(steps).unwrap();
        slow.advance(steps).unwrap();
        let scale = slow
            .field()
            .unwrap()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        fast.field()
            .unwrap()
            .iter()
            .zip(slow.field().unwrap())
            .map(|(a, b)| (a - b).abs() / scale)
            .fold(0.0, f64::max)
    }
    let mut seed = 777u64;
    let mut rnd = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for (n, dim) in [([23, 17, 1], 2), ([21, 13, 11], 3)] {
        let len = n[0] * n[1] * n[2];
        for order in [2, 4, 6, 8, 10] {
            let init: Vec<f64> = (0..len).map(|_| rnd()).collect();
            for periodic in [true, false] {
                for variable in [false, true] {
                    let mut st = heat_setup(n, dim, 0.4, order, 0.001, init.clone());
                    st.periodic = periodic;
                    if variable {
                        st.kappa = (0..len).map(|_| 0.5 + rnd()).collect();
                    }
                    let what =
                        format!("{n:?} order {order} periodic {periodic} variable {variable}");
                    // The paths sum the neighbours in different orders (and the reference in
                    // f64 for f32 fields): equal to rounding.
                    let e = run::<f64>(&st, 4);
                    assert!(e < 1e-14, "f64 {what}: {e:e}");
                    let e = run::<f32>(&st, 4);
                    assert!(e < 1e-6, "f32 {what}: {e:e}");
                }
            }
        }
    }
}

#[test]
fn wave_standing_mode_has_the_discrete_frequency() {
    let (n, h, order, c) = ([64, 48, 1], 1.0, 8, 1.3);
    let k = [2.0 * PI * 3.0 / 64.0, 2.0 * PI * 2.0 / 48.0, 0.0];
    let w = second_weights(order, h).unwrap();
    let lambda = second_symbol(&w, k[0], h) + second_symbol(&w, k[1], h);
    let dt = 0.5 * wave_dt_limit(order, &[h, h], c).unwrap();
    let omega = (1.0 - dt * dt * c * c * lambda / 2.0).acos() / dt;
    let u0 = mode(n, h, k);
    let setup = WaveSetup {
        n,
        dim: 2,
        spacing: [h; 3],
        order,
        dt,
        velocity: vec![c],
        density: None,
        boundary: WaveBoundary::Periodic,
        initial: u0,
        previous: None,
        sources: vec![],
        receiver_spread: vec![],
        receivers: vec![[0, 0, 0]],
    };
    let mut s = WaveCpu::<f64>::new(&setup).unwrap();
    let steps = (20.0 * 2.0 * PI / omega / dt) as usize;
    s.advance(steps).unwrap();
    let tr = s.traces()[0].clone();
    let mut crossings = vec![];
    for i in 1..tr.len() {
        if tr[i - 1].signum() != tr[i].signum() {
            let f = tr[i - 1] / (tr[i - 1] - tr[i]);
            crossings.push((i as f64 + f) * dt);
        }
    }
    let half = crossings.len() - 1;
    let measured = PI * half as f64 / (crossings[half] - crossings[0]);
    let rel = (measured - omega).abs() / omega;
    let continuous = c * (k[0] * k[0] + k[1] * k[1]).sqrt();
    eprintln!(
        "standing mode: frequency error {rel:.2e}, continuous differs by {:.2e}",
        (continuous - omega).abs() / omega
    );
    assert!(
        rel < 1e-3,
        "measured {measured}, discrete {omega}, continuous {continuous}"
    );
}

fn point_source_run(
    dim: usize,
    nn: usize,
    r_cells: usize,
    boundary: WaveBoundary,
    t_end: f64,
) -> (Vec<f64>, f64, f64) {
    let (h, c, f0) = (1.0, 1.0, 0.04);
    let mut n = [nn; 3];
    if dim == 2 {
        n[2] = 1;
    }
    let mid = nn / 2;
    let src = if dim == 3 {
        [mid, mid, mid]
    } else {
        [mid, mid, 0]
    };
    let mut rec = src;
    rec[0] += r_cells;
    let dt = 0.4 * wave_dt_limit(8, &vec![h; dim], c).unwrap();
    let cells = n[0] * n[1] * n[2];
    let setup = WaveSetup {
        n,
        dim,
        spacing: [h; 3],
        order: 8,
        dt,
        velocity: vec![c],
        density: None,
        boundary,
        initial: vec![0.0; cells],
        previous: None,
        sources: vec![PointSource {
            cell: src,
            f0,
            t0: 1.5 / f0,
            amplitude: 1.0,
            ..Default::default()
        }],
        receiver_spread: vec![],
        receivers: vec![rec],
    };
    let mut s = WaveCpu::<f64>::new(&setup).unwrap();
    s.advance((t_end / dt) as usize).unwrap();
    (s.traces()[0].clone(), dt, f0)
}

fn rel_max_err(num: &[f64], ana: &[f64]) -> f64 {
    let peak = ana.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    num.iter()
        .zip(ana)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / peak
}

#[test]
fn point_source_matches_the_3d_greens_function() {
    let r = 12.0;
    let (tr, dt, f0) = point_source_run(
        3,
        64,
        12,
        WaveBoundary::Cpml {
            thickness: 10,
            f0: 0.04,
        },
        85.0,
    );
    let ana: Vec<f64> = (0..tr.len())
        .map(|s| ricker((s + 1) as f64 * dt - r, f0, 1.5 / f0) / (4.0 * PI * r))
        .collect();
    let e = rel_max_err(&tr, &ana);
    eprintln!("3-D Green's function: max error / peak = {e:.2e}");
    assert!(e < 0.01, "3-D relative error {e}");
}

#[test]
fn point_source_matches_the_2d_greens_function() {
    let r: f64 = 20.0;
    let (tr, dt, f0) = point_source_run(2, 240, 20, WaveBoundary::Rigid, 150.0);
    let t0 = 1.5 / f0;
    // p(t) = ∫ s(t − τ) H(τ − r) / (2π sqrt(τ² − r²)) dτ with τ = r + σ².
    let ana: Vec<f64> = (0..tr.len())
        .map(|s| {
            let t = (s + 1) as f64 * dt;
            if t <= r {
                return 0.0;
            }
            let top = (t - r).sqrt();
            let m = 4000;
            let f = |sig: f64| {
                let tau = r + sig * sig;
                ricker(t - tau, f0, t0) / (PI * (tau + r).sqrt())
            };
            let hs = top / m as f64;
            let mut acc = f(0.0) + f(top);
            for i in 1..m {
                acc += f(i as f64 * hs) * if i % 2 == 1 { 4.0 } else { 2.0 };
            }
            acc * hs / 3.0
        })
        .collect();
    let e = rel_max_err(&tr, &ana);
    eprintln!("2-D Green's function: max error / peak = {e:.2e}");
    assert!(e < 0.01, "2-D relative error {e}");
}

fn energy(s: &WaveCpu<f64>, n: usize, pml: usize, dt: f64) -> f64 {
    let (p, q) = (s.field().unwrap(), s.previous());
    let mut e = 0.0;
    for j in pml..n - pml {
        for i in pml..n - pml {
            let c = i + n * j;
            let pt = (p[c] - q[c]) / dt;
            let gx = (p[c + 1] - p[c - 1]) / 2.0;
            let gy = (p[c + n] - p[c - n]) / 2.0;
            e += pt * pt + gx * gx + gy * gy;
        }
    }
    e
}

#[test]
fn cpml_absorbs_an_outgoing_pulse() {
    let (n, pml, f0) = (160, 20, 0.04);
    let dt = 0.4 * wave_dt_limit(8, &[1.0, 1.0], 1.0).unwrap();
    let setup = WaveSetup {
        n: [n, n, 1],
        dim: 2,
        spacing: [1.0; 3],
        order: 8,
        dt,
        velocity: vec![1.0],
        density: None,
        boundary: WaveBoundary::Cpml { thickness: pml, f0 },
        initial: vec![0.0; n * n],
        previous: None,
        sources: vec![PointSource {
            cell: [n / 2, n / 2, 0],
            f0,
            t0: 1.5 / f0,
            amplitude: 1.0,
            ..Default::default()
        }],
        receiver_spread: vec![],
        receivers: vec![],
    };
    let mut s = WaveCpu::<f64>::new(&setup).unwrap();
    let mut peak = 0.0f64;
    // The source is done at t = 75; the front reaches the layer at t ≈ 60 + 75.
    s.advance((80.0 / dt) as usize).unwrap();
    peak = peak.max(energy(&s, n, pml, dt));
    // At t = 200 the direct pulse is past the grid corners; what is left came back.
    s.advance((120.0 / dt) as usize).unwrap();
    let left = energy(&s, n, pml, dt);
    eprintln!("CPML: energy left {:.2e} of the peak", left / peak);
    assert!(
        left / peak < 5e-3,
        "energy left {:e} of {:e}: {:e}",
        left,
        peak,
        left / peak
    );
}

#[test]
fn wave_fused_matches_reference_on_odd_grids() {
    let mut seed = 777u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for (n, dim, boundary) in [
        (
            [29, 23, 17],
            3,
            WaveBoundary::Cpml {
                thickness: 5,
                f0: 0.05,
            },
        ),
        ([31, 19, 1], 2, WaveBoundary::Periodic),
        ([27, 21, 1], 2, WaveBoundary::Rigid),
    ] {
        let len = n[0] * n[1] * n[2];
        let setup = WaveSetup {
            n,
            dim,
            spacing: [1.0, 0.9, 1.1],
            order: 6,
            dt: 0.1,
            velocity: (0..len).map(|_| 1.0 + rnd()).collect(),
            density: None,
            boundary,
            initial: (0..len).map(|_| rnd() - 0.5).collect(),
            previous: None,
            sources: vec![PointSource {
                cell: [7, 8, n[2] / 2],
                f0: 0.05,
                t0: 5.0,
                amplitude: 3.0,
                ..Default::default()
            }],
            receiver_spread: vec![],
            receivers: vec![[3, 4, 0], [n[0] - 1, n[1] - 1, n[2] - 1]],
        };
        let mut fast = WaveCpu::<f64>::new(&setup).unwrap();
        let mut slow = WaveCpu::<f64>::new(&setup).unwrap();
        slow.use_reference(true);
        fast.advance(12).unwrap();
        slow.advance(12).unwrap();
        let err = fast
            .field()
            .unwrap()
            .iter()
            .zip(slow.field().unwrap())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let scale = slow
            .field()
            .unwrap()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err <= 1e-12 * scale, "{boundary:?}: {err:e} of {scale:e}");
        assert_eq!(fast.traces()[1].len(), 12);
        let tr_err = (fast.traces()[0][11] - slow.traces()[0][11]).abs();
        assert!(
            tr_err <= 1e-12 * scale,
            "{boundary:?}: traces differ by {tr_err:e}"
        );
    }
}

#[test]
fn cpml_reflection_is_below_40_db_at_a_receiver() {
    // The same source and receiver in a small grid with a CPML and in a grid large enough that
    // nothing comes back within the window: the difference is what the CPML reflected.
    let f0 = 0.04;
    let run = |n: usize, boundary| {
        let dt = 0.5;
        let (c, rec) = (n / 2, [n / 2 + 30, n / 2, 0]);
        let setup = WaveSetup {
            n: [n, n, 1],
            dim: 2,
            spacing: [1.0; 3],
            order: 8,
            dt,
            velocity: vec![1.0],
            density: None,
            boundary,
            initial: vec![0.0; n * n],
            previous: None,
            sources: vec![PointSource {
                cell: [c, c, 0],
                f0,
                t0: 1.5 / f0,
                amplitude: 1.0,
                ..Default::default()
            }],
            receiver_spread: vec![],
            receivers: vec![rec],
        };
        let mut s = WaveCpu::<f64>::new(&setup).unwrap();
        s.advance((200.0 / dt) as usize).unwrap();
        s.traces()[0].clone()
    };
    let small = run(120, WaveBoundary::Cpml { thickness: 20, f0 });
    let big = run(520, WaveBoundary::Rigid);
    let peak = big.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = small
        .iter()
        .zip(&big)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let db = 20.0 * (diff / peak).log10();
    eprintln!("CPML reflection at a receiver 10 cells from the layer: {db:.1} dB");
    assert!(db < -40.0, "{db} dB");
}
