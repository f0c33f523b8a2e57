//! A self-test of the device API on a real GPU: fields, plans, graphs, streams and every typed
//! error, with results compared with a CPU reference the caller supplies (this crate does not
//! depend on the CPU backend). `fdlab check` runs it; so do this crate's tests where a GPU is.

use crate::any::{AnyField, AnyPlan};
use crate::choose::Choice;
use crate::device::{CudaScalar, Device};
use crate::error::{Error, Result};
use crate::field::DeviceField;
use crate::plan::{Plan, PlanOptions, PlanSpec};
use crate::strategy::{Coefficients, Strategy};
use fdlab_core::{Axis, Boundary, Field, Grid, Precision, Region, Stencil};
use std::time::Instant;

/// The CPU reference: each stencil applied to the input, one output per stencil, in `f64`
/// (e.g. a wrapper over `fdlab_cpu::reference::apply`). Points a boundary does not compute
/// may hold anything; they are not compared.
///
/// ```
/// use fdlab_core::{Boundary, Field, Stencil};
/// let none: fdlab_cuda::Reference<'_> = &|_: &[Stencil], _: Boundary, _: &Field<f64>| {
///     Err("no CPU reference here".to_string())
/// };
/// # let _ = none;
/// ```
pub type Reference<'a> =
    &'a dyn Fn(&[Stencil], Boundary, &Field<f64>) -> std::result::Result<Vec<Field<f64>>, String>;

/// One named check and what it found.
///
/// ```
/// let c = fdlab_cuda::Check { name: "views".into(), passed: true, detail: String::new() };
/// assert!(c.passed);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// The error, the measurement, or what was found.
    pub detail: String,
}

/// Host time of one apply on a warm plan (64³ by default), and per apply inside a graph.
///
/// ```no_run
/// let dev = fdlab_cuda::Device::open(0)?;
/// let o: fdlab_cuda::Overhead = fdlab_cuda::overhead(&dev, 64)?;
/// println!("{:.2} us per apply, {:.2} us in a graph", o.apply_us, o.graph_us);
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    /// Grid points along each axis.
    pub n: usize,
    /// Microseconds of host time per [`Plan::apply`], median of batches.
    pub apply_us: f64,
    /// Microseconds of host time per apply replayed from a [`crate::plan::GraphPlan`].
    pub graph_us: f64,
    /// Microseconds of device time per apply (events around a batch of applies).
    pub device_us: f64,
}

/// Runs the self-test on `dev`: every check, passed or not, with what it found.
///
/// ```no_run
/// use fdlab_core::{Boundary, Field, Stencil};
/// use fdlab_cuda::{api_selftest, Device};
/// let dev = Device::open(0)?;
/// // A reference that computes nothing fails every comparison but still runs the test.
/// let reference = |_: &[Stencil], _: Boundary, _: &Field<f64>| Err("no reference".to_string());
/// for c in api_selftest(&dev, &reference)? {
///     println!("{} {}: {}", if c.passed { "ok  " } else { "FAIL" }, c.name, c.detail);
/// }
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
pub fn api_selftest(dev: &Device, reference: Reference<'_>) -> Result<Vec<Check>> {
    let mut out = vec![];
    let mut record = |name: &str, r: std::result::Result<String, String>| {
        out.push(match r {
            Ok(detail) => Check {
                name: name.into(),
                passed: true,
                detail,
            },
            Err(detail) => Check {
                name: name.into(),
                passed: false,
                detail,
            },
        })
    };
    record("upload/download round trip", round_trip(dev));
    record("sub-box views", views(dev));
    record("plans prepared ahead share a kernel", prepared(dev));
    for case in cases()? {
        let name = format!(
            "apply {} {} {:?} {} ({})",
            case.label(),
            case.boundary,
            case.grid.dims(),
            case.precision,
            case.opts
                .strategy
                .map_or("auto".to_string(), |s| s.to_string())
        );
        let r = match case.precision {
            Precision::F32 => run_case::<f32>(dev, &case, reference),
            Precision::F64 => run_case::<f64>(dev, &case, reference),
        };
        record(&name, r);
    }
    for (name, r) in typed_errors(dev) {
        record(&name, r);
    }
    record(
        "per-apply overhead at 64^3",
        overhead(dev, 64)
            .map(|o| {
                format!(
                    "apply {:.2} us host, graph {:.2} us host per apply, kernel {:.2} us",
                    o.apply_us, o.graph_us, o.device_us
                )
            })
            .map_err(|e| e.to_string()),
    );
    Ok(out)
}

/// One apply case of the self-test.
struct Case {
    stencils: Vec<Stencil>,
    boundary: Boundary,
    grid: Grid,
    precision: Precision,
    opts: PlanOptions,
    /// The choice the plan must report, where it is known in advance.
    choice: Option<Choice>,
}

impl Case {
    fn label(&self) -> String {
        self.stencils
            .iter()
            .map(|s| s.label())
            .collect::<Vec<_>>()
            .join("+")
    }
}

fn cases() -> Result<Vec<Case>> {
    let auto = PlanOptions::default();
    let named = |s: &str| -> Result<PlanOptions> {
        Ok(PlanOptions {
            strategy: Some(s.parse::<Strategy>()?),
            ..auto
        })
    };
    let odd = Grid::unit(&[67, 45, 33])?;
    let cube = Grid::unit(&[64, 64, 64])?;
    let flat = Grid::unit(&[200, 150])?;
    let large = Grid::unit(&[256, 256, 256])?;
    let box_ = Grid::new(&[64, 48, 40], &[0.1, 0.2, 0.3])?;
    // Wide enough in x to leave the latency class: the TMA-fed marches on sm_90.
    let slab = Grid::unit(&[256, 64, 48])?;
    let wide = Grid::new(&[160, 96, 64], &[0.5, 0.25, 0.125])?;
    let c = |stencils, boundary, grid: &Grid, precision, opts, choice| Case {
        stencils,
        boundary,
        grid: grid.clone(),
        precision,
        opts,
        choice,
    };
    use Precision::{F32, F64};
    Ok(vec![
        c(
            vec![Stencil::laplacian(&odd, 2)?],
            Boundary::Periodic,
            &odd,
            F64,
            auto,
            None,
        ),
        c(
            vec![Stencil::laplacian(&box_, 8)?],
            Boundary::Dirichlet,
            &box_,
            F32,
            auto,
            None,
        ),
        c(
            Stencil::gradient(&cube, 8)?,
            Boundary::Periodic,
            &cube,
            F32,
            auto,
            None,
        ),
        c(
            vec![Stencil::laplacian(&odd, 4)?],
            Boundary::Neumann,
            &odd,
            F64,
            auto,
            None,
        ),
        c(
            vec![Stencil::derivative(&cube, Axis::X, 1, 8)?],
            Boundary::Periodic,
            &cube,
            F32,
            PlanOptions {
                coefficients: Coefficients::Constant,
                ..named("naive-64x4x1")?
            },
            Some(Choice::Explicit),
        ),
        c(
            vec![Stencil::laplacian(&flat, 2)?],
            Boundary::Periodic,
            &flat,
            F64,
            named("texture-32x4x1")?,
            Some(Choice::Explicit),
        ),
        c(
            Stencil::gradient(&slab, 8)?,
            Boundary::Periodic,
            &slab,
            F32,
            auto,
            None,
        ),
        c(
            vec![Stencil::laplacian(&wide, 8)?],
            Boundary::Dirichlet,
            &wide,
            F64,
            auto,
            None,
        ),
        c(
            vec![Stencil::laplacian(&large, 2)?],
            Boundary::Dirichlet,
            &large,
            F32,
            auto,
            None,
        ),
        c(
            vec![Stencil::laplacian(&cube, 2)?],
            Boundary::Dirichlet,
            &cube,
            F64,
            PlanOptions {
                tuned: Some("zmarch-32x4-v2-c64-u4-r1".parse()?),
                ..auto
            },
            Some(Choice::Tuned),
        ),
    ])
}

/// Largest error inside the computed region, as a multiple of the tolerance, or the first
/// point where a value outside the region was written.
fn compare<T: CudaScalar>(
    stencil: &Stencil,
    region: Region,
    input_max: f64,
    got: &Field<T>,
    want: &Field<f64>,
) -> std::result::Result<f64, String> {
    let g = got.grid().clone();
    let [nx, ny, nz] = g.shape();
    let tol = T::TOLERANCE * stencil.abs_sum() * input_max.max(1e-300);
    let mut worst: f64 = 0.0;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let v = got.at(i, j, k).as_f64();
                if region.contains(i, j, k) {
                    let e = (v - want.at(i, j, k)).abs();
                    if e.is_nan() || e > tol {
                        return Err(format!(
                            "{}: point ({i}, {j}, {k}): got {v:e}, want {:e} (tolerance {tol:e})",
                            stencil.label(),
                            want.at(i, j, k)
                        ));
                    }
                    worst = worst.max(e / tol);
                } else if !v.is_nan() {
                    return Err(format!(
                        "{}: point ({i}, {j}, {k}) outside the computed region was written",
                        stencil.label()
                    ));
                }
            }
        }
    }
    Ok(worst)
}

/// Plan, apply on NaN-poisoned outputs, download, compare with the reference; then the same
/// through a graph, and on a second stream.
fn run_case<T: CudaScalar>(
    dev: &Device,
    case: &Case,
    reference: Reference<'_>,
) -> std::result::Result<String, String> {
    let e = |e: Error| e.to_string();
    let plan: Plan<T> = dev
        .plan(&case.stencils, case.boundary, &case.grid, case.opts)
        .map_err(e)?;
    if let Some(c) = case.choice
        && plan.choice() != c
    {
        return Err(format!("chose by {}, expected {c}", plan.choice()));
    }
    let region = case
        .boundary
        .check(&case.grid, &case.stencils)
        .map_err(|x| x.to_string())?;
    let host = Field::<T>::random(&case.grid, 11);
    let host64 = Field::from_vec(
        &case.grid,
        host.as_slice().iter().map(|v| v.as_f64()).collect(),
    )
    .map_err(|x| x.to_string())?;
    let input_max = host64.as_slice().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let want = reference(&case.stencils, case.boundary, &host64)?;
    let u = DeviceField::upload(dev, &host).map_err(e)?;
    // A second input, so that a plan bound to the first (texture, tensor maps) must rebind.
    let other = DeviceField::upload(dev, &Field::<T>::filled(&case.grid, T::one())).map_err(e)?;
    let poison = Field::<T>::nan(&case.grid);
    let mut outs = (0..plan.outputs())
        .map(|_| DeviceField::upload(dev, &poison))
        .collect::<Result<Vec<_>>>()
        .map_err(e)?;
    let check = |outs: &[DeviceField<T>], how: &str| -> std::result::Result<f64, String> {
        let mut worst: f64 = 0.0;
        for (n, (o, w)) in outs.iter().zip(&want).enumerate() {
            let got = o.download().map_err(|x| x.to_string())?;
            worst = worst.max(
                compare(&case.stencils[n], region, input_max, &got, w)
                    .map_err(|m| format!("{how}: {m}"))?,
            );
        }
        Ok(worst)
    };
    {
        let mut refs: Vec<&mut DeviceField<T>> = outs.iter_mut().collect();
        plan.apply(&other, &mut refs).map_err(e)?;
        plan.apply(&u, &mut refs).map_err(e)?;
    }
    let worst = check(&outs, "apply")?;
    // Graph: poison again, replay 3 applies.
    for o in outs.iter_mut() {
        o.copy_from(&poison).map_err(e)?;
    }
    {
        let mut refs: Vec<&mut DeviceField<T>> = outs.iter_mut().collect();
        let graph = plan.graph(&u, &mut refs, 3).map_err(e)?;
        graph.launch().map_err(e)?;
    }
    check(&outs, "graph")?;
    // A second stream, timed with events.
    let s = dev.new_stream().map_err(e)?;
    for o in outs.iter_mut() {
        o.copy_from(&poison).map_err(e)?;
    }
    dev.default_stream().synchronize().map_err(e)?;
    let start = s.record().map_err(e)?;
    {
        let mut refs: Vec<&mut DeviceField<T>> = outs.iter_mut().collect();
        plan.apply_on(&s, &u, &mut refs).map_err(e)?;
    }
    let stop = s.record().map_err(e)?;
    stop.synchronize().map_err(e)?;
    let ms = start.elapsed_ms(&stop).map_err(e)?;
    check(&outs, "apply_on")?;
    Ok(format!(
        "{} by {}; worst error {worst:.3} of the tolerance; {ms:.3} ms",
        plan.strategy(),
        plan.choice()
    ))
}

fn round_trip(dev: &Device) -> std::result::Result<String, String> {
    let e = |e: Error| e.to_string();
    let g = Grid::unit(&[33, 17, 9]).map_err(|x| x.to_string())?;
    let a = Field::<f32>::random(&g, 1);
    let b = Field::<f64>::random(&g, 2);
    let da = DeviceField::upload(dev, &a).map_err(e)?;
    let db = DeviceField::upload(dev, &b).map_err(e)?;
    let z = DeviceField::<f64>::zeros(dev, &g).map_err(e)?;
    if da.download().map_err(e)? != a || db.download().map_err(e)? != b {
        return Err("downloaded values differ from the uploaded ones".into());
    }
    if z.download()
        .map_err(e)?
        .as_slice()
        .iter()
        .any(|&v| v != 0.0)
    {
        return Err("zeros are not zero".into());
    }
    let mut into = Field::<f32>::nan(&g);
    da.download_into(&mut into).map_err(e)?;
    if into != a {
        return Err("download_into differs".into());
    }
    let mut copy = DeviceField::<f64>::zeros(dev, &g).map_err(e)?;
    copy.copy_from_device(&db).map_err(e)?;
    if copy.download().map_err(e)? != b {
        return Err("copy_from_device differs".into());
    }
    Ok(format!("{} points, f32 and f64", g.len()))
}

/// Three plans of one stencil on grids of three shapes need one kernel: `prepare_plans`
/// counts it once, and the plans built after it apply correctly (checked against a field
/// whose derivative is known: a linear ramp along x has a constant first derivative).
fn prepared(dev: &Device) -> std::result::Result<String, String> {
    let s = |e: fdlab_core::Error| e.to_string();
    let grids: Vec<Grid> = [20, 24, 28]
        .iter()
        .map(|&n| Grid::new(&[n, n / 2, 9], &[1.0, 1.0, 1.0]))
        .collect::<std::result::Result<_, _>>()
        .map_err(s)?;
    let d = Stencil::derivative(&grids[0], Axis::X, 1, 4).map_err(s)?;
    // A named strategy: a chosen one may differ between the shapes, and then so would the
    // kernels.
    let opts = PlanOptions {
        strategy: Some(
            "naive-64x4x1"
                .parse()
                .map_err(|e: crate::strategy::StrategyError| e.to_string())?,
        ),
        ..PlanOptions::default()
    };
    let specs: Vec<PlanSpec> = grids
        .iter()
        .map(|g| PlanSpec {
            stencils: std::slice::from_ref(&d),
            boundary: Boundary::Dirichlet,
            grid: g,
            precision: Precision::F64,
            opts,
        })
        .collect();
    let kernels = dev.prepare_plans(&specs);
    if kernels != 1 {
        return Err(format!("{kernels} kernels for one stencil on three shapes"));
    }
    for g in &grids {
        let plan = dev
            .plan::<f64>(std::slice::from_ref(&d), Boundary::Dirichlet, g, opts)
            .map_err(|e| e.to_string())?;
        let [nx, ny, nz] = g.shape();
        let mut ramp = Field::<f64>::zeros(g);
        for (i, v) in ramp.as_mut_slice().iter_mut().enumerate() {
            *v = (i % nx) as f64;
        }
        let input = DeviceField::upload(dev, &ramp).map_err(|e| e.to_string())?;
        let mut out =
            DeviceField::upload(dev, &Field::<f64>::zeros(g)).map_err(|e| e.to_string())?;
        plan.apply(&input, &mut [&mut out])
            .map_err(|e| e.to_string())?;
        let host = out.download().map_err(|e| e.to_string())?;
        // Interior points (two from each x end, the 4th-order reach) hold exactly 1.
        for z in 0..nz {
            for y in 0..ny {
                for x in 2..nx - 2 {
                    let v = host.as_slice()[(z * ny + y) * nx + x];
                    if (v - 1.0).abs() > 1e-12 {
                        return Err(format!(
                            "d/dx of a ramp is {v} at ({x}, {y}, {z}) on {nx}x{ny}x{nz}"
                        ));
                    }
                }
            }
        }
    }
    Ok(format!("1 kernel for {} plans", grids.len()))
}

fn views(dev: &Device) -> std::result::Result<String, String> {
    let e = |e: Error| e.to_string();
    let s = |e: fdlab_core::Error| e.to_string();
    let g = Grid::unit(&[19, 11, 7]).map_err(s)?;
    let host = Field::<f64>::random(&g, 3);
    let mut d = DeviceField::upload(dev, &host).map_err(e)?;
    let boxes = [
        Region {
            lo: [2, 3, 1],
            hi: [17, 9, 6],
        },
        Region {
            lo: [0, 0, 2],
            hi: [19, 11, 4],
        },
        Region {
            lo: [0, 4, 0],
            hi: [19, 5, 7],
        },
    ];
    for r in boxes {
        let sub = d.view(r).map_err(e)?.download().map_err(e)?;
        let [sx, sy, sz] = sub.grid().shape();
        for k in 0..sz {
            for j in 0..sy {
                for i in 0..sx {
                    if sub.at(i, j, k) != host.at(r.lo[0] + i, r.lo[1] + j, r.lo[2] + k) {
                        return Err(format!("view {r:?} differs at ({i}, {j}, {k})"));
                    }
                }
            }
        }
    }
    // Write a box, read the whole field: only the box changed.
    let r = boxes[0];
    let dims = [r.hi[0] - r.lo[0], r.hi[1] - r.lo[1], r.hi[2] - r.lo[2]];
    let patch = Field::<f64>::filled(&Grid::unit(&dims).map_err(s)?, 5.0);
    d.view_mut(r).map_err(e)?.upload(&patch).map_err(e)?;
    let after = d.download().map_err(e)?;
    let [nx, ny, nz] = g.shape();
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let want = if r.contains(i, j, k) {
                    5.0
                } else {
                    host.at(i, j, k)
                };
                if after.at(i, j, k) != want {
                    return Err(format!("after writing {r:?}: ({i}, {j}, {k}) is wrong"));
                }
            }
        }
    }
    Ok(format!("{} boxes read, one written", boxes.len()))
}

/// Each typed error the API promises, provoked on purpose.
fn typed_errors(dev: &Device) -> Vec<(String, std::result::Result<String, String>)> {
    let mut out = vec![];
    let g = match Grid::unit(&[32, 32, 32]) {
        Ok(g) => g,
        Err(e) => return vec![("typed errors".into(), Err(e.to_string()))],
    };
    let expect = |r: Result<()>, ok: fn(&Error) -> bool| match r {
        Err(e) if ok(&e) => Ok(e.to_string()),
        Err(e) => Err(format!("wrong error: {e}")),
        Ok(()) => Err("no error".into()),
    };
    let lap = match Stencil::laplacian(&g, 2) {
        Ok(s) => vec![s],
        Err(e) => return vec![("typed errors".into(), Err(e.to_string()))],
    };
    let setup = || -> Result<(Plan<f32>, DeviceField<f32>, DeviceField<f32>)> {
        let plan = dev.plan::<f32>(&lap, Boundary::Periodic, &g, PlanOptions::default())?;
        Ok((
            plan,
            DeviceField::zeros(dev, &g)?,
            DeviceField::zeros(dev, &g)?,
        ))
    };
    let (plan, u, mut o) = match setup() {
        Ok(x) => x,
        Err(e) => return vec![("typed errors: setup".into(), Err(e.to_string()))],
    };
    out.push((
        "mismatched shape is refused".into(),
        Grid::unit(&[32, 32, 31])
            .map_err(Error::from)
            .and_then(|g2| DeviceField::<f32>::zeros(dev, &g2))
            .map_err(|e| e.to_string())
            .and_then(|small| {
                expect(plan.apply(&small, &mut [&mut o]), |e| {
                    matches!(e, Error::ShapeMismatch { .. })
                })
            }),
    ));
    out.push((
        "wrong output count is refused".into(),
        expect(plan.apply(&u, &mut []), |e| {
            matches!(e, Error::OutputCount { .. })
        }),
    ));
    out.push((
        "wrong precision is refused".into(),
        wrong_precision(dev, &lap, &g),
    ));
    out.push((
        "a field of another device handle is refused".into(),
        Device::open(dev.info.ordinal)
            .and_then(|other| DeviceField::<f32>::zeros(&other, &g))
            .map_err(|e| e.to_string())
            .and_then(|foreign| {
                expect(plan.apply(&foreign, &mut [&mut o]), |e| {
                    matches!(e, Error::WrongDevice { .. })
                })
            }),
    ));
    out.push((
        "out of memory is refused before allocating".into(),
        oom(dev),
    ));
    out.push((
        "a plan outliving its device is refused".into(),
        device_gone(dev, &lap, &g),
    ));
    out
}

fn wrong_precision(dev: &Device, lap: &[Stencil], g: &Grid) -> std::result::Result<String, String> {
    let r = (|| -> Result<Result<()>> {
        let plan = AnyPlan::new(
            dev,
            lap,
            Boundary::Periodic,
            g,
            Precision::F64,
            PlanOptions::default(),
        )?;
        let u = AnyField::zeros(dev, g, Precision::F32)?;
        let mut o = AnyField::zeros(dev, g, Precision::F64)?;
        Ok(plan.apply(&u, &mut [&mut o]))
    })()
    .map_err(|e| e.to_string())?;
    match r {
        Err(e @ Error::Precision { .. }) => Ok(e.to_string()),
        Err(e) => Err(format!("wrong error: {e}")),
        Ok(()) => Err("no error".into()),
    }
}

fn oom(dev: &Device) -> std::result::Result<String, String> {
    let (free, _) = dev.memory().map_err(|e| e.to_string())?;
    // A cube of f64 twice the size of the free memory.
    let points = (free / 8) * 2 + 1;
    let n = (points as f64).cbrt().ceil() as usize;
    let g = Grid::unit(&[n, n, n]).map_err(|e| e.to_string())?;
    match DeviceField::<f64>::zeros(dev, &g) {
        Err(e @ Error::OutOfMemory { .. }) => Ok(e.to_string()),
        Err(e) => Err(format!("wrong error: {e}")),
        Ok(_) => Err(format!("allocated {n}^3 f64 with {free} bytes free")),
    }
}

fn device_gone(dev: &Device, lap: &[Stencil], g: &Grid) -> std::result::Result<String, String> {
    let e = |e: Error| e.to_string();
    let other = Device::open(dev.info.ordinal).map_err(e)?;
    let plan = other
        .plan::<f32>(lap, Boundary::Periodic, g, PlanOptions::default())
        .map_err(e)?;
    let u = DeviceField::<f32>::zeros(&other, g).map_err(e)?;
    let mut o = DeviceField::<f32>::zeros(&other, g).map_err(e)?;
    plan.apply(&u, &mut [&mut o]).map_err(e)?;
    drop(other);
    match plan.apply(&u, &mut [&mut o]) {
        Err(e @ Error::DeviceGone) => Ok(e.to_string()),
        Err(e) => Err(format!("wrong error: {e}")),
        Ok(()) => Err("applied after the device was dropped".into()),
    }
}

/// Host time of [`Plan::apply`] on a warm plan of the 7-point Laplacian on an `n`³ f32 grid,
/// and per apply replayed from a graph; medians of 20 batches of 100.
///
/// ```no_run
/// let dev = fdlab_cuda::Device::open(0)?;
/// let o = fdlab_cuda::overhead(&dev, 64)?;
/// println!("{:.2} us per apply", o.apply_us);
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
pub fn overhead(dev: &Device, n: usize) -> Result<Overhead> {
    const BATCH: usize = 100;
    let g = Grid::unit(&[n, n, n])?;
    let lap = [Stencil::laplacian(&g, 2)?];
    let plan = dev.plan::<f32>(&lap, Boundary::Periodic, &g, PlanOptions::default())?;
    let u = DeviceField::<f32>::zeros(dev, &g)?;
    let mut o = DeviceField::<f32>::zeros(dev, &g)?;
    let stream = dev.default_stream();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut host = vec![];
    let mut device = vec![];
    for _ in 0..21 {
        stream.synchronize()?;
        let start = stream.record()?;
        let t = Instant::now();
        for _ in 0..BATCH {
            plan.apply(&u, &mut [&mut o])?;
        }
        host.push(t.elapsed().as_secs_f64() * 1e6 / BATCH as f64);
        let stop = stream.record()?;
        stop.synchronize()?;
        device.push(start.elapsed_ms(&stop)? * 1e3 / BATCH as f64);
    }
    let mut outs = [&mut o];
    let graph = plan.graph(&u, &mut outs, BATCH)?;
    let mut replay = vec![];
    for _ in 0..21 {
        stream.synchronize()?;
        let t = Instant::now();
        graph.launch()?;
        replay.push(t.elapsed().as_secs_f64() * 1e6 / BATCH as f64);
    }
    stream.synchronize()?;
    Ok(Overhead {
        n,
        apply_us: median(host[1..].to_vec()),
        graph_us: median(replay[1..].to_vec()),
        device_us: median(device[1..].to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_core::FieldView;

    fn cpu_reference(
        stencils: &[Stencil],
        boundary: Boundary,
        input: &Field<f64>,
    ) -> std::result::Result<Vec<Field<f64>>, String> {
        let mut outs: Vec<Field<f64>> = stencils.iter().map(|_| Field::nan(input.grid())).collect();
        let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
        let view: FieldView<'_, f64> = input.view();
        fdlab_cpu::reference::apply(stencils, boundary, view, &mut views)
            .map_err(|e| e.to_string())?;
        Ok(outs)
    }

    #[test]
    fn the_api_selftest_passes_on_a_gpu() {
        if let Err(why) = crate::device::probe() {
            println!("skipped: {why}");
            return;
        }
        let dev = Device::open(0).expect("a probed device opens");
        let checks = api_selftest(&dev, &cpu_reference).expect("the self-test runs");
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed).collect();
        for c in &checks {
            println!(
                "{} {}: {}",
                if c.passed { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        assert!(failed.is_empty(), "{failed:#?}");
    }

    #[test]
    fn the_cases_are_valid_and_their_reference_is_checked() {
        // Without a GPU: every case builds, and the comparison catches what it must.
        let h100 = crate::plan::tests::h100();
        let mut h200 = h100.clone();
        h200.name = "NVIDIA H200".into();
        for case in cases().unwrap() {
            case.boundary.check(&case.grid, &case.stencils).unwrap();
            for info in [&h100, &h200] {
                let req = crate::choose::Request {
                    stencils: &case.stencils,
                    boundary: case.boundary,
                    grid: &case.grid,
                    precision: case.precision,
                    explicit: case.opts.strategy,
                    tuned: case.opts.tuned,
                    class: crate::choose::device_class(&info.name),
                    tma: true,
                    device: &info.name,
                    cache: None,
                };
                let (s, choice, _) = crate::plan::select(&req, case.opts.coefficients, info)
                    .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
                println!("{} {}: {s} ({choice})", info.name, case.label());
                if let Some(c) = case.choice {
                    assert_eq!(choice, c, "{} chose {s}", case.label());
                } else if case.grid.len() >= 1 << 24 {
                    // The large case exercises the measured defaults of both classes.
                    assert_eq!(
                        choice,
                        Choice::DeviceDefault,
                        "{} on {}",
                        case.label(),
                        info.name
                    );
                }
            }
        }
        let g = Grid::unit(&[6, 5, 4]).unwrap();
        let s = Stencil::laplacian(&g, 2).unwrap();
        let region = Boundary::Dirichlet
            .check(&g, std::slice::from_ref(&s))
            .unwrap();
        let u = Field::<f64>::random(&g, 5);
        let want = cpu_reference(std::slice::from_ref(&s), Boundary::Dirichlet, &u).unwrap();
        assert!(compare(&s, region, 1.0, &want[0], &want[0]).is_ok());
        let mut off = want[0].clone();
        off.as_mut_slice()[g.index(2, 2, 2)] += 1e-3;
        assert!(compare(&s, region, 1.0, &off, &want[0]).is_err());
        let mut written = want[0].clone();
        written.as_mut_slice()[0] = 0.0;
        assert!(compare(&s, region, 1.0, &written, &want[0]).is_err());
    }
}
