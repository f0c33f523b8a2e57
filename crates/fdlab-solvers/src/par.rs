//! Whole-field scans and maps in parallel, a chunk per task: rayon's per-value iterators
//! cost ~10 ns a value in its plumbing (measured: slower than one thread), while a chunk's
//! plain loop vectorises.

use rayon::prelude::*;

/// Values per task.
const CHUNK: usize = 1 << 14;

/// The index of the first value of `v` for which `bad` holds.
pub(crate) fn position_first(v: &[f64], bad: impl Fn(f64) -> bool + Sync) -> Option<usize> {
    let c = v
        .par_chunks(CHUNK)
        .position_first(|c| c.iter().fold(false, |b, &x| b | bad(x)))?;
    let start = c * CHUNK;
    v[start..].iter().position(|&x| bad(x)).map(|i| start + i)
}

/// The largest of `v` and `init` (`f64::max`: NaNs are skipped).
pub(crate) fn max(v: &[f64], init: f64) -> f64 {
    v.par_chunks(CHUNK)
        .map(|c| c.iter().copied().fold(init, f64::max))
        .reduce(|| init, f64::max)
}

/// The smallest of `v` and `init` (`f64::min`: NaNs are skipped).
pub(crate) fn min(v: &[f64], init: f64) -> f64 {
    v.par_chunks(CHUNK)
        .map(|c| c.iter().copied().fold(init, f64::min))
        .reduce(|| init, f64::min)
}

/// `f` of each value of `v`, in order.
pub(crate) fn map<T: Copy + Default + Send>(v: &[f64], f: impl Fn(f64) -> T + Sync) -> Vec<T> {
    let mut out = vec![T::default(); v.len()];
    out.par_chunks_mut(CHUNK)
        .zip(v.par_chunks(CHUNK))
        .for_each(|(d, s)| {
            for (d, &s) in d.iter_mut().zip(s) {
                *d = f(s);
            }
        });
    out
}

/// `len` copies of `x`.
pub(crate) fn filled<T: Copy + Default + Send + Sync>(len: usize, x: T) -> Vec<T> {
    let mut out = vec![T::default(); len];
    out.par_chunks_mut(CHUNK).for_each(|d| d.fill(x));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn scans_agree_with_the_serial_ones() {
        let v: Vec<f64> = (0..100_003)
            .map(|i| ((i * 7919) % 1000) as f64 + 1.0)
            .collect();
        assert_eq!(super::max(&v, 0.0), 1000.0);
        assert_eq!(super::min(&v, f64::INFINITY), 1.0);
        let mut w = v.clone();
        w[70_001] = -1.0;
        w[90_000] = f64::NAN;
        assert_eq!(
            super::position_first(&w, |x| !(x > 0.0 && x.is_finite())),
            Some(70_001)
        );
        assert_eq!(
            super::position_first(&v, |x| !(x > 0.0 && x.is_finite())),
            None
        );
        assert_eq!(super::map(&v, |x| 2.0 * x)[99_999], 2.0 * v[99_999]);
        assert_eq!(super::filled(5, 3.0), vec![3.0; 5]);
    }
}
