//! Material shapes and source kinds: a sphere fills its volume, a slab is a full-width box, a
//! perfect-conductor slab reflects all of a plane wave, a hard source launches exactly its
//! waveform, and the case keys of these are checked before step 1.

use fdlab_solvers::fdtd::{
    Boundary, Component, Cpml, Fdtd, FluxSpec, Grid, PlaneWave, PointSource, Shape, Waveform,
};
use fdlab_solvers::{validate, Case};
use std::f64::consts::PI;

use crate::common;
use common::{case_error, quiet};

/// A sphere of radius r fills about 4/3·π·r³ of cells, and refuses to reach outside the grid.
#[test]
fn sphere_fills_its_volume() {
    let grid = Grid::new([40; 3], [0.05; 3], [Boundary::Pec; 3]).unwrap();
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.5 * grid.dt_limit()).unwrap();
    let (center, radius) = ([1.0, 0.9, 1.1], 0.6);
    let sphere = Shape::Sphere { center, radius };
    sim.fill(&sphere, 4.0, 0.0).unwrap();
    let filled = sim.eps_r().iter().filter(|&&e| e == 4.0).count() as f64;
    let volume = 4.0 / 3.0 * PI * radius.powi(3) / 0.05f64.powi(3);
    println!("sphere: {filled} cells for a volume of {volume:.1} cells");
    assert!((filled / volume - 1.0).abs() < 0.02, "{filled} vs {volume}");
    // Every filled cell's centre lies within the radius.
    for (c, &e) in sim.eps_r().iter().enumerate() {
        if e == 4.0 {
            let ijk = grid.cell_of_index(c);
            let r = (0..3)
                .map(|a| ((ijk[a] as f64 + 0.5) * 0.05 - center[a]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(r <= radius + 1e-12, "cell {c} at distance {r}");
        }
    }
    let out = Shape::Sphere {
        center: [1.0, 1.0, 1.7],
        radius: 0.4,
    };
    let e = sim.fill(&out, 2.0, 0.0).unwrap_err().to_string();
    assert!(e.contains("outside the grid"), "{e}");
}

/// The flux behind and before a slab lit by a plane wave along z (see the plane-wave tests),
/// with `fill` painting the slab cells 60 ..= 74.
fn slab_fluxes(fill: impl Fn(&mut Fdtd<f64>), freqs: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let bc = [
        Boundary::Periodic,
        Boundary::Periodic,
        Boundary::Cpml(Cpml::new(10)),
    ];
    let grid = Grid::new([2, 2, 160], [0.02; 3], bc).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    fill(&mut sim);
    sim.add_plane_wave(PlaneWave {
        axis: 2,
        backward: false,
        polarization: Component::Ex,
        lo: [0, 0, 30],
        hi: [2, 2, 160],
        waveform: Waveform::ModulatedGaussian {
            f0: 0.8,
            t0: 1.5,
            tau: 0.4,
        },
        amplitude: 1.0,
    })
    .unwrap();
    let duration = 9.0;
    let spec = |index| FluxSpec {
        axis: 2,
        index,
        frequencies: freqs.to_vec(),
    };
    let before = sim.add_flux_monitor(spec(20), duration).unwrap();
    let behind = sim.add_flux_monitor(spec(120), duration).unwrap();
    sim.run((duration / dt).round() as u64);
    (sim.flux(before), sim.flux(behind))
}

/// A perfect conductor reflects everything (|r| = 1) and passes nothing.
#[test]
fn pec_slab_reflects_the_whole_plane_wave() {
    let freqs = [0.5, 0.8, 1.1];
    let (_, inc) = slab_fluxes(|_| {}, &freqs);
    let slab = Shape::Box {
        lo: [0, 0, 60],
        hi: [1, 1, 74],
    };
    let (refl, trans) = slab_fluxes(|s| s.set_pec(&slab).unwrap(), &freqs);
    for k in 0..freqs.len() {
        let (r, t) = (-refl[k] / inc[k], trans[k] / inc[k]);
        println!("PEC slab, f = {}: R {r:.6}, T {t:.1e}", freqs[k]);
        assert!((r - 1.0).abs() < 1e-3 && t.abs() < 1e-12, "R {r}, T {t}");
    }
}

/// A sheet of hard sources sets Ex to w(t) on its plane: the wave it launches each way has
/// exactly that amplitude, whatever the cell size (a soft current sheet's would scale with it).
#[test]
fn hard_source_sheet_launches_its_waveform() {
    let d = 0.02;
    let bc = [Boundary::Periodic, Boundary::Periodic, Boundary::Pec];
    let grid = Grid::new([2, 2, 200], [d; 3], bc).unwrap();
    let dt = 0.9 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    let (t0, tau) = (0.8, 0.25);
    for j in 0..2 {
        for i in 0..2 {
            sim.add_hard_source(PointSource {
                component: Component::Ex,
                cell: [i, j, 100],
                waveform: Waveform::Gaussian { t0, tau },
                amplitude: 1.5,
            })
            .unwrap();
        }
    }
    let p = sim.add_probe(Component::Ex, [0, 0, 160]).unwrap();
    let src = sim.add_probe(Component::Ex, [1, 1, 100]).unwrap();
    sim.run((2.6 / dt) as u64);
    let dist = 60.0 * d;
    let mut worst = 0.0f64;
    for (s, (&e, &e0)) in sim.probe(p).iter().zip(sim.probe(src)).enumerate() {
        let t = (s + 1) as f64 * dt;
        let w = |t: f64| 1.5 * (-((t - t0) / tau).powi(2)).exp();
        assert_eq!(e0, w(t), "the source cell holds w(t) exactly");
        worst = worst.max((e - w(t - dist)).abs());
    }
    println!("hard sheet: largest error against 1.5·w(t − x/c) is {worst:.2e}");
    assert!(worst < 0.015, "{worst}");
}

const CASE: &str = r#"
physics = "fdtd"
[grid]
shape = [20, 20, 20]
spacing = [0.05, 0.05, 0.05]
[time]
cfl = 0.9
duration = 0.5
[fdtd]
boundary = ["pec", "pec", "pec"]
[[fdtd.materials]]
center = [0.5, 0.5, 0.5]
radius = 0.2
eps_r = 2.0
drude = { plasma_frequency = 3.0 }
[[fdtd.materials]]
slab = { axis = "z", lo = 0.8, hi = 0.9 }
pec = true
[[fdtd.sources]]
component = "ez"
position = [0.2, 0.2, 0.2]
waveform = "ricker"
f0 = 2.0
hard = true
[output]
dir = "out"
every = 1000000
png = false
"#;

#[test]
fn shape_case_keys_are_checked() {
    let case = Case::parse(CASE, "c.toml".into()).unwrap();
    validate(&case, &quiet(&std::env::temp_dir())).unwrap();
    let e = case_error(&CASE.replace("radius = 0.2", "radius = 0.6"));
    assert!(
        e.contains("fdtd.materials[0].center") && e.contains("outside the grid"),
        "{e}"
    );
    let e = case_error(&CASE.replace("radius = 0.2\n", "radius = 0.2\nlo = [0.0, 0.0, 0.0]\n"));
    assert!(
        e.contains("exactly one geometry") && e.contains("lo/hi and center/radius"),
        "{e}"
    );
    let e = case_error(&CASE.replace("radius = 0.2\n", ""));
    assert!(e.contains("both center and radius"), "{e}");
    let e = case_error(&CASE.replace("hi = 0.9 }", "hi = 1.9 }"));
    assert!(
        e.contains("fdtd.materials[1].slab") && e.contains("outside the grid"),
        "{e}"
    );
    let e = case_error(&CASE.replace(
        "pec = true",
        "pec = true\ndebye = { delta_eps = 1.0, relaxation_time = 1.0 }",
    ));
    assert!(e.contains("fdtd.materials[1].pec"), "{e}");
}
