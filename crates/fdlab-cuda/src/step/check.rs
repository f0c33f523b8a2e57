//! The step self-test: variable-density acoustic steps on the GPU against a CPU reference
//! the caller supplies (this crate does not depend on the CPU backend), on odd shapes, random
//! inputs and a NaN-poisoned output level.

use super::StepProgram;
use crate::device::{CudaScalar, Device};
use crate::error::Result;
use crate::field::DeviceField;
use crate::selftest::Check;
use fdlab_core::step::physics::{acoustic_vd, AcousticVd as A};
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Boundary, Field, Grid, Precision};

/// The CPU reference: runs one step of a description on host fields in `f64` (e.g. a wrapper
/// over `fdlab_cpu::step::run_step`).
pub type StepReference<'a> = &'a dyn Fn(
    &StepDescription,
    &Grid,
    &mut Slots<Field<f64>>,
    &[(&str, f64)],
) -> std::result::Result<(), String>;

/// Steps run per case (more than the two levels, so the rotation is exercised).
const STEPS: usize = 3;

/// The cases: shape, accuracy, boundary.
fn cases() -> Vec<(Vec<usize>, usize, Boundary)> {
    let shapes = [vec![67], vec![67, 45], vec![67, 45, 33]];
    let mut out = vec![];
    for s in shapes {
        for (acc, bc) in [
            (2, Boundary::Dirichlet),
            (4, Boundary::Periodic),
            (8, Boundary::Dirichlet),
        ] {
            out.push((s.clone(), acc, bc));
        }
    }
    out
}

/// The host inputs of a case, rounded through `T` so that the reference starts from what the
/// device holds: p at n−1 and n random, b and k positive random, n+1 NaN.
fn inputs<T: CudaScalar>(d: &StepDescription, g: &Grid) -> Slots<Field<f64>> {
    let shifted = |seed, by: f64| {
        let r = Field::<f64>::random(g, seed);
        Field::from_vec(g, r.as_slice().iter().map(|x| by + 0.5 * x).collect())
            .unwrap_or_else(|_| unreachable!("same grid"))
    };
    let made = Slots::new(d, |name, level| {
        Ok::<_, ()>(rounded::<T>(&match (name, level) {
            (A::P, 1) => Field::nan(g),
            (A::P, l) => Field::random(g, (10 + l) as u64),
            (A::B, _) => shifted(3, 1.5),
            _ => shifted(4, 2.0),
        }))
    });
    made.unwrap_or_else(|_| unreachable!("the maker cannot fail"))
}

fn run_case<T: CudaScalar>(
    dev: &Device,
    d: &StepDescription,
    g: &Grid,
    reference: StepReference<'_>,
) -> std::result::Result<String, String> {
    let params = [(A::DT, 0.1)];
    let mut host = inputs::<T>(d, g);
    let err = |e: crate::Error| e.to_string();
    let prog = StepProgram::new(dev, d, T::PRECISION).map_err(err)?;
    let mut gpu = Slots::new(d, |name, level| {
        let f = host
            .get(name, level)
            .unwrap_or_else(|| unreachable!("same layout"));
        let t = Field::from_vec(g, f.as_slice().iter().map(|&x| T::from_f64(x)).collect())?;
        DeviceField::upload(dev, &t)
    })
    .map_err(err)?;
    for _ in 0..STEPS {
        if let Some(f) = gpu.get_mut(A::P, 1) {
            f.fill_nan().map_err(err)?;
        }
        prog.run(g, &mut gpu, &params).map_err(err)?;
        reference(d, g, &mut host, &params)?;
    }
    let mut worst = 0.0f64;
    for level in [-1, 0] {
        let got = gpu
            .get(A::P, level)
            .ok_or("no level")?
            .download()
            .map_err(err)?;
        let want = host.get(A::P, level).ok_or("no level")?;
        for (n, (a, b)) in got.as_slice().iter().zip(want.as_slice()).enumerate() {
            let e = (a.as_f64() - b).abs() / b.abs().max(1.0);
            if e.is_nan() || e > T::TOLERANCE {
                return Err(format!("level {level}, point {n}: {a} vs {b}"));
            }
            worst = worst.max(e);
        }
    }
    Ok(format!(
        "{} kernel(s), worst relative error {worst:.1e}",
        prog.kernels().count()
    ))
}

/// `f` rounded through `T`, so that the reference sees exactly the device's inputs.
fn rounded<T: CudaScalar>(f: &Field<f64>) -> Field<f64> {
    let v = f
        .as_slice()
        .iter()
        .map(|&x| T::from_f64(x).as_f64())
        .collect();
    Field::from_vec(f.grid(), v).unwrap_or_else(|_| unreachable!("same length"))
}

/// Runs variable-density acoustic steps (1-, 2- and 3-D, odd shapes, accuracies 2, 4, 8,
/// zero and periodic halos, f32 and f64) on `dev` and compares every point of the last two
/// levels with `reference` (relative error ≤ 1e-5 in f32, 1e-12 in f64).
pub fn step_selftest(dev: &Device, reference: StepReference<'_>) -> Result<Vec<Check>> {
    let mut built = vec![];
    for (shape, acc, bc) in cases() {
        let g = Grid::new(&shape, &vec![1.0; shape.len()])?;
        built.push((acoustic_vd(&g, acc, bc)?, g, acc, bc));
    }
    // All kernels first, so that they compile in parallel.
    let mut sources = vec![];
    for (d, ..) in &built {
        for p in Precision::ALL {
            sources.extend(
                crate::codegen::step::emit_step(d, p)?
                    .into_iter()
                    .map(|k| k.source),
            );
        }
    }
    dev.kernels(&sources)?;
    let mut out = vec![];
    for (d, g, acc, bc) in &built {
        for p in Precision::ALL {
            let r = match p {
                Precision::F32 => run_case::<f32>(dev, d, g, reference),
                Precision::F64 => run_case::<f64>(dev, d, g, reference),
            };
            out.push(Check {
                name: format!("step acoustic_vd {:?} order {acc} {bc} {p}", g.dims()),
                passed: r.is_ok(),
                detail: r.unwrap_or_else(|e| e),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(
        d: &StepDescription,
        g: &Grid,
        s: &mut Slots<Field<f64>>,
        params: &[(&str, f64)],
    ) -> std::result::Result<(), String> {
        fdlab_cpu::step::run_step(d, g, s, params).map_err(|e| e.to_string())
    }

    #[test]
    fn step_descriptions_match_the_cpu_reference_on_a_gpu() {
        if let Err(why) = crate::device::probe() {
            println!("skipped: no GPU ({why})");
            return;
        }
        let dev = Device::open(0).expect("a probed device opens");
        let checks = step_selftest(&dev, &cpu).expect("the step self-test runs");
        for c in &checks {
            println!(
                "{} {}: {}",
                if c.passed { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed).collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }

    #[test]
    fn the_reference_inputs_are_what_the_device_gets() {
        let g = Grid::new(&[5], &[1.0]).unwrap();
        let d = acoustic_vd(&g, 2, Boundary::Dirichlet).unwrap();
        let s = inputs::<f32>(&d, &g);
        assert!(s
            .get(A::P, 1)
            .unwrap()
            .as_slice()
            .iter()
            .all(|x| x.is_nan()));
        assert!(s.get(A::B, 0).unwrap().as_slice().iter().all(|&x| x >= 1.0));
        let r = rounded::<f32>(s.get(A::P, 0).unwrap());
        assert_eq!(
            r.as_slice()[0],
            s.get(A::P, 0).unwrap().as_slice()[0] as f32 as f64
        );
    }
}
