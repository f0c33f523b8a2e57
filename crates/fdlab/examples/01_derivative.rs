//! d/dx of sin(2πx) on a periodic 64³ grid with the 8th-order central stencil, on the backend
//! named by the first argument or `FDLAB_BACKEND` (auto, cpu, cuda); compares with 2π cos(2πx).
//!
//! `cargo run -p fdlab --example 01_derivative -- cpu`
use fdlab::{Axis, Backend, Boundary, Field, Grid, PlanOptions, Stencil};
use std::f64::consts::PI;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = match std::env::args().nth(1) {
        Some(name) => Backend::open(name.parse()?)?,
        None => Backend::from_env()?,
    };
    let grid = Grid::unit(&[64, 64, 64])?;
    let dx = Stencil::derivative(&grid, Axis::X, 1, 8)?;
    let plan = backend.plan::<f32>(&[dx], Boundary::Periodic, &grid, PlanOptions::default())?;
    let u = backend.upload(&Field::from_fn(&grid, |x| (2.0 * PI * x[0]).sin()))?;
    let mut du = backend.zeros(&grid)?;
    plan.apply(&u, &mut [&mut du])?;
    let du = du.to_host()?;

    let mut max_err = 0.0f64;
    for k in 0..64 {
        for j in 0..64 {
            for i in 0..64 {
                let exact = 2.0 * PI * (2.0 * PI * grid.coords(i, j, k)[0]).cos();
                max_err = max_err.max((f64::from(du.at(i, j, k)) - exact).abs());
            }
        }
    }
    println!("backend {} ({})", backend.name(), plan.label());
    for i in [0, 16, 32] {
        println!(
            "  du/dx at x = {:.4}: {:+.6}",
            grid.coords(i, 0, 0)[0],
            du.at(i, 0, 0)
        );
    }
    println!("max |du/dx - 2pi cos(2pi x)| = {max_err:.3e}");
    // 8th order at h = 1/64 gives ~1e-9; f32 rounding of sums of size ~6/h dominates.
    if max_err > 1e-3 {
        return Err(format!("error {max_err:.3e} above the bound 1e-3").into());
    }
    Ok(())
}
