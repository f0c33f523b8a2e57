//! The `[[fdtd.plane_waves]]` and `[[fdtd.flux]]` tables of a case file and their validation.

use super::fdtd_spec::{waveform, WaveformKeys, WaveformName};
use super::Case;
use crate::error::Result;
use crate::fdtd::{CellBox, Component, FluxSpec, Grid, PlaneWave};
use serde::{Deserialize, Serialize};

const AXES: [&str; 3] = ["x", "y", "z"];

/// A propagation direction along a grid axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DirectionName {
    /// Towards +x.
    #[serde(rename = "+x")]
    PlusX,
    /// Towards −x.
    #[serde(rename = "-x")]
    MinusX,
    /// Towards +y.
    #[serde(rename = "+y")]
    PlusY,
    /// Towards −y.
    #[serde(rename = "-y")]
    MinusY,
    /// Towards +z.
    #[serde(rename = "+z")]
    PlusZ,
    /// Towards −z.
    #[serde(rename = "-z")]
    MinusZ,
}

impl DirectionName {
    /// `(axis, backward)`.
    fn axis(self) -> (usize, bool) {
        let i = self as usize;
        (i / 2, i % 2 == 1)
    }
}

/// `[[fdtd.plane_waves]]`: a plane wave through a total-field/scattered-field box (see
/// [`PlaneWave`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneWaveSpec {
    /// `"+x"`, `"-x"`, … `"-z"`.
    pub direction: DirectionName,
    /// The wave's E component, perpendicular to the direction.
    pub polarization: Component,
    /// Low corner of the total-field box, physical; snapped to grid nodes. At or below 0 the
    /// box is open on that side.
    pub lo: Vec<f64>,
    /// High corner, physical; at or beyond the grid's end the box is open on that side.
    pub hi: Vec<f64>,
    /// Time dependence of the incident E at the entry face.
    pub waveform: WaveformName,
    /// Frequency parameter of the waveform.
    pub f0: Option<f64>,
    /// Delay parameter of the waveform.
    pub t0: Option<f64>,
    /// Width parameter of the waveform.
    pub tau: Option<f64>,
    /// Amplitude of the incident E (default 1).
    #[serde(default = "super::fdtd_spec::one")]
    pub amplitude: f64,
}

/// `[[fdtd.flux]]`: the Poynting flux through a plane per frequency (see [`FluxSpec`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluxEntry {
    /// The plane's normal, `"x"`, `"y"` or `"z"`; the flux counts positive along it.
    pub axis: super::fdtd_spec::AxisName,
    /// The plane's coordinate, snapped to the nearest node.
    pub position: f64,
    /// Frequencies (cycles per unit time).
    pub frequencies: Vec<f64>,
}

/// Validate plane wave `i` against the grid and the material boxes.
pub(super) fn plane_wave(
    case: &Case,
    i: usize,
    grid: &Grid,
    boxes: &[CellBox],
    s: &PlaneWaveSpec,
) -> Result<PlaneWave> {
    let key = format!("fdtd.plane_waves[{i}]");
    if s.lo.len() != 3 || s.hi.len() != 3 {
        return Err(case.invalid(
            &format!("{key}.lo"),
            "give 3 coordinates for each corner of the total-field box".into(),
        ));
    }
    let node = |a: usize, x: f64| {
        let m = (x / grid.spacing[a]).round();
        if m.is_nan() || m <= 0.0 {
            0
        } else {
            (m as usize).min(grid.n[a])
        }
    };
    let (axis, backward) = s.direction.axis();
    let wave = PlaneWave {
        axis,
        backward,
        polarization: s.polarization,
        lo: std::array::from_fn(|a| node(a, s.lo[a])),
        hi: std::array::from_fn(|a| node(a, s.hi[a])),
        waveform: waveform(
            case,
            &key,
            WaveformKeys {
                waveform: s.waveform,
                f0: s.f0,
                t0: s.t0,
                tau: s.tau,
            },
        )?,
        amplitude: s.amplitude,
    };
    wave.check(grid).map_err(|e| {
        let why = e.to_string();
        let why = why.trim_start_matches("invalid case: FDTD plane wave: ");
        case.invalid(&key, why.to_string())
    })?;
    // A face corrects the cells on both sides of it; they must be vacuum.
    for (m, b) in boxes.iter().enumerate() {
        let (blo, bhi) = b.shape.bounds(grid);
        for a in 0..3 {
            let [lo_open, hi_open] = [wave.lo[a] == 0, wave.hi[a] >= grid.n[a]];
            for (open, f) in [(lo_open, wave.lo[a]), (hi_open, wave.hi[a])] {
                // Cells f − 2 ..= f + 1 along a, the face's span (one cell wider) across.
                let touches = !open
                    && bhi[a] + 2 >= f
                    && blo[a] <= f + 1
                    && (0..3)
                        .filter(|&c| c != a)
                        .all(|c| bhi[c] + 1 >= wave.lo[c] && blo[c] <= wave.hi[c] + 1);
                if touches {
                    return Err(case.invalid(
                        &key,
                        format!(
                            "material {m} reaches the total-field box's face at {} = {}: the \
                             incident wave is computed in vacuum, so keep materials inside the \
                             box and at least two cells from its faces, or open that side",
                            AXES[a],
                            f as f64 * grid.spacing[a]
                        ),
                    ));
                }
            }
        }
    }
    Ok(wave)
}

/// Validate flux plane `i`: on a node, outside any CPML, frequencies resolvable.
pub(super) fn flux(
    case: &Case,
    i: usize,
    grid: &Grid,
    dt: f64,
    duration: f64,
    s: &FluxEntry,
) -> Result<FluxSpec> {
    let key = format!("fdtd.flux[{i}]");
    let a = s.axis.index();
    let idx = (s.position / grid.spacing[a]).round();
    if !(idx >= 0.0 && idx <= grid.n[a] as f64) {
        return Err(case.invalid(
            &format!("{key}.position"),
            format!(
                "{} is outside the grid along {}: use 0 ..= {}",
                s.position,
                AXES[a],
                grid.n[a] as f64 * grid.spacing[a]
            ),
        ));
    }
    let spec = FluxSpec {
        axis: a,
        index: idx as usize,
        frequencies: s.frequencies.clone(),
    };
    if let Some(why) = crate::fdtd::check_flux(grid, dt, duration, &spec) {
        return Err(case.invalid(&key, format!("flux plane {i}: {why}")));
    }
    Ok(spec)
}
