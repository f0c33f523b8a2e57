//! What a run's pictures show and how they are labelled: the quantity and its unit, the
//! axes' unit, times in titles, the colour map and its rule.

use super::scale::Rule;
use crate::error::Result;
use crate::{render, ColorMap, Figure, Image, Scale};
use std::path::Path;

/// Times as the case's unit shows them: seconds read as s, ms, µs or ns, whichever makes
/// `typical` (e.g. the run's duration) at least 0.1 of it (never more than s).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeUnit {
    /// The unit shown (`None`: none).
    pub name: Option<String>,
    /// Times are multiplied by this before they are shown.
    pub factor: f64,
}

impl TimeUnit {
    /// The unit for `unit` (from the case) and times around `typical`.
    pub fn new(unit: Option<String>, typical: f64) -> TimeUnit {
        if unit.as_deref() != Some("s") {
            return TimeUnit {
                name: unit,
                factor: 1.0,
            };
        }
        let (name, factor) = [("s", 1.0), ("ms", 1e3), ("µs", 1e6)]
            .into_iter()
            .find(|(_, f)| typical * f >= 0.1)
            .unwrap_or(("ns", 1e9));
        TimeUnit {
            name: Some(name.into()),
            factor,
        }
    }
}

/// A time for a title, with enough decimals that frames `interval` apart differ.
pub fn time_text(t: f64, interval: f64, unit: &TimeUnit) -> String {
    let (t, interval) = (t * unit.factor, interval * unit.factor);
    let number = if interval > 0.0 && (1e-4..1e6).contains(&interval) && t.abs() < 1e7 {
        let decimals = ((-interval.log10()).ceil() as i32 + 1).clamp(0, 6) as usize;
        format!("{t:.decimals$}")
    } else {
        format!("{t:.3e}")
    };
    match &unit.name {
        Some(u) => format!("{number} {u}"),
        None => number,
    }
}

/// How a run's field pictures look.
#[derive(Debug, Clone)]
pub struct Look {
    /// Samples along x.
    pub nx: usize,
    /// Samples along y.
    pub ny: usize,
    /// `[x0, x1, y0, y1]` of the plane, in the length unit.
    pub extent: [f64; 4],
    /// The plotted quantity and its unit.
    pub quantity: (String, Option<String>),
    /// The length unit of the axes.
    pub length: Option<String>,
    /// Time step.
    pub dt: f64,
    /// The time between outputs (sets the decimals of the times in titles).
    pub interval: f64,
    /// The unit of the times in titles.
    pub time: TimeUnit,
    /// Where the slice of a 3-D grid is, for the title ("z = 0.5 m").
    pub at: Option<String>,
    /// Colour map.
    pub cmap: ColorMap,
    /// Colour range rule.
    pub rule: Rule,
}

impl Look {
    /// The title of the frame of `step`: "pressure, t = 0.462 s".
    pub fn title(&self, step: u64) -> String {
        let t = time_text(step as f64 * self.dt, self.interval, &self.time);
        match &self.at {
            Some(at) => format!("{} at {at}, t = {t}", self.quantity.0),
            None => format!("{}, t = {t}", self.quantity.0),
        }
    }

    /// Draw the frame of `step` with a plot `width` pixels wide (`path` names it in errors).
    pub fn draw(
        &self,
        path: &Path,
        step: u64,
        values: &[f32],
        scale: Scale,
        width: u32,
    ) -> Result<Image> {
        let title = self.title(step);
        let len = self.length.as_deref();
        render(
            path,
            &Figure {
                values,
                nx: self.nx,
                ny: self.ny,
                extent: self.extent,
                y_down: false,
                x_axis: ("x", len),
                y_axis: ("y", len),
                title: &title,
                quantity: (&self.quantity.0, self.quantity.1.as_deref()),
                scale,
                cmap: self.cmap,
                aspect: None,
            },
            width,
        )
    }
}
