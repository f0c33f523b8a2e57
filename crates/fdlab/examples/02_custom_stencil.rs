//! A custom stencil from explicit taps: the 9-point "box" Laplacian in 2-D,
//! (sum of the 8 neighbours − 8 u) / (3 h²), applied to sin(2πx) sin(2πy), whose Laplacian is
//! −8π² u. Runs on the backend named by the first argument or `FDLAB_BACKEND`.
//!
//! `cargo run -p fdlab --example 02_custom_stencil -- cpu`
use fdlab::{Backend, Boundary, Field, Grid, PlanOptions, Stencil};
use std::f64::consts::PI;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = match std::env::args().nth(1) {
        Some(name) => Backend::open(name.parse()?)?,
        None => Backend::from_env()?,
    };
    let n = 256;
    let grid = Grid::unit(&[n, n])?;
    let h = 1.0 / n as f64;
    let w = 1.0 / (3.0 * h * h);
    let mut taps = vec![([0, 0, 0], -8.0 * w)];
    for dy in -1..=1 {
        for dx in -1..=1 {
            if (dx, dy) != (0, 0) {
                taps.push(([dx, dy, 0], w));
            }
        }
    }
    let boxlap = Stencil::custom(&taps)?;
    let plan = backend.plan::<f64>(&[boxlap], Boundary::Periodic, &grid, PlanOptions::default())?;
    let f = |x: [f64; 3]| (2.0 * PI * x[0]).sin() * (2.0 * PI * x[1]).sin();
    let u = backend.upload(&Field::from_fn(&grid, f))?;
    let mut lu = backend.zeros(&grid)?;
    plan.apply(&u, &mut [&mut lu])?;
    let lu = lu.to_host()?;

    let mut max_err = 0.0f64;
    for j in 0..n {
        for i in 0..n {
            let exact = -8.0 * PI * PI * f(grid.coords(i, j, 0));
            max_err = max_err.max((lu.at(i, j, 0) - exact).abs());
        }
    }
    println!(
        "backend {} ({}), {} taps",
        backend.name(),
        plan.label(),
        taps.len()
    );
    println!(
        "  Lu at (1/4, 1/4): {:+.6} (exact {:+.6})",
        lu.at(n / 4, n / 4, 0),
        -8.0 * PI * PI
    );
    println!("max |Lu + 8pi^2 u| = {max_err:.3e}");
    // Second order: about (2π)⁴ h² / 6 · 2 ≈ 8e-3 at h = 1/256.
    if max_err > 2e-2 {
        return Err(format!("error {max_err:.3e} above the bound 2e-2").into());
    }
    Ok(())
}
