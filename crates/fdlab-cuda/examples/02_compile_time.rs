//! Times NVRTC on one generated kernel: `cargo run -p fdlab-cuda --example 02_compile_time --
//! zmarch-32x4-v2-c64-u4-r1 lap dirichlet f64` (needs libnvrtc on the library path;
//! `FDLAB_PTXAS_INFO=1` adds ptxas's register and spill report).
use fdlab_core::{Axis, Boundary, Grid, Precision, Stencil};
use fdlab_cuda::codegen::{generate, KernelSpec};
use fdlab_cuda::{nvrtc, Coefficients, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let strategy: Strategy = arg(0, "zmarch").parse()?;
    let grid = Grid::unit(&[64, 64, 64])?;
    let stencils = match arg(1, "lap").as_str() {
        "lap" => vec![Stencil::laplacian(&grid, 2)?],
        "lap8" => vec![Stencil::laplacian(&grid, 8)?],
        "grad" => Stencil::gradient(&grid, 8)?,
        a => vec![Stencil::derivative(&grid, a.parse::<Axis>()?, 1, 8)?],
    };
    let boundary: Boundary = arg(2, "dirichlet").parse()?;
    let precision: Precision = arg(3, "f64").parse()?;
    let k = generate(&KernelSpec {
        stencils: &stencils,
        boundary,
        precision,
        strategy,
        coefficients: Coefficients::Immediate,
    })?;
    let t = std::time::Instant::now();
    let ptx = nvrtc::compile(&k.name, &k.source(), "sm_90")?;
    println!(
        "{}: {} source lines, {} PTX lines, NVRTC {:.2} s",
        k.name,
        k.source().lines().count(),
        ptx.to_src().lines().count(),
        t.elapsed().as_secs_f64()
    );
    // Machine code too; with FDLAB_PTXAS_INFO=1 ptxas reports registers and spills.
    let cubin = nvrtc::compile_cubin(&k.name, &k.source(), "sm_90")?;
    println!("{}: {} bytes of sm_90 CUBIN", k.name, cubin.len());
    Ok(())
}
