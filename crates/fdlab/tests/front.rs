//! The front on the CPU: the same answers as the reference executor, and typed errors for
//! every misuse. CUDA runs of the same API are tested on the device.

use fdlab::{
    Axis, Backend, BackendKind, Boundary, Coefficients, Error, Field, Grid, PlanOptions, Real,
    Stencil,
};

/// The stencil sets the front must run: a derivative, a Laplacian, a gradient, custom taps.
fn stencil_sets(g: &Grid) -> Vec<Vec<Stencil>> {
    vec![
        vec![Stencil::derivative(g, Axis::Y, 1, 6).unwrap()],
        vec![Stencil::laplacian(g, 4).unwrap()],
        Stencil::gradient(g, 2).unwrap(),
        vec![
            Stencil::custom(&[([0, 0, 0], -1.5), ([1, 0, -1], 0.25), ([-2, 1, 0], 1.25)]).unwrap(),
        ],
    ]
}

fn matches_reference<T: Real>(tol: f64) {
    // Odd sizes on every axis, random input.
    let g = Grid::unit(&[37, 21, 13]).unwrap();
    let b = Backend::cpu();
    for boundary in [Boundary::Periodic, Boundary::Dirichlet] {
        for stencils in stencil_sets(&g) {
            let host = Field::<T>::random(&g, 42);
            let plan = b
                .plan::<T>(&stencils, boundary, &g, PlanOptions::default())
                .unwrap();
            let u = b.upload(&host).unwrap();
            let mut outs: Vec<_> = stencils
                .iter()
                .map(|_| b.upload(&Field::nan(&g)).unwrap())
                .collect();
            let mut refs: Vec<_> = outs.iter_mut().collect();
            plan.apply(&u, &mut refs).unwrap();
            let mut want: Vec<Field<T>> = stencils.iter().map(|_| Field::nan(&g)).collect();
            let mut views: Vec<_> = want.iter_mut().map(|f| f.view_mut()).collect();
            fdlab_cpu::reference::apply(&stencils, boundary, host.view(), &mut views).unwrap();
            drop(views);
            for (o, w) in outs.iter().zip(&want) {
                let got = o.to_host().unwrap();
                for (i, (a, e)) in got.as_slice().iter().zip(w.as_slice()).enumerate() {
                    let (a, e) = (a.as_f64(), e.as_f64());
                    // Points the stencils do not compute stay NaN in both.
                    assert!(
                        (a.is_nan() && e.is_nan()) || (a - e).abs() <= tol * (1.0 + e.abs()),
                        "{boundary:?} {}: point {i}: {a} vs {e}",
                        stencils[0].label()
                    );
                }
            }
        }
    }
}

#[test]
fn cpu_plans_match_the_reference_f64() {
    matches_reference::<f64>(1e-12);
}

#[test]
fn cpu_plans_match_the_reference_f32() {
    matches_reference::<f32>(1e-4);
}

#[test]
fn a_plan_refuses_wrong_outputs_and_shapes() {
    let g = Grid::unit(&[16, 8, 4]).unwrap();
    let other = Grid::unit(&[8, 8, 4]).unwrap();
    let b = Backend::cpu();
    let plan = b
        .plan::<f32>(
            &Stencil::gradient(&g, 2).unwrap(),
            Boundary::Periodic,
            &g,
            PlanOptions::default(),
        )
        .unwrap();
    let u = b.zeros::<f32>(&g).unwrap();
    let mut o = b.zeros::<f32>(&g).unwrap();
    assert!(matches!(
        plan.apply(&u, &mut [&mut o]),
        Err(Error::OutputCount {
            expected: 3,
            got: 1
        })
    ));
    let small = b.zeros::<f32>(&other).unwrap();
    let (mut x, mut y, mut z) = (
        b.zeros(&g).unwrap(),
        b.zeros(&g).unwrap(),
        b.zeros(&g).unwrap(),
    );
    let e = plan
        .apply(&small, &mut [&mut x, &mut y, &mut z])
        .unwrap_err();
    assert!(matches!(e, Error::Shape { what: "input", .. }), "{e}");
}

#[test]
fn gpu_only_options_are_refused_on_the_cpu() {
    let g = Grid::unit(&[16, 16]).unwrap();
    let lap = [Stencil::laplacian(&g, 2).unwrap()];
    let b = Backend::cpu();
    let named = PlanOptions {
        strategy: Some("naive-32x4x1".parse().unwrap()),
        ..Default::default()
    };
    let e = b
        .plan::<f64>(&lap, Boundary::Periodic, &g, named)
        .unwrap_err();
    assert!(e.to_string().contains("CUDA backend only"), "{e}");
    let constant = PlanOptions {
        coefficients: Coefficients::Constant,
        ..Default::default()
    };
    assert!(matches!(
        b.plan::<f64>(&lap, Boundary::Periodic, &g, constant),
        Err(Error::GpuOnly {
            option: "coefficients"
        })
    ));
}

#[test]
fn a_stencil_wider_than_the_grid_is_refused_at_plan_time() {
    let g = Grid::unit(&[6, 6, 6]).unwrap();
    let dx = Stencil::derivative(&g, Axis::X, 1, 8).unwrap();
    let e = Backend::cpu()
        .plan::<f64>(&[dx], Boundary::Dirichlet, &g, PlanOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::Core(_)), "{e}");
}

#[test]
fn backend_names_parse_and_print() {
    for (s, k) in [
        ("auto", BackendKind::Auto),
        ("CPU", BackendKind::Cpu),
        ("cuda", BackendKind::Cuda),
    ] {
        assert_eq!(s.parse::<BackendKind>().unwrap(), k);
        assert_eq!(k.to_string().parse::<BackendKind>().unwrap(), k);
    }
    let e = "tpu".parse::<BackendKind>().unwrap_err();
    assert!(e.to_string().contains("valid backends: auto, cpu, cuda"));
    // `auto` always yields a backend: the GPU, or the CPU with the reason.
    let b = Backend::auto();
    assert!(b.name() == "cuda" || b.fallback_reason().is_some());
}

/// The same body on the GPU, when there is one: every stencil set and boundary, plans chosen
/// by the API, outputs against the CPU front to the precision's tolerance.
#[test]
fn cuda_plans_match_the_cpu_when_a_gpu_is_present() {
    let gpu = match Backend::cuda(0) {
        Ok(b) => b,
        Err(why) => {
            eprintln!("skipped: no usable GPU ({why})");
            return;
        }
    };
    let cpu = Backend::cpu();
    let g = Grid::unit(&[37, 21, 13]).unwrap();
    for boundary in [Boundary::Periodic, Boundary::Dirichlet] {
        for stencils in stencil_sets(&g) {
            let host = Field::<f64>::random(&g, 7);
            let mut answers = vec![];
            for b in [&cpu, &gpu] {
                let plan = b
                    .plan::<f64>(&stencils, boundary, &g, PlanOptions::default())
                    .unwrap();
                let u = b.upload(&host).unwrap();
                let mut outs: Vec<_> = stencils
                    .iter()
                    .map(|_| b.upload(&Field::nan(&g)).unwrap())
                    .collect();
                let mut refs: Vec<_> = outs.iter_mut().collect();
                plan.apply(&u, &mut refs).unwrap();
                plan.synchronize().unwrap();
                answers.push(
                    outs.iter()
                        .map(|o| o.to_host().unwrap())
                        .collect::<Vec<_>>(),
                );
            }
            for ((c, d), st) in answers[0].iter().zip(&answers[1]).zip(&stencils) {
                // Sums in another order: within rounding of the largest terms (inputs ≤ 1).
                let tol = 1e-12 * st.abs_sum();
                for (a, e) in d.as_slice().iter().zip(c.as_slice()) {
                    assert!(
                        (a.is_nan() && e.is_nan()) || (a - e).abs() <= tol,
                        "{boundary:?} {}: {a} vs {e}",
                        st.label()
                    );
                }
            }
        }
    }
}
