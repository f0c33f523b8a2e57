//! The process environment that fdlab reads, in one place: what a user configures (the
//! backend, the cache folders, where kernel sources go, the distributed timeout) and what an
//! MPI launcher sets. Each variable is a row of [`VARS`] with its meaning and default, and
//! has a typed getter here; nothing else in the library reads the environment. Performance
//! choices are not configuration: they are typed options of the APIs that make them, so that
//! what ran is what the call and its record say.
//!
//! `docs/configuration.md` holds the same table for users, and `fdlab info` prints every
//! variable with its current value.
//!
//! ```
//! use fdlab_core::config;
//! assert!(config::VARS.iter().any(|v| v.name == config::BACKEND));
//! // Unset or not, the timeout has a value.
//! assert!(config::dist_timeout().as_secs_f64() > 0.0);
//! ```

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The backend to open when the caller leaves it to the environment.
pub const BACKEND: &str = "FDLAB_BACKEND";
/// The compiled-kernel cache folder.
pub const KERNEL_CACHE: &str = "FDLAB_KERNEL_CACHE";
/// The tune cache file.
pub const TUNE_CACHE: &str = "FDLAB_TUNE_CACHE";
/// Where generated CUDA sources are written.
pub const DUMP_SOURCE: &str = "FDLAB_DUMP_SOURCE";
/// How long a rank of a split run waits for a peer.
pub const DIST_TIMEOUT_S: &str = "FDLAB_DIST_TIMEOUT_S";
/// The base of the user's cache folders (XDG base directories).
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// The user's home folder.
pub const HOME: &str = "HOME";
/// The variables an MPI launcher sets for each process it starts (Open MPI, MPICH, PMIx).
pub const MPI_LAUNCHER: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// Seconds a rank waits for a peer when [`DIST_TIMEOUT_S`] is unset: far above a step plus
/// an output write on the grids a CPU rank holds, far below "hung".
pub const DIST_TIMEOUT_DEFAULT_S: f64 = 60.0;

/// One environment variable fdlab reads.
///
/// ```
/// let v = &fdlab_core::config::VARS[0];
/// assert!(v.name.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// What it does, in one line.
    pub meaning: &'static str,
    /// What fdlab does when it is unset.
    pub default: &'static str,
}

/// Every variable fdlab reads, in the order `fdlab info` and `docs/configuration.md` list
/// them.
pub const VARS: &[Var] = &[
    Var {
        name: BACKEND,
        meaning: "backend to open: `auto`, `cpu` or `cuda` (read by `Backend::from_env`, \
                  the examples, and `fdlab` commands whose `--backend` is not given)",
        default: "`auto`: the first GPU when one is usable, else the CPU",
    },
    Var {
        name: KERNEL_CACHE,
        meaning: "folder of compiled kernels; empty or `off` turns the cache off",
        default: "`$XDG_CACHE_HOME/fdlab/kernels`, else `$HOME/.cache/fdlab/kernels`",
    },
    Var {
        name: TUNE_CACHE,
        meaning: "tune cache file: `fdlab tune` writes its winners there, plans read them; \
                  empty or `off`: no tune cache",
        default: "`$XDG_CACHE_HOME/fdlab/tune.json`, else `$HOME/.cache/fdlab/tune.json`",
    },
    Var {
        name: DUMP_SOURCE,
        meaning: "folder where the CUDA source of every kernel compiled is written (and \
                  the source of one that fails to compile)",
        default: "unset: only a source that fails to compile is written, to the system \
                  temporary folder",
    },
    Var {
        name: DIST_TIMEOUT_S,
        meaning: "seconds a rank of a split run waits for a peer before it ends the job",
        default: "`60`",
    },
    Var {
        name: XDG_CACHE_HOME,
        meaning: "base of the cache folders above (an absolute path)",
        default: "`$HOME/.cache`",
    },
    Var {
        name: HOME,
        meaning: "the user's home folder, for the cache folders above",
        default: "set by the system; without it and `XDG_CACHE_HOME` there are no caches",
    },
    Var {
        name: MPI_LAUNCHER[0],
        meaning: "set by Open MPI's `mpirun`: `fdlab run` joins the MPI job",
        default: "unset: not under an MPI launcher",
    },
    Var {
        name: MPI_LAUNCHER[1],
        meaning: "set by MPICH's and Slurm's launchers: `fdlab run` joins the MPI job",
        default: "unset: not under an MPI launcher",
    },
    Var {
        name: MPI_LAUNCHER[2],
        meaning: "set by PMIx launchers: `fdlab run` joins the MPI job",
        default: "unset: not under an MPI launcher",
    },
];

/// The raw value of `name`; the one read of the process environment.
fn raw(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The current value of variable `name` as text (lossy for non-UTF-8), `None` when unset: for
/// listing the configuration, not for deciding anything.
///
/// ```
/// assert_eq!(fdlab_core::config::value("FDLAB_NO_SUCH_VARIABLE"), None);
/// ```
pub fn value(name: &str) -> Option<String> {
    raw(name).map(|v| v.to_string_lossy().into_owned())
}

/// The backend [`BACKEND`] names, as given (the front parses it); `None` when unset.
///
/// ```
/// let _ = fdlab_core::config::backend();
/// ```
pub fn backend() -> Option<String> {
    value(BACKEND)
}

/// The compiled-kernel cache folder ([`KERNEL_CACHE`], else under the user's cache folder);
/// `None` when turned off or when there is no cache folder.
///
/// ```
/// if let Some(dir) = fdlab_core::config::kernel_cache_dir() {
///     println!("kernels are cached in {}", dir.display());
/// }
/// ```
pub fn kernel_cache_dir() -> Option<PathBuf> {
    resolve_cache(
        raw(KERNEL_CACHE).map(PathBuf::from),
        raw(XDG_CACHE_HOME).map(PathBuf::from),
        raw(HOME).map(PathBuf::from),
        "kernels",
    )
}

/// The tune cache file ([`TUNE_CACHE`], else `tune.json` under the user's cache folder);
/// `None` when turned off or when there is no cache folder.
///
/// ```
/// if let Some(path) = fdlab_core::config::tune_cache_path() {
///     println!("tuned strategies are read from {}", path.display());
/// }
/// ```
pub fn tune_cache_path() -> Option<PathBuf> {
    resolve_cache(
        raw(TUNE_CACHE).map(PathBuf::from),
        raw(XDG_CACHE_HOME).map(PathBuf::from),
        raw(HOME).map(PathBuf::from),
        "tune.json",
    )
}

/// A cache location from the values of its variable (`explicit`), `XDG_CACHE_HOME` and
/// `HOME`: the explicit path unless empty or `off` (no cache), else `leaf` under
/// `$XDG_CACHE_HOME/fdlab` (when absolute), else under `$HOME/.cache/fdlab`.
///
/// ```
/// use fdlab_core::config::resolve_cache;
/// use std::path::PathBuf;
/// let home = Some(PathBuf::from("/home/u"));
/// assert_eq!(
///     resolve_cache(None, None, home.clone(), "kernels"),
///     Some("/home/u/.cache/fdlab/kernels".into())
/// );
/// assert_eq!(resolve_cache(Some("off".into()), None, home.clone(), "kernels"), None);
/// assert_eq!(
///     resolve_cache(None, Some("relative".into()), home, "tune.json"),
///     Some("/home/u/.cache/fdlab/tune.json".into())
/// );
/// ```
pub fn resolve_cache(
    explicit: Option<PathBuf>,
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
    leaf: &str,
) -> Option<PathBuf> {
    if let Some(path) = explicit {
        let text = path.as_os_str();
        return (!text.is_empty() && text != "off").then_some(path);
    }
    if let Some(x) = xdg.filter(|x| x.is_absolute()) {
        return Some(x.join("fdlab").join(leaf));
    }
    home.filter(|h| !h.as_os_str().is_empty())
        .map(|h| h.join(".cache").join("fdlab").join(leaf))
}

/// The folder [`DUMP_SOURCE`] names, where every generated kernel source is written; `None`
/// when unset or empty.
///
/// ```
/// let _ = fdlab_core::config::dump_source_dir();
/// ```
pub fn dump_source_dir() -> Option<PathBuf> {
    raw(DUMP_SOURCE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// How long a rank of a split run waits for a peer: [`DIST_TIMEOUT_S`] seconds when it is a
/// positive number, else [`DIST_TIMEOUT_DEFAULT_S`].
///
/// ```
/// assert!(fdlab_core::config::dist_timeout().as_secs_f64() > 0.0);
/// ```
pub fn dist_timeout() -> Duration {
    parse_timeout(value(DIST_TIMEOUT_S).as_deref())
}

/// [`dist_timeout`] from the variable's value.
///
/// ```
/// use fdlab_core::config::parse_timeout;
/// assert_eq!(parse_timeout(Some("5")).as_secs(), 5);
/// assert_eq!(parse_timeout(Some("-1")).as_secs(), 60);
/// assert_eq!(parse_timeout(None).as_secs(), 60);
/// ```
pub fn parse_timeout(text: Option<&str>) -> Duration {
    let secs = text
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(DIST_TIMEOUT_DEFAULT_S);
    Duration::from_secs_f64(secs)
}

/// Whether this process was started by an MPI launcher (`mpirun`, `srun`): one of
/// [`MPI_LAUNCHER`] is set.
///
/// ```
/// let _ = fdlab_core::config::mpi_launched();
/// ```
pub fn mpi_launched() -> bool {
    MPI_LAUNCHER.iter().any(|v| raw(v).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of the first table in `markdown` whose header's first cell is `Variable`:
    /// each row's cells, the first without its backquotes.
    fn table_rows(markdown: &str) -> Vec<Vec<String>> {
        let mut rows = vec![];
        let mut in_table = false;
        for line in markdown.lines().map(str::trim) {
            if !line.starts_with('|') {
                if in_table {
                    break;
                }
                continue;
            }
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            if !in_table {
                in_table = cells[0] == "Variable";
                continue;
            }
            if cells[0].chars().all(|c| c == '-' || c == ':') {
                continue;
            }
            let mut row = cells;
            row[0] = row[0].trim_matches('`').to_string();
            rows.push(row);
        }
        rows
    }

    #[test]
    fn the_user_doc_lists_exactly_the_variables_of_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let doc = std::fs::read_to_string(path).expect("docs/configuration.md");
        let rows = table_rows(&doc);
        let listed: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        let known: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(listed, known, "docs/configuration.md against config::VARS");
        // The meaning and the default too, word for word.
        for (row, v) in rows.iter().zip(VARS) {
            assert_eq!(row[1..], [v.meaning, v.default], "{}", v.name);
        }
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<&str> = VARS.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VARS.len());
    }

    #[test]
    fn the_table_parser_reads_a_markdown_table() {
        let md =
            "text\n\n| Variable | Meaning |\n| --- | --- |\n| `A_B` | x |\n| `C` | y |\n\nafter\n";
        let rows = table_rows(md);
        let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, ["A_B", "C"]);
        assert_eq!(rows[1][1], "y");
    }
}
