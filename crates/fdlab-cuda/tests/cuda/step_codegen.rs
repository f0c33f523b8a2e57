//! Step descriptions lowered to CUDA: every generated step kernel compiles with NVRTC for
//! sm_90 (no GPU needed), loads are shared, and the output is deterministic.

use crate::codegen_nvrtc::nvrtc_or_skip;
use fdlab_core::step::physics::{acoustic_vd, acoustic_vd_layers, AcousticVdSpec};
use fdlab_core::step::{Expr, FieldDecl, StepDescription, Update};
use fdlab_core::{Boundary, Grid, Precision, Stencil};
use fdlab_cuda::codegen::module_source;
use fdlab_cuda::codegen::step::emit_step;
use fdlab_cuda::nvrtc;

/// A step that reads its target at its own point and a state level written earlier.
fn two_updates(g: &Grid) -> StepDescription {
    let lap = Stencil::laplacian(g, 4).unwrap();
    StepDescription {
        dim: g.dim(),
        boundary: Boundary::Neumann,
        fields: vec![FieldDecl::state("u", 1), FieldDecl::auxiliary("a")],
        params: vec!["dt".into(), "s".into()],
        updates: vec![
            Update::new(
                "u",
                1,
                Expr::field("u") + Expr::param("dt") * Expr::field("u").diff_lap(lap),
            ),
            Update::new(
                "a",
                0,
                Expr::field("a") * Expr::param("s") - Expr::at("u", 1, [0; 3]),
            ),
        ],
    }
}

#[test]
fn step_kernels_compile_for_sm_90() {
    if !nvrtc_or_skip("step_kernels_compile_for_sm_90") {
        return;
    }
    let mut sources = vec![];
    for dim in 1..=3 {
        let g = Grid::unit(&vec![16; dim]).unwrap();
        for (acc, bc) in [
            (2, Boundary::Dirichlet),
            (4, Boundary::Periodic),
            (8, Boundary::Dirichlet),
        ] {
            sources.push(acoustic_vd(&g, acc, bc).unwrap());
        }
        sources.push(two_updates(&g));
        if dim > 1 {
            // CPML memory variables on half points, coefficients read at the nearest point
            // under the zero halo, point sources.
            let spec = AcousticVdSpec {
                accuracy: 8,
                boundary: Boundary::Dirichlet,
                layer: Some(4),
                sources: vec![[8, 8, 0], [3, 4, 0]],
            };
            sources.push(acoustic_vd_layers(&g, &spec).unwrap());
        }
    }
    // One module per precision: one NVRTC call each (kernels share the prelude).
    for p in Precision::ALL {
        let mut kernels: Vec<_> = sources
            .iter()
            .flat_map(|d| emit_step(d, p).unwrap())
            .map(|k| k.source)
            .collect();
        // Equal code has an equal name (the auxiliary update does not depend on the dimension).
        kernels.sort_by(|a, b| a.name.cmp(&b.name));
        kernels.dedup_by(|a, b| a.name == b.name);
        let src = module_source(&kernels.iter().collect::<Vec<_>>());
        if let Err(e) = nvrtc::compile_unoptimized("fdlab_step_module", &src, "sm_90") {
            panic!("{e}");
        }
    }
}

#[test]
fn the_target_is_read_through_out_and_loads_are_shared() {
    let g = Grid::unit(&[16, 16]).unwrap();
    let k = emit_step(&two_updates(&g), Precision::F64).unwrap();
    assert_eq!(k[1].inputs, vec![("u".to_string(), 1)]);
    assert!(k[1].source.body.contains("out[FD_IDX(i, j, k)];"));
    // Acoustic 2-D, accuracy 2: p and b at 5 points each, p(n−1), k.
    let d = acoustic_vd(&g, 2, Boundary::Dirichlet).unwrap();
    let k = emit_step(&d, Precision::F32).unwrap();
    assert_eq!(k[0].source.body.matches("__ldg").count(), 5 + 5 + 1 + 1);
    assert_eq!(emit_step(&d, Precision::F32).unwrap(), k, "deterministic");
}
