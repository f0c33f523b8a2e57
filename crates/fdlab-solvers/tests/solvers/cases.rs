//! Case files end to end: every example at a small size, bad input, checkpoints, Ctrl-C and a
//! kill during checkpoint writes.

use fdlab_solvers::output::{read_npy, write_npy};
use fdlab_solvers::{checkpoint, run, validate, Case, Error, RunOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::quiet;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cases")
}

#[test]
fn every_example_runs_at_a_small_size() {
    let mut n = 0;
    for e in std::fs::read_dir(cases_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("toml") {
            continue;
        }
        let mut case = Case::load(&p).unwrap();
        validate(&case, &quiet(&std::env::temp_dir()))
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        if !p.to_string_lossy().contains("npy") {
            case.coarsen(4);
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut o = quiet(tmp.path());
        // A case with shots runs whole shots; its first shot's outputs are checked.
        let shots = case.has_shots();
        if !shots {
            o.stop_at = Some(30);
        }
        let s = run(&case, &o).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        if !shots {
            assert_eq!(s.final_step, 30.min(s.final_step));
        }
        let dir = if shots {
            tmp.path().join("shots/0000")
        } else {
            tmp.path().to_path_buf()
        };
        let out = &case.spec.output;
        assert_eq!(dir.join("final.png").exists(), out.png, "{}", p.display());
        assert_eq!(
            dir.join("animation.gif").exists(),
            out.gif,
            "{}",
            p.display()
        );
        assert!(dir.join("summary.json").exists());
        if out.npy {
            let (shape, data) = read_npy(&dir.join("field_0000000.npy")).unwrap();
            assert_eq!(shape.iter().product::<usize>(), data.len());
        }
        if !case.spec.receivers.is_empty() || shots {
            assert!(dir.join("seismogram.png").exists());
        }
        n += 1;
    }
    assert!(n >= 6, "found {n} example cases");
}

const SMALL_HEAT: &str = r#"
physics = "heat"
boundary = "periodic"
[grid]
shape = [24, 20]
spacing = [1.0, 1.0]
[time]
dt = 0.05
duration = 2.0
[material]
diffusivity = { constant = 1.0 }
[initial.gaussian]
center = [12.0, 10.0]
width = 2.0
amplitude = 1.0
[output]
dir = "out"
every = 10
npy = true
"#;

#[test]
fn unknown_and_missing_keys_name_the_key_and_line() {
    let bad = SMALL_HEAT.replace("spacing = [1.0, 1.0]", "spacing = [1.0, 1.0]\nspacin = 2");
    let e = Case::parse(&bad, "x.toml".into()).unwrap_err().to_string();
    assert!(e.contains("spacin") && e.contains("line 7"), "{e}");
    let missing = SMALL_HEAT.replace("duration = 2.0\n", "");
    let e = Case::parse(&missing, "x.toml".into())
        .unwrap_err()
        .to_string();
    assert!(e.contains("duration") && e.contains("line"), "{e}");
    // A missing [output] table is named, with what to write.
    let cut = SMALL_HEAT.find("[output]").expect("the case has outputs");
    let e = Case::parse(&SMALL_HEAT[..cut], "x.toml".into())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("missing table [output]") && e.contains("every ="),
        "{e}"
    );
}

#[test]
fn a_bad_order_is_named_once_with_its_line() {
    let case = Case::parse(
        &SMALL_HEAT.replace("[output]", "[scheme]\norder = 7\n[output]"),
        "x.toml".into(),
    )
    .unwrap();
    let e = validate(&case, &quiet(&std::env::temp_dir()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scheme.order (line") && e.contains("= 7: use an even order"),
        "{e}"
    );
    assert_eq!(e.matches("invalid case").count(), 1, "{e}");
    assert_eq!(e.matches("scheme.order").count(), 1, "{e}");
}

#[test]
fn unstable_time_step_is_refused_with_the_limit() {
    let case = Case::parse(
        &SMALL_HEAT.replace("dt = 0.05", "dt = 0.3"),
        "x.toml".into(),
    )
    .unwrap();
    match validate(&case, &quiet(&std::env::temp_dir())) {
        Err(Error::Unstable { dt, limit, .. }) => {
            assert_eq!(dt, 0.3);
            // 2-D, 4th order, κ = 1, h = 1: λ_max = 2·16/3, limit = 2/λ_max.
            assert!((limit - 0.1875).abs() < 1e-12, "{limit}");
        }
        other => panic!("expected Unstable, got {other:?}"),
    }
}

#[test]
fn out_of_grid_receiver_and_unwritable_dir_fail_before_running() {
    let wave = std::fs::read_to_string(cases_dir().join("wave-3d.toml")).unwrap();
    let case = Case::parse(
        &wave.replace("[44.0, 32.0, 32.0]", "[99.0, 32.0, 32.0]"),
        "w.toml".into(),
    )
    .unwrap();
    let e = validate(&case, &quiet(&std::env::temp_dir()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("receivers[0]") && e.contains("line"), "{e}");
    let case = Case::parse(SMALL_HEAT, "x.toml".into()).unwrap();
    let e = run(&case, &quiet(Path::new("/proc/fdlab-not-writable"))).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
}

#[test]
fn non_finite_values_stop_with_step_and_cell() {
    let dir = tempfile::tempdir().unwrap();
    let mut init = vec![0.0; 24 * 20];
    // Finite (a non-finite initial field is refused before running) but overflowing at step 1.
    init[5 + 24 * 7] = 1e308;
    write_npy(&dir.path().join("init.npy"), &[20, 24], &init).unwrap();
    let text = SMALL_HEAT.replace(
        "[initial.gaussian]\ncenter = [12.0, 10.0]\nwidth = 2.0\namplitude = 1.0",
        "[initial]\nnpy = \"init.npy\"",
    );
    let case = Case::parse(&text, dir.path().join("x.toml")).unwrap();
    match run(&case, &quiet(&dir.path().join("out"))) {
        Err(Error::NonFinite { step, cell, .. }) => {
            assert_eq!(step, 1);
            assert!(
                cell[0].abs_diff(5) <= 2 && cell[1].abs_diff(7) <= 2,
                "{cell:?}"
            );
        }
        other => panic!("expected NonFinite, got {other:?}"),
    }
}

#[test]
fn resume_is_bit_identical_and_foreign_checkpoints_are_refused() {
    let text = std::fs::read_to_string(cases_dir().join("wave-3d.toml")).unwrap();
    let mut case = Case::parse(&text, "w.toml".into()).unwrap();
    case.coarsen(2);
    case.spec.output.vti = false;
    case.spec.output.npy = true;
    case.spec.output.every = 10;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let full = run(&case, &quiet(a.path())).unwrap();
    let mut o = quiet(b.path());
    o.checkpoint_every = Some(10);
    o.stop_at = Some(20);
    run(&case, &o).unwrap();
    o.stop_at = None;
    o.resume = Some(b.path().join("checkpoints"));
    let resumed = run(&case, &o).unwrap();
    assert_eq!(resumed.final_step, full.final_step);
    let last = format!("field_{:07}.npy", full.final_step);
    assert_eq!(
        std::fs::read(a.path().join(&last)).unwrap(),
        std::fs::read(b.path().join(&last)).unwrap()
    );
    assert_eq!(
        std::fs::read(a.path().join("seismogram.npy")).unwrap(),
        std::fs::read(b.path().join("seismogram.npy")).unwrap()
    );
    let mut other = case.clone();
    other.spec.precision = fdlab_core::Precision::F32;
    let e = run(&other, &o).unwrap_err().to_string();
    assert!(e.contains("precision"), "{e}");
    other = case.clone();
    other.spec.scheme.order = 4;
    let e = run(&other, &o).unwrap_err().to_string();
    assert!(e.contains("another case"), "{e}");
}

/// Runs a case with the arguments in `FDLAB_SOLVE_ARGS` (separated by `\x1f`: the case file,
/// then `--checkpoint-every N` and `--resume DIR` as `fdlab run` takes them) and exits with
/// `fdlab run`'s status; the tests below start this test binary as a child process this way.
#[test]
fn child_solve() {
    let Ok(args) = std::env::var("FDLAB_SOLVE_ARGS") else {
        return;
    };
    let args: Vec<String> = args.split('\x1f').map(String::from).collect();
    let mut opts = RunOptions {
        quiet: true,
        ..RunOptions::default()
    };
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--checkpoint-every" => opts.checkpoint_every = it.next().and_then(|v| v.parse().ok()),
            "--resume" => opts.resume = it.next().map(PathBuf::from),
            _ => {}
        }
    }
    let code = match Case::load(&args[0]).and_then(|case| run(&case, &opts)) {
        Ok(s) => {
            println!("{s}");
            s.exit_code()
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn solve(args: &[String]) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "cases::child_solve",
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("FDLAB_SOLVE_ARGS", args.join("\x1f"));
    c
}

fn write_case(dir: &Path, n: usize, steps: usize) -> PathBuf {
    let text = SMALL_HEAT
        .replace("shape = [24, 20]", &format!("shape = [{n}, {n}, {n}]"))
        .replace("spacing = [1.0, 1.0]", "spacing = [1.0, 1.0, 1.0]")
        .replace("center = [12.0, 10.0]", "center = [10.0, 10.0, 10.0]")
        .replace("dt = 0.05", "dt = 0.02")
        .replace(
            "duration = 2.0",
            &format!("duration = {}", steps as f64 * 0.02),
        )
        .replace("every = 10", &format!("every = {steps}"));
    let p = dir.join("case.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn ctrl_c_writes_a_checkpoint_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let case = write_case(dir.path(), 40, 100_000);
    let args = [case.to_str().unwrap(), "--checkpoint-every", "1000000"].map(String::from);
    let child = solve(&args).stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("interrupted"), "{text}");
    let cps = checkpoint::list(&dir.path().join("out/checkpoints")).unwrap();
    assert_eq!(cps.len(), 1);
    checkpoint::read(&cps[0]).unwrap();
}

#[test]
fn a_kill_during_checkpoint_writes_never_corrupts_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let case = write_case(dir.path(), 48, 400);
    let root = dir.path().join("out/checkpoints");
    let mut seen = 0;
    for round in 0..4 {
        let mut args = vec![
            case.to_str().unwrap().to_string(),
            "--checkpoint-every".into(),
            "1".into(),
        ];
        if round > 0 {
            args.extend(["--resume".into(), root.to_str().unwrap().to_string()]);
        }
        let mut child = solve(&args).stdout(Stdio::null()).spawn().unwrap();
        let t = Instant::now();
        // Kill at varying times once checkpoints are being written.
        while t.elapsed() < Duration::from_millis(300 + 170 * round) {
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        for cp in checkpoint::list(&root).unwrap_or_default() {
            let (_, h, _) = checkpoint::read(&cp).unwrap_or_else(|e| panic!("round {round}: {e}"));
            seen = seen.max(h.step);
        }
    }
    assert!(seen > 0, "no checkpoint was written before the kills");
}

#[test]
fn too_little_disk_space_is_refused_before_running() {
    // 2048² points written as .npy at every one of ~10⁶ steps: far more than any disk holds.
    let text = SMALL_HEAT
        .replace("shape = [24, 20]", "shape = [2048, 2048]")
        .replace("dt = 0.05", "dt = 0.0001")
        .replace("duration = 2.0", "duration = 100.0")
        .replace("every = 10", "every = 1");
    let case = Case::parse(&text, "x.toml".into()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    match validate(&case, &quiet(dir.path())) {
        Err(Error::DiskSpace { needed, free, .. }) => assert!(needed > free),
        other => panic!("expected DiskSpace, got {other:?}"),
    }
}
