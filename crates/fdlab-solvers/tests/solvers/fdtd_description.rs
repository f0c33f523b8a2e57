//! The FDTD step as a description (`Fdtd::description`, the Yee form of
//! `fdlab_core::step::physics::yee`) on the generic CPU executor against the CPU FDTD stepper:
//! PEC, periodic and CPML axes, random media and fields, Drude cells, odd shapes, in `f64`.

use fdlab_solvers::fdtd::{Boundary, Cpml, Drude, Fdtd, Grid};

/// A deterministic value in [−1, 1) for index `i` of stream `s`.
fn noise(s: u64, i: usize) -> f64 {
    let mut x =
        (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ s.wrapping_mul(0xD1B5_4A32_D192_ED03);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A simulation on `n` cells with `boundary`, two media boxes (one Drude, where `drude`) and
/// random fields; tangential E on plane 0 of a walled axis is zero, as the stepper keeps it.
fn case(n: [usize; 3], boundary: [Boundary; 3], drude: bool) -> Fdtd<f64> {
    let grid = Grid::new(n, [0.1, 0.12, 0.09], boundary).unwrap();
    let dt = 0.9 * grid.dt_limit();
    let mut sim = Fdtd::<f64>::new(grid.clone(), dt).unwrap();
    let (lo, hi) = ([2, 2, 2], [n[0] / 2, n[1] - 3, n[2] / 2 + 1]);
    sim.fill_box(lo, hi, 2.5, 0.3).unwrap();
    sim.fill_box([n[0] / 2, 1, 3], [n[0] - 2, n[1] / 2, n[2] - 3], 1.7, 0.0)
        .unwrap();
    if drude {
        let d = Drude {
            plasma_frequency: 3.0,
            collision_frequency: 0.5,
        };
        sim.set_drude([n[0] / 2, 1, 3], [n[0] - 2, n[1] / 2, n[2] - 3], d)
            .unwrap();
    }
    let f = sim.fields_mut();
    let comps = [
        &mut f.ex, &mut f.ey, &mut f.ez, &mut f.hx, &mut f.hy, &mut f.hz,
    ];
    for (s, v) in comps.into_iter().enumerate() {
        for (i, x) in v.iter_mut().enumerate() {
            *x = noise(s as u64, i);
        }
    }
    for (c, e) in [&mut f.ex, &mut f.ey, &mut f.ez].into_iter().enumerate() {
        for (i, x) in e.iter_mut().enumerate() {
            let ijk = grid.cell_of_index(i);
            if (0..3).any(|w| w != c && boundary[w].has_walls() && ijk[w] == 0) {
                *x = 0.0;
            }
        }
    }
    sim
}

/// Steps `sim` and its description side by side; the largest difference of any component
/// relative to the fields' largest value.
fn worst(mut sim: Fdtd<f64>, steps: usize) -> f64 {
    let d = sim.description().unwrap();
    let n = sim.grid().n;
    let g = fdlab_core::Grid::new(&n, &sim.grid().spacing).unwrap();
    let mut slots = sim.description_slots(&d).unwrap();
    let mut worst = 0.0f64;
    for _ in 0..steps {
        sim.step();
        fdlab_cpu::step::run_step(&d, &g, &mut slots, &[]).unwrap();
        let f = sim.fields();
        let own = [&f.ex, &f.ey, &f.ez, &f.hx, &f.hy, &f.hz];
        let size = own
            .iter()
            .flat_map(|v| v.iter())
            .fold(0.0f64, |m, x| m.max(x.abs()));
        for (name, v) in ["ex", "ey", "ez", "hx", "hy", "hz"].into_iter().zip(own) {
            let got = slots.get(name, 0).unwrap().as_slice();
            for (a, b) in v.iter().zip(got) {
                worst = worst.max((a - b).abs() / size.max(1.0));
            }
        }
    }
    worst
}

#[test]
fn the_description_steps_as_the_cpu_fdtd_stepper() {
    // κ_max > 1, so that every profile coefficient matters.
    let cpml = Boundary::Cpml(Cpml {
        kappa_max: 2.5,
        ..Cpml::new(5)
    });
    let cases = [
        ([9, 7, 11], [Boundary::Pec; 3], false),
        ([9, 7, 11], [Boundary::Periodic; 3], true),
        ([11, 9, 13], [Boundary::Periodic, Boundary::Pec, cpml], true),
        ([13, 11, 11], [cpml, cpml, cpml], true),
        (
            [11, 13, 9],
            [cpml, Boundary::Periodic, Boundary::Pec],
            false,
        ),
    ];
    for (n, boundary, drude) in cases {
        let w = worst(case(n, boundary, drude), 12);
        println!("{n:?} {boundary:?} drude {drude}: worst relative difference {w:.2e}");
        assert!(w <= 1e-12, "{n:?} {boundary:?}: {w:e}");
    }
}
