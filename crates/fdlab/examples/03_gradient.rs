//! The gradient of u = sin(2πx) cos(2πy) sin(2πz) on a periodic 48³ grid: three stencils in one
//! plan, three outputs from one input. Runs on the backend named by the first argument or
//! `FDLAB_BACKEND`.
//!
//! `cargo run -p fdlab --example 03_gradient -- cpu`
use fdlab::{Backend, Boundary, Field, Grid, PlanOptions, Stencil};
use std::f64::consts::PI;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = match std::env::args().nth(1) {
        Some(name) => Backend::open(name.parse()?)?,
        None => Backend::from_env()?,
    };
    let n = 48;
    let grid = Grid::unit(&[n, n, n])?;
    let grad = Stencil::gradient(&grid, 6)?;
    let plan = backend.plan::<f64>(&grad, Boundary::Periodic, &grid, PlanOptions::default())?;
    let (s, c) = (|t: f64| (2.0 * PI * t).sin(), |t: f64| (2.0 * PI * t).cos());
    let u = backend.upload(&Field::from_fn(&grid, |x| s(x[0]) * c(x[1]) * s(x[2])))?;
    let (mut gx, mut gy, mut gz) = (
        backend.zeros(&grid)?,
        backend.zeros(&grid)?,
        backend.zeros(&grid)?,
    );
    plan.apply(&u, &mut [&mut gx, &mut gy, &mut gz])?;
    let g = [gx.to_host()?, gy.to_host()?, gz.to_host()?];

    let k = 2.0 * PI;
    let exact = |x: [f64; 3]| {
        [
            k * c(x[0]) * c(x[1]) * s(x[2]),
            -k * s(x[0]) * s(x[1]) * s(x[2]),
            k * s(x[0]) * c(x[1]) * c(x[2]),
        ]
    };
    let mut max_err = [0.0f64; 3];
    for kk in 0..n {
        for j in 0..n {
            for i in 0..n {
                let e = exact(grid.coords(i, j, kk));
                for a in 0..3 {
                    max_err[a] = max_err[a].max((g[a].at(i, j, kk) - e[a]).abs());
                }
            }
        }
    }
    println!("backend {} ({})", backend.name(), plan.label());
    let p = (n / 8, n / 8, n / 8);
    println!(
        "  grad u at {:?}: ({:+.6}, {:+.6}, {:+.6})",
        grid.coords(p.0, p.1, p.2),
        g[0].at(p.0, p.1, p.2),
        g[1].at(p.0, p.1, p.2),
        g[2].at(p.0, p.1, p.2)
    );
    println!(
        "max error per component: x {:.3e}, y {:.3e}, z {:.3e}",
        max_err[0], max_err[1], max_err[2]
    );
    // Sixth order at h = 1/48: about k⁷ h⁶ / 140 ≈ 3e-6.
    let worst = max_err.iter().cloned().fold(0.0, f64::max);
    if worst > 1e-4 {
        return Err(format!("error {worst:.3e} above the bound 1e-4").into());
    }
    Ok(())
}
