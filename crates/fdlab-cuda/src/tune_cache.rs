//! The tune cache: the strategy `fdlab tune` measured fastest for a (device, stencils,
//! boundary, shape, precision), kept in one JSON file that every plan on that device reads
//! ([`crate::choose::candidates`]). The tuner measures; this module owns the file.
//!
//! ```
//! use fdlab_core::{Boundary, Grid, Precision, Stencil};
//! use fdlab_cuda::tune_cache::{CaseKey, Entry, TuneCache};
//! let g = Grid::unit(&[64, 64, 64])?;
//! let lap = [Stencil::laplacian(&g, 2)?];
//! let case = CaseKey { stencils: &lap, boundary: Boundary::Periodic, shape: g.shape(),
//!     precision: Precision::F32 };
//! let mut cache = TuneCache::default();
//! cache.insert("NVIDIA H200", &case, Entry::new("zmarch-32x4-v4-c64-u4-r1"));
//! assert_eq!(cache.winner("NVIDIA H200", case).unwrap().to_string(), "zmarch-32x4-v4-c64-u4-r1");
//! assert!(cache.winner("NVIDIA H100 80GB HBM3", case).is_none());
//! # Ok::<(), fdlab_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::strategy::Strategy;
use fdlab_core::{Boundary, Precision, Stencil};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One remembered winner.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The winning strategy's name (parse with `Strategy::from_str`).
    pub strategy: String,
    /// Its median time, ms.
    pub time_ms: f64,
    /// Its effective bandwidth, GB/s.
    pub gbps: f64,
    /// Candidates timed.
    pub candidates: usize,
    /// When it was tuned.
    pub date: String,
}

impl Entry {
    /// An entry for `strategy` with no measurement attached.
    ///
    /// ```
    /// assert_eq!(fdlab_cuda::tune_cache::Entry::new("naive-32x4x1").candidates, 0);
    /// ```
    pub fn new(strategy: &str) -> Entry {
        Entry {
            strategy: strategy.into(),
            time_ms: 0.0,
            gbps: 0.0,
            candidates: 0,
            date: String::new(),
        }
    }
}

/// What a cache entry is for, apart from the device: the stencils, boundary, shape and
/// precision of a plan.
#[derive(Debug, Clone, Copy)]
pub struct CaseKey<'a> {
    /// The stencils, in output order.
    pub stencils: &'a [Stencil],
    /// The boundary.
    pub boundary: Boundary,
    /// The grid's shape (`[nx, ny, nz]`, 1 for missing axes).
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
}

/// The cache key of `case` on the device named `device` (as the driver names it): the
/// format of the files `fdlab tune` has written, `device|labels|boundary|NXxNYxNZ|precision`.
///
/// ```
/// use fdlab_core::{Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::tune_cache::{key, CaseKey};
/// let g = Grid::unit(&[512, 512, 512])?;
/// let lap = [Stencil::laplacian(&g, 2)?];
/// let case = CaseKey { stencils: &lap, boundary: Boundary::Dirichlet, shape: g.shape(),
///     precision: Precision::F64 };
/// assert_eq!(key("NVIDIA H200", &case), "NVIDIA H200|lap/2|dirichlet|512x512x512|f64");
/// # Ok::<(), fdlab_core::Error>(())
/// ```
pub fn key(device: &str, case: &CaseKey<'_>) -> String {
    let s = case.shape;
    let labels: Vec<String> = case.stencils.iter().map(|s| s.label()).collect();
    format!(
        "{device}|{}|{}|{}x{}x{}|{}",
        labels.join("+"),
        case.boundary,
        s[0],
        s[1],
        s[2],
        case.precision
    )
}

/// The cache file: key ([`key`]) → winner.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct TuneCache {
    /// Winners by [`key`].
    pub entries: BTreeMap<String, Entry>,
}

impl TuneCache {
    /// The cache in `path`: empty when the file does not exist; an error when it cannot be
    /// read or is not a tune cache.
    ///
    /// ```
    /// use fdlab_cuda::tune_cache::TuneCache;
    /// let missing = std::env::temp_dir().join("fdlab-no-such-tune-cache.json");
    /// assert!(TuneCache::read(&missing)?.entries.is_empty());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn read(path: &Path) -> Result<TuneCache> {
        let bad = |detail: String| Error::TuneCache {
            path: path.display().to_string(),
            detail,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TuneCache::default()),
            Err(e) => return Err(bad(e.to_string())),
        };
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    /// The cache in `path` (`None`: no cache, empty); a file that cannot be read or parsed is
    /// reported in one warning on stderr and taken as empty, so that the defaults run: tuning
    /// is an optimisation, never a reason to fail.
    ///
    /// ```
    /// use fdlab_cuda::tune_cache::TuneCache;
    /// assert!(TuneCache::load_from(None).entries.is_empty());
    /// ```
    pub fn load_from(path: Option<&Path>) -> TuneCache {
        let Some(path) = path else {
            return TuneCache::default();
        };
        TuneCache::read(path).unwrap_or_else(|e| {
            eprintln!("fdlab: warning: {e}; using the default strategies");
            TuneCache::default()
        })
    }

    /// The cache the configuration names ([`fdlab_core::config::tune_cache_path`]), as
    /// [`TuneCache::load_from`] reads it.
    ///
    /// ```
    /// let cache = fdlab_cuda::tune_cache::TuneCache::load();
    /// println!("{} tuned cases", cache.entries.len());
    /// ```
    pub fn load() -> TuneCache {
        TuneCache::load_from(fdlab_core::config::tune_cache_path().as_deref())
    }

    /// Writes the cache to `path` (a temporary name in its folder, then renamed, so that an
    /// interrupted save never leaves a truncated cache) and returns `path`.
    ///
    /// ```
    /// use fdlab_cuda::tune_cache::TuneCache;
    /// let path = std::env::temp_dir().join(format!("fdlab-tc-doc-{}.json", std::process::id()));
    /// TuneCache::default().save_to(&path)?;
    /// assert!(TuneCache::read(&path)?.entries.is_empty());
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn save_to(&self, path: &Path) -> Result<PathBuf> {
        let bad = |detail: String| Error::TuneCache {
            path: path.display().to_string(),
            detail,
        };
        if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(d).map_err(|e| bad(e.to_string()))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| bad(e.to_string()))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(|e| bad(e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| bad(e.to_string()))?;
        Ok(path.to_path_buf())
    }

    /// Writes the cache where the configuration names it ([`TuneCache::save_to`]); an error
    /// when the tune cache is off or there is no cache folder.
    ///
    /// ```no_run
    /// let path = fdlab_cuda::tune_cache::TuneCache::load().save()?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn save(&self) -> Result<PathBuf> {
        let path = fdlab_core::config::tune_cache_path().ok_or_else(|| Error::TuneCache {
            path: "(none)".into(),
            detail: "the tune cache is off or there is no cache folder: set HOME, or \
                     FDLAB_TUNE_CACHE to a file"
                .into(),
        })?;
        self.save_to(&path)
    }

    /// Remembers `entry` for `case` on `device`.
    pub fn insert(&mut self, device: &str, case: &CaseKey<'_>, entry: Entry) {
        self.entries.insert(key(device, case), entry);
    }

    /// The remembered winner for `case` on `device`, if there is one and its name still
    /// parses.
    pub fn winner<'a>(&self, device: &str, case: impl Into<CaseKey<'a>>) -> Option<Strategy> {
        self.entries
            .get(&key(device, &case.into()))
            .and_then(|e| e.strategy.parse().ok())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use fdlab_core::Grid;

    /// A file of its own under the system temporary folder for test `name`.
    pub(crate) fn temp_file(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("fdlab-tune-{name}-{}.json", std::process::id()))
    }

    #[test]
    fn the_committed_h200_cache_loads_and_matches_its_cases() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench/results/h200/tune-cache.json"
        );
        let cache = TuneCache::read(Path::new(path)).unwrap();
        assert!(cache.entries.len() >= 10);
        for e in cache.entries.values() {
            e.strategy.parse::<Strategy>().unwrap();
        }
        let g = Grid::unit(&[512, 512, 512]).unwrap();
        let lap = [Stencil::laplacian(&g, 2).unwrap()];
        let case = CaseKey {
            stencils: &lap,
            boundary: Boundary::Dirichlet,
            shape: g.shape(),
            precision: Precision::F64,
        };
        assert!(cache.winner("NVIDIA H200", case).is_some());
    }

    #[test]
    fn a_corrupt_or_unreadable_file_is_an_error_to_read_and_empty_to_load() {
        let path = temp_file("corrupt");
        std::fs::write(&path, "{ not json").unwrap();
        let e = TuneCache::read(&path).unwrap_err();
        assert!(e.to_string().contains("tune cache"), "{e}");
        assert!(TuneCache::load_from(Some(&path)).entries.is_empty());
        std::fs::remove_file(&path).ok();
        // A folder where the file should be cannot be read: also empty, never a panic.
        let dir = std::env::temp_dir();
        assert!(TuneCache::load_from(Some(&dir)).entries.is_empty());
    }

    #[test]
    fn a_saved_cache_reads_back() {
        let path = temp_file("round-trip");
        let g = Grid::unit(&[32, 32, 32]).unwrap();
        let lap = [Stencil::laplacian(&g, 2).unwrap()];
        let case = CaseKey {
            stencils: &lap,
            boundary: Boundary::Periodic,
            shape: g.shape(),
            precision: Precision::F32,
        };
        let mut cache = TuneCache::default();
        cache.insert("GPU", &case, Entry::new("naive-32x4x1"));
        // An entry whose name no longer parses is no winner.
        cache
            .entries
            .insert("GPU|x|periodic|1x1x1|f32".into(), Entry::new("no-such"));
        assert_eq!(cache.save_to(&path).unwrap(), path);
        let back = TuneCache::read(&path).unwrap();
        assert_eq!(back, cache);
        assert_eq!(
            back.winner("GPU", case).map(|s| s.to_string()),
            Some("naive-32x4x1".into())
        );
        assert!(back.winner("other GPU", case).is_none());
        std::fs::remove_file(&path).ok();
    }
}
