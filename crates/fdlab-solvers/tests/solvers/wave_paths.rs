//! The fused wave step's row paths against the per-point reference: the one-pass rows and the
//! CPML rows' passes (plain sum, then per active axis ∂ψ and ζ), with the ψ pass before them,
//! on odd shapes, every order, 2-D and 3-D, f32 and f64, with layers on every face, on some
//! faces only (a subdomain's slice of a larger grid's profiles) and without any.

use fdlab_core::Scalar;
use fdlab_solvers::physics::{wave_dt_limit, CpmlProfile};
use fdlab_solvers::{PointSource, Stepper, WaveBoundary, WaveCpu, WaveSetup};

/// The largest difference between the fused and the reference fields after `steps`, relative
/// to the reference's largest value.
fn fused_vs_reference<T: Scalar>(
    setup: &WaveSetup,
    profiles: Option<&[CpmlProfile; 3]>,
    steps: usize,
) -> f64 {
    let mut fast = WaveCpu::<T>::new(setup).unwrap();
    let mut slow = WaveCpu::<T>::new(setup).unwrap();
    if let Some(p) = profiles {
        fast.set_cpml_profiles(p.clone()).unwrap();
        slow.set_cpml_profiles(p.clone()).unwrap();
    }
    slow.use_reference(true);
    fast.advance(steps).unwrap();
    slow.advance(steps).unwrap();
    let (a, b) = (fast.field().unwrap(), slow.field().unwrap());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

/// Layers at the low end of x and the high end of z only, none along y: the slices of a
/// larger grid's profiles that a corner subdomain holds.
fn some_faces(n: [usize; 3], dim: usize, h: [f64; 3], dt: f64, r: usize) -> [CpmlProfile; 3] {
    let (c, f0) = (1.9, 0.05);
    let slice = |p: CpmlProfile, lo: usize, len: usize| CpmlProfile {
        a: p.a[lo..lo + len].to_vec(),
        b: p.b[lo..lo + len].to_vec(),
        active: p.active[lo..lo + len].to_vec(),
    };
    let x = slice(CpmlProfile::new(n[0] + 9, h[0], 5, c, f0, dt, r), 0, n[0]);
    let y = CpmlProfile::new(n[1], h[1], 0, c, f0, dt, r);
    let z = if dim == 3 {
        slice(CpmlProfile::new(n[2] + 7, h[2], 4, c, f0, dt, r), 7, n[2])
    } else {
        CpmlProfile::new(1, 1.0, 0, c, f0, dt, r)
    };
    [x, y, z]
}

#[test]
fn wave_row_paths_match_the_reference() {
    let mut seed = 4242u64;
    let mut rnd = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let spacing = [1.0, 0.9, 1.1];
    for (n, dim) in [([37, 21, 19], 3), ([45, 31, 1], 2), ([19, 17, 13], 3)] {
        let len = n[0] * n[1] * n[2];
        for order in [2, 4, 6, 8] {
            let dt = 0.5 * wave_dt_limit(order, &spacing[..dim], 1.9).unwrap();
            let r = order / 2;
            let cpml = WaveBoundary::Cpml {
                thickness: 5,
                f0: 0.05,
            };
            for (what, boundary, faces) in [
                ("every face", cpml, false),
                ("some faces", cpml, true),
                ("periodic", WaveBoundary::Periodic, false),
                ("rigid", WaveBoundary::Rigid, false),
            ] {
                let setup = WaveSetup {
                    n,
                    dim,
                    spacing,
                    order,
                    dt,
                    velocity: (0..len).map(|_| 1.0 + 0.9 * rnd()).collect(),
                    density: None,
                    boundary,
                    initial: (0..len).map(|_| rnd() - 0.5).collect(),
                    previous: Some((0..len).map(|_| rnd() - 0.5).collect()),
                    sources: vec![PointSource {
                        cell: [3, 4, n[2] - 1],
                        f0: 0.05,
                        t0: 5.0,
                        amplitude: 3.0,
                        ..Default::default()
                    }],
                    receiver_spread: vec![],
                    receivers: vec![],
                };
                let prof = faces.then(|| some_faces(n, dim, spacing, dt, r));
                let name = format!("{n:?} order {order} {what}");
                // The reference sums in f64 in another order: equal to rounding.
                let e = fused_vs_reference::<f64>(&setup, prof.as_ref(), 7);
                assert!(e < 1e-12, "f64 {name}: {e:e}");
                let e = fused_vs_reference::<f32>(&setup, prof.as_ref(), 7);
                assert!(e < 2e-5, "f32 {name}: {e:e}");
            }
        }
    }
}
