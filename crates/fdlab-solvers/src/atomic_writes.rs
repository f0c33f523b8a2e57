//! Every file a run writes appears under its final name only when it is complete: the
//! functions of [`fdlab_output::atomic`] (which has the details), returning this crate's
//! [`Error`](crate::Error).

use crate::error::Result;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

pub use fdlab_output::atomic::{temp_path, TEMP_PREFIX};

/// Write `path` through `fill` atomically (see [`fdlab_output::atomic::write_with`]).
pub fn write_with<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
{
    Ok(fdlab_output::atomic::write_with(path, fill)?)
}

/// Write `bytes` to `path` atomically (see [`fdlab_output::atomic::write`]).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(fdlab_output::atomic::write(path, bytes)?)
}

/// Rename a finished temporary file into place, or remove it (see
/// [`fdlab_output::atomic::finish`]).
pub fn finish(tmp: &Path, path: &Path, done: std::io::Result<()>) -> Result<()> {
    Ok(fdlab_output::atomic::finish(tmp, path, done)?)
}

/// Remove the temporaries a killed run left in `dir` (see
/// [`fdlab_output::atomic::remove_stale`]).
pub fn remove_stale(dir: &Path) -> Result<usize> {
    Ok(fdlab_output::atomic::remove_stale(dir)?)
}

/// Remove the entries of `dir` whose names `stale` accepts (see
/// [`fdlab_output::atomic::remove_named`]).
pub fn remove_named(dir: &Path, stale: impl Fn(&str) -> bool) -> Result<usize> {
    Ok(fdlab_output::atomic::remove_named(dir, stale)?)
}
