//! Codegen tests that need no GPU: every generated kernel compiles with NVRTC for sm_90, the
//! output is deterministic, and a broken kernel fails with its log.
//!
//! NVRTC comes from `pip install nvidia-cuda-nvrtc==13.0.88` (see `.ci/run`). When it is missing
//! these tests fail if `FDLAB_REQUIRE_NVRTC=1` (CI sets it) and say that they skipped otherwise.

use fdlab_core::{Axis, Boundary, Grid, Precision, Stencil};
use fdlab_cuda::codegen::{generate, module_source, CudaSource, KernelSpec};
use fdlab_cuda::{nvrtc, Coefficients, Error, Strategy};
use rayon::prelude::*;

/// Whether NVRTC can be loaded; with `FDLAB_REQUIRE_NVRTC=1` (CI) a missing NVRTC fails the
/// test instead of skipping it.
pub(crate) fn nvrtc_or_skip(test: &str) -> bool {
    if nvrtc::available() {
        return true;
    }
    if std::env::var("FDLAB_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("{test}: FDLAB_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded");
    }
    eprintln!("SKIPPED {test}: libnvrtc not found (set LD_LIBRARY_PATH; see .ci/run)");
    false
}

/// Operators on a grid of `dim` axes, each with whether its kernels are also compiled with
/// `__constant__` weights (which change only how each weight is read). Reaches 1 to 4 along
/// every axis the grid has (a reach of 3 is not a whole 16-byte granule in either precision),
/// one and several outputs, a custom stencil with a diagonal tap. Generation of many more
/// cases is pinned by `kernels_unchanged`; this matrix keeps the compile time small.
fn operators(dim: usize) -> Vec<(Vec<Stencil>, bool)> {
    let shape = vec![32; dim];
    let g = Grid::unit(&shape).unwrap();
    let d =
        |a: usize, m: usize, p: usize| vec![Stencil::derivative(&g, Axis::ALL[a], m, p).unwrap()];
    let lap = |p: usize| vec![Stencil::laplacian(&g, p).unwrap()];
    let last = dim - 1;
    let mut ops = vec![
        (d(0, 1, 8), dim == 1),
        (d(last, 1, 6), false),
        (d(last, 2, 4), false),
        (lap(2), false),
        (lap(8), true),
    ];
    if dim > 1 {
        ops.push((d(0, 1, 6), false));
        ops.push((Stencil::gradient(&g, 8).unwrap(), true));
    }
    if dim > 2 {
        ops.push((d(1, 1, 8), false));
        ops.push((lap(6), false));
    }
    let mut taps = vec![([0, 0, 0], 1.0), ([-1, 0, 0], -0.5)];
    if dim > 1 {
        taps.push(([1, -1, 0], 0.25));
    }
    ops.push((vec![Stencil::custom(&taps).unwrap()], false));
    ops
}

/// Every kernel of the matrix, once each (equal code has an equal name).
fn all_kernels() -> Vec<CudaSource> {
    let mut out: Vec<CudaSource> = vec![];
    let mut seen = std::collections::HashSet::new();
    for dim in 1..=3 {
        for (stencils, constant) in operators(dim) {
            for strategy in Strategy::conformance_set() {
                for precision in Precision::ALL {
                    for boundary in Boundary::ALL {
                        for coefficients in [Coefficients::Immediate, Coefficients::Constant] {
                            if coefficients == Coefficients::Constant && !constant {
                                continue;
                            }
                            let spec = KernelSpec {
                                stencils: &stencils,
                                boundary,
                                precision,
                                strategy,
                                coefficients,
                            };
                            if strategy
                                .supports_spec(&stencils, boundary, precision)
                                .is_ok()
                            {
                                let k = generate(&spec).expect("supported strategy generates");
                                if seen.insert(k.name.clone()) {
                                    out.push(k);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// (family, boundary, precision) of every supported combination, over `ops`.
fn coverage(ops: &[(Vec<Stencil>, Boundary)]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (stencils, boundary) in ops {
        for strategy in Strategy::conformance_set() {
            for precision in Precision::ALL {
                if strategy
                    .supports_spec(stencils, *boundary, precision)
                    .is_ok()
                {
                    let family = strategy.name().split('-').next().unwrap_or("").to_string();
                    out.insert(format!("{family} {} {precision:?}", boundary.name()));
                }
            }
        }
    }
    out
}

#[test]
fn the_compile_matrix_covers_every_family_boundary_and_precision() {
    let matrix: Vec<(Vec<Stencil>, Boundary)> = (1..=3)
        .flat_map(operators)
        .flat_map(|(s, _)| Boundary::ALL.into_iter().map(move |b| (s.clone(), b)))
        .collect();
    let conformance: Vec<(Vec<Stencil>, Boundary)> = fdlab_core::conformance::cases()
        .into_iter()
        .map(|c| (c.stencils, c.boundary))
        .collect();
    let (have, want) = (coverage(&matrix), coverage(&conformance));
    let missing: Vec<&String> = want.difference(&have).collect();
    assert!(missing.is_empty(), "not compiled: {missing:?}");
    assert!(want.len() > 40, "{want:?}");
}

#[test]
fn every_generated_kernel_compiles_for_sm_90() {
    let mut kernels = all_kernels();
    assert!(kernels.len() > 500, "only {} kernels", kernels.len());
    // FDLAB_CODEGEN_FILTER=zmarch compiles only matching kernels (for quick local runs).
    if let Ok(f) = std::env::var("FDLAB_CODEGEN_FILTER") {
        kernels.retain(|k| k.name.contains(&f));
        eprintln!(
            "FDLAB_CODEGEN_FILTER={f}: compiling {} kernels",
            kernels.len()
        );
    }
    if !nvrtc_or_skip("every_generated_kernel_compiles_for_sm_90") {
        return;
    }
    // Several kernels per NVRTC call, chunks compiled on every core; every entry point of
    // the PTX collected. PTX for compute_90 with the optimizer off: the front end and the
    // lowering check every kernel in a tenth of the time; ptxas and the optimizer run on one
    // kernel per strategy shape and precision in `kernels_compile_to_sm_90_machine_code`.
    let chunks: Vec<&[CudaSource]> = kernels.chunks(48).collect();
    let mut entries: Vec<String> = chunks
        .par_iter()
        .flat_map_iter(|chunk| {
            let refs: Vec<&CudaSource> = chunk.iter().collect();
            let src = module_source(&refs);
            let ptx = nvrtc::compile_unoptimized("all_kernels_chunk", &src, "compute_90")
                .unwrap_or_else(|e| panic!("{e}"));
            ptx_entries(&ptx.to_src())
        })
        .collect();
    // The PTX holds exactly the kernels asked for: none missing, none twice, nothing else.
    let mut names: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
    entries.sort();
    names.sort();
    assert_eq!(entries.len(), names.len(), "entry points against kernels");
    for (e, n) in entries.iter().zip(&names) {
        assert_eq!(e, n, "PTX entry points differ from the kernels' names");
    }
    let compiled = entries.len();
    eprintln!("compiled {compiled} kernels to compute_90 PTX");
}

/// The names of the kernels (`.entry NAME(`) in a PTX module.
fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.split(".entry ").nth(1))
        .map(|rest| rest.trim_end_matches(['(', ' ']).to_string())
        .collect()
}

#[test]
fn ptx_entries_are_read_from_the_module() {
    let ptx = ".visible .entry fd_a_1(\n.param .u64 p\n)\n.visible .entry fd_b_2(\n";
    assert_eq!(ptx_entries(ptx), ["fd_a_1", "fd_b_2"]);
}

#[test]
fn kernels_compile_to_sm_90_machine_code() {
    if !nvrtc_or_skip("kernels_compile_to_sm_90_machine_code") {
        return;
    }
    // One kernel per strategy shape and precision, straight to CUBIN as the device path does.
    let mut seen = std::collections::HashSet::new();
    let picks: Vec<CudaSource> = all_kernels()
        .into_iter()
        .filter(|k| {
            // The name less its hash: the strategy and its shape.
            let shape = k.name.rsplit_once('_').map_or("", |(s, _)| s).to_string();
            seen.insert((shape, k.precision))
        })
        .collect();
    assert!(picks.len() >= 12, "{} shapes × precisions", picks.len());
    eprintln!("{} kernels to sm_90 CUBIN", picks.len());
    picks.par_iter().for_each(|k| {
        let cubin =
            nvrtc::compile_cubin(&k.name, &k.source(), "sm_90").unwrap_or_else(|e| panic!("{e}"));
        // An ELF image.
        assert_eq!(&cubin[..4], b"\x7fELF", "{}", k.name);
    });
}

#[test]
fn a_broken_kernel_fails_with_its_log_and_source_path() {
    if !nvrtc_or_skip("a_broken_kernel_fails_with_its_log_and_source_path") {
        return;
    }
    let mut k = all_kernels().swap_remove(0);
    k.body = k.body.replace("acc0 +=", "acc0 += undefined_symbol +");
    match nvrtc::compile(&k.name, &k.source(), "sm_90") {
        Err(Error::Compile {
            log, source_path, ..
        }) => {
            assert!(log.contains("undefined_symbol"), "log: {log}");
            assert!(std::path::Path::new(&source_path).exists(), "{source_path}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn generation_is_deterministic_and_names_follow_the_code() {
    let a = all_kernels();
    let b = all_kernels();
    assert_eq!(a, b);
    let mut bodies: Vec<&str> = a.iter().map(|k| k.body.as_str()).collect();
    bodies.sort_unstable();
    bodies.dedup();
    assert_eq!(
        bodies.len(),
        a.len(),
        "distinct names must mean distinct code"
    );
}

#[test]
fn pencils_refuse_multi_axis_stencils() {
    let g = Grid::unit(&[16, 16, 16]).unwrap();
    let lap = [Stencil::laplacian(&g, 2).unwrap()];
    let spec = KernelSpec {
        stencils: &lap,
        boundary: Boundary::Periodic,
        precision: Precision::F32,
        strategy: Strategy::PENCIL_LONG,
        coefficients: Coefficients::Immediate,
    };
    assert!(generate(&spec).is_err());
}

#[test]
fn strategy_names_round_trip() {
    for s in Strategy::conformance_set() {
        assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
    }
    assert!("warp-drive".parse::<Strategy>().is_err());
}

/// TMA-fed queue marches refuse what a tensor copy cannot do, with a message that says what to
/// use instead: periodic or Neumann images, boxes over 256 points, malformed names.
#[test]
fn tma_marches_refuse_what_tensor_copies_cannot_do() {
    let g = Grid::unit(&[64, 64, 64]).unwrap();
    let lap = [Stencil::laplacian(&g, 8).unwrap()];
    let ok: Strategy = "qmarch-32x8-r2-c128-v2-t2a".parse().unwrap();
    assert!(ok
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F64)
        .is_ok());
    for b in [Boundary::Periodic, Boundary::Neumann] {
        let e = ok.supports_spec(&lap, b, Precision::F64).unwrap_err();
        assert!(
            e.contains("Dirichlet") || e.contains("Neumann"),
            "{b:?}: {e}"
        );
    }
    // 256 points of tile plus a 4-point halo on each side: 264 > 256.
    let wide: Strategy = "qmarch-64x1-r1-c64-v4-t2a".parse().unwrap();
    let e = wide
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F32)
        .unwrap_err();
    assert!(e.contains("256"), "{e}");
    let spec = KernelSpec {
        stencils: &lap,
        boundary: Boundary::Dirichlet,
        precision: Precision::F32,
        strategy: wide,
        coefficients: Coefficients::Immediate,
    };
    assert!(generate(&spec).is_err());
    // Split slots copy the halo apart: the widest piece is the tile, 256 points.
    let split_wide: Strategy = "qmarch-64x1-r1-c64-v4-w2a".parse().unwrap();
    assert!(split_wide
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F32)
        .is_ok());
    assert!(generate(&KernelSpec {
        strategy: split_wide,
        ..spec
    })
    .is_ok());
    let split_wider: Strategy = "qmarch-128x1-r1-c64-v4-w2a".parse().unwrap();
    let e = split_wider
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F32)
        .unwrap_err();
    assert!(e.contains("256"), "{e}");
    for bad in [
        "qmarch-32x8-r2-c64-v2-t0",
        "qmarch-32x8-r2-c64-v2-ta",
        "qmarch-32x8-r2-c64-v2-x2",
    ] {
        assert!(bad.parse::<Strategy>().is_err(), "{bad}");
    }
    assert_eq!(
        "qmarch-32x8-r2-c64-v2-t3"
            .parse::<Strategy>()
            .unwrap()
            .name(),
        "qmarch-32x8-r2-c64-v2-t3"
    );
}

/// Split slots (`-wNa`) take periodic grids, which one tensor copy per plane cannot, and refuse
/// what their layout cannot hold: a value queue, tiles not 128 bytes wide, halo corners.
#[test]
fn split_slots_take_periodic_grids_and_refuse_what_they_cannot_hold() {
    let g = Grid::unit(&[64, 64, 64]).unwrap();
    let grad = Stencil::gradient(&g, 8).unwrap();
    let lap = [Stencil::laplacian(&g, 8).unwrap()];
    let split: Strategy = "qmarch-32x16-r2-c256-v2-w2a".parse().unwrap();
    assert_eq!(split.name(), "qmarch-32x16-r2-c256-v2-w2a");
    let streaming: Strategy = "qmarch-32x16-r1-c128-v4-w2a-cs".parse().unwrap();
    assert_eq!(streaming.name(), "qmarch-32x16-r1-c128-v4-w2a-cs");
    assert!("qmarch-32x16-r1-c128-v4-cs".parse::<Strategy>().is_ok());
    assert!("qmarch-32x16-r1-c128-v4-w2a-ss"
        .parse::<Strategy>()
        .is_err());
    for b in [Boundary::Periodic, Boundary::Dirichlet] {
        assert!(
            split.supports_spec(&grad, b, Precision::F32).is_ok(),
            "{b:?}"
        );
        assert!(
            split.supports_spec(&lap, b, Precision::F64).is_ok(),
            "{b:?}"
        );
    }
    let whole: Strategy = "qmarch-32x16-r2-c256-v2-t2a".parse().unwrap();
    assert!(whole
        .supports_spec(&grad, Boundary::Periodic, Precision::F32)
        .is_err());
    let e = split
        .supports_spec(&grad, Boundary::Neumann, Precision::F32)
        .unwrap_err();
    assert!(e.contains("Neumann"), "{e}");
    // The value queue has no split layout.
    let e = "qmarch-32x16-r2-c256-v2-w2"
        .parse::<Strategy>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("-wNa"), "{e}");
    // 16 floats: 64 bytes, not a whole number of 128-byte pieces.
    let narrow: Strategy = "qmarch-8x16-r2-c256-v2-w2a".parse().unwrap();
    let e = narrow
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F32)
        .unwrap_err();
    assert!(e.contains("128 bytes"), "{e}");
    assert!(narrow
        .supports_spec(&lap, Boundary::Dirichlet, Precision::F64)
        .is_ok());
    // A diagonal tap reads a halo corner.
    let corner =
        [Stencil::custom(&[([0, 0, 0], 1.0), ([1, 1, 0], 0.5), ([0, 0, 1], 0.25)]).unwrap()];
    let e = split.supports(&corner).unwrap_err();
    assert!(e.contains("corner"), "{e}");
    // Generated kernels take one tensor map per distinct piece box: top/bottom rows, interior,
    // left/right columns.
    let spec = KernelSpec {
        stencils: &grad,
        boundary: Boundary::Periodic,
        precision: Precision::F32,
        strategy: split,
        coefficients: Coefficients::Immediate,
    };
    let k = generate(&spec).unwrap();
    assert_eq!(k.tensor_boxes.len(), 3, "{:?}", k.tensor_boxes);
    assert!(k.source().contains("fd_whole"));
    assert!(!k.source().contains("__stcs"));
    let k = generate(&KernelSpec {
        strategy: streaming,
        ..spec
    })
    .unwrap();
    assert!(k.source().contains("__stcs"));
}

/// Edge sectors read ahead (`smarch … -e`): the name round-trips, with every way of copying
/// planes; the reads are generated only for interior-only outputs, where rows have edges.
#[test]
fn smarch_edge_reads_only_touch_interior_outputs() {
    let g = Grid::unit(&[64, 64, 64]).unwrap();
    let lap = [Stencil::laplacian(&g, 2).unwrap()];
    for name in [
        "smarch-128x1-r8-c128-p1-v4-l-e",
        "smarch-16x4-r2-c64-p2-e",
        "smarch-16x4-r2-c64-p2-v2-b-e",
    ] {
        let s: Strategy = name.parse().unwrap();
        assert_eq!(s.name(), name);
        s.supports(&lap).unwrap();
    }
    let s: Strategy = "smarch-128x1-r8-c128-p1-v4-l-e".parse().unwrap();
    let source = |b: Boundary| {
        generate(&KernelSpec {
            stencils: &lap,
            boundary: b,
            precision: Precision::F32,
            strategy: s,
            coefficients: Coefficients::Immediate,
        })
        .unwrap()
        .source()
        .to_string()
    };
    assert!(source(Boundary::Dirichlet).contains("fd_edge"));
    assert!(!source(Boundary::Periodic).contains("fd_edge"));
}

#[test]
fn one_point_per_thread_kernels_say_which_grids_one_launch_cannot_cover() {
    let g = Grid::unit(&[16, 16]).unwrap();
    let lap = [Stencil::laplacian(&g, 2).unwrap()];
    for (strategy, single) in [
        (Strategy::AMD_BASELINE, true),
        (Strategy::NAIVE, true),
        (Strategy::PENCIL_LONG, false),
    ] {
        let stencils = if single {
            lap.to_vec()
        } else {
            vec![Stencil::derivative(&g, Axis::X, 1, 4).unwrap()]
        };
        let spec = KernelSpec {
            stencils: &stencils,
            boundary: Boundary::Dirichlet,
            precision: Precision::F32,
            strategy,
            coefficients: Coefficients::Immediate,
        };
        let k = generate(&spec).unwrap();
        assert_eq!(k.single_pass, single, "{}", k.name);
        assert_eq!(k.uncovered([8192, 8192, 1]), None, "{}", k.name);
        let tall = [16, 70_000 * k.block[1] as usize, 1];
        match k.uncovered(tall) {
            Some((1, blocks, 65535)) => assert!(single && blocks == 70_000, "{}", k.name),
            None => assert!(!single, "{}", k.name),
            other => panic!("{}: {other:?}", k.name),
        }
    }
}
