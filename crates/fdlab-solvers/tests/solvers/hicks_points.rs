//! Sources and receivers between grid points (Hicks' interpolation) and wavelets from files:
//! a point between grid points records what the same physical point records on a grid shifted
//! so that it lies on a point; on-grid positions run exactly as the single-cell form; the
//! case keys are checked before any work.

use fdlab_solvers::output::{write_npy, write_npy_as, Dtype};
use fdlab_solvers::physics::ricker;
use fdlab_solvers::setup::{prepare, Prepared, Setup};
use fdlab_solvers::{Case, Stepper, WaveCpu, WaveSetup};
use std::path::Path;

use crate::common::case_error;

/// The Ricker's peak frequency on cells of 1 with c = 1: 4 cells per wavelength at 2.5 times
/// the peak, its highest significant frequency.
const F0: f64 = 0.1;

/// A periodic wave case of `shape` cells of 1.0 (c = 1, order 8, cfl 0.5), a Ricker of peak
/// [`F0`] at `src`, receivers at `rec`, for `duration`.
fn periodic_case(shape: &[usize], src: &[f64], rec: &[Vec<f64>], duration: f64) -> String {
    let mut t = format!(
        "physics = \"wave\"\nboundary = \"periodic\"\n[grid]\nshape = {shape:?}\n\
         spacing = {:?}\n[time]\ncfl = 0.5\nduration = {duration}\n[scheme]\norder = 8\n\
         [material]\nvelocity = {{ constant = 1.0 }}\n[output]\ndir = \"out\"\nevery = 1000\n\
         [[sources]]\nposition = {src:?}\nfrequency = {F0}\n",
        vec![1.0; shape.len()]
    );
    for r in rec {
        t += &format!("[[receivers]]\nposition = {r:?}\n");
    }
    t
}

fn prepared(text: &str, dir: &Path) -> Prepared {
    let case = Case::parse(text, dir.join("c.toml")).unwrap_or_else(|e| panic!("{e}"));
    prepare(&case).unwrap_or_else(|e| panic!("{e}"))
}

fn wave(p: &Prepared) -> &WaveSetup {
    match &p.setup {
        Setup::Wave(s) => s,
        _ => panic!("not a wave setup"),
    }
}

/// The receivers' traces of `s` run for `steps` steps in f64.
fn traces(s: &WaveSetup, steps: u64) -> Vec<Vec<f64>> {
    let mut st = WaveCpu::<f64>::new(s).unwrap();
    st.advance(steps as usize).unwrap();
    st.traces().to_vec()
}

/// The largest difference between two traces over the largest value of `b`.
fn peak_rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let peak = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / peak
}

/// Shifted by `d` cells on every axis.
fn shift(x: &[f64], d: &[f64]) -> Vec<f64> {
    x.iter().zip(d).map(|(x, d)| x - d).collect()
}

/// Runs the case with source and receivers at `src`/`rec` on grid A, and again at the same
/// physical points on grid B, whose origin lies `d` cells further on: the traces must agree.
/// Returns the worst peak-normalised difference.
fn shifted_runs(shape: &[usize], src: &[f64], rec: &[Vec<f64>], d: &[f64], dur: f64) -> f64 {
    let dir = std::env::temp_dir();
    let a = prepared(&periodic_case(shape, src, rec, dur), &dir);
    let rec_b: Vec<Vec<f64>> = rec.iter().map(|r| shift(r, d)).collect();
    let b = prepared(&periodic_case(shape, &shift(src, d), &rec_b, dur), &dir);
    assert_eq!(a.plan.dt, b.plan.dt);
    let (ta, tb) = (
        traces(wave(&a), a.plan.steps),
        traces(wave(&b), b.plan.steps),
    );
    ta.iter()
        .zip(&tb)
        .map(|(x, y)| peak_rel(x, y))
        .fold(0.0, f64::max)
}

#[test]
fn a_source_and_receivers_between_points_match_a_grid_where_they_lie_on_points() {
    // Grid A: everything half a cell off in x and y; grid B: on points.
    let rec = vec![vec![60.5, 40.5], vec![30.5, 56.5]];
    let e = shifted_runs(&[80, 80], &[40.5, 40.5], &rec, &[0.5, 0.5], 55.0);
    eprintln!("2-D, source and receivers between points: {e:.2e}");
    assert!(e < 1e-3, "{e}");
    // Any other offset: a quarter and three tenths of a cell.
    let rec = vec![vec![60.25, 40.3]];
    let e = shifted_runs(&[80, 80], &[40.25, 40.3], &rec, &[0.25, 0.3], 55.0);
    eprintln!("2-D, offsets 0.25 and 0.3: {e:.2e}");
    assert!(e < 1e-3, "{e}");
}

#[test]
fn a_receiver_between_points_gathers_what_a_source_there_spreads() {
    // Grid A: source on a point, receivers between; grid B (half a cell on): the source
    // between points, the receivers on them. The step is symmetric, so by reciprocity the
    // traces agree when gathering is the adjoint of spreading (the same weights): to
    // rounding. With the test above (both between points against both on points), a
    // receiver between points is as accurate as a source there.
    let rec = vec![vec![58.5, 40.0], vec![40.5, 22.0]];
    let e = shifted_runs(&[80, 80], &[40.0, 40.0], &rec, &[0.5, 0.0], 55.0);
    eprintln!("2-D, receivers between points against sources between: {e:.2e}");
    assert!(e < 1e-12, "{e}");
}

#[test]
fn a_3d_source_between_points_matches_the_shifted_grid() {
    // A 3-D trace follows the wavelet itself (a 2-D one its half-integral, weighted to low
    // wavenumbers, where the window is most accurate), so the interpolation's error of about
    // 5e-4 per end over the Ricker's band (Hicks' design error for r = 4, b = 6.31 is 1.3e-3
    // up to kmax) shows more: the traces differ by 1.1e-3 of the peak with one axis half a
    // cell off, 1.2e-3 with all three (the case run here), at 4 cells per wavelength; as much at 5 cells per
    // wavelength (peak 0.08) or twice the distance, the error being flat over the band.
    let (src, rec) = ([18.5, 20.5, 20.5], vec![vec![30.5, 20.5, 20.5]]);
    let e = shifted_runs(&[44, 40, 40], &src, &rec, &[0.5; 3], 36.0);
    eprintln!("3-D, source and receiver between points on all axes: {e:.2e}");
    assert!(e < 1.5e-3, "{e}");
}

#[test]
fn on_grid_positions_run_bit_for_bit_as_single_cells() {
    // Positions in metres that land within rounding of grid points (0.3 / 0.01 is
    // 29.999999999999996), against the same setup with the cells alone.
    let text = r#"
physics = "wave"
boundary = { cpml = { thickness = 8 } }
[grid]
shape = [64, 48]
spacing = [0.01, 0.01]
[time]
cfl = 0.5
duration = 0.3
[material]
velocity = { constant = 1.0 }
[output]
dir = "out"
every = 1000
[[sources]]
position = [0.3, 0.23]
frequency = 10.0
[[receivers]]
position = [0.43, 0.29]
[[receivers]]
position = [0.17, 0.11]
"#;
    let p = prepared(text, &std::env::temp_dir());
    let s = wave(&p);
    assert!(!s.has_spread_points(), "on-grid positions were spread");
    assert_eq!(s.sources[0].cell, [30, 23, 0]);
    assert_eq!(s.receivers, vec![[43, 29, 0], [17, 11, 0]]);
    let single = WaveSetup {
        sources: vec![fdlab_solvers::PointSource {
            spread: vec![],
            ..s.sources[0].clone()
        }],
        receiver_spread: vec![],
        ..s.clone()
    };
    // A spread of one point of weight 1, given explicitly, is the same too.
    let explicit = WaveSetup {
        sources: vec![fdlab_solvers::PointSource {
            spread: vec![([30, 23, 0], 1.0)],
            ..s.sources[0].clone()
        }],
        receiver_spread: vec![vec![([43, 29, 0], 1.0)], vec![([17, 11, 0], 1.0)]],
        ..s.clone()
    };
    let want = traces(&single, p.plan.steps);
    assert!(want[0].iter().any(|v| v.abs() > 0.0));
    assert_eq!(traces(s, p.plan.steps), want);
    assert_eq!(traces(&explicit, p.plan.steps), want);
    let mut f32 = WaveCpu::<f32>::new(s).unwrap();
    let mut f32_single = WaveCpu::<f32>::new(&single).unwrap();
    f32.advance(50).unwrap();
    f32_single.advance(50).unwrap();
    assert_eq!(f32.traces(), f32_single.traces());
}

#[test]
fn a_wavelet_file_of_the_ricker_samples_runs_as_the_ricker() {
    let dir = tempfile::tempdir().unwrap();
    let text = periodic_case(&[40, 36], &[20.0, 18.5], &[vec![30.5, 18.0]], 30.0);
    let p = prepared(&text, dir.path());
    let s = wave(&p);
    let (dt, steps) = (p.plan.dt, p.plan.steps);
    let src = &s.sources[0];
    // All steps but the last 5: zero after the end, as the Ricker nearly is by then.
    let samples: Vec<f64> = (0..steps - 5)
        .map(|k| ricker(k as f64 * dt, src.f0, src.t0))
        .collect();
    write_npy(&dir.path().join("w64.npy"), &[samples.len()], &samples).unwrap();
    write_npy_as(
        &dir.path().join("w32.npy"),
        &[samples.len()],
        &samples,
        Dtype::F32,
    )
    .unwrap();
    let with = |file: &str| {
        text.replace(
            "frequency = 0.1\n",
            &format!("frequency = 0.1\nwavelet = \"{file}\"\n"),
        )
    };
    let f = prepared(&with("w64.npy"), dir.path());
    assert!(
        f.warnings
            .iter()
            .any(|w| w.starts_with("sources[0].wavelet:")
                && w.contains(&format!("{} samples", steps - 5))),
        "{:?}",
        f.warnings
    );
    let want = traces(s, steps);
    let got = traces(wave(&f), steps);
    // The same values up to the file's end, where the Ricker is below 1e-12 of its peak.
    let e = peak_rel(&got[0], &want[0]);
    assert!(e < 1e-9, "{e}");
    assert_eq!(got[0][..steps as usize - 6], want[0][..steps as usize - 6]);
    // f32 samples: the Ricker rounded to f32.
    let g = prepared(&with("w32.npy"), dir.path());
    let e32 = peak_rel(&traces(wave(&g), steps)[0], &want[0]);
    assert!(e32 > 0.0 && e32 < 1e-6, "{e32}");
    // Amplitude scales the file's samples.
    let doubled =
        with("w64.npy").replace("frequency = 0.1\n", "frequency = 0.1\namplitude = 2.0\n");
    let t2 = traces(wave(&prepared(&doubled, dir.path())), steps);
    for (a, b) in t2[0].iter().zip(&got[0]) {
        assert!((a - 2.0 * b).abs() <= 1e-12 * b.abs().max(1e-30));
    }
    // Longer than the run: refused, naming the key and the counts.
    let long: Vec<f64> = vec![0.5; steps as usize + 1];
    write_npy(&dir.path().join("long.npy"), &[long.len()], &long).unwrap();
    let case = Case::parse(&with("long.npy"), dir.path().join("c.toml")).unwrap();
    let e = prepare(&case).unwrap_err().to_string();
    assert!(
        e.contains("sources[0].wavelet") && e.contains(&format!("{} samples", steps + 1)),
        "{e}"
    );
    // Two dimensions, or a NaN: refused.
    write_npy(&dir.path().join("two.npy"), &[2, 3], &[0.0; 6]).unwrap();
    let case = Case::parse(&with("two.npy"), dir.path().join("c.toml")).unwrap();
    assert!(prepare(&case).unwrap_err().to_string().contains("1-D"));
    write_npy(&dir.path().join("nan.npy"), &[3], &[0.0, f64::NAN, 0.0]).unwrap();
    let case = Case::parse(&with("nan.npy"), dir.path().join("c.toml")).unwrap();
    assert!(prepare(&case).unwrap_err().to_string().contains("sample 1"));
}

/// A rigid 2-D case of `shape` cells with a source at `src` and a receiver at `rec`.
fn rigid(shape: [usize; 2], src: [f64; 2], rec: [f64; 2], extra: &str) -> String {
    format!(
        "physics = \"wave\"\nboundary = \"dirichlet\"\n[grid]\nshape = {shape:?}\n\
         spacing = [2.0, 2.0]\n[time]\ncfl = 0.5\nduration = 10.0\n[material]\n\
         velocity = {{ constant = 1.0 }}\n[output]\ndir = \"out\"\nevery = 10\n\
         [[sources]]\nposition = {src:?}\nfrequency = 0.02\n{extra}\
         [[receivers]]\nposition = {rec:?}\n"
    )
}

#[test]
fn positions_are_checked_before_any_work_naming_the_key() {
    // Outside the grid (the last point is at 2 · 39 = 78).
    let e = case_error(&rigid([40, 30], [20.0, 20.0], [79.5, 20.0], ""));
    assert!(
        e.contains("receivers[0].position") && e.contains("outside the grid"),
        "{e}"
    );
    let e = case_error(&rigid([40, 30], [20.0, -3.0], [20.0, 20.0], ""));
    assert!(
        e.contains("sources[0].position") && e.contains("outside the grid"),
        "{e}"
    );
    // Too few coordinates.
    let e = case_error(&rigid([40, 30], [20.0, 20.0], [20.0, 20.0], "").replace(
        "position = [20.0, 20.0]\nfrequency",
        "position = [20.0]\nfrequency",
    ));
    assert!(
        e.contains("sources[0].position") && e.contains("2 coordinates"),
        "{e}"
    );
    // Between points on the shortest rigid axis (4 points): the 8-point support folds
    // into it at both walls, onto its 4 points.
    let text = rigid([40, 4], [20.0, 3.0], [20.0, 1.0], "");
    let p = prepared(&text, Path::new("."));
    let pts = wave(&p).sources[0].points();
    let ys: Vec<usize> = pts.iter().map(|(c, _)| c[1]).collect();
    assert_eq!(ys, vec![0, 1, 2, 3]);
    assert!(pts.iter().all(|(c, _)| c[0] == 10));
    // A delay with a wavelet file: refused.
    let e = case_error(&rigid(
        [40, 30],
        [20.0, 20.0],
        [20.0, 20.0],
        "wavelet = \"w.npy\"\ndelay = 3.0\n",
    ));
    assert!(
        e.contains("sources[0].delay") && e.contains("wavelet"),
        "{e}"
    );
}

#[test]
fn points_by_a_rigid_wall_are_warned_about_and_mirrored() {
    // Receiver 1.5 cells from the wall at x = −1 cell: its support reaches past the wall.
    let text = rigid([40, 30], [40.0, 30.0], [3.0, 30.0], "");
    let p = prepared(&text, Path::new("."));
    assert!(
        p.warnings
            .iter()
            .any(|w| w.starts_with("receivers[0]:") && w.contains("mirrored")),
        "{:?}",
        p.warnings
    );
    // Its weights: every point inside the grid, the y axis on a point.
    let s = wave(&p);
    let pts = s.receiver_points(0);
    assert!(pts.iter().all(|(c, _)| c[0] < 40 && c[1] == 15));
    assert!(pts.iter().any(|(_, w)| *w < 0.0));
    // The source, in the middle and on points: no such warning, no spread.
    assert!(!p
        .warnings
        .iter()
        .any(|w| w.starts_with("sources[0]:") && w.contains("mirrored")));
    assert_eq!(s.sources[0].points(), vec![([20, 15, 0], 1.0)]);
}
