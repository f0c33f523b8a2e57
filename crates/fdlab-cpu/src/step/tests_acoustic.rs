//! Variable-density acoustics as a description, against direct loops and physics.

use super::run_step;
use fdlab_core::step::physics::{acoustic_vd, acoustic_vd_with, AcousticVd as A};
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Boundary, Field, Grid};

type S = Slots<Field<f64>>;

/// Slots for `d` with p at n−1 and n, b and k as given.
fn slots(
    d: &StepDescription,
    g: &Grid,
    prev: &Field<f64>,
    cur: &Field<f64>,
    b: &Field<f64>,
    k: &Field<f64>,
) -> S {
    Slots::new(d, |name, level| {
        Ok::<_, ()>(match (name, level) {
            (A::P, -1) => prev.clone(),
            (A::P, 0) => cur.clone(),
            (A::B, _) => b.clone(),
            (A::K, _) => k.clone(),
            _ => Field::nan(g),
        })
    })
    .unwrap()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Constant ρ at accuracy 2: exactly the leapfrog with the 3-point Laplacian per axis.
#[test]
fn constant_density_is_the_three_point_leapfrog() {
    for shape in [vec![37], vec![19, 13], vec![11, 9, 7]] {
        let h: Vec<f64> = (0..shape.len()).map(|a| 0.1 + 0.05 * a as f64).collect();
        let g = Grid::new(&shape, &h).unwrap();
        let d = acoustic_vd(&g, 2, Boundary::Periodic).unwrap();
        let (prev, cur) = (Field::<f64>::random(&g, 1), Field::<f64>::random(&g, 2));
        let (rho, c, dt) = (1.7, 2.3, 0.01);
        let b = Field::filled(&g, 1.0 / rho);
        let k = Field::filled(&g, rho * c * c);
        let mut s = slots(&d, &g, &prev, &cur, &b, &k);
        run_step(&d, &g, &mut s, &[(A::DT, dt)]).unwrap();
        let [nx, ny, nz] = g.shape();
        let sp = g.spacing();
        let u = |i: i64, j: i64, kk: i64| {
            let w = |v: i64, n: usize| v.rem_euclid(n as i64) as usize;
            cur.at(w(i, nx), w(j, ny), w(kk, nz))
        };
        let mut want = vec![0.0; g.len()];
        for kk in 0..nz as i64 {
            for j in 0..ny as i64 {
                for i in 0..nx as i64 {
                    let mut lap =
                        (u(i + 1, j, kk) - 2.0 * u(i, j, kk) + u(i - 1, j, kk)) / (sp[0] * sp[0]);
                    if g.dim() > 1 {
                        lap += (u(i, j + 1, kk) - 2.0 * u(i, j, kk) + u(i, j - 1, kk))
                            / (sp[1] * sp[1]);
                    }
                    if g.dim() > 2 {
                        lap += (u(i, j, kk + 1) - 2.0 * u(i, j, kk) + u(i, j, kk - 1))
                            / (sp[2] * sp[2]);
                    }
                    let p = g.index(i as usize, j as usize, kk as usize);
                    want[p] = 2.0 * cur.as_slice()[p] - prev.as_slice()[p] + dt * dt * c * c * lap;
                }
            }
        }
        let err = max_diff(s.get(A::P, 0).unwrap().as_slice(), &want);
        assert!(err < 1e-12, "{shape:?}: max difference {err:e}");
    }
}

/// Variable ρ at accuracy 4, zero outside the grid: a hand-written loop over half-point
/// fluxes gives the same result.
#[test]
fn variable_density_matches_a_naive_loop() {
    let g = Grid::new(&[23, 17], &[0.2, 0.3]).unwrap();
    let d = acoustic_vd(&g, 4, Boundary::Dirichlet).unwrap();
    let (prev, cur) = (Field::<f64>::random(&g, 3), Field::<f64>::random(&g, 4));
    let rb = Field::<f64>::random(&g, 5);
    let b = Field::from_vec(&g, rb.as_slice().iter().map(|x| 1.5 + x).collect()).unwrap();
    let k = Field::from_vec(
        &g,
        Field::<f64>::random(&g, 6)
            .as_slice()
            .iter()
            .map(|x| 2.0 + x)
            .collect(),
    )
    .unwrap();
    let dt = 0.02;
    let mut s = slots(&d, &g, &prev, &cur, &b, &k);
    run_step(&d, &g, &mut s, &[(A::DT, dt)]).unwrap();
    let [nx, ny, _] = g.shape();
    let h = g.spacing();
    let at = |f: &Field<f64>, i: i64, j: i64| {
        if (0..nx as i64).contains(&i) && (0..ny as i64).contains(&j) {
            f.at(i as usize, j as usize, 0)
        } else {
            0.0
        }
    };
    // Coefficients continue outward: the nearest point inside the grid.
    let near = |f: &Field<f64>, i: i64, j: i64| {
        f.at(
            i.clamp(0, nx as i64 - 1) as usize,
            j.clamp(0, ny as i64 - 1) as usize,
            0,
        )
    };
    let (c1, c2) = (9.0 / 8.0, -1.0 / 24.0);
    // Flux at (i + ½, j) along x, or (i, j + ½) along y.
    let flux = |i: i64, j: i64, ax: usize| {
        let s = |o: i64| {
            if ax == 0 {
                at(&cur, i + o, j)
            } else {
                at(&cur, i, j + o)
            }
        };
        let bb = |o: i64| {
            if ax == 0 {
                near(&b, i + o, j)
            } else {
                near(&b, i, j + o)
            }
        };
        let dp = (c1 * (s(1) - s(0)) + c2 * (s(2) - s(-1))) / h[ax];
        0.5 * (bb(0) + bb(1)) * dp
    };
    let mut worst = 0.0f64;
    for j in 0..ny as i64 {
        for i in 0..nx as i64 {
            let mut div = 0.0;
            for (ax, hx) in h.iter().enumerate().take(2) {
                let f = |o: i64| {
                    if ax == 0 {
                        flux(i + o, j, 0)
                    } else {
                        flux(i, j + o, 1)
                    }
                };
                div += (c1 * (f(0) - f(-1)) + c2 * (f(1) - f(-2))) / hx;
            }
            let want = 2.0 * at(&cur, i, j) - at(&prev, i, j) + dt * dt * at(&k, i, j) * div;
            let got = s.get(A::P, 0).unwrap().at(i as usize, j as usize, 0);
            worst = worst.max((got - want).abs() / want.abs().max(1.0));
        }
    }
    assert!(worst < 1e-12, "relative difference {worst:e}");
}

/// Ricker wavelet of peak frequency `f0` at time `t`.
fn ricker(t: f64, f0: f64) -> f64 {
    let a = (std::f64::consts::PI * f0 * t).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// Runs a right-going 1-D Ricker pulse from x = 300 for `steps` steps on 1200 points (h = 1,
/// c = 1) with ρ = 1 left of 600 and `rho2` from there on; returns p.
fn pulse_1d(rho2: f64, steps: usize) -> Vec<f64> {
    let n = 1200;
    let g = Grid::new(&[n], &[1.0]).unwrap();
    let d = acoustic_vd(&g, 4, Boundary::Dirichlet).unwrap();
    let (f0, dt) = (1.0 / 30.0, 0.5); // 30 points per wavelength at the peak frequency
    let rho = |x: f64| if x < 600.0 { 1.0 } else { rho2 };
    let prev = Field::from_fn(&g, |x| ricker(-dt - (x[0] - 300.0), f0));
    let cur = Field::from_fn(&g, |x| ricker(-(x[0] - 300.0), f0));
    let b = Field::from_fn(&g, |x| 1.0 / rho(x[0]));
    let k = Field::from_fn(&g, |x| rho(x[0]));
    let mut s = slots(&d, &g, &prev, &cur, &b, &k);
    for _ in 0..steps {
        run_step(&d, &g, &mut s, &[(A::DT, dt)]).unwrap();
    }
    s.get(A::P, 0).unwrap().as_slice().to_vec()
}

/// A normal-incidence pulse on ρ2 = 4ρ1 (same c): reflected R = (Z2−Z1)/(Z2+Z1) = 0.6 and
/// transmitted T = 2Z2/(Z1+Z2) = 1.6 within 2%, against the same pulse in a homogeneous run.
#[test]
fn density_contrast_reflects_and_transmits_as_impedances_predict() {
    let steps = 1000; // t = 500: the pulses are 200 points from the interface
    let homog = pulse_1d(1.0, steps);
    let contrast = pulse_1d(4.0, steps);
    let incident = homog.iter().cloned().fold(f64::MIN, f64::max);
    let refl = contrast[..600].iter().cloned().fold(f64::MIN, f64::max);
    let trans = contrast[600..].iter().cloned().fold(f64::MIN, f64::max);
    let (r, t) = (refl / incident, trans / incident);
    eprintln!("reflection {r:.5} (0.6), transmission {t:.5} (1.6), incident peak {incident:.5}");
    assert!((r / 0.6 - 1.0).abs() < 0.02, "R = {r}");
    assert!((t / 1.6 - 1.0).abs() < 0.02, "T = {t}");
}

/// Spatial order by refinement on a smooth periodic medium: the operator `K ∇·(b∇p)` (one
/// step with p^{n−1} = pⁿ and dt = 1 gives pⁿ + K∇·(b∇p)) against its exact value.
fn operator_error(n: usize, accuracy: usize, average: usize) -> f64 {
    use std::f64::consts::PI;
    let g = Grid::new(&[n, n], &[1.0 / n as f64; 2]).unwrap();
    let d = acoustic_vd_with(&g, accuracy, average, Boundary::Periodic).unwrap();
    let tau = 2.0 * PI;
    // p = sin(2πx) cos(2πy), b = 1 / (2 + sin(2πx) sin(2πy)) ... written through ρ.
    let p = Field::from_fn(&g, |x| (tau * x[0]).sin() * (tau * x[1]).cos());
    let rho = |x: [f64; 3]| 2.0 + 0.5 * (tau * x[0]).sin() * (tau * x[1]).sin();
    let b = Field::from_fn(&g, |x| 1.0 / rho(x));
    let k = Field::filled(&g, 1.0);
    let mut s = slots(&d, &g, &p, &p, &b, &k);
    run_step(&d, &g, &mut s, &[(A::DT, 1.0)]).unwrap();
    let exact = Field::<f64>::from_fn(&g, |x| {
        let (sx, cx, sy, cy) = (
            (tau * x[0]).sin(),
            (tau * x[0]).cos(),
            (tau * x[1]).sin(),
            (tau * x[1]).cos(),
        );
        let r = rho(x);
        let (rx, ry) = (0.5 * tau * cx * sy, 0.5 * tau * sx * cy);
        let (px, py) = (tau * cx * cy, -tau * sx * sy);
        let lap = -2.0 * tau * tau * sx * cy;
        // ∇·(∇p / ρ) = Δp/ρ − ∇ρ·∇p/ρ².
        lap / r - (rx * px + ry * py) / (r * r)
    });
    let got: Vec<f64> = s
        .get(A::P, 0)
        .unwrap()
        .as_slice()
        .iter()
        .zip(p.as_slice())
        .map(|(a, b)| a - b)
        .collect();
    max_diff(&got, exact.as_slice())
}

#[test]
fn spatial_order_by_refinement() {
    for (accuracy, average, want) in [(2, 2, 2.0), (4, 4, 4.0), (4, 2, 2.0), (8, 8, 8.0)] {
        let (e1, e2) = (
            operator_error(24, accuracy, average),
            operator_error(48, accuracy, average),
        );
        let order = (e1 / e2).log2();
        eprintln!(
            "accuracy {accuracy}, average {average}: errors {e1:.3e} {e2:.3e}, order {order:.2}"
        );
        // Order 8 is still approaching its asymptote at 48 points (7.6).
        assert!(
            order > want - 0.5 && order < want + 0.3,
            "accuracy {accuracy}/{average}: order {order}"
        );
    }
}
