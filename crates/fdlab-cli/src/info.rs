//! `fdlab info`: the backends found and the configuration read from the environment.

use anyhow::Result;
use fdlab_cuda::Device;

/// Prints the CPU and the GPU (or why there is none), then every configuration variable with
/// its value and default; with `overhead`, the host time of `plan.apply` at 64³ on a warm
/// plan and from a graph.
pub fn info(overhead: bool) -> Result<()> {
    println!(
        "fdlab {} ({})",
        env!("CARGO_PKG_VERSION"),
        env!("FDLAB_GIT_SHA")
    );
    println!(
        "cpu:  {} | {} threads | SIMD: {}",
        fdlab_bench::runner::cpu_model(),
        rayon::current_num_threads(),
        simd()
    );
    match Device::open(0) {
        Ok(d) => {
            let i = &d.info;
            let (free, total) = d.memory()?;
            println!(
                "cuda: {} | sm_{}{} | {} SMs | {:.1} GiB ({:.1} GiB free) | L2 {} MiB | driver {}.{} | NVRTC arch {}",
                i.name,
                i.compute_capability.0,
                i.compute_capability.1,
                i.sm_count,
                total as f64 / 1073741824.0,
                free as f64 / 1073741824.0,
                i.l2_bytes >> 20,
                i.driver_version / 1000,
                (i.driver_version % 1000) / 10,
                i.arch()
            );
            if overhead {
                let o = fdlab_cuda::overhead(&d, 64)?;
                println!(
                    "apply overhead at {n}³ (f32 7-point Laplacian, warm plan): host {:.2} µs per plan.apply, {:.2} µs per apply from a graph; device {:.2} µs per apply",
                    o.apply_us,
                    o.graph_us,
                    o.device_us,
                    n = o.n
                );
            }
        }
        Err(e) => println!("cuda: none: {e}"),
    }
    print!("{}", configuration());
    Ok(())
}

/// Every variable of [`fdlab_core::config::VARS`], its current value (or `unset`) and its
/// default, one per line, with the paths the caches resolve to.
pub fn configuration() -> String {
    use fdlab_core::config;
    let mut out = String::from("configuration (environment; docs/configuration.md):\n");
    let width = config::VARS.iter().map(|v| v.name.len()).max().unwrap_or(0);
    for v in config::VARS {
        let value = config::value(v.name).unwrap_or_else(|| "unset".into());
        out += &format!(
            "  {:width$}  = {value}  (default: {})\n",
            v.name,
            v.default.replace('`', "")
        );
    }
    let shown = |p: Option<std::path::PathBuf>| {
        p.map_or_else(|| "off".to_string(), |p| p.display().to_string())
    };
    out += &format!(
        "  kernel cache: {}\n  tune cache:   {}\n",
        shown(config::kernel_cache_dir()),
        shown(config::tune_cache_path())
    );
    out
}

fn simd() -> String {
    #[cfg(target_arch = "x86_64")]
    let found: Vec<&str> = [
        ("sse4.2", std::is_x86_feature_detected!("sse4.2")),
        ("avx", std::is_x86_feature_detected!("avx")),
        ("avx2", std::is_x86_feature_detected!("avx2")),
        ("fma", std::is_x86_feature_detected!("fma")),
        ("avx512f", std::is_x86_feature_detected!("avx512f")),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| *n)
    .collect();
    #[cfg(not(target_arch = "x86_64"))]
    let found: Vec<&str> = vec![];
    if found.is_empty() {
        "-".into()
    } else {
        found.join(" ")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn info_lists_every_configuration_variable() {
        let text = super::configuration();
        for v in fdlab_core::config::VARS {
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(v.name)),
                "{} missing from:\n{text}",
                v.name
            );
        }
    }
}
