//! FDTD case files: parse and validation errors, an end-to-end run with probe output and
//! checkpoint resume, and the resonances of a PEC cavity run from a case file.

use fdlab_solvers::output::read_npy;
use fdlab_solvers::{run, validate, Case, Error};
use std::f64::consts::PI;

use crate::common;
use common::quiet;

/// A PEC box 1.0 × 0.8 × 0.4 (20 × 16 × 8 cells), Ricker source and probe on Ez.
const CAVITY: &str = r#"
physics = "fdtd"
[grid]
shape = [20, 16, 8]
spacing = [0.05, 0.05, 0.05]
[time]
cfl = 0.99
duration = 80.0
[fdtd]
boundary = ["pec", "pec", "pec"]
[[fdtd.sources]]
component = "ez"
position = [0.25, 0.3, 0.17]
waveform = "ricker"
f0 = 1.0
[[fdtd.probes]]
component = "ez"
position = [0.65, 0.55, 0.17]
[output]
dir = "out"
every = 1000000
"#;

fn parse(text: &str) -> fdlab_solvers::Result<Case> {
    Case::parse(text, "c.toml".into())
}

/// The validation error of `text` (parse or validate), as a string.
fn error_of(text: &str) -> String {
    match parse(text) {
        Err(e) => e.to_string(),
        Ok(case) => validate(&case, &quiet(&std::env::temp_dir()))
            .map(|_| ())
            .expect_err("expected an error")
            .to_string(),
    }
}

#[test]
fn fdtd_case_parses_and_validates() {
    let case = parse(CAVITY).unwrap();
    let p = validate(&case, &quiet(&std::env::temp_dir())).unwrap();
    let limit = 0.05 / 3f64.sqrt();
    assert!((p.plan.limit - limit).abs() < 1e-15);
    assert!((p.plan.dt - 0.99 * limit).abs() < 1e-15);
    assert_eq!(p.plan.steps, (80.0 / (0.99 * limit)).round() as u64);
}

#[test]
fn fdtd_unknown_keys_name_the_key() {
    let e = error_of(&CAVITY.replace("f0 = 1.0", "f0 = 1.0\nfrequency = 2.0"));
    assert!(e.contains("frequency") && e.contains("line"), "{e}");
    let e = error_of(&CAVITY.replace("[fdtd]", "[fdtd]\npml = 3"));
    assert!(e.contains("pml"), "{e}");
    let e = error_of(&CAVITY.replace("\"pec\", \"pec\", \"pec\"", "\"pec\", \"pml\", \"pec\""));
    assert!(e.contains("pml") && e.contains("periodic"), "{e}");
}

#[test]
fn fdtd_and_heat_wave_tables_do_not_mix() {
    let e = error_of(&CAVITY.replace(
        "physics = \"fdtd\"",
        "physics = \"fdtd\"\nboundary = \"periodic\"",
    ));
    assert!(e.contains("`boundary`") && e.contains("[fdtd]"), "{e}");
    let e = error_of(&CAVITY.replace("[[fdtd.probes]]\ncomponent = \"ez\"\n", "[[receivers]]\n"));
    assert!(e.contains("receivers") && e.contains("fdtd.probes"), "{e}");
    let bare =
        CAVITY.split("[fdtd]").next().unwrap().to_string() + "[output]\ndir = \"o\"\nevery = 1\n";
    let e = error_of(&bare);
    assert!(e.contains("missing table [fdtd]"), "{e}");
    let e = error_of(&bare.replace("\"fdtd\"", "\"wave\""));
    assert!(e.contains("missing field `boundary`"), "{e}");
    let e = error_of(&CAVITY.replace("\"fdtd\"", "\"wave\""));
    assert!(e.contains("[fdtd]") && e.contains("only for"), "{e}");
}

#[test]
fn fdtd_courant_limit_is_stated() {
    match parse(&CAVITY.replace("cfl = 0.99", "dt = 0.03")) {
        Ok(case) => match validate(&case, &quiet(&std::env::temp_dir())) {
            Err(Error::Unstable { dt, limit, why }) => {
                assert_eq!(dt, 0.03);
                assert!((limit - 0.05 / 3f64.sqrt()).abs() < 1e-15);
                assert!(why.contains("Courant"), "{why}");
            }
            other => panic!("expected Unstable, got {other:?}"),
        },
        Err(e) => panic!("{e}"),
    }
    let e = error_of(&CAVITY.replace("cfl = 0.99", "cfl = 1.5"));
    assert!(e.contains("cfl") && e.contains("Courant limit"), "{e}");
}

#[test]
fn fdtd_grid_must_be_3d() {
    let e = error_of(
        &CAVITY
            .replace("shape = [20, 16, 8]", "shape = [20, 16]")
            .replace("spacing = [0.05, 0.05, 0.05]", "spacing = [0.05, 0.05]"),
    );
    assert!(e.contains("grid.shape") && e.contains("2 axes"), "{e}");
    let e = error_of(&CAVITY.replace("[\"pec\", \"pec\", \"pec\"]", "[\"pec\", \"pec\"]"));
    assert!(e.contains("fdtd.boundary") && e.contains("2 values"), "{e}");
}

#[test]
fn fdtd_placements_outside_the_grid_are_refused() {
    let e = error_of(&CAVITY.replace("[0.25, 0.3, 0.17]", "[0.25, 0.3, 0.5]"));
    assert!(
        e.contains("fdtd.sources[0].position") && e.contains("outside"),
        "{e}"
    );
    let e = error_of(&CAVITY.replace("[0.65, 0.55, 0.17]", "[0.65, -0.2, 0.17]"));
    assert!(
        e.contains("fdtd.probes[0].position") && e.contains("outside"),
        "{e}"
    );
    // Ez at x = 0 lies on the x wall, where it is held at zero.
    let e = error_of(&CAVITY.replace("[0.25, 0.3, 0.17]", "[0.0, 0.3, 0.17]"));
    assert!(e.contains("PEC wall"), "{e}");
    let boxed = |lo: &str, hi: &str, extra: &str| {
        CAVITY.replace(
            "[output]",
            &format!("[[fdtd.materials]]\nlo = {lo}\nhi = {hi}\n{extra}\n[output]"),
        )
    };
    let e = error_of(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.9]", "eps_r = 2.0"));
    assert!(
        e.contains("fdtd.materials[0]") && e.contains("outside"),
        "{e}"
    );
    let e = error_of(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.01]", "eps_r = 2.0"));
    assert!(e.contains("no cell centre"), "{e}");
    let e = error_of(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.2]", "eps_r = 0.0"));
    assert!(e.contains("eps_r") && e.contains(">= 1"), "{e}");
    let e = error_of(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.2]", "eps_r = -2.0"));
    assert!(e.contains("eps_r") && e.contains("-2"), "{e}");
    let e = error_of(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.2]", "sigma = -1.0"));
    assert!(e.contains("sigma") && e.contains(">= 0"), "{e}");
    let ok = parse(&boxed("[0.0, 0.0, 0.0]", "[0.5, 0.5, 0.2]", "eps_r = 2.0")).unwrap();
    validate(&ok, &quiet(&std::env::temp_dir())).unwrap();
}

#[test]
fn fdtd_waveform_parameters_are_checked() {
    let e = error_of(&CAVITY.replace("f0 = 1.0\n", ""));
    assert!(
        e.contains("fdtd.sources[0].f0") && e.contains("missing"),
        "{e}"
    );
    let e = error_of(&CAVITY.replace("f0 = 1.0", "f0 = 1.0\ntau = 0.5"));
    assert!(e.contains("takes no tau"), "{e}");
    let e = error_of(&CAVITY.replace("f0 = 1.0", "f0 = -1.0"));
    assert!(e.contains("f0") && e.contains("positive"), "{e}");
    let e = error_of(&CAVITY.replace(
        "component = \"ez\"\nposition = [0.25",
        "component = \"hz\"\nposition = [0.25",
    ));
    assert!(e.contains("sources drive"), "{e}");
    let g = CAVITY.replace(
        "waveform = \"ricker\"\nf0 = 1.0",
        "waveform = \"modulated_gaussian\"\nf0 = 1.0\nt0 = 3.0\ntau = 1.0",
    );
    validate(&parse(&g).unwrap(), &quiet(&std::env::temp_dir())).unwrap();
}

#[test]
fn tiny_fdtd_case_runs_end_to_end_and_resumes() {
    let text = CAVITY
        .replace("duration = 80.0", "duration = 2.0")
        .replace("every = 1000000", "every = 20\npng = true\nnpy = true")
        .replace(
            "[output]",
            "[[fdtd.probes]]\ncomponent = \"hx\"\nposition = [0.5, 0.4, 0.2]\n[output]",
        );
    let case = parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = run(&case, &quiet(dir.path())).unwrap();
    assert_eq!(s.final_step, 70);
    for f in [
        "probe_0.npy",
        "probe_1.npy",
        "probes.json",
        "summary.json",
        "final.png",
        "field_0000020.npy",
    ] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
    let (shape, ez) = read_npy(&dir.path().join("probe_0.npy")).unwrap();
    assert_eq!(shape, vec![70]);
    assert!(ez.iter().any(|v| v.abs() > 0.0));
    let (shape, _) = read_npy(&dir.path().join("field_0000020.npy")).unwrap();
    assert_eq!(shape, vec![8, 16, 20]);

    // Stop at step 30 with a checkpoint, resume, and get the same probe series to the bit.
    let d2 = tempfile::tempdir().unwrap();
    let mut o = quiet(d2.path());
    o.checkpoint_every = Some(10);
    o.stop_at = Some(30);
    let s = run(&case, &o).unwrap();
    assert_eq!(s.final_step, 30);
    let mut o = quiet(d2.path());
    o.resume = Some(d2.path().join("checkpoints"));
    let s = run(&case, &o).unwrap();
    assert_eq!(s.final_step, 70);
    let (_, resumed) = read_npy(&d2.path().join("probe_0.npy")).unwrap();
    assert_eq!(resumed, ez);
}

/// Power spectrum of `x` (Hann window) at frequencies `f`, by a plain DFT.
fn power(x: &[f64], dt: f64, f: &[f64]) -> Vec<f64> {
    let n = x.len();
    f.iter()
        .map(|&fr| {
            let (mut re, mut im) = (0.0, 0.0);
            for (t, &v) in x.iter().enumerate() {
                let w = 0.5 - 0.5 * (2.0 * PI * t as f64 / (n - 1) as f64).cos();
                let ph = 2.0 * PI * fr * t as f64 * dt;
                re += w * v * ph.cos();
                im -= w * v * ph.sin();
            }
            re * re + im * im
        })
        .collect()
}

#[test]
fn pec_cavity_case_rings_at_its_resonances() {
    let case = parse(CAVITY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dt = validate(&case, &quiet(dir.path())).unwrap().plan.dt;
    let s = run(&case, &quiet(dir.path())).unwrap();
    let (_, ez) = read_npy(&dir.path().join("probe_0.npy")).unwrap();
    assert_eq!(ez.len() as u64, s.final_step);

    let df = 2e-4;
    let freqs: Vec<f64> = (0..5500).map(|i| 0.5 + df * i as f64).collect();
    let p = power(&ez, dt, &freqs);
    let top = p.iter().cloned().fold(0.0, f64::max);
    let mut peaks = Vec::new();
    for i in 1..p.len() - 1 {
        if p[i] > p[i - 1] && p[i] >= p[i + 1] && p[i] > 1e-3 * top {
            // A parabola through the log power places the peak between samples.
            let (a, b, c) = (p[i - 1].ln(), p[i].ln(), p[i + 1].ln());
            peaks.push(freqs[i] + 0.5 * (a - c) / (a - 2.0 * b + c) * df);
        }
    }

    // Modes with Ez ≠ 0: TM_mnp with m, n ≥ 1, p ≥ 0. The Yee scheme's own cavity modes obey
    // sin²(ωΔt/2)/Δt² = Σ sin²(k_a h/2)/h² with k_a = m_a π / L_a (the continuum is
    // f = ½·sqrt(Σ (m_a/L_a)²); the two differ by ~0.3% here).
    let (h, size) = (0.05, [1.0, 0.8, 0.4]);
    let mut modes: Vec<(f64, f64)> = Vec::new();
    for m in 1..4 {
        for n in 1..4 {
            for q in 0..3 {
                let k = [m, n, q].map(|i| i as f64 * PI);
                let k = [k[0] / size[0], k[1] / size[1], k[2] / size[2]];
                let exact = 0.5 * k.iter().map(|x| (x / PI).powi(2)).sum::<f64>().sqrt();
                let s: f64 = k.iter().map(|x| ((x * h / 2.0).sin() / h).powi(2)).sum();
                let discrete = 2.0 / dt * (dt * s.sqrt()).asin() / (2.0 * PI);
                modes.push((exact, discrete));
            }
        }
    }
    modes.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert!(peaks.len() >= 3, "found peaks {peaks:?}");
    for (i, &(exact, discrete)) in modes.iter().take(3).enumerate() {
        let err = (peaks[i] - discrete).abs() / discrete;
        println!(
            "peak {i}: {:.5}, Yee {discrete:.5} (error {err:.2e}), continuum {exact:.5}",
            peaks[i]
        );
        // The scheme's own modes to the spectrum's resolution, the physical ones within 0.5%.
        assert!(err < 1e-4, "peak {i}: {} vs Yee {discrete}", peaks[i]);
        let err = (peaks[i] - exact).abs() / exact;
        assert!(err < 5e-3, "peak {i}: {} vs continuum {exact}", peaks[i]);
    }
}
