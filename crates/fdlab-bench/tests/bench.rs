//! fdlab-bench without a GPU: byte formulas, timing summaries, suites, the tuner's search space
//! and cache.

use fdlab_bench::suites::{
    amd_bytes, cases, interior_laplacian_case, periodic_bytes, select, SuiteOptions, Target, SUITES,
};
use fdlab_bench::tune::{candidates, default_strategy, key, Entry, TuneCache};
use fdlab_bench::Timing;
use fdlab_core::{Boundary, Grid, Precision};
use fdlab_cuda::codegen::{generate, KernelSpec};
use fdlab_cuda::{Coefficients, Strategy};
use rayon::prelude::*;

#[test]
fn amd_byte_formula_counts_every_point_but_corners_and_edges_plus_the_interior() {
    let (nx, ny, nz) = (7usize, 5usize, 6usize);
    let g = Grid::unit(&[nx, ny, nz]).unwrap();
    // Count by brute force: a point is fetched unless it lies on two or more boundary faces.
    let mut fetched = 0u64;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let faces = [
                    i == 0 || i == nx - 1,
                    j == 0 || j == ny - 1,
                    k == 0 || k == nz - 1,
                ]
                .iter()
                .filter(|&&b| b)
                .count();
                if faces < 2 {
                    fetched += 1;
                }
            }
        }
    }
    let written = ((nx - 2) * (ny - 2) * (nz - 2)) as u64;
    assert_eq!(amd_bytes(&g, Precision::F64), (fetched + written) * 8);
    assert_eq!(periodic_bytes(&g, 3, Precision::F32), 4 * 7 * 5 * 6 * 4);
}

#[test]
fn timing_summary_is_median_min_max() {
    let t = Timing::of(&[3.0, 1.0, 2.0, 10.0]);
    assert_eq!((t.median, t.min, t.max, t.runs), (2.5, 1.0, 10.0, 4));
    assert_eq!(Timing::of(&[5.0, 1.0, 3.0]).median, 3.0);
}

#[test]
fn every_suite_builds_its_cases_on_both_targets() {
    for s in SUITES {
        for target in [Target::Cpu, Target::Cuda] {
            let c = cases(
                s,
                target,
                &SuiteOptions {
                    size: Some(16),
                    precision: None,
                    ..Default::default()
                },
            )
            .unwrap();
            assert!(!c.is_empty(), "{s}");
            for case in &c {
                assert_eq!(case.exact.len(), case.stencils.len());
                assert!(case.bytes > 0 && case.flops() > 0, "{s} {}", case.name);
            }
        }
    }
    assert!(cases("nope", Target::Cpu, &SuiteOptions::default()).is_err());
}

#[test]
fn case_names_select_cases_and_a_wrong_name_lists_the_right_ones() {
    let opts = SuiteOptions {
        size: Some(16),
        ..Default::default()
    };
    let all = cases("roofline", Target::Cuda, &opts).unwrap();
    let mut some = all.clone();
    select(&mut some, &["lap3d-7pt".into(), "gradient-8th".into()]).unwrap();
    assert_eq!(some.len(), 3, "lap7 in f64 and f32, the gradient in f32");
    assert!(some
        .iter()
        .all(|c| c.name == "lap3d-7pt" || c.name == "gradient-8th"));
    let mut none = all.clone();
    select(&mut none, &[]).unwrap();
    assert_eq!(none.len(), all.len());
    let err = select(&mut all.clone(), &["lap3d-7p".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("lap3d-7p") && err.contains("lap3d-7pt"),
        "{err}"
    );
}

#[test]
fn depth_stretches_only_the_3d_cases_and_their_byte_counts_follow() {
    let opts = SuiteOptions {
        size: Some(16),
        depth: Some(40),
        ..Default::default()
    };
    let cube = SuiteOptions {
        size: Some(16),
        ..Default::default()
    };
    for suite in ["roofline", "amd-laplacian"] {
        let long = cases(suite, Target::Cuda, &opts).unwrap();
        let short = cases(suite, Target::Cuda, &cube).unwrap();
        assert_eq!(long.len(), short.len());
        for (l, s) in long.iter().zip(&short) {
            let [nx, ny, nz] = s.grid.shape();
            // 3-D cases of 16 points per axis take the depth; 2-D cases keep their shapes.
            let stretched = nz == 16;
            let want = if stretched {
                [nx, ny, 40]
            } else {
                [nx, ny, nz]
            };
            assert_eq!(l.grid.shape(), want, "{suite} {}", l.name);
            if stretched && l.boundary == Boundary::Periodic {
                assert_eq!(l.bytes * 16, s.bytes * 40, "{suite} {}", l.name);
            } else if stretched {
                // Interior-only Laplacians: the boundary planes are read, not written.
                let r = l.stencils[0].radius()[0];
                let interior = ((16 - 2 * r) * (16 - 2 * r) * (40 - 2 * r)) as u64;
                let s_bytes = l.precision.size() as u64;
                let want = if r == 1 {
                    amd_bytes(&l.grid, l.precision)
                } else {
                    (l.grid.len() as u64 + interior) * s_bytes
                };
                assert_eq!(l.bytes, want, "{suite} {}", l.name);
            }
        }
    }
}

#[test]
fn every_tuning_candidate_generates_and_round_trips_its_name() {
    let opts = SuiteOptions {
        size: Some(32),
        precision: None,
        ..Default::default()
    };
    for case in cases("roofline", Target::Cuda, &opts).unwrap() {
        let mut cands = candidates(&case);
        cands.push(default_strategy(&case, false));
        cands.push(default_strategy(&case, true));
        assert!(cands.len() > 20, "{}", case.name);
        for s in cands {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
            generate(&KernelSpec {
                stencils: &case.stencils,
                boundary: case.boundary,
                precision: case.precision,
                strategy: s,
                coefficients: Coefficients::Immediate,
            })
            .unwrap_or_else(|e| panic!("{} {}: {e}", case.name, s));
        }
    }
}

#[test]
fn tune_cache_round_trips_through_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("tune.json");
    // SAFETY: the other tests of this binary read the environment through `std::env`, which
    // locks against this write; none reads it from C meanwhile.
    unsafe { std::env::set_var("FDLAB_TUNE_CACHE", &path) };
    let case = &cases(
        "roofline",
        Target::Cuda,
        &SuiteOptions {
            size: Some(16),
            precision: Some(Precision::F32),
            ..Default::default()
        },
    )
    .unwrap()[0];
    assert_eq!(
        TuneCache::load().winner("GPU", case),
        None,
        "a missing file is an empty cache"
    );
    let mut cache = TuneCache::default();
    let winner = Strategy::ZMarch {
        bx: 64,
        by: 2,
        vec: 4,
        chunk: 32,
        streaming: false,
        unroll: 2,
        rows: 2,
    };
    cache.entries.insert(
        key("GPU", case),
        Entry {
            strategy: winner.name(),
            time_ms: 1.0,
            gbps: 2.0,
            candidates: 3,
            date: "d".into(),
        },
    );
    assert_eq!(cache.save().unwrap(), path);
    let back = TuneCache::load();
    assert_eq!(back.winner("GPU", case), Some(winner));
    assert_eq!(back.winner("other GPU", case), None);
    std::fs::write(&path, "not json").unwrap();
    assert!(
        TuneCache::load().entries.is_empty(),
        "a corrupt cache is ignored, not fatal"
    );
}

/// The tuner's candidates for the custom z-difference stencil (the roofline's ceiling row, a
/// stencil no conformance operator has) and its TMA-fed candidates for the interior Laplacians
/// compile with NVRTC, one module per case and type: all to PTX, two of each to sm_90 CUBIN.
/// Skipped, saying so, where libnvrtc is missing (CI installs it and sets FDLAB_REQUIRE_NVRTC).
#[test]
fn newest_tuning_candidates_compile_for_sm90() {
    if !fdlab_cuda::nvrtc::available() {
        assert_ne!(
            std::env::var("FDLAB_REQUIRE_NVRTC").as_deref(),
            Ok("1"),
            "FDLAB_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        eprintln!("SKIPPED: libnvrtc not found");
        return;
    }
    let opts = SuiteOptions {
        size: Some(32),
        precision: None,
        ..Default::default()
    };
    let mut all = cases("roofline", Target::Cuda, &opts).unwrap();
    all.retain(|c| c.name == "zdiff-2pt");
    // The TMA-fed queue marches the tuner tries on the interior Laplacians, which the
    // conformance strategies cover with two shapes only; 512³ so that the tuner's 3-D search
    // applies.
    for p in Precision::ALL {
        for accuracy in [2, 8] {
            all.push(interior_laplacian_case("roofline", [512; 3], accuracy, p, vec![]).unwrap());
        }
    }
    // One NVRTC module per case, the cases compiled on every core.
    all.par_iter().for_each(|case| {
        let tma_only = case.name != "zdiff-2pt";
        let sources: Vec<_> = candidates(case)
            .into_iter()
            .filter(|s| !tma_only || matches!(s, Strategy::QMarch { tma: 1.., .. }))
            .map(|s| {
                generate(&KernelSpec {
                    stencils: &case.stencils,
                    boundary: case.boundary,
                    precision: case.precision,
                    strategy: s,
                    coefficients: Coefficients::Immediate,
                })
                .unwrap()
            })
            .collect();
        assert!(!sources.is_empty(), "no candidates for {}", case.name);
        let refs: Vec<_> = sources.iter().collect();
        let module = fdlab_cuda::codegen::module_source(&refs);
        // Every candidate through the front end to PTX, the first and the last also through
        // the optimizer and ptxas (their inline PTX is checked only there): a tenth of the
        // time of all of them to CUBIN.
        fdlab_cuda::nvrtc::compile_unoptimized(&case.name, &module, "compute_90")
            .unwrap_or_else(|e| panic!("{} {:?}: {e}", case.name, case.precision));
        let mut ends = vec![refs[0]];
        if refs.len() > 1 {
            ends.push(refs[refs.len() - 1]);
        }
        let module = fdlab_cuda::codegen::module_source(&ends);
        fdlab_cuda::nvrtc::compile_cubin(&case.name, &module, "sm_90")
            .unwrap_or_else(|e| panic!("{} {:?}: {e}", case.name, case.precision));
    });
}

/// The built-in search reaches the winners that curated candidate lists found on an H100 and an
/// H200, so `fdlab tune` without `--strategy` can find them on a device where they win.
#[test]
fn built_in_search_holds_the_measured_winners() {
    let all = cases("roofline", Target::Cuda, &SuiteOptions::default()).unwrap();
    let wanted = [
        ("lap3d-7pt", Precision::F64, "smarch-256x1-r4-c64-p1-v2-l"),
        ("lap3d-7pt", Precision::F32, "smarch-128x1-r8-c128-p1-v4-l2"),
        ("lap3d-7pt", Precision::F32, "smarch-256x1-r4-c128-p1-v4-l"),
        ("lap3d-25pt", Precision::F64, "qmarch-32x16-r2-c256-v2-t2a"),
        ("lap3d-25pt", Precision::F32, "qmarch-32x16-r2-c64-v4-t2a"),
        ("lap2d-5pt", Precision::F32, "zmarch-256x1-v4-c16-u8-r1"),
        // H200 sweeps beyond the first search.
        ("lap2d-5pt", Precision::F32, "zmarch-64x1-v4-c8-u8-r1"),
        ("d1y-8th", Precision::F32, "pencil-64x64-t4x64-w"),
        ("d1z-8th", Precision::F32, "smarch-64x4-r2-c256-p2-v4"),
        (
            "gradient-8th",
            Precision::F32,
            "qmarch-32x16-r2-c512-v2-w3a",
        ),
        // Split slots (docs/performance.md, "TMA: requests and alignment").
        ("lap3d-25pt", Precision::F64, "qmarch-32x16-r2-c256-v2-w2a"),
        ("lap3d-25pt", Precision::F32, "qmarch-32x16-r2-c256-v4-w2a"),
        (
            "gradient-8th",
            Precision::F32,
            "qmarch-32x16-r2-c256-v2-w2a",
        ),
        (
            "gradient-8th",
            Precision::F32,
            "qmarch-32x16-r1-c128-v4-w2a-cs",
        ),
        (
            "gradient-8th",
            Precision::F32,
            "qmarch-32x16-r1-c128-v4-w2a",
        ),
    ];
    for (name, precision, strategy) in wanted {
        let case = all
            .iter()
            .find(|c| c.name == name && c.precision == precision)
            .unwrap_or_else(|| panic!("no roofline case {name} {precision:?}"));
        let names: Vec<String> = candidates(case).iter().map(|s| s.name()).collect();
        assert!(
            names.iter().any(|n| n == strategy),
            "{strategy} is not in the search for {name} {precision:?}"
        );
    }
}

#[test]
fn tuner_times_each_dx_candidate_once() {
    let opts = SuiteOptions {
        size: Some(64),
        ..Default::default()
    };
    for c in cases("roofline", Target::Cuda, &opts).unwrap() {
        let all = fdlab_bench::tune::candidates(&c);
        let mut unique = all.clone();
        unique.sort_by_key(|s| s.name());
        unique.dedup();
        assert_eq!(all.len(), unique.len(), "{} {}", c.name, c.precision);
    }
}

#[test]
fn size_gives_every_case_that_many_points_per_axis_once() {
    for n in [9, 64] {
        let opts = SuiteOptions {
            size: Some(n),
            ..Default::default()
        };
        for suite in fdlab_bench::SUITES {
            for target in [Target::Cpu, Target::Cuda] {
                let all = cases(suite, target, &opts).unwrap();
                let mut keys: Vec<String> = vec![];
                for c in &all {
                    let dims = c.grid.dims();
                    assert!(
                        dims.iter().all(|&d| d == n || d == n - 1),
                        "{suite} {} {dims:?}",
                        c.name
                    );
                    let k = format!("{}|{}|{dims:?}", c.name, c.precision);
                    assert!(!keys.contains(&k), "{suite}: {k} twice");
                    keys.push(k);
                    if target == Target::Cuda {
                        assert!(!c.strategies.is_empty(), "{suite} {}: no strategy", c.name);
                    }
                }
            }
        }
    }
}
