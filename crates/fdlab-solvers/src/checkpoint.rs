//! Atomic checkpoints: a directory with a JSON header and one raw file per state part.
//!
//! A checkpoint is written under a temporary name, every file and the directory are synced,
//! then it is renamed into place and the parent is synced: a kill at any moment leaves either
//! the complete new checkpoint or none, and never touches the previous one.

use crate::error::{io_err, Error, Result};
use crate::stepper::StatePart;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The header of a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// fdlab version that wrote it.
    pub version: String,
    /// Hash of the case (see [`crate::case::Case::hash`]).
    pub case_hash: u64,
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Step reached.
    pub step: u64,
    /// Simulated time reached.
    pub time: f64,
    /// Backend that wrote it.
    pub backend: String,
    /// State parts with their FNV-1a hashes, in order.
    pub parts: Vec<(String, u64)>,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).map_err(io_err(path))?;
    f.write_all(bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))
}

fn sync_dir(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|d| d.sync_all())
        .map_err(io_err(path))
}

/// Write a checkpoint as `root/step-NNNNNNNNN`, keeping the `keep` newest ones. Returns its path.
pub fn write(root: &Path, header: &Header, parts: &[StatePart], keep: usize) -> Result<PathBuf> {
    std::fs::create_dir_all(root).map_err(io_err(root))?;
    let name = format!("step-{:09}", header.step);
    let tmp = root.join(format!(".tmp-{name}-{}", std::process::id()));
    let dst = root.join(&name);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io_err(&tmp))?;
    }
    std::fs::create_dir(&tmp).map_err(io_err(&tmp))?;
    let mut h = header.clone();
    h.parts = parts.iter().map(|(n, b)| (n.clone(), fnv(b))).collect();
    for (n, b) in parts {
        write_synced(&tmp.join(format!("{n}.bin")), b)?;
    }
    let json = serde_json::to_vec_pretty(&h).map_err(|e| Error::Invalid(e.to_string()))?;
    write_synced(&tmp.join("header.json"), &json)?;
    sync_dir(&tmp)?;
    if dst.exists() {
        discard(root, &dst)?;
    }
    std::fs::rename(&tmp, &dst).map_err(io_err(&dst))?;
    sync_dir(root)?;
    let mut all = list(root)?;
    while all.len() > keep {
        discard(root, &all.remove(0))?;
    }
    Ok(dst)
}

/// Remove a checkpoint: renamed out of the `step-*` names first, so that a kill while
/// deleting never leaves a partial checkpoint under a valid name.
fn discard(root: &Path, dir: &Path) -> Result<()> {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("old");
    let trash = root.join(format!(".old-{name}-{}", std::process::id()));
    std::fs::rename(dir, &trash).map_err(io_err(dir))?;
    sync_dir(root)?;
    std::fs::remove_dir_all(&trash).map_err(io_err(&trash))
}

/// Remove what a killed writer left under `root`: unfinished checkpoints (`.tmp-step-*`) and
/// ones it was discarding (`.old-step-*`). Never touches a complete `step-*` checkpoint.
/// Returns how many were removed (none when `root` does not exist).
pub fn remove_stale(root: &Path) -> Result<usize> {
    crate::atomic::remove_named(root, |name| {
        name.starts_with(".tmp-step-") || name.starts_with(".old-step-")
    })
}

/// Complete checkpoints under `root`, oldest first.
pub fn list(root: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(io_err(root))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("step-"))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Read a checkpoint: `dir` is one checkpoint, or a directory of them (the newest is used).
/// Every part is checked against its hash.
pub fn read(dir: &Path) -> Result<(PathBuf, Header, Vec<StatePart>)> {
    let dir = if dir.join("header.json").exists() {
        dir.to_path_buf()
    } else {
        list(dir)?.pop().ok_or_else(|| Error::Checkpoint {
            path: dir.to_path_buf(),
            reason: "no checkpoint found here (expected header.json or step-* directories)".into(),
        })?
    };
    let refuse = |reason: String| Error::Checkpoint {
        path: dir.clone(),
        reason,
    };
    let hp = dir.join("header.json");
    let text = std::fs::read(&hp).map_err(io_err(&hp))?;
    let header: Header =
        serde_json::from_slice(&text).map_err(|e| refuse(format!("unreadable header: {e}")))?;
    let mut parts = vec![];
    for (n, hash) in &header.parts {
        let p = dir.join(format!("{n}.bin"));
        let b = std::fs::read(&p).map_err(io_err(&p))?;
        if fnv(&b) != *hash {
            return Err(refuse(format!("part {n} is corrupt (hash mismatch)")));
        }
        parts.push((n.clone(), b));
    }
    Ok((dir, header, parts))
}

/// Refuse a checkpoint written by another case, version, precision or backend.
pub fn check(dir: &Path, h: &Header, expect: &Header) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::Checkpoint {
            path: dir.to_path_buf(),
            reason,
        })
    };
    if h.version != expect.version {
        return refuse(format!(
            "written by fdlab {}, this is {}",
            h.version, expect.version
        ));
    }
    if h.precision != expect.precision {
        return refuse(format!(
            "precision {} but the case asks for {}",
            h.precision, expect.precision
        ));
    }
    if h.case_hash != expect.case_hash {
        return refuse(
            "written for another case (the physics, grid or time settings differ)".into(),
        );
    }
    if h.backend != expect.backend {
        return refuse(format!(
            "written on the {} backend, this run uses {}",
            h.backend, expect.backend
        ));
    }
    Ok(())
}
