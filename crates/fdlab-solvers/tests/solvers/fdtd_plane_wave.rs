//! Plane waves through TFSF boxes and flux monitors: the incident wave stays inside its box to
//! rounding, travels at the grid's speed with the given waveform, and the reflectance and
//! transmittance of a dielectric slab measured by flux planes match the Airy formulas and sum
//! to one.

use fdlab_solvers::fdtd::{Boundary, Component, Cpml, Fdtd, FluxSpec, Grid, PlaneWave, Waveform};
use fdlab_solvers::output::read_npy;
use fdlab_solvers::{run, Case};
use std::f64::consts::PI;

use crate::common;
use common::{case_error, quiet};

/// The largest |E| over the whole grid, and over the cells outside the box `lo ..= hi` (nodes).
fn peaks(sim: &Fdtd<f64>, lo: [usize; 3], hi: [usize; 3]) -> (f64, f64) {
    let g = sim.grid();
    let f = sim.fields();
    let (mut all, mut out) = (0.0f64, 0.0f64);
    for k in 0..g.n[2] {
        for j in 0..g.n[1] {
            for i in 0..g.n[0] {
                let c = g.index([i, j, k]);
                let v = f.ex[c].abs().max(f.ey[c].abs()).max(f.ez[c].abs());
                all = all.max(v);
                // Cells a whole cell clear of the box: every component there is scattered.
                let clear = (0..3).any(|a| {
                    let x = [i, j, k][a];
                    x + 1 < lo[a] || x > hi[a]
                });
                if clear {
                    out = out.max(v);
                }
            }
        }
    }
    (all, out)
}

/// In vacuum nothing scatters: outside a closed TFSF box the field stays at rounding level,
/// for waves along +x and −y, while inside it the pulse passes at full strength.
#[test]
fn tfsf_box_keeps_the_incident_wave_inside() {
    let grid = Grid::new([24, 22, 20], [0.05; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let (lo, hi) = ([5, 4, 5], [19, 17, 15]);
    for (axis, backward, pol) in [(0, false, Component::Ez), (1, true, Component::Ex)] {
        let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
        sim.add_plane_wave(PlaneWave {
            axis,
            backward,
            polarization: pol,
            lo,
            hi,
            waveform: Waveform::Gaussian {
                t0: 0.25,
                tau: 0.08,
            },
            amplitude: 1.0,
        })
        .unwrap();
        let mut worst = 0.0f64;
        let mut peak = 0.0f64;
        for _ in 0..12 {
            sim.run(10);
            let (all, out) = peaks(&sim, lo, hi);
            worst = worst.max(out);
            peak = peak.max(all);
        }
        println!("axis {axis}, backward {backward}: peak {peak:.3}, outside the box {worst:.2e}");
        assert!(peak > 0.9 && peak < 1.1, "peak {peak}");
        assert!(worst < 1e-12, "leak {worst}");
    }
}

/// Inside the box the incident E follows `w(t − (x − x_face)/c)`: a smooth Gaussian, well
/// resolved, arrives where and when it should, and H = E (impedance 1) travels with it.
#[test]
fn tfsf_wave_arrives_with_its_waveform() {
    let (d, nz) = (0.02, 120);
    let bc = [Boundary::Periodic, Boundary::Periodic, Boundary::Pec];
    let grid = Grid::new([2, 2, nz], [d; 3], bc).unwrap();
    let dt = 0.9 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    let (t0, tau) = (0.8, 0.25);
    let face = 10;
    sim.add_plane_wave(PlaneWave {
        axis: 2,
        backward: false,
        polarization: Component::Ex,
        lo: [0, 0, face],
        hi: [2, 2, 110],
        waveform: Waveform::Gaussian { t0, tau },
        amplitude: 2.0,
    })
    .unwrap();
    let probe = 70;
    let pe = sim.add_probe(Component::Ex, [0, 0, probe]).unwrap();
    let ph = sim.add_probe(Component::Hy, [0, 0, probe]).unwrap();
    let steps = (3.0 / dt) as u64;
    sim.run(steps);
    let dist = (probe - face) as f64 * d;
    let mut worst = 0.0f64;
    for (s, &e) in sim.probe(pe).iter().enumerate() {
        let t = (s + 1) as f64 * dt;
        let want = 2.0 * (-((t - dist - t0) / tau).powi(2)).exp();
        worst = worst.max((e - want).abs());
    }
    // Hy at z + ½ and t − ½Δt: compare with the exact wave there.
    let mut worst_h = 0.0f64;
    for (s, &h) in sim.probe(ph).iter().enumerate() {
        let t = (s as f64 + 0.5) * dt;
        let want = 2.0 * (-((t - dist - 0.5 * d - t0) / tau).powi(2)).exp();
        worst_h = worst_h.max((h - want).abs());
    }
    println!("largest error against w(t − x/c): E {worst:.2e}, H {worst_h:.2e} (peak 2)");
    assert!(worst < 0.02 && worst_h < 0.02, "{worst} {worst_h}");
}

/// `(R, T)` of a dielectric slab of index `n` and thickness `l` at normal incidence in vacuum
/// (Airy), with the phase `δ = 2 k_n l` from the grid's own 1-D dispersion in the slab.
fn airy(n: f64, l: f64, f: f64, d: f64, dt: f64) -> (f64, f64) {
    let w = 2.0 * PI * f;
    let k = 2.0 / d * (n * d / dt * (w * dt / 2.0).sin()).asin();
    let r1 = ((n - 1.0) / (n + 1.0)).powi(2);
    let big_f = 4.0 * r1 / (1.0 - r1).powi(2);
    let s = big_f * (k * l).sin().powi(2);
    (s / (1.0 + s), 1.0 / (1.0 + s))
}

/// Plane wave along z through a 2 × 2 periodic cross-section with CPML at both z ends; flux
/// planes in the scattered region before the box (reflection) and behind the slab
/// (transmission). Returns (flux before, flux behind) per frequency.
fn slab_run(eps: Option<f64>, freqs: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (d, nz) = (0.02, 160);
    let bc = [
        Boundary::Periodic,
        Boundary::Periodic,
        Boundary::Cpml(Cpml::new(10)),
    ];
    let grid = Grid::new([2, 2, nz], [d; 3], bc).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    if let Some(e) = eps {
        // 15 cells: 0.3 thick.
        sim.fill_box([0, 0, 60], [1, 1, 74], e, 0.0).unwrap();
    }
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
    let flux = |index| FluxSpec {
        axis: 2,
        index,
        frequencies: freqs.to_vec(),
    };
    let before = sim.add_flux_monitor(flux(20), duration).unwrap();
    let behind = sim.add_flux_monitor(flux(120), duration).unwrap();
    sim.run((duration / dt).round() as u64);
    (sim.flux(before), sim.flux(behind))
}

#[test]
fn slab_reflectance_and_transmittance_match_airy() {
    let freqs = [0.5, 0.65, 0.8, 0.95, 1.1];
    let (leak, inc) = slab_run(None, &freqs);
    let (refl, trans) = slab_run(Some(4.0), &freqs);
    let dt = 0.95 * 0.02 / 3f64.sqrt();
    let mut worst = 0.0f64;
    for (k, &f) in freqs.iter().enumerate() {
        assert!(inc[k] > 0.0, "incident flux {} must point along +z", inc[k]);
        assert!(leak[k].abs() < 1e-9 * inc[k], "leak {}", leak[k]);
        let r = -refl[k] / inc[k];
        let t = trans[k] / inc[k];
        let (ra, ta) = airy(2.0, 0.3, f, 0.02, dt);
        println!(
            "f = {f}: R {r:.4} (Airy {ra:.4}), T {t:.4} (Airy {ta:.4}), R + T - 1 = {:.1e}",
            r + t - 1.0
        );
        worst = worst.max((r - ra).abs()).max((t - ta).abs());
        assert!((r + t - 1.0).abs() < 2e-3, "R + T = {}", r + t);
    }
    assert!(worst < 0.01, "worst |R − R_Airy|, |T − T_Airy| = {worst}");
}

/// A dielectric slab lit by a TFSF plane wave from a case file; one flux plane in the
/// scattered region before the box, one behind the slab.
const CASE: &str = r#"
physics = "fdtd"
[grid]
shape = [2, 2, 160]
spacing = [0.02, 0.02, 0.02]
[time]
cfl = 0.95
duration = 9.0
[fdtd]
boundary = ["periodic", "periodic", { cpml = { thickness = 10 } }]
[[fdtd.materials]]
lo = [0.0, 0.0, 1.2]
hi = [0.04, 0.04, 1.5]
eps_r = 4.0
[[fdtd.plane_waves]]
direction = "+z"
polarization = "ex"
lo = [0.0, 0.0, 0.6]
hi = [0.04, 0.04, 3.2]
waveform = "modulated_gaussian"
f0 = 0.8
t0 = 1.5
tau = 0.4
[[fdtd.flux]]
axis = "z"
position = 0.4
frequencies = [0.65, 0.95]
[[fdtd.flux]]
axis = "z"
position = 2.4
frequencies = [0.65, 0.95]
[output]
dir = "out"
every = 1000000
png = false
"#;

#[test]
fn plane_wave_and_flux_case_keys_are_checked() {
    let e = case_error(&CASE.replace("polarization = \"ex\"", "polarization = \"ez\""));
    assert!(
        e.contains("fdtd.plane_waves[0]") && e.contains("perpendicular"),
        "{e}"
    );
    // The entry face at z = 0 would be no face at all.
    let e = case_error(&CASE.replace("lo = [0.0, 0.0, 0.6]", "lo = [0.0, 0.0, 0.0]"));
    assert!(e.contains("no entry face"), "{e}");
    let e = case_error(&CASE.replace("lo = [0.0, 0.0, 0.6]", "lo = [0.0, 0.0, 0.1]"));
    assert!(
        e.contains("CPML") && e.contains("fdtd.plane_waves[0]"),
        "{e}"
    );
    let e = case_error(&CASE.replace("lo = [0.0, 0.0, 1.2]", "lo = [0.0, 0.0, 0.58]"));
    assert!(e.contains("material 0") && e.contains("vacuum"), "{e}");
    let e = case_error(&CASE.replace("position = 0.4", "position = 0.1"));
    assert!(e.contains("fdtd.flux[0]") && e.contains("CPML"), "{e}");
    let e = case_error(&CASE.replace("frequencies = [0.65, 0.95]", "frequencies = [0.05]"));
    assert!(e.contains("fdtd.flux[0]") && e.contains("period"), "{e}");
    let text = CASE.replace("direction = \"+z\"", "direction = \"z\"");
    let e = Case::parse(&text, "c.toml".into()).unwrap_err().to_string();
    assert!(e.contains("line 16") && e.contains("`+z`"), "{e}");
}

#[test]
fn plane_wave_case_writes_fluxes_and_resumes_bit_identically() {
    let case = Case::parse(CASE, "c.toml".into()).unwrap();
    let d1 = tempfile::tempdir().unwrap();
    let steps = run(&case, &quiet(d1.path())).unwrap().final_step;
    let (shape, before) = read_npy(&d1.path().join("flux_0.npy")).unwrap();
    assert_eq!(shape, vec![2]);
    let (_, behind) = read_npy(&d1.path().join("flux_1.npy")).unwrap();
    let json = std::fs::read_to_string(d1.path().join("flux.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["planes"][1]["index"], 120);
    // Lossless slab: what is reflected and what is transmitted add up to the incident flux,
    // which the slab's Airy reflectance splits as predicted.
    let dt = 0.95 * 0.02 / 3f64.sqrt();
    for (k, f) in [0.65, 0.95].into_iter().enumerate() {
        let (ra, _) = airy(2.0, 0.3, f, 0.02, dt);
        let r = -before[k] / (behind[k] - before[k]);
        println!("case, f = {f}: R {r:.4}, Airy {ra:.4}");
        assert!((r - ra).abs() < 0.01, "R {r} vs {ra}");
    }
    let d2 = tempfile::tempdir().unwrap();
    let mut o = quiet(d2.path());
    o.checkpoint_every = Some(100);
    o.stop_at = Some(300);
    assert_eq!(run(&case, &o).unwrap().final_step, 300);
    let mut o = quiet(d2.path());
    o.resume = Some(d2.path().join("checkpoints"));
    assert_eq!(run(&case, &o).unwrap().final_step, steps);
    let (_, b2) = read_npy(&d2.path().join("flux_1.npy")).unwrap();
    assert!(b2 == behind, "resumed flux differs: {b2:?} vs {behind:?}");
}

/// The surface corrections act the same under the fast step and the reference step, with a
/// CPML, a periodic axis and a dielectric object in the box.
#[test]
fn tfsf_fast_matches_reference() {
    let bc = [
        Boundary::Cpml(Cpml::new(5)),
        Boundary::Periodic,
        Boundary::Pec,
    ];
    let grid = Grid::new([20, 9, 14], [0.1, 0.12, 0.09], bc).unwrap();
    let dt = 0.9 * grid.dt_limit();
    let build = || {
        let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
        sim.fill_box([9, 3, 5], [11, 5, 8], 3.0, 0.2).unwrap();
        sim.add_plane_wave(PlaneWave {
            axis: 0,
            backward: true,
            polarization: Component::Ey,
            lo: [6, 0, 2],
            hi: [14, 9, 12],
            waveform: Waveform::Ricker { f0: 1.0, t0: 1.2 },
            amplitude: 1.0,
        })
        .unwrap();
        sim
    };
    let (mut fast, mut slow) = (build(), build());
    for _ in 0..60 {
        fast.step();
        slow.step_reference();
    }
    let (a, b) = (fast.fields(), slow.fields());
    let peak = a.ey.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = [
        (&a.ex, &b.ex),
        (&a.ey, &b.ey),
        (&a.hz, &b.hz),
        (&a.hx, &b.hx),
    ]
    .iter()
    .flat_map(|(x, y)| x.iter().zip(y.iter()).map(|(p, q)| (p - q).abs()))
    .fold(0.0f64, f64::max);
    println!("fast against reference: {diff:.2e} of a peak {peak:.3}");
    assert!(peak > 0.1 && diff < 1e-12 * peak.max(1.0), "{diff} {peak}");
}
