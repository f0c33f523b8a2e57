//! `fdlab run` never loses a user's run: real `fdlab` processes killed with SIGKILL at random
//! moments leave only complete files under final names; SIGTERM and SIGUSR1 write a checkpoint
//! that resumes bit-identically; a resumed run writes into its own run directory and its
//! `summary.json` covers the whole run; a directory holding another run is refused unless
//! `--overwrite`. Every run is on the CPU (`--backend cpu`), so the tests mean the same on a GPU
//! machine.

use fdlab_solvers::output::read_npy;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A 2-D heat case: a Gaussian diffusing on an `n × n` periodic grid for `steps` steps, with
/// outputs every `every` steps into `out` (relative to the case file).
fn heat_case(
    dir: &Path,
    name: &str,
    n: usize,
    steps: usize,
    every: usize,
    outputs: &str,
) -> PathBuf {
    let c = n as f64 / 2.0;
    let text = format!(
        "physics = \"heat\"\nboundary = \"periodic\"\n\
         [grid]\nshape = [{n}, {n}]\nspacing = [1.0, 1.0]\n\
         [time]\ndt = 0.1\nduration = {}\n\
         [initial]\ngaussian = {{ center = [{c}, {c}], width = {}, amplitude = 1.0 }}\n\
         [material]\ndiffusivity = {{ constant = 1.0 }}\n\
         [output]\ndir = \"out\"\nevery = {every}\n{outputs}\n",
        steps as f64 * 0.1,
        n as f64 / 8.0
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn fdlab(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fdlab"));
    c.args(["run", "--backend", "cpu", "--quiet"])
        .args(args)
        .current_dir(dir);
    c
}

fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let out = fdlab(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "fdlab run {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file under `dir` (recursively) whose name does not start with a dot, by relative
/// path, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                m.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    m
}

/// A small random generator (xorshift), seeded from the clock; the seed is printed so that a
/// failure can be replayed.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("FDLAB_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("seed {seed} (FDLAB_TEST_SEED={seed} replays it)");
        Rng(seed)
    }

    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Wait until `path` exists (the run has started stepping), at most 60 s.
fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

const ALL_OUTPUTS: &str = "npy = true\nvti = true\npng = true\nframes = true\ngif = true";

#[test]
fn kill_9_at_random_moments_leaves_only_complete_files() {
    let dir = tempfile::tempdir().unwrap();
    let case = heat_case(dir.path(), "case.toml", 128, 100, 5, ALL_OUTPUTS);
    let case = case.to_str().unwrap();
    let reference = dir.path().join("reference");
    let t = Instant::now();
    run_ok(dir.path(), &[case, "--out", reference.to_str().unwrap()]);
    let whole = t.elapsed().as_secs_f64();
    let expect = files(&reference);
    assert!(expect.keys().any(|p| p.to_string_lossy().ends_with(".vti")));
    let mut rng = Rng::new();
    for round in 0..20 {
        let out = dir.path().join(format!("killed-{round}"));
        let mut child = fdlab(dir.path(), &[case, "--out", out.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs_f64(rng.unit() * whole));
        child.kill().unwrap();
        child.wait().unwrap();
        for (name, bytes) in files(&out) {
            let shown = name.display();
            let n = name.to_string_lossy();
            if n.ends_with(".pvd") {
                // Rewritten as each field arrives: complete, and naming only files that exist.
                let text = String::from_utf8(bytes).unwrap();
                assert!(
                    text.trim_end().ends_with("</VTKFile>"),
                    "round {round}: {shown}"
                );
                for f in text.split("file=\"").skip(1) {
                    let f = f.split('"').next().unwrap();
                    assert!(out.join(f).exists(), "round {round}: {shown} lists {f}");
                }
            } else if n == "summary.json" {
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap();
            } else {
                // Outputs are deterministic: a complete file equals the uninterrupted run's.
                let want = expect
                    .get(&name)
                    .unwrap_or_else(|| panic!("round {round}: unexpected {shown}"));
                assert!(
                    bytes == *want,
                    "round {round}: {shown} differs from the complete run's ({} of {} bytes)",
                    bytes.len(),
                    want.len()
                );
                if n.ends_with(".npy") {
                    read_npy(&out.join(&name)).unwrap();
                }
            }
        }
    }
}

/// A run stopped by `sig` exits with 128 + `sig`, leaves a checkpoint, and resuming it ends
/// with exactly the field of an uninterrupted run.
#[test]
fn sigterm_and_sigusr1_leave_a_checkpoint_that_resumes_bit_identically() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that a signal sent soon after the first output lands mid-run.
    let steps = 60_000;
    let case = heat_case(dir.path(), "case.toml", 64, steps, steps, "npy = true");
    let case = case.to_str().unwrap();
    let whole = dir.path().join("whole");
    run_ok(dir.path(), &[case, "--out", whole.to_str().unwrap()]);
    let last = format!("field_{steps:07}.npy");
    let want = std::fs::read(whole.join(&last)).unwrap();
    for sig in [libc::SIGTERM, libc::SIGUSR1] {
        let out = dir.path().join(format!("signalled-{sig}"));
        let child = fdlab(dir.path(), &[case, "--out", out.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for(&out.join("field_0000000.npy"));
        std::thread::sleep(Duration::from_millis(50));
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(128 + sig),
            "{text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains("checkpoint"), "{text}");
        assert!(!out.join(&last).exists(), "the run ended before the signal");
        let resumed = run_ok(
            dir.path(),
            &[case, "--resume", out.join("checkpoints").to_str().unwrap()],
        );
        assert!(String::from_utf8_lossy(&resumed.stdout).contains(&out.display().to_string()));
        assert!(
            std::fs::read(out.join(&last)).unwrap() == want,
            "signal {sig}: resumed field differs"
        );
    }
}

#[test]
fn a_resume_writes_into_its_run_and_its_summary_covers_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let case = heat_case(dir.path(), "case.toml", 48, 60, 5, "npy = true\ngif = true");
    let case = case.to_str().unwrap();
    // A finished run in the case's own directory, which the resume must not touch.
    run_ok(dir.path(), &[case]);
    let default_dir = dir.path().join("out");
    let finished = files(&default_dir);
    let b = dir.path().join("b");
    let b_str = b.to_str().unwrap();
    // Stops at 23, not a multiple of 10: the stop itself must leave a checkpoint.
    run_ok(
        dir.path(),
        &[
            case,
            "--out",
            b_str,
            "--stop-at",
            "23",
            "--checkpoint-every",
            "10",
        ],
    );
    assert!(b.join("checkpoints/step-000000023/header.json").exists());
    // A killed checkpoint write and a killed field write left these behind.
    std::fs::create_dir_all(b.join("checkpoints/.tmp-step-000000030-99999")).unwrap();
    std::fs::write(b.join(".fdlab-tmp-99999-field_0000025.npy"), b"half").unwrap();
    let r = run_ok(
        dir.path(),
        &[case, "--resume", &format!("{b_str}/checkpoints")],
    );
    assert!(String::from_utf8_lossy(&r.stdout).contains(b_str));
    assert_eq!(
        files(&default_dir),
        finished,
        "the resume touched the case's default directory"
    );
    assert!(!b.join("checkpoints/.tmp-step-000000030-99999").exists());
    assert!(!b.join(".fdlab-tmp-99999-field_0000025.npy").exists());
    // The whole run's fields and animation, as if it had never stopped.
    let mine = files(&b);
    for (name, bytes) in &finished {
        if name.to_string_lossy() != "summary.json" {
            assert!(
                mine.get(name) == Some(bytes),
                "{} differs after the resume",
                name.display()
            );
        }
    }
    let s: serde_json::Value = serde_json::from_slice(&mine[Path::new("summary.json")]).unwrap();
    assert_eq!(s["final_step"], 60);
    assert_eq!(s["steps"], 60);
    assert_eq!(s["complete"], true);
    assert_eq!(s["dt"], 0.1);
    assert!(s["schedule"].as_str().is_some_and(|t| !t.is_empty()));
    let segs = s["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(
        (segs[0]["from_step"].as_u64(), segs[0]["to_step"].as_u64()),
        (Some(0), Some(23))
    );
    assert_eq!(segs[0]["ended"], "stop-at");
    assert_eq!(
        (segs[1]["from_step"].as_u64(), segs[1]["to_step"].as_u64()),
        (Some(23), Some(60))
    );
    // An --out that names another directory than the checkpoint's run is refused.
    let o = fdlab(
        dir.path(),
        &[
            case,
            "--resume",
            &format!("{b_str}/checkpoints"),
            "--out",
            "elsewhere",
        ],
    )
    .output()
    .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("drop --out"));
}

#[test]
fn a_directory_holding_another_run_is_refused_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let first = heat_case(dir.path(), "a.toml", 32, 40, 10, "npy = true");
    let second = heat_case(dir.path(), "b.toml", 32, 40, 20, "npy = true");
    run_ok(dir.path(), &[first.to_str().unwrap()]);
    let out = dir.path().join("out");
    let before = files(&out);
    assert!(before.contains_key(Path::new("field_0000010.npy")));
    // A note of the user's own stays whatever happens.
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let o = fdlab(dir.path(), &[second.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--overwrite") && err.contains("field_*.npy"),
        "{err}"
    );
    assert!(!err.starts_with("invalid case"), "{err}");
    let mut kept = before.clone();
    kept.insert("notes.txt".into(), b"mine".to_vec());
    assert_eq!(files(&out), kept, "a refused run changed the directory");
    let o = run_ok(dir.path(), &[second.to_str().unwrap(), "--overwrite"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("removed") && err.contains("field_*.npy"),
        "{err}"
    );
    let after = files(&out);
    assert!(
        !after.contains_key(Path::new("field_0000010.npy")),
        "an old field was left"
    );
    assert!(after.contains_key(Path::new("field_0000020.npy")));
    assert_eq!(after[Path::new("notes.txt")], b"mine");
}

#[test]
fn checkpoint_every_zero_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let case = heat_case(dir.path(), "case.toml", 16, 10, 5, "npy = true");
    let o = fdlab(
        dir.path(),
        &[case.to_str().unwrap(), "--checkpoint-every", "0"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("--checkpoint-every"), "{err}");
    assert!(
        !dir.path().join("out").exists(),
        "work was done before the refusal"
    );
}

/// A 2-D wave case with `shots` shots along a line (a `[geometry]` table), each long enough
/// that a signal lands inside it; a field every 500 steps and a seismogram per shot.
fn shot_case(dir: &Path, shots: usize) -> PathBuf {
    let mut csv = "x,y\n".to_string();
    for s in 0..shots {
        csv += &format!("{},40\n", 40 + 20 * s);
    }
    std::fs::write(dir.join("sources.csv"), csv).unwrap();
    let text = "physics = \"wave\"\nboundary = { cpml = { thickness = 10 } }\n\
         [grid]\nshape = [160, 120]\nspacing = [1.0, 1.0]\n\
         [time]\ndt = 0.25\nduration = 500.0\n\
         [material]\nvelocity = { constant = 1.0 }\n\
         [geometry]\nsources = \"sources.csv\"\nfrequency = 0.05\n\
         [[receivers]]\nposition = [80.0, 80.0]\n[[receivers]]\nposition = [120.5, 60.0]\n\
         [output]\ndir = \"out\"\nevery = 500\nnpy = true\n";
    let p = dir.join("shots.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_killed_or_stopped_shot_run_resumes_to_the_uninterrupted_bits() {
    let dir = tempfile::tempdir().unwrap();
    let case = shot_case(dir.path(), 4);
    let case = case.to_str().unwrap();
    let whole = dir.path().join("whole");
    let out = run_ok(dir.path(), &[case, "--out", whole.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4 of 4 shots complete"), "{text}");
    let npys = |dir: &Path| {
        let mut m = files(dir);
        m.retain(|p, _| p.extension().is_some_and(|e| e == "npy"));
        m
    };
    let want = npys(&whole.join("shots"));
    assert_eq!(
        want.keys()
            .filter(|p| p.ends_with("seismogram.npy"))
            .count(),
        4
    );
    // kill -9 after shot 1 is done, then SIGTERM inside a shot: each resumes to the bits.
    for sig in [libc::SIGKILL, libc::SIGTERM] {
        let run = dir.path().join(format!("signalled-{sig}"));
        let child = fdlab(dir.path(), &[case, "--out", run.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for(&run.join("shots/0001/summary.json"));
        wait_for(&run.join("shots/0002/field_0000000.npy"));
        std::thread::sleep(Duration::from_millis(30));
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        if sig == libc::SIGTERM {
            assert_eq!(o.status.code(), Some(128 + sig), "{log}");
        }
        assert!(
            !run.join("shots/0003/summary.json").exists(),
            "the run ended before the signal: {log}"
        );
        let shot0 = std::fs::read(run.join("shots/0000/seismogram.npy")).unwrap();
        let before = std::fs::metadata(run.join("shots/0000/seismogram.npy"))
            .unwrap()
            .modified()
            .unwrap();
        // A fresh run into it is refused; --resume finishes it.
        let refused = fdlab(dir.path(), &[case, "--out", run.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!refused.status.success());
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("--resume"),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
        let resumed = run_ok(dir.path(), &[case, "--resume", run.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&resumed.stdout);
        assert!(text.contains("4 of 4 shots complete"), "{text}");
        let got = npys(&run.join("shots"));
        let differ: Vec<_> = want
            .keys()
            .filter(|k| got.get(*k) != want.get(*k))
            .collect();
        assert!(
            differ.is_empty(),
            "signal {sig}: resumed shots differ: {differ:?}"
        );
        let after = std::fs::metadata(run.join("shots/0000/seismogram.npy"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "shot 0 was written again");
        assert_eq!(
            std::fs::read(run.join("shots/0000/seismogram.npy")).unwrap(),
            shot0
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["complete"], true, "{summary}");
        // A killed process writes no summary.json: the resumed run's is the first.
        let starts = if sig == libc::SIGKILL { 1 } else { 2 };
        let segments = summary["segments"].as_array().unwrap().len();
        assert_eq!(segments, starts, "{summary}");
    }
}

#[test]
fn shot_cases_check_and_refuse_what_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let case = shot_case(dir.path(), 3);
    let case = case.to_str().unwrap();
    let out = run_ok(dir.path(), &[case, "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2000 steps per shot, 3 shots"), "{text}");
    let refused = |args: &[&str], needle: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(needle),
            "{args:?}: {err}"
        );
        o.status.code()
    };
    refused(
        &["run", case, "--gpus", "2"],
        "a case with shots runs each shot whole",
    );
    refused(
        &["run", case, "--stop-at", "10"],
        "--stop-at stops a single run",
    );
    let code = refused(
        &["gradient", case, "--observed", "out"],
        "fdlab gradient takes one shot, and this case lists 3",
    );
    assert_eq!(code, Some(2));
}
