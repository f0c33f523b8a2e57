//! Adjoint-state gradients of a receiver misfit: a Taylor test, and the gradient with
//! Revolve checkpointing bit-identical to the one with every step stored.

use super::{run_step, AdjointStep, Gradient};
use fdlab_core::step::physics::{acoustic_vd_layers, AcousticVd as A, AcousticVdSpec};
use fdlab_core::step::{Role, Slots, StepDescription};
use fdlab_core::{Axis, Boundary, Field, Grid};

type S = Slots<Field<f64>>;

/// A 2-D variable-density case with a CPML, two sources and three receivers.
#[derive(Clone)]
struct Case {
    g: Grid,
    d: StepDescription,
    dt: f64,
    steps: usize,
    receivers: Vec<usize>,
    /// Coefficient fields other than `k` and `b` (the CPML's).
    pml: Vec<(String, Field<f64>)>,
}

/// The model: bulk modulus, buoyancy, and each step's two source amplitudes.
#[derive(Clone)]
struct Model {
    k: Vec<f64>,
    b: Vec<f64>,
    src: Vec<[f64; 2]>,
}

impl Model {
    /// `self + h · dm`.
    fn plus(&self, h: f64, dm: &Model) -> Model {
        let add = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x + h * y).collect();
        Model {
            k: add(&self.k, &dm.k),
            b: add(&self.b, &dm.b),
            src: (self.src.iter().zip(&dm.src))
                .map(|(a, b)| [a[0] + h * b[0], a[1] + h * b[1]])
                .collect(),
        }
    }
}

/// CPML coefficients `A`, `B` at position `x` (index units) along an axis of `n` points.
fn pml_ab(x: f64, n: usize, layer: usize, dt: f64) -> (f64, f64) {
    let l = layer as f64;
    let depth = ((l - x).max(x - (n - 1) as f64 + l).max(0.0) / l).min(1.0);
    let sigma = 2.0 * depth * depth;
    let b = (-sigma * dt).exp();
    (b - 1.0, b)
}

impl Case {
    fn new(steps: usize) -> Case {
        let g = Grid::new(&[30, 26], &[1.0, 1.0]).unwrap();
        let layer = 5;
        let spec = AcousticVdSpec {
            accuracy: 4,
            boundary: Boundary::Dirichlet,
            layer: Some(layer),
            sources: vec![[12, 10, 0], [17, 14, 0]],
        };
        let d = acoustic_vd_layers(&g, &spec).unwrap();
        let dt = 0.25;
        let mut pml = vec![];
        let shape = g.shape();
        for axis in [Axis::X, Axis::Y] {
            for half in [false, true] {
                let (mut fa, mut fb) = (Field::zeros(&g), Field::zeros(&g));
                for j in 0..shape[1] {
                    for i in 0..shape[0] {
                        let x = [i, j][axis.index()] as f64 + if half { 0.5 } else { 0.0 };
                        let (a, b) = pml_ab(x, shape[axis.index()], layer, dt);
                        fa.as_mut_slice()[g.index(i, j, 0)] = a;
                        fb.as_mut_slice()[g.index(i, j, 0)] = b;
                    }
                }
                pml.push((A::a(axis, half), fa));
                pml.push((A::b(axis, half), fb));
            }
        }
        let receivers = [[8, 8], [21, 12], [14, 19]]
            .iter()
            .map(|&[i, j]| g.index(i, j, 0))
            .collect();
        Case {
            g,
            d,
            dt,
            steps,
            receivers,
            pml,
        }
    }

    /// A smooth medium (c from 1 to 1.5, ρ from 1 to 2) and Ricker-like sources.
    fn model(&self) -> Model {
        // Coordinates scaled to [0, 1).
        let unit = |x: [f64; 3]| [x[0] / 30.0, x[1] / 26.0];
        let k = Field::<f64>::from_fn(&self.g, |x| {
            let [x, y] = unit(x);
            let (c, rho) = (1.0 + 0.5 * x * y, 1.0 + y * y);
            rho * c * c
        });
        let b = Field::<f64>::from_fn(&self.g, |x| {
            let [x, y] = unit(x);
            1.0 / (1.0 + y * y) + 0.1 * x
        });
        let ricker = |t: f64| {
            let a = (std::f64::consts::PI * 0.2 * (t - 4.0)).powi(2);
            (1.0 - 2.0 * a) * (-a).exp()
        };
        let src = (0..self.steps)
            .map(|n| {
                let t = n as f64 * self.dt;
                [ricker(t), -0.5 * ricker(t - 1.0)]
            })
            .collect();
        Model {
            k: k.into_vec(),
            b: b.into_vec(),
            src,
        }
    }

    fn params(&self, m: &Model, n: usize) -> [(&'static str, f64); 3] {
        [("dt", self.dt), ("s0", m.src[n][0]), ("s1", m.src[n][1])]
    }

    /// The slots at rest in medium `m`.
    fn start(&self, m: &Model) -> S {
        Slots::new(&self.d, |name, _| {
            Ok::<_, ()>(match name {
                A::K => Field::from_vec(&self.g, m.k.clone()).unwrap(),
                A::B => Field::from_vec(&self.g, m.b.clone()).unwrap(),
                _ => match self.pml.iter().find(|(n, _)| n == name) {
                    Some((_, f)) => f.clone(),
                    None => Field::zeros(&self.g),
                },
            })
        })
        .unwrap()
    }

    /// The pressure at the receivers after each step, and the slots before each step.
    fn forward(&self, m: &Model) -> (Vec<Vec<f64>>, Vec<S>) {
        let mut s = self.start(m);
        let (mut traces, mut before) = (vec![], vec![]);
        for n in 0..self.steps {
            before.push(s.clone());
            run_step(&self.d, &self.g, &mut s, &self.params(m, n)).unwrap();
            let p = s.get(A::P, 0).unwrap().as_slice();
            traces.push(self.receivers.iter().map(|&r| p[r]).collect());
        }
        (traces, before)
    }

    fn misfit(&self, m: &Model, data: &[Vec<f64>]) -> f64 {
        let (traces, _) = self.forward(m);
        let r = traces.iter().flatten().zip(data.iter().flatten());
        0.5 * r.map(|(p, d)| (p - d) * (p - d)).sum::<f64>()
    }

    /// Adjoint step `n`: the residual of step `n`'s output into the adjoint pressure, then the
    /// transposed step with gradients; returns `∂J/∂(s0, s1)` of step `n`.
    #[allow(clippy::too_many_arguments)]
    fn back(
        &self,
        adj: &AdjointStep,
        m: &Model,
        n: usize,
        before: &S,
        residual: &[f64],
        a: &mut S,
        grad: &mut Gradient,
    ) -> [f64; 2] {
        let p = a.get_mut(A::P, 0).unwrap().as_mut_slice();
        for (&r, v) in self.receivers.iter().zip(residual) {
            p[r] += v;
        }
        let dp = (adj.gradient_step(&self.g, before, &self.params(m, n), a, grad)).unwrap();
        [dp[1], dp[2]]
    }

    fn zeros(&self) -> S {
        Slots::new(&self.d, |_, _| Ok::<_, ()>(Field::zeros(&self.g))).unwrap()
    }

    /// `J` and its gradient, every forward step stored.
    fn gradient(&self, m: &Model, data: &[Vec<f64>]) -> (Gradient, Vec<[f64; 2]>, S) {
        let (traces, before) = self.forward(m);
        let adj = AdjointStep::new(&self.d).unwrap();
        let mut grad = Gradient::zeros(&self.d, &self.g);
        let mut a = self.zeros();
        let mut ds = vec![[0.0; 2]; self.steps];
        for n in (0..self.steps).rev() {
            let res: Vec<f64> = traces[n].iter().zip(&data[n]).map(|(p, d)| p - d).collect();
            ds[n] = self.back(&adj, m, n, &before[n], &res, &mut a, &mut grad);
        }
        (grad, ds, a)
    }
}

fn random(g: &Grid, seed: u64, scale: &[f64]) -> Vec<f64> {
    let r = Field::<f64>::random(g, seed);
    r.as_slice().iter().zip(scale).map(|(x, s)| x * s).collect()
}

/// Data from a true model: the smooth model with a bump in K.
fn data(case: &Case, m: &Model) -> Vec<Vec<f64>> {
    let mut truth = m.clone();
    let shape = case.g.shape();
    for j in 0..shape[1] {
        for i in 0..shape[0] {
            let r2 = ((i as f64 - 15.0).powi(2) + (j as f64 - 13.0).powi(2)) / 9.0;
            truth.k[case.g.index(i, j, 0)] *= 1.0 + 0.3 * (-r2).exp();
        }
    }
    case.forward(&truth).0
}

/// The observed orders of `J(m + h dm) − J(m)` and of `J(m + h dm) − J(m) − h⟨g, dm⟩` over
/// six halvings of `h`.
fn taylor(case: &Case, m: &Model, data: &[Vec<f64>], dm: &Model, what: &str) -> [Vec<f64>; 2] {
    let (grad, ds, _) = case.gradient(m, data);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let slope = dot(grad.get(A::K).unwrap(), &dm.k)
        + dot(grad.get(A::B).unwrap(), &dm.b)
        + ds.iter()
            .zip(&dm.src)
            .map(|(g, d)| g[0] * d[0] + g[1] * d[1])
            .sum::<f64>();
    let j0 = case.misfit(m, data);
    let (mut r1, mut r2) = (vec![], vec![]);
    for e in 0..7 {
        // Small enough that the linear part of J(m + h dm) − J(m) dominates: at h = 1 the
        // second-order part is larger (the slopes of K, b and the sources partly cancel).
        let h = 1e-4 * 0.5f64.powi(e);
        let j = case.misfit(&m.plus(h, dm), data);
        r1.push((j - j0).abs());
        r2.push((j - j0 - h * slope).abs());
    }
    let order = |r: &[f64]| -> Vec<f64> { r.windows(2).map(|w| (w[0] / w[1]).log2()).collect() };
    let (o1, o2) = (order(&r1), order(&r2));
    let sci = |r: &[f64]| r.iter().map(|x| format!("{x:.3e}")).collect::<Vec<_>>();
    eprintln!("{what}: J = {j0:.6e}, <g, dm> = {slope:.6e}");
    eprintln!("  first-order remainders {:?}, orders {o1:.3?}", sci(&r1));
    eprintln!("  second-order remainders {:?}, orders {o2:.3?}", sci(&r2));
    [o1, o2]
}

#[test]
fn the_gradient_passes_a_taylor_test() {
    let case = Case::new(30);
    let m = case.model();
    let data = data(&case, &m);
    let scaled = |v: &[f64], seed| {
        let s: Vec<f64> = v.iter().map(|x| 0.05 * x).collect();
        random(&case.g, seed, &s)
    };
    let zero = Model {
        k: vec![0.0; m.k.len()],
        b: vec![0.0; m.b.len()],
        src: vec![[0.0; 2]; case.steps],
    };
    let dk = Model {
        k: scaled(&m.k, 1),
        ..zero.clone()
    };
    let db = Model {
        b: scaled(&m.b, 2),
        ..zero.clone()
    };
    let ds = Model {
        src: (0..case.steps)
            .map(|n| [0.1 * (n as f64 * 0.7).sin(), 0.1 * (n as f64 * 1.3).cos()])
            .collect(),
        ..zero
    };
    let all = Model {
        k: dk.k.clone(),
        b: db.b.clone(),
        src: ds.src.clone(),
    };
    for (dm, what) in [(dk, "K"), (db, "b"), (ds, "sources"), (all, "all")] {
        let [o1, o2] = taylor(&case, &m, &data, &dm, what);
        assert!(o1.iter().all(|o| (0.9..=1.1).contains(o)), "{what}: {o1:?}");
        assert!(o2.iter().all(|o| *o >= 1.9), "{what}: {o2:?}");
    }
}

#[test]
fn checkpointed_gradient_is_bit_identical() {
    let case = Case::new(40);
    let m = case.model();
    let data = data(&case, &m);
    let (want, want_ds, want_a) = case.gradient(&m, &data);
    // The misfit's forward run gives the residuals; the schedule then recomputes states.
    let (traces, _) = case.forward(&m);
    let adj = AdjointStep::new(&case.d).unwrap();
    let params = |n: usize| -> Vec<(String, f64)> {
        (case.params(&m, n).iter())
            .map(|(k, v)| (k.to_string(), *v))
            .collect()
    };
    let inject = |n: usize, a: &mut S| {
        let p = a.get_mut(A::P, 0).unwrap().as_mut_slice();
        for ((&r, t), d) in case.receivers.iter().zip(&traces[n]).zip(&data[n]) {
            p[r] += t - d;
        }
    };
    let start = case.start(&m);
    let got = (adj.checkpointed_gradient(&case.g, &start, case.steps, 3, params, inject)).unwrap();
    assert_eq!(got.forward_steps, 130);
    assert!(got.gradient == want, "coefficient gradients differ");
    let ds: Vec<[f64; 2]> = got.params.iter().map(|p| [p[1], p[2]]).collect();
    assert!(ds == want_ds, "source gradients differ");
    for (name, level, x) in got.adjoint.each() {
        if case
            .d
            .field(name)
            .is_some_and(|f| f.role != Role::Coefficient)
        {
            assert!(
                x == want_a.get(name, level),
                "adjoint {name}@{level} differs"
            );
        }
    }
    assert!(want.get(A::K).unwrap().iter().any(|v| *v != 0.0));
    // One slot: every state recomputed from the start, N(N−1)/2 steps, the same gradient.
    let one = (adj.checkpointed_gradient(&case.g, &start, case.steps, 1, params, inject)).unwrap();
    assert_eq!(one.forward_steps, 40 * 39 / 2);
    assert!(one.gradient == want);
}

/// `gradient_step`'s derivative with respect to `dt` (which multiplies reads) summed over the
/// steps, against a central difference of J (the CPML coefficients held fixed).
#[test]
fn the_time_step_derivative_matches_a_central_difference() {
    let case = Case::new(30);
    let m = case.model();
    let data = data(&case, &m);
    let (traces, before) = case.forward(&m);
    let adj = AdjointStep::new(&case.d).unwrap();
    let mut grad = Gradient::zeros(&case.d, &case.g);
    let mut a = case.zeros();
    let mut ddt = 0.0;
    for n in (0..case.steps).rev() {
        let p = a.get_mut(A::P, 0).unwrap().as_mut_slice();
        for ((&r, t), d) in case.receivers.iter().zip(&traces[n]).zip(&data[n]) {
            p[r] += t - d;
        }
        let dp = (adj.gradient_step(&case.g, &before[n], &case.params(&m, n), &mut a, &mut grad))
            .unwrap();
        ddt += dp[0];
    }
    let h = 1e-6 * case.dt;
    let at = |dt: f64| {
        let c = Case { dt, ..case.clone() };
        c.misfit(&m, &data)
    };
    let fd = (at(case.dt + h) - at(case.dt - h)) / (2.0 * h);
    let rel = (fd - ddt).abs() / fd.abs();
    eprintln!("dJ/ddt: adjoint {ddt:.9e}, central difference {fd:.9e}, relative {rel:.1e}");
    assert!(rel < 1e-6, "{ddt} vs {fd}");
}
