//! FDTD Maxwell solver: cavity resonances, energy conservation, discrete dispersion, input
//! checks and the fused update against the reference.

use fdlab_core::Scalar;
use fdlab_solvers::fdtd::{Boundary, Component, Fdtd, Fields, Grid, PointSource, Waveform};
use fdlab_solvers::Error;
use std::f64::consts::PI;

/// Small deterministic generator (no extra dependencies): uniform in [-1, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

const COMPONENTS: [Component; 6] = [
    Component::Ex,
    Component::Ey,
    Component::Ez,
    Component::Hx,
    Component::Hy,
    Component::Hz,
];

fn cells(n: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..n[2]).flat_map(move |k| (0..n[1]).flat_map(move |j| (0..n[0]).map(move |i| [i, j, k])))
}

/// Angular frequency of wavevector `k` from `sin²(ωΔt/2)/Δt² = Σ sin²(k_i d_i/2)/d_i²`.
fn discrete_omega(k: [f64; 3], d: [f64; 3], dt: f64) -> f64 {
    let s: f64 = (0..3)
        .map(|a| ((k[a] * d[a] / 2.0).sin() / d[a]).powi(2))
        .sum();
    2.0 / dt * (dt * s.sqrt()).asin()
}

/// Power spectrum of several records (Hann window) at frequencies `f`, summed over records.
fn power(records: &[&[f64]], dt: f64, f: &[f64]) -> Vec<f64> {
    f.iter()
        .map(|&fr| {
            let mut total = 0.0;
            for rec in records {
                let n = rec.len();
                let (step_c, step_s) = ((2.0 * PI * fr * dt).cos(), (2.0 * PI * fr * dt).sin());
                let (mut c, mut s) = (1.0, 0.0);
                let (mut re, mut im) = (0.0, 0.0);
                for (t, &x) in rec.iter().enumerate() {
                    let w = 0.5 - 0.5 * (2.0 * PI * t as f64 / (n - 1) as f64).cos();
                    re += w * x * c;
                    im -= w * x * s;
                    (c, s) = (c * step_c - s * step_s, s * step_c + c * step_s);
                }
                total += re * re + im * im;
            }
            total
        })
        .collect()
}

#[test]
fn pec_cavity_resonances() {
    let (n, h) = ([20, 25, 30], 0.05);
    let size = n.map(|m| m as f64 * h);
    let grid = Grid::new(n, [h; 3], [Boundary::Pec; 3]).unwrap();
    let dt = 0.99 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid, dt).unwrap();
    // One source and one probe per E component, so every low mode couples to some record.
    let mut probes = Vec::new();
    for c in [Component::Ex, Component::Ey, Component::Ez] {
        sim.add_source(PointSource {
            component: c,
            cell: [6, 9, 11],
            waveform: Waveform::Ricker { f0: 0.6, t0: 2.5 },
            amplitude: 1.0,
        })
        .unwrap();
        probes.push(sim.add_probe(c, [13, 7, 19]).unwrap());
    }
    let steps = (250.0 / dt).ceil() as u64;
    sim.run(steps);

    let freqs: Vec<f64> = (0..3000).map(|i| 0.35 + 2e-4 * i as f64).collect();
    let records: Vec<&[f64]> = probes.iter().map(|&p| sim.probe(p)).collect();
    let p = power(&records, dt, &freqs);
    let top = p.iter().cloned().fold(0.0, f64::max);
    let mut peaks = Vec::new();
    for i in 1..p.len() - 1 {
        if p[i] > p[i - 1] && p[i] >= p[i + 1] && p[i] > 1e-2 * top {
            // Parabola through the log power refines the peak between samples.
            let (a, b, c) = (p[i - 1].ln(), p[i].ln(), p[i + 1].ln());
            let shift = 0.5 * (a - c) / (a - 2.0 * b + c);
            peaks.push(freqs[i] + shift * 2e-4);
        }
    }

    // Cavity modes need at least two nonzero indices.
    let mut modes = Vec::new();
    for m in 0..4usize {
        for nn in 0..4usize {
            for q in 0..4usize {
                if [m, nn, q].iter().filter(|&&x| x > 0).count() >= 2 {
                    let k = [m, nn, q]
                        .iter()
                        .zip(size)
                        .map(|(&i, l)| i as f64 * PI / l)
                        .collect::<Vec<_>>();
                    let k = [k[0], k[1], k[2]];
                    let exact = 0.5 * (0..3).map(|a| (k[a] / PI).powi(2)).sum::<f64>().sqrt();
                    let discrete = discrete_omega(k, [h; 3], dt) / (2.0 * PI);
                    modes.push(([m, nn, q], exact, discrete));
                }
            }
        }
    }
    modes.sort_by(|a, b| a.2.total_cmp(&b.2));
    assert!(peaks.len() >= 3, "found peaks {peaks:?}");
    for (i, (mode, exact, discrete)) in modes.iter().take(3).enumerate() {
        let err = (peaks[i] - discrete).abs() / discrete;
        println!(
            "mode {mode:?}: measured f = {:.6}, discrete {discrete:.6}, continuum {exact:.6}, \
             error vs discrete {:.3e}, vs continuum {:.3e}",
            peaks[i],
            err,
            (peaks[i] - exact).abs() / exact
        );
        // The scheme's own modes to the spectrum's resolution; the physical ones within 0.5%.
        assert!(err < 1e-4, "mode {mode:?}: {} vs {discrete}", peaks[i]);
        let err_exact = (peaks[i] - exact).abs() / exact;
        assert!(err_exact < 5e-3, "mode {mode:?}: {} vs {exact}", peaks[i]);
    }
}

/// A smooth random periodic field: a few low Fourier modes per component.
fn smooth_random(grid: &Grid, c: Component, rng: &mut Lcg) -> Vec<f64> {
    let l = [0, 1, 2].map(|a| grid.n[a] as f64 * grid.spacing[a]);
    let terms: Vec<([f64; 3], f64, f64)> = (0..3)
        .map(|_| {
            let k = [0, 1, 2].map(|a| 2.0 * PI * (rng.next() * 2.5).round() / l[a]);
            (k, rng.next(), PI * rng.next())
        })
        .collect();
    cells(grid.n)
        .map(|cell| {
            let r = grid.position(c, cell);
            terms
                .iter()
                .map(|(k, amp, ph)| amp * (k[0] * r[0] + k[1] * r[1] + k[2] * r[2] + ph).sin())
                .sum()
        })
        .collect()
}

#[test]
fn periodic_energy_is_conserved() {
    let grid = Grid::new([12; 3], [1.0 / 12.0; 3], [Boundary::Periodic; 3]).unwrap();
    let dt = 0.99 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    let mut rng = Lcg(7);
    for c in COMPONENTS {
        let v = smooth_random(&grid, c, &mut rng);
        sim.fields_mut().get_mut(c).copy_from_slice(&v);
    }
    let w0 = sim.step_energy();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in 1..9_999 {
        sim.step();
        if s % 50 == 0 {
            let e = sim.energy();
            (lo, hi) = (lo.min(e), hi.max(e));
        }
    }
    let w1 = sim.step_energy();
    let drift = (w1 - w0).abs() / w0;
    println!(
        "centred energy {w0:.12e} -> {w1:.12e} over 10000 steps: relative drift {drift:.3e}; \
         staggered-time energy varies by {:.3e}",
        (hi - lo) / w0
    );
    assert!(drift < 1e-6, "drift {drift}");
}

/// A plane wave in a uniform medium of permittivity `eps`: its discrete `ω` satisfies
/// `ε sin²(ωΔt/2)/Δt² = Σ sin²(k_i d_i/2)/d_i²`.
fn plane_wave(eps: f64) {
    let n = [16, 12, 10];
    let d = [0.1, 0.125, 0.15];
    let grid = Grid::new(n, d, [Boundary::Periodic; 3]).unwrap();
    let dt = 0.95 * grid.dt_limit();
    let l = [0, 1, 2].map(|a| n[a] as f64 * d[a]);
    let k = [2.0 * PI / l[0], 2.0 * PI / l[1], -4.0 * PI / l[2]];
    // Discrete wavevector: the Yee curl acts on exp(i k·r) as i K×.
    let kk = [0, 1, 2].map(|a| 2.0 * (k[a] * d[a] / 2.0).sin() / d[a]);
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let e = cross(kk, [0.3, -0.5, 1.0]);
    let norm = e.iter().map(|x| x * x).sum::<f64>().sqrt();
    let e = e.map(|x| x / norm);
    // k/√ε and d·√ε keep every k_i d_i and divide the sum by ε.
    let omega = discrete_omega(k.map(|x| x / eps.sqrt()), d.map(|x| x * eps.sqrt()), dt);
    let big_omega = 2.0 * (omega * dt / 2.0).sin() / dt;
    let hv = cross(kk, e).map(|x| x / big_omega);
    let amp = |c: Component| match c {
        Component::Ex => e[0],
        Component::Ey => e[1],
        Component::Ez => e[2],
        Component::Hx => hv[0],
        Component::Hy => hv[1],
        Component::Hz => hv[2],
    };
    let wave = |c: Component, t: f64, w: f64| -> Vec<f64> {
        cells(n)
            .map(|cell| {
                let r = grid.position(c, cell);
                amp(c) * (k[0] * r[0] + k[1] * r[1] + k[2] * r[2] - w * t).cos()
            })
            .collect()
    };
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    sim.fill_box([0; 3], n.map(|m| m - 1), eps, 0.0).unwrap();
    for c in COMPONENTS {
        let t = if c.is_electric() { 0.0 } else { -0.5 * dt };
        let v = wave(c, t, omega);
        sim.fields_mut().get_mut(c).copy_from_slice(&v);
    }
    let steps = 400;
    sim.run(steps);
    let continuum = (k.iter().map(|x| x * x).sum::<f64>() / eps).sqrt();
    let (mut err, mut err_c) = (0.0f64, 0.0f64);
    for c in COMPONENTS {
        let t = steps as f64 * dt - if c.is_electric() { 0.0 } else { 0.5 * dt };
        let (want, want_c) = (wave(c, t, omega), wave(c, t, continuum));
        for (i, &x) in sim.fields().get(c).iter().enumerate() {
            err = err.max((x - want[i]).abs());
            err_c = err_c.max((x - want_c[i]).abs());
        }
    }
    println!(
        "plane wave, eps_r {eps}, after {steps} steps: omega discrete {omega:.9} vs continuum {continuum:.9}; \
         max error vs discrete {err:.3e}, vs continuum {err_c:.3e}"
    );
    assert!(err < 1e-10, "error {err}");
}

#[test]
fn plane_wave_follows_discrete_dispersion() {
    plane_wave(1.0);
    plane_wave(2.25);
}

#[test]
fn conductive_medium_loses_energy() {
    let grid = Grid::new([8; 3], [0.125; 3], [Boundary::Periodic; 3]).unwrap();
    let mut sim = Fdtd::<f64>::new(grid.clone(), 0.9 * grid.dt_limit()).unwrap();
    sim.set_medium(vec![1.0; grid.cells()], vec![0.5; grid.cells()])
        .unwrap();
    let mut rng = Lcg(3);
    for c in COMPONENTS {
        let v = smooth_random(&grid, c, &mut rng);
        sim.fields_mut().get_mut(c).copy_from_slice(&v);
    }
    let mut last = sim.step_energy();
    let first = last;
    for _ in 0..200 {
        let w = sim.step_energy();
        assert!(w < last, "energy rose from {last} to {w}");
        last = w;
    }
    println!("sigma 0.5: centred energy {first:.6e} -> {last:.6e} over 200 steps");
}

#[test]
fn bad_input_is_refused() {
    let grid = Grid::new([8, 9, 10], [0.1, 0.2, 0.3], [Boundary::Pec; 3]).unwrap();
    let limit = grid.dt_limit();
    match Fdtd::<f64>::new(grid.clone(), 1.01 * limit) {
        Err(e @ Error::Unstable { .. }) => {
            let msg = e.to_string();
            println!("{msg}");
            assert!(msg.contains(&format!("{limit:e}")), "{msg}");
        }
        other => panic!("expected Unstable, got {other:?}"),
    }
    assert!(Fdtd::<f64>::new(grid.clone(), limit).is_ok());
    assert!(matches!(
        Fdtd::<f64>::new(grid.clone(), f64::NAN),
        Err(Error::Invalid(_))
    ));
    let mut sim = Fdtd::<f32>::new(grid, 0.5 * limit).unwrap();
    let e = sim.add_probe(Component::Ex, [8, 0, 0]).unwrap_err();
    assert!(
        matches!(e, Error::Invalid(_)) && e.to_string().contains("outside"),
        "{e}"
    );
    let src = PointSource {
        component: Component::Ez,
        cell: [0, 0, 10],
        waveform: Waveform::Sine { f0: 1.0 },
        amplitude: 1.0,
    };
    assert!(matches!(sim.add_source(src), Err(Error::Invalid(_))));
    let on_h = PointSource {
        component: Component::Hz,
        cell: [1, 1, 1],
        ..src
    };
    assert!(matches!(sim.add_source(on_h), Err(Error::Invalid(_))));
    let on_wall = PointSource {
        component: Component::Ey,
        cell: [0, 3, 3],
        ..src
    };
    let e = sim.add_source(on_wall).unwrap_err();
    assert!(e.to_string().contains("PEC wall"), "{e}");
    for bad in [0.0, -0.1, f64::INFINITY] {
        let e = Grid::new([4; 3], [0.1, bad, 0.1], [Boundary::Periodic; 3]).unwrap_err();
        assert!(e.to_string().contains("along y"), "{e}");
    }
    assert!(Grid::new([4, 0, 4], [0.1; 3], [Boundary::Pec; 3]).is_err());
}

/// Fused loop against the reference after a few steps, with a random medium and a source.
fn fast_matches_reference<T: Scalar>() {
    let n = [7, 5, 9];
    let spacing = [0.11, 0.07, 0.13];
    let cases = [
        [Boundary::Pec; 3],
        [Boundary::Periodic; 3],
        [Boundary::Pec, Boundary::Periodic, Boundary::Pec],
        [Boundary::Periodic, Boundary::Pec, Boundary::Periodic],
    ];
    let mut rng = Lcg(11);
    for boundary in cases {
        let grid = Grid::new(n, spacing, boundary).unwrap();
        let mut sim = Fdtd::<T>::new(grid.clone(), 0.9 * grid.dt_limit()).unwrap();
        let eps = (0..grid.cells()).map(|_| 2.0 + rng.next()).collect();
        let sigma = (0..grid.cells()).map(|_| 0.5 + 0.5 * rng.next()).collect();
        sim.set_medium(eps, sigma).unwrap();
        for c in COMPONENTS {
            for x in sim.fields_mut().get_mut(c) {
                *x = T::from_f64(rng.next());
            }
        }
        sim.add_source(PointSource {
            component: Component::Ey,
            cell: [3, 2, 4],
            waveform: Waveform::ModulatedGaussian {
                f0: 1.0,
                t0: 0.1,
                tau: 0.2,
            },
            amplitude: 2.0,
        })
        .unwrap();
        let mut reference = sim.clone();
        for _ in 0..6 {
            sim.step();
            reference.step_reference();
        }
        let (a, b): (&Fields<T>, &Fields<T>) = (sim.fields(), reference.fields());
        let mut worst = 0.0f64;
        for c in COMPONENTS {
            let scale = b
                .get(c)
                .iter()
                .map(|x| x.as_f64().abs())
                .fold(0.0, f64::max);
            for (x, y) in a.get(c).iter().zip(b.get(c)) {
                worst = worst.max((x.as_f64() - y.as_f64()).abs() / scale);
            }
        }
        println!(
            "{:?} {boundary:?}: max relative difference {worst:.3e}",
            T::PRECISION
        );
        assert!(worst <= 50.0 * T::TOLERANCE, "{boundary:?}: {worst}");
    }
}

#[test]
fn fast_matches_reference_f32() {
    fast_matches_reference::<f32>();
}

#[test]
fn fast_matches_reference_f64() {
    fast_matches_reference::<f64>();
}

/// A pulse in a PEC box with a dielectric block: finite, and returns the probe record.
fn dielectric_box_run<T: Scalar>() -> Vec<f64> {
    let grid = Grid::new([14, 12, 10], [0.1; 3], [Boundary::Pec; 3]).unwrap();
    let mut sim = Fdtd::<T>::new(grid.clone(), 0.99 * grid.dt_limit()).unwrap();
    sim.fill_box([6, 2, 2], [10, 8, 7], 4.0, 0.0).unwrap();
    sim.add_source(PointSource {
        component: Component::Ez,
        cell: [3, 4, 5],
        waveform: Waveform::Gaussian { t0: 0.6, tau: 0.15 },
        amplitude: 1.0,
    })
    .unwrap();
    let p = sim.add_probe(Component::Ez, [9, 6, 4]).unwrap();
    sim.run(600);
    assert!(sim.energy().is_finite() && sim.energy() > 0.0);
    // Tangential E on the walls stays exactly zero.
    for cell in cells(grid.n) {
        for c in [Component::Ex, Component::Ey, Component::Ez] {
            if grid.on_pec_wall(c, cell) {
                assert_eq!(sim.fields().get(c)[grid.index(cell)], T::zero());
            }
        }
    }
    sim.probe(p).to_vec()
}

#[test]
fn f32_and_f64_agree() {
    let a = dielectric_box_run::<f32>();
    let b = dielectric_box_run::<f64>();
    let scale = b.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let diff = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale;
    println!("dielectric box, 600 steps: f32 vs f64 probe max relative difference {diff:.3e}");
    assert!(diff < 1e-3, "{diff}");
}
