//! Prints the CUDA C fdlab generates for a stencil and strategy.
//!
//! `cargo run -p fdlab-cuda --example 01_show_kernel -- pencil-long y periodic f32`
use fdlab_core::{Axis, Boundary, Grid, Precision, Stencil};
use fdlab_cuda::codegen::{generate, KernelSpec};
use fdlab_cuda::{Coefficients, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let strategy: Strategy = arg(0, "pencil-long").parse()?;
    let which = arg(1, "x");
    let grid = if which == "lap2d" {
        Grid::unit(&[64, 64])?
    } else {
        Grid::unit(&[64, 64, 64])?
    };
    let stencils = match which.as_str() {
        "lap" | "lap2d" => vec![Stencil::laplacian(&grid, 2)?],
        "lap8" => vec![Stencil::laplacian(&grid, 8)?],
        "grad" => Stencil::gradient(&grid, 8)?,
        a => vec![Stencil::derivative(&grid, a.parse::<Axis>()?, 1, 8)?],
    };
    let boundary: Boundary = arg(2, "periodic").parse()?;
    let precision: Precision = arg(3, "f32").parse()?;
    let k = generate(&KernelSpec {
        stencils: &stencils,
        boundary,
        precision,
        strategy,
        coefficients: Coefficients::Immediate,
    })?;
    println!(
        "// block {:?}, shared {} B, grid map {:?}",
        k.block, k.shared_bytes, k.grid_map
    );
    println!("{k}");
    Ok(())
}
