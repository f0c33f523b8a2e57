//! A decomposed run equals the single-domain run bit for bit (a halo exchange does not change
//! the order of any sum), on threads with the in-process transport; and what is refused is
//! refused with a typed error before any step.

use fdlab_core::Scalar;
use fdlab_dist::cases::{self, wave};
use fdlab_dist::halo::Point;
use fdlab_dist::{decompose, DistStepper, Error, LocalTransport};
use fdlab_solvers::setup::Setup;
use fdlab_solvers::{HeatCpu, Stepper, WaveBoundary, WaveCpu};
use std::time::{Duration, Instant};

const STEPS: usize = 40;

fn heat(n: [usize; 3], dim: usize, order: usize, periodic: bool) -> Setup {
    cases::heat(n, dim, order, periodic, true)
}

/// The single-domain field and traces after STEPS steps.
fn single<T: Scalar>(setup: &Setup) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut s: Box<dyn Stepper> = match setup {
        Setup::Heat(h) => Box::new(HeatCpu::<T>::new(h).unwrap()),
        Setup::Wave(w) => Box::new(WaveCpu::<T>::new(w).unwrap()),
        _ => unreachable!("only heat and wave are decomposed"),
    };
    s.advance(STEPS).unwrap();
    (s.field().unwrap(), s.traces().to_vec())
}

/// The same run split over `dims`, one thread per rank, stepped in uneven chunks with a field
/// gathered midway; rank 0's field and traces.
fn split<T: Scalar + Point>(setup: &Setup, dims: [usize; 3]) -> (Vec<f64>, Vec<Vec<f64>>)
where
    [T; 3]: Point,
{
    let ranks = dims.iter().product();
    let d = decompose(setup, ranks, Some(dims)).unwrap();
    let handles: Vec<_> = LocalTransport::group(ranks)
        .into_iter()
        .map(|t| {
            let (setup, d) = (setup.clone(), d.clone());
            std::thread::spawn(move || {
                let mut s = DistStepper::new::<T>(&setup, d, Box::new(t)).unwrap();
                s.advance(7).unwrap();
                s.field().unwrap();
                s.advance(STEPS - 7 - 1).unwrap();
                s.advance(1).unwrap();
                (s.field().unwrap(), s.traces().to_vec())
            })
        })
        .collect();
    let mut out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    out.swap_remove(0)
}

fn check<T: Scalar + Point>(what: &str, setup: &Setup, grids: &[[usize; 3]])
where
    [T; 3]: Point,
{
    let (want, want_traces) = single::<T>(setup);
    assert!(want.iter().all(|v| v.is_finite()));
    for &dims in grids {
        let (got, traces) = split::<T>(setup, dims);
        assert_eq!(got.len(), want.len());
        let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{what} on {dims:?}: {differ} points differ");
        assert_eq!(traces, want_traces, "{what} on {dims:?}: traces differ");
    }
}

#[test]
fn heat_2d_split_equals_single_domain() {
    for periodic in [true, false] {
        for order in [2, 4, 8] {
            let s = heat([37, 23, 1], 2, order, periodic);
            let what = format!("heat 2-D order {order} periodic {periodic}");
            check::<f64>(&what, &s, &[[3, 1, 1], [1, 3, 1], [2, 2, 1], [2, 1, 1]]);
        }
    }
    let s = heat([37, 23, 1], 2, 6, true);
    check::<f32>("heat 2-D f32", &s, &[[3, 1, 1], [2, 2, 1]]);
}

#[test]
fn heat_3d_split_equals_single_domain() {
    for periodic in [true, false] {
        for order in [2, 6] {
            let s = heat([19, 14, 11], 3, order, periodic);
            let what = format!("heat 3-D order {order} periodic {periodic}");
            check::<f64>(&what, &s, &[[1, 1, 3], [3, 1, 1], [2, 1, 2], [1, 2, 1]]);
        }
    }
    let s = heat([19, 14, 11], 3, 4, false);
    check::<f32>("heat 3-D f32", &s, &[[1, 3, 1], [2, 2, 2]]);
}

#[test]
fn wave_2d_split_equals_single_domain() {
    for boundary in [WaveBoundary::Rigid, WaveBoundary::Periodic] {
        for order in [2, 8] {
            let s = wave([41, 29, 1], 2, order, boundary);
            let what = format!("wave 2-D order {order} {boundary:?}");
            check::<f64>(&what, &s, &[[3, 1, 1], [1, 3, 1], [2, 2, 1], [1, 2, 1]]);
        }
    }
    let s = wave([41, 29, 1], 2, 4, WaveBoundary::Rigid);
    check::<f32>("wave 2-D f32", &s, &[[3, 1, 1], [2, 2, 1]]);
}

#[test]
fn wave_3d_split_equals_single_domain() {
    for boundary in [WaveBoundary::Rigid, WaveBoundary::Periodic] {
        let s = wave([21, 17, 13], 3, 4, boundary);
        let what = format!("wave 3-D {boundary:?}");
        check::<f64>(&what, &s, &[[1, 1, 3], [3, 1, 1], [2, 2, 1], [1, 2, 2]]);
    }
    let s = wave([21, 17, 13], 3, 8, WaveBoundary::Rigid);
    check::<f32>("wave 3-D f32 order 8", &s, &[[1, 3, 1]]);
}

/// The CPML's layers are the whole grid's: cuts inside a layer, inside the band where ψ is
/// read, and at its edge all give the single-domain bits.
#[test]
fn wave_with_cpml_split_equals_single_domain() {
    let cpml = |thickness| WaveBoundary::Cpml {
        thickness,
        f0: 0.01,
    };
    for order in [4, 8] {
        let s = wave([41, 29, 1], 2, order, cpml(8));
        let what = format!("wave 2-D CPML order {order}");
        check::<f64>(
            &what,
            &s,
            &[[5, 1, 1], [1, 3, 1], [2, 2, 1], [4, 1, 1], [1, 4, 1]],
        );
    }
    let s = wave([41, 29, 1], 2, 4, cpml(6));
    check::<f32>("wave 2-D CPML f32", &s, &[[5, 1, 1], [2, 3, 1]]);
    let s = wave([21, 17, 13], 3, 4, cpml(4));
    check::<f64>(
        "wave 3-D CPML",
        &s,
        &[[3, 1, 1], [1, 2, 2], [1, 1, 3], [2, 2, 2]],
    );
}

#[test]
fn the_process_grid_is_chosen_for_the_least_halo_surface() {
    let s = heat([200, 20, 1], 2, 4, false);
    assert_eq!(decompose(&s, 4, None).unwrap().dims(), [4, 1, 1]);
    let s = heat([64, 64, 64], 3, 2, true);
    let d = decompose(&s, 8, None).unwrap().dims();
    assert_eq!(d, [2, 2, 2]);
    let s = heat([30, 30, 1], 2, 2, true);
    assert_eq!(
        decompose(&s, 3, None)
            .unwrap()
            .dims()
            .iter()
            .product::<usize>(),
        3
    );
    let s = heat([37, 23, 1], 2, 4, true);
    check::<f64>(
        "heat on a chosen grid",
        &s,
        &[decompose(&s, 3, None).unwrap().dims()],
    );
}

#[test]
fn grids_that_cannot_be_split_are_refused() {
    let s = heat([5, 5, 1], 2, 2, false);
    assert!(matches!(
        decompose(&s, 30, None),
        Err(Error::CannotSplit { .. })
    ));
    let s = heat([20, 20, 1], 2, 8, false);
    assert!(matches!(
        decompose(&s, 8, Some([8, 1, 1])),
        Err(Error::HaloTooWide {
            axis: 0,
            extent: 2,
            halo: 4,
            ..
        })
    ));
    assert!(matches!(
        decompose(&s, 4, Some([2, 1, 1])),
        Err(Error::ProcessCount {
            product: 2,
            ranks: 4,
            ..
        })
    ));
    assert!(matches!(
        decompose(&s, 2, Some([1, 1, 2])),
        Err(Error::UnusedAxis { axis: 2, .. })
    ));
}

/// A rank that ends (here: fails before its first step) makes the others stop with an error
/// at their next exchange instead of waiting for it.
#[test]
fn a_rank_that_ends_stops_the_others() {
    let s = heat([60, 40, 1], 2, 4, false);
    let d = decompose(&s, 3, Some([3, 1, 1])).unwrap();
    let t0 = Instant::now();
    let handles: Vec<_> = LocalTransport::group(3)
        .into_iter()
        .map(|t| {
            let (s, d) = (s.clone(), d.clone());
            let t = t.with_timeout(Duration::from_secs(20));
            std::thread::spawn(move || {
                let rank = fdlab_dist::Transport::rank(&t);
                let mut st = DistStepper::new::<f64>(&s, d, Box::new(t)).unwrap();
                if rank == 1 {
                    return Ok(());
                }
                st.advance(1000)
            })
        })
        .collect();
    for (r, h) in handles.into_iter().enumerate() {
        let res = h.join().unwrap();
        if r != 1 {
            let e = res.expect_err("a neighbour of the ended rank");
            assert!(e.to_string().contains("rank 1 has ended"), "{e}");
        }
    }
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

/// A rank whose block goes non-finite names the cell in the whole grid's indices.
#[test]
fn a_non_finite_value_names_its_global_cell() {
    let mut s = heat([60, 40, 1], 2, 4, false);
    if let Setup::Heat(h) = &mut s {
        h.initial[30 + 60 * 5] = f64::NAN;
    }
    let d = decompose(&s, 3, Some([3, 1, 1])).unwrap();
    let handles: Vec<_> = LocalTransport::group(3)
        .into_iter()
        .map(|t| {
            let (s, d) = (s.clone(), d.clone());
            std::thread::spawn(move || {
                let mut st = DistStepper::new::<f64>(&s, d, Box::new(t)).unwrap();
                st.advance(10)
            })
        })
        .collect();
    let owner = handles.into_iter().nth(1).unwrap().join().unwrap();
    match owner {
        Err(fdlab_solvers::Error::NonFinite { step, cell, .. }) => {
            // The first bad point in index order: two rows below the NaN (the stencil's reach).
            assert_eq!((step, cell), (1, [30, 3, 0]));
        }
        other => panic!("expected a non-finite value, got {other:?}"),
    }
}

/// Every `.npy` of each shot directory under `a` equals the same file under `b`; returns the
/// number of files compared.
fn same_shot_files(a: &std::path::Path, b: &std::path::Path, shots: usize) -> usize {
    let mut n = 0;
    for i in 0..shots {
        let (da, db) = (
            fdlab_solvers::run_shots::shot_dir(a, i),
            fdlab_solvers::run_shots::shot_dir(b, i),
        );
        for e in std::fs::read_dir(&da).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "npy") {
                let other = std::fs::read(db.join(p.file_name().unwrap())).unwrap();
                assert!(
                    std::fs::read(&p).unwrap() == other,
                    "{} differs",
                    p.display()
                );
                n += 1;
            }
        }
    }
    n
}

#[test]
fn shots_shared_out_over_ranks_equal_the_one_process_run() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/wave-shots.toml");
    let case = fdlab_solvers::Case::load(path).unwrap();
    let shots = case.shots().unwrap().len();
    let d = tempfile::tempdir().unwrap();
    let opts = |dir: &str| fdlab_solvers::RunOptions {
        out_dir: Some(d.path().join(dir)),
        quiet: true,
        backend: fdlab_solvers::BackendKind::Cpu,
        ..Default::default()
    };
    fdlab_solvers::run(&case, &opts("one")).unwrap();
    for ranks in [2, 3] {
        let out = format!("split-{ranks}");
        let handles: Vec<_> = LocalTransport::group(ranks)
            .into_iter()
            .map(|t| {
                let (case, o) = (case.clone(), opts(&out));
                std::thread::spawn(move || fdlab_dist::run(&case, &o, Box::new(t), None))
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
        let n = same_shot_files(&d.path().join("one"), &d.path().join(&out), shots);
        assert!(n > 2 * shots, "{ranks} ranks: {n} files");
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(d.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["complete"], true, "{summary}");
        assert_eq!(summary["ranks"], ranks, "{summary}");
    }
}
