//! Finite-difference weights by Fornberg's algorithm, in exact rational arithmetic.
//!
//! B. Fornberg, "Generation of finite difference formulas on arbitrarily spaced grids",
//! Math. Comp. 51 (1988). Computing in rationals makes the tables exact, so tests can compare
//! them with published fractions and `f64` weights are correctly rounded.

use crate::error::{Error, Result};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

/// Largest derivative order fdlab builds central stencils for.
pub const MAX_DERIVATIVE: usize = 4;
/// Largest accuracy order fdlab builds central stencils for.
pub const MAX_ACCURACY: usize = 16;

/// Weights `c[j]` such that `f^(m)(x0) ≈ Σ c[j] f(x[j])`, for integer nodes `x` and point `x0`
/// (unit spacing), exact.
pub fn fornberg_weights(m: usize, x0: i64, x: &[i64]) -> Vec<BigRational> {
    let n = x.len();
    let q = |v: i64| BigRational::from_integer(BigInt::from(v));
    // delta[k][j]: weight of node j for derivative k using the nodes seen so far.
    let mut delta = vec![vec![BigRational::zero(); n]; m + 1];
    if n == 0 {
        return vec![];
    }
    delta[0][0] = BigRational::one();
    let mut c1 = BigRational::one();
    for i in 1..n {
        let mut c2 = BigRational::one();
        let mn = i.min(m);
        let c4 = q(x[i] - x0);
        let c5 = q(x[i - 1] - x0);
        for j in 0..i {
            let c3 = q(x[i] - x[j]);
            c2 = &c2 * &c3;
            if j == i - 1 {
                // The new node's weights come from the previous node's weights before those
                // are updated below.
                for k in (0..=mn).rev() {
                    let prev = if k > 0 {
                        delta[k - 1][i - 1].clone() * q(k as i64)
                    } else {
                        BigRational::zero()
                    };
                    delta[k][i] = (&c1 / &c2) * (prev - &c5 * &delta[k][i - 1]);
                }
            }
            for k in (0..=mn).rev() {
                let prev = if k > 0 {
                    delta[k - 1][j].clone() * q(k as i64)
                } else {
                    BigRational::zero()
                };
                delta[k][j] = (&c4 * &delta[k][j] - prev) / &c3;
            }
        }
        c1 = c2;
    }
    delta.swap_remove(m)
}

/// Radius of the central stencil for derivative `m` at accuracy `p`.
pub fn central_radius(m: usize, p: usize) -> usize {
    // Points: 2·⌊(m+1)/2⌋ − 1 + p (Fornberg's table), radius half of one less.
    (2 * m.div_ceil(2) - 1 + p - 1) / 2
}

/// Checks a derivative and accuracy order.
pub fn check_orders(m: usize, p: usize) -> Result<()> {
    if !(1..=MAX_DERIVATIVE).contains(&m) {
        return Err(Error::Order {
            detail: format!("derivative order {m} is not supported; use 1 to {MAX_DERIVATIVE}"),
        });
    }
    if p < 2 || p % 2 == 1 || p > MAX_ACCURACY {
        return Err(Error::Order {
            detail: format!(
                "accuracy order {p} is not supported; central stencils need an even order from 2 \
                 to {MAX_ACCURACY}"
            ),
        });
    }
    Ok(())
}

/// Exact central weights for derivative `m` at accuracy `p`, offsets `-r..=r`, unit spacing.
pub fn central_weights_exact(m: usize, p: usize) -> Result<Vec<BigRational>> {
    check_orders(m, p)?;
    let r = central_radius(m, p) as i64;
    let nodes: Vec<i64> = (-r..=r).collect();
    Ok(fornberg_weights(m, 0, &nodes))
}

/// Central weights for derivative `m` at accuracy `p`, offsets `-r..=r`, unit spacing, as `f64`.
///
/// ```
/// let w = fdlab_core::central_weights(1, 8).unwrap();
/// assert_eq!(w.len(), 9);
/// assert!((w[5] - 4.0 / 5.0).abs() < 1e-15 && (w[8] + 1.0 / 280.0).abs() < 1e-15);
/// ```
pub fn central_weights(m: usize, p: usize) -> Result<Vec<f64>> {
    Ok(central_weights_exact(m, p)?
        .iter()
        .map(|w| w.to_f64().unwrap_or(f64::NAN))
        .collect())
}
