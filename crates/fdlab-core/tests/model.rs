//! The stencil model: Fornberg weights against published tables, stencil construction, the
//! boundary map, and every kind of bad input returning its exact error.

use fdlab_core::fornberg::{central_radius, central_weights_exact, fornberg_weights};
use fdlab_core::{
    central_weights, compare, Axis, Boundary, Error, Grid, Precision, Region, Stencil, MAX_POINTS,
};
use num_bigint::BigInt;
use num_rational::BigRational;

/// `"a/b"` or `"a"` as an exact rational.
fn q(s: &str) -> BigRational {
    let (n, d) = s.split_once('/').unwrap_or((s, "1"));
    BigRational::new(
        n.trim().parse::<BigInt>().expect("numerator"),
        d.trim().parse::<BigInt>().expect("denominator"),
    )
}

fn table(entries: &[&str]) -> Vec<BigRational> {
    entries.iter().map(|s| q(s)).collect()
}

// ---------------------------------------------------------------------------------------------
// Fornberg weights.

/// Central weights, offsets `-r..=r`, from Fornberg (1988), Table 1.
#[test]
fn fornberg_central_weights_match_published_tables() {
    let tables: &[(usize, usize, &[&str])] = &[
        (1, 2, &["-1/2", "0", "1/2"]),
        (1, 4, &["1/12", "-2/3", "0", "2/3", "-1/12"]),
        (
            1,
            6,
            &["-1/60", "3/20", "-3/4", "0", "3/4", "-3/20", "1/60"],
        ),
        (
            1,
            8,
            &[
                "1/280", "-4/105", "1/5", "-4/5", "0", "4/5", "-1/5", "4/105", "-1/280",
            ],
        ),
        (2, 2, &["1", "-2", "1"]),
        (2, 4, &["-1/12", "4/3", "-5/2", "4/3", "-1/12"]),
        (
            2,
            6,
            &["1/90", "-3/20", "3/2", "-49/18", "3/2", "-3/20", "1/90"],
        ),
        (
            2,
            8,
            &[
                "-1/560", "8/315", "-1/5", "8/5", "-205/72", "8/5", "-1/5", "8/315", "-1/560",
            ],
        ),
        // Spot checks for the third and fourth derivatives.
        (3, 2, &["-1/2", "1", "0", "-1", "1/2"]),
        (3, 4, &["1/8", "-1", "13/8", "0", "-13/8", "1", "-1/8"]),
        (
            3,
            6,
            &[
                "-7/240", "3/10", "-169/120", "61/30", "0", "-61/30", "169/120", "-3/10", "7/240",
            ],
        ),
        (4, 2, &["1", "-4", "6", "-4", "1"]),
        (4, 4, &["-1/6", "2", "-13/2", "28/3", "-13/2", "2", "-1/6"]),
        (
            4,
            6,
            &[
                "7/240", "-2/5", "169/60", "-122/15", "91/8", "-122/15", "169/60", "-2/5", "7/240",
            ],
        ),
    ];
    for &(m, p, want) in tables {
        let got = central_weights_exact(m, p).expect("supported orders");
        assert_eq!(got, table(want), "derivative {m}, accuracy {p}");
        assert_eq!(got.len(), 2 * central_radius(m, p) + 1);
    }
}

#[test]
fn fornberg_one_sided_and_shifted_weights() {
    // Forward differences.
    assert_eq!(fornberg_weights(1, 0, &[0, 1]), table(&["-1", "1"]));
    assert_eq!(
        fornberg_weights(1, 0, &[0, 1, 2]),
        table(&["-3/2", "2", "-1/2"])
    );
    assert_eq!(
        fornberg_weights(2, 0, &[0, 1, 2, 3]),
        table(&["2", "-5", "4", "-1"])
    );
    // Interpolation (m = 0) at a node is the unit vector; at a midpoint, the mean.
    assert_eq!(fornberg_weights(0, 1, &[0, 1, 2]), table(&["0", "1", "0"]));
    assert_eq!(fornberg_weights(0, 1, &[0, 2]), table(&["1/2", "1/2"]));
    assert!(fornberg_weights(1, 0, &[]).is_empty());
}

#[test]
fn central_weights_sum_to_zero_and_have_symmetry() {
    for m in 1..=4 {
        for p in (2..=16).step_by(2) {
            let w = central_weights_exact(m, p).unwrap();
            let sum: BigRational = w.iter().sum();
            assert_eq!(sum, q("0"), "d{m}/{p}");
            let n = w.len();
            for j in 0..n {
                let mirrored = if m % 2 == 0 {
                    w[n - 1 - j].clone()
                } else {
                    -w[n - 1 - j].clone()
                };
                assert_eq!(w[j], mirrored, "d{m}/{p} symmetry at {j}");
            }
        }
    }
}

/// The published 8th-order first derivative (NVIDIA): a = 4/5, b = −1/5, c = 4/105,
/// d = −1/280, correctly rounded to f64 and divided by the spacing in the stencil.
#[test]
fn published_eighth_order_first_derivative_in_f64() {
    let w = central_weights(1, 8).unwrap();
    assert_eq!(w[5..], [4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0]);
    assert_eq!(w[..4], [1.0 / 280.0, -4.0 / 105.0, 1.0 / 5.0, -4.0 / 5.0]);
    assert_eq!(w[4], 0.0);

    let h = 1.0 / 63.0;
    let grid = Grid::new(&[64, 64, 64], &[h, 2.0 * h, 3.0 * h]).unwrap();
    for axis in Axis::ALL {
        let s = Stencil::derivative(&grid, axis, 1, 8).unwrap();
        let ha = grid.spacing()[axis.index()];
        assert_eq!(s.taps().len(), 8, "the zero centre weight is dropped");
        for t in s.taps() {
            let o = t.offset[axis.index()];
            assert_eq!(t.offset.iter().filter(|&&c| c != 0).count(), 1);
            assert_eq!(t.weight, w[(o + 4) as usize] / ha, "offset {o}");
        }
        assert_eq!(s.radius()[axis.index()], 4);
        assert_eq!(s.single_axis(), Some(axis));
    }
}

#[test]
fn laplacian_merges_centre_weights() {
    let grid = Grid::new(&[16, 16, 16], &[0.5, 0.25, 1.0]).unwrap();
    let s = Stencil::laplacian(&grid, 2).unwrap();
    assert_eq!(s.taps().len(), 7);
    assert_eq!(s.taps()[0].offset, [0, 0, 0]);
    assert_eq!(s.taps()[0].weight, -2.0 / 0.25 - 2.0 / 0.0625 - 2.0);
    assert_eq!(s.abs_sum(), 2.0 * (4.0 + 4.0 + 16.0 + 16.0 + 1.0 + 1.0));
    assert_eq!(s.single_axis(), None);
    let s8 = Stencil::laplacian(&grid, 8).unwrap();
    assert_eq!(s8.taps().len(), 1 + 3 * 8);
    assert_eq!(s8.radius(), [4, 4, 4]);
    assert_eq!(s8.label(), "lap/8");
}

// ---------------------------------------------------------------------------------------------
// Boundaries.

#[test]
fn boundary_map_periodic_dirichlet_neumann() {
    let n = 5;
    let cases: [(i64, [Option<usize>; 3]); 7] = [
        (-3, [Some(2), None, Some(3)]),
        (-1, [Some(4), None, Some(1)]),
        (0, [Some(0), Some(0), Some(0)]),
        (4, [Some(4), Some(4), Some(4)]),
        (5, [Some(0), None, Some(3)]),
        (6, [Some(1), None, Some(2)]),
        (8, [Some(3), None, Some(0)]),
    ];
    for (i, want) in cases {
        for (b, w) in Boundary::ALL.iter().zip(want) {
            assert_eq!(b.map(i, n), w, "{b} map({i}, {n})");
        }
    }
}

#[test]
fn boundary_check_regions() {
    let grid = Grid::unit(&[10, 8, 6]).unwrap();
    let lap = Stencil::laplacian(&grid, 4).unwrap();
    assert_eq!(
        Boundary::Dirichlet
            .check(&grid, std::slice::from_ref(&lap))
            .unwrap(),
        Region {
            lo: [2, 2, 2],
            hi: [8, 6, 4]
        }
    );
    for b in [Boundary::Periodic, Boundary::Neumann] {
        assert_eq!(
            b.check(&grid, std::slice::from_ref(&lap)).unwrap(),
            Region::all(&grid)
        );
    }
    // An asymmetric stencil: the interior follows each side's reach.
    let s = Stencil::custom(&[([-3, 0, 0], 1.0), ([1, 2, 0], 1.0)]).unwrap();
    let r = Boundary::Dirichlet.check(&grid, &[s]).unwrap();
    assert_eq!(
        r,
        Region {
            lo: [3, 0, 0],
            hi: [9, 6, 6]
        }
    );
    assert_eq!(r.len(), 6 * 6 * 6);
}

#[test]
fn compare_requires_untouched_points_bit_for_bit() {
    let grid = Grid::unit(&[4, 4]).unwrap();
    let region = Region {
        lo: [1, 1, 0],
        hi: [3, 3, 1],
    };
    let want = vec![f64::NAN; 16];
    let mut got = want.clone();
    assert!(
        compare(&grid, region, &got, &want, 1.0).is_err(),
        "NaN inside fails"
    );
    for j in 1..3 {
        for i in 1..3 {
            got[grid.index(i, j, 0)] = 1.0;
        }
    }
    let mut want2 = got.clone();
    assert!(compare(&grid, region, &got, &want2, 1.0).is_ok());
    want2[grid.index(1, 1, 0)] = 1.0 + 0.5e-12;
    assert!(
        compare(&grid, region, &got, &want2, 1.0).is_ok(),
        "within tolerance"
    );
    got[0] = 0.0;
    let m = compare(&grid, region, &got, &want2, 1.0).unwrap_err();
    assert_eq!((m.at, m.count, m.tolerance), ([0, 0, 0], 1, 0.0));
}

#[test]
fn conformance_cases_cover_every_shape_and_boundary() {
    let cases = fdlab_core::conformance::cases();
    for shape in fdlab_core::conformance::shapes() {
        for b in Boundary::ALL {
            assert!(
                cases
                    .iter()
                    .any(|c| c.grid.dims() == shape.as_slice() && c.boundary == b),
                "no case for {shape:?} {b}"
            );
        }
    }
    assert!(
        cases.iter().any(|c| c.stencils.len() == 3),
        "no 3-D gradient"
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: each gives its exact error.

#[test]
fn bad_grid_zero_size() {
    for shape in [&[0][..], &[4, 0], &[4, 4, 0]] {
        let h = vec![1.0; shape.len()];
        let e = Grid::new(shape, &h).unwrap_err();
        assert!(matches!(e, Error::Size { .. }), "{shape:?}: {e:?}");
    }
    assert!(matches!(Grid::unit(&[0, 3]), Err(Error::Size { .. })));
}

#[test]
fn bad_grid_absurd_size() {
    let e = Grid::unit(&[1 << 20, 1 << 20, 2]).unwrap_err();
    assert!(matches!(e, Error::Size { .. }), "{e:?}");
    // Overflowing products are absurd too, not a wrap-around.
    let e = Grid::unit(&[usize::MAX, 3]).unwrap_err();
    assert!(matches!(e, Error::Size { .. }), "{e:?}");
    let e = Grid::unit(&[1 << 32, 1 << 32, 1 << 32]).unwrap_err();
    assert!(matches!(e, Error::Size { .. }), "{e:?}");
    // The limit itself is fine.
    assert_eq!(Grid::unit(&[MAX_POINTS]).unwrap().len(), MAX_POINTS);
}

#[test]
fn bad_grid_axis_count_and_spacing_count() {
    assert!(matches!(Grid::new(&[], &[]), Err(Error::Size { .. })));
    assert!(matches!(
        Grid::new(&[2, 2, 2, 2], &[1.0; 4]),
        Err(Error::Size { .. })
    ));
    assert_eq!(
        Grid::new(&[4, 4], &[1.0]).unwrap_err(),
        Error::Shape {
            expected: vec![2],
            got: vec![1]
        }
    );
}

#[test]
fn bad_grid_spacing() {
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = Grid::new(&[4, 4], &[1.0, v]).unwrap_err();
        match e {
            Error::Spacing { axis: 'y', value } => {
                assert!(value.is_nan() == v.is_nan() && (v.is_nan() || value == v))
            }
            e => panic!("non-finite spacing {v}: {e:?}"),
        }
    }
    for v in [0.0, -0.0, -1.0, -f64::MIN_POSITIVE] {
        assert_eq!(
            Grid::new(&[4, 4, 4], &[1.0, 1.0, v]).unwrap_err(),
            Error::Spacing {
                axis: 'z',
                value: v
            },
            "spacing {v}"
        );
    }
}

#[test]
fn bad_order_odd_and_too_high_accuracy() {
    let g = Grid::unit(&[64]).unwrap();
    for p in [0, 1, 3, 7, 17, 18, 100] {
        let e = Stencil::derivative(&g, Axis::X, 1, p).unwrap_err();
        assert!(matches!(e, Error::Order { .. }), "accuracy {p}: {e:?}");
        let e = Stencil::laplacian(&g, p).unwrap_err();
        assert!(
            matches!(e, Error::Order { .. }),
            "laplacian accuracy {p}: {e:?}"
        );
    }
    assert!(matches!(
        central_weights_exact(2, 18),
        Err(Error::Order { .. })
    ));
    assert!(Stencil::derivative(&g, Axis::X, 1, 16).is_ok());
}

#[test]
fn bad_order_derivative_zero_and_five() {
    let g = Grid::unit(&[64]).unwrap();
    for m in [0, 5, 6] {
        let e = Stencil::derivative(&g, Axis::X, m, 2).unwrap_err();
        assert!(matches!(e, Error::Order { .. }), "derivative {m}: {e:?}");
    }
    assert!(Stencil::derivative(&g, Axis::X, 4, 2).is_ok());
}

#[test]
fn bad_stencil_along_an_axis_the_grid_lacks() {
    let g2 = Grid::unit(&[8, 8]).unwrap();
    let e = Stencil::derivative(&g2, Axis::Z, 1, 2).unwrap_err();
    assert!(matches!(e, Error::Stencil { .. }), "{e:?}");
    let g1 = Grid::unit(&[8]).unwrap();
    assert!(matches!(
        Stencil::derivative(&g1, Axis::Y, 1, 2),
        Err(Error::Stencil { .. })
    ));
    // A stencil built for 3-D, checked on 2-D.
    let dz = Stencil::custom(&[([0, 0, 1], 1.0), ([0, 0, -1], -1.0)]).unwrap();
    for b in Boundary::ALL {
        assert!(matches!(
            b.check(&g2, std::slice::from_ref(&dz)),
            Err(Error::Stencil { .. })
        ));
    }
    assert!(matches!(dz.check_axes(&g2), Err(Error::Stencil { .. })));
}

#[test]
fn bad_stencil_wider_than_grid_each_boundary() {
    let g = Grid::unit(&[7, 20, 20]).unwrap();
    let dx = Stencil::derivative(&g, Axis::X, 1, 8).unwrap(); // radius 4
    for (b, needed) in [
        (Boundary::Periodic, 9),
        (Boundary::Dirichlet, 9),
        (Boundary::Neumann, 5),
    ] {
        let n = needed - 1;
        let g = Grid::unit(&[n, 20, 20]).unwrap();
        assert_eq!(
            b.check(&g, std::slice::from_ref(&dx)).unwrap_err(),
            Error::StencilTooWide {
                axis: 'x',
                radius: 4,
                n,
                needed,
                boundary: b.name()
            }
        );
        let g = Grid::unit(&[needed, 20, 20]).unwrap();
        assert!(b.check(&g, std::slice::from_ref(&dx)).is_ok());
    }
    // Asymmetric reach: periodic and Dirichlet need both sides, Neumann the longer one.
    let s = Stencil::custom(&[([0, 0, -3], 1.0), ([0, 0, 1], 1.0)]).unwrap();
    let g4 = Grid::unit(&[4, 4, 4]).unwrap();
    assert_eq!(
        Boundary::Periodic
            .check(&g4, std::slice::from_ref(&s))
            .unwrap_err(),
        Error::StencilTooWide {
            axis: 'z',
            radius: 3,
            n: 4,
            needed: 5,
            boundary: "periodic"
        }
    );
    assert!(Boundary::Neumann.check(&g4, &[s]).is_ok());
    let _ = g;
}

#[test]
fn bad_no_stencils() {
    let g = Grid::unit(&[8]).unwrap();
    for b in Boundary::ALL {
        assert!(matches!(b.check(&g, &[]), Err(Error::Stencil { .. })));
    }
}

#[test]
fn bad_custom_stencils() {
    let e = Stencil::custom(&[]).unwrap_err();
    assert!(matches!(e, Error::Stencil { .. }), "empty: {e:?}");
    let e = Stencil::custom(&[([1, 0, 0], 1.0), ([0, 0, 0], 2.0), ([1, 0, 0], 3.0)]).unwrap_err();
    assert!(matches!(e, Error::Stencil { .. }), "duplicate: {e:?}");
    for w in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0] {
        let e = Stencil::custom(&[([0, 0, 0], 1.0), ([1, 0, 0], w)]).unwrap_err();
        assert!(matches!(e, Error::Stencil { .. }), "weight {w}: {e:?}");
    }
    let e = Stencil::custom(&[([0, 65, 0], 1.0)]).unwrap_err();
    assert!(matches!(e, Error::Stencil { .. }), "reach 65: {e:?}");
    assert!(Stencil::custom(&[([0, -64, 0], 1.0)]).is_ok());
}

/// Spacings whose powers leave the range of f64 used to give weights of ±inf (1e-100, 4th
/// derivative: 1e-400 underflows to 0) or all zeros (1e300, 2nd derivative: 1e600 overflows),
/// and the executors then returned NaN or 0 without an error.
#[test]
fn bad_spacing_that_makes_weights_infinite_or_zero() {
    let tiny = Grid::new(&[16, 16], &[1e-100, 1e-100]).unwrap();
    let huge = Grid::new(&[16, 16], &[1e300, 1e300]).unwrap();
    let cases = [
        Stencil::derivative(&tiny, Axis::X, 4, 2),
        Stencil::derivative(&huge, Axis::Y, 2, 4),
        Stencil::laplacian(&huge, 2),
        Stencil::laplacian(&Grid::new(&[16], &[1e-200]).unwrap(), 2),
    ];
    for (n, r) in cases.into_iter().enumerate() {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::Stencil { .. }), "case {n}: {e:?}");
        assert!(e.to_string().contains("rescale the grid"), "case {n}: {e}");
    }
    // Within range, however extreme, the weights are kept and are exactly scaled.
    let d = Stencil::derivative(&tiny, Axis::X, 1, 2).unwrap();
    assert!(d
        .taps()
        .iter()
        .all(|t| t.weight.is_finite() && t.weight != 0.0));
    assert_eq!(d.taps()[1].weight, 0.5 / 1e-100);
    let d = Stencil::derivative(&huge, Axis::X, 1, 8).unwrap();
    assert!(d
        .taps()
        .iter()
        .all(|t| t.weight.is_finite() && t.weight != 0.0));
    assert!(Stencil::gradient(&huge, 2).is_ok());
}

#[test]
fn bad_names() {
    let e = "robin".parse::<Boundary>().unwrap_err();
    assert_eq!(
        e,
        Error::Unknown {
            kind: "boundary",
            name: "robin".into(),
            valid: vec!["periodic".into(), "dirichlet".into(), "neumann".into()]
        }
    );
    assert!(
        e.to_string().contains("periodic, dirichlet, neumann"),
        "{e}"
    );
    let e = "f16".parse::<Precision>().unwrap_err();
    assert_eq!(
        e,
        Error::Unknown {
            kind: "precision",
            name: "f16".into(),
            valid: vec!["f32".into(), "f64".into()]
        }
    );
    assert!(matches!(
        "".parse::<Boundary>(),
        Err(Error::Unknown {
            kind: "boundary",
            ..
        })
    ));
    assert!(matches!(
        "w".parse::<Axis>(),
        Err(Error::Unknown { kind: "axis", .. })
    ));
    // The names that do parse.
    assert_eq!("Periodic".parse::<Boundary>(), Ok(Boundary::Periodic));
    assert_eq!("interior".parse::<Boundary>(), Ok(Boundary::Dirichlet));
    assert_eq!("DOUBLE".parse::<Precision>(), Ok(Precision::F64));
    for b in Boundary::ALL {
        assert_eq!(b.name().parse::<Boundary>(), Ok(b));
    }
    for p in Precision::ALL {
        assert_eq!(p.name().parse::<Precision>(), Ok(p));
    }
}
