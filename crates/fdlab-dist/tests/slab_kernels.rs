//! The kernels of GPU slabs with CPML layers (thinner than the layers, cut inside and outside
//! them) compile with NVRTC for sm_90 without a GPU. Without NVRTC the test fails when
//! `FDLAB_REQUIRE_NVRTC=1` (CI) and says that it skipped otherwise.

use fdlab_core::Precision;
use fdlab_cuda::nvrtc;
use fdlab_dist::slab::{self, Slab};
use fdlab_dist::{cases, decompose, last_axis_split};
use fdlab_solvers::gpu::kernel_sources;
use fdlab_solvers::setup::Setup;
use fdlab_solvers::WaveBoundary;
use std::collections::BTreeMap;

#[test]
fn cpml_slab_kernels_compile_for_sm_90() {
    if !nvrtc::available() {
        assert_ne!(
            std::env::var("FDLAB_REQUIRE_NVRTC").as_deref(),
            Ok("1"),
            "FDLAB_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        eprintln!("SKIPPED: libnvrtc not found (set LD_LIBRARY_PATH; see scripts/test.sh)");
        return;
    }
    let cpml = |thickness| WaveBoundary::Cpml { thickness, f0: 0.0 };
    let mut kernels = BTreeMap::new();
    for (n, dim, order, thickness, ranks) in [
        ([12, 10, 16], 3, 4, 6, 3),
        ([14, 9, 28], 3, 8, 4, 2),
        ([23, 12, 1], 2, 2, 10, 3),
    ] {
        let whole = cases::wave(n, dim, order, cpml(thickness));
        let Setup::Wave(w) = &whole else {
            unreachable!("a wave case")
        };
        let d = decompose(&whole, ranks, Some(last_axis_split(dim, ranks))).unwrap();
        for rank in 0..ranks {
            let s = Slab::new(&d, rank, dim, order / 2).unwrap();
            let part = Setup::Wave(slab::wave(w, &s).unwrap());
            for p in [Precision::F32, Precision::F64] {
                for k in kernel_sources(&part, p).unwrap() {
                    kernels.insert(k.name.clone(), k);
                }
            }
        }
    }
    let failures: Vec<String> = kernels
        .iter()
        .filter_map(|(name, k)| {
            nvrtc::compile_cubin(name, &k.source(), "sm_90")
                .err()
                .map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(kernels.keys().any(|k| k.contains("wave_cpml")));
}
