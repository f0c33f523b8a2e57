//! One-pole Lorentz and Debye media (ADE): the reflection of a plane wave from a half-space
//! matches Fresnel's formula, fused and reference steps agree, a lossless Lorentz box keeps its
//! energy bounded, case files are checked before step 1, and a Lorentz case resumes
//! bit-identically from a checkpoint.

use fdlab_solvers::fdtd::{lorentz_dt_limit, Boundary, Debye, Fdtd, Grid, Lorentz};
use std::f64::consts::PI;

use crate::common;
use common::quiet;

/// Which dispersion a test box gets.
#[derive(Clone, Copy)]
enum Model {
    Lorentz(Lorentz),
    Debye(Debye),
}

fn set(sim: &mut Fdtd<f64>, lo: [usize; 3], hi: [usize; 3], eps_inf: f64, m: Model) {
    sim.fill_box(lo, hi, eps_inf, 0.0).unwrap();
    match m {
        Model::Lorentz(l) => sim.set_lorentz(lo, hi, l).unwrap(),
        Model::Debye(d) => sim.set_debye(lo, hi, d).unwrap(),
    }
}

/// [`common::worst_reflection_error`] for a half-space of `m` over ε∞ = `eps_inf`.
fn worst_reflection_error(
    name: &str,
    eps_inf: f64,
    m: Model,
    eps: impl Fn(f64) -> (f64, f64),
) -> f64 {
    let fill = |sim: &mut Fdtd<f64>, lo: [usize; 3], hi: [usize; 3]| set(sim, lo, hi, eps_inf, m);
    common::worst_reflection_error(name, &fill, eps)
}

#[test]
fn lorentz_half_space_reflects_as_fresnel_predicts() {
    // Resonance at f = 1.5, above the probed band 0.6 ..= 1.0.
    let (eps_inf, de, w0, delta) = (1.5, 2.0, 2.0 * PI * 1.5, 0.5);
    let l = Lorentz {
        delta_eps: de,
        resonance_frequency: w0,
        damping: delta,
    };
    let worst = worst_reflection_error("Lorentz", eps_inf, Model::Lorentz(l), |w| {
        // ε = ε∞ + Δε ω0²/(ω0² − ω² − 2iδω).
        let (a, b) = (w0 * w0 - w * w, -2.0 * delta * w);
        let s = de * w0 * w0 / (a * a + b * b);
        (eps_inf + s * a, -s * b)
    });
    assert!(worst < 0.02, "worst relative error {worst}");
}

#[test]
fn debye_half_space_reflects_as_fresnel_predicts() {
    let (eps_inf, de, tau) = (2.0, 3.0, 0.2);
    let d = Debye {
        delta_eps: de,
        relaxation_time: tau,
    };
    let worst = worst_reflection_error("Debye", eps_inf, Model::Debye(d), |w| {
        // ε = ε∞ + Δε/(1 − iωτ).
        let den = 1.0 + (w * tau).powi(2);
        (eps_inf + de / den, de * w * tau / den)
    });
    assert!(worst < 0.02, "worst relative error {worst}");
}

/// A 12 × 10 × 8 PEC box (Δ = 0.1) with a dispersive block in the middle and a smooth Ez.
fn box_with(m: Model) -> Fdtd<f64> {
    let grid = Grid::new([12, 10, 8], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.9 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    set(&mut sim, [3, 3, 2], [8, 6, 5], 2.0, m);
    let n = grid.n;
    let ez = &mut sim.fields_mut().ez;
    for k in 0..n[2] {
        for j in 1..n[1] {
            for i in 1..n[0] {
                let x = PI * i as f64 / n[0] as f64;
                let y = PI * j as f64 / n[1] as f64;
                ez[grid.index([i, j, k])] = x.sin() * y.sin();
            }
        }
    }
    sim
}

fn lorentz(damping: f64) -> Lorentz {
    Lorentz {
        delta_eps: 1.5,
        resonance_frequency: 2.0 * PI,
        damping,
    }
}

#[test]
fn lorentz_and_debye_fused_and_reference_steps_agree() {
    let debye = Debye {
        delta_eps: 2.0,
        relaxation_time: 0.1,
    };
    for m in [Model::Lorentz(lorentz(0.5)), Model::Debye(debye)] {
        let mut a = box_with(m);
        let mut b = a.clone();
        for _ in 0..50 {
            a.step();
            b.step_reference();
        }
        let d = a
            .fields()
            .ez
            .iter()
            .zip(&b.fields().ez)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(d < 1e-12, "{d}");
        assert!(a.dispersion_state().iter().any(|p| p.abs() > 0.0));
        // The two loops sum the curls in different orders, so P agrees to rounding only.
        let (pa, pb) = (a.dispersion_state(), b.dispersion_state());
        assert_eq!(pa.len(), pb.len());
        let dp = pa
            .iter()
            .zip(&pb)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(dp < 1e-12, "{dp}");
    }
}

#[test]
fn lossless_lorentz_box_keeps_its_energy_bounded() {
    // The polarization trades energy with the fields, so only the field energy's envelope is
    // compared: early and late maxima must agree (no growth), and the late one must not vanish.
    let mut sim = box_with(Model::Lorentz(lorentz(0.0)));
    let e0 = sim.energy();
    let mut e = Vec::new();
    for _ in 0..4000 {
        sim.step();
        e.push(sim.energy() / e0);
    }
    let max = |v: &[f64]| v.iter().fold(0.0f64, |m, &x| m.max(x));
    let (early, late) = (max(&e[..1000]), max(&e[3000..]));
    eprintln!("lossless Lorentz: field energy/initial max early {early:.4}, late {late:.4}");
    assert!(late < 1.05 * early, "energy grew: {late} vs {early}");
    assert!(
        late > 0.5 * early,
        "lossless energy decayed: {late} vs {early}"
    );
}

#[test]
fn lorentz_resonance_lowers_the_stable_step_and_parameters_are_checked() {
    let grid = Grid::new([6, 6, 6], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let l = Lorentz {
        delta_eps: 3.0,
        resonance_frequency: 4.0 * PI,
        damping: 0.0,
    };
    let limit = lorentz_dt_limit(&grid, &l);
    assert!(limit < grid.dt_limit());
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.99 * grid.dt_limit()).unwrap();
    let e = sim.set_lorentz([1; 3], [3; 3], l).unwrap_err().to_string();
    assert!(
        e.contains("Lorentz") && e.contains("lower the time step"),
        "{e}"
    );
    let mut sim = Fdtd::<f64>::new(grid, 0.9 * limit).unwrap();
    let bad = Lorentz {
        resonance_frequency: 0.0,
        ..l
    };
    let e = sim
        .set_lorentz([1; 3], [3; 3], bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("resonance_frequency"), "{e}");
    let bad = Debye {
        delta_eps: 1.0,
        relaxation_time: -1.0,
    };
    let e = sim.set_debye([1; 3], [3; 3], bad).unwrap_err().to_string();
    assert!(e.contains("relaxation_time"), "{e}");
    sim.set_lorentz([1; 3], [3; 3], l).unwrap();
}

const CASE: &str = r#"
physics = "fdtd"
[grid]
shape = [4, 4, 40]
spacing = [0.05, 0.05, 0.05]
[time]
cfl = 0.95
duration = 3.0
[fdtd]
boundary = ["periodic", "periodic", { cpml = { thickness = 6 } }]
[[fdtd.materials]]
lo = [0.0, 0.0, 1.2]
hi = [0.2, 0.2, 1.5]
eps_r = 2.0
lorentz = { delta_eps = 1.5, resonance_frequency = 6.0, damping = 0.3 }
[[fdtd.sources]]
component = "ex"
position = [0.075, 0.1, 0.5]
waveform = "ricker"
f0 = 1.0
[[fdtd.monitors]]
axis = "z"
position = 0.9
frequencies = [0.8, 1.2]
[output]
dir = "out"
every = 1000000
"#;

/// The message `validate` gives for `CASE` with `from` replaced by `to`.
fn case_error(from: &str, to: &str) -> String {
    use fdlab_solvers::{validate, Case};
    let text = CASE.replace(from, to);
    assert_ne!(text, CASE, "{from} is not in the case");
    let case = Case::parse(&text, "c.toml".into()).unwrap();
    validate(&case, &quiet(&std::env::temp_dir()))
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn lorentz_and_debye_case_keys_are_checked_before_step_one() {
    let lor = "lorentz = { delta_eps = 1.5, resonance_frequency = 6.0, damping = 0.3 }";
    let checks = [
        (
            "resonance_frequency = 6.0",
            "resonance_frequency = 200.0",
            "fdtd.materials[0].lorentz.resonance_frequency",
            "cfl",
        ),
        ("delta_eps = 1.5", "delta_eps = -1.0", "fdtd.materials[0].lorentz.delta_eps", ">= 0"),
        (
            "resonance_frequency = 6.0",
            "resonance_frequency = 0.0",
            "fdtd.materials[0].lorentz.resonance_frequency",
            "> 0",
        ),
        ("damping = 0.3", "damping = -0.3", "fdtd.materials[0].lorentz.damping", ">= 0"),
        (
            lor,
            "debye = { delta_eps = 1.0, relaxation_time = 0.0 }",
            "fdtd.materials[0].debye.relaxation_time",
            "> 0",
        ),
        (
            lor,
            "debye = { delta_eps = -1.0, relaxation_time = 0.1 }",
            "fdtd.materials[0].debye.delta_eps",
            ">= 0",
        ),
        (
            lor,
            "drude = { plasma_frequency = 1.0 }\nlorentz = { delta_eps = 1.0, resonance_frequency = 6.0 }",
            "at most one dispersion model",
            "drude and lorentz",
        ),
    ];
    for (from, to, key, what) in checks {
        let e = case_error(from, to);
        assert!(e.contains(key) && e.contains(what), "{to}: {e}");
    }
}

#[test]
fn lorentz_case_resumes_bit_identically() {
    common::resumed_monitor_matches(CASE);
}
