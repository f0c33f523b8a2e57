//! The colour range of each picture, fixed when the picture is drawn: from the extremes of the
//! frames so far (or the case's fixed `color_range`). The animation, made at the end from the
//! spill file, replays the same rule over the same f32 samples, so its frames have exactly
//! the colours of the PNG frames drawn during the run.

use crate::Scale;

/// How a case's pictures choose their colours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Signed field (wave, fdtd): symmetric about zero; else (heat) from the minimum.
    pub signed: bool,
    /// Fraction of the peak (signed) or of the range from the minimum that the colours span.
    pub clip: f64,
    /// A fixed range, used instead.
    pub fixed: Option<[f64; 2]>,
}

/// Extremes of the samples of the frames so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    min: f64,
    max: f64,
}

impl Default for Running {
    fn default() -> Self {
        Running {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

/// The smallest and largest of `values` (non-finite ones skipped).
fn extremes(values: &[f32]) -> (f64, f64) {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v as f64), b.max(v as f64))
        })
}

impl Running {
    /// Take in the next frame's samples; returns the colour scale that frame is drawn with.
    pub fn next(&mut self, rule: &Rule, values: &[f32]) -> Scale {
        let (lo, hi) = extremes(values);
        self.min = self.min.min(lo);
        self.max = self.max.max(hi);
        let (a, b) = self.range(rule);
        Scale {
            lo: a,
            hi: b,
            below: lo < a,
            above: hi > b,
        }
    }

    /// The colour range after the frames so far.
    fn range(&self, rule: &Rule) -> (f64, f64) {
        if let Some([a, b]) = rule.fixed {
            return (a, b);
        }
        if self.min > self.max || self.min.is_nan() || self.max.is_nan() {
            return (if rule.signed { -1.0 } else { 0.0 }, 1.0);
        }
        if rule.signed {
            let m = rule.clip * self.min.abs().max(self.max.abs());
            // An all-zero field (before a source has fired) is drawn in the middle colour.
            let m = if m > 0.0 { m } else { 1.0 };
            (-m, m)
        } else {
            // A field whose minimum is just above zero (a hot spot in a cold domain) starts its
            // colours at zero, so the bar reads from 0; a field far from zero (300 K ± 10)
            // keeps its own minimum.
            let near_zero = self.min >= 0.0 && self.min <= 0.1 * (self.max - self.min);
            let lo = if near_zero { 0.0 } else { self.min };
            let hi = lo + rule.clip * (self.max - lo);
            // A uniform field is drawn in the bottom colour.
            let hi = if hi > lo { hi } else { lo + lo.abs().max(1.0) };
            (lo, hi)
        }
    }
}
