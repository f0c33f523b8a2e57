//! Cases with shots: each shot's outputs equal its single-shot case's bit for bit, geometry
//! files give the same shots as `[[shots]]` blocks, bad geometry is refused before any work,
//! and a resumed shot run skips finished shots and continues a stopped one exactly.

use crate::common::{case_error, quiet};
use fdlab_solvers::output::{read_npy, write_npy};
use fdlab_solvers::run_shots::shot_dir;
use fdlab_solvers::{run, validate, Case, Error, RunOptions};
use std::path::Path;

/// A 2-D layered model with a CPML; `shots` is appended (shot blocks or a `[geometry]`).
fn model(precision: &str, shots: &str) -> String {
    format!(
        r#"
physics = "wave"
precision = "{precision}"
boundary = {{ cpml = {{ thickness = 6 }} }}
[grid]
shape = [48, 36]
spacing = [10.0, 10.0]
[time]
dt = 0.0015
duration = 0.12
[scheme]
order = 4
[material.velocity.layered]
axis = 1
tops = [0.0, 180.0]
values = [2000.0, 3000.0]
[output]
dir = "out"
every = 20
npy = true
{shots}
"#
    )
}

/// Three shots: on and between grid points, shared and own receivers, a wavelet file.
const SHOTS: &str = r#"
[[receivers]]
position = [200.0, 120.0]
[[receivers]]
position = [305.0, 125.0]

[[shots]]
[[shots.sources]]
position = [100.0, 100.0]
frequency = 15.0

[[shots]]
[[shots.sources]]
position = [252.5, 97.5]
frequency = 15.0
amplitude = 2.0
[[shots.sources]]
position = [150.0, 200.0]
frequency = 15.0
wavelet = "w.npy"
[[shots.receivers]]
position = [100.0, 250.0]

[[shots]]
[[shots.sources]]
position = [370.0, 150.0]
frequency = 15.0
delay = 0.05
"#;

/// Every `.npy` of directory `a` equals the one of the same name in `b`, byte for byte.
fn same_npy(a: &Path, b: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(a).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "npy") {
            let name = p.file_name().unwrap();
            let other = std::fs::read(b.join(name))
                .unwrap_or_else(|e| panic!("{}: {e}", b.join(name).display()));
            assert!(
                std::fs::read(&p).unwrap() == other,
                "{} differs",
                p.display()
            );
            n += 1;
        }
    }
    n
}

fn write_case(dir: &Path, text: &str) -> Case {
    let path = dir.join("c.toml");
    std::fs::write(&path, text).unwrap();
    let w: Vec<f64> = (0..60).map(|k| (k as f64 * 0.3).sin()).collect();
    write_npy(&dir.join("w.npy"), &[60], &w).unwrap();
    Case::load(&path).unwrap()
}

#[test]
fn each_shot_equals_its_single_shot_case_bit_for_bit() {
    for precision in ["f64", "f32"] {
        let d = tempfile::tempdir().unwrap();
        let case = write_case(d.path(), &model(precision, SHOTS));
        assert!(case.has_shots());
        let out = d.path().join("run");
        let s = run(&case, &quiet(&out)).unwrap();
        assert!(!s.interrupted);
        let shots = case.shots().unwrap();
        assert_eq!(shots.len(), 3);
        assert_eq!(s.steps, 3 * 80);
        for (i, shot) in shots.iter().enumerate() {
            let one = case.shot_case(shot);
            assert!(!one.has_shots());
            let alone = d.path().join(format!("alone-{i}"));
            run(&one, &quiet(&alone)).unwrap();
            let got = shot_dir(&out, i);
            // Fields every 20 steps and the seismogram.
            assert_eq!(same_npy(&alone, &got), 6, "{precision} shot {i}");
        }
        let (shape, _) = read_npy(&shot_dir(&out, 1).join("seismogram.npy")).unwrap();
        assert_eq!(shape, [1, 80], "shot 1 has a receiver of its own");
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["shots"], 3);
        assert_eq!(summary["complete"], true);
        assert_eq!(summary["shot_list"][2]["steps"], 80);
        assert_eq!(summary["segments"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn a_case_without_shots_runs_as_before() {
    let d = tempfile::tempdir().unwrap();
    let text = model("f64", "")
        + "[[sources]]\nposition = [100.0, 100.0]\nfrequency = 15.0\n\
           [[receivers]]\nposition = [200.0, 120.0]\n";
    let case = write_case(d.path(), &text);
    assert!(!case.has_shots() && case.shots().unwrap().is_empty());
    run(&case, &quiet(d.path())).unwrap();
    assert!(d.path().join("seismogram.npy").exists());
    assert!(!d.path().join("shots").exists());
}

/// The shots of `SHOTS` without the second one's extra source and wavelet, as positions.
const SOURCES: [[f64; 2]; 3] = [[100.0, 100.0], [252.5, 97.5], [370.0, 150.0]];
const RECEIVERS: [[f64; 2]; 2] = [[200.0, 120.0], [305.0, 125.0]];

fn inline_shots() -> String {
    let mut t = String::new();
    for x in SOURCES {
        t += &format!(
            "[[shots]]\n[[shots.sources]]\nposition = [{}, {}]\nfrequency = 15.0\n",
            x[0], x[1]
        );
        for r in RECEIVERS {
            t += &format!("[[shots.receivers]]\nposition = [{}, {}]\n", r[0], r[1]);
        }
    }
    t
}

#[test]
fn npy_and_csv_geometry_give_the_shots_of_shot_blocks() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let flat = |v: &[[f64; 2]]| v.iter().flatten().copied().collect::<Vec<f64>>();
    write_npy(&p.join("src.npy"), &[3, 2], &flat(&SOURCES)).unwrap();
    write_npy(&p.join("rec.npy"), &[2, 2], &flat(&RECEIVERS)).unwrap();
    // Per-shot receivers as a 3-D array: the same two for each shot.
    let per: Vec<f64> = (0..3).flat_map(|_| flat(&RECEIVERS)).collect();
    write_npy(&p.join("rec3.npy"), &[3, 2, 2], &per).unwrap();
    std::fs::write(
        p.join("src.csv"),
        "x, y\n100, 100\n252.5, 97.5\n# a comment\n370, 150\n",
    )
    .unwrap();
    let mut rec = "shot,x,y\n".to_string();
    for s in 0..3 {
        for r in RECEIVERS {
            rec += &format!("{s},{},{}\n", r[0], r[1]);
        }
    }
    std::fs::write(p.join("rec.csv"), rec).unwrap();
    let reference = write_case(p, &model("f64", &inline_shots()));
    let want = reference.shots().unwrap();
    for (src, rec) in [
        ("src.npy", "rec.npy"),
        ("src.npy", "rec3.npy"),
        ("src.csv", "rec.csv"),
        ("src.csv", "rec.npy"),
    ] {
        let g =
            format!("[geometry]\nsources = \"{src}\"\nreceivers = \"{rec}\"\nfrequency = 15.0\n");
        let case = write_case(p, &model("f64", &g));
        assert_eq!(case.shots().unwrap(), want, "{src} {rec}");
    }
    // And the run matches too.
    let case = write_case(
        p,
        &model(
            "f64",
            "[geometry]\nsources = \"src.csv\"\nreceivers = \"rec.npy\"\nfrequency = 15.0\n",
        ),
    );
    run(&case, &quiet(&p.join("g"))).unwrap();
    let reference = write_case(p, &model("f64", &inline_shots()));
    run(&reference, &quiet(&p.join("i"))).unwrap();
    for i in 0..3 {
        assert_eq!(
            same_npy(&shot_dir(&p.join("g"), i), &shot_dir(&p.join("i"), i)),
            6
        );
    }
}

/// The error of a case whose `[geometry]` is `geometry`, with `files` written beside it.
fn geometry_error(
    geometry: &str,
    files: &[(&str, &[usize], &[f64])],
    csv: &[(&str, &str)],
) -> Error {
    let d = tempfile::tempdir().unwrap();
    for (name, shape, data) in files {
        write_npy(&d.path().join(name), shape, data).unwrap();
    }
    for (name, text) in csv {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    let case = write_case(d.path(), &model("f64", geometry));
    validate(&case, &quiet(&d.path().join("out"))).expect_err("refused")
}

#[test]
fn bad_geometry_files_are_refused_naming_file_key_and_row() {
    let g = |src: &str| format!("[geometry]\nsources = \"{src}\"\nfrequency = 15.0\n");
    let cases: Vec<(Error, &str)> = vec![
        (
            geometry_error(&g("s.npy"), &[("s.npy", &[3, 3], &[1.0; 9])], &[]),
            "shape [3, 3]: give [shots, 2] (one source a shot) or [shots, sources, 2]",
        ),
        (
            geometry_error(
                &g("s.npy"),
                &[("s.npy", &[2, 2], &[100.0, 100.0, f64::NAN, 1.0])],
                &[],
            ),
            "shot 1, position 0: [NaN, 1.0] is not finite",
        ),
        (
            geometry_error(&g("s.npy"), &[("s.npy", &[1, 2], &[100.0, 900.0])], &[]),
            "shot 0, position 0: [100.0, 900.0] is outside the grid",
        ),
        (
            geometry_error(&g("s.csv"), &[], &[("s.csv", "x,y\n100,100\n100,-5\n")]),
            "shot 1, position 0: [100.0, -5.0] is outside the grid",
        ),
        (
            geometry_error(&g("s.csv"), &[], &[("s.csv", "x,z\n100,100\n")]),
            "column \"z\" is not one of a 2-D table's",
        ),
        (
            geometry_error(&g("s.csv"), &[], &[("s.csv", "x,y\n100,abc\n")]),
            "line 2: y = \"abc\" is not a number",
        ),
        (
            geometry_error(
                &g("s.csv"),
                &[],
                &[("s.csv", "shot,x,y\n0,100,100\n2,100,100\n")],
            ),
            "shot 1 has no rows",
        ),
        (
            geometry_error(&g("s.txt"), &[], &[("s.txt", "")]),
            "give an .npy array or a .csv table",
        ),
        (
            geometry_error(
                "[geometry]\nsources = \"s.npy\"\nreceivers = \"r.npy\"\nfrequency = 15.0\n",
                &[
                    ("s.npy", &[2, 2], &[100.0; 4]),
                    ("r.npy", &[3, 1, 2], &[100.0; 6]),
                ],
                &[],
            ),
            "receivers for 3 shots, and geometry.sources has 2",
        ),
        (
            geometry_error(
                "[geometry]\nsources = \"s.npy\"\nwavelet = \"w2.npy\"\nfrequency = 15.0\n",
                &[
                    ("s.npy", &[2, 2], &[100.0; 4]),
                    ("w2.npy", &[3, 10], &[0.0; 30]),
                ],
                &[],
            ),
            "shape [3, 10]: give [steps] (every shot's wavelet) or [2, steps]",
        ),
    ];
    for (e, want) in cases {
        assert!(matches!(e, Error::Geometry { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(want), "{text}\nwanted: {want}");
        assert!(text.contains("geometry."), "{text}");
    }
}

#[test]
fn shot_keys_are_refused_where_they_cannot_apply() {
    let shot = "[[shots]]\n[[shots.sources]]\nposition = [100.0, 100.0]\nfrequency = 15.0\n";
    let geometry = "[geometry]\nsources = \"s.npy\"\nfrequency = 15.0\n";
    for (text, want) in [
        (
            model("f64", &format!("{shot}{geometry}")),
            "either as [[shots]] blocks or as [geometry] files, not both",
        ),
        (
            model(
                "f64",
                &format!("[[sources]]\nposition = [1.0, 1.0]\nfrequency = 1.0\n{shot}"),
            ),
            "move each [[sources]] into a [[shots.sources]] block",
        ),
        (
            model(
                "f64",
                "[[shots]]\n[[shots.receivers]]\nposition = [100.0, 100.0]\n",
            ),
            "shots[0].sources",
        ),
        (
            model(
                "f64",
                "[[shots]]\n[[shots.sources]]\nposition = [100.0, 9000.0]\nfrequency = 15.0\n",
            ),
            "shots[0].sources[0].position",
        ),
        (
            model(
                "f64",
                &format!("{shot}[material.density]\nconstant = 1000.0\n"),
            ),
            "shots run the constant-density step only",
        ),
        (
            model("f64", shot)
                .replace("physics = \"wave\"", "physics = \"heat\"")
                .replace(
                    "boundary = { cpml = { thickness = 6 } }",
                    "boundary = \"periodic\"",
                )
                .replace("velocity.layered", "diffusivity.layered"),
            "shots drive wave cases only",
        ),
    ] {
        let e = case_error(&text);
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
}

#[test]
fn a_resumed_shot_run_skips_finished_shots_and_continues_a_stopped_one() {
    let d = tempfile::tempdir().unwrap();
    let case = write_case(d.path(), &model("f64", SHOTS));
    let full = d.path().join("full");
    run(&case, &quiet(&full)).unwrap();
    // A run killed in shot 1: shot 0 done, shot 1 stopped at step 30 with a checkpoint
    // (as its single-shot case writes it), shot 2 not started.
    let part = d.path().join("part");
    let shots = case.shots().unwrap();
    let mut o = quiet(&shot_dir(&part, 0));
    run(&case.shot_case(&shots[0]), &o).unwrap();
    o = quiet(&shot_dir(&part, 1));
    o.stop_at = Some(30);
    assert_eq!(run(&case.shot_case(&shots[1]), &o).unwrap().final_step, 30);
    let before = std::fs::metadata(shot_dir(&part, 0).join("seismogram.npy"))
        .unwrap()
        .modified()
        .unwrap();
    // A fresh run into it is refused; --resume finishes it.
    let e = run(&case, &quiet(&part)).expect_err("refused");
    assert!(e.to_string().contains("--resume"), "{e}");
    let o = RunOptions {
        resume: Some(part.clone()),
        quiet: true,
        ..Default::default()
    };
    let s = run(&case, &o).unwrap();
    assert_eq!(s.steps, 50 + 80, "shot 1 from step 30, shot 2 whole");
    for i in 0..3 {
        assert_eq!(
            same_npy(&shot_dir(&full, i), &shot_dir(&part, i)),
            6,
            "shot {i}"
        );
    }
    let after = std::fs::metadata(shot_dir(&part, 0).join("seismogram.npy"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "shot 0 was not run again");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(part.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], true, "{summary}");
    // A run that is complete resumes to nothing.
    let s = run(&case, &o).unwrap();
    assert_eq!(s.steps, 0);
    // --resume names a shot run's directory.
    let o = RunOptions {
        resume: Some(part.join("checkpoints")),
        quiet: true,
        ..Default::default()
    };
    let e = run(&case, &o).expect_err("refused");
    assert!(e.to_string().contains("no shot run there"), "{e}");
    // --stop-at is for single runs.
    let mut o = quiet(&d.path().join("x"));
    o.stop_at = Some(10);
    let e = run(&case, &o).expect_err("refused");
    assert!(e.to_string().contains("--stop-at"), "{e}");
}
