//! The pieces of an fdtd case that its reader's parts share: waveforms, material regions
//! and axes as a case file names them, and the grid's physical extent.

use super::Case;
use crate::error::Result;
use crate::fdtd::{Grid, Waveform};
use serde::{Deserialize, Serialize};

/// Finite and above zero.
pub(super) fn positive(v: f64) -> bool {
    v > 0.0 && v.is_finite()
}

/// The default amplitude and scale factors.
pub(super) fn one() -> f64 {
    1.0
}

/// A source's waveform by name; its parameters are keys beside it (see [`Waveform`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveformName {
    /// `exp(−((t − t0)/tau)²)`: needs `t0`, `tau`.
    Gaussian,
    /// `sin(2π f0 (t − t0))·exp(−((t − t0)/tau)²)`: needs `f0`, `t0`, `tau`.
    ModulatedGaussian,
    /// Ricker wavelet: needs `f0`; `t0` defaults to `1.5 / f0`.
    Ricker,
    /// `sin(2π f0 t)`: needs `f0`.
    Sine,
}

/// `[[fdtd.materials]]`: a box, sphere or slab of dielectric / conductor / perfect conductor /
/// dispersive medium, later ones overriding earlier ones. Give exactly one geometry: `lo` and
/// `hi`, `center` and `radius`, or `slab`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialBox {
    /// Low corner of a box, physical coordinates.
    pub lo: Option<Vec<f64>>,
    /// High corner of a box, physical coordinates; cells whose centres lie in `lo ..= hi` are
    /// filled.
    pub hi: Option<Vec<f64>>,
    /// Centre of a sphere, physical coordinates.
    pub center: Option<Vec<f64>>,
    /// Radius of a sphere; cells whose centres lie within it are filled.
    pub radius: Option<f64>,
    /// A slab (a layer) across the whole grid between two planes normal to an axis.
    pub slab: Option<SlabSpec>,
    /// A perfect electric conductor (default false).
    #[serde(default)]
    pub pec: bool,
    /// Relative permittivity (≥ 1; default 1).
    #[serde(default = "one")]
    pub eps_r: f64,
    /// Conductivity (≥ 0; default 0).
    #[serde(default)]
    pub sigma: f64,
    /// A Drude term on top of `eps_r` (which is then ε∞).
    pub drude: Option<DrudeSpec>,
    /// A one-pole Lorentz term on top of `eps_r` (which is then ε∞); at most one model a box.
    pub lorentz: Option<LorentzSpec>,
    /// A one-pole Debye term on top of `eps_r` (which is then ε∞); at most one model a box.
    pub debye: Option<DebyeSpec>,
}

/// `lorentz = { delta_eps = Δε, resonance_frequency = ω0, damping = δ }` in a material box:
/// `ε(ω) = ε∞ + Δε ω0²/(ω0² − ω² − 2iδω)` (see [`crate::fdtd::Lorentz`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LorentzSpec {
    /// `Δε` ≥ 0.
    pub delta_eps: f64,
    /// `ω0` in radians per unit time (angular: `2π·f0`), > 0.
    pub resonance_frequency: f64,
    /// `δ` per unit time, ≥ 0 (default 0, lossless).
    #[serde(default)]
    pub damping: f64,
}

/// `debye = { delta_eps = Δε, relaxation_time = τ }` in a material box:
/// `ε(ω) = ε∞ + Δε/(1 − iωτ)` (see [`crate::fdtd::Debye`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebyeSpec {
    /// `Δε` ≥ 0.
    pub delta_eps: f64,
    /// `τ` > 0.
    pub relaxation_time: f64,
}

/// `drude = { plasma_frequency = ωp, collision_frequency = γ }` in a material box:
/// `ε(ω) = ε∞ − ωp²/(ω² + iγω)` (see [`crate::fdtd::Drude`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrudeSpec {
    /// `ωp` in radians per unit time (angular: `2π·f_p`), ≥ 0.
    pub plasma_frequency: f64,
    /// `γ` per unit time, ≥ 0 (default 0, lossless).
    #[serde(default)]
    pub collision_frequency: f64,
}

/// `slab = { axis = "z", lo = 1.0, hi = 1.2 }`: every cell whose centre lies between the
/// planes `lo` and `hi` along `axis`, across the whole grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlabSpec {
    /// The slab's normal.
    pub axis: AxisName,
    /// Low plane, physical coordinate.
    pub lo: f64,
    /// High plane, physical coordinate.
    pub hi: f64,
}

/// A waveform's name and parameters as a case gives them.
#[derive(Debug, Clone, Copy)]
pub(super) struct WaveformKeys {
    pub(super) waveform: WaveformName,
    pub(super) f0: Option<f64>,
    pub(super) t0: Option<f64>,
    pub(super) tau: Option<f64>,
}

/// An axis by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AxisName {
    /// x.
    X,
    /// y.
    Y,
    /// z.
    Z,
}

impl AxisName {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        self as usize
    }
}

pub(super) fn extent(grid: &Grid) -> [f64; 3] {
    std::array::from_fn(|a| grid.n[a] as f64 * grid.spacing[a])
}

/// The waveform of a source or plane wave whose keys sit under `prefix` (e.g.
/// `fdtd.sources[0]`).
pub(super) fn waveform(case: &Case, prefix: &str, s: WaveformKeys) -> Result<Waveform> {
    let key = |k: &str| format!("{prefix}.{k}");
    let need = |k: &str, v: Option<f64>| {
        v.filter(|x| x.is_finite()).ok_or_else(|| {
            case.invalid(
                &key(k),
                format!(
                    "missing or not finite; the {:?} waveform needs it",
                    s.waveform
                ),
            )
        })
    };
    let pos = |k: &str, v: f64| {
        if positive(v) {
            Ok(v)
        } else {
            Err(case.invalid(&key(k), format!("{v}: must be positive")))
        }
    };
    let unused = |k: &str, v: Option<f64>| match v {
        Some(_) => Err(case.invalid(
            &key(k),
            format!("the {:?} waveform takes no {k}; remove it", s.waveform),
        )),
        None => Ok(()),
    };
    Ok(match s.waveform {
        WaveformName::Gaussian => {
            unused("f0", s.f0)?;
            Waveform::Gaussian {
                t0: need("t0", s.t0)?,
                tau: pos("tau", need("tau", s.tau)?)?,
            }
        }
        WaveformName::ModulatedGaussian => Waveform::ModulatedGaussian {
            f0: pos("f0", need("f0", s.f0)?)?,
            t0: need("t0", s.t0)?,
            tau: pos("tau", need("tau", s.tau)?)?,
        },
        WaveformName::Ricker => {
            unused("tau", s.tau)?;
            let f0 = pos("f0", need("f0", s.f0)?)?;
            let t0 = match s.t0 {
                Some(_) => need("t0", s.t0)?,
                // The default delay divides by f0: a tiny f0 makes it infinite.
                None if (1.5 / f0).is_finite() => 1.5 / f0,
                None => {
                    return Err(case.invalid(
                        &key("f0"),
                        format!(
                            "{f0}: too small, the default t0 = 1.5 / f0 is infinite; give a \
                             larger f0 or a t0"
                        ),
                    ))
                }
            };
            Waveform::Ricker { f0, t0 }
        }
        WaveformName::Sine => {
            unused("t0", s.t0)?;
            unused("tau", s.tau)?;
            Waveform::Sine {
                f0: pos("f0", need("f0", s.f0)?)?,
            }
        }
    })
}
