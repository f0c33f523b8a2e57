//! Sources and receivers between grid points: Hicks' band-limited interpolation.
//!
//! G. J. Hicks, "Arbitrary source and receiver positioning in finite-difference schemes using
//! Kaiser windowed sinc functions", Geophysics 67(1), 156–166 (2002). A point at `x` (in
//! cells) is spread over (source) or gathered from (receiver) the `2·r` grid points nearest
//! to it along each axis with the weights `sinc(i − x) · W(i − x)`, `W` the Kaiser window
//! `I₀(b·sqrt(1 − (d/r)²)) / I₀(b)` of half-width `r`; in 2-D and 3-D the weights are the
//! product of the axes' (separable), so a point costs up to `(2r)^d` grid points: 64 in 2-D,
//! 512 in 3-D with the default `r = 4`. An axis on which the point lies on a grid point (within
//! [`ON_GRID`] cells) takes that point alone with weight 1: a position on the grid reduces to
//! the single-point source or receiver exactly, bit for bit.
//!
//! The window parameter `b` is Hicks' Table 1 value for a monopole: `b = 6.31` for `r = 4`
//! at `kmax = π/2` (the wavenumber of 4 points per wavelength, where its spectral error is
//! 1.34·10⁻³; the table gives 4.14 for `kmax = 2π/3`).
//!
//! Edges: on a periodic axis the weights wrap around. Any other edge (rigid, or the outer edge
//! of an absorbing layer) holds `p = 0` at the first point outside the grid (index `−1` and
//! `n`), and the weights that fall beyond it are mirrored about it with opposite sign (Hicks'
//! antisymmetric folding for a pressure-free surface); the weight that falls on it is
//! dropped. Folded at both ends, the support fits any axis of 3 points or more (a case's
//! grid has at least 4); one that does not fit has no weights ([`weights_1d`] returns `None`)
//! and the case is refused.

/// Half-width `r` of the window in grid points: `2·r` points per axis.
pub const HALF_WIDTH: usize = 4;

/// Kaiser window parameter `b` for [`HALF_WIDTH`] (Hicks 2002, Table 1, monopole, `kmax = π/2`).
pub const KAISER_B: f64 = 6.31;

/// Distance in cells below which a coordinate counts as on its nearest grid point: positions
/// written in a case file in physical units (`0.3` with a spacing of `0.01`) land within
/// rounding of a grid point, and are meant to be on it.
pub const ON_GRID: f64 = 1e-9;

/// How an axis ends, for the interpolation's support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// Wraps around.
    Periodic,
    /// `p = 0` at the first point outside: weights beyond it are mirrored with opposite sign.
    Wall,
}

/// One grid point of a spread point: its cell and its weight.
pub type Weighted = ([usize; 3], f64);

/// The modified Bessel function of the first kind of order 0, by its power series (all terms
/// positive; converges for the arguments a window meets, `|x| ≤ b`).
pub fn bessel_i0(x: f64) -> f64 {
    let q = x * x / 4.0;
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..200 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

/// `sin(πx) / (πx)`, 1 at 0.
pub fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let px = std::f64::consts::PI * x;
        px.sin() / px
    }
}

/// The Kaiser window of half-width `r` and parameter `b` at `d` (0 outside `|d| ≤ r`).
pub fn kaiser(d: f64, r: f64, b: f64) -> f64 {
    let y = d / r;
    if y.abs() > 1.0 {
        return 0.0;
    }
    bessel_i0(b * (1.0 - y * y).max(0.0).sqrt()) / bessel_i0(b)
}

/// Whether `x` (in cells) is on its nearest grid point.
pub fn on_grid(x: f64) -> bool {
    (x - x.round()).abs() <= ON_GRID
}

/// The weights of a point at `x` (in cells from index 0) on an axis of `n` points, as
/// `(index, weight)` pairs sorted by index, each index once: the nearest point alone with
/// weight 1 when `x` is on the grid, else Hicks' windowed sinc over `2·r` points, wrapped or
/// mirrored at the edges. `None` when a mirrored weight still falls outside the axis (an axis
/// too short for the support) or `x` is not finite.
pub fn weights_1d(x: f64, n: usize, edge: Edge, r: usize, b: f64) -> Option<Vec<(usize, f64)>> {
    if !x.is_finite() || n == 0 {
        return None;
    }
    let ni = n as i64;
    let place = |i: i64| -> Option<(i64, f64)> {
        match edge {
            Edge::Periodic => Some((i.rem_euclid(ni), 1.0)),
            Edge::Wall if (0..ni).contains(&i) => Some((i, 1.0)),
            // On the wall itself p = 0: the weight there adds nothing.
            Edge::Wall if i == -1 || i == ni => Some((-1, 0.0)),
            Edge::Wall if i < -1 => Some((-2 - i, -1.0)),
            Edge::Wall => Some((2 * ni - i, -1.0)),
        }
    };
    if on_grid(x) {
        let (i, s) = place(x.round() as i64)?;
        return (s == 1.0 && (0..ni).contains(&i)).then(|| vec![(i as usize, 1.0)]);
    }
    let first = x.floor() as i64 - r as i64 + 1;
    let mut out: Vec<(usize, f64)> = Vec::with_capacity(2 * r);
    for i in first..first + 2 * r as i64 {
        let d = i as f64 - x;
        let w = sinc(d) * kaiser(d, r as f64, b);
        let (j, s) = place(i)?;
        if s == 0.0 {
            continue;
        }
        if !(0..ni).contains(&j) {
            return None;
        }
        match out.iter_mut().find(|(k, _)| *k == j as usize) {
            Some((_, v)) => *v += s * w,
            None => out.push((j as usize, s * w)),
        }
    }
    out.sort_by_key(|&(i, _)| i);
    Some(out)
}

/// The grid points and weights of a point at `x` (in cells per axis, `dim` of them) on a grid
/// of `n` points per axis: the product of the axes' [`weights_1d`] with the default window.
/// `None` as for [`weights_1d`] on any axis.
pub fn spread(x: &[f64], n: [usize; 3], edges: [Edge; 3]) -> Option<Vec<Weighted>> {
    let one = vec![(0usize, 1.0)];
    let axis = |a: usize| -> Option<Vec<(usize, f64)>> {
        match x.get(a) {
            Some(&xa) => weights_1d(xa, n[a], edges[a], HALF_WIDTH, KAISER_B),
            None => Some(one.clone()),
        }
    };
    let (wx, wy, wz) = (axis(0)?, axis(1)?, axis(2)?);
    let mut out = Vec::with_capacity(wx.len() * wy.len() * wz.len());
    for &(k, fz) in &wz {
        for &(j, fy) in &wy {
            for &(i, fx) in &wx {
                out.push(([i, j, k], fx * fy * fz));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(x: f64, n: usize, edge: Edge) -> Vec<(usize, f64)> {
        weights_1d(x, n, edge, HALF_WIDTH, KAISER_B).unwrap()
    }

    #[test]
    fn i0_matches_known_values() {
        // Abramowitz & Stegun, table 9.8: I0(1) = 1.2660658778, I0(5) = 27.239871823.
        assert!((bessel_i0(0.0) - 1.0).abs() < 1e-15);
        assert!((bessel_i0(1.0) - 1.266_065_877_752_008).abs() < 1e-13);
        assert!((bessel_i0(5.0) - 27.239_871_823_604_45).abs() < 1e-10);
    }

    #[test]
    fn on_grid_points_take_one_weight_of_exactly_one() {
        for (x, i) in [(0.0, 0), (7.0, 7), (29.999_999_999_999_996, 30), (63.0, 63)] {
            assert_eq!(w(x, 64, Edge::Wall), vec![(i, 1.0)]);
            assert_eq!(w(x, 64, Edge::Periodic), vec![(i, 1.0)]);
        }
        let s = spread(&[3.0, 5.0, 7.0], [16, 16, 16], [Edge::Wall; 3]).unwrap();
        assert_eq!(s, vec![([3, 5, 7], 1.0)]);
    }

    #[test]
    fn weights_sum_to_one_anywhere_within_the_windows_accuracy() {
        // Random offsets (a fixed LCG), away from the edges: 8 weights summing to 1 to within
        // the window's spectral error at k = 0 (Hicks' Table 1: 1.34e-3 up to kmax).
        let mut s = 12345u64;
        for _ in 0..200 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = 10.0 + (s >> 11) as f64 / (1u64 << 53) as f64;
            let v = w(x, 32, Edge::Wall);
            assert_eq!(v.len(), 2 * HALF_WIDTH);
            let sum: f64 = v.iter().map(|p| p.1).sum();
            assert!((sum - 1.0).abs() < 2e-3, "x = {x}: sum {sum}");
            // The support is the 8 points around x.
            assert_eq!(v[0].0, x.floor() as usize - 3);
            assert_eq!(v[7].0, x.floor() as usize + 4);
        }
    }

    #[test]
    fn weights_are_symmetric_about_the_point() {
        for f in [0.1, 0.25, 0.5, 0.8] {
            let a = w(10.0 + f, 32, Edge::Wall);
            let b = w(10.0 + (1.0 - f), 32, Edge::Wall);
            // Mirror: the weight at 10 + k for offset f is the weight at 21 − (10 + k) for 1 − f.
            for (i, v) in &a {
                let j = 21 - i;
                let u = b.iter().find(|p| p.0 == j).unwrap().1;
                assert!((u - v).abs() < 1e-14, "f = {f}: {v} vs {u}");
            }
        }
        // Half a cell: the two middle weights are equal and the largest.
        let h = w(10.5, 32, Edge::Wall);
        assert!((h[3].1 - h[4].1).abs() < 1e-15 && h[3].1 > 0.6);
    }

    #[test]
    fn periodic_edges_wrap_and_walls_mirror_with_opposite_sign() {
        let inner = w(10.3, 32, Edge::Wall);
        let wrapped = w(0.3, 32, Edge::Periodic);
        // Same weights, moved by 10 and wrapped onto 29..31.
        for (i, v) in &inner {
            let j = (*i as i64 - 10).rem_euclid(32) as usize;
            let u = wrapped.iter().find(|p| p.0 == j).unwrap().1;
            assert!((u - v).abs() < 1e-14, "{u} vs {v}");
        }
        // Beside a wall (p = 0 at index −1): support −3..4 at x = 0.3; −1 dropped, −2 onto 0
        // and −3 onto 1, negated.
        let free = w(0.3, 32, Edge::Periodic);
        let wall = w(0.3, 32, Edge::Wall);
        let at = |v: &[(usize, f64)], i| v.iter().find(|p| p.0 == i).map_or(0.0, |p| p.1);
        assert_eq!(wall.len(), 5);
        assert!((at(&wall, 0) - (at(&free, 0) - at(&free, 30))).abs() < 1e-15);
        assert!((at(&wall, 1) - (at(&free, 1) - at(&free, 29))).abs() < 1e-15);
        assert_eq!(at(&wall, 2), at(&free, 2));
        // The high side mirrors about n.
        let high = w(31.0 - 0.3, 32, Edge::Wall);
        assert!((at(&high, 31) - at(&wall, 0)).abs() < 1e-15);
        // Folding keeps the support inside any axis of 3 points or more (a grid has at least
        // 4); a single point cannot hold it, and a coordinate that is not finite has none.
        let fold = |x, n| weights_1d(x, n, Edge::Wall, HALF_WIDTH, KAISER_B);
        assert_eq!(fold(1.5, 4).map(|v| v.len()), Some(4));
        assert!(fold(0.3, 1).is_none());
        assert!(fold(f64::NAN, 8).is_none());
    }

    #[test]
    fn spread_is_the_product_of_the_axes() {
        let s = spread(&[5.25, 6.0], [16, 16, 1], [Edge::Wall; 3]).unwrap();
        let wx = w(5.25, 16, Edge::Wall);
        assert_eq!(s.len(), 8);
        for ((c, v), (i, u)) in s.iter().zip(&wx) {
            assert_eq!(*c, [*i, 6, 0]);
            assert_eq!(v, u);
        }
        let s3 = spread(&[5.25, 6.5, 7.75], [16; 3], [Edge::Wall; 3]).unwrap();
        assert_eq!(s3.len(), 512);
        let total: f64 = s3.iter().map(|p| p.1).sum();
        assert!((total - 1.0).abs() < 5e-3, "{total}");
    }
}
