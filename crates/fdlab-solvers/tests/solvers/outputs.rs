//! What runs write: f32 runs write float32 `.npy` and `.vti`, `.vti` files are binary and
//! listed with their times in `fields.pvd`, a resumed run's frames and animation cover the
//! whole run, every file appears under its final name only when complete, and the `[output]`
//! colour options are checked when the case is read.

use crate::common::quiet;
use fdlab_solvers::atomic::temp_path;
use fdlab_solvers::output::ColorMap;
use fdlab_solvers::output::{
    read_npy, read_pvd, read_vti, save_png, write_npy_as, write_pvd, write_vti, Dtype, GifWriter,
    Image, Palette,
};
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
fn f32_npy_has_an_f4_header_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let data: Vec<f64> = (0..15).map(|v| v as f64 / 3.0).collect();
    write_npy_as(&p, &[3, 5], &data, Dtype::F32).unwrap();
    assert!(npy_header(&p).contains("'descr': '<f4'"));
    let len = std::fs::metadata(&p).unwrap().len();
    assert_eq!(
        len,
        128 + 4 * 15,
        "a 64-byte-aligned header, then 4 bytes per value"
    );
    let (shape, back) = read_npy(&p).unwrap();
    assert_eq!(shape, [3, 5]);
    let want: Vec<f64> = data.iter().map(|&v| v as f32 as f64).collect();
    assert_eq!(back, want);
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
fn an_f64_vti_round_trips_every_bit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.vti");
    let data: Vec<f64> = (0..24).map(|v| (v as f64).sin() * 1e-30).collect();
    write_vti(&p, [4, 3, 2], [0.5, 0.25, 2.0], "u", &data, Dtype::F64).unwrap();
    let v = read_vti(&p).unwrap();
    assert_eq!(
        (v.n, v.spacing, v.name.as_str()),
        ([4, 3, 2], [0.5, 0.25, 2.0], "u")
    );
    assert_eq!(v.data, data);
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

/// `write` must fail, and leave the old file at `path`, when its temporary name is taken by
/// a directory (a failure injected where only an atomic writer looks).
fn refused_atomically(path: &Path, write: impl FnOnce() -> fdlab_solvers::Result<()>) {
    std::fs::write(path, b"old").unwrap();
    std::fs::create_dir(temp_path(path)).unwrap();
    assert!(
        write().is_err(),
        "{} was written past its temporary",
        path.display()
    );
    assert_eq!(std::fs::read(path).unwrap(), b"old", "{}", path.display());
    std::fs::remove_dir(temp_path(path)).unwrap();
}

#[test]
fn every_output_file_goes_through_a_temporary_name() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let data = vec![1.0; 12];
    refused_atomically(&p.join("a.npy"), || {
        write_npy_as(&p.join("a.npy"), &[12], &data, Dtype::F32)
    });
    refused_atomically(&p.join("a.vti"), || {
        write_vti(
            &p.join("a.vti"),
            [3, 4, 1],
            [1.0; 3],
            "u",
            &data,
            Dtype::F64,
        )
    });
    refused_atomically(&p.join("f.pvd"), || {
        write_pvd(&p.join("f.pvd"), &[(0.0, "a.vti".into())])
    });
    let img = Image {
        width: 4,
        height: 3,
        rgb: vec![200; 36],
    };
    refused_atomically(&p.join("a.png"), || save_png(&p.join("a.png"), &img));
    let palette = Palette::new(ColorMap::Heat);
    refused_atomically(&p.join("a.gif"), || {
        GifWriter::create(&p.join("a.gif"), (4, 3), &palette)?.finish()
    });
    // And the writers do write when nothing is in the way.
    save_png(&p.join("a.png"), &img).unwrap();
    assert_eq!(&std::fs::read(p.join("a.png")).unwrap()[1..4], b"PNG");
    let left: Vec<_> = std::fs::read_dir(p)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".fdlab-tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
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
