//! The heat and wave setups' step descriptions are what their steppers compute: the CPU
//! steppers' fused rows against the descriptions run by the reference executor
//! (`fdlab_cpu::step`), on odd shapes, orders 2 to 8, 2-D and 3-D, periodic and zero halos,
//! CPML layers, constant and varying coefficients, random fields.

use fdlab_core::step::physics::Leapfrog;
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Axis, Field, Grid};
use fdlab_solvers::physics::wave_dt_limit;
use fdlab_solvers::{HeatCpu, HeatSetup, Stepper, WaveBoundary, WaveCpu, WaveSetup};

fn random(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// Runs `d` for `steps` steps on the CPU's reference executor from `fields` (name, level,
/// values) and returns the state field `out` at the current level.
fn run_description(
    d: &StepDescription,
    n: [usize; 3],
    dim: usize,
    spacing: [f64; 3],
    fields: &[(&str, i32, &[f64])],
    out: &str,
    steps: usize,
) -> Vec<f64> {
    let grid = Grid::new(&n[..dim], &spacing[..dim]).unwrap();
    let mut slots = Slots::new(d, |name, level| {
        let values = fields
            .iter()
            .find(|(f, l, _)| *f == name && *l == level)
            .map_or(vec![f64::NAN; grid.len()], |(_, _, v)| v.to_vec());
        Field::from_vec(&grid, values)
    })
    .unwrap();
    for _ in 0..steps {
        fdlab_cpu::step::run_step_with(d, &grid, &mut slots, &[], true).unwrap();
    }
    slots.get(out, 0).unwrap().as_slice().to_vec()
}

fn worst(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0 && a.len() == b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

const SHAPES: [([usize; 3], usize); 2] = [([23, 17, 1], 2), ([13, 11, 9], 3)];
const SPACING: [f64; 3] = [1.0, 0.9, 1.1];

#[test]
fn heat_steps_are_their_description() {
    let mut rnd = random(77);
    for (n, dim) in SHAPES {
        let len = n.iter().product::<usize>();
        for order in [2, 4, 8] {
            for periodic in [true, false] {
                for field_kappa in [false, true] {
                    let kappa: Vec<f64> = if field_kappa {
                        (0..len).map(|_| 0.6 + 0.4 * rnd()).collect()
                    } else {
                        vec![0.8]
                    };
                    let s = HeatSetup {
                        n,
                        dim,
                        spacing: SPACING,
                        order,
                        dt: 0.02,
                        kappa,
                        periodic,
                        initial: (0..len).map(|_| rnd()).collect(),
                    };
                    let mut cpu = HeatCpu::<f64>::new(&s).unwrap();
                    cpu.advance(5).unwrap();
                    let dt_kappa: Vec<f64> = s.kappa.iter().map(|k| k * s.dt).collect();
                    let want = run_description(
                        &s.description().unwrap(),
                        n,
                        dim,
                        SPACING,
                        &[
                            (Leapfrog::U, 0, &s.initial),
                            (Leapfrog::DT_KAPPA, 0, &dt_kappa),
                        ],
                        Leapfrog::U,
                        5,
                    );
                    let e = worst(&cpu.field().unwrap(), &want);
                    let what = format!("{n:?} order {order} periodic {periodic} κ {field_kappa}");
                    assert!(e < 1e-13, "{what}: {e:e}");
                }
            }
        }
    }
}

#[test]
fn wave_steps_are_their_description() {
    let mut rnd = random(78);
    for (n, dim) in SHAPES {
        let len = n.iter().product::<usize>();
        for order in [2, 4, 8] {
            let dt = 0.5 * wave_dt_limit(order, &SPACING[..dim], 1.9).unwrap();
            let cpml = WaveBoundary::Cpml {
                thickness: 3,
                f0: 0.05,
            };
            for boundary in [WaveBoundary::Periodic, WaveBoundary::Rigid, cpml] {
                let s = WaveSetup {
                    n,
                    dim,
                    spacing: SPACING,
                    order,
                    dt,
                    velocity: (0..len).map(|_| 1.45 + 0.9 * rnd()).collect(),
                    density: None,
                    boundary,
                    initial: (0..len).map(|_| rnd()).collect(),
                    previous: Some((0..len).map(|_| rnd()).collect()),
                    sources: vec![],
                    receivers: vec![],
                    receiver_spread: vec![],
                };
                let mut cpu = WaveCpu::<f64>::new(&s).unwrap();
                cpu.advance(5).unwrap();
                let c2dt2: Vec<f64> = s.velocity.iter().map(|c| c * c * dt * dt).collect();
                let mut fields: Vec<(String, i32, Vec<f64>)> = vec![
                    (Leapfrog::P.into(), 0, s.initial.clone()),
                    (Leapfrog::P.into(), -1, s.previous.clone().unwrap()),
                    (Leapfrog::C2DT2.into(), 0, c2dt2),
                ];
                if let Some(prof) = s.coefficients().unwrap().cpml {
                    // The layers' 1-D profiles as whole-grid coefficient fields.
                    let along = |a: usize, v: &[f64]| -> Vec<f64> {
                        (0..len)
                            .map(|c| [c % n[0], c / n[0] % n[1], c / (n[0] * n[1])][a])
                            .map(|i| v[i])
                            .collect()
                    };
                    for (a, &axis) in Axis::ALL[..dim].iter().enumerate() {
                        fields.push((Leapfrog::a(axis), 0, along(a, &prof[a].a)));
                        fields.push((Leapfrog::b(axis), 0, along(a, &prof[a].b)));
                        fields.push((Leapfrog::psi(axis), 0, vec![0.0; len]));
                        fields.push((Leapfrog::zeta(axis), 0, vec![0.0; len]));
                    }
                }
                let fields: Vec<(&str, i32, &[f64])> = fields
                    .iter()
                    .map(|(f, l, v)| (f.as_str(), *l, v.as_slice()))
                    .collect();
                let want = run_description(
                    &s.description().unwrap(),
                    n,
                    dim,
                    SPACING,
                    &fields,
                    Leapfrog::P,
                    5,
                );
                let e = worst(&cpu.field().unwrap(), &want);
                assert!(e < 1e-12, "{n:?} order {order} {boundary:?}: {e:e}");
            }
        }
    }
}
