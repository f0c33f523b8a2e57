//! Running DFT monitors: the accumulated sum equals the closed-form transform of a known series,
//! a driven cavity's spectrum grows linearly at the drive and stays bounded off it, bad monitors
//! are refused before step 1, and a checkpointed case resumes with the same spectra to the bit.

use fdlab_solvers::fdtd::{Boundary, Component, Fdtd, Grid, MonitorSpec, PointSource, Waveform};
use fdlab_solvers::output::read_npy;
use fdlab_solvers::{run, Case};
use std::f64::consts::PI;

use crate::common;
use common::{case_error, quiet};

/// Complex product and quotient on (re, im) pairs.
fn mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}
fn div(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let d = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
}
fn exp(z: (f64, f64)) -> (f64, f64) {
    let m = z.0.exp();
    (m * z.1.cos(), m * z.1.sin())
}

/// `Σ_{n=1}^{N} z^n = z (1 − z^N) / (1 − z)` with `z = exp(s)`.
fn geometric(s: (f64, f64), n: u64) -> (f64, f64) {
    let z = exp(s);
    let zn = exp((s.0 * n as f64, s.1 * n as f64));
    div(mul(z, (1.0 - zn.0, -zn.1)), (1.0 - z.0, -z.1))
}

#[test]
fn dft_monitor_sums_the_closed_form_transform_of_a_known_series() {
    // A uniform Ex in a periodic box has no curl, so a step leaves it as set: the monitor then
    // sees exactly x(t) = e^{−αt} cos(2π f1 t) at t = n·Δt, n = 1 ..= N.
    let grid = Grid::new([3, 2, 2], [0.01; 3], [Boundary::Periodic; 3]).unwrap();
    let dt = 0.005;
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    let freqs = vec![0.7, 1.3, 2.9];
    let spec = MonitorSpec {
        axis: 2,
        index: 1,
        components: vec![Component::Ex],
        frequencies: freqs.clone(),
    };
    let id = sim.add_dft_monitor(spec, 20.0).unwrap();
    let (alpha, f1) = (0.3, 1.3);
    let x = |t: f64| (-alpha * t).exp() * (2.0 * PI * f1 * t).cos();
    let n = 1000;
    for s in 1..=n {
        let v = x(s as f64 * dt);
        sim.fields_mut().ex.fill(v);
        sim.step();
        assert_eq!(sim.fields().ex[0], v, "the uniform field must not change");
    }
    let m = sim.monitor(id);
    assert_eq!(m.shape, [2, 3]);
    let mut worst = 0.0f64;
    for (fi, &f) in freqs.iter().enumerate() {
        // x e^{−iωt} = ½ Σ± e^{(−α ± iω1 − iω) t}: two geometric series.
        let w = 2.0 * PI * f;
        let w1 = 2.0 * PI * f1;
        let a = geometric((-alpha * dt, (w1 - w) * dt), n);
        let b = geometric((-alpha * dt, (-w1 - w) * dt), n);
        let exact = (0.5 * dt * (a.0 + b.0), 0.5 * dt * (a.1 + b.1));
        for p in 0..6 {
            let (re, im) = m.value(fi, 0, p);
            let err = ((re - exact.0).powi(2) + (im - exact.1).powi(2)).sqrt();
            let scale = (exact.0.powi(2) + exact.1.powi(2)).sqrt().max(1e-3);
            worst = worst.max(err / scale);
        }
    }
    eprintln!("worst relative error vs closed form: {worst:e}");
    assert!(
        worst < 1e-11,
        "DFT differs from the closed form by {worst:e}"
    );
}

/// `sqrt(Σ |F|²)` over the plane for frequency `f` of monitor 0, component 0.
fn norm(sim: &Fdtd<f64>, f: usize) -> f64 {
    let m = sim.monitor(0);
    (0..m.shape[0] * m.shape[1])
        .map(|p| {
            let (re, im) = m.value(f, 0, p);
            re * re + im * im
        })
        .sum::<f64>()
        .sqrt()
}

#[test]
fn driven_cavity_spectrum_grows_at_the_drive_and_stays_bounded_off_it() {
    // PEC box 1.0 × 0.8 × 0.4: resonances 0.800, 1.179, 1.346, … Drive at 1.0 and watch 0.9,
    // 0.1 away from the drive and from the nearest resonance.
    let grid = Grid::new([20, 16, 8], [0.05; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.99 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    sim.add_source(PointSource {
        component: Component::Ez,
        cell: [5, 6, 3],
        waveform: Waveform::Sine { f0: 1.0 },
        amplitude: 1.0,
    })
    .unwrap();
    let spec = MonitorSpec {
        axis: 2,
        index: 3,
        components: vec![Component::Ez],
        frequencies: vec![1.0, 0.9],
    };
    sim.add_dft_monitor(spec, 40.0).unwrap();
    let mut drive = Vec::new();
    let mut off = Vec::new();
    for t in [10.0, 20.0, 30.0, 40.0] {
        let target = (t / dt).round() as u64;
        sim.run(target - sim.steps());
        drive.push(norm(&sim, 0));
        off.push(norm(&sim, 1));
    }
    eprintln!("|F(1.0)| at t = 10, 20, 30, 40: {drive:?}");
    eprintln!("|F(0.9)| at t = 10, 20, 30, 40: {off:?}");
    for k in 1..4 {
        let r = drive[k] / drive[0];
        let want = (k + 1) as f64;
        assert!(
            (r / want - 1.0).abs() < 0.1,
            "|F(f0)| should grow linearly: ratio {r} at t = {}",
            10 * (k + 1)
        );
    }
    let bound = off[..2].iter().fold(0.0f64, |a, &b| a.max(b));
    assert!(
        off[2..].iter().all(|&v| v < 2.0 * bound),
        "|F| off the drive should stay bounded: {off:?}"
    );
    assert!(off[3] < 0.25 * drive[3], "{off:?} vs {drive:?}");
}

#[test]
fn unresolvable_monitors_are_refused_before_the_run() {
    let grid = Grid::new([10, 8, 6], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.05;
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    let spec = |axis, index, f: Vec<f64>| MonitorSpec {
        axis,
        index,
        components: Vec::new(),
        frequencies: f,
    };
    let err =
        |s: MonitorSpec, sim: &mut Fdtd<f64>| sim.add_dft_monitor(s, 10.0).unwrap_err().to_string();
    let e = err(spec(2, 6, vec![0.5]), &mut sim);
    assert!(e.contains("monitor 0") && e.contains("outside"), "{e}");
    let e = err(spec(2, 2, vec![]), &mut sim);
    assert!(e.contains("no frequencies"), "{e}");
    let e = err(spec(2, 2, vec![0.5, -1.0]), &mut sim);
    assert!(e.contains("-1"), "{e}");
    // 10 cells per wavelength at Δ = 0.1 allows f <= 1.
    let e = err(spec(0, 2, vec![1.5]), &mut sim);
    assert!(
        e.contains("1.5") && e.contains("cells per wavelength"),
        "{e}"
    );
    // A period of 1/0.05 = 20 is longer than the run of 10.
    let e = err(spec(1, 2, vec![0.05]), &mut sim);
    assert!(e.contains("0.05") && e.contains("period"), "{e}");
    let id = sim
        .add_dft_monitor(spec(1, 2, vec![0.5, 1.0]), 10.0)
        .unwrap();
    assert_eq!(id, 0);
    assert_eq!(
        sim.monitor(id).spec.components,
        vec![Component::Ex, Component::Ez]
    );
    assert_eq!(sim.monitor(id).shape, [6, 10]);
    // Nyquist: with Δt = 0.05 it is 10, but a fine grid lets the cell check pass.
    let fine = Grid::new([4, 4, 4], [0.001; 3], [Boundary::Periodic; 3]).unwrap();
    let mut sim = Fdtd::<f64>::new(fine, 0.0005).unwrap();
    let e = err(spec(2, 0, vec![1500.0]), &mut sim);
    assert!(e.contains("1500") && e.contains("Nyquist"), "{e}");
}

const CASE: &str = r#"
physics = "fdtd"
[grid]
shape = [10, 8, 6]
spacing = [0.1, 0.1, 0.1]
[time]
cfl = 0.99
duration = 4.0
[fdtd]
boundary = ["pec", "pec", "periodic"]
[[fdtd.sources]]
component = "ez"
position = [0.35, 0.4, 0.25]
waveform = "ricker"
f0 = 0.8
[[fdtd.monitors]]
axis = "z"
position = 0.31
frequencies = [0.5, 0.8]
[[fdtd.monitors]]
axis = "x"
position = 0.6
components = ["ez", "hy"]
frequencies = [0.7]
[output]
dir = "out"
every = 1000000
"#;

#[test]
fn monitor_case_keys_are_checked() {
    let e = case_error(&CASE.replace("position = 0.31", "position = 0.7"));
    assert!(e.contains("fdtd.monitors[0].position"), "{e}");
    let e = case_error(&CASE.replace("frequencies = [0.5, 0.8]", "frequencies = []"));
    assert!(
        e.contains("fdtd.monitors[0]") && e.contains("no frequencies"),
        "{e}"
    );
    let e = case_error(&CASE.replace("frequencies = [0.7]", "frequencies = [0.7, 3.0]"));
    assert!(
        e.contains("fdtd.monitors[1]") && e.contains("frequency 3"),
        "{e}"
    );
    let e = case_error(&CASE.replace("frequencies = [0.7]", "frequencies = [0.2]"));
    assert!(
        e.contains("fdtd.monitors[1]") && e.contains("period"),
        "{e}"
    );
}

#[test]
fn monitor_case_writes_spectra_and_resumes_bit_identically() {
    let case = Case::parse(CASE, "c.toml".into()).unwrap();
    let d1 = tempfile::tempdir().unwrap();
    let s = run(&case, &quiet(d1.path())).unwrap();
    let steps = s.final_step;
    let (shape0, full0) = read_npy(&d1.path().join("monitor_0.npy")).unwrap();
    assert_eq!(shape0, vec![2, 2, 2, 8, 10]);
    assert!(full0.iter().any(|v| v.abs() > 0.0));
    let (shape1, full1) = read_npy(&d1.path().join("monitor_1.npy")).unwrap();
    assert_eq!(shape1, vec![1, 2, 2, 6, 8]);
    let json = std::fs::read_to_string(d1.path().join("monitors.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["monitors"][0]["index"], 3);
    assert_eq!(json["monitors"][1]["components"][1], "hy");

    let d2 = tempfile::tempdir().unwrap();
    let mut o = quiet(d2.path());
    o.checkpoint_every = Some(10);
    o.stop_at = Some(30);
    assert_eq!(run(&case, &o).unwrap().final_step, 30);
    let mut o = quiet(d2.path());
    o.resume = Some(d2.path().join("checkpoints"));
    assert_eq!(run(&case, &o).unwrap().final_step, steps);
    let (_, r0) = read_npy(&d2.path().join("monitor_0.npy")).unwrap();
    let (_, r1) = read_npy(&d2.path().join("monitor_1.npy")).unwrap();
    assert!(r0 == full0 && r1 == full1, "resumed spectra differ");
}
