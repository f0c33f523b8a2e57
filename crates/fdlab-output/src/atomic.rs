//! Every file a run writes appears under its final name only when it is complete.
//!
//! A file is written to a hidden temporary name in its own directory (same file system, so the
//! rename is atomic) and renamed into place when the writer has finished: a process killed at
//! any moment leaves either the previous file, or the complete new one, and at most a stray
//! temporary, which [`remove_stale`] clears when the next run starts in that directory.
//! Outputs are not fsynced (a killed process loses nothing the kernel has accepted; a power
//! cut can still lose them, which is the checkpoints' job, and those are synced).

use crate::error::{io_err, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The prefix of every temporary output name; nothing else in a run directory starts with it.
pub const TEMP_PREFIX: &str = ".fdlab-tmp-";

/// The temporary name `path` is written under before it is renamed.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{TEMP_PREFIX}{}-{name}", std::process::id()))
}

/// Write `path` through `fill`, which gets a buffered writer on a temporary file; the file is
/// renamed to `path` only when `fill` succeeded. On error the temporary file is removed.
pub fn write_with<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
{
    let tmp = temp_path(path);
    let done = (|| -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        fill(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    })();
    finish(&tmp, path, done)
}

/// Write `bytes` to `path` atomically (see [`write_with`]).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Rename a finished temporary file `tmp` to `path` when `done` is `Ok`; else remove `tmp`
/// and return the error. For writers (e.g. image encoders) that open the file themselves:
/// let them write [`temp_path`]`(path)`, then call this.
pub fn finish(tmp: &Path, path: &Path, done: std::io::Result<()>) -> Result<()> {
    match done {
        Ok(()) => std::fs::rename(tmp, path).map_err(io_err(path)),
        Err(e) => {
            let _ = std::fs::remove_file(tmp);
            Err(io_err(path)(e))
        }
    }
}

/// Remove the temporaries a killed run left in `dir` (not recursive); returns how many.
/// Only names starting with [`TEMP_PREFIX`] are touched.
pub fn remove_stale(dir: &Path) -> Result<usize> {
    remove_named(dir, |name| name.starts_with(TEMP_PREFIX))
}

/// Remove the entries of `dir` (files or whole folders, not recursing into others) whose
/// names `stale` accepts; returns how many. A missing `dir` has none.
pub fn remove_named(dir: &Path, stale: impl Fn(&str) -> bool) -> Result<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if stale(&e.file_name().to_string_lossy()) {
            let p = e.path();
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(io_err(&p))?;
            removed += 1;
        }
    }
    Ok(removed)
}
