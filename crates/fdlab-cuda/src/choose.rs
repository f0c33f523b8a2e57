//! Which strategy a plan runs: the user's, the tuner's (given, or the tune cache's entry for
//! this device and case), the device class's measured default, or a heuristic from the
//! stencils' shape, in that order. [`candidates`] is the one place that decides; plans, the
//! benchmark and the front all go through it.

use crate::strategy::{SmCopy, Strategy};
use crate::tune_cache::{CaseKey, TuneCache};
use fdlab_core::{Boundary, Grid, Precision, Stencil, StencilKind};
use std::str::FromStr;

/// Who chose a plan's strategy.
///
/// ```
/// use fdlab_cuda::Choice;
/// assert_eq!(Choice::DeviceDefault.to_string(), "device default");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Choice {
    /// The user named it ([`crate::plan::PlanOptions::strategy`]).
    Explicit,
    /// The tuner measured it on this device ([`crate::plan::PlanOptions::tuned`], or the
    /// tune cache's entry for the case).
    Tuned,
    /// The built-in winner measured on this class of device.
    DeviceDefault,
    /// A rule from the stencils' reach, the grid and the precision.
    Heuristic,
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Choice::Explicit => "explicit",
            Choice::Tuned => "tuned",
            Choice::DeviceDefault => "device default",
            Choice::Heuristic => "heuristic",
        })
    }
}

/// The class of a device, by its name: `"h100"` or `"h200"` (same SMs, the H200 with 40% more
/// bandwidth, so different winners), else `None`.
///
/// ```
/// use fdlab_cuda::choose::device_class;
/// assert_eq!(device_class("NVIDIA H100 80GB HBM3"), Some("h100"));
/// assert_eq!(device_class("NVIDIA H200"), Some("h200"));
/// assert_eq!(device_class("NVIDIA A100-SXM4-80GB"), None);
/// ```
pub fn device_class(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    if n.contains("h200") {
        Some("h200")
    } else if n.contains("h100") {
        Some("h100")
    } else {
        None
    }
}

/// The stencils as the defaults table names them: labels joined by `+`, custom stencils by
/// their offsets (`c(0,0,0|0,0,1)`), since a custom label only counts taps.
///
/// ```
/// use fdlab_core::{Axis, Grid, Stencil};
/// use fdlab_cuda::choose::signature;
/// let g = Grid::unit(&[16, 16, 16])?;
/// let d = Stencil::derivative(&g, Axis::Z, 1, 8)?;
/// let c = Stencil::custom(&[([0, 0, 0], -1.0), ([0, 0, 1], 1.0)])?;
/// assert_eq!(signature(&[d, c]), "d1z/8+c(0,0,0|0,0,1)");
/// # Ok::<(), fdlab_core::Error>(())
/// ```
pub fn signature(stencils: &[Stencil]) -> String {
    let one = |s: &Stencil| match s.kind() {
        StencilKind::Custom => {
            let mut offs: Vec<[i32; 3]> = s.taps().iter().map(|t| t.offset).collect();
            offs.sort();
            let o: Vec<String> = offs
                .iter()
                .map(|o| format!("{},{},{}", o[0], o[1], o[2]))
                .collect();
            format!("c({})", o.join("|"))
        }
        _ => s.label(),
    };
    stencils.iter().map(one).collect::<Vec<_>>().join("+")
}

/// A coarse size class: defaults measured at one size serve the sizes of the same class
/// (`"3d-large"`: ≥ 256³ points, `"3d-small"`: ≤ 128³, `"2d-large"`: ≥ 4096², ...).
///
/// ```
/// use fdlab_cuda::choose::size_class;
/// assert_eq!(size_class([768, 768, 768]), size_class([512, 512, 512]));
/// assert_ne!(size_class([64, 64, 64]), size_class([512, 512, 512]));
/// ```
pub fn size_class(shape: [usize; 3]) -> &'static str {
    let n: usize = shape.iter().product();
    if shape[2] > 1 {
        if n >= 256 * 256 * 256 {
            "3d-large"
        } else if n <= 128 * 128 * 128 {
            "3d-small"
        } else {
            "3d-mid"
        }
    } else if shape[1] > 1 {
        if n >= 4096 * 4096 {
            "2d-large"
        } else {
            "2d-small"
        }
    } else {
        "1d"
    }
}

/// One row of the built-in table.
///
/// ```
/// use fdlab_cuda::choose::{parse_defaults, DEFAULTS};
/// let rows = parse_defaults(DEFAULTS).unwrap();
/// assert!(rows.iter().any(|r| r.class == "h200"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultEntry {
    /// Device class ([`device_class`]).
    pub class: String,
    /// Stencil signature ([`signature`]).
    pub signature: String,
    /// Boundary.
    pub boundary: Boundary,
    /// The shape it was measured at.
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
    /// The winner.
    pub strategy: Strategy,
}

/// The built-in table, as text (see `defaults.txt` for its provenance).
///
/// ```
/// assert!(fdlab_cuda::choose::DEFAULTS.contains("h100"));
/// ```
pub const DEFAULTS: &str = include_str!("defaults.txt");

/// Parses a defaults table; `Err` names the first bad line.
///
/// ```
/// use fdlab_cuda::choose::{parse_defaults, DEFAULTS};
/// assert!(parse_defaults(DEFAULTS).unwrap().len() > 10);
/// assert!(parse_defaults("h100 lap/2 periodic 8x8x8 f32 no-such-kernel").is_err());
/// ```
pub fn parse_defaults(text: &str) -> Result<Vec<DefaultEntry>, String> {
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("defaults line {}: {why}: {line}", n + 1);
        let cols: Vec<&str> = line.split_whitespace().collect();
        let [class, sig, boundary, shape, precision, strategy] = cols[..] else {
            return Err(bad("expected 6 columns"));
        };
        let dims: Vec<usize> = shape
            .split('x')
            .map(|d| d.parse().map_err(|_| bad("bad shape")))
            .collect::<Result<_, _>>()?;
        let [nx, ny, nz] = dims[..] else {
            return Err(bad("shape needs three sizes"));
        };
        out.push(DefaultEntry {
            class: class.into(),
            signature: sig.into(),
            boundary: boundary.parse().map_err(|_| bad("bad boundary"))?,
            shape: [nx, ny, nz],
            precision: match precision {
                "f32" => Precision::F32,
                "f64" => Precision::F64,
                _ => return Err(bad("bad precision")),
            },
            strategy: Strategy::from_str(strategy).map_err(|e| bad(&e.to_string()))?,
        });
    }
    Ok(out)
}

/// The built-in winner for a case on a device of `class`: the entry for exactly this shape,
/// else the one of the same size class nearest in points.
///
/// ```
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::choose::device_default;
/// let g = Grid::unit(&[768, 768, 768])?;
/// let lap = Stencil::laplacian(&g, 2)?;
/// let s = device_default("h100", &[lap], Boundary::Dirichlet, &g, Precision::F64);
/// assert!(s.is_some());
/// # Ok::<(), fdlab_core::Error>(())
/// ```
pub fn device_default(
    class: &str,
    stencils: &[Stencil],
    boundary: Boundary,
    grid: &Grid,
    precision: Precision,
) -> Option<Strategy> {
    let table = parse_defaults(DEFAULTS).ok()?;
    lookup(&table, class, stencils, boundary, grid.shape(), precision)
}

/// [`device_default`] over a given table.
///
/// ```
/// use fdlab_core::{Boundary, Precision, Stencil};
/// use fdlab_cuda::choose::{lookup, parse_defaults};
/// let table = parse_defaults("h100 c(0,0,0) periodic 64x64x64 f32 naive-32x4x1").unwrap();
/// let id = [Stencil::custom(&[([0, 0, 0], 1.0)]).unwrap()];
/// let s = lookup(&table, "h100", &id, Boundary::Periodic, [64, 64, 64], Precision::F32);
/// assert_eq!(s.unwrap().to_string(), "naive-32x4x1");
/// ```
pub fn lookup(
    table: &[DefaultEntry],
    class: &str,
    stencils: &[Stencil],
    boundary: Boundary,
    shape: [usize; 3],
    precision: Precision,
) -> Option<Strategy> {
    let sig = signature(stencils);
    let same_case = |e: &&DefaultEntry| {
        e.class == class && e.signature == sig && e.boundary == boundary && e.precision == precision
    };
    let rows: Vec<&DefaultEntry> = table.iter().filter(same_case).collect();
    if let Some(e) = rows.iter().find(|e| e.shape == shape) {
        return Some(e.strategy);
    }
    let points = |s: [usize; 3]| (s.iter().product::<usize>() as f64).ln();
    rows.iter()
        .filter(|e| size_class(e.shape) == size_class(shape))
        .min_by(|a, b| {
            let da = (points(a.shape) - points(shape)).abs();
            let db = (points(b.shape) - points(shape)).abs();
            da.total_cmp(&db)
        })
        .map(|e| e.strategy)
}

/// A good strategy when nothing was tuned: 2.5-D marching with 16-byte vectors (through a
/// shared-memory ring, or a register queue for wide stencils across the plane) in 3-D where
/// the boundary allows, a register march along z otherwise. `tma`: the device has the tensor
/// memory accelerator (compute capability 9.0 or later). Each branch names the measurement that
/// chose it.
///
/// ```
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::choose::heuristic;
/// let g = Grid::unit(&[67, 45, 33])?;
/// let lap = Stencil::laplacian(&g, 2)?;
/// let s = heuristic(&[lap.clone()], Boundary::Periodic, &g, Precision::F64, true);
/// assert!(s.supports_spec(&[lap], Boundary::Periodic, Precision::F64).is_ok());
/// # Ok::<(), fdlab_core::Error>(())
/// ```
pub fn heuristic(
    stencils: &[Stencil],
    boundary: Boundary,
    grid: &Grid,
    precision: Precision,
    tma: bool,
) -> Strategy {
    let shape = grid.shape();
    let nx = shape[0];
    let copy = 16 / precision.size();
    let three_d = grid.dim() == 3;
    // Small 3-D grids are latency figures: the register march launches least.
    let latency_bound = three_d && nx <= 128;
    let march = marching(stencils, precision, tma, copy);
    if three_d
        && !latency_bound
        && nx.is_multiple_of(copy)
        && march.supports_spec(stencils, boundary, precision).is_ok()
    {
        return march;
    }
    let vec = match precision {
        Precision::F32 => 4,
        Precision::F64 => 2,
    };
    let vec = if nx.is_multiple_of(vec as usize) {
        vec
    } else {
        1
    };
    // 2-D: 256-thread rows, 32-row chunks: 85.9-86.1% of the copy for the 8192² 5-point
    // Laplacian on the H200 against 84.9% for 64-row chunks and 82.2% for 128-thread rows.
    let (bx, by, chunk, unroll) = if three_d {
        (32, 4, 64, 4)
    } else {
        (256, 1, 32, 2)
    };
    Strategy::ZMarch {
        bx,
        by,
        vec,
        chunk,
        streaming: false,
        unroll,
        rows: 1,
    }
}

/// The 3-D marching kernel for the stencils' shape (see [`heuristic`]).
fn marching(stencils: &[Stencil], precision: Precision, tma: bool, copy: usize) -> Strategy {
    // Radius-1 stencils (the 7-point Laplacian): the register-staged march of a 128×8 tile; in
    // H200 tuner data, 89.8% / 87.1% of the copy (f64, 512³ / 1024³) and 78.1% / 79.8% (f32)
    // against 73.1% / 75.2% and 69.6% / 71.7% for the cp.async march; on radius-4 stencils
    // staging loses (37% against 48%).
    let radius_one = stencils.iter().all(|s| s.radius().iter().all(|&r| r <= 1));
    // One wide stencil across the plane (the 25-point Laplacian): the register queue march of
    // a 64 × 16 tile, four rows per thread; on the H200 65.1% (f64) and 67.6% (f32) against
    // 56-57% and 53-54% for the cp.async march. Gradients keep the cp.async march (81% / 77%).
    let wide_plane = stencils.len() == 1
        && !radius_one
        && stencils[0].radius().iter().filter(|&&r| r > 0).count() >= 2;
    let gradient_f32 = stencils.len() > 1 && precision == Precision::F32;
    if radius_one {
        Strategy::SMarch {
            bx: 64,
            by: 4,
            rows: 2,
            chunk: 64,
            depth: 1,
            vec: 2,
            copy: SmCopy::Registers(1),
            edge_reads: false,
        }
    } else if tma && gradient_f32 {
        // Split slots with streaming stores for the f32 gradient: 91.2-91.5% of the copy on
        // the H100 against 89.9% with plain stores and 86.9% for the shared-memory march.
        Strategy::QMarch {
            bx: 32,
            by: 16,
            rows: 1,
            chunk: 128,
            vec: 4,
            tma: 2,
            accumulate: true,
            split: true,
            unroll: 1,
            streaming: true,
        }
    } else if tma && wide_plane {
        // The queue march fed by tensor copies into split slots (interior rows as 128-byte
        // pieces, the x halo apart) with partial sums: on the H100 94.4% (f64) and 89.5% (f32)
        // against 92.6% and 81.6% for one tensor copy per plane (docs/performance.md, "TMA:
        // requests and alignment").
        Strategy::QMarch {
            bx: 32,
            by: 16,
            rows: 2,
            chunk: 256,
            vec: copy as u32,
            tma: 2,
            accumulate: true,
            split: true,
            unroll: 1,
            streaming: false,
        }
    } else if wide_plane {
        Strategy::QMarch {
            bx: 64 / copy as u32,
            by: 4,
            rows: 4,
            chunk: 64,
            vec: copy as u32,
            tma: 0,
            accumulate: false,
            split: false,
            unroll: 1,
            streaming: false,
        }
    } else {
        // The shared-memory march, one row and 16-byte vectors per thread: within 0-10 points
        // of the best kernel on every 3-D case in H200 tuner data.
        Strategy::SMarch {
            bx: 64,
            by: 8,
            rows: 1,
            chunk: 64,
            depth: 2,
            vec: copy as u32,
            copy: SmCopy::Async,
            edge_reads: false,
        }
    }
}

/// What [`candidates`] takes: the plan's case and what the caller knows.
///
/// ```
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::choose::{candidates, Request};
/// let g = Grid::unit(&[32, 32, 32]).unwrap();
/// let st = [Stencil::laplacian(&g, 2).unwrap()];
/// let req = Request { stencils: &st, boundary: Boundary::Periodic, grid: &g,
///     precision: Precision::F64, explicit: None, tuned: None, class: Some("h200"), tma: true,
///     device: "NVIDIA H200", cache: None };
/// assert!(!candidates(&req).is_empty());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The stencils.
    pub stencils: &'a [Stencil],
    /// The boundary.
    pub boundary: Boundary,
    /// The grid.
    pub grid: &'a Grid,
    /// Element type.
    pub precision: Precision,
    /// The strategy the user named.
    pub explicit: Option<Strategy>,
    /// The tuner's winner for this case on this device, given by the caller; when `None`,
    /// `cache`'s entry for the case on `device` (if any) takes its place.
    pub tuned: Option<Strategy>,
    /// The device's class ([`device_class`]).
    pub class: Option<&'a str>,
    /// Whether the device has TMA.
    pub tma: bool,
    /// The device's name as the driver gives it (the tune cache's key).
    pub device: &'a str,
    /// The tune cache to consult (`None`: none).
    pub cache: Option<&'a TuneCache>,
}

impl Request<'_> {
    /// The tuned strategy: the one given, else the tune cache's entry for this device and
    /// case.
    fn tuned(&self) -> Option<Strategy> {
        self.tuned.or_else(|| {
            let case = CaseKey {
                stencils: self.stencils,
                boundary: self.boundary,
                shape: self.grid.shape(),
                precision: self.precision,
            };
            self.cache?.winner(self.device, case)
        })
    }
}

/// The strategies to try, in order, each with who chose it. An explicit strategy is the only
/// candidate (it fails rather than being replaced); otherwise the tuned one (given, or the
/// tune cache's entry for this device and case), the device class's default and the heuristic
/// follow each other, so that one that cannot run this exact case (e.g. a vector width that
/// does not divide nx) gives way to the next.
///
/// ```
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::choose::{candidates, Request};
/// use fdlab_cuda::Choice;
/// let g = Grid::unit(&[64, 64, 64])?;
/// let st = [Stencil::laplacian(&g, 2)?];
/// let req = Request { stencils: &st, boundary: Boundary::Periodic, grid: &g,
///     precision: Precision::F32, explicit: None, tuned: None, class: None, tma: false,
///     device: "", cache: None };
/// assert_eq!(candidates(&req).last().unwrap().1, Choice::Heuristic);
/// # Ok::<(), fdlab_core::Error>(())
/// ```
pub fn candidates(req: &Request<'_>) -> Vec<(Strategy, Choice)> {
    if let Some(s) = req.explicit {
        return vec![(s, Choice::Explicit)];
    }
    let mut out = vec![];
    if let Some(s) = req.tuned() {
        out.push((s, Choice::Tuned));
    }
    if let Some(class) = req.class
        && let Some(s) = device_default(class, req.stencils, req.boundary, req.grid, req.precision)
    {
        out.push((s, Choice::DeviceDefault));
    }
    out.push((
        heuristic(req.stencils, req.boundary, req.grid, req.precision, req.tma),
        Choice::Heuristic,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_core::Axis;

    /// The case a table row was measured on, rebuilt from its signature.
    fn case_of(e: &DefaultEntry) -> (Vec<Stencil>, Grid) {
        let dims: Vec<usize> = if e.shape[2] == 1 {
            e.shape[..2].to_vec()
        } else {
            e.shape.to_vec()
        };
        let g = Grid::unit(&dims).unwrap();
        let stencils = e
            .signature
            .split('+')
            .map(|s| match s {
                "lap/2" => Stencil::laplacian(&g, 2).unwrap(),
                "lap/8" => Stencil::laplacian(&g, 8).unwrap(),
                "d1x/8" => Stencil::derivative(&g, Axis::X, 1, 8).unwrap(),
                "d1y/8" => Stencil::derivative(&g, Axis::Y, 1, 8).unwrap(),
                "d1z/8" => Stencil::derivative(&g, Axis::Z, 1, 8).unwrap(),
                "c(0,0,0)" => Stencil::custom(&[([0, 0, 0], 1.0)]).unwrap(),
                "c(0,0,0|0,0,1)" => {
                    Stencil::custom(&[([0, 0, 0], -1.0), ([0, 0, 1], 1.0)]).unwrap()
                }
                "c(0,0,0|0,1,0)" => {
                    Stencil::custom(&[([0, 0, 0], -1.0), ([0, 1, 0], 1.0)]).unwrap()
                }
                other => panic!("no stencil for {other}"),
            })
            .collect();
        (stencils, g)
    }

    #[test]
    fn every_default_parses_matches_its_case_and_can_run_it() {
        let table = parse_defaults(DEFAULTS).unwrap();
        assert!(table.len() >= 30, "{} rows", table.len());
        for e in &table {
            let (stencils, g) = case_of(e);
            assert_eq!(g.shape(), e.shape);
            assert_eq!(signature(&stencils), e.signature);
            assert_eq!(
                e.strategy.to_string().parse::<Strategy>().unwrap(),
                e.strategy
            );
            let found = lookup(
                &table,
                &e.class,
                &stencils,
                e.boundary,
                e.shape,
                e.precision,
            );
            assert_eq!(found, Some(e.strategy), "{e:?}");
            e.strategy
                .supports_spec(&stencils, e.boundary, e.precision)
                .unwrap_or_else(|r| panic!("{e:?}: {r}"));
            let src = crate::codegen::generate(&crate::codegen::KernelSpec {
                stencils: &stencils,
                boundary: e.boundary,
                precision: e.precision,
                strategy: e.strategy,
                coefficients: Default::default(),
            })
            .unwrap_or_else(|r| panic!("{e:?}: {r}"));
            assert!(e.shape[0].is_multiple_of(src.x_multiple as usize), "{e:?}");
        }
        for class in ["h100", "h200"] {
            assert!(table.iter().any(|e| e.class == class));
        }
    }

    #[test]
    fn other_sizes_take_the_nearest_default_of_their_class() {
        let table = parse_defaults(DEFAULTS).unwrap();
        let lap = |n: usize| {
            let g = Grid::unit(&[n, n, n]).unwrap();
            vec![Stencil::laplacian(&g, 2).unwrap()]
        };
        let at = |n: usize, p| lookup(&table, "h100", &lap(n), Boundary::Dirichlet, [n, n, n], p);
        // 600³ is nearer 512³ than 1024³ in log points, 768³ nearer 1024³; 2048³ takes
        // 1024³'s.
        assert_eq!(at(600, Precision::F32), at(512, Precision::F32));
        assert_eq!(at(768, Precision::F32), at(1024, Precision::F32));
        assert_eq!(at(2048, Precision::F32), at(1024, Precision::F32));
        assert_ne!(at(512, Precision::F32), at(1024, Precision::F32));
        // A small grid is another class: no default, so the heuristic decides.
        assert_eq!(at(96, Precision::F32), None);
        // The H200 has its own winners.
        let h200 = lookup(
            &table,
            "h200",
            &lap(512),
            Boundary::Dirichlet,
            [512; 3],
            Precision::F64,
        );
        assert!(h200.is_some());
        assert_ne!(h200, at(512, Precision::F64));
        // Unknown devices and untuned cases get nothing.
        assert_eq!(
            lookup(
                &table,
                "a100",
                &lap(512),
                Boundary::Dirichlet,
                [512; 3],
                Precision::F32
            ),
            None
        );
        assert_eq!(
            lookup(
                &table,
                "h100",
                &lap(512),
                Boundary::Neumann,
                [512; 3],
                Precision::F32
            ),
            None
        );
    }

    #[test]
    fn the_order_is_explicit_tuned_default_heuristic() {
        let g = Grid::unit(&[512, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let naive: Strategy = "naive-32x4x1".parse().unwrap();
        let mut req = Request {
            stencils: &st,
            boundary: Boundary::Dirichlet,
            grid: &g,
            precision: Precision::F32,
            explicit: Some(naive),
            tuned: Some(naive),
            class: Some("h100"),
            tma: true,
            device: "NVIDIA H100 80GB HBM3",
            cache: None,
        };
        assert_eq!(candidates(&req), vec![(naive, Choice::Explicit)]);
        req.explicit = None;
        let order: Vec<Choice> = candidates(&req).iter().map(|c| c.1).collect();
        assert_eq!(
            order,
            [Choice::Tuned, Choice::DeviceDefault, Choice::Heuristic]
        );
        req.tuned = None;
        req.class = None;
        let order: Vec<Choice> = candidates(&req).iter().map(|c| c.1).collect();
        assert_eq!(order, [Choice::Heuristic]);
    }

    #[test]
    fn the_heuristic_runs_every_case_shape() {
        let shapes: [&[usize]; 5] = [
            &[67, 45, 33],
            &[512, 512, 512],
            &[64, 64, 64],
            &[1000, 999],
            &[101],
        ];
        for dims in shapes {
            let g = Grid::unit(dims).unwrap();
            let mut sets = vec![vec![Stencil::laplacian(&g, 2).unwrap()]];
            sets.push(vec![Stencil::laplacian(&g, 8).unwrap()]);
            sets.push(Stencil::gradient(&g, 8).unwrap());
            for stencils in &sets {
                for b in Boundary::ALL {
                    if b.check(&g, stencils).is_err() {
                        continue;
                    }
                    for p in Precision::ALL {
                        for tma in [false, true] {
                            let s = heuristic(stencils, b, &g, p, tma);
                            let spec = crate::codegen::KernelSpec {
                                stencils,
                                boundary: b,
                                precision: p,
                                strategy: s,
                                coefficients: Default::default(),
                            };
                            let src = crate::codegen::generate(&spec)
                                .unwrap_or_else(|e| panic!("{dims:?} {b} {p}: {e}"));
                            assert!(
                                g.shape()[0].is_multiple_of(src.x_multiple as usize),
                                "{s} on {dims:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
