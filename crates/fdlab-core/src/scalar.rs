//! Floating-point element types: `f32` and `f64`.

use num_traits::Float;
use std::fmt::{Debug, Display};

/// A floating-point element type fdlab computes in.
pub trait Scalar: Float + Debug + Display + Default + Send + Sync + 'static {
    /// The precision this type is.
    const PRECISION: Precision;
    /// Relative tolerance when comparing a fast path with the reference.
    const TOLERANCE: f64;
    /// Converts from `f64` (rounding for `f32`).
    fn from_f64(x: f64) -> Self;
    /// Converts to `f64` (exact).
    fn as_f64(self) -> f64;
}

impl Scalar for f32 {
    const PRECISION: Precision = Precision::F32;
    const TOLERANCE: f64 = 1e-5;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const PRECISION: Precision = Precision::F64;
    const TOLERANCE: f64 = 1e-12;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn as_f64(self) -> f64 {
        self
    }
}

/// The run-time name of a [`Scalar`] type: what the command line, case files (`precision =
/// "f32"`, with the `serde` feature), kernels and steppers choose by. `F64` by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Precision {
    /// Single precision (`f32`, CUDA `float`).
    F32,
    /// Double precision (`f64`, CUDA `double`).
    #[default]
    F64,
}

impl Precision {
    /// Both precisions.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// The CUDA C type name.
    pub fn cuda_type(self) -> &'static str {
        match self {
            Precision::F32 => "float",
            Precision::F64 => "double",
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Precision {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "f32" | "float" | "single" => Ok(Precision::F32),
            "f64" | "double" => Ok(Precision::F64),
            _ => Err(crate::error::Error::Unknown {
                kind: "precision",
                name: s.to_string(),
                valid: vec!["f32".into(), "f64".into()],
            }),
        }
    }
}
