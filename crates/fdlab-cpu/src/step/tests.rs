//! The reference executor on small descriptions whose results are known.

use super::run_step;
use fdlab_core::step::{Expr, FieldDecl, Slots, StepDescription, StepError, StepRegion, Update};
use fdlab_core::{Boundary, Field, Grid, Region, Stencil};

fn heat(g: &Grid, region: StepRegion) -> StepDescription {
    let u = Expr::field("u");
    let lap = Stencil::laplacian(g, 2).unwrap();
    StepDescription {
        dim: g.dim(),
        boundary: Boundary::Periodic,
        fields: vec![FieldDecl::state("u", 1)],
        params: vec!["dt".into()],
        updates: vec![
            Update::new("u", 1, u.clone() + Expr::param("dt") * u.diff_lap(lap)).on(region),
        ],
    }
}

/// A heat step is `u + dt·Δu` on every point, periodic.
#[test]
fn heat_step_matches_the_stencil_reference() {
    let g = Grid::new(&[13, 7], &[0.1, 0.2]).unwrap();
    let d = heat(&g, StepRegion::All);
    let u0 = Field::<f64>::random(&g, 9);
    let mut s = Slots::new(&d, |_, _| Ok::<_, ()>(u0.clone())).unwrap();
    run_step(&d, &g, &mut s, &[("dt", 0.001)]).unwrap();
    let lap = Stencil::laplacian(&g, 2).unwrap();
    let mut out = Field::<f64>::nan(&g);
    crate::reference::apply(&[lap], Boundary::Periodic, u0.view(), &mut [out.view_mut()]).unwrap();
    for (p, v) in s.get("u", 0).unwrap().as_slice().iter().enumerate() {
        let want = u0.as_slice()[p] + 0.001 * out.as_slice()[p];
        assert!((v - want).abs() < 1e-13, "point {p}: {v} vs {want}");
    }
}

/// Points outside a box region keep the value the target buffer had.
#[test]
fn a_box_region_leaves_other_points_alone() {
    let g = Grid::new(&[8, 8], &[1.0, 1.0]).unwrap();
    let b = Region {
        lo: [2, 3, 0],
        hi: [5, 7, 1],
    };
    let d = heat(&g, StepRegion::Box(b));
    let mut s = Slots::new(&d, |_, l| {
        Ok::<_, ()>(Field::<f64>::filled(&g, if l == 1 { -7.0 } else { 1.0 }))
    })
    .unwrap();
    run_step(&d, &g, &mut s, &[("dt", 0.5)]).unwrap();
    let u = s.get("u", 0).unwrap();
    for j in 0..8 {
        for i in 0..8 {
            let want = if b.contains(i, j, 0) { 1.0 } else { -7.0 };
            assert_eq!(u.at(i, j, 0), want, "({i}, {j})");
        }
    }
}

/// Typed errors before any work: unknown names, levels, staggering, parameters.
#[test]
fn invalid_descriptions_are_refused_with_their_reason() {
    let g = Grid::unit(&[16]).unwrap();
    let good = heat(&g, StepRegion::All);
    let with = |e: Expr| {
        let mut d = good.clone();
        d.updates[0].expr = e;
        d.validate()
    };
    assert!(matches!(
        with(Expr::field("v")),
        Err(StepError::UnknownField { .. })
    ));
    assert!(matches!(
        with(Expr::param("dx")),
        Err(StepError::UnknownParam { .. })
    ));
    assert!(matches!(
        with(Expr::at("u", -1, [0; 3])),
        Err(StepError::Level { .. })
    ));
    assert!(matches!(
        with(Expr::at("u", 0, [0, 1, 0])),
        Err(StepError::Axis { .. })
    ));
    assert!(matches!(
        with(Expr::at("u", 1, [1, 0, 0])),
        Err(StepError::Level { .. })
    ));
    use fdlab_core::step::Stagger::{Backward, Forward};
    use fdlab_core::Axis::X;
    // D⁻ of an integer-point value, D⁺ of a half-point one, and a half-point result.
    let u = Expr::field("u");
    assert!(matches!(
        with(u.clone().d1(&g, X, Backward, 2).unwrap()),
        Err(StepError::Stagger { .. })
    ));
    let half = u.clone().d1(&g, X, Forward, 2).unwrap();
    assert!(matches!(with(half.clone()), Err(StepError::Stagger { .. })));
    assert!(matches!(
        with(half.clone().d1(&g, X, Forward, 2).unwrap()),
        Err(StepError::Stagger { .. })
    ));
    assert!(matches!(
        with(half.clone() + u.clone()),
        Err(StepError::Stagger { .. })
    ));
    assert!(with(half.d1(&g, X, Backward, 4).unwrap()).is_ok());
    // A centred stencil declared staggered.
    let c = Stencil::derivative(&g, X, 1, 2).unwrap();
    assert!(matches!(
        with(u.clone().diff(X, Forward, c)),
        Err(StepError::Stagger { .. })
    ));
    // Parameters at run time.
    let mut s = Slots::new(&good, |_, _| Ok::<_, ()>(Field::<f64>::zeros(&g))).unwrap();
    assert!(matches!(
        run_step(&good, &g, &mut s, &[]),
        Err(StepError::Params { .. })
    ));
    assert!(matches!(
        run_step(&good, &g, &mut s, &[("dt", 1.0), ("x", 1.0)]),
        Err(StepError::UnknownParam { .. })
    ));
    // A grid too small for a periodic read.
    let tiny = Grid::unit(&[2]).unwrap();
    let wide = heat(&tiny, StepRegion::All);
    let mut d = wide.clone();
    d.updates[0].expr = Expr::at("u", 0, [2, 0, 0]);
    assert!(matches!(
        d.validate_on(&tiny),
        Err(StepError::TooWide { .. })
    ));
}

/// A field stored on half points: its reads lie there, its updates must land there, and a
/// staggered operator brings it back; the layered acoustic step refuses a source outside the
/// grid before any work.
#[test]
fn half_point_fields_are_placed_and_checked() {
    use fdlab_core::step::physics::{acoustic_vd_layers, AcousticVdSpec};
    use fdlab_core::step::Stagger::{Backward, Forward};
    use fdlab_core::Axis::X;
    let g = Grid::new(&[12], &[0.5]).unwrap();
    let flux = |expr: Expr| StepDescription {
        dim: 1,
        boundary: Boundary::Dirichlet,
        fields: vec![
            FieldDecl::state("u", 1),
            FieldDecl::auxiliary("f").half_on(X),
        ],
        params: vec![],
        updates: vec![Update::new("f", 0, expr)],
    };
    let u = Expr::field("u");
    // D⁺u lies on half points: it may be stored in f; u itself may not.
    assert!(flux(u.clone().d1(&g, X, Forward, 2).unwrap())
        .validate()
        .is_ok());
    assert!(matches!(
        flux(u.clone()).validate(),
        Err(StepError::Stagger { .. })
    ));
    // f read back is on half points: adding it to u is refused, D⁻f is on integer points.
    let mut d = flux(u.clone().d1(&g, X, Forward, 2).unwrap());
    d.updates
        .push(Update::new("u", 1, u.clone() + Expr::field("f")));
    assert!(matches!(d.validate(), Err(StepError::Stagger { .. })));
    d.updates[1] = Update::new("u", 1, u + Expr::field("f").d1(&g, X, Backward, 2).unwrap());
    assert!(d.validate().is_ok());
    // With u = x², D⁻(D⁺u) = 2 away from the walls.
    let mut s = Slots::new(&d, |name, _| {
        Ok::<_, ()>(Field::<f64>::from_fn(&g, |x| {
            if name == "u" {
                x[0] * x[0]
            } else {
                0.0
            }
        }))
    })
    .unwrap();
    run_step(&d, &g, &mut s, &[]).unwrap();
    let u1 = s.get("u", 0).unwrap();
    for i in 2..10 {
        let x = i as f64 * 0.5;
        assert!((u1.at(i, 0, 0) - (x * x + 2.0)).abs() < 1e-12, "{i}");
    }
    let g2 = Grid::unit(&[20, 20]).unwrap();
    let spec = AcousticVdSpec {
        accuracy: 4,
        boundary: Boundary::Dirichlet,
        layer: Some(4),
        sources: vec![[5, 20, 0]],
    };
    let e = acoustic_vd_layers(&g2, &spec).unwrap_err();
    assert!(e.to_string().contains("outside the grid along y"), "{e}");
}
