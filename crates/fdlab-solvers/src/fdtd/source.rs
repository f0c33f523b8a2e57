//! Soft point sources and their waveforms.

use super::grid::Component;
use crate::physics::ricker;
use std::f64::consts::PI;

/// A source's time dependence `w(t)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waveform {
    /// `exp(−((t − t0)/tau)²)`. Its nonzero mean leaves a static charge in a closed box.
    Gaussian {
        /// Time of the peak.
        t0: f64,
        /// Width.
        tau: f64,
    },
    /// `sin(2π f0 (t − t0)) · exp(−((t − t0)/tau)²)`: a band around `f0`.
    ModulatedGaussian {
        /// Carrier frequency.
        f0: f64,
        /// Time of the envelope's peak.
        t0: f64,
        /// Envelope width.
        tau: f64,
    },
    /// Ricker wavelet of peak frequency `f0` delayed by `t0` (zero mean, band `0 .. ~2.5 f0`).
    Ricker {
        /// Peak frequency.
        f0: f64,
        /// Time of the peak.
        t0: f64,
    },
    /// `sin(2π f0 t)`, switched on at `t = 0`.
    Sine {
        /// Frequency.
        f0: f64,
    },
}

impl Waveform {
    /// `w(t)`.
    pub fn value(&self, t: f64) -> f64 {
        match *self {
            Waveform::Gaussian { t0, tau } => (-((t - t0) / tau).powi(2)).exp(),
            Waveform::ModulatedGaussian { f0, t0, tau } => {
                (2.0 * PI * f0 * (t - t0)).sin() * (-((t - t0) / tau).powi(2)).exp()
            }
            Waveform::Ricker { f0, t0 } => ricker(t, f0, t0),
            Waveform::Sine { f0 } => (2.0 * PI * f0 * t).sin(),
        }
    }
}

/// A soft point source: an impressed current density `J = amplitude · w(t)` on one electric
/// component of one cell, entering Ampère's law as `ε ∂E/∂t = ∇×H − σE − J`.
///
/// It is added on top of the field update (it does not overwrite the field), so waves pass
/// through the source cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointSource {
    /// The electric component driven.
    pub component: Component,
    /// The cell.
    pub cell: [usize; 3],
    /// Time dependence.
    pub waveform: Waveform,
    /// Current density scale.
    pub amplitude: f64,
}
