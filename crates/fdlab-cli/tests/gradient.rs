//! `fdlab gradient` end to end on the CPU: observed data from `fdlab run`, the gradient of a
//! case with another velocity, its files and shapes; a seismogram of the wrong shape, an
//! output directory holding an earlier gradient and `--backend cuda` are refused before any
//! work with exit status 2.

use fdlab_solvers::output::read_npy;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A 2-D wave case of 30 × 26 points with a CPML of 6 cells, a fixed `dt` (so that another
/// velocity keeps the step count), one source, two receivers, and `velocity` as the body of
/// `[material.velocity]`; outputs into `out` (relative to the case file).
fn wave_case(dir: &Path, name: &str, velocity: &str, out: &str) -> PathBuf {
    let text = format!(
        "physics = \"wave\"\nprecision = \"f64\"\n\
         [grid]\nshape = [30, 26]\nspacing = [1.0, 1.0]\n\
         [time]\ndt = 0.25\nduration = 16.0\n\
         [scheme]\norder = 4\n\
         [material.velocity]\n{velocity}\n\
         [[sources]]\nposition = [15.0, 9.0]\nfrequency = 0.2\namplitude = 1.0\n\
         [[receivers]]\nposition = [9.0, 18.0]\n\
         [[receivers]]\nposition = [21.0, 18.0]\n\
         [boundary.cpml]\nthickness = 6\n\
         [output]\ndir = \"{out}\"\nevery = 1000\n"
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn fdlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit status; stderr:\n{err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert!(!err.contains("panicked"), "panicked:\n{err}");
}

#[test]
fn gradient_of_a_wave_case_against_observed_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let observed = wave_case(
        dir,
        "observed.toml",
        "layered = { axis = 1, tops = [0.0, 14.0], values = [1.5, 1.8] }",
        "obs",
    );
    let model = wave_case(dir, "model.toml", "constant = 1.5", "model");
    ok(
        &fdlab(
            dir,
            &[
                "run",
                observed.to_str().unwrap(),
                "--backend",
                "cpu",
                "--quiet",
            ],
        ),
        "fdlab run",
    );
    let args = [
        "gradient",
        model.to_str().unwrap(),
        "--observed",
        "obs",
        "--out",
        "grad",
        "--checkpoints",
        "5",
        "--quiet",
    ];
    let stdout = ok(&fdlab(dir, &args), "fdlab gradient");
    assert!(stdout.contains("misfit"), "{stdout}");
    let g = dir.join("grad");
    let shape = |f: &str| read_npy(&g.join(f)).unwrap().0;
    let steps = 64;
    assert_eq!(shape("gradient.npy"), [26, 30]);
    assert_eq!(shape("image.npy"), [26, 30]);
    assert_eq!(shape("source_gradient.npy"), [1, steps]);
    assert_eq!(shape("residual.npy"), [2, steps]);
    assert!(g.join("gradient.vti").is_file());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(g.join("misfit.json")).unwrap()).unwrap();
    assert!(report["misfit"].as_f64().unwrap() > 0.0, "{report}");
    assert_eq!(report["steps"], steps);
    assert_eq!(report["checkpoints"], 5);
    assert!(report["recompute_factor"].as_f64().unwrap() > 1.0);
    let (_, grad) = read_npy(&g.join("gradient.npy")).unwrap();
    assert!(grad.iter().any(|v| *v != 0.0) && grad.iter().all(|v| v.is_finite()));

    // A second run into the same folder is refused without --overwrite, allowed with it.
    refused(&fdlab(dir, &args), "--overwrite");
    let mut again = args.to_vec();
    again.push("--overwrite");
    ok(&fdlab(dir, &again), "fdlab gradient --overwrite");

    // A seismogram of other receivers or steps is refused, naming both shapes.
    let short = wave_case(dir, "short.toml", "constant = 1.5", "short");
    let text = std::fs::read_to_string(&short)
        .unwrap()
        .replace("duration = 16.0", "duration = 8.0");
    std::fs::write(&short, text).unwrap();
    ok(
        &fdlab(
            dir,
            &[
                "run",
                short.to_str().unwrap(),
                "--backend",
                "cpu",
                "--quiet",
            ],
        ),
        "fdlab run (short)",
    );
    let out = fdlab(
        dir,
        &[
            "gradient",
            model.to_str().unwrap(),
            "--observed",
            "short",
            "--out",
            "g2",
        ],
    );
    refused(&out, "[2, 32]");
    refused(&out, "[2, 64]");
    assert!(!dir.join("g2").join("misfit.json").exists());

    // Only the CPU runs the adjoint.
    let out = fdlab(
        dir,
        &[
            "gradient",
            model.to_str().unwrap(),
            "--observed",
            "obs",
            "--backend",
            "cuda",
        ],
    );
    refused(&out, "GPU adjoint is not available yet");
}
