//! The directory a run writes: which one, whether it may, and what in it belongs to a run.
//!
//! A run owns a fixed set of names in its directory ([`is_run_output`]). A fresh run refuses a
//! directory that already holds any of them unless asked to overwrite (then it removes exactly
//! those, and says so); files of other names are never touched. A resumed run writes into the
//! directory its checkpoint belongs to, so it continues the run it was part of.

use crate::atomic::{remove_stale, TEMP_PREFIX};
use crate::case::{Case, Physics};
use crate::error::{io_err, Error, Result};
use crate::run_options::RunOptions;
use crate::setup::Prepared;
use std::path::{Path, PathBuf};

/// The name of the checkpoints folder inside a run directory.
pub const CHECKPOINTS: &str = "checkpoints";

/// Whether `name` (an entry of a run directory) is something a run writes.
pub fn is_run_output(name: &str, is_dir: bool) -> bool {
    let numbered = |prefix: &str, ext: &str| {
        name.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(ext))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if is_dir {
        return name == "frames"
            || name == CHECKPOINTS
            || name == crate::run_shots::SHOTS
            || name.starts_with(TEMP_PREFIX);
    }
    matches!(
        name,
        "summary.json"
            | "final.png"
            | "animation.gif"
            | "seismogram.npy"
            | "seismogram.png"
            | "probes.json"
            | "monitors.json"
            | "flux.json"
    ) || name.starts_with(TEMP_PREFIX)
        || name.ends_with(".pvd")
        || numbered("field_", ".npy")
        || numbered("field_", ".vti")
        || numbered("probe_", ".npy")
        || numbered("monitor_", ".npy")
        || numbered("flux_", ".npy")
}

/// The run outputs found in `dir`, sorted (none when it does not exist).
pub fn run_outputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut v: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            is_run_output(&e.file_name().to_string_lossy(), is_dir)
        })
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The run directory a checkpoint belongs to: `RUN/checkpoints/step-N` or `RUN/checkpoints`
/// give `RUN`.
pub fn checkpoint_run_dir(resume: &Path) -> PathBuf {
    let root = if resume.join("header.json").exists() {
        resume.parent().unwrap_or(Path::new("."))
    } else {
        resume
    };
    match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where a run writes: on resume, the checkpoint's run directory (an `--out` naming another
/// is refused); else `--out`, else the case's `[output] dir`.
pub fn out_dir(case: &Case, opts: &RunOptions) -> Result<PathBuf> {
    let Some(resume) = &opts.resume else {
        return Ok(opts
            .out_dir
            .clone()
            .unwrap_or_else(|| case.resolve(&case.spec.output.dir)));
    };
    let run = checkpoint_run_dir(resume);
    if let Some(out) = &opts.out_dir
        && !same_dir(out, &run)
    {
        return Err(Error::Usage(format!(
            "--resume {} continues the run in {}, but --out asks for {}; drop --out (the \
             resumed run writes where its checkpoint is) or give --out {}",
            resume.display(),
            run.display(),
            out.display(),
            run.display()
        )));
    }
    Ok(run)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Free bytes on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized output buffer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Estimated bytes of all planned outputs and checkpoints (saturating: an estimate past
/// `u64::MAX` is simply more than any disk has).
fn planned_bytes(case: &Case, p: &Prepared, opts: &RunOptions) -> u64 {
    let cells: u64 = case
        .spec
        .grid
        .shape
        .iter()
        .fold(1u64, |a, &n| a.saturating_mul(n as u64));
    let o = &case.spec.output;
    let outputs = (p.plan.steps / (o.every as u64).max(1)).saturating_add(1);
    let per = (o.npy as u64 + o.vti as u64)
        .saturating_mul(8)
        .saturating_mul(cells)
        .saturating_add((o.frames as u64) * 300_000);
    let fields: u64 = match case.spec.physics {
        Physics::Heat => 1,
        Physics::Wave => 8,
        Physics::Fdtd => 6,
    };
    let ckpt = if opts.checkpoint_every.is_some() || opts.stop_at.is_some() {
        (3 * fields * 8).saturating_mul(cells)
    } else {
        0
    };
    outputs
        .saturating_mul(per)
        .saturating_add(ckpt)
        .saturating_add(2_000_000)
}

/// Everything about the output directory that can be refused before any work: it can be
/// created and written, it has room for the outputs, and a fresh run does not mix its files
/// with another run's (unless `opts.overwrite`). Changes nothing but creating the directory.
pub fn check(case: &Case, p: &Prepared, opts: &RunOptions) -> Result<PathBuf> {
    let dir = out_dir(case, opts)?;
    if opts.resume.is_none() && !opts.overwrite {
        let earlier = run_outputs(&dir);
        if !earlier.is_empty() {
            return Err(Error::Usage(format!(
                "{} holds the outputs of an earlier run ({}); give --overwrite to replace them, \
                 --out DIR to write elsewhere, or --resume {} to continue that run",
                dir.display(),
                describe(&earlier),
                dir.join(CHECKPOINTS).display()
            )));
        }
    }
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let probe = dir.join(format!("{TEMP_PREFIX}write-test"));
    std::fs::write(&probe, b"ok").map_err(io_err(&dir))?;
    let _ = std::fs::remove_file(&probe);
    let needed = planned_bytes(case, p, opts);
    if let Some(free) = free_bytes(&dir)
        && free < needed
    {
        return Err(Error::DiskSpace {
            path: dir,
            needed,
            free,
        });
    }
    Ok(dir)
}

/// Make `dir` ready for the run about to start: remove what a killed run left half-written
/// (temporaries, unfinished checkpoints) and, for a fresh run with `opts.overwrite`, the
/// earlier run's outputs. Returns a note for the user when something of theirs was removed.
pub fn claim(dir: &Path, opts: &RunOptions) -> Result<Option<String>> {
    remove_stale(dir)?;
    crate::checkpoint::remove_stale(&dir.join(CHECKPOINTS))?;
    if opts.resume.is_some() || !opts.overwrite {
        return Ok(None);
    }
    let earlier = run_outputs(dir);
    if earlier.is_empty() {
        return Ok(None);
    }
    for p in &earlier {
        let r = if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
        r.map_err(io_err(p))?;
    }
    Ok(Some(format!(
        "--overwrite: removed the earlier run's {} from {}",
        describe(&earlier),
        dir.display()
    )))
}

/// A short list of entries for a message: names grouped by pattern with counts.
fn describe(paths: &[PathBuf]) -> String {
    let mut groups: Vec<(String, usize)> = vec![];
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let key = match name.find(|c: char| c.is_ascii_digit()) {
            Some(i) if name.contains('_') => {
                let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
                format!("{}*.{ext}", &name[..i])
            }
            _ if p.is_dir() => format!("{name}/"),
            _ => name,
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => groups.push((key, 1)),
        }
    }
    groups
        .iter()
        .map(|(k, n)| {
            if *n > 1 {
                format!("{n} × {k}")
            } else {
                k.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_outputs_are_recognised_and_other_files_are_not() {
        for (name, dir) in [
            ("field_0000100.npy", false),
            ("field_0000100.vti", false),
            ("fields.pvd", false),
            ("summary.json", false),
            ("probe_3.npy", false),
            ("frames", true),
            ("checkpoints", true),
            (".fdlab-tmp-12-field_0000100.npy", false),
        ] {
            assert!(is_run_output(name, dir), "{name}");
        }
        for (name, dir) in [
            ("field_notes.npy", false),
            ("case.toml", false),
            ("velocity.npy", false),
            ("frames", false),
            ("data", true),
        ] {
            assert!(!is_run_output(name, dir), "{name}");
        }
    }

    #[test]
    fn a_checkpoint_belongs_to_the_run_directory_above_its_folder() {
        let d = tempfile::tempdir().unwrap();
        let step = d.path().join("run/checkpoints/step-000000010");
        std::fs::create_dir_all(&step).unwrap();
        std::fs::write(step.join("header.json"), b"{}").unwrap();
        assert_eq!(checkpoint_run_dir(&step), d.path().join("run"));
        assert_eq!(
            checkpoint_run_dir(&d.path().join("run/checkpoints")),
            d.path().join("run")
        );
        assert_eq!(checkpoint_run_dir(Path::new("checkpoints")), Path::new("."));
    }

    #[test]
    fn describe_groups_numbered_files() {
        let paths: Vec<PathBuf> = ["field_0000000.npy", "field_0000010.npy", "summary.json"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(describe(&paths), "2 × field_*.npy, summary.json");
    }
}
