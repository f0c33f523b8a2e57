//! The box-at-a-time fast path against the point-by-point reference: bit for bit, on the
//! variable-density step with layers and sources, random fields, odd shapes, every boundary.

use super::run_step_with;
use fdlab_core::step::physics::{acoustic_vd_layers, AcousticVdSpec};
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Boundary, Field, Grid, Scalar};

fn params(d: &StepDescription) -> Vec<(&str, f64)> {
    d.params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), if i == 0 { 0.01 } else { 0.3 * i as f64 }))
        .collect()
}

/// Three steps of `d` from random fields (positive coefficients) by both paths.
fn both<T: Scalar>(d: &StepDescription, g: &Grid) -> (Slots<Field<T>>, Slots<Field<T>>) {
    let mut seed = 0;
    let start = Slots::new(d, |name, _| {
        seed += 1;
        let f = Field::<T>::random(g, seed);
        let positive = name == "b" || name == "k" || name.starts_with("b");
        let v: Vec<T> = f
            .as_slice()
            .iter()
            .map(|x| {
                if positive {
                    T::from_f64(1.0 + x.as_f64().abs())
                } else {
                    *x
                }
            })
            .collect();
        Ok::<_, ()>(Field::from_vec(g, v).unwrap())
    })
    .unwrap();
    let (mut fast, mut slow) = (start.clone(), start);
    for _ in 0..3 {
        run_step_with(d, g, &mut fast, &params(d), false).unwrap();
        run_step_with(d, g, &mut slow, &params(d), true).unwrap();
    }
    (fast, slow)
}

fn same<T: Scalar>(a: &Slots<Field<T>>, b: &Slots<Field<T>>, what: &str) {
    for ((name, level, x), (_, _, y)) in a.each().zip(b.each()) {
        let (x, y) = (x.unwrap().as_slice(), y.unwrap().as_slice());
        for (p, (u, v)) in x.iter().zip(y).enumerate() {
            assert!(
                u.as_f64().to_bits() == v.as_f64().to_bits(),
                "{what}: {name}@{level} point {p}: {} vs {}",
                u.as_f64(),
                v.as_f64()
            );
        }
    }
}

#[test]
fn the_fast_path_equals_the_reference_bit_for_bit() {
    let shapes: [&[usize]; 4] = [&[37, 23], &[19, 17, 13], &[61, 5], &[11, 29, 7]];
    for shape in shapes {
        let spacing: Vec<f64> = (0..shape.len()).map(|a| 0.5 + 0.25 * a as f64).collect();
        let g = Grid::new(shape, &spacing).unwrap();
        for (accuracy, boundary, layer) in [
            (2, Boundary::Dirichlet, Some(3)),
            (4, Boundary::Periodic, None),
            (4, Boundary::Neumann, Some(2)),
            (8, Boundary::Dirichlet, None),
        ] {
            let mid = [0, 1, 2].map(|a| shape.get(a).map_or(0, |n| n / 2));
            let spec = AcousticVdSpec {
                accuracy,
                boundary,
                layer,
                sources: vec![mid, [1, 1, 0]],
            };
            let d = acoustic_vd_layers(&g, &spec).unwrap();
            let what = format!("{shape:?} accuracy {accuracy} {boundary:?} layer {layer:?}");
            let (f, s) = both::<f64>(&d, &g);
            same(&f, &s, &format!("f64 {what}"));
            let (f, s) = both::<f32>(&d, &g);
            same(&f, &s, &format!("f32 {what}"));
        }
    }
}
