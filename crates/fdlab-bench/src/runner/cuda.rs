//! The CUDA runner: generated kernels timed with CUDA events, each case's input and CPU
//! answer made once and shared by every strategy run on it.

use super::{
    analytic_errors, apply_all, base_result, check_host_memory, check_outputs, cpu_answer,
    cpu_model, BenchError, RunOptions,
};
use crate::report::{BenchResult, Meta, Timing};
use crate::suites::Case;
use fdlab::{Backend, BackendField, Plan, PlanOptions, Real};
use fdlab_core::{Field, Precision};
use fdlab_cuda::{Coefficients, Device, Strategy};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A case's input and CPU answer, made once and shared by every strategy run on it.
struct Prepared<T: Real> {
    key: String,
    input: Field<T>,
    want: Option<(Vec<Field<T>>, &'static str)>,
    /// The case's fields on the device, made by its first strategy run.
    on_device: Mutex<Option<OnDevice<T>>>,
}

/// A case's device fields and download buffers, reused by every strategy run on it: a
/// gigabyte grid is uploaded once per case, outputs are poisoned by a device memset, and
/// downloads land in buffers whose pages are already mapped.
struct OnDevice<T: Real> {
    input: BackendField<T>,
    outs: Vec<BackendField<T>>,
    host: Vec<Field<T>>,
}

impl<T: Real> OnDevice<T> {
    fn new(backend: &Backend, case: &Case, input: &Field<T>) -> Result<Self, BenchError> {
        Ok(OnDevice {
            input: backend.upload(input)?,
            outs: case
                .stencils
                .iter()
                .map(|_| backend.zeros(&case.grid))
                .collect::<Result<_, _>>()?,
            host: case
                .stencils
                .iter()
                .map(|_| Field::nan(&case.grid))
                .collect(),
        })
    }

    /// Fills every output with NaN again, so that a point a kernel misses cannot pass.
    fn poison(&mut self) -> Result<(), BenchError> {
        for o in &mut self.outs {
            o.fill_nan()?;
        }
        Ok(())
    }

    /// Downloads every output into the host buffers.
    fn download(&mut self) -> Result<(), BenchError> {
        for (o, h) in self.outs.iter().zip(&mut self.host) {
            o.download_into(h)?;
        }
        Ok(())
    }
}

/// [`Prepared`] of either precision.
enum AnyPrepared {
    F32(Arc<Prepared<f32>>),
    F64(Arc<Prepared<f64>>),
}

/// Element types whose [`Prepared`] the runner caches.
trait Cached: Real {
    fn get(p: &AnyPrepared) -> Option<Arc<Prepared<Self>>>;
    fn wrap(p: Arc<Prepared<Self>>) -> AnyPrepared;
}

impl Cached for f32 {
    fn get(p: &AnyPrepared) -> Option<Arc<Prepared<f32>>> {
        match p {
            AnyPrepared::F32(p) => Some(p.clone()),
            AnyPrepared::F64(_) => None,
        }
    }
    fn wrap(p: Arc<Prepared<f32>>) -> AnyPrepared {
        AnyPrepared::F32(p)
    }
}

impl Cached for f64 {
    fn get(p: &AnyPrepared) -> Option<Arc<Prepared<f64>>> {
        match p {
            AnyPrepared::F64(p) => Some(p.clone()),
            AnyPrepared::F32(_) => None,
        }
    }
    fn wrap(p: Arc<Prepared<f64>>) -> AnyPrepared {
        AnyPrepared::F64(p)
    }
}

/// What identifies a case's input and answer: the same case listed by two suites (the AMD
/// Laplacian and the roofline share their 7-point rows) has one key.
fn case_key(case: &Case) -> String {
    use std::hash::{Hash, Hasher};
    // The stencils' weights and the input's samples, hashed: their text is long.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}|{:?}", case.stencils, case.input).hash(&mut h);
    format!(
        "{}|{}|{:?}|{:?}|{:?}|{:016x}",
        case.name,
        case.precision,
        case.grid.shape(),
        case.grid.spacing(),
        case.boundary,
        h.finish()
    )
}

/// Runs cases on a CUDA device, through the front's plans.
pub struct CudaRunner {
    /// The device.
    pub device: Device,
    /// The front's backend on that device.
    pub backend: Backend,
    /// Copy bandwidth measured at start, GB/s.
    pub copy_gbps: f64,
    /// Metadata for the report.
    pub meta: Meta,
    prepared: Mutex<Option<AnyPrepared>>,
    /// Rows measured in this run, by case key, strategy and weight placement: a case that two
    /// suites list is timed once and reported in both.
    measured: Mutex<std::collections::HashMap<String, BenchResult>>,
    /// Wall time spent in each phase of the runs, for [`CudaRunner::phase_summary`].
    phases: Mutex<Vec<(&'static str, f64)>>,
}

impl CudaRunner {
    /// Runs `f`, adding its wall time to `phase`.
    fn timed<R>(&self, phase: &'static str, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        let secs = start.elapsed().as_secs_f64();
        let mut p = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        match p.iter_mut().find(|(name, _)| *name == phase) {
            Some((_, t)) => *t += secs,
            None => p.push((phase, secs)),
        }
        r
    }

    /// Where the wall time of the runs so far went, e.g. `inputs 3.1 s, CPU answers 20.4 s,
    /// …`: on large grids the host's work (inputs, answers, transfers, comparisons), not the
    /// GPU's, sets how long a run takes.
    pub fn phase_summary(&self) -> String {
        let p = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        p.iter()
            .map(|(name, t)| format!("{name} {t:.1} s"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Opens the device and measures `cuMemcpyDtoD` over `copy_bytes`.
    pub fn new(device: Device, copy_bytes: usize) -> Result<CudaRunner, BenchError> {
        let times = device.copy_times(copy_bytes, 3, 20)?;
        let t = Timing::of(&times);
        let copy_gbps = 2.0 * copy_bytes as f64 / (t.median * 1e-3) / 1e9;
        let i = &device.info;
        let lanes = |p: Precision| match (p, i.compute_capability) {
            (Precision::F32, _) => 128.0,
            (Precision::F64, (9, 0)) | (Precision::F64, (8, 0)) => 64.0,
            (Precision::F64, _) => 2.0,
        };
        let peak = |p| i.sm_count as f64 * i.sm_clock_khz as f64 * 1e-6 * lanes(p) * 2.0;
        let meta = Meta {
            backend: "cuda".into(),
            device: i.name.clone(),
            driver: format!("{}.{}", i.driver_version / 1000, (i.driver_version % 1000) / 10),
            device_details: format!(
                "sm_{}{}, {} SMs, SM clock {} MHz, memory clock {} MHz, bus {} bits, L2 {} MiB, {:.1} GiB",
                i.compute_capability.0,
                i.compute_capability.1,
                i.sm_count,
                i.sm_clock_khz / 1000,
                i.memory_clock_khz / 1000,
                i.bus_width_bits,
                i.l2_bytes >> 20,
                i.total_memory as f64 / 1073741824.0
            ),
            cpu: cpu_model(),
            threads: rayon::current_num_threads(),
            copy_gbps,
            copy_method: format!(
                "cuMemcpyDtoD of {:.2} GiB, bytes read + written, median of {} (min {:.3} ms, max {:.3} ms)",
                copy_bytes as f64 / 1073741824.0,
                t.runs,
                t.min,
                t.max
            ),
            peak_gflops_f32: peak(Precision::F32),
            peak_gflops_f64: peak(Precision::F64),
            ..Default::default()
        };
        Ok(CudaRunner {
            backend: Backend::from_device(device.clone()),
            device,
            copy_gbps,
            meta,
            prepared: Mutex::new(None),
            measured: Mutex::new(Default::default()),
            phases: Mutex::new(vec![]),
        })
    }

    /// Builds the plan of every (case, strategy) job in parallel and drops it: each kernel
    /// is compiled once, concurrently, into the kernel caches, so that the timed runs after
    /// find it there instead of compiling one at a time. Failures are left to the runs,
    /// which report them.
    pub fn warm(&self, jobs: &[(&Case, Strategy)], coefficients: Coefficients) {
        jobs.par_iter().for_each(|(case, strategy)| {
            let opts = PlanOptions {
                strategy: Some(*strategy),
                coefficients,
                ..Default::default()
            };
            let (st, b, g) = (&case.stencils, case.boundary, &case.grid);
            let _ = match case.precision {
                Precision::F32 => self.backend.plan::<f32>(st, b, g, opts).map(drop),
                Precision::F64 => self.backend.plan::<f64>(st, b, g, opts).map(drop),
            };
        });
    }

    /// Runs one case with one strategy.
    pub fn run(
        &self,
        case: &Case,
        strategy: Strategy,
        opts: &RunOptions,
    ) -> Result<BenchResult, BenchError> {
        let key = format!(
            "{}|{}|{:?}|{}",
            case_key(case),
            strategy.name(),
            opts.coefficients,
            opts.check
        );
        let lock = || self.measured.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = lock().get(&key) {
            let mut r = r.clone();
            let first = std::mem::replace(&mut r.suite, case.suite.to_string());
            r.note = [
                r.note.as_str(),
                &format!("the same measurement as in suite {first}"),
            ]
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
            return Ok(r);
        }
        let r = match case.precision {
            Precision::F32 => self.run_typed::<f32>(case, strategy, opts),
            Precision::F64 => self.run_typed::<f64>(case, strategy, opts),
        }?;
        lock().insert(key, r.clone());
        Ok(r)
    }

    /// The case's input and CPU answer: made on the first strategy run on the case, then
    /// reused by the next ones.
    fn prepared<T: Cached>(
        &self,
        case: &Case,
        opts: &RunOptions,
    ) -> Result<Arc<Prepared<T>>, BenchError> {
        let key = case_key(case);
        let mut slot = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref().and_then(T::get)
            && p.key == key
            && (p.want.is_some() || !opts.check)
        {
            return Ok(p);
        }
        // Free the previous case's buffers before making this one's.
        *slot = None;
        check_host_memory(case, opts.check)?;
        let input: Field<T> = self.timed("inputs", || case.input.field(&case.grid));
        let want = if opts.check {
            Some(self.timed("CPU answers", || cpu_answer(case, &input, opts))?)
        } else {
            None
        };
        let p = Arc::new(Prepared {
            key,
            input,
            want,
            on_device: Mutex::new(None),
        });
        *slot = Some(T::wrap(p.clone()));
        Ok(p)
    }

    fn run_typed<T: Cached>(
        &self,
        case: &Case,
        strategy: Strategy,
        opts: &RunOptions,
    ) -> Result<BenchResult, BenchError> {
        let dev = &self.device;
        let name = strategy.name();
        let mut r = base_result(case, "cuda", &name);
        let plan = self.timed("plans", || {
            self.backend.plan::<T>(
                &case.stencils,
                case.boundary,
                &case.grid,
                PlanOptions {
                    strategy: Some(strategy),
                    coefficients: opts.coefficients,
                    ..Default::default()
                },
            )
        })?;
        let prep = self.prepared::<T>(case, opts)?;
        let mut slot = prep.on_device.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            // The input and the outputs.
            let n = case.grid.len();
            dev.ensure_free(((1 + case.stencils.len()) * n * case.precision.size()) as u64)?;
            let on = self.timed("uploads", || {
                OnDevice::new(&self.backend, case, &prep.input)
            })?;
            *slot = Some(on);
        }
        let fields = slot.as_mut().expect("made above");
        fields.poison()?;
        apply_all(&plan, &fields.input, &mut fields.outs)?;
        plan.synchronize()?;
        self.timed("downloads", || fields.download())?;
        let got: Vec<&[T]> = fields.host.iter().map(Field::as_slice).collect();
        if let Some((want, used)) = &prep.want {
            self.timed("comparisons", || {
                check_outputs(case, &name, &prep.input, &got, want)
            })?;
            r.checked = true;
            r.checked_against = (*used).into();
        }
        let (rms, max) = self.timed("analytic errors", || analytic_errors(case, &got))?;
        r.rms_error = rms;
        r.max_error = max;
        let (u, outs) = (&fields.input, &mut fields.outs);
        let times = self.timed("timed runs", || {
            time_applies(dev, opts.warmup, opts.reps, &plan, u, outs)
        })?;
        r.time_ms = Timing::of(&times);
        if case.latency_bound
            && let (Some(cp), Some(du)) = (plan.cuda(), u.as_device())
        {
            let mut d_outs: Vec<fdlab_cuda::DeviceField<T>> = case
                .stencils
                .iter()
                .map(|_| fdlab_cuda::DeviceField::zeros(dev, &case.grid))
                .collect::<Result<_, _>>()?;
            let mut refs: Vec<&mut fdlab_cuda::DeviceField<T>> = d_outs.iter_mut().collect();
            // NVIDIA's method: calls issued back to back between two events.
            let mut failed = None;
            let b2b = dev.time(1, opts.reps, || {
                for _ in 0..crate::report::BACK_TO_BACK {
                    if failed.is_none() {
                        failed = cp.apply(du, &mut refs).err();
                    }
                }
                Ok(())
            })?;
            if let Some(e) = failed {
                return Err(e.into());
            }
            let per = crate::report::BACK_TO_BACK as f64;
            r.back_to_back_us = Some(Timing::of(&b2b).median * 1e3 / per);
            let graph = cp.graph(du, &mut refs, 100)?;
            let g = dev.time(1, opts.reps, || graph.launch())?;
            r.graph_us = Some(Timing::of(&g).median * 1e3 / graph.launches() as f64);
        }
        let peak = match case.precision {
            Precision::F32 => self.meta.peak_gflops_f32,
            Precision::F64 => self.meta.peak_gflops_f64,
        };
        r.derive(self.copy_gbps, peak);
        if opts.coefficients == Coefficients::Constant {
            r.strategy = format!("{name}+const");
        }
        Ok(r)
    }
}

/// CUDA-event times of `plan.apply` (milliseconds per apply).
fn time_applies<T: Real>(
    dev: &Device,
    warmup: usize,
    reps: usize,
    plan: &Plan<T>,
    u: &BackendField<T>,
    outs: &mut [BackendField<T>],
) -> Result<Vec<f64>, BenchError> {
    let mut failed = None;
    let times = dev.time(warmup, reps, || {
        if failed.is_none() {
            failed = apply_all(plan, u, outs).err();
        }
        Ok(())
    })?;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(times),
    }
}

/// A candidate strategy and its timing, or why it could not run.
pub type CandidateTiming = (Strategy, Result<Timing, String>);

/// Whether an error says the candidate exceeds the device's limits (skipped quietly).
pub fn over_limits(e: &str) -> bool {
    e.contains("the device allows at most") || e.contains("needs nx to be a multiple")
}

impl CudaRunner {
    /// Times each of `strategies` on `case` (one upload, no checking: the tuner checks the
    /// winner afterwards with [`CudaRunner::run`]). Duplicates are timed once. Plans are
    /// built in parallel (one NVRTC compile each, through the kernel cache) before timing;
    /// candidates that cannot run are returned with their reason.
    pub fn time_candidates(
        &self,
        case: &Case,
        strategies: &[Strategy],
        warmup: usize,
        reps: usize,
    ) -> Result<Vec<CandidateTiming>, BenchError> {
        match case.precision {
            Precision::F32 => self.time_typed::<f32>(case, strategies, warmup, reps),
            Precision::F64 => self.time_typed::<f64>(case, strategies, warmup, reps),
        }
    }

    fn time_typed<T: Real>(
        &self,
        case: &Case,
        strategies: &[Strategy],
        warmup: usize,
        reps: usize,
    ) -> Result<Vec<CandidateTiming>, BenchError> {
        let dev = &self.device;
        let n = case.grid.len();
        dev.ensure_free(((1 + case.stencils.len()) * n * case.precision.size()) as u64)?;
        let mut unique: Vec<Strategy> = vec![];
        for s in strategies {
            if !unique.contains(s) {
                unique.push(*s);
            }
        }
        let input: Field<T> = case.input.field(&case.grid);
        let u = self.backend.upload(&input)?;
        drop(input);
        let mut outs = (0..case.stencils.len())
            .map(|_| self.backend.zeros::<T>(&case.grid))
            .collect::<Result<Vec<_>, _>>()?;
        let plans: Vec<Result<Plan<T>, String>> = unique
            .par_iter()
            .map(|&s| {
                self.backend
                    .plan::<T>(
                        &case.stencils,
                        case.boundary,
                        &case.grid,
                        PlanOptions {
                            strategy: Some(s),
                            ..Default::default()
                        },
                    )
                    .map_err(|e| e.to_string())
            })
            .collect();
        let mut out = vec![];
        for (&s, plan) in unique.iter().zip(plans) {
            let r = plan.and_then(|plan| {
                time_applies(dev, warmup, reps, &plan, &u, &mut outs)
                    .map(|t| Timing::of(&t))
                    .map_err(|e| e.to_string())
            });
            out.push((s, r));
        }
        Ok(out)
    }
}
