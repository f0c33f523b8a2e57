//! CPU roofline: the fast executor against the streaming copy measured in the same run.
//!
//! ```text
//! cargo run --release -p fdlab-cpu --example cpu_roofline -- [--n 512] [--runs 7] [--threads T]
//!     [--only lap|lap32|dx|dy|dz] [--sweep | --tune]
//! ```
//!
//! Cases (the performance targets): the 7-point Laplacian, f64 and f32, Dirichlet (interior
//! only), with AMD's byte count; the 8th-order first derivative, f32, periodic, along x, y and z,
//! with 2·N·s bytes. The copy is [`fdlab_cpu::copy::stream_copy`] (non-temporal stores) of 1 GiB
//! over rayon's threads, bytes read + written; `copy_from_slice` is also timed at the start, for
//! comparison. After one warm-up of each, every timed stencil run is paired with a timed copy right
//! before it, so that both see the same machine (on a shared host the memory bandwidth drifts);
//! the table gives the median stencil time (min, max), its effective GB/s, the median copy GB/s
//! of the pairs, and the median over the pairs of stencil GB/s ÷ copy GB/s. `--sweep` also times
//! the executor's variants (ordinary vs streaming stores, baseline vs AVX2 loops, taps per fused
//! loop, y-block cache budget, prefetch distance, rows per run, one thread), interleaved run by
//! run so that they share the machine's ups and downs; `--tune` times the grid of rows per run
//! × prefetch distance in rows (no byte minimum) beside the defaults.

use fdlab_core::{Axis, Boundary, Field, Grid, Scalar, Stencil};
use fdlab_cpu::fast::{apply_with, Options, Par, Simd, Stores};
use rayon::prelude::*;
use std::time::Instant;

/// Seconds `f` takes.
fn seconds(f: impl FnOnce()) -> f64 {
    let s = Instant::now();
    f();
    s.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A parallel copy of `bytes` bytes: the bandwidth reference.
struct Copy {
    src: Vec<f64>,
    dst: Vec<f64>,
    /// Streaming stores ([`fdlab_cpu::copy::stream_copy`]), else `copy_from_slice`.
    streaming: bool,
}

impl Copy {
    fn new(bytes: usize) -> Copy {
        let n = bytes / 8;
        Copy {
            src: (0..n).map(|i| i as f64).collect(),
            dst: vec![0.0; n],
            streaming: true,
        }
    }

    /// Bytes read + written.
    fn bytes(&self) -> f64 {
        16.0 * self.src.len() as f64
    }

    /// One copy, in seconds.
    fn run(&mut self) -> f64 {
        let chunk = self.src.len().div_ceil(rayon::current_num_threads());
        let (src, dst) = (&self.src, &mut self.dst);
        if self.streaming {
            return seconds(|| {
                fdlab_cpu::copy::stream_copy(src, dst, Par::Rayon).expect("equal lengths")
            });
        }
        seconds(|| {
            dst.par_chunks_mut(chunk)
                .zip(src.par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s))
        })
    }
}

struct Case<'a, T> {
    name: String,
    stencil: Stencil,
    boundary: Boundary,
    bytes: f64,
    input: &'a Field<T>,
}

/// Times every variant of `case`, interleaved (run 1 of each variant, then run 2, ...), each
/// run right after a timed copy, and prints one line per variant.
fn run_case<T: Scalar>(
    case: &Case<'_, T>,
    out: &mut Field<T>,
    variants: &[(String, Options)],
    runs: usize,
    copy: &mut Copy,
) {
    let mut apply = |opts: &Options| {
        seconds(|| {
            apply_with(
                std::slice::from_ref(&case.stencil),
                case.boundary,
                case.input.view(),
                &mut [out.view_mut()],
                opts,
            )
            .expect("the roofline cases are valid")
        })
    };
    for (_, o) in variants {
        apply(o);
    }
    copy.run();
    let mut ts = vec![vec![]; variants.len()];
    let mut cs = vec![vec![]; variants.len()];
    let mut ratio = vec![vec![]; variants.len()];
    for _ in 0..runs {
        for (v, (_, o)) in variants.iter().enumerate() {
            let c = copy.bytes() / copy.run() / 1e9;
            let t = apply(o);
            ratio[v].push(case.bytes / t / 1e9 / c);
            ts[v].push(t);
            cs[v].push(c);
        }
    }
    for (v, (tag, _)) in variants.iter().enumerate() {
        let t = &ts[v];
        let (min, max) = t
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &t| (a.min(t), b.max(t)));
        let med = median(t.clone());
        println!(
            "{:<24} {:<24} {:8.2} ms (min {:7.2}, max {:7.2}) {:6.2} GB/s  copy {:6.2} GB/s  {:5.1}%",
            case.name,
            tag,
            med * 1e3,
            min * 1e3,
            max * 1e3,
            case.bytes / med / 1e9,
            median(cs[v].clone()),
            100.0 * median(ratio[v].clone())
        );
    }
}

fn variants() -> Vec<(String, Options)> {
    let d = Options::default();
    let mut v = vec![("default".to_string(), d)];
    let mut add = |name: String, o: Options| v.push((name, o));
    add(
        "stores=temporal".into(),
        Options {
            stores: Stores::Temporal,
            ..d
        },
    );
    add(
        "stores=streaming".into(),
        Options {
            stores: Stores::NonTemporal,
            ..d
        },
    );
    add(
        "simd=baseline".into(),
        Options {
            simd: Simd::Baseline,
            ..d
        },
    );
    for group in [1, 4] {
        add(format!("group={group}"), Options { group, ..d });
    }
    for kib in [0, 256, 2048] {
        add(
            format!("block={kib}KiB"),
            Options {
                block_bytes: kib << 10,
                ..d
            },
        );
    }
    for prefetch_rows in [0, 1, 4] {
        add(
            format!("prefetch={prefetch_rows}"),
            Options {
                prefetch_rows,
                prefetch_bytes: 0,
                ..d
            },
        );
    }
    for run_rows in [1, 4, 64] {
        add(format!("run={run_rows}"), Options { run_rows, ..d });
    }
    add("seq".into(), Options { par: Par::Seq, ..d });
    v
}

fn main() {
    let mut n = 512usize;
    let mut runs = 7usize;
    let mut sweep = false;
    let mut tune = false;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--n" => n = args.next().and_then(|v| v.parse().ok()).expect("--n N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--sweep" => sweep = true,
            "--tune" => tune = true,
            "--threads" => {
                let t: usize = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--threads T");
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build_global()
                    .expect("a rayon pool");
            }
            "--only" => only = args.next(),
            _ => panic!(
                "usage: cpu_roofline [--n N] [--runs R] [--threads T] [--only NAME] [--sweep|--tune]"
            ),
        }
    }
    let runs = runs.max(5);
    println!(
        "fdlab cpu_roofline: {} threads, {}^3, {} paired runs after a warm-up",
        rayon::current_num_threads(),
        n,
        runs
    );
    let mut copy = Copy::new(1 << 30);
    let (mut cs, mut ms) = (vec![], vec![]);
    for r in 0..=runs {
        for streaming in [false, true] {
            copy.streaming = streaming;
            let g = copy.bytes() / copy.run() / 1e9;
            // The first round is a warm-up.
            if r > 0 {
                if streaming { &mut cs } else { &mut ms }.push(g);
            }
        }
    }
    let stats = |v: &Vec<f64>| {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        format!("{:.2} GB/s (min {lo:.2}, max {hi:.2})", median(v.clone()))
    };
    println!("copy_from_slice 1 GiB: {}", stats(&ms));
    println!("stream_copy 1 GiB:     {}", stats(&cs));
    let all = if tune {
        let d = Options::default();
        let mut v = vec![];
        for run_rows in [16, 32, 64] {
            for prefetch_rows in [1, 2, 4, 8] {
                v.push((
                    format!("run={run_rows} pf={prefetch_rows}"),
                    Options {
                        run_rows,
                        prefetch_rows,
                        prefetch_bytes: 0,
                        ..d
                    },
                ));
            }
        }
        v.push(("default".to_string(), d));
        v
    } else if sweep {
        variants()
    } else {
        vec![("default".to_string(), Options::default())]
    };
    let wanted = |name: &str| only.is_none() || only.as_deref() == Some(name);
    let grid = Grid::unit(&[n, n, n]).expect("valid grid");

    // 7-point Laplacian, f64, interior only; AMD's bytes.
    if wanted("lap") {
        let s = 8.0;
        let m = n as f64;
        let fetch = (m * m * m - 8.0 - 12.0 * (m - 2.0)) * s;
        let write = (m - 2.0).powi(3) * s;
        let input = Field::<f64>::random(&grid, 1);
        let case = Case {
            name: "laplacian7 f64 dirichlet".into(),
            stencil: Stencil::laplacian(&grid, 2).expect("valid"),
            boundary: Boundary::Dirichlet,
            bytes: fetch + write,
            input: &input,
        };
        let mut out = Field::<f64>::zeros(&grid);
        run_case(&case, &mut out, &all, runs, &mut copy);
    }
    // 7-point Laplacian, f32, interior only; AMD's bytes.
    if wanted("lap32") {
        let s = 4.0;
        let m = n as f64;
        let fetch = (m * m * m - 8.0 - 12.0 * (m - 2.0)) * s;
        let write = (m - 2.0).powi(3) * s;
        let input = Field::<f32>::random(&grid, 1);
        let case = Case {
            name: "laplacian7 f32 dirichlet".into(),
            stencil: Stencil::laplacian(&grid, 2).expect("valid"),
            boundary: Boundary::Dirichlet,
            bytes: fetch + write,
            input: &input,
        };
        let mut out = Field::<f32>::zeros(&grid);
        run_case(&case, &mut out, &all, runs, &mut copy);
    }
    // 8th-order first derivative, f32, periodic; 2·N·s.
    if ["dx", "dy", "dz"].iter().any(|d| wanted(d)) {
        let input = Field::<f32>::random(&grid, 2);
        let mut out = Field::<f32>::zeros(&grid);
        for axis in Axis::ALL {
            if !wanted(&format!("d{}", axis.name())) {
                continue;
            }
            let case = Case {
                name: format!("d1{}/8 f32 periodic", axis.name()),
                stencil: Stencil::derivative(&grid, axis, 1, 8).expect("valid"),
                boundary: Boundary::Periodic,
                bytes: 2.0 * grid.len() as f64 * 4.0,
                input: &input,
            };
            run_case(&case, &mut out, &all, runs, &mut copy);
        }
    }
}
