//! No environment variable changes a generated kernel: the sources of a heat case (with its
//! multi-step pass), a wave case with a CPML and FDTD cases (with and without Drude media and a
//! CPML) are the same with every former measuring switch set to a non-default value as with
//! none. Its own test binary, so that setting variables races no other test.

use fdlab_core::Precision;
use fdlab_solvers::gpu::generated::{generated_sources, GeneratedKernel};
use fdlab_solvers::setup::Setup;

/// Every variable the GPU steppers once read to override a choice, with a non-default value.
const FORMER: [(&str, &str); 33] = [
    ("FDLAB_SOLVER_LAUNCH", "64,2,16,1,2,1,2,1"),
    ("FDLAB_SHELL_BLOCKS", "3"),
    ("FDLAB_SHELL_TILE", "plane"),
    ("FDLAB_TEMPORAL", "2"),
    ("FDLAB_TEMPORAL_LAYOUT", "spread"),
    ("FDLAB_TEMPORAL_FIXED", "0"),
    ("FDLAB_TEMPORAL_PAIRS", "0"),
    ("FDLAB_TEMPORAL_LEAN", "0"),
    ("FDLAB_TEMPORAL_AHEAD", "1"),
    ("FDLAB_TEMPORAL_UNROLL", "4"),
    ("FDLAB_TB_DUMP", "/nonexistent"),
    ("FDLAB_WP_DUMP", "/nonexistent"),
    ("FDLAB_PRINT_RING", "1"),
    ("FDLAB_FDTD_INTERIOR", "0"),
    ("FDLAB_FDTD_SHELL_BLOCKS", "2"),
    ("FDLAB_FDTD_MERGED", "0"),
    ("FDLAB_FDTD_PASS_LAUNCH", "32,8,16"),
    ("FDLAB_FDTD_PASS_BLOCKS", "2"),
    ("FDLAB_FDTD_PASS_CORE_BLOCKS", "2"),
    ("FDLAB_FDTD_PASS_MERGED", "1"),
    ("FDLAB_FDTD_PASS", "0"),
    ("FDLAB_FDTD_ZALIGN", "0"),
    ("FDLAB_FDTD_CORE", "0"),
    ("FDLAB_FDTD_CORE_STREAM", "0"),
    ("FDLAB_FDTD_DRUDE_SPLIT", "0"),
    ("FDLAB_FDTD_DRUDE_LOADS", "1"),
    ("FDLAB_FDTD_DRUDE_CARRY", "2"),
    ("FDLAB_FDTD_DRUDE_AHEAD", "0"),
    ("FDLAB_FDTD_PASS_DRUDE_BLOCKS", "1"),
    ("FDLAB_FDTD_DRUDE_FIRST", "0"),
    ("FDLAB_FDTD_DRUDE_LAYERS", "0"),
    ("FDLAB_FDTD_DRUDE_STREAM", "0"),
    ("FDLAB_FDTD_MEDIA", "0"),
];

/// A 3-D heat case of order 2 with a constant diffusivity: the one that runs a multi-step pass.
const HEAT: &str = "physics = \"heat\"\nboundary = \"periodic\"\n[grid]\nshape = [64, 64, 64]\n\
    spacing = [1.0, 1.0, 1.0]\n[time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 2\n\
    [initial.gaussian]\ncenter = [32.0, 32.0, 32.0]\nwidth = 8.0\namplitude = 1.0\n\
    [material]\ndiffusivity = { constant = 1.0 }\n[output]\ndir = \"out\"\nevery = 100\n";

fn setups() -> Vec<(String, Setup)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cases/");
    let mut out = vec![];
    let heat = fdlab_solvers::Case::parse(HEAT, "<heat>".into()).expect("the heat case");
    out.push(("heat".into(), heat));
    for name in [
        "wave-3d.toml",
        "fdtd-dipole-cpml.toml",
        "fdtd-dipole-sphere.toml",
        "fdtd-cavity.toml",
    ] {
        let case = fdlab_solvers::Case::load(format!("{dir}{name}")).expect("an example case");
        out.push((name.into(), case));
    }
    out.into_iter()
        .map(|(n, c)| {
            let s = fdlab_solvers::setup::prepare(&c)
                .expect("a valid case")
                .setup;
            (n, s)
        })
        .collect()
}

fn all_sources(setups: &[(String, Setup)]) -> Vec<(String, Vec<GeneratedKernel>)> {
    let mut out = vec![];
    for (name, s) in setups {
        for p in [Precision::F32, Precision::F64] {
            for class in [None, Some("h100"), Some("h200")] {
                let k = generated_sources(s, p, None, class).expect("sources");
                out.push((format!("{name} {p:?} {class:?}"), k));
            }
        }
    }
    out
}

#[test]
fn no_environment_variable_changes_a_generated_kernel() {
    for (name, _) in FORMER {
        // SAFETY: this binary's only test; no other thread reads the environment.
        unsafe { std::env::remove_var(name) };
    }
    let setups = setups();
    let plain = all_sources(&setups);
    for (name, value) in FORMER {
        // SAFETY: as above.
        unsafe { std::env::set_var(name, value) };
    }
    let set = all_sources(&setups);
    assert_eq!(plain.len(), set.len());
    let kernels: usize = plain.iter().map(|(_, k)| k.len()).sum();
    assert!(kernels > 100, "{kernels} kernels");
    for ((case, a), (_, b)) in plain.iter().zip(&set) {
        assert_eq!(a, b, "{case}");
    }
    // The heat case runs a pass and the wave case has its CPML kernels.
    assert!(plain[0].1.iter().any(|k| k.name.contains("heat_pass")));
    assert!(plain[6].1.iter().any(|k| k.name.contains("wave_cpml")));
}
