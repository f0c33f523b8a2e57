//! The `fdlab` binary: bad input fails with a clear message and a non-zero exit, never a
//! panic; the CPU paths run end to end.

use std::process::{Command, Output};

fn fdlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        // No GPU in these tests even where one exists: CUDA paths are tested on the device.
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .output()
        .expect("fdlab runs")
}

fn fails_with(args: &[&str], needle: &str) {
    let out = fdlab(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(
        err.contains(needle),
        "{args:?}: stderr lacks {needle:?}:\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
}

#[test]
fn unknown_suite_names_the_valid_ones() {
    fails_with(
        &["bench", "--suite", "warp-speed"],
        "unknown suite 'warp-speed'; valid suites: nvidia-derivative",
    );
}

#[test]
fn unknown_backend_is_refused() {
    fails_with(&["bench", "--backend", "tpu"], "invalid value 'tpu'");
}

#[test]
fn unknown_precision_and_strategy_are_refused() {
    fails_with(
        &["bench", "--suite", "amd-laplacian", "--precision", "f16"],
        "unknown precision 'f16'",
    );
    fails_with(
        &["bench", "--suite", "amd-laplacian", "--strategy", "warp"],
        "unknown strategy 'warp'",
    );
}

#[test]
fn absurd_sizes_are_refused() {
    fails_with(&["bench", "--size", "0"], "--size 0");
    fails_with(&["bench", "--size", "4"], "at least 9");
    fails_with(&["bench", "--size", "1000000"], "--size 1000000");
}

#[test]
fn zero_reps_is_refused() {
    fails_with(
        &[
            "bench",
            "--backend",
            "cpu",
            "--suite",
            "amd-laplacian",
            "--size",
            "16",
            "--reps",
            "0",
        ],
        "--reps 0",
    );
}

#[test]
fn asking_for_cuda_without_a_gpu_says_why() {
    fails_with(
        &["bench", "--backend", "cuda"],
        "--backend cuda was asked for: no CUDA device",
    );
    fails_with(&["tune"], "no CUDA device");
}

#[test]
fn info_reports_the_cpu_and_why_no_gpu() {
    let out = fdlab(&["info"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("cpu:") && s.contains("cuda: none:"), "{s}");
}

#[test]
fn cpu_bench_writes_json_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("b.json");
    let png = dir.path().join("r.png");
    let out = fdlab(&[
        "bench",
        "--backend",
        "auto",
        "--suite",
        "amd-laplacian",
        "--size",
        "24",
        "--reps",
        "2",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["results"][0];
    for key in [
        "suite",
        "case",
        "backend",
        "strategy",
        "precision",
        "shape",
        "time_ms",
        "bytes",
        "gbps",
        "copy_gbps",
        "pct_of_copy",
        "rms_error",
        "max_error",
        "checked",
    ] {
        assert!(!r[key].is_null(), "missing {key}");
    }
    assert_eq!(r["backend"], "cpu");
    assert_eq!(r["checked"], true);
    assert!(v["meta"]["copy_gbps"].as_f64().unwrap() > 0.0);
    assert!(
        std::fs::metadata(&png).unwrap().len() > 10_000,
        "plot too small"
    );
    // The same JSON drawn again by `fdlab plot`, once as is and once keeping the best rows.
    for best in [false, true] {
        let again = dir.path().join(format!("again-{best}.png"));
        let mut args = vec![
            "plot",
            json.to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ];
        if best {
            args.push("--best");
        }
        let out = fdlab(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(std::fs::metadata(&again).unwrap().len() > 10_000);
    }
}

#[test]
fn plot_refuses_missing_and_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("p.png");
    fails_with(
        &[
            "plot",
            "/nonexistent/b.json",
            "--out",
            png.to_str().unwrap(),
        ],
        "reading /nonexistent/b.json",
    );
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"hello": 1}"#).unwrap();
    fails_with(
        &[
            "plot",
            foreign.to_str().unwrap(),
            "--out",
            png.to_str().unwrap(),
        ],
        "not a JSON file written by `fdlab bench --json`",
    );
}

#[test]
fn cpu_check_runs_every_case_and_passes() {
    let out = fdlab(&["check", "--backend", "cpu"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("checks passed") && !s.contains("FAIL"), "{s}");
}
