//! The benchmark suites: the published experiments, as lists of cases.

use crate::analytic::{cosine_along, ones, sine_gradient, sine_product, Separable};
use fdlab_core::{Axis, Boundary, Error, Grid, Precision, Stencil};
use fdlab_cuda::Strategy;
use std::f64::consts::PI;

/// Which backend the cases are for (sizes and strategies differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The CPU: one "strategy", the fast executor.
    Cpu,
    /// A CUDA GPU: several strategies per case.
    Cuda,
}

/// One benchmark case: a stencil on a grid with an analytic answer.
#[derive(Debug, Clone)]
pub struct Case {
    /// Suite name.
    pub suite: &'static str,
    /// Case name within the suite.
    pub name: String,
    /// The grid.
    pub grid: Grid,
    /// Stencils (several: a fused gradient).
    pub stencils: Vec<Stencil>,
    /// Boundary.
    pub boundary: Boundary,
    /// Element type.
    pub precision: Precision,
    /// The input function.
    pub input: Separable,
    /// The exact answer, one per stencil.
    pub exact: Vec<Separable>,
    /// Minimum bytes moved per application.
    pub bytes: u64,
    /// Small grid: a latency figure, not a bandwidth claim.
    pub latency_bound: bool,
    /// GPU strategies to run (ignored on the CPU).
    pub strategies: Vec<Strategy>,
    /// Anything worth saying in the result's note.
    pub note: String,
}

impl Case {
    /// Floating-point operations per application: 2 per tap per computed point.
    pub fn flops(&self) -> u64 {
        let region = self
            .boundary
            .check(&self.grid, &self.stencils)
            .map(|r| r.len())
            .unwrap_or(0) as u64;
        self.stencils
            .iter()
            .map(|s| 2 * s.taps().len() as u64 * region)
            .sum()
    }
}

/// The suites of stencil cases `fdlab bench --suite` accepts.
pub const SUITES: [&str; 5] = [
    "nvidia-derivative",
    "laplace-variants",
    "amd-laplacian",
    "roofline",
    "probes",
];

/// The suite of whole solver steps ([`crate::solvers`]), which runs on its own.
pub const SOLVER_SUITE: &str = "solvers";

/// The suite that times the FDTD step on all CPU cores and on the GPU, side by side.
pub const FDTD_SUITE: &str = "fdtd";

/// The suite that times the GPU heat and wave steps with k = 1 … 8 steps per pass (temporal blocking,
/// [`crate::temporal`]), which runs on its own.
pub const TEMPORAL_SUITE: &str = "temporal";

/// The suite that times the heat and wave steps split over the GPUs of one host (weak and
/// strong scaling), which runs on its own.
pub const SCALING_SUITE: &str = "scaling";

/// Options that shape the case lists.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// Replace every case's size with `n` points per axis: 1-D cases get n points, 2-D cases
    /// n × n, 3-D cases n × n × n (z: [`SuiteOptions::depth`] when given).
    pub size: Option<usize>,
    /// Only this precision.
    pub precision: Option<Precision>,
    /// Points along z of the 3-D cases of the amd-laplacian and roofline suites (default: as
    /// many as along x and y). A longer march with the same planes tells a kernel's cost per
    /// launch (start-up, the last wave) from its cost per plane.
    pub depth: Option<usize>,
}

impl SuiteOptions {
    /// The 3-D shape for `n` points along x and y.
    fn shape3(&self, n: usize) -> [usize; 3] {
        [n, n, self.depth.unwrap_or(n)]
    }
}

/// Spacing for `n` periodic points on which sin(2πx) is periodic: 1/256 (256 points per
/// wavelength, far from f32 rounding trouble) when `n` is a multiple of 256, else 1/n (one
/// wavelength over the grid).
pub fn periodic_spacing(n: usize) -> f64 {
    if n.is_multiple_of(256) {
        1.0 / 256.0
    } else {
        1.0 / n as f64
    }
}

/// Bytes of a periodic stencil: the input read once, each output written once.
pub fn periodic_bytes(grid: &Grid, outputs: usize, p: Precision) -> u64 {
    ((1 + outputs) * grid.len() * p.size()) as u64
}

/// AMD's byte count for an interior 7-point Laplacian: every point but the 8 corners and the
/// 12 edges is fetched, every interior point written.
pub fn amd_bytes(grid: &Grid, p: Precision) -> u64 {
    let [nx, ny, nz] = grid.shape();
    let s = p.size() as u64;
    let n = (nx * ny * nz) as u64;
    let fetch = n - 8 - 4 * (nx as u64 - 2) - 4 * (ny as u64 - 2) - 4 * (nz as u64 - 2);
    let write = ((nx - 2) * (ny - 2) * (nz - 2)) as u64;
    (fetch + write) * s
}

fn unknown_suite(name: &str) -> Error {
    Error::Unknown {
        kind: "suite",
        name: name.into(),
        valid: SUITES
            .iter()
            .chain(&[SOLVER_SUITE, FDTD_SUITE, TEMPORAL_SUITE, SCALING_SUITE])
            .map(|s| s.to_string())
            .collect(),
    }
}

/// Checks a suite name.
pub fn check_suite(name: &str) -> Result<(), Error> {
    if SUITES.contains(&name)
        || [SOLVER_SUITE, FDTD_SUITE, TEMPORAL_SUITE, SCALING_SUITE].contains(&name)
    {
        Ok(())
    } else {
        Err(unknown_suite(name))
    }
}

fn precisions(opts: &SuiteOptions, default: &[Precision]) -> Vec<Precision> {
    match opts.precision {
        Some(p) => vec![p],
        None => default.to_vec(),
    }
}

fn sizes(opts: &SuiteOptions, default: &[usize]) -> Vec<usize> {
    match opts.size {
        Some(n) => vec![n],
        None => default.to_vec(),
    }
}

/// The cases of `suite` for `target`.
pub fn cases(suite: &str, target: Target, opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    match suite {
        "nvidia-derivative" => nvidia_derivative(target, opts),
        "laplace-variants" => laplace_variants(target, opts),
        "amd-laplacian" => amd_laplacian(target, opts),
        "roofline" => roofline(target, opts),
        "probes" => probes(opts),
        SOLVER_SUITE | FDTD_SUITE | TEMPORAL_SUITE | SCALING_SUITE => Err(Error::Unknown {
            kind: "stencil suite",
            name: suite.into(),
            valid: SUITES.iter().map(|s| s.to_string()).collect(),
        }),
        _ => Err(unknown_suite(suite)),
    }
}

/// Keeps the cases named in `only` (all when it is empty); a name that matches none of
/// `all` is an error that lists the names there are.
pub fn select(all: &mut Vec<Case>, only: &[String]) -> Result<(), Error> {
    if let Some(name) = only.iter().find(|n| !all.iter().any(|c| &c.name == *n)) {
        let mut valid: Vec<String> = all.iter().map(|c| c.name.clone()).collect();
        valid.sort();
        valid.dedup();
        return Err(Error::Unknown {
            kind: "case",
            name: name.clone(),
            valid,
        });
    }
    if !only.is_empty() {
        all.retain(|c| only.contains(&c.name));
    }
    Ok(())
}

fn derivative_case(
    suite: &'static str,
    shape: [usize; 3],
    axis: Axis,
    p: Precision,
    published_grid: bool,
    strategies: Vec<Strategy>,
) -> Result<Case, Error> {
    // fdlab's periodic grid: n points, spacing 1/n, x_i = i/n. NVIDIA's: x_i = (i−1)/(n−1), and
    // the periodic images skip the last point, which repeats the first: the period is n−1
    // points. fdlab computes that case on the n−1 distinct points (the repeated point has the
    // same error as the first), with input and answer evaluated in f32 as the published code
    // does (`cos(twopi*(i-1.f)/(mx-1.f))`).
    let a = axis.index();
    let n = shape[0];
    let (grid, input, exact) = if published_grid {
        let h = 1.0 / (n as f64 - 1.0);
        let mut shape = [n, n, n];
        shape[a] = n - 1;
        let grid = Grid::new(&shape, &[h, h, h])?;
        let twopi = 8.0f32 * 1.0f32.atan();
        let arg = |i: usize| twopi * (i as f32 - 1.0) / (n as f32 - 1.0);
        let mut f = [ones(shape[0]), ones(shape[1]), ones(shape[2])];
        let mut d = f.clone();
        f[a] = (0..n - 1).map(|i| arg(i).cos() as f64).collect();
        d[a] = (0..n - 1).map(|i| (-twopi * arg(i).sin()) as f64).collect();
        (
            grid,
            Separable { f, scale: 1.0 },
            Separable { f: d, scale: 1.0 },
        )
    } else {
        let grid = Grid::unit(&shape)?;
        let (input, exact) = cosine_along(&grid, a, 0.0);
        (grid, input, exact)
    };
    let stencil = Stencil::derivative(&grid, axis, 1, 8)?;
    let name = format!(
        "d1{}-8th{}",
        axis.name(),
        if published_grid {
            "-published-grid"
        } else {
            ""
        }
    );
    Ok(Case {
        suite,
        name,
        bytes: periodic_bytes(&grid, 1, p),
        latency_bound: shape[0] <= 128,
        grid,
        stencils: vec![stencil],
        boundary: Boundary::Periodic,
        precision: p,
        input,
        exact: vec![exact],
        strategies,
        note: if published_grid {
            "NVIDIA's grid: x=(i-1)/(n-1), period n-1 (their last point repeats the first), f32 input and answer".into()
        } else {
            String::new()
        },
    })
}

/// The pencil kernels of NVIDIA's experiment for lines of `n` points: as published, a tile
/// spans the whole line (small: 4 lines, 64 threads along; long: 32 lines, block 32 × 8), while
/// it fits in 96 KiB of shared memory and `n` is a multiple of the threads along; then fdlab's
/// 64-point tiles that loop along any line, and `__ldg` for scale. Each long-pencil form is
/// followed by its sliding-window form (`-w`: the same tile and block, a run of consecutive
/// points per thread from a register window, affine tile loads; x rows padded to an odd
/// stride).
fn pencil_strategies(n: usize, p: Precision) -> Vec<Strategy> {
    let mut out = vec![];
    for (lines, along) in [(4usize, 64usize), (32, 8)] {
        let fits = (n + 8) * lines * p.size() <= 96 * 1024;
        if n.is_multiple_of(along) && fits && n != 64 {
            let published = Strategy::Pencil {
                length: n as u32,
                lines: lines as u32,
                threads_along: along as u32,
                threads_across: (256 / along) as u32,
                window: false,
            };
            out.push(published);
            // The window form pads x rows by at most one element.
            let window_fits = (n + 9) * lines * p.size() <= 96 * 1024;
            if lines == 32 && window_fits {
                out.push(Strategy::Pencil {
                    length: n as u32,
                    lines: lines as u32,
                    threads_along: along as u32,
                    threads_across: (256 / along) as u32,
                    window: true,
                });
            }
        }
    }
    out.extend([
        Strategy::PENCIL_SMALL,
        Strategy::PENCIL_LONG,
        Strategy::PENCIL_LONG_WINDOW,
        Strategy::READ_ONLY,
    ]);
    out
}

fn nvidia_derivative(target: Target, opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    let default_sizes: &[usize] = match target {
        Target::Cpu => &[64, 512],
        Target::Cuda => &[64, 256, 512],
    };
    let mut out = vec![];
    for p in precisions(opts, &[Precision::F32]) {
        for n in sizes(opts, default_sizes) {
            let strategies = pencil_strategies(n, p);
            for axis in Axis::ALL {
                out.push(derivative_case(
                    "nvidia-derivative",
                    [n; 3],
                    axis,
                    p,
                    false,
                    strategies.clone(),
                )?);
            }
            if n == 64 {
                out.push(derivative_case(
                    "nvidia-derivative",
                    [n; 3],
                    Axis::X,
                    p,
                    true,
                    strategies.clone(),
                )?);
            }
        }
    }
    Ok(out)
}

fn laplace_variants(target: Target, opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    let _ = target;
    let mut out = vec![];
    for p in precisions(opts, &[Precision::F32]) {
        // 1-D, 3 points.
        // Spacing 1/256 (256 points per wavelength of sin 2πx) keeps the f32 rounding of
        // (u[i−1] − 2u[i] + u[i+1])/h² far below the answer; the grid size only sets the domain,
        // which must hold whole wavelengths ([`periodic_spacing`]).
        let n1 = opts.size.unwrap_or(1 << 24);
        let g1 = Grid::new(&[n1], &[periodic_spacing(n1)])?;
        let (input, exact) = sine_product(&g1, 2.0 * PI);
        out.push(Case {
            suite: "laplace-variants",
            name: "lap1d-3pt".into(),
            bytes: periodic_bytes(&g1, 1, p),
            latency_bound: false,
            stencils: vec![Stencil::laplacian(&g1, 2)?],
            grid: g1,
            boundary: Boundary::Periodic,
            precision: p,
            input,
            exact: vec![exact],
            strategies: variants([256, 1, 1]),
            note: String::new(),
        });
        for n in sizes(opts, &[1024, 2048, 4096, 8192]) {
            let h = periodic_spacing(n);
            let g = Grid::new(&[n, n], &[h, h])?;
            let (input, exact) = sine_product(&g, 2.0 * PI);
            out.push(Case {
                suite: "laplace-variants",
                name: "lap2d-5pt".into(),
                bytes: periodic_bytes(&g, 1, p),
                latency_bound: n < 1024,
                stencils: vec![Stencil::laplacian(&g, 2)?],
                grid: g,
                boundary: Boundary::Periodic,
                precision: p,
                input,
                exact: vec![exact],
                strategies: variants([32, 8, 1]),
                note: String::new(),
            });
        }
    }
    Ok(out)
}

/// The tutorial's four variants with one block shape.
fn variants(block: [u32; 3]) -> Vec<Strategy> {
    vec![
        Strategy::Naive { block },
        Strategy::ReadOnly { block },
        Strategy::Texture { block },
        Strategy::SharedTile {
            bx: block[0].min(32),
            by: if block[1] > 1 { block[1] } else { 1 },
        },
    ]
}

/// The AMD lab notes' interior Laplacian on the unit cube (spacing 1/(n−1)), any order.
pub fn interior_laplacian_case(
    suite: &'static str,
    shape: [usize; 3],
    accuracy: usize,
    p: Precision,
    strategies: Vec<Strategy>,
) -> Result<Case, Error> {
    let h = shape.map(|n| 1.0 / (n as f64 - 1.0));
    let grid = Grid::new(&shape, &h)?;
    let (input, exact) = sine_product(&grid, PI);
    let stencil = Stencil::laplacian(&grid, accuracy)?;
    let bytes = if accuracy == 2 {
        amd_bytes(&grid, p)
    } else {
        // Wider stencils: every point read once, the interior written once.
        let r = stencil.radius()[0];
        let interior: usize = shape.iter().map(|&n| n - 2 * r).product();
        ((grid.len() + interior) * p.size()) as u64
    };
    Ok(Case {
        suite,
        name: format!("lap3d-{}pt", stencil.taps().len()),
        bytes,
        latency_bound: shape[0] <= 128,
        grid,
        stencils: vec![stencil],
        boundary: Boundary::Dirichlet,
        precision: p,
        input,
        exact: vec![exact],
        strategies,
        note: String::new(),
    })
}

/// A periodic roofline case: every point of each output written, the input read once
/// (`periodic_bytes`).
fn periodic_roofline_case(
    name: &str,
    grid: Grid,
    stencils: Vec<Stencil>,
    p: Precision,
    (input, exact): (Separable, Vec<Separable>),
    strategies: Vec<Strategy>,
    note: &str,
) -> Case {
    Case {
        suite: "roofline",
        name: name.into(),
        bytes: periodic_bytes(&grid, stencils.len(), p),
        latency_bound: false,
        stencils,
        grid,
        boundary: Boundary::Periodic,
        precision: p,
        input,
        exact,
        strategies,
        note: note.into(),
    }
}

/// The ceiling of a marching kernel: u(i + 1) − u(i) along the last axis of `grid` (z in 3-D,
/// y in 2-D), periodic. No neighbours across the march, so no tile halo: one read and one write
/// of every point, like a copy, through the same generated marches. How far this falls short of
/// the copy is what the marching structure itself costs; the other roofline rows cannot be
/// expected to beat it.
fn march_difference_case(name: &str, grid: Grid, p: Precision, note: &str) -> Result<Case, Error> {
    let axis = grid.dim() - 1;
    let mut offset = [0; 3];
    offset[axis] = 1;
    let stencil = Stencil::custom(&[([0, 0, 0], -1.0), (offset, 1.0)])?;
    let (input, mut exact) = sine_product(&grid, 2.0 * PI);
    let n = grid.shape()[axis];
    let g = &input.f[axis];
    exact.f = input.f.clone();
    exact.f[axis] = (0..n).map(|k| g[(k + 1) % n] - g[k]).collect();
    exact.scale = input.scale;
    Ok(periodic_roofline_case(
        name,
        grid,
        vec![stencil],
        p,
        (input, vec![exact]),
        vec![Strategy::READ_ONLY],
        note,
    ))
}

/// The interior 7-point Laplacian's probe: the same stencil, periodic, so every point is
/// written. An interior-only output leaves the caller's boundary points untouched (each
/// computed row's first and last sectors written in part); the gap between this row and the
/// interior one is what that costs (6 points in f32 on the H100; docs/performance.md, "Partly
/// written edge sectors").
fn periodic_laplacian_case(shape: [usize; 3], p: Precision) -> Result<Case, Error> {
    let grid = Grid::unit(&shape)?;
    let (input, exact) = sine_product(&grid, 2.0 * PI);
    let stencil = Stencil::laplacian(&grid, 2)?;
    Ok(periodic_roofline_case(
        "lap3d-7pt-periodic",
        grid,
        vec![stencil],
        p,
        (input, vec![exact]),
        vec![Strategy::AMD_BASELINE],
        "probe: every point written (full sectors)",
    ))
}

/// The 3-D march's ceiling: the z difference on `shape`.
fn z_difference_case(shape: [usize; 3], p: Precision) -> Result<Case, Error> {
    let note = "ceiling of the marching kernels: 1 read + 1 write, no tile halo";
    march_difference_case("zdiff-2pt", Grid::unit(&shape)?, p, note)
}

/// The ceiling of the 2-D Laplacian row: the y difference on n² through the same 2-D marches
/// (no x neighbours).
fn y_difference_case(n: usize, p: Precision) -> Result<Case, Error> {
    let grid = Grid::new(&[n, n], &[periodic_spacing(n); 2])?;
    let note = "ceiling of the 2-D marches: 1 read + 1 write, no x halo";
    march_difference_case("ydiff2d-2pt", grid, p, note)
}

/// The ceiling of the gradient row: three copies of the input in one kernel (1 read + 3
/// writes, the gradient's bytes, no halo, no arithmetic). How far the best kernel for it falls
/// short of the copy is what the 1 : 3 mix of reads and writes itself costs on the device.
fn fan_out_case(shape: [usize; 3], p: Precision) -> Result<Case, Error> {
    let grid = Grid::unit(&shape)?;
    let identity = Stencil::custom(&[([0, 0, 0], 1.0)])?;
    let (input, _) = sine_product(&grid, 2.0 * PI);
    let exact = vec![input.clone(); 3];
    Ok(periodic_roofline_case(
        "fanout-3",
        grid,
        vec![identity; 3],
        p,
        (input, exact),
        vec![Strategy::READ_ONLY],
        "ceiling of the gradient: 1 read + 3 writes, no halo",
    ))
}

/// Diagnostic cases for profiling, not targets: interior-only stencils that leave different
/// parts of the output to the caller, beside the 7-point Laplacian (whose interior row loses 6
/// points to its periodic twin on the H100; docs/performance.md, "Partly written edge
/// sectors"). `lap3d-yz-5pt` has no x reach, so it writes whole rows and leaves rows and planes
/// (y and z edges) untouched; `d2x-3pt` leaves only each row's two edge points. Sine input,
/// analytic answers.
fn probes(opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    let mut out = vec![];
    let n = opts.size.unwrap_or(512);
    let shape = opts.shape3(n);
    for p in precisions(opts, &[Precision::F32, Precision::F64]) {
        let h = shape.map(|n| 1.0 / (n as f64 - 1.0));
        let grid = Grid::new(&shape, &h)?;
        let (input, mut exact) = sine_product(&grid, PI);
        let written = |lo: [usize; 3]| -> usize { (0..3).map(|a| shape[a] - 2 * lo[a]).product() };
        let (hy, hz) = (h[1] * h[1], h[2] * h[2]);
        let yz = Stencil::custom(&[
            ([0, 0, 0], -2.0 / hy - 2.0 / hz),
            ([0, -1, 0], 1.0 / hy),
            ([0, 1, 0], 1.0 / hy),
            ([0, 0, -1], 1.0 / hz),
            ([0, 0, 1], 1.0 / hz),
        ])?;
        exact.scale = -2.0 * PI * PI;
        let s = p.size();
        out.push(Case {
            suite: "probes",
            name: "lap3d-yz-5pt".into(),
            bytes: ((grid.len() + written([0, 1, 1])) * s) as u64,
            latency_bound: false,
            stencils: vec![yz],
            grid: grid.clone(),
            boundary: Boundary::Dirichlet,
            precision: p,
            input: input.clone(),
            exact: vec![exact.clone()],
            strategies: vec![Strategy::AMD_BASELINE],
            note: "probe: y and z edges untouched, whole rows written".into(),
        });
        exact.scale = -PI * PI;
        out.push(Case {
            suite: "probes",
            name: "d2x-3pt".into(),
            bytes: ((grid.len() + written([1, 0, 0])) * s) as u64,
            latency_bound: false,
            stencils: vec![Stencil::derivative(&grid, Axis::X, 2, 2)?],
            grid,
            boundary: Boundary::Dirichlet,
            precision: p,
            input,
            exact: vec![exact],
            strategies: vec![Strategy::AMD_BASELINE],
            note: "probe: only each row's two edge points untouched".into(),
        });
    }
    Ok(out)
}

fn amd_laplacian(target: Target, opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    let strategies = vec![
        Strategy::AMD_BASELINE,
        Strategy::AMD_PPT,
        Strategy::READ_ONLY,
    ];
    let (default_sizes, default_p): (&[usize], &[Precision]) = match target {
        Target::Cpu => (&[512], &[Precision::F64]),
        Target::Cuda => (&[512, 1024], &[Precision::F64, Precision::F32]),
    };
    let mut out = vec![];
    for p in precisions(opts, default_p) {
        for n in sizes(opts, default_sizes) {
            out.push(interior_laplacian_case(
                "amd-laplacian",
                opts.shape3(n),
                2,
                p,
                strategies.clone(),
            )?);
        }
    }
    Ok(out)
}

fn roofline(target: Target, opts: &SuiteOptions) -> Result<Vec<Case>, Error> {
    let mut out = vec![];
    let fast3d = vec![Strategy::AMD_BASELINE, Strategy::AMD_PPT];
    let n3 = opts.size.unwrap_or(512);
    for p in precisions(opts, &[Precision::F64, Precision::F32]) {
        let sizes3: Vec<usize> = match (target, opts.size) {
            (_, Some(n)) => vec![n],
            (Target::Cpu, None) => vec![512],
            (Target::Cuda, None) => vec![512, 1024],
        };
        for n in sizes3 {
            out.push(interior_laplacian_case(
                "roofline",
                opts.shape3(n),
                2,
                p,
                fast3d.clone(),
            )?);
        }
        out.push(interior_laplacian_case(
            "roofline",
            opts.shape3(n3),
            8,
            p,
            fast3d.clone(),
        )?);
        out.push(z_difference_case(opts.shape3(n3), p)?);
        out.push(periodic_laplacian_case(opts.shape3(n3), p)?);
    }
    for p in precisions(opts, &[Precision::F32]) {
        for axis in Axis::ALL {
            out.push(derivative_case(
                "roofline",
                opts.shape3(n3),
                axis,
                p,
                false,
                vec![Strategy::PENCIL_LONG, Strategy::READ_ONLY],
            )?);
        }
        let grid = Grid::unit(&opts.shape3(n3))?;
        let stencils = Stencil::gradient(&grid, 8)?;
        out.push(periodic_roofline_case(
            "gradient-8th",
            grid.clone(),
            stencils,
            p,
            sine_gradient(&grid),
            vec![Strategy::READ_ONLY, Strategy::SHARED],
            "bytes: 1 read + 3 writes",
        ));
        out.push(fan_out_case(opts.shape3(n3), p)?);
        let n2 = opts.size.unwrap_or(8192);
        let g2 = Grid::new(&[n2, n2], &[periodic_spacing(n2); 2])?;
        let (input, exact) = sine_product(&g2, 2.0 * PI);
        let stencil = Stencil::laplacian(&g2, 2)?;
        out.push(periodic_roofline_case(
            "lap2d-5pt",
            g2,
            vec![stencil],
            p,
            (input, vec![exact]),
            vec![Strategy::ReadOnly { block: [128, 2, 1] }],
            "",
        ));
        out.push(y_difference_case(n2, p)?);
        // The 64³ latency row; with --size the d1x row above is the same case, run once.
        if opts.size.is_none() {
            out.push(derivative_case(
                "roofline",
                [64; 3],
                Axis::X,
                p,
                false,
                vec![Strategy::PENCIL_SMALL, Strategy::READ_ONLY],
            )?);
        }
    }
    Ok(out)
}
