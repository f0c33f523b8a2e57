//! What a case's pictures show and how they are labelled: the quantity and its unit, the
//! axes' unit, times in titles, the colour map and its rule.

use super::scale::Rule;
use crate::case::{Case, Physics};
use crate::error::Result;
use crate::output::{render, ColorMap, Figure, Image, Scale};
use crate::stepper::PlaneSample;
use std::path::Path;

/// A unit from the case: the case's own (`""` meaning none), else `default`.
fn unit(given: &Option<String>, default: Option<&str>) -> Option<String> {
    match given {
        Some(u) if u.is_empty() => None,
        Some(u) => Some(u.clone()),
        None => default.map(str::to_string),
    }
}

/// Times as the case's unit shows them: seconds read as s, ms, µs or ns, whichever makes
/// `typical` (e.g. the run's duration) at least 0.1 of it (never more than s).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeUnit {
    /// The unit shown (`None`: none).
    pub name: Option<String>,
    /// Times are multiplied by this before they are shown.
    pub factor: f64,
}

impl TimeUnit {
    /// The unit for `unit` (from the case) and times around `typical`.
    pub(crate) fn new(unit: Option<String>, typical: f64) -> TimeUnit {
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
pub(crate) fn time_text(t: f64, interval: f64, unit: &TimeUnit) -> String {
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

/// `v` with at most four decimals and no trailing zeros: "0.75", "12".
fn short(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How a run's field pictures look.
#[derive(Debug, Clone)]
pub(crate) struct Look {
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
    /// Time step, and the time between outputs.
    pub dt: f64,
    interval: f64,
    time: TimeUnit,
    /// Where the slice of a 3-D grid is, for the title.
    at: Option<String>,
    /// Colour map.
    pub cmap: ColorMap,
    /// Colour range rule.
    pub rule: Rule,
}

impl Look {
    /// The pictures of `case` stepped by `dt`, showing the samples `p` of the plane `z`.
    pub(crate) fn new(case: &Case, dt: f64, p: PlaneSample, z: usize) -> Look {
        let s = &case.spec;
        let o = &s.output;
        let fdtd = s.physics == Physics::Fdtd;
        let signed = s.physics != Physics::Heat;
        let quantity = match (s.physics, &s.fdtd) {
            (Physics::Heat, _) => "temperature".to_string(),
            (Physics::Fdtd, Some(f)) => format!("{:?}", f.plot),
            _ => "pressure".to_string(),
        };
        let length = unit(&o.length_unit, (!fdtd).then_some("m"));
        let interval = o.every.max(1) as f64 * dt;
        let time = TimeUnit::new(unit(&o.time_unit, (!fdtd).then_some("s")), s.time.duration);
        let h = &s.grid.spacing;
        let at = (s.grid.shape.len() == 3).then(|| {
            let z = short(z as f64 * h.get(2).copied().unwrap_or(1.0));
            match &length {
                Some(u) => format!("z = {z} {u}"),
                None => format!("z = {z}"),
            }
        });
        Look {
            nx: p.width(),
            ny: p.height(),
            extent: [0.0, p.nx as f64 * h[0], 0.0, p.ny as f64 * h[1]],
            quantity: (quantity, unit(&o.value_unit, None)),
            length,
            dt,
            interval,
            time,
            at,
            cmap: if signed {
                ColorMap::Seismic
            } else {
                ColorMap::Heat
            },
            rule: Rule {
                signed,
                clip: o.clip.unwrap_or(if signed { 0.25 } else { 1.0 }),
                fixed: o.color_range,
            },
        }
    }

    /// The title of the frame of `step`: "pressure, t = 0.462 s".
    pub(crate) fn title(&self, step: u64) -> String {
        let t = time_text(step as f64 * self.dt, self.interval, &self.time);
        match &self.at {
            Some(at) => format!("{} at {at}, t = {t}", self.quantity.0),
            None => format!("{}, t = {t}", self.quantity.0),
        }
    }

    /// Draw the frame of `step` with a plot `width` pixels wide (`path` names it in errors).
    pub(crate) fn draw(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_show_times_in_a_unit_that_suits_the_output_interval() {
        let s = TimeUnit::new(Some("s".into()), 0.9);
        assert_eq!(time_text(0.4622, 0.012, &s), "0.462 s");
        let ms = TimeUnit::new(Some("s".into()), 0.01);
        assert_eq!(time_text(3e-4, 3e-4, &ms), "0.30 ms");
        let none = TimeUnit::new(None, 0.066);
        assert_eq!(time_text(1.8, 0.066, &none), "1.800");
    }
}
