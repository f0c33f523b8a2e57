//! What a plan checks before it is built (the strategy's kernel against the device) and before
//! each launch (the fields against the plan), apart from the device so that it is tested
//! without one.

use crate::choose::{self, Choice, Request};
use crate::codegen::{generate, CudaSource, KernelSpec};
use crate::device::{check_source, DeviceInfo};
use crate::error::{Error, Result};
use crate::field::FieldMeta;
use crate::strategy::{Coefficients, Strategy};
use fdlab_core::{Boundary, Grid, Precision, Stencil};

/// What a plan checks fields against, apart from the device so that it is tested without one.
///
/// ```
/// use fdlab_core::Precision;
/// let m = fdlab_cuda::PlanMeta { shape: [64; 3], precision: Precision::F64, device: 1, outputs: 3 };
/// assert_eq!(m.outputs, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanMeta {
    /// The grid's points along x, y, z.
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
    /// Id of the device handle the plan was built with.
    pub device: u64,
    /// Output fields written per apply.
    pub outputs: usize,
}

/// Checks an apply's fields against the plan: count, device, precision, shape, in that order.
///
/// ```
/// use fdlab_core::Precision;
/// use fdlab_cuda::{check_fields, Error, FieldMeta, PlanMeta};
/// let plan = PlanMeta { shape: [8, 8, 8], precision: Precision::F32, device: 1, outputs: 1 };
/// let ok = FieldMeta { shape: [8, 8, 8], precision: Precision::F32, device: 1 };
/// assert!(check_fields(&plan, ok, &[ok]).is_ok());
/// let other = FieldMeta { device: 2, ..ok };
/// assert!(matches!(check_fields(&plan, other, &[ok]), Err(Error::WrongDevice { .. })));
/// ```
pub fn check_fields(plan: &PlanMeta, input: FieldMeta, outputs: &[FieldMeta]) -> Result<()> {
    if outputs.len() != plan.outputs {
        return Err(Error::OutputCount {
            expected: plan.outputs,
            got: outputs.len(),
        });
    }
    check_one(plan, Arg::Input, input)?;
    for (n, &m) in outputs.iter().enumerate() {
        check_one(plan, Arg::Output(n), m)?;
    }
    Ok(())
}

/// Which argument of an apply a check is about; named in text only when a check fails, so
/// that a passing check allocates nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    Input,
    Output(usize),
}

impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Input => f.write_str("the input"),
            Arg::Output(n) => write!(f, "output {n}"),
        }
    }
}

pub(crate) fn check_one(plan: &PlanMeta, what: Arg, m: FieldMeta) -> Result<()> {
    if m.device != plan.device {
        return Err(Error::WrongDevice {
            what: what.to_string(),
            expected: plan.device,
            got: m.device,
        });
    }
    if m.precision != plan.precision {
        return Err(Error::Precision {
            what: what.to_string(),
            expected: plan.precision,
            got: m.precision,
        });
    }
    if m.shape != plan.shape {
        return Err(Error::ShapeMismatch {
            what: what.to_string(),
            expected: plan.shape,
            got: m.shape,
        });
    }
    Ok(())
}

/// Refuses weights that overflow to infinity or vanish to zero in `precision` (an `f64`
/// weight of 1e60 is infinite in `f32`; one of 1e-50 is zero).
///
/// ```
/// use fdlab_core::{Precision, Stencil};
/// use fdlab_cuda::check_weights;
/// let big = Stencil::custom(&[([0, 0, 0], 1e60)]).unwrap();
/// assert!(check_weights(std::slice::from_ref(&big), Precision::F64).is_ok());
/// assert!(check_weights(&[big], Precision::F32).is_err());
/// ```
pub fn check_weights(stencils: &[Stencil], precision: Precision) -> Result<()> {
    for s in stencils {
        for t in s.taps() {
            let w = t.weight;
            let (finite, zero) = match precision {
                Precision::F32 => ((w as f32).is_finite(), w as f32 == 0.0),
                Precision::F64 => (w.is_finite(), w == 0.0),
            };
            if !finite || (zero && w != 0.0) || !w.is_finite() {
                return Err(Error::Weight {
                    stencil: s.label(),
                    weight: w,
                    as_precision: if finite { "0" } else { "inf" }.into(),
                    precision,
                });
            }
        }
    }
    Ok(())
}

/// Generates the kernel of `strategy` for the case and checks it against the device's limits.
pub(crate) fn viable(
    strategy: Strategy,
    stencils: &[Stencil],
    boundary: Boundary,
    grid: &Grid,
    precision: Precision,
    coefficients: Coefficients,
    info: &DeviceInfo,
) -> Result<CudaSource> {
    let src = generate(&KernelSpec {
        stencils,
        boundary,
        precision,
        strategy,
        coefficients,
    })?;
    let shape = grid.shape();
    check_source(&src, shape, info)?;
    if !src.tensor_boxes.is_empty() && !(shape[0] * precision.size()).is_multiple_of(16) {
        return Err(Error::Misaligned {
            kernel: src.name.clone(),
            nx: shape[0],
            multiple: (16 / precision.size()) as u32,
        });
    }
    Ok(src)
}

/// The first candidate ([`choose::candidates`]) whose kernel generates and fits the device,
/// with its kernel; an explicit strategy that cannot run is an error, not replaced.
pub(crate) fn select(
    req: &Request<'_>,
    coefficients: Coefficients,
    info: &DeviceInfo,
) -> Result<(Strategy, Choice, CudaSource)> {
    let mut last = None;
    for (strategy, choice) in choose::candidates(req) {
        match viable(
            strategy,
            req.stencils,
            req.boundary,
            req.grid,
            req.precision,
            coefficients,
            info,
        ) {
            Ok(src) => return Ok((strategy, choice, src)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(Error::Driver {
        call: "plan".into(),
        detail: "no strategy to try".into(),
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The H100's name as the driver gives it.
    const H100_NAME: &str = "NVIDIA H100 80GB HBM3";

    /// An H100 as the driver describes it, for choices made without a GPU.
    pub(crate) fn h100() -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: H100_NAME.into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 80 << 30,
            l2_bytes: 50 << 20,
            max_threads_per_block: 1024,
            max_shared_per_block: 232448,
            max_texture_linear: 1 << 28,
            driver_version: 13000,
            memory_clock_khz: 2619000,
            bus_width_bits: 5120,
            sm_clock_khz: 1980000,
        }
    }

    fn request<'a>(st: &'a [Stencil], g: &'a Grid, b: Boundary, p: Precision) -> Request<'a> {
        Request {
            stencils: st,
            boundary: b,
            grid: g,
            precision: p,
            explicit: None,
            tuned: None,
            class: choose::device_class(&h100().name),
            tma: true,
            device: H100_NAME,
            cache: None,
        }
    }

    #[test]
    fn a_tuned_or_default_kernel_that_cannot_run_gives_way() {
        let info = h100();
        // nx = 514 is not a multiple of 4: a tuned kernel of 4-wide vectors cannot run it,
        // so the next candidate does.
        let g = Grid::unit(&[514, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let mut req = request(&st, &g, Boundary::Dirichlet, Precision::F32);
        let wide: Strategy = "zmarch-32x4-v4-c64-u4-r1".parse().unwrap();
        req.tuned = Some(wide);
        let (s, choice, src) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_ne!(s, wide);
        assert_ne!(choice, Choice::Tuned);
        assert!(514usize.is_multiple_of(src.x_multiple as usize), "{s}");
        // The same strategy named explicitly is an error, not replaced.
        req.explicit = Some(wide);
        let e = select(&req, Coefficients::Immediate, &info).unwrap_err();
        assert!(matches!(e, Error::Misaligned { nx: 514, .. }), "{e}");
    }

    #[test]
    fn the_h100_gets_its_measured_winner() {
        let info = h100();
        let g = Grid::unit(&[512, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 8).unwrap()];
        let req = request(&st, &g, Boundary::Dirichlet, Precision::F64);
        let (s, choice, _) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_eq!(choice, Choice::DeviceDefault);
        assert_eq!(s.to_string(), "qmarch-32x16-r2-c256-v2-w2a");
        // An unknown device falls to the heuristic.
        let mut other = info.clone();
        other.name = "NVIDIA A100-SXM4-80GB".into();
        let req = Request {
            class: choose::device_class(&other.name),
            ..req
        };
        let (_, choice, _) = select(&req, Coefficients::Immediate, &other).unwrap();
        assert_eq!(choice, Choice::Heuristic);
    }

    #[test]
    fn a_tune_cache_entry_changes_what_a_plan_chooses() {
        use crate::tune_cache::{CaseKey, Entry, TuneCache};
        let info = h100();
        let g = Grid::unit(&[512, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 8).unwrap()];
        let path = crate::tune_cache::tests::temp_file("plan-choice");
        let tuned: Strategy = "zmarch-32x4-v2-c64-u4-r1".parse().unwrap();
        let case = CaseKey {
            stencils: &st,
            boundary: Boundary::Dirichlet,
            shape: g.shape(),
            precision: Precision::F64,
        };
        let mut cache = TuneCache::default();
        cache.insert(&info.name, &case, Entry::new(&tuned.to_string()));
        cache.save_to(&path).unwrap();
        // The file, read back as a device reads it, makes the tuned strategy the plan's.
        let from_file = TuneCache::load_from(Some(&path));
        let mut req = request(&st, &g, Boundary::Dirichlet, Precision::F64);
        req.cache = Some(&from_file);
        let (s, choice, _) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_eq!((s, choice), (tuned, Choice::Tuned));
        // Another device's entry, or none, leaves the device default.
        req.device = "NVIDIA H200";
        req.class = choose::device_class("NVIDIA H200");
        let (_, choice, _) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_eq!(choice, Choice::DeviceDefault);
        // A corrupt file warns and gives the defaults, never a panic.
        std::fs::write(&path, "{\"entries\": 3").unwrap();
        let corrupt = TuneCache::load_from(Some(&path));
        let mut req = request(&st, &g, Boundary::Dirichlet, Precision::F64);
        req.cache = Some(&corrupt);
        let (s, choice, _) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_eq!(choice, Choice::DeviceDefault);
        assert_eq!(s.to_string(), "qmarch-32x16-r2-c256-v2-w2a");
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn over_limit_kernels_are_refused_before_launch() {
        let mut info = h100();
        info.max_threads_per_block = 64;
        let g = Grid::unit(&[64, 64, 64]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let mut req = request(&st, &g, Boundary::Periodic, Precision::F32);
        req.explicit = Some("naive-32x4x1".parse().unwrap());
        let e = select(&req, Coefficients::Immediate, &info).unwrap_err();
        assert!(
            matches!(
                e,
                Error::ResourceLimit {
                    requested: 128,
                    max: 64,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn field_checks_name_the_argument_and_the_fix() {
        let plan = PlanMeta {
            shape: [8, 8, 8],
            precision: Precision::F32,
            device: 1,
            outputs: 2,
        };
        let ok = FieldMeta {
            shape: [8, 8, 8],
            precision: Precision::F32,
            device: 1,
        };
        assert!(check_fields(&plan, ok, &[ok, ok]).is_ok());
        let e = check_fields(&plan, ok, &[ok]).unwrap_err();
        assert!(matches!(
            e,
            Error::OutputCount {
                expected: 2,
                got: 1
            }
        ));
        let f64_out = FieldMeta {
            precision: Precision::F64,
            ..ok
        };
        let e = check_fields(&plan, ok, &[ok, f64_out]).unwrap_err();
        assert!(matches!(e, Error::Precision { .. }));
        assert!(e.to_string().contains("output 1"), "{e}");
        let moved = FieldMeta {
            shape: [8, 8, 9],
            ..ok
        };
        let e = check_fields(&plan, moved, &[ok, ok]).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }));
        assert!(e.to_string().contains("the input"), "{e}");
        let foreign = FieldMeta { device: 7, ..ok };
        let e = check_fields(&plan, ok, &[foreign, ok]).unwrap_err();
        assert!(matches!(
            e,
            Error::WrongDevice {
                expected: 1,
                got: 7,
                ..
            }
        ));
        // Device before precision before shape: the most basic mistake is named first.
        let all_wrong = FieldMeta {
            shape: [1, 1, 1],
            precision: Precision::F64,
            device: 9,
        };
        let e = check_fields(&plan, all_wrong, &[ok, ok]).unwrap_err();
        assert!(matches!(e, Error::WrongDevice { .. }));
    }

    #[test]
    fn weights_out_of_range_for_the_precision_are_refused() {
        let tiny = Stencil::custom(&[([0, 0, 0], 1e-50)]).unwrap();
        let huge = Stencil::custom(&[([0, 0, 0], -1e40)]).unwrap();
        for s in [&tiny, &huge] {
            let one = std::slice::from_ref(s);
            assert!(check_weights(one, Precision::F64).is_ok());
            let e = check_weights(one, Precision::F32).unwrap_err();
            assert!(matches!(e, Error::Weight { .. }), "{e}");
        }
        let fine = Stencil::custom(&[([0, 0, 0], 1e-30), ([1, 0, 0], 3e38)]).unwrap();
        assert!(check_weights(&[fine], Precision::F32).is_ok());
    }
}
