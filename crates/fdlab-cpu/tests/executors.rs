//! The CPU executors: conformance of the fast executor with the reference, exactness on
//! polynomials, convergence order, bad input, and regressions.

use fdlab_core::conformance::{cases, check_case, Case};
use fdlab_core::{
    error_vs_fn, Axis, Boundary, Error, Field, FieldView, FieldViewMut, Grid, Region, Scalar,
    Stencil,
};
use fdlab_cpu::fast::{self, Options, Par, Simd, Stores};
use fdlab_cpu::reference;
use std::f64::consts::PI;

// ---------------------------------------------------------------------------------------------
// Conformance: one body, instantiated per scalar type and executor options.

/// Runs every conformance case through the reference and the fast executor with `opts`.
fn conformance<T: Scalar>(opts: Options) {
    let mut failures = vec![];
    let all = cases();
    assert!(all.len() > 100, "only {} conformance cases", all.len());
    for (n, case) in all.iter().enumerate() {
        let mut want = |c: &Case, u: FieldView<'_, T>, o: &mut [FieldViewMut<'_, T>]| {
            reference::apply(&c.stencils, c.boundary, u, o).map_err(|e| e.to_string())
        };
        let mut got = |c: &Case, u: FieldView<'_, T>, o: &mut [FieldViewMut<'_, T>]| {
            fast::apply_with(&c.stencils, c.boundary, u, o, &opts).map_err(|e| e.to_string())
        };
        if let Err(e) = check_case::<T>(case, 1000 + n as u64, &mut want, &mut got) {
            failures.push(format!("{}: {e}", case.label));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail with {} {opts:?}:\n{}",
        failures.len(),
        all.len(),
        T::PRECISION,
        failures.join("\n")
    );
}

fn opts(par: Par) -> Options {
    Options {
        par,
        ..Options::default()
    }
}

macro_rules! conformance_tests {
    ($($name:ident: $t:ty, $opts:expr;)*) => {
        $(
            #[test]
            fn $name() {
                conformance::<$t>($opts);
            }
        )*
    };
}

conformance_tests! {
    conformance_f32_seq: f32, opts(Par::Seq);
    conformance_f32_rayon: f32, opts(Par::Rayon);
    conformance_f64_seq: f64, opts(Par::Seq);
    conformance_f64_rayon: f64, opts(Par::Rayon);
    // Where the CPU has AVX-512F, `Simd::Auto` takes the AVX-512 pair loop (first derivatives
    // along y and z), flat planes (along z) and the AVX-512 loop over whole periodic rows
    // (derivatives along x); these keep the AVX2 pair and x loops tested there.
    conformance_f32_avx2: f32, Options { simd: Simd::Avx2, ..opts(Par::Rayon) };
    conformance_f64_avx2: f64, Options { simd: Simd::Avx2, ..opts(Par::Seq) };
}

/// The other code paths: every grid split across threads (z, y and x splits), streaming
/// stores, baseline loops, one, three or four taps per pass, small y-blocks, runs of one and
/// three rows, no prefetch (also in the AVX-512 pair loop), AVX2 loops only (no AVX-512) with streaming stores.
#[test]
fn conformance_variants() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .expect("a 3-thread pool");
    let split = Options {
        min_par_work: 0,
        ..Options::default()
    };
    let variants = [
        split,
        Options {
            stores: Stores::NonTemporal,
            ..split
        },
        Options {
            simd: Simd::Baseline,
            group: 1,
            block_bytes: 1,
            ..split
        },
        Options {
            group: 3,
            block_bytes: 0,
            stores: Stores::NonTemporal,
            par: Par::Seq,
            ..split
        },
        Options {
            run_rows: 3,
            prefetch_rows: 0,
            group: 4,
            ..split
        },
        Options {
            run_rows: 1,
            stores: Stores::Temporal,
            pair_prefetch_rows: 0,
            ..split
        },
        Options {
            simd: Simd::Avx2,
            stores: Stores::NonTemporal,
            ..split
        },
    ];
    pool.install(|| {
        for o in variants {
            conformance::<f32>(o);
            conformance::<f64>(o);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// Applies `stencils` with the reference and the fast executor, checks that they agree, and
/// returns the fast executor's outputs (NaN where nothing was computed) and the region.
fn apply_both(
    grid: &Grid,
    stencils: &[Stencil],
    boundary: Boundary,
    u: &Field<f64>,
) -> (Vec<Field<f64>>, Region) {
    let region = boundary.check(grid, stencils).expect("stencils fit");
    let mut want: Vec<Field<f64>> = stencils.iter().map(|_| Field::nan(grid)).collect();
    let mut got = want.clone();
    {
        let mut v: Vec<_> = want.iter_mut().map(|f| f.view_mut()).collect();
        reference::apply(stencils, boundary, u.view(), &mut v).expect("reference applies");
    }
    {
        let mut v: Vec<_> = got.iter_mut().map(|f| f.view_mut()).collect();
        fast::apply(stencils, boundary, u.view(), &mut v, Par::Rayon).expect("fast applies");
    }
    let amp = fdlab_core::max_abs(u.as_slice());
    for ((g, w), s) in got.iter().zip(&want).zip(stencils) {
        fdlab_core::compare(grid, region, g.as_slice(), w.as_slice(), s.abs_sum() * amp)
            .unwrap_or_else(|m| panic!("{}: fast and reference differ: {m}", s.label()));
    }
    (got, region)
}

/// A polynomial `Σ c_d x^d` and its derivatives.
#[derive(Debug, Clone)]
struct Poly(Vec<f64>);

impl Poly {
    /// Degree `deg`, fixed pseudo-random coefficients in [-1, 1] of size ~1 (so that the top
    /// term matters).
    fn new(deg: usize, seed: u64) -> Poly {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        Poly(
            (0..=deg)
                .map(|_| {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let r = (s >> 11) as f64 / (1u64 << 53) as f64;
                    // Keep away from 0 so the top coefficient is never negligible.
                    if r < 0.5 {
                        -0.5 - r
                    } else {
                        r
                    }
                })
                .collect(),
        )
    }

    fn eval(&self, x: f64) -> f64 {
        self.0.iter().rev().fold(0.0, |acc, c| acc * x + c)
    }

    fn derivative(&self, m: usize) -> Poly {
        let mut c = self.0.clone();
        for _ in 0..m {
            c = c
                .iter()
                .enumerate()
                .skip(1)
                .map(|(d, v)| d as f64 * v)
                .collect();
            if c.is_empty() {
                c.push(0.0);
            }
        }
        Poly(c)
    }

    /// `max |p(x)|` bound for `|x| <= r`.
    fn bound(&self, r: f64) -> f64 {
        self.0
            .iter()
            .enumerate()
            .map(|(d, c)| c.abs() * r.powi(d as i32))
            .sum()
    }
}

// ---------------------------------------------------------------------------------------------
// Exactness on polynomials.

/// Largest error of derivative `m`, accuracy `p`, along `axis` of a 3-D grid, on the product
/// `P(x)·Q(y)·R(z)` where the polynomial along `axis` has degree `deg` (the others degree 3),
/// divided by the rounding bound; `max_error / bound` below 1 means exact to rounding.
fn poly_error_ratio(m: usize, p: usize, axis: Axis, deg: usize) -> f64 {
    let r = fdlab_core::fornberg::central_radius(m, p);
    let a = axis.index();
    let mut shape = [4usize; 3];
    shape[a] = 2 * r + 6;
    let h = [0.125, 0.1, 0.15];
    let grid = Grid::new(&shape, &h).expect("valid grid");
    // Centre the polynomials on the grid so that |x - c| stays small.
    let c: [f64; 3] = std::array::from_fn(|b| (shape[b] - 1) as f64 * h[b] / 2.0);
    let polys: [Poly; 3] =
        std::array::from_fn(|b| Poly::new(if b == a { deg } else { 3 }, (7 * p + m + b) as u64));
    let dpa = polys[a].derivative(m);
    let u = Field::<f64>::from_fn(&grid, |x| {
        (0..3).map(|b| polys[b].eval(x[b] - c[b])).product()
    });
    let s = Stencil::derivative(&grid, axis, m, p).expect("valid stencil");
    let (got, region) = apply_both(&grid, std::slice::from_ref(&s), Boundary::Dirichlet, &u);
    let exact = |x: [f64; 3]| {
        (0..3)
            .map(|b| {
                if b == a {
                    dpa.eval(x[b] - c[b])
                } else {
                    polys[b].eval(x[b] - c[b])
                }
            })
            .product::<f64>()
    };
    let e = error_vs_fn(&grid, region, got[0].as_slice(), exact);
    assert_eq!(e.count, region.len());
    let amp: f64 = (0..3).map(|b| polys[b].bound(c[b] + 1e-9)).product();
    let bound = 64.0 * f64::EPSILON * s.abs_sum() * amp;
    e.max / bound
}

#[test]
fn polynomial_exactness_up_to_degree_p_plus_m_minus_1() {
    for p in (2..=12).step_by(2) {
        for m in 1..=4 {
            for axis in Axis::ALL {
                for deg in 0..p + m {
                    let q = poly_error_ratio(m, p, axis, deg);
                    assert!(
                        q <= 1.0,
                        "d{m}{}/{p} is not exact on degree {deg}: error {q} × rounding bound",
                        axis.name()
                    );
                }
            }
        }
    }
}

/// The test above can fail: one degree more is not exact.
#[test]
fn polynomial_of_degree_p_plus_m_is_not_exact() {
    for p in [2, 4, 6] {
        for m in [1, 2] {
            let q = poly_error_ratio(m, p, Axis::X, p + m);
            assert!(q > 1e3, "d{m}x/{p} on degree {}: only {q} × bound", p + m);
        }
    }
}

#[test]
fn laplacian_exact_on_polynomials_of_degree_p_plus_1_per_axis() {
    for p in (2..=12).step_by(2) {
        let r = p / 2;
        let shape = [2 * r + 3, 2 * r + 4, 2 * r + 5];
        let h = [0.125, 0.1, 0.15];
        let grid = Grid::new(&shape, &h).expect("valid grid");
        let c: [f64; 3] = std::array::from_fn(|b| (shape[b] - 1) as f64 * h[b] / 2.0);
        let polys: [Poly; 3] = std::array::from_fn(|b| Poly::new(p + 1, (31 * p + b) as u64));
        let d2: [Poly; 3] = std::array::from_fn(|b| polys[b].derivative(2));
        let u = Field::<f64>::from_fn(&grid, |x| {
            (0..3).map(|b| polys[b].eval(x[b] - c[b])).product()
        });
        let s = Stencil::laplacian(&grid, p).expect("valid stencil");
        let (got, region) = apply_both(&grid, std::slice::from_ref(&s), Boundary::Dirichlet, &u);
        let exact = |x: [f64; 3]| {
            let v: [f64; 3] = std::array::from_fn(|b| polys[b].eval(x[b] - c[b]));
            let w: [f64; 3] = std::array::from_fn(|b| d2[b].eval(x[b] - c[b]));
            w[0] * v[1] * v[2] + v[0] * w[1] * v[2] + v[0] * v[1] * w[2]
        };
        let e = error_vs_fn(&grid, region, got[0].as_slice(), exact);
        let amp: f64 = (0..3).map(|b| polys[b].bound(c[b] + 1e-9)).product();
        let bound = 64.0 * f64::EPSILON * s.abs_sum() * amp;
        assert!(
            e.max <= bound,
            "lap/{p}: max error {} > rounding bound {bound}",
            e.max
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Convergence order.

/// `log2(e_n / e_2n)` of the MAX error of `f` applied on grids of `n` and `2n` points per axis.
fn observed_order(n: usize, run: impl Fn(usize) -> f64) -> f64 {
    let (e1, e2) = (run(n), run(2 * n));
    (e1 / e2).log2()
}

#[test]
fn convergence_first_derivative_of_sine() {
    for p in [2, 4, 6, 8] {
        let run = |n: usize| {
            let grid = Grid::unit(&[n]).expect("valid grid");
            let u = Field::<f64>::from_fn(&grid, |x| (2.0 * PI * x[0]).sin());
            let s = Stencil::derivative(&grid, Axis::X, 1, p).expect("valid stencil");
            let (got, region) = apply_both(&grid, &[s], Boundary::Periodic, &u);
            let e = error_vs_fn(&grid, region, got[0].as_slice(), |x| {
                2.0 * PI * (2.0 * PI * x[0]).cos()
            });
            e.max
        };
        let q = observed_order(32, run);
        assert!((q - p as f64).abs() < 0.2, "d1x/{p}: observed order {q}");
    }
}

#[test]
fn convergence_first_derivative_along_y_and_z() {
    for (axis, p) in [(Axis::Y, 4), (Axis::Z, 8)] {
        let a = axis.index();
        let run = |n: usize| {
            let grid = Grid::unit(&[4, n, n]).expect("valid grid");
            let u = Field::<f64>::from_fn(&grid, |x| (2.0 * PI * x[a]).sin());
            let s = Stencil::derivative(&grid, axis, 1, p).expect("valid stencil");
            let (got, region) = apply_both(&grid, &[s], Boundary::Periodic, &u);
            error_vs_fn(&grid, region, got[0].as_slice(), |x| {
                2.0 * PI * (2.0 * PI * x[a]).cos()
            })
            .max
        };
        let q = observed_order(32, run);
        assert!(
            (q - p as f64).abs() < 0.2,
            "d1{}/{p}: observed order {q}",
            axis.name()
        );
    }
}

#[test]
fn convergence_laplacian_of_sines() {
    for dim in [2, 3] {
        for p in [2, 4, 6, 8] {
            let run = |n: usize| {
                let grid = Grid::unit(&vec![n; dim]).expect("valid grid");
                let f = |x: [f64; 3]| (0..dim).map(|a| (2.0 * PI * x[a]).sin()).product::<f64>();
                let u = Field::<f64>::from_fn(&grid, f);
                let s = Stencil::laplacian(&grid, p).expect("valid stencil");
                let (got, region) = apply_both(&grid, &[s], Boundary::Periodic, &u);
                let k2 = dim as f64 * (2.0 * PI).powi(2);
                error_vs_fn(&grid, region, got[0].as_slice(), |x| -k2 * f(x)).max
            };
            let q = observed_order(16, run);
            assert!(
                (q - p as f64).abs() < 0.2,
                "{dim}-D lap/{p}: observed order {q}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input: each returns the exact error, from both executors, and never panics.

type Outcome = fdlab_core::Result<()>;

/// Runs both executors on `grid`-shaped fields (outputs on `out_grids`) and returns both results.
fn both(
    stencils: &[Stencil],
    boundary: Boundary,
    grid: &Grid,
    out_grids: &[Grid],
) -> (Outcome, Outcome) {
    let u = Field::<f64>::random(grid, 3);
    let mut outs: Vec<Field<f64>> = out_grids.iter().map(Field::nan).collect();
    let r = {
        let mut v: Vec<_> = outs.iter_mut().map(|f| f.view_mut()).collect();
        reference::apply(stencils, boundary, u.view(), &mut v)
    };
    let f = {
        let mut v: Vec<_> = outs.iter_mut().map(|f| f.view_mut()).collect();
        fast::apply(stencils, boundary, u.view(), &mut v, Par::Rayon)
    };
    let f32_result = {
        let u = Field::<f32>::random(grid, 3);
        let mut outs: Vec<Field<f32>> = out_grids.iter().map(Field::nan).collect();
        let mut v: Vec<_> = outs.iter_mut().map(|f| f.view_mut()).collect();
        fast::apply(stencils, boundary, u.view(), &mut v, Par::Seq)
    };
    assert_eq!(f, f32_result, "f32 and f64 disagree");
    if r.is_err() && f.is_err() {
        for o in &outs {
            assert!(
                o.as_slice().iter().all(|v| v.is_nan()),
                "output written on error"
            );
        }
    }
    (r, f)
}

fn expect_error(stencils: &[Stencil], boundary: Boundary, grid: &Grid, outs: &[Grid]) -> Error {
    let (r, f) = both(stencils, boundary, grid, outs);
    let r = r.expect_err("reference accepts bad input");
    let f = f.expect_err("fast accepts bad input");
    assert_eq!(r, f, "the executors report different errors");
    r
}

#[test]
fn bad_input_wrong_number_of_outputs() {
    let g = Grid::unit(&[16, 16]).unwrap();
    let gx = Stencil::gradient(&g, 2).unwrap();
    let e = expect_error(&gx, Boundary::Periodic, &g, std::slice::from_ref(&g));
    assert_eq!(
        e,
        Error::Shape {
            expected: vec![2],
            got: vec![1]
        }
    );
    let d = Stencil::derivative(&g, Axis::X, 1, 2).unwrap();
    let e = expect_error(&[d], Boundary::Periodic, &g, &[g.clone(), g.clone()]);
    assert_eq!(
        e,
        Error::Shape {
            expected: vec![1],
            got: vec![2]
        }
    );
}

#[test]
fn bad_input_no_stencil() {
    let g = Grid::unit(&[16]).unwrap();
    let e = expect_error(&[], Boundary::Periodic, &g, &[]);
    assert!(matches!(e, Error::Stencil { .. }), "{e:?}");
}

#[test]
fn bad_input_mismatched_output_shape() {
    let g = Grid::unit(&[16, 12, 8]).unwrap();
    let other = Grid::unit(&[16, 8, 12]).unwrap();
    let lap = Stencil::laplacian(&g, 2).unwrap();
    let e = expect_error(&[lap], Boundary::Periodic, &g, &[other]);
    assert_eq!(
        e,
        Error::Shape {
            expected: vec![16, 12, 8],
            got: vec![16, 8, 12]
        }
    );
    // Same number of points, other number of axes.
    let flat = Grid::unit(&[16 * 12 * 8]).unwrap();
    let lap = Stencil::laplacian(&g, 2).unwrap();
    let e = expect_error(&[lap], Boundary::Periodic, &g, &[flat]);
    assert!(matches!(e, Error::Shape { .. }), "{e:?}");
    // One good output, one bad.
    let grad = Stencil::gradient(&g, 2).unwrap();
    let e = expect_error(
        &grad,
        Boundary::Neumann,
        &g,
        &[g.clone(), g.clone(), Grid::unit(&[16, 12, 9]).unwrap()],
    );
    assert_eq!(
        e,
        Error::Shape {
            expected: vec![16, 12, 8],
            got: vec![16, 12, 9]
        }
    );
}

#[test]
fn bad_input_stencil_wider_than_grid_each_boundary() {
    // Radius 4 along y on 8 points: periodic and Dirichlet need 9, Neumann 5.
    let d = |g: &Grid| Stencil::derivative(g, Axis::Y, 1, 8).unwrap();
    let g = Grid::unit(&[10, 8]).unwrap();
    for b in [Boundary::Periodic, Boundary::Dirichlet] {
        let e = expect_error(&[d(&g)], b, &g, std::slice::from_ref(&g));
        assert_eq!(
            e,
            Error::StencilTooWide {
                axis: 'y',
                radius: 4,
                n: 8,
                needed: 9,
                boundary: b.name()
            }
        );
    }
    let g = Grid::unit(&[10, 4]).unwrap();
    let e = expect_error(&[d(&g)], Boundary::Neumann, &g, std::slice::from_ref(&g));
    assert_eq!(
        e,
        Error::StencilTooWide {
            axis: 'y',
            radius: 4,
            n: 4,
            needed: 5,
            boundary: "neumann"
        }
    );
    // The same grids just fit one point more.
    let g = Grid::unit(&[10, 9]).unwrap();
    let (r, f) = both(&[d(&g)], Boundary::Dirichlet, &g, std::slice::from_ref(&g));
    assert!(r.is_ok() && f.is_ok());
    let g = Grid::unit(&[10, 5]).unwrap();
    let (r, f) = both(&[d(&g)], Boundary::Neumann, &g, std::slice::from_ref(&g));
    assert!(r.is_ok() && f.is_ok());
}

#[test]
fn bad_input_stencil_along_z_on_a_2d_grid() {
    let g3 = Grid::unit(&[8, 8, 8]).unwrap();
    let g2 = Grid::unit(&[8, 8]).unwrap();
    let dz = Stencil::derivative(&g3, Axis::Z, 1, 2).unwrap();
    for b in Boundary::ALL {
        let e = expect_error(std::slice::from_ref(&dz), b, &g2, std::slice::from_ref(&g2));
        assert!(matches!(e, Error::Stencil { .. }), "{e:?}");
    }
    let lap3 = Stencil::laplacian(&g3, 2).unwrap();
    let e = expect_error(&[lap3], Boundary::Periodic, &g2, std::slice::from_ref(&g2));
    assert!(matches!(e, Error::Stencil { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------------
// Regressions.

/// Points outside the Dirichlet interior belong to the caller: a NaN poison there survives,
/// with ordinary and streaming stores, on one thread and split.
#[test]
fn regression_fast_dirichlet_leaves_points_outside_the_interior_untouched() {
    let grid = Grid::unit(&[67, 45, 33]).unwrap();
    let stencils = Stencil::gradient(&grid, 8).unwrap();
    let region = Boundary::Dirichlet.check(&grid, &stencils).unwrap();
    assert_eq!(region.lo, [4, 4, 4]);
    let u = Field::<f32>::random(&grid, 9);
    for stores in [Stores::Temporal, Stores::NonTemporal] {
        for par in [Par::Seq, Par::Rayon] {
            let o = Options {
                par,
                stores,
                min_par_work: 0,
                ..Options::default()
            };
            let mut outs: Vec<Field<f32>> = (0..3).map(|_| Field::nan(&grid)).collect();
            let mut v: Vec<_> = outs.iter_mut().map(|f| f.view_mut()).collect();
            fast::apply_with(&stencils, Boundary::Dirichlet, u.view(), &mut v, &o).unwrap();
            let [nx, ny, nz] = grid.shape();
            for out in &outs {
                for k in 0..nz {
                    for j in 0..ny {
                        for i in 0..nx {
                            let x = out.at(i, j, k);
                            if region.contains(i, j, k) {
                                assert!(x.is_finite(), "({i},{j},{k}) not computed, {o:?}");
                            } else {
                                assert!(x.is_nan(), "({i},{j},{k}) overwritten, {o:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Large outputs go through the streaming path by default; it must agree with the reference
/// like the small ones (a grid above the threshold, single axis to keep it quick).
#[test]
fn regression_streaming_stores_above_threshold_match_reference() {
    let n = fast::NT_THRESHOLD_BYTES / 8 + 1001;
    let grid = Grid::unit(&[n]).unwrap();
    let s = Stencil::derivative(&grid, Axis::X, 2, 4).unwrap();
    for boundary in Boundary::ALL {
        let u = Field::<f64>::random(&grid, 5);
        let mut want = Field::<f64>::nan(&grid);
        let mut got = Field::<f64>::nan(&grid);
        reference::apply(
            std::slice::from_ref(&s),
            boundary,
            u.view(),
            &mut [want.view_mut()],
        )
        .unwrap();
        fast::apply(
            std::slice::from_ref(&s),
            boundary,
            u.view(),
            &mut [got.view_mut()],
            Par::Rayon,
        )
        .unwrap();
        let region = boundary.check(&grid, std::slice::from_ref(&s)).unwrap();
        fdlab_core::compare(&grid, region, got.as_slice(), want.as_slice(), s.abs_sum())
            .unwrap_or_else(|m| panic!("{boundary}: {m}"));
    }
}

/// The conformance check itself catches a kernel that writes where it must not: a wrong value
/// at a point the stencils leave untouched (even one copied from another untouched point,
/// which NaN poison alone would let pass), and a computed point left unwritten.
#[test]
fn conformance_check_catches_writes_to_untouched_points_and_missing_writes() {
    let case = cases()
        .into_iter()
        .find(|c| c.boundary == Boundary::Dirichlet && c.grid.dim() == 3)
        .expect("a 3-D interior-only conformance case");
    let reference = |c: &Case, u: FieldView<'_, f32>, o: &mut [FieldViewMut<'_, f32>]| {
        reference::apply(&c.stencils, c.boundary, u, o).map_err(|e| e.to_string())
    };
    let mut want = reference;
    let mut fine = reference;
    assert!(check_case::<f32>(&case, 7, &mut want, &mut fine).is_ok());
    // Two corners, untouched by any interior stencil on a 3-D grid: copy one into the other
    // (with NaN everywhere outside the computed region this would pass).
    let [nx, ny, nz] = case.grid.shape();
    let far = case.grid.index(nx - 1, 0, 0);
    let mut copies_old = |c: &Case, u: FieldView<'_, f32>, o: &mut [FieldViewMut<'_, f32>]| {
        reference(c, u, o)?;
        let s = o[0].as_mut_slice();
        s[0] = s[far];
        Ok(())
    };
    let e = check_case::<f32>(&case, 7, &mut want, &mut copies_old).unwrap_err();
    assert!(e.contains("[0, 0, 0]"), "{e}");
    // The centre is computed: leave it as it was.
    let centre = case.grid.index(nx / 2, ny / 2, nz / 2);
    let mut skips = |c: &Case, u: FieldView<'_, f32>, o: &mut [FieldViewMut<'_, f32>]| {
        let before = o[0].as_slice()[centre];
        reference(c, u, o)?;
        o[0].as_mut_slice()[centre] = before;
        Ok(())
    };
    assert!(check_case::<f32>(&case, 7, &mut want, &mut skips).is_err());
}

// ---------------------------------------------------------------------------------------------
// The copy reference.

/// `stream_copy` against `copy_from_slice`: element sizes 1, 2, 3, 4, 8 and 16 bytes, odd
/// lengths around whole lines, every misalignment of source and destination within a line,
/// one thread and rayon's; the points around the destination stay untouched.
#[test]
fn stream_copy_matches_copy_from_slice_on_odd_lengths_and_misalignments() {
    fn check<T: Copy + PartialEq + std::fmt::Debug + Send + Sync>(make: impl Fn(usize) -> T) {
        let size = std::mem::size_of::<T>();
        let lens = [0, 1, 2, 15, 63, 64, 65, 127, 129, 1000, 4099];
        let src: Vec<T> = (0..4099 + 64).map(&make).collect();
        let fill = make(usize::MAX / 3);
        for len in lens {
            for (so, dof) in [(0, 0), (1, 0), (0, 1), (3, 5), (64 / size, 1), (7, 13)] {
                for par in [Par::Seq, Par::Rayon] {
                    let mut dst = vec![fill; len + 80];
                    let s = &src[so..so + len];
                    fdlab_cpu::copy::stream_copy(s, &mut dst[dof..dof + len], par).unwrap();
                    assert_eq!(&dst[dof..dof + len], s, "len {len} src+{so} dst+{dof}");
                    let rest = dst[..dof].iter().chain(&dst[dof + len..]);
                    assert!(rest.into_iter().all(|x| *x == fill), "wrote outside: {len}");
                }
            }
        }
    }
    check(|i| i as u8);
    check(|i| (i as u16).wrapping_mul(3));
    check(|i| [i as u8, (i >> 8) as u8, 7u8]);
    check(|i| i as f32 * 0.25);
    check(|i| i as f64 - 0.5);
    check(|i| i as u128 * 0x1_0000_0001);
}

/// Above the size where the copy splits over threads, with unequal pieces (a length not a
/// multiple of the thread count) in a 3-thread pool.
#[test]
fn stream_copy_splits_large_copies_over_threads() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .expect("a 3-thread pool");
    let n = (3 << 20) / 8 + 11;
    let src: Vec<f64> = (0..n).map(|i| i as f64 * 1.5).collect();
    let mut dst = vec![f64::NAN; n + 1];
    pool.install(|| fdlab_cpu::copy::stream_copy(&src, &mut dst[1..], Par::Rayon))
        .unwrap();
    assert!(dst[0].is_nan());
    assert!(dst[1..] == src[..]);
}

#[test]
fn stream_copy_rejects_unequal_lengths() {
    let src = [1.0f32; 10];
    let mut dst = [0.0f32; 9];
    let e = fdlab_cpu::copy::stream_copy(&src, &mut dst, Par::Seq).unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    assert_eq!(dst, [0.0; 9]);
}

#[test]
fn copy_bandwidth_is_positive_and_ordered() {
    let (median, min, max) = fdlab_cpu::copy::copy_bandwidth_gbps(1 << 20, 3).unwrap();
    assert!(min > 0.0 && min <= median && median <= max && max.is_finite());
    let e = fdlab_cpu::copy::copy_bandwidth_gbps(4, 3).unwrap_err();
    assert!(matches!(e, Error::Size { .. }), "{e}");
}
