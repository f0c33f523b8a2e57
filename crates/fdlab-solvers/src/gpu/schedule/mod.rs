//! Schedules as data: every launch shape, tile, fusion and steps-per-pass choice of the GPU
//! steppers is a field of a typed schedule ([`HeatSchedule`], [`WaveSchedule`],
//! [`FdtdSchedule`], or [`Schedule`] for any of them). A field left unset takes the default
//! of the device class from the one table in `table.rs` (docs/schedules.md gives each field's
//! default and the measurement behind it).
//!
//! A schedule's name is what `Display` prints and `FromStr` reads back: the family, then the
//! set fields as `key=value` after a `:`, e.g. `fdtd:pass=off,fused-tile=32x8x16`; `heat` alone
//! is the defaults. A stepper records the schedule it ran with every field set, so that the
//! same name rebuilds the same kernels.

mod families;
mod knob;
pub(crate) mod table;
#[cfg(test)]
mod tests;

pub use super::temporal::Request;
pub(crate) use families::{FdtdChoices, HeatChoices, WaveChoices};
pub use families::{FdtdSchedule, HeatSchedule, WaveSchedule};
pub use fdlab_cuda::codegen::solver::Launch;

use std::fmt;
use std::str::FromStr;

/// Why a schedule name or value was refused: the message says what is allowed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The name does not start with a known family.
    #[error("schedule '{name}': expected heat, wave or fdtd, then optionally ':key=value,...'")]
    Family {
        /// The name given.
        name: String,
    },
    /// A key the family does not have, or a `key=value` pair without `=`.
    #[error("{family} schedule: unknown field '{key}'; the fields are {allowed}")]
    Key {
        /// The schedule family.
        family: &'static str,
        /// The key given.
        key: String,
        /// The family's keys.
        allowed: String,
    },
    /// A field given twice.
    #[error("{family} schedule: field '{key}' given twice")]
    Repeated {
        /// The schedule family.
        family: &'static str,
        /// The key.
        key: String,
    },
    /// A value out of range or malformed.
    #[error("{family} schedule: {key}={value} refused; give {allowed}")]
    Value {
        /// The schedule family.
        family: &'static str,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A schedule of one physics given to a stepper of another.
    #[error("a {given} schedule was given to a {wanted} case")]
    Physics {
        /// The schedule's family.
        given: &'static str,
        /// The case's physics.
        wanted: &'static str,
    },
}

/// Threads per block along x and y and planes per block of a one-point-per-thread march
/// (the FDTD kernels): `BXxBYxPLANES` in a schedule's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tile {
    /// Threads along x (without halo threads).
    pub bx: u32,
    /// Threads along y (without halo threads).
    pub by: u32,
    /// Planes each block marches.
    pub chunk: u32,
}

impl Tile {
    /// The one-point-per-thread launch of this tile.
    pub(crate) fn launch(self) -> Launch {
        Launch::columns(self.bx, self.by, self.chunk)
    }
}

/// The tile of a CPML shell kernel's march-axis slabs: threads along x and the middle axis,
/// or whole planes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ShellTile {
    /// `TXxTO` threads.
    Tile(u32, u32),
    /// A whole plane per tile.
    Plane,
}

pub use fdlab_cuda::codegen::solver::fdtd::{DrudeCarry, DrudeLoads};

/// The schedule of any GPU stepper, serialised as its name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Schedule {
    /// The heat step's.
    Heat(HeatSchedule),
    /// The wave step's.
    Wave(WaveSchedule),
    /// The FDTD step's.
    Fdtd(FdtdSchedule),
}

impl Schedule {
    /// The family's name: `heat`, `wave` or `fdtd`.
    pub fn family(&self) -> &'static str {
        match self {
            Schedule::Heat(_) => HeatSchedule::FAMILY,
            Schedule::Wave(_) => WaveSchedule::FAMILY,
            Schedule::Fdtd(_) => FdtdSchedule::FAMILY,
        }
    }

    /// The heat schedule, or an error naming both physics when this is another family's.
    pub fn heat(&self) -> Result<&HeatSchedule, ScheduleError> {
        match self {
            Schedule::Heat(h) => Ok(h),
            _ => Err(self.wrong("heat")),
        }
    }

    /// The wave schedule, or an error naming both physics.
    pub fn wave(&self) -> Result<&WaveSchedule, ScheduleError> {
        match self {
            Schedule::Wave(w) => Ok(w),
            _ => Err(self.wrong("wave")),
        }
    }

    /// The FDTD schedule, or an error naming both physics.
    pub fn fdtd(&self) -> Result<&FdtdSchedule, ScheduleError> {
        match self {
            Schedule::Fdtd(f) => Ok(f),
            _ => Err(self.wrong("fdtd")),
        }
    }

    fn wrong(&self, wanted: &'static str) -> ScheduleError {
        ScheduleError::Physics {
            given: self.family(),
            wanted,
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Heat(s) => s.fmt(f),
            Schedule::Wave(s) => s.fmt(f),
            Schedule::Fdtd(s) => s.fmt(f),
        }
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Self, ScheduleError> {
        let family = s.split(':').next().unwrap_or_default();
        match family {
            HeatSchedule::FAMILY => s.parse().map(Schedule::Heat),
            WaveSchedule::FAMILY => s.parse().map(Schedule::Wave),
            FdtdSchedule::FAMILY => s.parse().map(Schedule::Fdtd),
            _ => Err(ScheduleError::Family { name: s.into() }),
        }
    }
}

impl TryFrom<String> for Schedule {
    type Error = ScheduleError;
    fn try_from(s: String) -> Result<Self, ScheduleError> {
        s.parse()
    }
}

impl From<Schedule> for String {
    fn from(s: Schedule) -> String {
        s.to_string()
    }
}

/// Defines a schedule family: the public schedule (each field optional: unset takes the
/// table's default) with its name round trip, and the crate's resolved choices (every field
/// set) that the generators read.
macro_rules! family {
    (
        $(#[$m:meta])* $name:ident, $choices:ident, $family:literal,
        { $( $(#[$fm:meta])* $field:ident : $ty:ty = $key:literal, )* }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $( $(#[$fm])* #[serde(default, skip_serializing_if = "Option::is_none")]
            pub $field: Option<$ty>, )*
        }

        /// The resolved choices: every field of the schedule set.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) struct $choices {
            $( pub $field: $ty, )*
        }

        impl $name {
            /// The family's name, the first word of every schedule name of it.
            pub const FAMILY: &'static str = $family;
            /// The fields' keys in the name, in the order `Display` prints them.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            /// `defaults` with this schedule's set fields in place of theirs.
            pub(crate) fn over(&self, defaults: $choices) -> $choices {
                $choices { $( $field: self.$field.unwrap_or(defaults.$field), )* }
            }

            /// The schedule with every field set to `c`'s.
            pub(crate) fn of(c: &$choices) -> Self {
                $name { $( $field: Some(c.$field), )* }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                use $crate::gpu::schedule::knob::Knob;
                f.write_str($family)?;
                let mut sep = ':';
                $( if let Some(v) = &self.$field {
                    write!(f, "{sep}{}={}", $key, v.show())?;
                    sep = ',';
                } )*
                let _ = sep;
                Ok(())
            }
        }

        impl std::str::FromStr for $name {
            type Err = ScheduleError;

            fn from_str(s: &str) -> Result<Self, ScheduleError> {
                use $crate::gpu::schedule::knob::Knob;
                let family = || ScheduleError::Family { name: s.into() };
                let rest = s.strip_prefix($family).ok_or_else(family)?;
                let mut out = Self::default();
                if rest.is_empty() {
                    return Ok(out);
                }
                let rest = rest.strip_prefix(':').ok_or_else(family)?;
                for pair in rest.split(',') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    match key {
                        $( $key => {
                            if out.$field.is_some() {
                                return Err(ScheduleError::Repeated { family: $family, key: key.into() });
                            }
                            out.$field = Some(<$ty as Knob>::read(value).map_err(|allowed| {
                                ScheduleError::Value {
                                    family: $family,
                                    key: key.into(),
                                    value: value.into(),
                                    allowed,
                                }
                            })?);
                        } )*
                        _ => {
                            return Err(ScheduleError::Key {
                                family: $family,
                                key: key.into(),
                                allowed: Self::KEYS.join(", "),
                            })
                        }
                    }
                }
                out.validate()?;
                Ok(out)
            }
        }
    };
}
pub(crate) use family;
