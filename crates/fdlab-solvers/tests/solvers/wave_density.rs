//! The variable-density wave (`material.density`): the constant-density solver's answer for
//! constant ρ, the impedance reflection at a density jump, the CPML, checkpoints, and cases.

use fdlab_solvers::physics::{vd_speed, wave_dt_limit, wave_vd_dt_limit};
use fdlab_solvers::wave_vd::WaveVdCpu;
use fdlab_solvers::{PointSource, Stepper, WaveBoundary, WaveCpu, WaveSetup};

fn noise(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

fn setup(n: [usize; 3], dim: usize, order: usize, boundary: WaveBoundary) -> WaveSetup {
    let cells = n.iter().product();
    WaveSetup {
        n,
        dim,
        spacing: [1.0, 0.9, 1.1],
        order,
        dt: 0.0,
        velocity: noise(cells, 3).iter().map(|v| 1.5 + v).collect(),
        density: None,
        boundary,
        initial: noise(cells, 5),
        previous: Some(noise(cells, 7)),
        sources: vec![PointSource {
            cell: [n[0] / 2, n[1] / 3, n[2] / 2],
            f0: 0.1,
            t0: 2.0,
            amplitude: 3.0,
            ..Default::default()
        }],
        receiver_spread: vec![],
        receivers: vec![[2, 3, 0], [n[0] / 2, n[1] / 3, n[2] / 2]],
    }
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// `s` with its source and receivers moved between grid points (Hicks' interpolation).
fn off_grid(mut s: WaveSetup, periodic: bool) -> WaveSetup {
    use fdlab_solvers::hicks::{spread, Edge};
    let edges = [if periodic { Edge::Periodic } else { Edge::Wall }; 3];
    let at = |c: [usize; 3], d: f64| -> Vec<f64> { (0..s.dim).map(|a| c[a] as f64 + d).collect() };
    let points = |x: Vec<f64>| spread(&x, s.n, edges).unwrap();
    s.sources[0].spread = points(at(s.sources[0].cell, 0.4));
    s.receiver_spread = vec![
        points(at(s.receivers[0], -0.3)),
        points(at(s.receivers[1], 0.5)),
    ];
    s
}

/// With constant ρ and second order, `K D⁻(b D⁺p)` is the 3-point Laplacian times c²: both
/// solvers agree to rounding, fields and traces, in 2-D and 3-D, periodic and rigid, with the
/// source and receivers on grid points and between them.
#[test]
fn constant_density_matches_the_constant_density_solver() {
    for (n, dim) in [([37, 29, 1], 2), ([17, 13, 11], 3)] {
        for (boundary, between) in [
            (WaveBoundary::Periodic, false),
            (WaveBoundary::Rigid, false),
            (WaveBoundary::Periodic, true),
            (WaveBoundary::Rigid, true),
        ] {
            let mut s = setup(n, dim, 2, boundary);
            if between {
                s = off_grid(s, boundary == WaveBoundary::Periodic);
                assert!(s.has_spread_points());
            }
            s.dt = 0.4 * wave_dt_limit(2, &s.spacing[..dim], 2.0).unwrap();
            let mut plain = WaveCpu::<f64>::new(&s).unwrap();
            s.density = Some(vec![2.5]);
            let mut vd = WaveVdCpu::<f64>::new(&s).unwrap();
            plain.advance(40).unwrap();
            vd.advance(40).unwrap();
            let (a, b) = (plain.field().unwrap(), vd.field().unwrap());
            let scale = max_abs(&a);
            let err = a
                .iter()
                .zip(&b)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                err < 1e-12 * scale,
                "{dim}-D {boundary:?}: field {err:e} of {scale:e}"
            );
            for (ta, tb) in plain.traces().iter().zip(vd.traces()) {
                assert_eq!(ta.len(), 40);
                let e = ta
                    .iter()
                    .zip(tb)
                    .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
                assert!(e < 1e-12 * scale, "{dim}-D {boundary:?}: trace {e:e}");
            }
        }
    }
}

/// A plane pulse in ρ₁ meets ρ₂ = 4ρ₁ at the same speed: the pressure reflects by
/// `R = (Z₂ − Z₁)/(Z₂ + Z₁) = 0.6` and transmits `1 + R = 1.6` (Z = ρc).
#[test]
fn a_density_jump_reflects_by_the_impedance_ratio() {
    let (nx, ny) = (1000, 9);
    let cells = nx * ny;
    let jump = 550;
    let rho: Vec<f64> = (0..cells)
        .map(|i| if i % nx < jump { 1.0 } else { 4.0 })
        .collect();
    // A Gaussian in x, at rest: half runs right towards the jump, half left.
    let initial: Vec<f64> = (0..cells)
        .map(|i| (-((i % nx) as f64 - 250.0).powi(2) / (2.0 * 5.0f64.powi(2))).exp())
        .collect();
    let (before, after) = ([400, 4, 0], [700, 4, 0]);
    let s = WaveSetup {
        n: [nx, ny, 1],
        dim: 2,
        spacing: [1.0; 3],
        order: 8,
        dt: 0.2,
        velocity: vec![1.0],
        density: Some(rho),
        boundary: WaveBoundary::Periodic,
        initial,
        previous: None,
        sources: vec![],
        receiver_spread: vec![],
        receivers: vec![before, after],
    };
    let c_eff = vd_speed(s.n, 2, 4, s.density.as_deref().unwrap(), &s.velocity);
    assert!(s.dt < wave_vd_dt_limit(8, &[1.0, 1.0], c_eff).unwrap());
    let mut w = WaveVdCpu::<f64>::new(&s).unwrap();
    // The incident half passes `before` at t = 150, its reflection at t = 450 and the
    // transmitted pulse reaches `after` at t = 450; the left-going half arrives at t = 550.
    w.advance((500.0 / s.dt) as usize).unwrap();
    let tr = w.traces();
    let at = |t: f64| (t / s.dt) as usize;
    let incident = max_abs(&tr[0][at(100.0)..at(200.0)]);
    let reflected =
        tr[0][at(400.0)..at(500.0)]
            .iter()
            .fold(0.0f64, |m, v| if v.abs() > m.abs() { *v } else { m });
    let transmitted = max_abs(&tr[1][at(400.0)..at(500.0)]);
    let (r, t) = (reflected / incident, transmitted / incident);
    eprintln!("density 1 → 4: R = {r:.4} (exact 0.6), T = {t:.4} (exact 1.6)");
    assert!((incident - 0.5).abs() < 5e-3, "incident peak {incident}");
    assert!((r - 0.6).abs() < 6e-3, "R = {r}");
    assert!((t - 1.6).abs() < 1.6e-2, "T = {t}");
}

/// The same source and receiver in a small grid with a CPML and in a rigid grid large enough
/// that nothing comes back within the window: the difference is what the layer reflected.
#[test]
fn the_cpml_reflects_less_than_40_db() {
    let f0 = 0.04;
    let run = |n: usize, boundary| {
        let c = n / 2;
        let s = WaveSetup {
            n: [n, n, 1],
            dim: 2,
            spacing: [1.0; 3],
            order: 8,
            dt: 0.4,
            velocity: vec![1.0],
            density: Some(vec![1.5]),
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
            receivers: vec![[c + 25, c, 0]],
        };
        let mut w = WaveVdCpu::<f64>::new(&s).unwrap();
        w.advance((140.0 / s.dt) as usize).unwrap();
        w.traces()[0].clone()
    };
    let small = run(100, WaveBoundary::Cpml { thickness: 15, f0 });
    let big = run(200, WaveBoundary::Rigid);
    let peak = max_abs(&big);
    let diff = small
        .iter()
        .zip(&big)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let db = 20.0 * (diff / peak).log10();
    eprintln!("variable-density CPML reflection 10 cells from the layer: {db:.1} dB");
    assert!(db < -40.0, "{db} dB");
    // Without the layer the rigid walls of the small grid reflect strongly: the measure can fail.
    let walls = run(100, WaveBoundary::Rigid);
    let diff = walls
        .iter()
        .zip(&big)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(20.0 * (diff / peak).log10() > -20.0);
}

/// A checkpoint mid-run restores into a new stepper that continues bit for bit, CPML
/// memory variables included; a constant-density stepper refuses a density setup.
#[test]
fn a_checkpoint_continues_bit_for_bit_and_the_plain_stepper_refuses_density() {
    let mut s = setup(
        [23, 19, 1],
        2,
        4,
        WaveBoundary::Cpml {
            thickness: 5,
            f0: 0.1,
        },
    );
    s.density = Some(noise(23 * 19, 11).iter().map(|v| 2.0 + v).collect());
    let c_eff = vd_speed(s.n, 2, 2, s.density.as_deref().unwrap(), &s.velocity);
    s.dt = 0.5 * wave_vd_dt_limit(4, &s.spacing[..2], c_eff).unwrap();
    let mut a = WaveVdCpu::<f32>::new(&s).unwrap();
    a.advance(9).unwrap();
    let state = a.save_state().unwrap();
    let mut b = WaveVdCpu::<f32>::new(&s).unwrap();
    b.restore_state(9, &state).unwrap();
    a.advance(11).unwrap();
    b.advance(11).unwrap();
    let (fa, fb) = (a.field().unwrap(), b.field().unwrap());
    assert!(fa.iter().zip(&fb).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_eq!(a.traces(), b.traces());
    assert_eq!(b.step(), 20);
    assert!(max_abs(&fa) > 0.0);
    let e = WaveCpu::<f64>::new(&s).err().expect("refused");
    assert!(e.to_string().contains("variable-density"), "{e}");
}
