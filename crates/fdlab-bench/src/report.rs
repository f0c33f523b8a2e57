//! Bench results and their JSON form (the fields DESIGN.md lists, plus a few).

use serde::{Deserialize, Serialize};

/// Median, min and max of a set of timings, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Timing {
    /// Median.
    pub median: f64,
    /// Fastest.
    pub min: f64,
    /// Slowest.
    pub max: f64,
    /// Number of timed runs.
    pub runs: usize,
}

impl Timing {
    /// Summarises `ms` (must not be empty).
    pub fn of(ms: &[f64]) -> Timing {
        let mut v = ms.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n == 0 {
            f64::NAN
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        Timing {
            median,
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
            runs: n,
        }
    }
}

/// Run metadata: what ran where.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Meta {
    /// fdlab version.
    pub fdlab_version: String,
    /// `git rev-parse HEAD` at build or run time, if known.
    pub git_sha: String,
    /// UTC date and time of the run.
    pub date: String,
    /// "cpu" or "cuda".
    pub backend: String,
    /// Device name (GPU name, or CPU model for the CPU backend).
    pub device: String,
    /// Driver version (CUDA), empty on CPU.
    pub driver: String,
    /// Compute capability, SM count, clocks, L2 (CUDA).
    pub device_details: String,
    /// CPU model.
    pub cpu: String,
    /// Threads used on the CPU.
    pub threads: usize,
    /// Copy bandwidth measured in this run, GB/s (bytes read + written).
    pub copy_gbps: f64,
    /// How the copy bandwidth was measured.
    pub copy_method: String,
    /// Peak arithmetic rate used for the roofline ridge point, GFLOP/s per precision.
    pub peak_gflops_f32: f64,
    /// As above, f64.
    pub peak_gflops_f64: f64,
    /// Command line.
    pub command: String,
    /// Host cost of one apply at 64³ (f32 7-point Laplacian, warm plan), CUDA only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_overhead: Option<ApplyOverhead>,
}

/// Host microseconds per apply on a small grid: what launching costs, apart from the kernel.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq)]
pub struct ApplyOverhead {
    /// Points per axis.
    pub n: usize,
    /// Host µs per `plan.apply` on a warm plan.
    pub apply_us: f64,
    /// Host µs per apply replayed from a CUDA graph.
    pub graph_us: f64,
    /// Device µs per apply.
    pub device_us: f64,
}

/// One measured case.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct BenchResult {
    /// Suite name.
    pub suite: String,
    /// Case within the suite.
    pub case: String,
    /// "cpu" or "cuda".
    pub backend: String,
    /// Strategy name.
    pub strategy: String,
    /// "f32" or "f64".
    pub precision: String,
    /// `[nx, ny, nz]`.
    pub shape: [usize; 3],
    /// Per-call time.
    pub time_ms: Timing,
    /// Minimum bytes moved per call.
    pub bytes: u64,
    /// Effective bandwidth, GB/s (bytes / median time).
    pub gbps: f64,
    /// Copy bandwidth measured in this run, GB/s.
    pub copy_gbps: f64,
    /// `gbps / copy_gbps`, percent.
    pub pct_of_copy: f64,
    /// RMS error against the analytic answer.
    pub rms_error: f64,
    /// MAX error against the analytic answer.
    pub max_error: f64,
    /// Whether every output point was compared with a CPU result in this run.
    pub checked: bool,
    /// What it was compared with ("cpu-reference", "cpu-fast" or "").
    pub checked_against: String,
    /// Floating-point operations per call (2 per tap per output point).
    pub flops: u64,
    /// `flops / bytes`.
    pub arithmetic_intensity: f64,
    /// Ridge point of this device and precision (peak FLOP/s over copy bandwidth), FLOP/B.
    pub ridge_point: f64,
    /// Whether the case is latency-bound (small grid) rather than a bandwidth figure.
    pub latency_bound: bool,
    /// Microseconds per call replayed from a CUDA graph, when measured.
    pub graph_us: Option<f64>,
    /// Microseconds per call with calls issued back to back, [`BACK_TO_BACK`] of them between
    /// two events (NVIDIA's published method), when measured.
    #[serde(default)]
    pub back_to_back_us: Option<f64>,
    /// Anything worth knowing about this row.
    pub note: String,
}

/// Calls between the two events of one back-to-back latency sample.
pub const BACK_TO_BACK: usize = 20;

/// A whole run: `{"meta": …, "results": […]}`, and `"solvers": […]` for the solvers suite.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Report {
    /// Metadata.
    pub meta: Meta,
    /// Results in run order.
    pub results: Vec<BenchResult>,
    /// Timed solver steps (the `solvers` suite), in run order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub solvers: Vec<SolverResult>,
}

impl BenchResult {
    /// Fills the derived fields from `bytes`, `flops`, the time and the copy bandwidth.
    pub fn derive(&mut self, copy_gbps: f64, peak_gflops: f64) {
        self.copy_gbps = copy_gbps;
        self.gbps = self.bytes as f64 / (self.time_ms.median * 1e-3) / 1e9;
        self.pct_of_copy = 100.0 * self.gbps / copy_gbps;
        self.arithmetic_intensity = self.flops as f64 / self.bytes.max(1) as f64;
        self.ridge_point = peak_gflops / copy_gbps;
    }
}

/// The one-line table header matching [`row`].
pub fn header() -> String {
    format!(
        "{:<18} {:<26} {:<24} {:<4} {:>15} {:>11} {:>11} {:>10} {:>9} {:>7} {:>5}",
        "suite",
        "case",
        "strategy",
        "prec",
        "shape",
        "RMS err",
        "MAX err",
        "time ms",
        "GB/s",
        "%copy",
        "chk"
    )
}

/// One result as a table row.
pub fn row(r: &BenchResult) -> String {
    let shape = format!("{}x{}x{}", r.shape[0], r.shape[1], r.shape[2]);
    format!(
        "{:<18} {:<26} {:<24} {:<4} {:>15} {:>11.4e} {:>11.4e} {:>10.4} {:>9.1} {:>6.1}% {:>5}",
        r.suite,
        r.case,
        r.strategy,
        r.precision,
        shape,
        r.rms_error,
        r.max_error,
        r.time_ms.median,
        r.gbps,
        r.pct_of_copy,
        if r.checked { "yes" } else { "no" }
    )
}

/// One timed solver step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SolverResult {
    /// `"solvers"`, or `"temporal"` for the temporal-blocking suite.
    pub suite: String,
    /// Case name.
    pub case: String,
    /// What the case runs.
    pub description: String,
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Grid points per axis.
    pub shape: Vec<usize>,
    /// `"cpu"` or `"cuda"`.
    pub backend: String,
    /// Time of one step, ms.
    pub time_ms: Timing,
    /// Grid points updated per second (median).
    pub cell_updates_per_s: f64,
    /// Minimum bytes a step moves.
    pub bytes_per_step: usize,
    /// Effective bandwidth: bytes per step over the median step time, GB/s.
    pub gbps: f64,
    /// Copy bandwidth this row is compared with, GB/s (the median of copies paired with the
    /// timed steps).
    pub copy_gbps: f64,
    /// `gbps` as % of `copy_gbps`.
    pub pct_of_copy: f64,
    /// Time steps per pass over the grid (the `temporal` suite's rows; absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_pass: Option<usize>,
    /// Temporal suite: whether the row runs the device's default schedule (what a run
    /// without `--schedule` uses) rather than a shape the suite asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_shipped: Option<bool>,
    /// The schedule that ran the steps, as the stepper names it (on the GPU, a name that
    /// `--schedule` takes back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
}
