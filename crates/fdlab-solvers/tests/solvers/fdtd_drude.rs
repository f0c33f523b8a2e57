//! Drude media (ADE): a lossless Drude box keeps the total energy, a lossy one drains it, the
//! fused and reference steps agree, the plasma frequency's stability limit is enforced, and the
//! reflection of a plane wave from a Drude half-space matches Fresnel's formula.

use fdlab_solvers::fdtd::{drude_dt_limit, Boundary, Drude, Fdtd, Grid};
use std::f64::consts::PI;

use crate::common;
use common::quiet;

/// A 12 × 10 × 8 PEC box (Δ = 0.1) with a Drude block in the middle and a smooth Ez inside.
fn box_with_drude(gamma: f64) -> Fdtd<f64> {
    let grid = Grid::new([12, 10, 8], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    let (lo, hi) = ([3, 3, 2], [8, 6, 5]);
    sim.fill_box(lo, hi, 2.0, 0.0).unwrap();
    let d = Drude {
        plasma_frequency: 2.0 * PI,
        collision_frequency: gamma,
    };
    sim.set_drude(lo, hi, d).unwrap();
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

#[test]
fn lossless_drude_box_keeps_its_energy() {
    // E, H and J are stored at staggered times, so the stored total swings by O(ωΔt) around
    // its conserved value: compare the swing's envelope early and late instead of each step.
    let mut sim = box_with_drude(0.0);
    let e0 = sim.energy();
    let mut totals = Vec::new();
    let mut carried = 0.0f64;
    for _ in 0..4000 {
        sim.step();
        totals.push(sim.energy() + sim.drude_energy());
        carried = carried.max(sim.drude_energy() / e0);
    }
    let range = |v: &[f64]| {
        v.iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)))
    };
    let (lo0, hi0) = range(&totals[..1000]);
    let (lo1, hi1) = range(&totals[3000..]);
    eprintln!(
        "lossless Drude / initial: steps 1-1000 in [{:.4}, {:.4}], steps 3001-4000 in \
         [{:.4}, {:.4}], carriers up to {carried:.3}",
        lo0 / e0,
        hi0 / e0,
        lo1 / e0,
        hi1 / e0
    );
    assert!(carried > 0.01, "the carriers should take part: {carried}");
    assert!(
        hi1 < 1.01 * hi0,
        "energy grew: max {hi1} late vs {hi0} early"
    );
    assert!(
        lo1 > 0.99 * lo0,
        "energy decayed: min {lo1} late vs {lo0} early"
    );
}

#[test]
fn lossy_drude_box_drains_its_energy() {
    let mut sim = box_with_drude(2.0);
    let e0 = sim.energy();
    sim.run(3000);
    let e = sim.energy() + sim.drude_energy();
    eprintln!("lossy Drude: total/initial after 3000 steps {:.3e}", e / e0);
    assert!(e < 0.5 * e0, "{e} vs {e0}");
}

#[test]
fn drude_fused_and_reference_steps_agree() {
    let mut a = box_with_drude(0.5);
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
    assert_eq!(a.drude_state().len(), b.drude_state().len());
}

#[test]
fn plasma_frequency_lowers_the_stable_step() {
    let grid = Grid::new([6, 6, 6], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let wp = 2.0 * PI;
    let limit = drude_dt_limit(&grid, wp);
    assert!(limit < grid.dt_limit());
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.99 * grid.dt_limit()).unwrap();
    let d = Drude {
        plasma_frequency: wp,
        collision_frequency: 0.0,
    };
    let e = sim.set_drude([1; 3], [3; 3], d).unwrap_err().to_string();
    assert!(
        e.contains("Drude") && e.contains("lower the time step"),
        "{e}"
    );
    let bad = Drude {
        plasma_frequency: -1.0,
        collision_frequency: 0.0,
    };
    let mut sim = Fdtd::<f64>::new(grid, 0.9 * limit).unwrap();
    assert!(sim.set_drude([1; 3], [3; 3], bad).is_err());
    sim.set_drude([1; 3], [3; 3], d).unwrap();
}

#[test]
fn drude_half_space_reflects_as_fresnel_predicts() {
    let (eps_inf, wp, gamma) = (1.0, 2.0 * PI * 1.5, 0.5);
    let dr = Drude {
        plasma_frequency: wp,
        collision_frequency: gamma,
    };
    let fill = |sim: &mut Fdtd<f64>, lo: [usize; 3], hi: [usize; 3]| {
        sim.fill_box(lo, hi, eps_inf, 0.0).unwrap();
        sim.set_drude(lo, hi, dr).unwrap();
    };
    let worst = common::worst_reflection_error("Drude", &fill, |w| {
        // ε = ε∞ − ωp²/(ω² + iγω).
        let den = w * w * w * w + gamma * gamma * w * w;
        (eps_inf - wp * wp * w * w / den, wp * wp * gamma * w / den)
    });
    assert!(worst < 0.02, "worst relative error {worst}");
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
drude = { plasma_frequency = 6.0, collision_frequency = 0.3 }
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

#[test]
fn drude_case_checks_its_time_step_and_resumes_bit_identically() {
    use fdlab_solvers::{validate, Case};
    let bad = CASE.replace("plasma_frequency = 6.0", "plasma_frequency = 60.0");
    let case = Case::parse(&bad, "c.toml".into()).unwrap();
    let e = validate(&case, &quiet(&std::env::temp_dir()))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fdtd.materials[0].drude.plasma_frequency") && e.contains("cfl"),
        "{e}"
    );
    let neg = CASE.replace("collision_frequency = 0.3", "collision_frequency = -0.3");
    let case = Case::parse(&neg, "c.toml".into()).unwrap();
    assert!(validate(&case, &quiet(&std::env::temp_dir())).is_err());

    common::resumed_monitor_matches(CASE);
}
