//! Shots: one model run for many source positions (a survey), each shot with its own sources
//! and receivers, given inline (`[[shots]]`) or as arrays of positions in files
//! (`[geometry]`, [`super::geometry`]). A case without either has no shots and runs as one.

use super::geometry::{self, Positions};
use super::{Case, CaseSpec, Physics, ReceiverSpec, SourceSpec};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[[shots]]`: one shot's sources and receivers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShotSpec {
    /// `[[shots.sources]]`: the shot's sources, with the keys of `[[sources]]` (one or more).
    #[serde(default)]
    pub sources: Vec<SourceSpec>,
    /// `[[shots.receivers]]`: the shot's receivers; left out, the case's `[[receivers]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receivers: Vec<ReceiverSpec>,
}

/// `[geometry]`: the shots' positions from `.npy` or `.csv` files, in the grid's length unit
/// (as `position` in `[[sources]]`), each source a Ricker of `frequency` or the samples of
/// `wavelet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometrySpec {
    /// Source positions: `.npy` of shape `[shots, dim]` (one source a shot) or
    /// `[shots, sources, dim]`; or `.csv` with columns `x`, `y` (and `z` in 3-D), one row a
    /// shot, or with a `shot` column (numbered from 0) grouping rows into shots.
    pub sources: PathBuf,
    /// Receiver positions: `.npy` of shape `[receivers, dim]` (every shot's) or
    /// `[shots, receivers, dim]`; or `.csv` as for the sources, rows without a `shot` column
    /// shared by every shot. Left out, the case's `[[receivers]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receivers: Option<PathBuf>,
    /// Ricker peak frequency of every source; with `wavelet`, its dominant frequency.
    pub frequency: f64,
    /// Amplitude of every source (scales `wavelet` too).
    #[serde(default = "super::one")]
    pub amplitude: f64,
    /// Delay of the Ricker's peak (default 1.5 / frequency); not with `wavelet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<f64>,
    /// `.npy` samples, one per time step, in place of the Ricker: shape `[steps]` (every
    /// source's) or `[shots, steps]` (row `s` for the sources of shot `s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wavelet: Option<PathBuf>,
}

/// One shot as a single-shot case would give it: its sources and receivers.
#[derive(Debug, Clone, PartialEq)]
pub struct Shot {
    /// The shot's sources.
    pub sources: Vec<SourceSpec>,
    /// The shot's receivers.
    pub receivers: Vec<ReceiverSpec>,
}

impl Case {
    /// Whether the case lists shots (`[[shots]]` or `[geometry]`).
    pub fn has_shots(&self) -> bool {
        !self.spec.shots.is_empty() || self.spec.geometry.is_some()
    }

    /// Refuse shot keys where they cannot apply; called when the case is parsed.
    pub(super) fn check_shot_tables(&self) -> Result<()> {
        let s = &self.spec;
        if !self.has_shots() {
            return Ok(());
        }
        let key = if s.geometry.is_some() {
            "geometry"
        } else {
            "shots"
        };
        let refuse = |detail: String| Error::Case {
            path: self.path.clone(),
            detail: format!("[{key}]{}: {detail}", self.line_of(key)),
        };
        if s.physics != Physics::Wave {
            return Err(refuse(
                "shots drive wave cases only; remove it or use physics = \"wave\"".into(),
            ));
        }
        if !s.shots.is_empty() && s.geometry.is_some() {
            return Err(refuse(
                "give the shots either as [[shots]] blocks or as [geometry] files, not both".into(),
            ));
        }
        if !s.sources.is_empty() {
            return Err(refuse(
                "a case with shots takes its sources from them: move each [[sources]] into a \
                 [[shots.sources]] block of its shot (or into [geometry] sources)"
                    .into(),
            ));
        }
        if s.material.density.is_some() {
            return Err(refuse(
                "shots run the constant-density step only; with material.density, run each \
                 shot as a case of its own ([[sources]] and [[receivers]])"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The case's shots, in order (none for a case without shots). Geometry files are read
    /// and checked here: a malformed file, a non-finite position or one outside the grid is
    /// an [`Error::Geometry`] naming the file, the key and the row.
    pub fn shots(&self) -> Result<Vec<Shot>> {
        if let Some(g) = &self.spec.geometry {
            return self.geometry_shots(g);
        }
        let shots = self.spec.shots.iter().enumerate().map(|(i, shot)| {
            if shot.sources.is_empty() {
                return Err(self.invalid(
                    &format!("shots[{i}].sources"),
                    "a shot needs at least one source: add a [[shots.sources]] block under \
                     its [[shots]]"
                        .into(),
                ));
            }
            let receivers = if shot.receivers.is_empty() {
                self.spec.receivers.clone()
            } else {
                shot.receivers.clone()
            };
            Ok(Shot {
                sources: shot.sources.clone(),
                receivers,
            })
        });
        shots.collect()
    }

    fn geometry_shots(&self, g: &GeometrySpec) -> Result<Vec<Shot>> {
        let sources = geometry::read_positions(self, "geometry.sources", &g.sources, true)?;
        let Positions::PerShot(sources) = sources else {
            unreachable!("source positions are always per shot")
        };
        let receivers = match &g.receivers {
            Some(p) => geometry::read_positions(self, "geometry.receivers", p, false)?,
            None => Positions::Shared(
                self.spec
                    .receivers
                    .iter()
                    .map(|r| r.position.clone())
                    .collect(),
            ),
        };
        let shots = sources.len();
        if let (Positions::PerShot(r), Some(p)) = (&receivers, &g.receivers)
            && r.len() != shots
        {
            return Err(Error::Geometry {
                path: self.resolve(p),
                key: "geometry.receivers".into(),
                detail: format!(
                    "receivers for {} shots, and geometry.sources has {shots}: give one set \
                     of receivers per shot, or one set for all (no shot axis or column)",
                    r.len()
                ),
            });
        }
        let row = match &g.wavelet {
            Some(p) => geometry::wavelet_rows(self, p, shots)?,
            None => false,
        };
        let source = |s: usize, position: Vec<f64>| SourceSpec {
            position,
            frequency: g.frequency,
            amplitude: g.amplitude,
            delay: g.delay,
            wavelet: g.wavelet.clone(),
            wavelet_row: row.then_some(s),
        };
        Ok(sources
            .into_iter()
            .enumerate()
            .map(|(s, at)| Shot {
                sources: at.into_iter().map(|x| source(s, x)).collect(),
                receivers: match &receivers {
                    Positions::Shared(r) => r,
                    Positions::PerShot(r) => &r[s],
                }
                .iter()
                .map(|x| ReceiverSpec {
                    position: x.clone(),
                })
                .collect(),
            })
            .collect())
    }

    /// The single-shot case of `shot`: this case with the shot's `[[sources]]` and
    /// `[[receivers]]` and no shots. Its outputs are the shot's.
    pub fn shot_case(&self, shot: &Shot) -> Case {
        let spec = CaseSpec {
            sources: shot.sources.clone(),
            receivers: shot.receivers.clone(),
            shots: vec![],
            geometry: None,
            ..self.spec.clone()
        };
        Case {
            spec,
            path: self.path.clone(),
            text: self.text.clone(),
        }
    }
}
