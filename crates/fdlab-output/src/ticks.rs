//! Axis ticks: round values (1, 2 or 5 times a power of ten), labels with one number of
//! decimals per axis, and a shared power of ten taken out of the labels when the values are
//! very large or very small, so that labels stay short and never overlap.

/// The ticks of one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// Tick positions, in the axis' units, ascending.
    pub values: Vec<f64>,
    /// One label per position: the value divided by `10^exponent`.
    pub labels: Vec<String>,
    /// The power of ten taken out of the labels (0: none); the axis title says `×10ⁿ`.
    pub exponent: i32,
}

/// Labels take out a power of ten when the largest value is at least this …
const BIG: f64 = 1e4;
/// … or below this.
const SMALL: f64 = 1e-2;

/// At most `max_count` (at least 2) round ticks within `[lo, hi]`. A tick within 1e-9 of the
/// span from zero is exactly 0 (and labelled "0"): a range that starts at −2.6e−26 shows a 0,
/// not the rounding error.
pub fn ticks(lo: f64, hi: f64, max_count: usize) -> Ticks {
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || span.is_infinite() {
        let v = if lo.is_finite() { lo } else { 0.0 };
        return Ticks {
            values: vec![v],
            labels: vec![label(v, 0, 0)],
            exponent: 0,
        };
    }
    let max_count = max_count.max(2) as i64;
    let eps = 1e-9 * span;
    // The smallest round step that leaves at most `max_count` ticks: as many as fit.
    let p0 = (span / max_count as f64).log10().floor() as i32 - 1;
    let (mut p, mut step, mut k0, mut k1) = (p0, 0.0, 0, 0);
    'search: for q in p0..p0 + 4 {
        for m in [1.0, 2.0, 5.0] {
            let st = m * 10f64.powi(q);
            let (a, b) = (
                ((lo - eps) / st).ceil() as i64,
                ((hi + eps) / st).floor() as i64,
            );
            if b - a < max_count {
                (p, step, k0, k1) = (q, st, a, b);
                break 'search;
            }
        }
    }
    let values: Vec<f64> = (k0..=k1)
        .map(|k| {
            let v = k as f64 * step;
            if v.abs() < eps {
                0.0
            } else {
                v
            }
        })
        .collect();
    let big = lo.abs().max(hi.abs());
    let exponent = if !(SMALL..BIG).contains(&big) {
        big.log10().floor() as i32
    } else {
        0
    };
    // Decimals that show the step (a step of 2.5 would need one more; steps are 1, 2 or 5).
    let decimals = (exponent - p).max(0) as usize;
    let labels = values
        .iter()
        .map(|&v| label(v, exponent, decimals))
        .collect();
    Ticks {
        values,
        labels,
        exponent,
    }
}

/// `v / 10^exponent` with `decimals` decimals; zero is "0".
fn label(v: f64, exponent: i32, decimals: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{:.*}", decimals, v / 10f64.powi(exponent));
    // A value that rounds to zero at this precision is still not zero: keep the sign off.
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".into()
    } else {
        s
    }
}

/// `×10ⁿ` in superscript digits, for an axis title; empty for `n = 0`.
pub fn times_ten_to(n: i32) -> String {
    if n == 0 {
        return String::new();
    }
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s = String::from("×10");
    if n < 0 {
        s.push('⁻');
    }
    for c in n.unsigned_abs().to_string().chars() {
        s.push(SUP[c.to_digit(10).unwrap_or(0) as usize]);
    }
    s
}

/// An axis title: `name (×10ⁿ unit)`, leaving out what is not there.
pub fn axis_title(name: &str, exponent: i32, unit: Option<&str>) -> String {
    let scale = times_ten_to(exponent);
    let unit = unit.unwrap_or("");
    match (scale.is_empty(), unit.is_empty()) {
        (true, true) => name.to_string(),
        (true, false) => format!("{name} ({unit})"),
        (false, true) => format!("{name} ({scale})"),
        (false, false) => format!("{name} ({scale} {unit})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rounding_error_at_the_bottom_of_the_range_is_a_clean_zero() {
        let t = ticks(-2.58e-26, 1.0, 6);
        assert_eq!(t.values[0], 0.0);
        assert_eq!(t.labels[0], "0");
        assert_eq!(t.exponent, 0);
        assert_eq!(t.labels, ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
    }

    #[test]
    fn symmetric_small_ranges_share_one_power_of_ten_and_one_precision() {
        let t = ticks(-4.8e-8, 4.8e-8, 6);
        assert_eq!(t.exponent, -8);
        assert!(t.values.contains(&0.0));
        assert_eq!(t.labels, ["-4", "-2", "0", "2", "4"]);
        assert_eq!(axis_title("pressure", t.exponent, None), "pressure (×10⁻⁸)");
    }

    #[test]
    fn tick_counts_stay_within_the_limit_and_labels_are_distinct() {
        for (lo, hi) in [
            (0.0, 1500.0),
            (0.0, 0.9),
            (-3.3, 7.1),
            (0.5, 5.5),
            (1e5, 3e5),
        ] {
            for max in 3..9 {
                let t = ticks(lo, hi, max);
                assert!(t.values.len() <= max, "{lo} {hi} {max}: {:?}", t.values);
                assert!(t.values.len() >= 2, "{lo} {hi} {max}: {:?}", t.values);
                let mut l = t.labels.clone();
                l.dedup();
                assert_eq!(l.len(), t.labels.len(), "{:?}", t.labels);
            }
        }
    }
}
