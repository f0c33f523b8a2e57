//! `summary.json`'s `startup`: where the time from the process's start to the first step went,
//! for each segment of a run.

use std::path::Path;
use std::process::Command;

/// The parts of `startup` that add up to `first_step_s`.
const PARTS: [&str; 8] = [
    "launch_s",
    "case_s",
    "coefficients_s",
    "stepper_s",
    "kernels_s",
    "device_s",
    "run_dir_s",
    "initial_outputs_s",
];

/// A small 3-D wave case with a layered velocity, a CPML, a source and a receiver.
fn small_wave(dir: &Path) -> String {
    let text = r#"
physics = "wave"
[grid]
shape = [24, 20, 18]
spacing = [5.0, 5.0, 5.0]
[time]
cfl = 0.5
duration = 0.01
[scheme]
order = 8
[material.velocity.layered]
axis = 2
tops = [0.0, 40.0]
values = [1500.0, 2500.0]
[[sources]]
position = [60.0, 50.0, 30.0]
frequency = 40.0
[[receivers]]
position = [30.0, 50.0, 30.0]
[boundary.cpml]
thickness = 5
[output]
dir = "out"
every = 10
npy = true
"#;
    let p = dir.join("case.toml");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .current_dir(dir)
        .env("FDLAB_BACKEND", "cpu")
        .output()
        .expect("fdlab runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_startup(seg: &serde_json::Value) {
    let s = &seg["startup"];
    let total = s["first_step_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no startup.first_step_s in {seg}"));
    assert!(total.is_finite() && total > 0.0, "{s}");
    let mut sum = 0.0;
    for k in PARTS {
        let v = s[k]
            .as_f64()
            .unwrap_or_else(|| panic!("no startup.{k} in {s}"));
        assert!(v.is_finite() && v >= 0.0, "startup.{k} = {v}");
        sum += v;
    }
    assert!(
        sum <= total + 1e-6,
        "parts {sum} > first_step_s {total}: {s}"
    );
    // The parts are consecutive stretches of the whole: together they are nearly all of it.
    assert!(
        sum >= total - 1e-3,
        "parts {sum} leave out much of {total}: {s}"
    );
    // A CPU run compiles nothing and uploads nothing.
    assert_eq!(s["kernels_s"].as_f64(), Some(0.0));
    assert_eq!(s["device_s"].as_f64(), Some(0.0));
}

/// Each segment, a resumed run's included, records its startup; the CLI's clock starts at
/// the process's start, so the launch part is there too.
#[test]
fn each_segment_says_where_the_time_before_its_first_step_went() {
    let dir = tempfile::tempdir().unwrap();
    let case = small_wave(dir.path());
    run(
        dir.path(),
        &[
            "run",
            &case,
            "--quiet",
            "--backend",
            "cpu",
            "--stop-at",
            "5",
        ],
    );
    run(
        dir.path(),
        &[
            "run",
            &case,
            "--quiet",
            "--backend",
            "cpu",
            "--resume",
            "out/checkpoints",
        ],
    );
    let text = std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let segments = v["segments"].as_array().expect("segments");
    assert_eq!(segments.len(), 2, "{text}");
    for seg in segments {
        check_startup(seg);
    }
    assert!(segments[0]["startup"]["coefficients_s"].as_f64() > Some(0.0));
}
