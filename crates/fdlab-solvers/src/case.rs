//! Case files: the TOML description of a simulation, parsed with unknown keys refused.

pub mod fdtd;
mod fdtd_shapes;
mod fdtd_spec;
mod fdtd_waves;
mod geometry;
mod schedule;
pub mod shots;
pub(crate) mod warnings;

pub use shots::{GeometrySpec, Shot, ShotSpec};

use crate::error::{Error, Result};
use crate::physics::{check_order, heat_dt_limit, wave_dt_limit};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which equation to solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Physics {
    /// `u_t = κ Δu`.
    Heat,
    /// `p_tt = c² Δp + sources`.
    Wave,
    /// Maxwell's equations on a 3-D Yee grid; the `[fdtd]` table describes the setup.
    Fdtd,
}

/// Floating-point precision of the fields: fdlab-core's one precision type (`"f32"` or
/// `"f64"` in a case file; `f64` by default).
pub use fdlab_core::Precision;

/// `[grid]`: points per axis and spacing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// `[nx, ny]` or `[nx, ny, nz]`.
    pub shape: Vec<usize>,
    /// One spacing per axis.
    pub spacing: Vec<f64>,
}

/// `[time]`: step (or fraction of the stability limit) and duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSpec {
    /// Time step; give this or `cfl`.
    pub dt: Option<f64>,
    /// Fraction of the stability limit (0 < cfl ≤ 1); give this or `dt`.
    pub cfl: Option<f64>,
    /// Simulated time.
    pub duration: f64,
}

/// `[scheme]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemeSpec {
    /// Spatial accuracy order (even).
    pub order: usize,
}

impl Default for SchemeSpec {
    fn default() -> Self {
        SchemeSpec { order: 4 }
    }
}

/// A scalar field over the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum FieldSpec {
    /// The same value everywhere.
    Constant(f64),
    /// Horizontal layers: `values[i]` where the coordinate along `axis` is ≥ `tops[i]`.
    Layered {
        /// Axis index the layers stack along (default: the last axis).
        axis: Option<usize>,
        /// Start coordinate of each layer, increasing.
        tops: Vec<f64>,
        /// Value in each layer.
        values: Vec<f64>,
    },
    /// Read from an `.npy` file of the grid's shape (relative to the case file).
    Npy(PathBuf),
}

/// `[initial]`: the field at step 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Initial {
    /// Zero everywhere.
    #[default]
    Zero,
    /// `amplitude · exp(−|x − center|² / (2 width²))`.
    Gaussian {
        /// Centre (physical coordinates).
        center: Vec<f64>,
        /// Standard deviation.
        width: f64,
        /// Peak value.
        amplitude: f64,
    },
    /// Read from an `.npy` file of the grid's shape.
    Npy(PathBuf),
    /// Text drawn into the grid as hot letters (2-D; in 3-D, the middle plane).
    Text {
        /// The text.
        text: String,
        /// Value inside the letters.
        value: f64,
    },
}

/// `[material]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Diffusivity κ (heat).
    pub diffusivity: Option<FieldSpec>,
    /// Velocity c (wave).
    pub velocity: Option<FieldSpec>,
    /// Density ρ (wave): given, the step solves `p_tt = ρc² ∇·(ρ⁻¹ ∇p)` (variable density);
    /// left out, `p_tt = c² Δp`.
    pub density: Option<FieldSpec>,
}

/// `[[sources]]`: a point source (wave), a Ricker wavelet or one read from a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Position in the grid's length unit, from the first grid point (which is at 0). A
    /// position between grid points is spread over the points around it ([`crate::hicks`]);
    /// one within 1e-9 cells of a grid point is on it.
    pub position: Vec<f64>,
    /// Peak frequency of the Ricker; with `wavelet`, the wavelet's dominant frequency (it
    /// tunes an absorbing layer and the cells-per-wavelength warning).
    pub frequency: f64,
    /// Amplitude (scales `wavelet` too).
    #[serde(default = "one")]
    pub amplitude: f64,
    /// Delay of the peak (default 1.5 / frequency); not with `wavelet`.
    pub delay: Option<f64>,
    /// An `.npy` file (relative to the case file) of one value per time step, `f32` or
    /// `f64`, in place of the Ricker: value `k` is injected at time `k·dt`. A file shorter than
    /// the run is zero after its end (with a warning); a longer one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wavelet: Option<PathBuf>,
    /// The row of a 2-D `wavelet` array (`[geometry] wavelet` of shape `[shots, steps]`)
    /// that this source takes; `None`: the file is one wavelet. Not a case key.
    #[serde(skip)]
    pub wavelet_row: Option<usize>,
}

fn one() -> f64 {
    1.0
}

/// `[[receivers]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiverSpec {
    /// Position in the grid's length unit, as for a source: between grid points, the
    /// receiver records the interpolated pressure ([`crate::hicks`]).
    pub position: Vec<f64>,
}

/// `boundary`: what happens at the edges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum BoundarySpec {
    /// Wrap around.
    Periodic,
    /// Zero outside the grid (heat: fixed temperature 0; wave: rigid, reflecting).
    Dirichlet,
    /// Absorbing layer (wave only).
    Cpml {
        /// Layer cells at each side.
        thickness: usize,
    },
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Output directory (relative to the case file).
    pub dir: PathBuf,
    /// Steps between outputs.
    pub every: usize,
    /// PNG of the last output (slice with colour bar and axes).
    #[serde(default)]
    pub png: bool,
    /// Numbered PNG frame per output.
    #[serde(default)]
    pub frames: bool,
    /// Animated GIF of all outputs.
    #[serde(default)]
    pub gif: bool,
    /// `.npy` array per output.
    #[serde(default)]
    pub npy: bool,
    /// VTK `.vti` per output.
    #[serde(default)]
    pub vti: bool,
    /// 3-D: z index of the plotted slice (default: the middle).
    pub slice: Option<usize>,
    /// Pictures' colour range as a fraction of the largest value so far, in (0, 1]: signed
    /// fields (wave, fdtd) show `±clip · max|v|` (default 0.25, so that weak reflections stay
    /// visible), heat shows `[lo, lo + clip · (max − lo)]` (default 1, the full range), `lo`
    /// being the minimum, or 0 when the minimum is within a tenth of the range above 0.
    /// "So far" is over the frames up to the one drawn, so every frame's colours are fixed
    /// when it is drawn and the animation matches the frames.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "fraction"
    )]
    pub clip: Option<f64>,
    /// A fixed colour range `[lo, hi]` for every picture instead of `clip`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "range"
    )]
    pub color_range: Option<[f64; 2]>,
    /// Unit of the grid spacing, shown on the pictures' axes: default "m" for heat and wave,
    /// none for fdtd (normalized units); "" shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_unit: Option<String>,
    /// Unit of time, shown in titles and on the seismogram: default "s" for heat and wave
    /// (shown as ms or µs when the outputs are that close), none for fdtd; "" shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<String>,
    /// Unit of the plotted quantity, beside the colour bar (e.g. "K", "Pa", "V/m"); default
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_unit: Option<String>,
}

impl Default for OutputSpec {
    /// No outputs, every step, into the case's directory.
    fn default() -> Self {
        OutputSpec {
            dir: PathBuf::new(),
            every: 1,
            png: false,
            frames: false,
            gif: false,
            npy: false,
            vti: false,
            slice: None,
            clip: None,
            color_range: None,
            length_unit: None,
            time_unit: None,
            value_unit: None,
        }
    }
}

/// `clip`: a number in (0, 1].
fn fraction<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<f64>, D::Error> {
    let v = f64::deserialize(d)?;
    if v > 0.0 && v <= 1.0 {
        Ok(Some(v))
    } else {
        Err(serde::de::Error::custom(format!(
            "clip = {v}: give a fraction of the peak in (0, 1], e.g. 0.25"
        )))
    }
}

/// `color_range`: two finite numbers, the first below the second.
fn range<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<[f64; 2]>, D::Error> {
    let [lo, hi] = <[f64; 2]>::deserialize(d)?;
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok(Some([lo, hi]))
    } else {
        Err(serde::de::Error::custom(format!(
            "color_range = [{lo}, {hi}]: give [lo, hi] with lo < hi"
        )))
    }
}

/// A whole case file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// `heat`, `wave` or `fdtd`.
    pub physics: Physics,
    /// `f32` or `f64` (default).
    #[serde(default)]
    pub precision: Precision,
    /// Grid.
    pub grid: GridSpec,
    /// Time stepping.
    pub time: TimeSpec,
    /// Spatial scheme.
    #[serde(default)]
    pub scheme: SchemeSpec,
    /// Initial condition.
    #[serde(default)]
    pub initial: Initial,
    /// Material fields.
    #[serde(default)]
    pub material: Material,
    /// Point sources.
    #[serde(default)]
    pub sources: Vec<SourceSpec>,
    /// Receivers.
    #[serde(default)]
    pub receivers: Vec<ReceiverSpec>,
    /// Shots, each with its sources and receivers (wave; see [`shots`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shots: Vec<ShotSpec>,
    /// Shots from files of positions (wave; see [`shots`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geometry: Option<GeometrySpec>,
    /// Boundaries (heat and wave; required there, refused for fdtd, which sets them per
    /// axis in `[fdtd]`).
    #[serde(default)]
    pub boundary: Option<BoundarySpec>,
    /// The Maxwell setup (fdtd only).
    #[serde(default)]
    pub fdtd: Option<fdtd::FdtdSpec>,
    /// Outputs.
    pub output: OutputSpec,
    /// The GPU schedule in place of the device's defaults (`schedule = "NAME"`, e.g.
    /// `"fdtd:pass=off"`; docs/schedules.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::gpu::schedule::Schedule>,
}

/// A loaded case: the parsed file, its text (for line numbers) and its directory.
#[derive(Debug, Clone)]
pub struct Case {
    /// The parsed contents.
    pub spec: CaseSpec,
    /// Where it was read from.
    pub path: PathBuf,
    text: String,
}

/// What validation derived: the time step, the number of steps and the stability limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Time step used.
    pub dt: f64,
    /// Largest stable time step.
    pub limit: f64,
    /// Steps to run.
    pub steps: u64,
    /// Largest material value (κ or c).
    pub material_max: f64,
}

impl Case {
    /// Read and parse a case file; errors name the key and its line.
    pub fn load(path: impl AsRef<Path>) -> Result<Case> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(crate::error::io_err(&path))?;
        Case::parse(&text, path)
    }

    /// Parse case text; `path` locates relative files.
    pub fn parse(text: &str, path: PathBuf) -> Result<Case> {
        let spec: CaseSpec = toml::from_str(text).map_err(|e| Error::Case {
            path: path.clone(),
            detail: match e.message() {
                // serde points a missing table at line 1; say what to add instead.
                "missing field `output`" => "missing table [output]; add one, e.g. [output] with \
                                             dir = \"out\" and every = 100 (steps between outputs)"
                    .into(),
                _ => e.to_string().trim_end().to_string(),
            },
        })?;
        let case = Case {
            spec,
            path,
            text: text.to_string(),
        };
        case.check_tables()?;
        Ok(case)
    }

    /// Refuse tables that do not belong to the case's physics, and require the ones that do.
    fn check_tables(&self) -> Result<()> {
        schedule::check(self)?;
        self.check_shot_tables()?;
        let s = &self.spec;
        let refuse = |detail: String| Error::Case {
            path: self.path.clone(),
            detail,
        };
        if s.physics != Physics::Fdtd {
            if s.fdtd.is_some() {
                return Err(refuse(format!(
                    "[fdtd]{} is only for physics = \"fdtd\"; remove it",
                    self.line_of("fdtd")
                )));
            }
            if s.boundary.is_none() {
                return Err(refuse(
                    "missing field `boundary`; give e.g. boundary = \"periodic\"".into(),
                ));
            }
            return Ok(());
        }
        if s.fdtd.is_none() {
            return Err(refuse(
                "missing table [fdtd]; an fdtd case needs it, e.g. [fdtd] with \
                 boundary = [\"pec\", \"pec\", \"pec\"]"
                    .into(),
            ));
        }
        let wrong = [
            (
                "boundary",
                s.boundary.is_some(),
                "[fdtd] boundary (one per axis)",
            ),
            (
                "material",
                s.material != Material::default(),
                "[[fdtd.materials]]",
            ),
            ("sources", !s.sources.is_empty(), "[[fdtd.sources]]"),
            ("receivers", !s.receivers.is_empty(), "[[fdtd.probes]]"),
            (
                "initial",
                s.initial != Initial::Zero,
                "sources (fields start at zero)",
            ),
            (
                "scheme",
                s.scheme != SchemeSpec::default(),
                "nothing (the Yee scheme is fixed)",
            ),
        ];
        if let Some((key, _, instead)) = wrong.iter().find(|w| w.1) {
            return Err(refuse(format!(
                "`{key}`{} is for heat and wave cases; an fdtd case uses {instead} instead",
                self.line_of(key)
            )));
        }
        Ok(())
    }

    /// The `boundary` of a heat or wave case ([`Case::parse`] ensures it is given there).
    pub fn boundary(&self) -> &BoundarySpec {
        self.spec
            .boundary
            .as_ref()
            .unwrap_or(&BoundarySpec::Dirichlet)
    }

    /// A path in the case, relative to the case file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        match self.path.parent() {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// `" (line N)"` for the first line that sets `key`, for error messages.
    pub fn line_of(&self, key: &str) -> String {
        for (n, line) in self.text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with(key) && t[key.len()..].trim_start().starts_with(['=', ']']) {
                return format!(" (line {})", n + 1);
            }
            if t.starts_with('[') && t.trim_matches(['[', ']', ' ']) == key {
                return format!(" (line {})", n + 1);
            }
        }
        String::new()
    }

    pub(crate) fn invalid(&self, key: &str, what: String) -> Error {
        let leaf = key.rsplit('.').next().unwrap_or(key);
        let (path, line) = (self.path.display(), self.line_of(leaf));
        // A check's own error may already say "invalid case" and name the key: say each once.
        let what = what.strip_prefix("invalid case: ").unwrap_or(&what);
        match what.strip_prefix(key).filter(|r| r.starts_with([' ', ':'])) {
            Some(rest) => Error::Invalid(format!("{path}: {key}{line}{rest}")),
            None => Error::Invalid(format!("{path}: {key}{line}: {what}")),
        }
    }

    /// Number of axes.
    pub fn dim(&self) -> usize {
        self.spec.grid.shape.len()
    }

    /// Grid index nearest to physical position `x`, if inside the grid.
    pub fn nearest(&self, x: &[f64]) -> Option<[usize; 3]> {
        let g = &self.spec.grid;
        if x.len() != g.shape.len() {
            return None;
        }
        let mut out = [0; 3];
        for a in 0..x.len() {
            let i = (x[a] / g.spacing[a]).round();
            if !(i >= 0.0 && (i as usize) < g.shape[a]) {
                return None;
            }
            out[a] = i as usize;
        }
        Some(out)
    }

    /// Check the `[grid]` of a heat or wave case: 2 or 3 axes of at least 4 points, one
    /// positive finite spacing per axis, and a point count that can be indexed. Returns the
    /// number of grid points. Runs before anything is sized by the grid, so that a malformed
    /// or huge grid is refused instead of indexed or allocated.
    pub fn check_grid(&self) -> Result<usize> {
        let g = &self.spec.grid;
        let dim = self.dim();
        if !(2..=3).contains(&dim) {
            return Err(self.invalid("grid.shape", format!("{dim} axes; give 2 or 3 sizes")));
        }
        if g.spacing.len() != dim {
            return Err(self.invalid("grid.spacing", format!("needs {dim} values, one per axis")));
        }
        if g.shape.iter().any(|&n| n < 4) || g.spacing.iter().any(|&h| !(h > 0.0 && h.is_finite()))
        {
            return Err(self.invalid(
                "grid",
                "every axis needs at least 4 points and a positive spacing".into(),
            ));
        }
        g.shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| {
                self.invalid(
                    "grid.shape",
                    format!("{:?} has more points than this machine can index", g.shape),
                )
            })
    }

    /// Check everything that can be checked before any work, `material_max` being the largest
    /// κ or c (from the material fields). Returns the time-stepping plan. For an fdtd case
    /// `material_max` is unused: its limit is the Yee Courant limit (see [`fdtd`]).
    pub fn validate_with(&self, material_max: f64) -> Result<Plan> {
        self.validate_with_limit(material_max, None)
    }

    /// [`Case::validate_with`] with the stability `limit` and its reason given by the caller
    /// (a scheme whose limit the case's physics alone does not fix, e.g. variable density).
    pub fn validate_with_limit(
        &self,
        material_max: f64,
        limit: Option<(f64, String)>,
    ) -> Result<Plan> {
        let s = &self.spec;
        if s.physics == Physics::Fdtd {
            return fdtd::plan(self);
        }
        self.check_grid()?;
        let max_order = if s.physics == Physics::Wave { 8 } else { 16 };
        check_order(s.scheme.order, max_order)
            .map_err(|e| self.invalid("scheme.order", e.to_string()))?;
        if s.scheme.order / 2 > *s.grid.shape.iter().min().unwrap_or(&0) {
            return Err(self.invalid("scheme.order", "the stencil is wider than the grid".into()));
        }
        if !(material_max > 0.0 && material_max.is_finite()) {
            let key = if s.physics == Physics::Heat {
                "material.diffusivity"
            } else {
                "material.velocity"
            };
            return Err(self.invalid(
                key,
                format!("largest value {material_max}; it must be positive and finite"),
            ));
        }
        let (limit, why) = match (limit, s.physics) {
            (Some(given), _) => given,
            (None, Physics::Heat) => (
                heat_dt_limit(s.scheme.order, &s.grid.spacing, material_max)?,
                format!("explicit Euler: dt·κ_max·λ_max ≤ 2 with κ_max = {material_max}, λ_max the largest eigenvalue of the order-{} Laplacian", s.scheme.order),
            ),
            (None, Physics::Wave | Physics::Fdtd) => (
                wave_dt_limit(s.scheme.order, &s.grid.spacing, material_max)?,
                format!("leapfrog CFL: c_max·dt·sqrt(λ_max) ≤ 2 with c_max = {material_max}, order {}", s.scheme.order),
            ),
        };
        let dt = match (s.time.dt, s.time.cfl) {
            (Some(dt), None) => dt,
            (None, Some(c)) if c > 0.0 && c <= 1.0 => c * limit,
            (None, Some(c)) => {
                return Err(self.invalid(
                    "time.cfl",
                    format!("{c}: use 0 < cfl ≤ 1 (a fraction of the stability limit)"),
                ))
            }
            _ => return Err(self.invalid("time", "give exactly one of dt and cfl".into())),
        };
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(self.invalid("time.dt", format!("{dt}: must be positive")));
        }
        if dt > limit {
            return Err(Error::Unstable {
                dt,
                limit,
                why: format!("{}{}", why, self.line_of("dt")),
            });
        }
        if !(s.time.duration > 0.0 && s.time.duration.is_finite()) {
            return Err(self.invalid("time.duration", "must be positive".into()));
        }
        let steps = self.step_count(dt)?;
        self.validate_placement(s)?;
        Ok(Plan {
            dt,
            limit,
            steps,
            material_max,
        })
    }

    /// Steps of `dt` in `[time] duration` (at least 1; `duration` is positive and finite).
    /// Refuses a count past 2^53: a run that long never ends, and counts past 2^64 would
    /// saturate in the conversion and overflow where outputs are planned.
    pub(crate) fn step_count(&self, dt: f64) -> Result<u64> {
        const MAX: f64 = (1u64 << 53) as f64;
        let n = (self.spec.time.duration / dt).round().max(1.0);
        if n > MAX {
            return Err(self.invalid(
                "time.duration",
                format!(
                    "{} / dt {dt:e} is {n:e} steps, more than 2^53: shorten the duration or \
                     lengthen dt",
                    self.spec.time.duration
                ),
            ));
        }
        Ok(n as u64)
    }

    fn validate_placement(&self, s: &CaseSpec) -> Result<()> {
        let dim = self.dim();
        match (self.boundary(), s.physics) {
            (BoundarySpec::Cpml { .. }, Physics::Heat) => {
                return Err(self.invalid(
                    "boundary",
                    "cpml is for waves; use periodic or dirichlet".into(),
                ))
            }
            (BoundarySpec::Cpml { thickness }, _) => {
                let min = *s.grid.shape.iter().min().unwrap_or(&0);
                if *thickness < 4 || 3 * thickness > min {
                    return Err(self.invalid("thickness", format!("{thickness} cells: use at least 4 and at most a third of the smallest axis ({min})")));
                }
            }
            _ => {}
        }
        if s.physics == Physics::Heat {
            // The heat stepper has no point sources and records no traces: a case that gives
            // them would run without them and look as if they had no effect.
            if !s.sources.is_empty() {
                return Err(self.invalid(
                    "sources",
                    "point sources drive wave cases only; a heat case starts from [initial]: \
                     remove [[sources]] or use physics = \"wave\""
                        .into(),
                ));
            }
            if !s.receivers.is_empty() {
                return Err(self.invalid(
                    "receivers",
                    "receivers record wave cases only (a seismogram); a heat case writes its \
                     field through [output]: remove [[receivers]] or use physics = \"wave\""
                        .into(),
                ));
            }
        }
        self.check_points("")?;
        self.validate_initial(dim)?;
        if s.output.every == 0 {
            return Err(self.invalid("every", "must be at least 1".into()));
        }
        if let (Some(z), 3) = (s.output.slice, dim)
            && z >= s.grid.shape[2]
        {
            return Err(self.invalid("slice", format!("{z} is outside 0..{}", s.grid.shape[2])));
        }
        Ok(())
    }

    /// Check the `[[sources]]` and `[[receivers]]` (their positions and wavelet settings);
    /// errors name the keys with `prefix` before them (e.g. `shots[2].`).
    pub(crate) fn check_points(&self, prefix: &str) -> Result<()> {
        let s = &self.spec;
        for (i, src) in s.sources.iter().enumerate() {
            self.check_position(&format!("{prefix}sources[{i}]"), &src.position)?;
            if let (Some(_), Some(_)) = (&src.wavelet, src.delay) {
                return Err(self.invalid(
                    &format!("{prefix}sources[{i}].delay"),
                    "a source with a wavelet file takes its timing from the file's samples: \
                     remove delay, or shift the samples"
                        .into(),
                ));
            }
            // Each number enters the Ricker wavelet of every step: one NaN or infinity would
            // poison the whole field at the first step.
            if !(src.frequency > 0.0 && src.frequency.is_finite()) {
                return Err(self.invalid(
                    &format!("{prefix}sources[{i}].frequency"),
                    format!("{}: must be positive and finite", src.frequency),
                ));
            }
            if !src.amplitude.is_finite() {
                return Err(self.invalid(
                    &format!("{prefix}sources[{i}].amplitude"),
                    format!("{}: must be finite", src.amplitude),
                ));
            }
            if let Some(d) = src.delay.filter(|d| !d.is_finite()) {
                return Err(self.invalid(
                    &format!("{prefix}sources[{i}].delay"),
                    format!("{d}: must be finite"),
                ));
            }
            // The default delay divides by the frequency: a tiny one makes it infinite.
            if src.delay.is_none() && !(1.5 / src.frequency).is_finite() {
                return Err(self.invalid(
                    &format!("{prefix}sources[{i}].frequency"),
                    format!(
                        "{}: too small, the default delay 1.5 / frequency is infinite; give a \
                         larger frequency or a delay",
                        src.frequency
                    ),
                ));
            }
        }
        for (i, r) in s.receivers.iter().enumerate() {
            self.check_position(&format!("{prefix}receivers[{i}]"), &r.position)?;
        }
        Ok(())
    }

    /// Refuse a source's or receiver's `position` (`what` is e.g. `sources[0]`) outside the
    /// grid, with a coordinate count other than the grid's, or whose interpolation's support
    /// does not fit beside a wall.
    fn check_position(&self, what: &str, x: &[f64]) -> Result<()> {
        let dim = self.dim();
        if self.nearest(x).is_none() {
            return Err(self.invalid(
                &format!("{what}.position"),
                format!(
                    "{x:?} is outside the grid (or has not {dim} coordinates): give \
                     {dim} coordinates in the grid's length unit, each within 0 ..= (n − 1) · \
                     spacing of its axis"
                ),
            ));
        }
        if self.spread(x).is_none() {
            let g = &self.spec.grid;
            return Err(self.invalid(
                &format!("{what}.position"),
                format!(
                    "{x:?}: its interpolation over {} points per axis does not fit \
                     beside the walls of this {:?} grid; put it on a grid point or use a \
                     larger grid",
                    2 * crate::hicks::HALF_WIDTH,
                    g.shape
                ),
            ));
        }
        Ok(())
    }

    /// How each axis ends for the interpolation of sources and receivers.
    fn edges(&self) -> [crate::hicks::Edge; 3] {
        use crate::hicks::Edge;
        match self.boundary() {
            BoundarySpec::Periodic => [Edge::Periodic; 3],
            _ => [Edge::Wall; 3],
        }
    }

    /// Position `x` in cells per axis (of a position already checked to be in the grid).
    pub fn in_cells(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(&self.spec.grid.spacing)
            .map(|(x, h)| x / h)
            .collect()
    }

    /// The grid points and weights of a source or receiver at `x` (physical units): its
    /// grid point alone when on one, else Hicks' interpolation ([`crate::hicks::spread`]).
    /// `None` when its support does not fit beside a wall.
    pub fn spread(&self, x: &[f64]) -> Option<Vec<crate::hicks::Weighted>> {
        let g = &self.spec.grid;
        let n = [g.shape[0], g.shape[1], *g.shape.get(2).unwrap_or(&1)];
        crate::hicks::spread(&self.in_cells(x), n, self.edges())
    }

    /// Check the parameters of `[initial]` (its values over the grid are checked once computed,
    /// in [`crate::setup::prepare`]).
    fn validate_initial(&self, dim: usize) -> Result<()> {
        match &self.spec.initial {
            Initial::Gaussian {
                center,
                width,
                amplitude,
            } => {
                if center.len() != dim || center.iter().any(|c| !c.is_finite()) {
                    return Err(self.invalid(
                        "initial.gaussian.center",
                        format!("{center:?}: needs {dim} finite coordinates"),
                    ));
                }
                if !(*width > 0.0 && width.is_finite()) {
                    return Err(self.invalid(
                        "initial.gaussian.width",
                        format!("{width}: must be positive and finite"),
                    ));
                }
                if !amplitude.is_finite() {
                    return Err(self.invalid(
                        "initial.gaussian.amplitude",
                        format!("{amplitude}: must be finite"),
                    ));
                }
            }
            Initial::Text { value, .. } if !value.is_finite() => {
                return Err(self.invalid("initial.text.value", format!("{value}: must be finite")));
            }
            _ => {}
        }
        Ok(())
    }

    /// Scale the grid down by `factor` per axis keeping the physical extent, and switch to
    /// `cfl = 0.5` (tests run every example at a small size this way).
    pub fn coarsen(&mut self, factor: usize) {
        let g = &mut self.spec.grid;
        for a in 0..g.shape.len() {
            g.shape[a] = (g.shape[a] / factor).max(16);
            g.spacing[a] *= factor as f64;
        }
        if let Some(BoundarySpec::Cpml { thickness }) = &mut self.spec.boundary {
            *thickness = (*thickness / factor)
                .max(5)
                .min(g.shape.iter().min().copied().unwrap_or(16) / 3);
        }
        if let Some(f) = &mut self.spec.fdtd {
            // Keep an FDTD CPML about as thick physically, within what the coarse axis allows.
            for (a, b) in f.boundary.iter_mut().enumerate() {
                if let (fdtd::BoundaryName::Cpml(p), Some(&n)) = (b, g.shape.get(a)) {
                    // At least as thick as its grading needs (order + 2 cells, see Cpml).
                    let least = (p.order.unwrap_or(3) as usize + 2).max(4);
                    p.thickness = (p.thickness / factor)
                        .max(least)
                        .min(n.saturating_sub(1) / 2);
                }
            }
        }
        if let Some(z) = &mut self.spec.output.slice {
            *z /= factor;
        }
        self.spec.time.dt = None;
        self.spec.time.cfl = Some(0.5);
    }

    /// A hash of everything that affects the solution (not the outputs), for checkpoints.
    pub fn hash(&self) -> u64 {
        let mut s = self.spec.clone();
        s.output = OutputSpec::default();
        let text = serde_json::to_string(&s).unwrap_or_default();
        text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        })
    }
}
