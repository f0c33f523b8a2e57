//! Helpers shared by the solver tests: quiet run options, and a plane wave meeting a
//! dispersive half-space for the FDTD media tests (each fills the half-space with its medium
//! and gives that medium's ε(ω); the reflection measured from a DFT monitor is compared with
//! Fresnel's).
// Not every helper is used by every test module.
#![allow(dead_code)]

use fdlab_solvers::output::read_npy;
use fdlab_solvers::{run, validate, Case, RunOptions};
use std::path::Path;

/// Options for a run that writes into `out` and prints nothing.
pub fn quiet(out: &Path) -> RunOptions {
    RunOptions {
        out_dir: Some(out.to_path_buf()),
        quiet: true,
        ..Default::default()
    }
}

/// The message a case file's text is refused with: its parse error, or else `validate`'s.
pub fn case_error(text: &str) -> String {
    match Case::parse(text, "c.toml".into()) {
        Err(e) => e.to_string(),
        Ok(case) => validate(&case, &quiet(&std::env::temp_dir()))
            .map(|_| ())
            .expect_err("expected an error")
            .to_string(),
    }
}

/// Runs the case `text` through, then again stopped at step 50 with checkpoints every 25 and
/// resumed to the end: its first DFT monitor's spectra must be the same bits.
pub fn resumed_monitor_matches(text: &str) {
    let case = Case::parse(text, "c.toml".into()).unwrap();
    let d1 = tempfile::tempdir().unwrap();
    let steps = run(&case, &quiet(d1.path())).unwrap().final_step;
    let (_, full) = read_npy(&d1.path().join("monitor_0.npy")).unwrap();
    assert!(full.iter().any(|v| v.abs() > 0.0));
    let d2 = tempfile::tempdir().unwrap();
    let mut o = quiet(d2.path());
    o.checkpoint_every = Some(25);
    o.stop_at = Some(50);
    assert_eq!(run(&case, &o).unwrap().final_step, 50);
    let mut o = quiet(d2.path());
    o.resume = Some(d2.path().join("checkpoints"));
    assert_eq!(run(&case, &o).unwrap().final_step, steps);
    let (_, resumed) = read_npy(&d2.path().join("monitor_0.npy")).unwrap();
    assert!(resumed == full, "resumed spectra differ");
}

use fdlab_solvers::fdtd::{
    Boundary, Component, Cpml, Fdtd, Grid, MonitorSpec, PointSource, Waveform,
};
use std::f64::consts::PI;

/// Fills the box `lo ..= hi` (cells) of a simulation with a medium.
pub type Medium<'a> = &'a dyn Fn(&mut Fdtd<f64>, [usize; 3], [usize; 3]);

/// `sqrt(a + ib)` on the principal branch.
fn csqrt(a: f64, b: f64) -> (f64, f64) {
    let r = a.hypot(b);
    ((0.5 * (r + a)).sqrt(), (0.5 * (r - a)).sqrt().copysign(b))
}

/// `|r| = |(1 − n)/(1 + n)|`, `n = sqrt(ε)`, `ε = a + ib`.
fn fresnel(eps: (f64, f64)) -> f64 {
    let n = csqrt(eps.0, eps.1);
    (1.0 - n.0).hypot(n.1) / (1.0 + n.0).hypot(n.1)
}

/// A plane wave along z in a 2 × 2 periodic cross-section (a sheet of Ex sources at z = 0.4,
/// CPML at both z ends): the spectrum of Ex at `freqs` on the plane z = 0.8, between the
/// sheet and a half-space from z = 1.2 filled with `medium` (vacuum when `None`).
fn plane_wave_run(medium: Option<Medium>, freqs: &[f64]) -> Vec<(f64, f64)> {
    let (d, nz) = (0.02, 100);
    let bc = [
        Boundary::Periodic,
        Boundary::Periodic,
        Boundary::Cpml(Cpml::new(10)),
    ];
    let grid = Grid::new([2, 2, nz], [d; 3], bc).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    if let Some(fill) = medium {
        // Through the far CPML, so no wave comes back from the end of the half-space.
        fill(&mut sim, [0, 0, 60], [1, 1, nz - 1]);
    }
    for j in 0..2 {
        for i in 0..2 {
            sim.add_source(PointSource {
                component: Component::Ex,
                cell: [i, j, 20],
                waveform: Waveform::ModulatedGaussian {
                    f0: 0.8,
                    t0: 3.0,
                    tau: 0.8,
                },
                amplitude: 1.0,
            })
            .unwrap();
        }
    }
    let duration = 14.0;
    let spec = MonitorSpec {
        axis: 2,
        index: 40,
        components: vec![Component::Ex],
        frequencies: freqs.to_vec(),
    };
    let id = sim.add_dft_monitor(spec, duration).unwrap();
    sim.run((duration / dt).round() as u64);
    (0..freqs.len())
        .map(|f| sim.monitor(id).value(f, 0, 0))
        .collect()
}

/// The worst relative error, at f = 0.6, 0.8 and 1.0, of the reflection `|r|` measured from a
/// half-space of `medium` against Fresnel's value for `eps(ω)`.
pub fn worst_reflection_error(name: &str, medium: Medium, eps: impl Fn(f64) -> (f64, f64)) -> f64 {
    let freqs = [0.6, 0.8, 1.0];
    let inc = plane_wave_run(None, &freqs);
    let tot = plane_wave_run(Some(medium), &freqs);
    let mut worst = 0.0f64;
    for (k, &f) in freqs.iter().enumerate() {
        let refl = (tot[k].0 - inc[k].0, tot[k].1 - inc[k].1);
        let measured = refl.0.hypot(refl.1) / inc[k].0.hypot(inc[k].1);
        let r = fresnel(eps(2.0 * PI * f));
        let err = (measured / r - 1.0).abs();
        eprintln!("{name} f = {f}: |r| measured {measured:.5}, Fresnel {r:.5}, error {err:.2e}");
        worst = worst.max(err);
    }
    worst
}
