//! The CPU runner: the fast executor, timed with the wall clock against a parallel copy
//! measured in the same run.

use super::{
    analytic_errors, apply_all, base_result, check_host_memory, check_outputs, cpu_answer,
    cpu_copy_gbps, cpu_model, cpu_peak_gflops, nan_fields, BenchError, RunOptions,
};
use crate::report::{BenchResult, Meta, Timing};
use crate::suites::Case;
use fdlab::{Backend, PlanOptions, Real};
use fdlab_core::{Field, Precision};
use rayon::prelude::*;
use std::time::Instant;

/// Runs cases on the CPU's fast executor.
pub struct CpuRunner {
    /// Copy bandwidth measured at start, GB/s.
    pub copy_gbps: f64,
    /// Metadata for the report.
    pub meta: Meta,
    copy_bytes: usize,
    copy_src: Vec<f64>,
    copy_dst: std::sync::Mutex<Vec<f64>>,
}

impl CpuRunner {
    /// Measures the copy bandwidth over `copy_bytes` and fills the metadata.
    pub fn new(copy_bytes: usize) -> CpuRunner {
        let n = copy_bytes / 8;
        let copy_src: Vec<f64> = (0..n).into_par_iter().map(|i| i as f64).collect();
        let copy_dst = std::sync::Mutex::new(vec![0.0f64; n]);
        cpu_copy_gbps(&copy_src, &copy_dst);
        let runs: Vec<f64> = (0..10)
            .map(|_| cpu_copy_gbps(&copy_src, &copy_dst))
            .collect();
        let t = Timing::of(&runs);
        let copy_gbps = 2.0 * copy_bytes as f64 / (t.median * 1e-3) / 1e9;
        let cpu = cpu_model();
        CpuRunner {
            copy_gbps,
            meta: Meta {
                backend: "cpu".into(),
                device: cpu.clone(),
                cpu,
                threads: rayon::current_num_threads(),
                copy_gbps,
                copy_method: format!(
                    "parallel copy with non-temporal stores (fdlab_cpu::copy::stream_copy) of \
                     {:.2} GiB over {} threads, median of {} at start; cases of >= 256 MiB compare with a \
                     copy paired with each timed run (see the row's note in the JSON)",
                    copy_bytes as f64 / 1073741824.0,
                    rayon::current_num_threads(),
                    t.runs
                ),
                peak_gflops_f32: cpu_peak_gflops(Precision::F32),
                peak_gflops_f64: cpu_peak_gflops(Precision::F64),
                ..Default::default()
            },
            copy_bytes,
            copy_src,
            copy_dst,
        }
    }

    /// One copy of this runner's buffers, as GB/s (bytes read + written): the reference a
    /// timed run is paired with.
    pub fn copy_once_gbps(&self) -> f64 {
        let ms = cpu_copy_gbps(&self.copy_src, &self.copy_dst);
        2.0 * self.copy_bytes as f64 / (ms * 1e-3) / 1e9
    }

    /// Runs one case.
    pub fn run(&self, case: &Case, opts: &RunOptions) -> Result<BenchResult, BenchError> {
        match case.precision {
            Precision::F32 => self.run_typed::<f32>(case, opts),
            Precision::F64 => self.run_typed::<f64>(case, opts),
        }
    }

    fn run_typed<T: Real>(
        &self,
        case: &Case,
        opts: &RunOptions,
    ) -> Result<BenchResult, BenchError> {
        let mut r = base_result(case, "cpu", "cpu-fast");
        check_host_memory(case, opts.check && case.grid.len() <= opts.reference_limit)?;
        let cpu = Backend::cpu();
        let plan = cpu.plan::<T>(
            &case.stencils,
            case.boundary,
            &case.grid,
            PlanOptions::default(),
        )?;
        let input: Field<T> = case.input.field(&case.grid);
        let u = cpu.upload(&input)?;
        let mut outs = nan_fields::<T>(&cpu, case)?;
        let mut times = vec![];
        // Shared hosts swing by tens of percent within a minute, so large cases pair every timed
        // run with a copy of the same buffers' size class taken just before it, and compare
        // with the median of those copies.
        let paired = case.bytes >= 1 << 28;
        let mut copies = vec![];
        let copy_bytes = self.copy_bytes;
        for rep in 0..opts.warmup.min(1) + opts.reps {
            if paired && rep >= opts.warmup.min(1) {
                let t = cpu_copy_gbps(&self.copy_src, &self.copy_dst);
                copies.push(2.0 * copy_bytes as f64 / (t * 1e-3) / 1e9);
            }
            let t = Instant::now();
            apply_all(&plan, &u, &mut outs)?;
            if rep >= opts.warmup.min(1) {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let outs: Vec<Field<T>> = outs.iter().map(|o| o.to_host()).collect::<Result<_, _>>()?;
        let got: Vec<Vec<T>> = outs.into_iter().map(|f| f.into_vec()).collect();
        drop(u);
        if opts.check && case.grid.len() <= opts.reference_limit {
            let (want, used) = cpu_answer(case, &input, opts)?;
            check_outputs(case, "cpu-fast", &input, &got, &want)?;
            r.checked = true;
            r.checked_against = used.into();
        }
        let (rms, max) = analytic_errors(case, &got)?;
        r.rms_error = rms;
        r.max_error = max;
        r.time_ms = Timing::of(&times);
        let peak = match case.precision {
            Precision::F32 => self.meta.peak_gflops_f32,
            Precision::F64 => self.meta.peak_gflops_f64,
        };
        let copy = if paired {
            r.note = format!(
                "{}copy paired with each timed run: median {:.1} GB/s (min {:.1}, max {:.1})",
                if r.note.is_empty() { "" } else { "; " },
                Timing::of(&copies).median,
                Timing::of(&copies).min,
                Timing::of(&copies).max
            );
            Timing::of(&copies).median
        } else {
            self.copy_gbps
        };
        r.derive(copy, peak);
        Ok(r)
    }
}
