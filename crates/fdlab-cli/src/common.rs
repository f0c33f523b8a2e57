//! What the subcommands share: the backend switch, output paths, progress bars, metadata.

use anyhow::{bail, Context, Result};
use fdlab::{Backend, BackendKind};
use fdlab_bench::Meta;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

/// `--backend`'s parser: the one [`BackendKind`], its values and their help listed by
/// `--help`, `gpu` taken for `cuda`.
pub fn backend_parser() -> impl clap::builder::TypedValueParser<Value = BackendKind> {
    use clap::builder::TypedValueParser;
    let values = BackendKind::ALL
        .map(|k| clap::builder::PossibleValue::new(k.name()).help(k.help()))
        .into_iter()
        .chain([clap::builder::PossibleValue::new("gpu").hide(true)]);
    clap::builder::PossibleValuesParser::new(values)
        .map(|s| s.parse::<BackendKind>().unwrap_or_default())
}

/// The backend the `FDLAB_BACKEND` configuration variable names (read through
/// `fdlab_core::config`), `auto` when it is unset; an error naming the variable when its
/// value is not a backend.
pub fn configured_backend() -> Result<BackendKind> {
    BackendKind::from_env().map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}; use auto, cpu or cuda, or unset it",
            fdlab_core::config::BACKEND
        )
    })
}

/// `--backend`'s default for `bench` and `check`: [`configured_backend`], `auto` when that is
/// an error (which `main` reports before parsing).
pub fn configured_or_auto() -> BackendKind {
    configured_backend().unwrap_or_default()
}

/// Opens the backend `kind` names; `auto` says in one line why it fell back to the CPU.
pub fn open_backend(kind: BackendKind) -> Result<Backend> {
    let b = Backend::open(kind).with_context(|| format!("--backend {kind} was asked for"))?;
    if let Some(why) = b.fallback_reason() {
        eprintln!("fdlab: using the CPU ({why})");
    }
    Ok(b)
}

/// Refuses GPU-only options on the CPU instead of ignoring them.
pub fn refuse_gpu_only(backend: &Backend, given: &[(&str, bool)]) -> Result<()> {
    if backend.device().is_none()
        && let Some((flag, _)) = given.iter().find(|(_, on)| *on)
    {
        bail!("{flag} applies to the CUDA backend only; drop it or use --backend cuda");
    }
    Ok(())
}

/// What an output file holds, for checking its path before a run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OutKind {
    /// JSON results.
    Json,
    /// A PNG chart.
    Png,
}

/// Checks an output path before any work: not a folder, the right extension, its folder
/// creatable. A run that can only fail at its end must fail at its start.
pub fn check_out_path(flag: &str, path: &Path, kind: OutKind) -> Result<()> {
    if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') {
        bail!(
            "{flag} {}: is a folder; give a file name, e.g. {}",
            path.display(),
            path.join(match kind {
                OutKind::Json => "results.json",
                OutKind::Png => "roofline.png",
            })
            .display()
        );
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if kind == OutKind::Png && ext.as_deref() != Some("png") {
        bail!(
            "{flag} {}: charts are written as PNG; give a file name ending in .png",
            path.display()
        );
    }
    if kind == OutKind::Json && ext.as_deref() == Some("png") {
        bail!(
            "{flag} {}: results are written as JSON; give a file name ending in .json",
            path.display()
        );
    }
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{flag} {}: cannot create its folder", path.display()))?;
            dir
        }
        None => Path::new("."),
    };
    // Outputs are written to a temporary name in their folder and renamed (`write_json`), so
    // what must hold is that the folder takes a new file: try one now, under a name no output
    // uses, rather than learn it after the run.
    let probe = dir.join(format!(".fdlab-write-test-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .with_context(|| {
            format!(
                "{flag} {}: cannot write in {}",
                path.display(),
                dir.display()
            )
        })?;
    // Best effort: a probe that cannot be removed is harmless, and the run can still write.
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The results file of a run (`--json`, else the default under [`RESULTS_DIR`]), checked
/// before any work with [`check_out_path`].
pub fn results_path(given: Option<PathBuf>, what: &str, backend: &str) -> Result<PathBuf> {
    let flag = if given.is_some() {
        "--json"
    } else {
        "the results file"
    };
    let path = json_path(given, what, backend);
    check_out_path(flag, &path, OutKind::Json)?;
    Ok(path)
}

/// Refuses two outputs that name the same file (one would overwrite the other).
pub fn check_distinct(a: (&str, &Path), b: (&str, &Path)) -> Result<()> {
    let canon = |p: &Path| {
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::canonicalize(parent)
            .unwrap_or_else(|_| parent.to_path_buf())
            .join(p.file_name().unwrap_or_default())
    };
    if canon(a.1) == canon(b.1) {
        bail!(
            "{} and {} both name {}; give two different files",
            a.0,
            b.0,
            a.1.display()
        );
    }
    Ok(())
}

/// Folder of the JSON written when `--json` is not given (git-ignored).
pub const RESULTS_DIR: &str = "fdlab-results";

/// `--json` or, when not given, `fdlab-results/<what>-<backend>-<UTC time>.json`.
pub fn json_path(given: Option<PathBuf>, what: &str, backend: &str) -> PathBuf {
    given.unwrap_or_else(|| {
        let stamp = now_utc().replace([':', '-'], "");
        PathBuf::from(RESULTS_DIR).join(format!("{what}-{backend}-{stamp}.json"))
    })
}

/// Writes `value` as pretty JSON, creating the folder.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(value)?;
    // Written next to the target, then renamed: a run stopped mid-write leaves no half file.
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Prints a line above the progress bar; unlike `ProgressBar::println`, also when the bar is
/// hidden because the output is not a terminal (logs of device runs).
pub fn say(pb: &ProgressBar, line: impl AsRef<str>) {
    pb.suspend(|| println!("{}", line.as_ref()));
}

/// A bar with done / total, the current item and the ETA.
pub fn progress_bar(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} (ETA {eta}) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// The current UTC time, ISO 8601.
pub fn now_utc() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Version, commit, date and command line.
pub fn fill_meta(meta: &mut Meta) {
    meta.fdlab_version = env!("CARGO_PKG_VERSION").into();
    meta.git_sha = env!("FDLAB_GIT_SHA").into();
    meta.date = now_utc();
    meta.command = std::env::args().collect::<Vec<_>>().join(" ");
}

/// Checks `--size`/`--depth` and builds the case-list options.
pub fn suite_options(
    size: Option<usize>,
    depth: Option<usize>,
    precision: Option<&str>,
) -> Result<fdlab_bench::SuiteOptions> {
    for (flag, v) in [("--size", size), ("--depth", depth)] {
        if let Some(n) = v
            && !(9..=1 << 15).contains(&n)
        {
            bail!("{flag} {n}: give 9 to 32768 points per axis (the 8th-order stencils need at least 9)");
        }
    }
    Ok(fdlab_bench::SuiteOptions {
        size,
        depth,
        precision: precision.map(str::parse).transpose()?,
    })
}

/// The text of an error for the terminal: the error and each cause in its chain, joined by
/// `: `, leaving out a cause whose message the text already holds. fdlab's error types put
/// their cause's message in their own (so that a library user printing one error sees all of
/// it) and also report it as the source, so printing the whole chain would say it twice.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let m = cause.to_string();
        if text.contains(&m) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&m);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_text;
    use anyhow::Context;

    #[test]
    fn error_text_says_each_cause_once() {
        // An fdlab error that holds its source's message in its own.
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e = fdlab_solvers::Error::Io {
            path: "case.toml".into(),
            source: io,
        };
        let text = error_text(&anyhow::Error::new(e));
        assert_eq!(text, "case.toml: No such file or directory");
        // A context over it adds what the error does not already say.
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Err::<(), _>(io)
            .context("saving the tune cache")
            .unwrap_err();
        assert_eq!(error_text(&e), "saving the tune cache: gone");
    }
}
