//! The writers on their own: `.npy` headers and round trips, `.vti` round trips, and every
//! file appearing under its final name only when complete.

use fdlab_output::atomic::temp_path;
use fdlab_output::{
    read_npy, read_vti, save_png, write_npy_as, write_pvd, write_vti, ColorMap, Dtype, GifWriter,
    Image, Palette,
};
use std::path::Path;

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

/// `write` must fail, and leave the old file at `path`, when its temporary name is taken by
/// a directory (a failure injected where only an atomic writer looks).
fn refused_atomically(path: &Path, write: impl FnOnce() -> fdlab_output::Result<()>) {
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
