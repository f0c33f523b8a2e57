//! Which backend to use, before opening it: the one choice every command, case run and API
//! takes (`--backend`, `FDLAB_BACKEND`, `RunOptions::backend`, `fdlab.Backend`).

/// Where fields live and steps run, as the user names it.
///
/// ```
/// use fdlab_core::BackendKind;
/// assert_eq!("cpu".parse::<BackendKind>().unwrap(), BackendKind::Cpu);
/// assert_eq!("GPU".parse::<BackendKind>().unwrap(), BackendKind::Cuda);
/// assert!("tpu".parse::<BackendKind>().is_err());
/// assert_eq!(BackendKind::Auto.to_string(), "auto");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BackendKind {
    /// The first GPU when one is usable, else the CPU (saying why in one line).
    #[default]
    Auto,
    /// The CPU, on all cores.
    Cpu,
    /// CUDA device 0 (`gpu` is accepted for it); an error when there is none.
    Cuda,
}

impl BackendKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [BackendKind; 3] = [BackendKind::Auto, BackendKind::Cpu, BackendKind::Cuda];

    /// The name `FromStr` takes and `Display` writes.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Auto => "auto",
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        }
    }

    /// The kind the `FDLAB_BACKEND` configuration variable names (read through
    /// [`crate::config`]); `Auto` when unset, an error when it names none.
    ///
    /// ```
    /// // SAFETY: nothing else runs in this program yet.
    /// unsafe { std::env::set_var("FDLAB_BACKEND", "cuda") };
    /// assert_eq!(fdlab_core::BackendKind::from_env().unwrap(), fdlab_core::BackendKind::Cuda);
    /// ```
    pub fn from_env() -> Result<BackendKind, UnknownBackend> {
        match crate::config::backend() {
            Some(v) => v.parse(),
            None => Ok(BackendKind::Auto),
        }
    }

    /// One line on what the kind does, for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            BackendKind::Auto => "The GPU when one is usable, else the CPU",
            BackendKind::Cpu => "The CPU, on all cores",
            BackendKind::Cuda => "A CUDA GPU (fails clearly when none is usable)",
        }
    }
}

/// A backend name that is not `auto`, `cpu`, `cuda` or `gpu`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend '{name}'; valid backends: auto, cpu, cuda (or gpu)")]
pub struct UnknownBackend {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for BackendKind {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<BackendKind, UnknownBackend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(BackendKind::Auto),
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" | "gpu" => Ok(BackendKind::Cuda),
            _ => Err(UnknownBackend { name: s.into() }),
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
