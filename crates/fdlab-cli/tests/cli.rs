//! The `fdlab` binary: bad input fails with a clear message and a non-zero exit, never a
//! panic; the CPU paths run end to end. Every run selects the CPU with `FDLAB_BACKEND=cpu`
//! (unless it names a backend), so the tests mean the same on a GPU machine.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `fdlab` in `dir` on the CPU backend.
fn fdlab_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .current_dir(dir)
        .env("FDLAB_BACKEND", "cpu")
        .output()
        .expect("fdlab runs")
}

fn fdlab(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    fdlab_in(dir.path(), args)
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

fn gpu_present() -> bool {
    fdlab_cuda::probe().is_ok()
}

/// Runs a CPU bench in a fresh folder and returns its JSON and stdout.
fn cpu_bench(args: &[&str]) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("b.json");
    let mut all = vec!["bench", "--reps", "1", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = fdlab_in(dir.path(), &all);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{all:?}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (v, stdout)
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
        "unknown strategy family 'warp'",
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
    if gpu_present() {
        eprintln!("skipped: a GPU is present, so --backend cuda succeeds here");
        return;
    }
    fails_with(
        &["bench", "--backend", "cuda"],
        "--backend cuda was asked for: no CUDA device",
    );
    fails_with(&["tune"], "no CUDA device");
}

#[test]
fn info_reports_the_cpu_and_the_gpu_or_why_none() {
    let out = fdlab(&["info"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("cpu:") && s.contains("cuda: "), "{s}");
    if !gpu_present() {
        assert!(s.contains("cuda: none:"), "{s}");
    }
}

#[test]
fn cpu_bench_writes_json_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("b.json");
    let png = dir.path().join("r.png");
    let out = fdlab_in(
        dir.path(),
        &[
            "bench",
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
        ],
    );
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
    // No temporary file is left next to the JSON.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".partial")), "{names:?}");
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

/// `fdlab check` passes on the CPU and writes only what `--json FILE` asks for: the kernel
/// table as FILE and the solvers' checks beside it as FILE.solvers.json (it once left a
/// results folder in the working directory, a clone's status dirty after a check). One run
/// for both: the whole check is the slowest CLI test.
#[test]
fn cpu_check_runs_every_case_passes_and_writes_where_json_asks() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sub/c.json");
    let out = fdlab_in(dir.path(), &["check", "--json", json.to_str().unwrap()]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("checks passed") && !s.contains("FAIL"), "{s}");
    assert!(
        s.contains("n/a = cases the strategy does not support"),
        "{s}"
    );
    let rows: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("sub/c.solvers.json")).unwrap(),
    )
    .unwrap();
    assert!(!rows.as_array().unwrap().is_empty(), "{rows}");
    assert!(json.exists(), "no kernel table at {json:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "check wrote {left:?}");
    let written: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
    assert_eq!(written.len(), 2, "{written:?}");
}

#[test]
fn laplace_variants_at_size_64_fit_the_grid() {
    let (v, _) = cpu_bench(&["--suite", "laplace-variants", "--size", "64"]);
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in rows {
        let (rms, max) = (
            r["rms_error"].as_f64().unwrap(),
            r["max_error"].as_f64().unwrap(),
        );
        // Second order at h = 1/64: about 8π²·(2πh)²/12 ≈ 0.6 at most; 1e4 before the fix.
        assert!(
            rms < 1.0 && max < 1.0,
            "{}: RMS {rms:e} MAX {max:e}",
            r["case"]
        );
        assert_eq!(r["checked"], true);
    }
}

#[test]
fn amd_laplacian_at_size_2048_is_refused_before_allocating() {
    let t = std::time::Instant::now();
    fails_with(
        &["bench", "--suite", "amd-laplacian", "--size", "2048"],
        "GiB of host memory",
    );
    assert!(
        t.elapsed().as_secs() < 30,
        "refused only after {:?}",
        t.elapsed()
    );
}

#[test]
fn bad_output_paths_fail_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let base = ["bench", "--suite", "amd-laplacian", "--size", "16"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let cases: [(Vec<String>, &str); 8] = [
        (with(&["--plot", d]), "is a folder"),
        (with(&["--plot", &format!("{d}/x.svg")]), "ending in .png"),
        (with(&["--json", d]), "is a folder"),
        (
            with(&["--json", &format!("{d}/f"), "--plot", &format!("{d}/f")]),
            "both name",
        ),
        // A folder that takes no new file (even for root): refused before the run, not
        // after it as it was.
        (
            with(&["--json", "/proc/fdlab-b.json"]),
            "cannot write in /proc",
        ),
        (
            with(&["--plot", "/proc/fdlab-r.png"]),
            "cannot write in /proc",
        ),
        (
            vec!["check".into(), "--json".into(), "/proc/fdlab-c.json".into()],
            "cannot write in /proc",
        ),
        (
            vec![
                "bench".into(),
                "--suite".into(),
                "solvers".into(),
                "--size".into(),
                "32".into(),
                "--json".into(),
                "/proc/fdlab-s.json".into(),
            ],
            "cannot write in /proc",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let t = std::time::Instant::now();
        fails_with(&args, needle);
        assert!(
            t.elapsed().as_secs() < 5,
            "{args:?} failed only after the run"
        );
    }
    let same = format!("{d}/same.png");
    fails_with(
        &[&base[..], &["--json", &same, "--plot", &same]].concat(),
        "both name",
    );
    assert!(!Path::new(&same).exists(), "a half-written file was left");
}

#[test]
fn gpu_only_options_are_refused_on_the_cpu() {
    fails_with(
        &[
            "bench",
            "--suite",
            "amd-laplacian",
            "--strategy",
            "naive-32x4x1",
        ],
        "--strategy applies to the CUDA backend only",
    );
    fails_with(
        &[
            "bench",
            "--suite",
            "amd-laplacian",
            "--coefficients",
            "constant",
        ],
        "--coefficients applies to the CUDA backend only",
    );
    fails_with(
        &["check", "--strategy", "naive-32x4x1"],
        "--strategy applies to the CUDA backend only",
    );
    fails_with(
        &["check", "--backend", "cpu", "--only", "temporal"],
        "--only temporal check GPU steppers",
    );
}

#[test]
fn size_9_keeps_every_row() {
    let (v, out) = cpu_bench(&[
        "--suite",
        "nvidia-derivative",
        "--suite",
        "laplace-variants",
        "--suite",
        "amd-laplacian",
        "--size",
        "9",
    ]);
    let rows = v["results"].as_array().unwrap();
    // d/dx, d/dy, d/dz; 1-D and 2-D Laplacians; the 3-D interior Laplacian.
    assert_eq!(rows.len(), 6, "{out}");
    for r in rows {
        let shape: Vec<u64> = r["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert!(shape.iter().all(|&n| n == 9 || n == 1), "{shape:?}");
    }
}

#[test]
fn rows_stream_under_a_header_and_a_legend() {
    let (_, out) = cpu_bench(&["--suite", "amd-laplacian", "--size", "16"]);
    let header = out.find("RMS err").expect("a header");
    let legend = out.find("chk: yes").expect("a legend");
    let first = out.find("amd-laplacian ").expect("a row");
    assert!(header < first && legend < first, "{out}");
    assert!(out.contains("copy with non-temporal stores"), "{out}");
}

#[test]
fn json_goes_to_a_results_folder_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = fdlab_in(
        dir.path(),
        &[
            "bench",
            "--suite",
            "amd-laplacian",
            "--size",
            "16",
            "--reps",
            "1",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let files: Vec<_> = std::fs::read_dir(dir.path().join("fdlab-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(err.contains("wrote fdlab-results/bench-cpu-"), "{err}");
}

#[test]
fn solvers_suite_times_heat_wave_and_fdtd_steps_on_the_cpu() {
    let (v, stdout) = cpu_bench(&["--suite", "solvers", "--size", "32"]);
    let rows = v["solvers"].as_array().expect("solver rows");
    assert_eq!(rows.len(), 22, "{stdout}");
    for r in rows {
        assert!(r["pct_of_copy"].as_f64().unwrap() > 0.0, "{r}");
        let depth = if r["case"].as_str().unwrap().contains("seismic") {
            16
        } else {
            32
        };
        assert_eq!(r["shape"], serde_json::json!([32, 32, depth]));
    }
    let cases: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    // Each case in f32, then f64.
    let names = [
        "heat3d-2nd",
        "wave3d-8th",
        "wave3d-8th-periodic",
        "wave3d-8th-cpml20",
        "wave3d-8th-seismic",
        "wave3d-8th-seismic-periodic",
        "fdtd3d-yee",
        "fdtd3d-yee-cpml",
        "fdtd3d-yee-drude",
        "fdtd3d-yee-cpml-drude",
        "fdtd3d-full",
    ];
    let want: Vec<&str> = names.iter().flat_map(|n| [*n, *n]).collect();
    assert_eq!(cases, want);
    assert!(stdout.contains("%copy"), "{stdout}");
}

#[test]
fn solvers_suite_refuses_what_does_not_apply() {
    fails_with(
        &["bench", "--suite", "solvers", "--suite", "roofline"],
        "runs on its own",
    );
    fails_with(
        &["bench", "--suite", "solvers", "--plot", "x.png"],
        "--plot",
    );
    // Where a GPU is present the command would run the suite instead.
    if !std::path::Path::new("/dev/nvidia0").exists() {
        fails_with(
            &["bench", "--suite", "solvers", "--backend", "cuda"],
            "no usable GPU",
        );
    }
    fails_with(
        &["bench", "--suite", "solvers", "--size", "8"],
        "32 to 2048",
    );
}

#[test]
fn fdtd_suite_times_the_fdtd_step_alone() {
    let (v, stdout) = cpu_bench(&["--suite", "fdtd", "--size", "32"]);
    let rows = v["solvers"].as_array().expect("rows");
    // On the CPU only (the tests run with the CPU backend): the PEC and the CPML box, without
    // and with a Drude sphere, f32 and f64 each.
    assert_eq!(rows.len(), 8, "{stdout}");
    let cases: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(
        cases,
        [
            "fdtd3d-yee",
            "fdtd3d-yee",
            "fdtd3d-yee-cpml",
            "fdtd3d-yee-cpml",
            "fdtd3d-yee-drude",
            "fdtd3d-yee-drude",
            "fdtd3d-yee-cpml-drude",
            "fdtd3d-yee-cpml-drude"
        ]
    );
    for r in rows {
        assert_eq!(r["backend"], "cpu", "{r}");
        assert!(r["cell_updates_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    fails_with(
        &["bench", "--suite", "fdtd", "--suite", "solvers"],
        "runs on its own",
    );
}

/// The repository's example case `name`, as an absolute path.
fn example(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cases");
    root.join(name).to_string_lossy().into_owned()
}

#[test]
fn gpu_split_runs_check_without_a_gpu_and_refuse_what_they_cannot_do() {
    let heat = example("heat-3d-layered.toml");
    let out = fdlab(&["run", &heat, "--gpus", "2", "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("2 GPU parts, process grid [1, 1, 2]"),
        "{text}"
    );
    fails_with(
        &["run", &heat, "--gpus", "0"],
        "invalid value '0' for '--gpus <N>': give a positive count",
    );
    fails_with(
        &["run", &heat, "--gpus"],
        "a value is required for '--gpus <N>'",
    );
    fails_with(
        &[
            "run",
            &heat,
            "--gpus",
            "2",
            "--process-grid",
            "2x1x1",
            "--check",
        ],
        "give --process-grid 1x1x2",
    );
    fails_with(
        &["run", &heat, "--gpus", "2", "--backend", "cpu"],
        "--gpus runs on GPUs",
    );
    // A CPML splits; variable density is refused before any step, with or without a GPU.
    let out = fdlab(&["run", &example("wave-3d.toml"), "--gpus", "2", "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("2 GPU parts"),
        "{text}"
    );
    fails_with(
        &[
            "run",
            &example("wave-density.toml"),
            "--gpus",
            "2",
            "--check",
        ],
        "variable-density waves (material.density) on several processes or GPUs",
    );
    if !gpu_present() {
        fails_with(&["run", &heat, "--gpus", "2", "--quiet"], "--gpus");
    }
}

#[test]
fn scaling_suite_needs_gpus() {
    if gpu_present() {
        return;
    }
    fails_with(
        &["bench", "--suite", "scaling", "--backend", "cuda"],
        "--suite scaling: no usable GPU",
    );
    fails_with(
        &["bench", "--suite", "scaling", "--backend", "cpu"],
        "splits a grid over GPUs",
    );
}

/// A temporal-suite JSON (the committed H100 run) draws the temporal chart: % of the copy
/// against the steps per pass, not a roofline (its rows have no FLOP counts to draw).
#[test]
fn plot_draws_the_temporal_suite() {
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/results/h100/temporal.json");
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("temporal.png");
    let out = fdlab(&[
        "plot",
        json.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("rows)"), "{err}");
    assert!(
        std::fs::metadata(&png).unwrap().len() > 10_000,
        "plot too small"
    );
}

/// A small 2-D heat case (20 steps, outputs in `out/` beside it), written into `dir`.
fn small_heat(dir: &Path) -> String {
    let text = r#"
physics = "heat"
boundary = "periodic"
[grid]
shape = [24, 20]
spacing = [1.0, 1.0]
[time]
dt = 0.05
duration = 1.0
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
    let p = dir.join("case.toml");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// `fdlab run` alone used to print its usage and exit 0, so a script with a missing
/// argument went on as if the run had succeeded.
#[test]
fn run_without_a_case_fails_with_usage() {
    let out = fdlab(&["run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("Usage: fdlab run") && err.contains("<CASE>"),
        "{err}"
    );
}

/// Every option of `fdlab run` has a help sentence (the help was one usage line).
#[test]
fn run_help_explains_every_option() {
    let out = fdlab(&["run", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for (option, says) in [
        ("--check", "Only validate the case"),
        ("--checkpoint-every <N>", "Write a checkpoint every N steps"),
        ("--resume <DIR>", "Continue a run from a checkpoint"),
        ("--out <DIR>", "Write the outputs here"),
        ("--stop-at <STEP>", "Stop after this step"),
        ("--backend <BACKEND>", "Where to step the case"),
        ("--quiet", "No progress bar"),
        ("--overwrite", "Replace the files of an earlier run"),
        (
            "--process-grid <AxB[xC]>",
            "Split the grid over a process grid",
        ),
        ("--gpus <N>", "Split the grid over N parts"),
        (
            "--exchange <EXCHANGE>",
            "How a split run's parts trade halos",
        ),
        ("--no-overlap", "Step each part's interior only after"),
    ] {
        let at = help
            .find(option)
            .unwrap_or_else(|| panic!("{option} missing:\n{help}"));
        assert!(help[at..].contains(says), "{option}: no help:\n{help}");
    }
    assert!(help.contains("SIGTERM and SIGUSR1"), "{help}");
}

/// Option errors say what to give, and never read as a fault of the case file.
#[test]
fn run_option_errors_say_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let case = small_heat(dir.path());
    let refused = [
        (
            vec!["--checkpoint-every", "0"],
            "invalid value '0' for '--checkpoint-every <N>'",
        ),
        (vec!["--checkpoint-every", "x"], "1 or more"),
        (vec!["--process-grid", "2x2"], "add --gpus N"),
        (vec!["--process-grid", "2x0", "--gpus", "2"], "e.g. 2x2"),
        (
            vec!["--stop-at", "soon"],
            "invalid value 'soon' for '--stop-at",
        ),
        (
            vec!["--backend", "tpu"],
            "[possible values: auto, cpu, cuda]",
        ),
        (vec!["--frobnicate"], "unexpected argument '--frobnicate'"),
        (
            vec!["--schedule", "wave:pass=k2", "--check"],
            "a wave schedule was given to a heat case",
        ),
        (
            vec!["--schedule", "heat:launch=64x64x8:a0:v1:u0:r0"],
            "at most 1024 threads a block",
        ),
        (
            vec!["--schedule", "heat:tile=3"],
            "the fields are launch, pass",
        ),
        (
            vec!["--schedule", "heat:pass=off", "--backend", "cpu"],
            "this run is on the CPU (--backend cpu): drop --schedule",
        ),
        (
            vec!["--exchange", "staged"],
            "apply to split runs: add --gpus N",
        ),
    ];
    for (extra, needle) in refused {
        let args: Vec<&str> = ["run", case.as_str()].into_iter().chain(extra).collect();
        let out = fdlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(
            err.contains(needle),
            "{args:?}: stderr lacks {needle:?}:\n{err}"
        );
        assert!(!err.contains("invalid case"), "{args:?}:\n{err}");
    }
    // Nothing was run or created by a refused command.
    assert!(!dir.path().join("out").exists());
}

/// `--schedule` belongs to the solver suites: a stencil suite refuses it before any work.
#[test]
fn bench_refuses_a_schedule_for_stencil_suites() {
    fails_with(
        &[
            "bench",
            "--suite",
            "roofline",
            "--schedule",
            "heat:pass=off",
        ],
        "does not apply to --suite roofline",
    );
    fails_with(
        &[
            "bench",
            "--suite",
            "solvers",
            "--schedule",
            "fdtd:pass=maybe",
        ],
        "give on or off",
    );
}

/// `--overwrite` reaches the run: a second run into the first one's directory is refused
/// without it and replaces the outputs with it.
#[test]
fn run_refuses_an_earlier_runs_directory_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let case = small_heat(dir.path());
    let first = fdlab(&["run", &case, "--quiet", "--backend", "cpu"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(dir.path().join("out/summary.json").exists());
    fails_with(
        &["run", &case, "--quiet", "--backend", "cpu"],
        "give --overwrite",
    );
    let again = fdlab(&["run", &case, "--quiet", "--backend", "cpu", "--overwrite"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// `--check` prints the case's warnings (what runs but probably not as meant) after its
/// validation line, as a run does before its first step.
#[test]
fn run_check_prints_the_cases_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example("wave-layered.toml"))
        .unwrap()
        .replace("duration = 0.9", "duration = 0.05");
    let case = dir.path().join("short.toml");
    std::fs::write(&case, text).unwrap();
    let out = fdlab(&["run", case.to_str().unwrap(), "--check"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("short.toml: ok (Wave"), "{stdout}");
    assert!(
        stderr.contains("warning: sources[0]:") && stderr.contains("peaks after the last step"),
        "{stderr}"
    );
}

/// The help says what the code does: `run` takes FDTD cases too, and every whole-step suite
/// is listed with where it runs (`solvers` once said "on the CPU"; fdtd, temporal and
/// scaling were missing).
#[test]
fn help_names_every_physics_and_suite() {
    let top = String::from_utf8_lossy(&fdlab(&["--help"]).stdout).to_string();
    assert!(top.contains("heat, acoustic wave or FDTD Maxwell"), "{top}");
    let bench = String::from_utf8_lossy(&fdlab(&["bench", "--help"]).stdout).to_string();
    for says in [
        "`solvers` (the heat, wave and FDTD steps on the GPU when one is usable, else on the CPU",
        "`fdtd` (",
        "`temporal` (GPU only",
        "`scaling` (GPU only",
    ] {
        assert!(bench.contains(says), "{says}:\n{bench}");
    }
}

/// A variable-density case checks like any other, and a split of it is refused before any
/// work, saying what to do.
#[test]
fn a_density_case_checks_and_refuses_what_it_cannot_do() {
    let case = example("wave-density.toml");
    let out = fdlab(&["run", &case, "--check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fails_with(
        &["run", &case, "--gpus", "2", "--check"],
        "variable-density waves (material.density) on several processes or GPUs; run the case on one",
    );
}
