//! A Laplacian on device-resident data: upload, build a plan once, apply it many times, download.
//!
//! `cargo run --release -p fdlab-cuda --example 01_plan` (needs a GPU; says why not otherwise).

use fdlab_core::{Boundary, Field, Grid, Stencil};
use fdlab_cuda::{Device, DeviceField, PlanOptions};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Err(why) = fdlab_cuda::probe() {
        println!("no GPU here: {why}");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let grid = Grid::unit(&[256, 256, 256])?;
    let lap = [Stencil::laplacian(&grid, 2)?];
    let t = Instant::now();
    let plan = dev.plan::<f32>(&lap, Boundary::Periodic, &grid, PlanOptions::default())?;
    println!(
        "{}: {} chosen by {} in {:.1} ms (compiled or taken from the kernel cache)",
        dev.info.name,
        plan.strategy(),
        plan.choice(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let u = DeviceField::upload(&dev, &Field::<f32>::random(&grid, 1))?;
    let mut lu = DeviceField::zeros(&dev, &grid)?;
    let stream = dev.default_stream();
    let start = stream.record()?;
    for _ in 0..100 {
        plan.apply(&u, &mut [&mut lu])?;
    }
    let stop = stream.record()?;
    stop.synchronize()?;
    let ms = start.elapsed_ms(&stop)? / 100.0;
    let bytes = 2.0 * grid.len() as f64 * 4.0;
    println!(
        "{ms:.3} ms per apply, {:.0} GB/s effective",
        bytes / ms / 1e6
    );
    let host = lu.download()?;
    println!("Lu at the centre: {:e}", host.at(128, 128, 128));
    Ok(())
}
