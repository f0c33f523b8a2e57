//! What runs write: f32 runs write float32 `.npy` and `.vti`, `.vti` files are binary and
//! listed with their times in `fields.pvd`, a resumed run's frames and animation cover the
//! whole run, and the `[output]` colour options are checked when the case is read. The
//! writers on their own are tested in fdlab-output.

use crate::common::quiet;
use fdlab_solvers::output::{read_npy, read_pvd, read_vti, Dtype};
use fdlab_solvers::{run, Case};
use std::path::Path;

/// A small wave case: a Ricker source in a 48 × 40 box with CPML edges, 60-odd steps, a
/// receiver, outputs every 5 steps; `outputs` adds keys to `[output]`.
fn wave_case(precision: &str, outputs: &str) -> Case {
    let text = format!(
        "physics = \"wave\"\nprecision = \"{precision}\"\n\
         boundary = {{ cpml = {{ thickness = 6 }} }}\n\
         [grid]\nshape = [48, 40]\nspacing = [10.0, 10.0]\n\
         [time]\ncfl = 0.5\nduration = 0.12\n\
         [scheme]\norder = 4\n\
         [material]\nvelocity = {{ constant = 2000.0 }}\n\
         [[sources]]\nposition = [240.0, 200.0]\nfrequency = 25.0\namplitude = 1.0\n\
         [[receivers]]\nposition = [300.0, 200.0]\n\
         [output]\ndir = \"out\"\nevery = 5\n{outputs}\n"
    );
    Case::parse(&text, "w.toml".into()).unwrap()
}

/// The frames of a GIF.
fn gif_frames(path: &Path) -> usize {
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    let mut d = opts.read_info(std::fs::File::open(path).unwrap()).unwrap();
    let mut n = 0;
    while d.read_next_frame().unwrap().is_some() {
        n += 1;
    }
    n
}

/// The header text of an `.npy`.
fn npy_header(path: &Path) -> String {
    let b = std::fs::read(path).unwrap();
    let len = u16::from_le_bytes([b[8], b[9]]) as usize;
    String::from_utf8(b[10..10 + len].to_vec()).unwrap()
}

#[test]
fn an_f32_run_writes_float32_npy_binary_vti_and_a_pvd_with_times() {
    let case = wave_case("f32", "npy = true\nvti = true");
    let d = tempfile::tempdir().unwrap();
    let s = run(&case, &quiet(d.path())).unwrap();
    let dt = fdlab_solvers::setup::prepare(&case).unwrap().plan.dt;
    let npy = d.path().join("field_0000010.npy");
    assert!(npy_header(&npy).contains("'<f4'"));
    let (shape, field) = read_npy(&npy).unwrap();
    assert_eq!(shape, [40, 48]);
    assert!(field.iter().any(|v| *v != 0.0));
    let vti_path = d.path().join("field_0000010.vti");
    let text = String::from_utf8_lossy(&std::fs::read(&vti_path).unwrap()).into_owned();
    assert!(text.contains("format=\"appended\"") && text.contains("header_type=\"UInt64\""));
    assert!(text.contains("type=\"Float32\"") && text.contains("Name=\"pressure\""));
    let vti = read_vti(&vti_path).unwrap();
    assert_eq!(
        (vti.n, vti.spacing, vti.dtype),
        ([48, 40, 1], [10.0, 10.0, 1.0], Dtype::F32)
    );
    assert_eq!(vti.data, field, "the .vti holds the field the .npy holds");
    let pvd = read_pvd(&d.path().join("fields.pvd")).unwrap();
    let outputs: Vec<u64> = (0..=s.final_step).filter(|k| k % 5 == 0).collect();
    assert_eq!(
        pvd.len(),
        outputs.len() + !s.final_step.is_multiple_of(5) as usize
    );
    for ((t, f), k) in pvd.iter().zip(&outputs) {
        assert_eq!(f, &format!("field_{k:07}.vti"));
        assert_eq!(*t, *k as f64 * dt);
        assert!(d.path().join(f).exists());
    }
}

#[test]
fn a_resumed_run_has_the_whole_runs_frames_animation_and_pvd() {
    let case = wave_case("f32", "vti = true\npng = true\nframes = true\ngif = true");
    let whole = tempfile::tempdir().unwrap();
    let s = run(&case, &quiet(whole.path())).unwrap();
    let outputs = (s.final_step / 5 + 1 + !s.final_step.is_multiple_of(5) as u64) as usize;
    let b = tempfile::tempdir().unwrap();
    let mut o = quiet(b.path());
    o.checkpoint_every = Some(10);
    o.stop_at = Some(23);
    run(&case, &o).unwrap();
    // A crash while the next record was being spilled leaves a torn record behind.
    let spill = b.path().join("frames/.samples.bin");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&spill)
        .unwrap();
    std::io::Write::write_all(&mut f, &[7u8; 13]).unwrap();
    drop(f);
    // Resume from step 20: the frame of step 20 is kept, those of 21 to 23 never existed.
    let mut o = quiet(b.path());
    o.resume = Some(b.path().join("checkpoints/step-000000020"));
    run(&case, &o).unwrap();
    assert_eq!(gif_frames(&whole.path().join("animation.gif")), outputs);
    assert_eq!(gif_frames(&b.path().join("animation.gif")), outputs);
    for name in ["animation.gif", "final.png", "fields.pvd"] {
        let (x, y) = (whole.path().join(name), b.path().join(name));
        assert!(
            std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
            "{name} differs"
        );
    }
    let frames = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d.join("frames"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        v.sort();
        v
    };
    assert_eq!(frames(whole.path()).len(), outputs);
    assert_eq!(frames(whole.path()), frames(b.path()));
    for n in frames(whole.path()) {
        let (x, y) = (
            whole.path().join("frames").join(&n),
            b.path().join("frames").join(&n),
        );
        assert!(
            std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
            "{n} differs"
        );
    }
}

#[test]
fn colour_options_are_checked_when_the_case_is_read() {
    let ok = wave_case(
        "f64",
        "clip = 0.5\ncolor_range = [-1e-8, 1e-8]\nlength_unit = \"km\"",
    );
    assert_eq!(ok.spec.output.clip, Some(0.5));
    assert_eq!(ok.spec.output.color_range, Some([-1e-8, 1e-8]));
    for (bad, key) in [
        ("clip = 0.0", "clip"),
        ("clip = 1.5", "clip"),
        ("color_range = [1.0, 0.0]", "color_range"),
    ] {
        let text = format!(
            "physics = \"heat\"\nboundary = \"periodic\"\n[grid]\nshape = [8, 8]\n\
             spacing = [1.0, 1.0]\n[time]\ndt = 0.1\nduration = 1.0\n\
             [material]\ndiffusivity = {{ constant = 1.0 }}\n\
             [output]\ndir = \"o\"\nevery = 1\n{bad}\n"
        );
        let e = Case::parse(&text, "c.toml".into()).unwrap_err().to_string();
        assert!(e.contains(key), "{bad}: {e}");
    }
    // Output options do not change what a checkpoint belongs to.
    assert_eq!(ok.hash(), wave_case("f64", "").hash());
}
