//! FDTD convolutional PML: the reflection off the layer at normal incidence and at 60°, against
//! reference runs whose walls are too far away to answer within the window; energy leaving the
//! domain, validation messages (a layer thinner than its grading included), the layer pass
//! under the reference step, and checkpoint state.

use fdlab_solvers::fdtd::{Boundary, Component, Cpml, Fdtd, Grid, PointSource, Waveform};
use fdlab_solvers::output::read_npy;
use fdlab_solvers::{run, validate, Case};

use crate::common;
use common::{case_error, quiet};

/// Ricker pulse on Ez at the centre of a cubic grid of `n` cells (spacing 1), probe `offset`
/// cells from the source along +x; returns the probe's Ez series over `steps` steps.
fn pulse(n: usize, boundary: Boundary, offset: usize, steps: u64) -> Vec<f64> {
    let grid = Grid::new([n; 3], [1.0; 3], [boundary; 3]).unwrap();
    // The same dt for every grid size, so that the two runs compare sample by sample.
    let dt = 0.99 / 3f64.sqrt();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    let c = n / 2;
    // A peak wavelength of 16 cells: the band (up to ~2.5 f0) stays resolved.
    let f0 = 1.0 / 16.0;
    sim.add_source(PointSource {
        component: Component::Ez,
        cell: [c, c, c],
        waveform: Waveform::Ricker { f0, t0: 1.5 / f0 },
        amplitude: 1.0,
    })
    .unwrap();
    let p = sim.add_probe(Component::Ez, [c + offset, c, c]).unwrap();
    sim.run(steps);
    sim.probe(p).to_vec()
}

/// max |cpml − reference| / max |reference| for a layer of `layer` on a 32³ grid, the probe
/// two cells in front of the +x layer; printed in dB.
fn reflection(layer: Cpml) -> f64 {
    let (n, steps) = (32, 150);
    let offset = n / 2 - layer.thickness - 2;
    let absorbed = pulse(n, Boundary::Cpml(layer), offset, steps);
    // The nearest wall of the reference grid is 44 cells from the source: an echo needs
    // 2·44 − offset cells of travel, more than the window's 150·dt ≈ 86.
    let reference = pulse(88, Boundary::Pec, offset, steps);
    let peak = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = absorbed
        .iter()
        .zip(&reference)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let r = diff / peak;
    println!("{layer:?}: reflection {:.1} dB", 20.0 * r.log10());
    r
}

/// Amplitude ratio (the stricter reading of −40 dB: 0.01, where energy would allow 0.1).
#[test]
fn cpml_reflection_is_below_minus_40_db() {
    let r = reflection(Cpml::new(8));
    assert!(r < 0.01, "reflection {:.1} dB", 20.0 * r.log10());
    // The comparison can see a reflection: PEC walls where the layer starts answer loudly.
    let offset = 6;
    let walls = pulse(20, Boundary::Pec, offset, 150);
    let reference = pulse(88, Boundary::Pec, offset, 150);
    let peak = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = walls
        .iter()
        .zip(&reference)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!(
        "PEC walls at the interface: {:.1} dB",
        20.0 * (diff / peak).log10()
    );
    assert!(diff / peak > 0.1, "{}", diff / peak);
}

/// Energy every 10 steps of a Ricker pulse from the centre of a 24³ box (300 steps, dt ≈ 0.57:
/// the source is done by step 70, then the window holds about 7 crossings of the box).
fn energies(boundary: Boundary) -> Vec<f64> {
    let grid = Grid::new([24; 3], [1.0; 3], [boundary; 3]).unwrap();
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.99 * grid.dt_limit()).unwrap();
    let f0 = 0.1;
    sim.add_source(PointSource {
        component: Component::Ez,
        cell: [12; 3],
        waveform: Waveform::Ricker { f0, t0: 1.5 / f0 },
        amplitude: 1.0,
    })
    .unwrap();
    (0..30)
        .map(|_| {
            sim.run(10);
            sim.energy()
        })
        .collect()
}

#[test]
fn energy_leaves_through_the_cpml_and_stays_between_pec_walls() {
    let e = energies(Boundary::Cpml(Cpml::new(6)));
    let peak = e.iter().cloned().fold(0.0, f64::max);
    let end = e[e.len() - 1];
    println!("CPML: energy at the end / peak = {:.2e}", end / peak);
    assert!(end < 1e-3 * peak, "{end} of {peak}");
    // Between PEC walls the energy the source left behind stays (the peak, while the source
    // drives, also holds reactive near-field energy that the source takes back).
    let e = energies(Boundary::Pec);
    let (after, end) = (e[8], e[e.len() - 1]);
    println!(
        "PEC: energy at the end / after the source = {:.3}",
        end / after
    );
    assert!((end / after - 1.0).abs() < 0.05, "{end} vs {after}");
}

#[test]
fn bad_cpml_parameters_are_refused_by_name() {
    let grid = |n: usize, p: Cpml| {
        Grid::new(
            [n, 20, 20],
            [0.1; 3],
            [Boundary::Cpml(p), Boundary::Pec, Boundary::Pec],
        )
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    let e = grid(20, Cpml::new(3));
    assert!(
        e.contains("thickness along x is 3") && e.contains("at least 4"),
        "{e}"
    );
    let e = grid(20, Cpml::new(10));
    assert!(
        e.contains("fewer than half") && e.contains("at most 9"),
        "{e}"
    );
    // Thinner than its grading: order 6 needs 8 cells.
    let e = grid(
        30,
        Cpml {
            order: 6,
            ..Cpml::new(7)
        },
    );
    assert!(
        e.contains("thinner than its grading") && e.contains("at least order + 2 = 8"),
        "{e}"
    );
    let eight = Cpml {
        order: 6,
        ..Cpml::new(8)
    };
    assert!(Grid::new([30, 20, 20], [0.1; 3], [Boundary::Cpml(eight); 3]).is_ok());
    for order in [0, 7] {
        let e = grid(
            30,
            Cpml {
                order,
                ..Cpml::new(6)
            },
        );
        assert!(e.contains("grading order") && e.contains("1 to 6"), "{e}");
    }
    let e = grid(
        30,
        Cpml {
            kappa_max: 0.5,
            ..Cpml::new(6)
        },
    );
    assert!(e.contains("kappa_max") && e.contains(">= 1"), "{e}");
    let e = grid(
        30,
        Cpml {
            alpha_max: -1.0,
            ..Cpml::new(6)
        },
    );
    assert!(e.contains("alpha_max") && e.contains(">= 0"), "{e}");

    let g = Grid::new([20; 3], [0.1; 3], [Boundary::Cpml(Cpml::new(5)); 3]).unwrap();
    let mut sim = Fdtd::<f64>::new(g.clone(), 0.9 * g.dt_limit()).unwrap();
    let src = PointSource {
        component: Component::Ez,
        cell: [10, 10, 15],
        waveform: Waveform::Sine { f0: 1.0 },
        amplitude: 1.0,
    };
    let e = sim.add_source(src).unwrap_err().to_string();
    assert!(
        e.contains("inside the CPML along z") && e.contains("5 ..= 14"),
        "{e}"
    );
    let e = sim
        .add_probe(Component::Hx, [4, 10, 10])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("FDTD probe") && e.contains("inside the CPML along x"),
        "{e}"
    );
    sim.add_source(PointSource {
        cell: [10, 10, 14],
        ..src
    })
    .unwrap();
    sim.add_probe(Component::Hx, [5, 10, 10]).unwrap();
}

/// The layer pass runs the same under the fast step and the reference step, on every kind of
/// axis and with a lossy random medium.
#[test]
fn fast_matches_reference_with_cpml() {
    let p = Cpml {
        kappa_max: 3.0,
        alpha_max: 0.5,
        ..Cpml::new(5)
    };
    let boundary = [
        Boundary::Cpml(p),
        Boundary::Periodic,
        Boundary::Cpml(Cpml {
            order: 2,
            thickness: 4,
            ..p
        }),
    ];
    let grid = Grid::new([11, 6, 10], [0.11, 0.07, 0.13], boundary).unwrap();
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.9 * grid.dt_limit()).unwrap();
    let mut seed = 7u64;
    let mut rnd = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let eps = (0..grid.cells()).map(|_| 2.0 + rnd()).collect();
    let sigma = (0..grid.cells()).map(|_| 0.5 + 0.5 * rnd()).collect();
    sim.set_medium(eps, sigma).unwrap();
    let f = sim.fields_mut();
    for v in [
        &mut f.ex, &mut f.ey, &mut f.ez, &mut f.hx, &mut f.hy, &mut f.hz,
    ] {
        v.iter_mut().for_each(|x| *x = rnd());
    }
    let mut reference = sim.clone();
    for _ in 0..6 {
        sim.step();
        reference.step_reference();
    }
    let (a, b) = (sim.fields(), reference.fields());
    let pairs = [
        (&a.ex, &b.ex),
        (&a.ey, &b.ey),
        (&a.ez, &b.ez),
        (&a.hx, &b.hx),
        (&a.hy, &b.hy),
        (&a.hz, &b.hz),
    ];
    for (x, y) in pairs {
        let scale = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let worst = x
            .iter()
            .zip(y)
            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(worst <= 1e-12 * scale, "{worst} of {scale}");
    }
    // ψ is state: a copy restored from fields alone drifts, with ψ it follows to the bit.
    let psi = sim.cpml_state();
    assert!(psi.iter().any(|v| *v != 0.0));
    let mut copy = sim.clone();
    copy.restore(sim.steps(), sim.fields().clone(), vec![])
        .unwrap();
    copy.restore_cpml(&psi).unwrap();
    sim.run(3);
    copy.run(3);
    assert_eq!(sim.fields(), copy.fields());
    let e = copy.restore_cpml(&psi[1..]).unwrap_err().to_string();
    assert!(e.contains("CPML state"), "{e}");
}

/// A small open-space case: CPML on every axis, Ez dipole in the middle, one probe.
const OPEN: &str = r#"
physics = "fdtd"
[grid]
shape = [24, 24, 24]
spacing = [0.05, 0.05, 0.05]
[time]
cfl = 0.99
duration = 2.0
[fdtd]
boundary = [{ cpml = { thickness = 6 } }, { cpml = { thickness = 6, order = 4, kappa_max = 2.0 } }, { cpml = { thickness = 6, alpha_max = 0.1 } }]
plot = "ez"
[[fdtd.sources]]
component = "ez"
position = [0.6, 0.6, 0.6]
waveform = "ricker"
f0 = 2.0
[[fdtd.probes]]
component = "ez"
position = [0.85, 0.6, 0.6]
[output]
dir = "out"
every = 1000000
"#;

#[test]
fn cpml_case_validates_placements_and_parameters() {
    let case = Case::parse(OPEN, "c.toml".into()).unwrap();
    validate(&case, &quiet(&std::env::temp_dir())).unwrap();
    let e = case_error(&OPEN.replace("{ thickness = 6 }", "{ thickness = 3 }"));
    assert!(
        e.contains("fdtd.boundary (line") && e.contains("[0].cpml: thickness along x is 3"),
        "{e}"
    );
    let e = case_error(&OPEN.replace("{ thickness = 6 }", "{ thickness = 12 }"));
    assert!(e.contains("fewer than half"), "{e}");
    let e = case_error(&OPEN.replace("order = 4", "order = 5"));
    assert!(
        e.contains("fdtd.boundary")
            && e.contains("[1].cpml")
            && e.contains("thinner than its grading"),
        "{e}"
    );
    let e = case_error(&OPEN.replace("order = 4", "order = 9"));
    assert!(e.contains("[1].cpml: grading order"), "{e}");
    let e = case_error(&OPEN.replace("order = 4", "sigma_max = 4.0"));
    assert!(e.contains("sigma_max"), "{e}");
    let e = case_error(&OPEN.replace("[0.85, 0.6, 0.6]", "[1.0, 0.6, 0.6]"));
    assert!(
        e.contains("fdtd.probes[0].position") && e.contains("inside the CPML along axis 0"),
        "{e}"
    );
    let e = case_error(&OPEN.replace("[0.6, 0.6, 0.6]", "[0.6, 0.6, 0.1]"));
    assert!(
        e.contains("fdtd.sources[0].position") && e.contains("inside the CPML along axis 2"),
        "{e}"
    );
}

#[test]
fn cpml_case_runs_and_resumes_bit_identically() {
    let case = Case::parse(OPEN, "c.toml".into()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = run(&case, &quiet(dir.path())).unwrap();
    let (_, ez) = read_npy(&dir.path().join("probe_0.npy")).unwrap();
    assert_eq!(ez.len() as u64, s.final_step);
    assert!(ez.iter().any(|v| v.abs() > 0.0));

    let d2 = tempfile::tempdir().unwrap();
    let mut o = quiet(d2.path());
    o.checkpoint_every = Some(10);
    o.stop_at = Some(30);
    run(&case, &o).unwrap();
    let mut o = quiet(d2.path());
    o.resume = Some(d2.path().join("checkpoints"));
    run(&case, &o).unwrap();
    let (_, resumed) = read_npy(&d2.path().join("probe_0.npy")).unwrap();
    assert_eq!(resumed, ez);
}

/// What ends the +y side of the oblique-incidence runs.
#[derive(Clone, Copy, PartialEq)]
enum YEnd {
    /// The CPML under test: its interface 12 cells above the source, its PEC backing 22.
    Layer,
    /// The layer 80 cells further away: nothing comes back within the window.
    Far,
    /// No layer: a PEC wall where the layer's backing was (|r| = 1, the same path), the low-y
    /// end far away.
    Mirror,
}

/// A line source (uniform along a periodic z of 2 cells: a 2-D problem run by the 3-D code)
/// and a probe of the same component 76 cells further along x, both 22 cells below the +y
/// wall (12 below the layer): the ray from the source that the wall returns to the probe
/// crosses the layer at atan(38/22) = 60° (59° for the half-cell-shifted Ey). The x walls are
/// the same in all runs, so differences between them are the +y end's echo alone. Returns the
/// probe's series.
fn oblique(component: Component, layer: Cpml, end: YEnd) -> Vec<f64> {
    let (ny, y, by) = match end {
        YEnd::Layer => (52, 30, Boundary::Cpml(layer)),
        YEnd::Far => (132, 30, Boundary::Cpml(layer)),
        YEnd::Mirror => (112, 90, Boundary::Pec),
    };
    let bc = [Boundary::Cpml(layer), by, Boundary::Periodic];
    let grid = Grid::new([116, ny, 2], [1.0; 3], bc).unwrap();
    let dt = 0.99 / 3f64.sqrt();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    let f0 = 1.0 / 16.0;
    for k in 0..2 {
        sim.add_source(PointSource {
            component,
            cell: [20, y, k],
            waveform: Waveform::Ricker { f0, t0: 1.5 / f0 },
            amplitude: 1.0,
        })
        .unwrap();
    }
    let p = sim.add_probe(component, [96, y, 0]).unwrap();
    // 145 time units: the echo (path 88) and the pulse's length (48) pass the probe.
    sim.run(254);
    sim.probe(p).to_vec()
}

/// max |a − b|.
fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// The layer's echo at 60° incidence against a perfect mirror's over the same path
/// (|r| = 1), for E parallel to the wall (Ez) and E in the plane of incidence (Ey).
#[test]
fn cpml_reflection_at_60_degrees_is_below_minus_30_db() {
    let layer = Cpml::new(10);
    for component in [Component::Ez, Component::Ey] {
        let far = oblique(component, layer, YEnd::Far);
        let echo = max_diff(&oblique(component, layer, YEnd::Layer), &far);
        let mirror = max_diff(&oblique(component, layer, YEnd::Mirror), &far);
        let r = echo / mirror;
        println!(
            "{component:?} at 60°: layer echo / mirror echo = {r:.2e} ({:.1} dB)",
            20.0 * r.log10()
        );
        assert!(r < 10f64.powf(-30.0 / 20.0), "{:.1} dB", 20.0 * r.log10());
        // The mirror's echo is there to be seen: a sizeable fraction of the direct wave.
        let direct = far.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(mirror > 0.2 * direct, "mirror {mirror}, direct {direct}");
    }
}
