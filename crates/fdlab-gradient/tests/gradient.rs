//! The forward model reproduces the case steppers' traces; the gradient passes a Taylor test,
//! does not depend on the number of checkpoints, and vanishes for a zero residual.

use fdlab_gradient::{gradient, misfit, plan_memory, vjp, Model, Progress};
use fdlab_solvers::physics::wave_dt_limit;
use fdlab_solvers::wave_vd::WaveVdCpu;
use fdlab_solvers::{PointSource, Stepper, WaveBoundary, WaveCpu, WaveSetup};

fn random(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// A small case with a CPML of 5 cells, a smoothly varying velocity, one source, receivers
/// as given; `density` gives a variable-density case.
fn case(n: [usize; 3], dim: usize, density: bool, receivers: Vec<[usize; 3]>) -> WaveSetup {
    let spacing = [1.0, 0.9, 1.1];
    let len: usize = n.iter().product();
    let order = 4;
    let mut rnd = random(5);
    let velocity: Vec<f64> = (0..len)
        .map(|c| {
            let (i, j) = (c % n[0], c / n[0] % n[1]);
            1.6 + 0.2 * (i as f64 / 7.0).sin() * (j as f64 / 5.0).cos() + 0.02 * rnd()
        })
        .collect();
    let dt = 0.5 * wave_dt_limit(order, &spacing[..dim], 1.9).unwrap();
    let f0 = 0.12;
    let mut cell = [n[0] / 2, n[1] / 3, n[2] / 2];
    cell[2] = cell[2].min(n[2] - 1);
    WaveSetup {
        n,
        dim,
        spacing,
        order,
        dt,
        density: density.then(|| (0..len).map(|_| 1.0 + 0.3 * (rnd() + 0.5)).collect()),
        velocity,
        boundary: WaveBoundary::Cpml { thickness: 5, f0 },
        initial: vec![0.0; len],
        previous: None,
        // Spread over two points (as a source between grid points is), and so is the first
        // receiver: the weights are data to the model, whatever made them.
        sources: vec![PointSource {
            cell,
            f0,
            t0: 1.2 / f0,
            amplitude: 2.5,
            spread: vec![(cell, 0.7), ([cell[0] + 1, cell[1], cell[2]], 0.3)],
            wavelet: None,
        }],
        receiver_spread: vec![vec![
            (receivers[0], 0.55),
            (
                [receivers[0][0], receivers[0][1] + 1, receivers[0][2]],
                0.45,
            ),
        ]],
        receivers,
    }
}

fn worst_relative(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    let scale = b.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0, "the traces are zero");
    let d = a.iter().flatten().zip(b.iter().flatten());
    d.map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max)
}

#[test]
fn forward_traces_are_the_case_steppers() {
    let cases = [
        ([34, 30, 1], 2, vec![[8, 20, 0], [25, 22, 0], [17, 10, 0]]),
        ([18, 16, 14], 3, vec![[6, 10, 7], [12, 11, 4]]),
    ];
    for (n, dim, receivers) in cases {
        for density in [false, true] {
            let s = case(n, dim, density, receivers.clone());
            let steps = 60;
            let model = Model::new(&s, steps).unwrap();
            let traces = model.forward(&mut |_| {}).unwrap();
            let want: Vec<Vec<f64>> = if density {
                let mut cpu = WaveVdCpu::<f64>::new(&s).unwrap();
                cpu.advance(steps).unwrap();
                cpu.traces().to_vec()
            } else {
                let mut cpu = WaveCpu::<f64>::new(&s).unwrap();
                cpu.advance(steps).unwrap();
                cpu.traces().to_vec()
            };
            let e = worst_relative(&traces, &want);
            eprintln!("{n:?} density {density}: worst relative difference {e:.1e}");
            assert!(e < 1e-12, "{n:?} density {density}: {e:e}");
        }
    }
}

/// A 2-D constant-density case with a CPML and two receivers, its observed data from the
/// same model with a velocity bump, and the model's velocity.
fn inversion_case(steps: usize) -> (Model, Vec<Vec<f64>>) {
    inversion_case_with(steps, false)
}

/// [`inversion_case`], with a random density when `density`.
fn inversion_case_with(steps: usize, density: bool) -> (Model, Vec<Vec<f64>>) {
    let n = [32, 28, 1];
    let s = case(n, 2, density, vec![[9, 21, 0], [23, 20, 0]]);
    let model = Model::new(&s, steps).unwrap();
    let bumped: Vec<f64> = model
        .velocity()
        .iter()
        .enumerate()
        .map(|(c, v)| {
            let (x, y) = ((c % n[0]) as f64 - 16.0, (c / n[0]) as f64 - 15.0);
            v * (1.0 + 0.08 * (-(x * x + y * y) / 18.0).exp())
        })
        .collect();
    let observed = model
        .with_velocity(&bumped)
        .unwrap()
        .forward(&mut |_| {})
        .unwrap();
    (model, observed)
}

fn j_of(model: &Model, velocity: &[f64], observed: &[Vec<f64>]) -> f64 {
    let m = model.with_velocity(velocity).unwrap();
    misfit(&m.forward(&mut |_| {}).unwrap(), observed)
        .unwrap()
        .0
}

/// The observed orders of `J(c + hδc) − J(c)` and `J(c + hδc) − J(c) − h⟨g, δc⟩` over five
/// halvings of `h` from 2⁻⁵, `δc` a random 5 % of `c`.
fn taylor_orders(model: &Model, observed: &[Vec<f64>], steps: usize) -> (Vec<f64>, Vec<f64>) {
    let g = gradient(model, observed, steps, &mut |_| {}).unwrap();
    let c = model.velocity().to_vec();
    let j0 = j_of(model, &c, observed);
    assert!(j0 > 0.0 && (j0 - g.misfit).abs() <= 1e-14 * j0);
    let mut rnd = random(11);
    let dc: Vec<f64> = c.iter().map(|v| 0.05 * v * rnd()).collect();
    let gd: f64 = g
        .velocity_gradient
        .iter()
        .zip(&dc)
        .map(|(a, b)| a * b)
        .sum();
    let (mut r1, mut r2) = (vec![], vec![]);
    for e in 0..6 {
        let h = 0.5f64.powi(e + 5);
        let cp: Vec<f64> = c.iter().zip(&dc).map(|(v, d)| v + h * d).collect();
        let jp = j_of(model, &cp, observed);
        r1.push((jp - j0).abs());
        r2.push((jp - j0 - h * gd).abs());
    }
    let order = |r: &[f64], k: usize| (r[k] / r[k + 1]).log2();
    let o1: Vec<f64> = (0..5).map(|k| order(&r1, k)).collect();
    let o2: Vec<f64> = (0..5).map(|k| order(&r2, k)).collect();
    let r2s: Vec<String> = r2.iter().map(|r| format!("{r:.3e}")).collect();
    eprintln!("J = {j0:.3e}, remainders {r2s:?}; orders: first {o1:.3?}, second {o2:.3?}");
    (o1, o2)
}

#[test]
fn velocity_gradient_passes_a_taylor_test() {
    let steps = 70;
    let (model, observed) = inversion_case(steps);
    let (o1, o2) = taylor_orders(&model, &observed, steps);
    assert!(
        o1.iter().all(|o| (*o - 1.0).abs() < 0.1),
        "first order: {o1:?}"
    );
    assert!(o2.iter().all(|o| *o >= 1.9), "second order: {o2:?}");
}

#[test]
fn variable_density_velocity_gradient_passes_a_taylor_test() {
    let steps = 50;
    let (model, observed) = inversion_case_with(steps, true);
    assert!(model.density().is_some());
    let (o1, o2) = taylor_orders(&model, &observed, steps);
    assert!(
        o1.iter().all(|o| (*o - 1.0).abs() < 0.1),
        "first order: {o1:?}"
    );
    assert!(o2.iter().all(|o| *o >= 1.9), "second order: {o2:?}");
}

#[test]
fn checkpoints_do_not_change_the_gradient() {
    let steps = 40;
    let (model, observed) = inversion_case(steps);
    let all = gradient(&model, &observed, steps - 1, &mut |_| {}).unwrap();
    let mut adjoint_steps = 0;
    let three = gradient(&model, &observed, 3, &mut |p| {
        if let Progress::Adjoint { done, .. } = p {
            adjoint_steps = done;
        }
    })
    .unwrap();
    assert_eq!(adjoint_steps, steps);
    assert_eq!(all.forward_steps, steps as u128 - 1);
    assert_eq!(three.forward_steps, 130);
    assert_eq!(all.velocity_gradient, three.velocity_gradient);
    assert_eq!(all.image, three.image);
    assert_eq!(all.source_gradient, three.source_gradient);
    assert_eq!(all.misfit, three.misfit);
    assert!(all.velocity_gradient.iter().any(|g| *g != 0.0));
    assert!(all.image.iter().any(|g| *g != 0.0));
    assert!(all.source_gradient[0].iter().any(|g| *g != 0.0));
}

#[test]
fn vjp_of_the_residual_is_the_gradient() {
    let steps = 30;
    let (model, observed) = inversion_case(steps);
    let g = gradient(&model, &observed, 4, &mut |_| {}).unwrap();
    let v = vjp(&model, &g.residual, 4, &mut |_| {}).unwrap();
    assert_eq!(v.velocity_gradient, g.velocity_gradient);
    assert_eq!(v.image, g.image);
    assert_eq!(v.source_gradient, g.source_gradient);
    // A cotangent of another shape is refused, naming both.
    let short = vec![vec![0.0; steps - 1]; g.residual.len()];
    let e = vjp(&model, &short, 4, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("29 samples") && e.contains("of 30"), "{e}");
}

#[test]
fn zero_residual_gives_a_zero_gradient() {
    let steps = 30;
    let (model, _) = inversion_case(steps);
    let observed = model.forward(&mut |_| {}).unwrap();
    let g = gradient(&model, &observed, 4, &mut |_| {}).unwrap();
    assert_eq!(g.misfit, 0.0);
    assert!(g.velocity_gradient.iter().all(|v| *v == 0.0));
    assert!(g.image.iter().all(|v| *v == 0.0));
    assert!(g.source_gradient.iter().flatten().all(|v| *v == 0.0));
}

#[test]
fn source_gradient_matches_a_finite_difference() {
    // Σ_n ∂J/∂w(n) · ∂w(n)/∂amplitude against a central difference of J in the amplitude
    // (J is quadratic in it: the difference is exact up to rounding).
    let steps = 40;
    let (model, observed) = inversion_case(steps);
    let g = gradient(&model, &observed, steps - 1, &mut |_| {}).unwrap();
    let h = 1e-3;
    let j_with = |dw: f64| {
        let mut s = model.setup().clone();
        s.sources[0].amplitude += dw;
        let m = Model::new(&s, steps).unwrap();
        misfit(&m.forward(&mut |_| {}).unwrap(), &observed)
            .unwrap()
            .0
    };
    let fd = (j_with(h) - j_with(-h)) / (2.0 * h);
    let src = &model.setup().sources[0];
    let dt = model.setup().dt;
    let chain: f64 = (0..steps)
        .map(|k| {
            g.source_gradient[0][k] * fdlab_solvers::physics::ricker(k as f64 * dt, src.f0, src.t0)
        })
        .sum();
    assert!((fd - chain).abs() <= 1e-7 * fd.abs(), "{fd:e} vs {chain:e}");
}

#[test]
fn memory_plan_stores_every_state_when_it_fits() {
    let steps = 50;
    let (model, _) = inversion_case(steps);
    let p = plan_memory(&model, None, 4_000_000_000).unwrap();
    assert_eq!(p.checkpoints, steps - 1);
    let tight = p.fixed_bytes + 5 * p.checkpoint_bytes + 7;
    assert_eq!(plan_memory(&model, None, tight).unwrap().checkpoints, 5);
    assert!(plan_memory(&model, Some(10), tight).is_err());
    assert!(plan_memory(&model, Some(0), tight).is_err());
    assert!(plan_memory(&model, None, p.fixed_bytes).is_err());
}
