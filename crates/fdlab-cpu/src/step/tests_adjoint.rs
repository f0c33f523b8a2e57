//! The adjoint step against the forward one: dot-product tests `⟨F x, y⟩ = ⟨x, Fᵀ y⟩` over
//! several steps, random fields and coefficients, odd shapes, every boundary.

use super::{run_step, AdjointStep};
use fdlab_core::step::physics::{
    acoustic, acoustic_layers, acoustic_vd, acoustic_vd_layers, heat, AcousticVd, AcousticVdSpec,
    DtKappa, Layers,
};
use fdlab_core::step::{Expr, LinearStep, Role, Slots, StepDescription, StepRegion};
use fdlab_core::{Boundary, Field, Grid, Region, Scalar};
use rand::{Rng, SeedableRng};

/// The variable-density step with a CPML of `layer` cells and two sources.
fn layers(g: &Grid, accuracy: usize, boundary: Boundary, layer: usize) -> StepDescription {
    let s = g.shape();
    let spec = AcousticVdSpec {
        accuracy,
        boundary,
        layer: Some(layer),
        sources: vec![[s[0] / 2, s[1] / 3, s[2] / 2], [s[0] - 2, s[1] - 1, 0]],
    };
    acoustic_vd_layers(g, &spec).unwrap()
}

/// Slots of `d` with every non-coefficient buffer from `f(field, level)` and coefficients
/// from `coef`.
fn slots<T: Scalar>(
    d: &StepDescription,
    coef: &impl Fn(&str) -> Field<T>,
    mut f: impl FnMut(&str, i32) -> Field<T>,
) -> Slots<Field<T>> {
    Slots::new(d, |name, level| {
        Ok::<_, ()>(match d.field(name).map(|x| x.role) {
            Some(Role::Coefficient) => coef(name),
            _ => f(name, level),
        })
    })
    .unwrap()
}

/// `Σ a·b` over the non-coefficient buffers of two slots.
fn dot<T: Scalar>(d: &StepDescription, a: &Slots<Field<T>>, b: &Slots<Field<T>>) -> f64 {
    let mut s = 0.0;
    for (name, level, x) in a.each() {
        if d.field(name).is_some_and(|f| f.role == Role::Coefficient) {
            continue;
        }
        let (x, y) = (x.unwrap(), b.get(name, level).unwrap());
        s += (x.as_slice().iter().zip(y.as_slice()))
            .map(|(p, q)| p.as_f64() * q.as_f64())
            .sum::<f64>();
    }
    s
}

/// The relative mismatch `|⟨F x, y⟩ − ⟨x, Fᵀ y⟩| / max(|·|, |·|)` of `steps` steps of `d`,
/// `x` = (every slot, the affine parameters of every step), random; other parameters `dt`;
/// coefficients `scale · [0.5, 1.5)`, random.
fn dot_test<T: Scalar>(
    d: &StepDescription,
    g: &Grid,
    steps: usize,
    (dt, scale): (f64, f64),
    seed: u64,
) -> f64 {
    let lin = LinearStep::new(d).unwrap();
    let affine: Vec<&String> = d.params.iter().filter(|p| lin.is_affine_in(p)).collect();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    // Positive, as materials are.
    let coefs: Vec<(String, Field<T>)> = (d.fields.iter())
        .filter(|f| f.role == Role::Coefficient)
        .enumerate()
        .map(|(n, f)| {
            let r = Field::<f64>::random(g, seed * 100 + n as u64);
            let v = r
                .as_slice()
                .iter()
                .map(|x| T::from_f64(scale * (1.0 + 0.5 * x)));
            (f.name.clone(), Field::from_vec(g, v.collect()).unwrap())
        })
        .collect();
    let coef = |name: &str| coefs.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let mut k = seed * 1000;
    let x = slots(d, &coef, |_, _| {
        k += 1;
        Field::random(g, k)
    });
    let y = slots(d, &coef, |_, _| {
        k += 1;
        Field::random(g, k)
    });
    let sources: Vec<Vec<f64>> = (0..steps)
        .map(|_| affine.iter().map(|_| rng.gen_range(-1.0..1.0)).collect())
        .collect();
    let params = |n: usize| -> Vec<(&str, f64)> {
        let mut p: Vec<(&str, f64)> = (d.params.iter())
            .filter(|p| !lin.is_affine_in(p))
            .map(|p| (p.as_str(), dt))
            .collect();
        p.extend(
            affine
                .iter()
                .zip(&sources[n])
                .map(|(p, v)| (p.as_str(), *v)),
        );
        p
    };
    let mut fx = x.clone();
    for n in 0..steps {
        run_step(d, g, &mut fx, &params(n)).unwrap();
    }
    let adj = AdjointStep::new(d).unwrap();
    let mut fty = y.clone();
    let mut lhs_params = 0.0;
    for n in (0..steps).rev() {
        let dp = adj.step(g, &x, &params(n), &mut fty).unwrap();
        for (a, v) in affine.iter().zip(&sources[n]) {
            let i = d.params.iter().position(|p| p == *a).unwrap();
            lhs_params += v * dp[i];
        }
    }
    let fwd = dot(d, &fx, &y);
    let back = dot(d, &x, &fty) + lhs_params;
    (fwd - back).abs() / fwd.abs().max(back.abs())
}

fn shapes() -> [Vec<usize>; 2] {
    [vec![23, 17], vec![13, 11, 9]]
}

fn grid(shape: &[usize]) -> Grid {
    let h: Vec<f64> = (0..shape.len()).map(|a| 1.0 + 0.1 * a as f64).collect();
    Grid::new(shape, &h).unwrap()
}

#[test]
fn heat_and_constant_density_acoustics_transpose_exactly() {
    let mut worst: f64 = 0.0;
    for shape in shapes() {
        let g = grid(&shape);
        for acc in [2, 4, 8] {
            for bc in Boundary::ALL {
                let layers = Layers {
                    thickness: 3,
                    reach: acc / 2,
                };
                for (d, scale) in [
                    (heat(&g, acc, bc, DtKappa::Field).unwrap(), 0.05),
                    (heat(&g, acc, bc, DtKappa::Constant(0.07)).unwrap(), 0.0),
                    (acoustic(&g, acc, bc).unwrap(), 0.04),
                    (acoustic_layers(&g, acc, bc, Some(layers)).unwrap(), 0.04),
                ] {
                    let e = dot_test::<f64>(&d, &g, 6, (0.0, scale), acc as u64);
                    assert!(e <= 1e-12, "{shape:?} accuracy {acc} {bc}: {e:e}");
                    worst = worst.max(e);
                }
            }
        }
    }
    eprintln!("heat, acoustic, acoustic_layers: worst relative dot-product mismatch {worst:.1e}");
}

/// A state update that leaves points alone (an interior region, a box of sources): the n+1
/// buffer's old values pass through the step, and their adjoint through the transpose.
#[test]
fn partial_updates_pass_the_rest_through() {
    let g = grid(&[17, 12]);
    for bc in Boundary::ALL {
        let mut d = heat(&g, 4, bc, DtKappa::Field).unwrap();
        d.updates[0].region = StepRegion::Interior;
        let e = dot_test::<f64>(&d, &g, 5, (0.0, 0.05), 21);
        assert!(e <= 1e-12, "{bc} heat on the interior: {e:e}");
        let mut d = acoustic(&g, 4, bc).unwrap();
        d.updates[0].region = StepRegion::Box(Region {
            lo: [3, 2, 0],
            hi: [11, 12, 1],
        });
        let e = dot_test::<f64>(&d, &g, 5, (0.0, 0.04), 22);
        assert!(e <= 1e-12, "{bc} acoustic on a box: {e:e}");
    }
}

#[test]
fn variable_density_acoustics_transposes_exactly() {
    let mut worst: f64 = 0.0;
    for shape in shapes() {
        let g = grid(&shape);
        for acc in [2, 4, 8] {
            for bc in [Boundary::Periodic, Boundary::Dirichlet] {
                let d = acoustic_vd(&g, acc, bc).unwrap();
                let e = dot_test::<f64>(&d, &g, 8, (0.2, 1.0), 7 + acc as u64);
                assert!(e <= 1e-12, "{shape:?} accuracy {acc} {bc}: {e:e}");
                worst = worst.max(e);
            }
        }
    }
    eprintln!("acoustic_vd: worst relative dot-product mismatch {worst:.1e}");
}

#[test]
fn cpml_and_sources_transpose_exactly() {
    let mut worst: f64 = 0.0;
    for shape in shapes() {
        let g = grid(&shape);
        for acc in [2, 4, 8] {
            for bc in [Boundary::Periodic, Boundary::Dirichlet] {
                let d = layers(&g, acc, bc, 3);
                assert!(LinearStep::new(&d)
                    .unwrap()
                    .is_affine_in(&AcousticVd::source(1)));
                let e = dot_test::<f64>(&d, &g, 6, (0.2, 1.0), 11 + acc as u64);
                assert!(e <= 1e-12, "{shape:?} accuracy {acc} {bc}: {e:e}");
                worst = worst.max(e);
            }
        }
    }
    eprintln!("acoustic_vd_layers: worst relative dot-product mismatch {worst:.1e}");
}

#[test]
fn single_precision_transposes_within_its_rounding() {
    let g = grid(&[21, 15]);
    let mut worst: f64 = 0.0;
    for (d, p) in [
        (layers(&g, 4, Boundary::Dirichlet, 4), (0.2, 1.0)),
        (
            heat(&g, 4, Boundary::Neumann, DtKappa::Field).unwrap(),
            (0.0, 0.05),
        ),
    ] {
        let e = dot_test::<f32>(&d, &g, 6, p, 3);
        assert!(e <= 1e-5, "{e:e}");
        worst = worst.max(e);
    }
    eprintln!("f32: worst relative dot-product mismatch {worst:.1e}");
}

/// The linearised terms, evaluated forward, give what the tree executor gives.
#[test]
fn linearised_terms_evaluate_to_the_step() {
    let g = grid(&[19, 14]);
    for bc in Boundary::ALL {
        let d = layers(&g, 4, bc, 4);
        let lin = LinearStep::new(&d).unwrap();
        let coef = |n: &str| Field::<f64>::random(&g, n.len() as u64 + 40);
        let mut k = 0;
        let mut s = slots(&d, &coef, |_, _| {
            k += 1;
            Field::random(&g, k)
        });
        let params = [("dt", 0.3), ("s0", 0.7), ("s1", -1.1)];
        let mut want = s.clone();
        run_step(&d, &g, &mut want, &params).unwrap();
        want.unrotate();
        for u in &lin.updates {
            let region = u.region.resolve(&g, u.reach);
            let mut out = s.get(&u.target, u.level).unwrap().clone();
            for kk in region.lo[2]..region.hi[2] {
                for j in region.lo[1]..region.hi[1] {
                    for i in region.lo[0]..region.hi[0] {
                        let v = u.terms.iter().fold(0.0, |acc, t| {
                            acc + term_value(&d, &g, &s, &params, t, [i, j, kk])
                        });
                        out.as_mut_slice()[g.index(i, j, kk)] = v;
                    }
                }
            }
            s.put(&u.target, u.level, out);
        }
        for (name, level, a) in want.each() {
            let (a, b) = (
                a.unwrap().as_slice(),
                s.get(name, level).unwrap().as_slice(),
            );
            let scale = a.iter().fold(1e-300, |m: f64, v| m.max(v.abs()));
            for (p, (x, y)) in a.iter().zip(b).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-13 * scale,
                    "{bc} {name}@{level} {p}: {x} {y}"
                );
            }
        }
    }
}

fn term_value(
    d: &StepDescription,
    g: &Grid,
    s: &Slots<Field<f64>>,
    params: &[(&str, f64)],
    t: &fdlab_core::step::Term,
    p: [usize; 3],
) -> f64 {
    use fdlab_core::step::FactorKind;
    let read = |name: &str, level: i32, o: [i32; 3], coef: bool| {
        let f = s.get(name, level).unwrap();
        let mut at = [0; 3];
        for a in 0..3 {
            let i = p[a] as i64 + o[a] as i64;
            let n = g.shape()[a];
            at[a] = match (
                coef && d.boundary == Boundary::Dirichlet,
                d.boundary.map(i, n),
            ) {
                (true, _) => i.clamp(0, n as i64 - 1) as usize,
                (false, Some(i)) => i,
                (false, None) => return 0.0,
            };
        }
        f.at(at[0], at[1], at[2])
    };
    let mut v = t.weight;
    for f in &t.factors {
        let base = match &f.kind {
            FactorKind::Coefficient { name, offset } => read(name, 0, *offset, true),
            FactorKind::Param(n) => params.iter().find(|(q, _)| q == n).unwrap().1,
        };
        v *= base.powi(f.power);
    }
    match &t.read {
        Some(r) => v * read(&r.name, r.level, r.offset, false),
        None => v,
    }
}

/// Typed errors, nothing changed: a nonlinear update, adjoint slots of another shape, a
/// gradient of another description.
#[test]
fn bad_inputs_are_refused() {
    use super::Gradient;
    use fdlab_core::step::StepError;
    let g = grid(&[12, 9]);
    let mut d = heat(&g, 2, Boundary::Periodic, DtKappa::Field).unwrap();
    let good = AdjointStep::new(&d).unwrap();
    d.updates[0].expr = Expr::field("u") * Expr::field("u");
    assert!(matches!(
        AdjointStep::new(&d),
        Err(StepError::Nonlinear { name, .. }) if name == "u"
    ));
    let d = good.description().clone();
    let coef = |_: &str| Field::<f64>::filled(&g, 1.0);
    let fwd = slots(&d, &coef, |_, _| Field::random(&g, 1));
    let other = grid(&[12, 8]);
    let mut wrong = slots(&d, &coef, |_, _| Field::random(&other, 2));
    let before = wrong.clone();
    let err = good.step(&g, &fwd, &[], &mut wrong);
    assert!(matches!(err, Err(StepError::Model(_))), "{err:?}");
    assert_eq!(wrong, before);
    let mut a = slots(&d, &coef, |_, _| Field::random(&g, 3));
    let mut grad = Gradient::zeros(&acoustic(&g, 2, Boundary::Periodic).unwrap(), &g);
    let err = good.gradient_step(&g, &fwd, &[], &mut a, &mut grad);
    assert!(matches!(err, Err(StepError::Params { .. })), "{err:?}");
    let err = good.step(&g, &fwd, &[("dx", 0.1)], &mut a);
    assert!(
        matches!(err, Err(StepError::UnknownParam { .. })),
        "{err:?}"
    );
}
