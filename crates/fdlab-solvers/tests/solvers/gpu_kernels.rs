//! The GPU steppers' kernels compile with NVRTC for sm_90 without a GPU: every boundary,
//! dimension, precision and coefficient kind of the conformance cases (FDTD included), the
//! example cases and the benchmark's. NVRTC comes from PyPI (see `scripts/test.sh`); without it the test fails
//! when `FDLAB_REQUIRE_NVRTC=1` (CI) and says that it skipped otherwise.

use fdlab_core::Precision;
use fdlab_cuda::nvrtc;
use fdlab_solvers::conformance::cases;
use fdlab_solvers::gpu::kernel_sources;
use fdlab_solvers::setup::Setup;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Whether NVRTC can be loaded; without it the test fails when `FDLAB_REQUIRE_NVRTC=1` (CI)
/// and says that it skipped otherwise.
fn nvrtc_or_skip() -> bool {
    if nvrtc::available() {
        return true;
    }
    assert_ne!(
        std::env::var("FDLAB_REQUIRE_NVRTC").as_deref(),
        Ok("1"),
        "FDLAB_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
    );
    eprintln!("SKIPPED: libnvrtc not found (set LD_LIBRARY_PATH; see scripts/test.sh)");
    false
}

#[test]
fn every_solver_kernel_compiles_for_sm_90() {
    if !nvrtc_or_skip() {
        return;
    }
    let mut setups: Vec<(Setup, Precision)> = cases(true)
        .into_iter()
        .map(|c| (c.setup, c.precision))
        .collect();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cases");
    for entry in std::fs::read_dir(dir).expect("examples/cases") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let case = fdlab_solvers::Case::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let p = fdlab_solvers::setup::prepare(&case).unwrap_or_else(|e| panic!("{e}"));
            setups.push((p.setup, case.spec.precision));
        }
    }
    let fdtd = setups
        .iter()
        .filter(|(s, _)| matches!(s, Setup::Fdtd(_)))
        .count();
    assert!(fdtd >= 10, "only {fdtd} FDTD setups");
    let mut kernels = BTreeMap::new();
    for (s, p) in &setups {
        for k in kernel_sources(s, *p).unwrap_or_else(|e| panic!("{e}")) {
            kernels.insert(k.name.clone(), k);
        }
    }
    assert!(kernels.len() >= 20, "only {} kernels", kernels.len());
    let failures: Vec<String> = kernels
        .par_iter()
        .filter_map(|(name, k)| {
            nvrtc::compile_cubin(name, &k.source(), "sm_90")
                .err()
                .map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let fdtd_kernels = kernels.keys().filter(|k| k.contains("fdtd")).count();
    assert!(fdtd_kernels >= 20, "only {fdtd_kernels} FDTD kernels");
    eprintln!(
        "{} solver kernels compiled, {fdtd_kernels} of them FDTD",
        kernels.len()
    );
}

/// Every temporal-blocking pass the steppers may run compiles for sm_90: for the heat step,
/// for each dimension, precision and boundary, the model's shape for every k (what a schedule's `pass=kK` and
/// `fdlab bench --suite temporal` run) and every device class's measured default; for the
/// wave step, every order (below). `FDLAB_PTXAS_INFO=1` prints
/// each one's registers and spills.
#[test]
fn every_temporal_pass_compiles_for_sm_90() {
    use fdlab_solvers::gpu::temporal::{measured_shapes, Request, K_MAX};
    use fdlab_solvers::gpu::{heat_pass_source, wave_pass_source};
    use fdlab_solvers::{HeatSetup, WaveBoundary, WaveSetup};
    if !nvrtc_or_skip() {
        return;
    }
    let mut kernels = BTreeMap::new();
    for (dim, n) in [(2, [8192, 8192, 1]), (3, [512, 512, 512])] {
        for periodic in [true, false] {
            let setup = HeatSetup {
                n,
                dim,
                spacing: [1.0, 0.8, 1.3],
                order: 2,
                dt: 0.05,
                kappa: vec![0.7],
                periodic,
                initial: vec![],
            };
            for p in [Precision::F32, Precision::F64] {
                let bytes = if p == Precision::F32 { 4 } else { 8 };
                let defaults = measured_shapes(dim, bytes).into_iter().map(Request::Shape);
                let requests = (2..=K_MAX).map(Request::K).chain(defaults);
                for request in requests {
                    // Shapes that do not fit are refused, not compiled.
                    if let Ok(Some((src, _))) = heat_pass_source(&setup, p, request) {
                        kernels.insert(src.name.clone(), src);
                    }
                }
            }
        }
    }
    let heat = kernels.len();
    assert!(heat >= 40, "only {heat} heat pass kernels");
    // The wave's (off by default: what `pass=k2` and `k3` run): orders 4 and 8 (the
    // others differ only in their weights and radius) in 3-D and 2-D, both boundaries and
    // precisions, two and three steps per pass where a tile fits.
    for (dim, n) in [(2, [8192, 8192, 1]), (3, [512, 512, 512])] {
        for order in [4, 8] {
            for boundary in [WaveBoundary::Periodic, WaveBoundary::Rigid] {
                let setup = WaveSetup {
                    n,
                    dim,
                    spacing: [1.0, 0.8, 1.3],
                    order,
                    dt: 0.05,
                    velocity: vec![1.5],
                    density: None,
                    boundary,
                    initial: vec![],
                    previous: None,
                    sources: vec![],
                    receiver_spread: vec![],
                    receivers: vec![],
                };
                for p in [Precision::F32, Precision::F64] {
                    for request in [Some(Request::K(2)), Some(Request::K(3))] {
                        if let Ok(Some((src, _))) = wave_pass_source(&setup, p, request) {
                            kernels.insert(src.name.clone(), src);
                        }
                    }
                }
            }
        }
    }
    assert!(
        kernels.len() - heat >= 24,
        "only {} wave pass kernels",
        kernels.len() - heat
    );
    // Two translation units (their helpers are guarded): one NVRTC call each, instead of one
    // per kernel, keeps the test short on few cores.
    let all: Vec<_> = kernels.values().collect();
    let failures: Vec<String> = all
        .par_chunks(all.len().div_ceil(2))
        .filter_map(|group| {
            let mut unit = group[0].source();
            for k in &group[1..] {
                unit.push_str(&k.body);
            }
            nvrtc::compile_cubin(&group[0].name, &unit, "sm_90")
                .err()
                .map(|e| format!("{}: {e}", group[0].name))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{} temporal pass kernels compiled", kernels.len());
}
