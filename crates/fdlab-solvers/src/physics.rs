//! Backend-neutral physics: stencil coefficients, stability limits, CPML profiles and sources.
//!
//! Every array here is plain data that a GPU kernel can upload unchanged.

use crate::error::{Error, Result};
use fdlab_core::central_weights;

/// Second-derivative weights `w[0..=r]` (centre first, then offsets 1..=r; symmetric) for one
/// axis, divided by `h²`.
pub fn second_weights(accuracy: usize, h: f64) -> Result<Vec<f64>> {
    let w = central_weights(2, accuracy)?;
    let r = w.len() / 2;
    Ok(w[r..].iter().map(|x| x / (h * h)).collect())
}

/// First-derivative weights `w[1..=r]` (antisymmetric: offset `-m` has `-w[m]`) divided by `h`;
/// `w[0]` is 0.
pub fn first_weights(accuracy: usize, h: f64) -> Result<Vec<f64>> {
    let w = central_weights(1, accuracy)?;
    let r = w.len() / 2;
    Ok(w[r..].iter().map(|x| x / h).collect())
}

/// The symbol of `-∂²` for the weights of [`second_weights`] at wavenumber `k`:
/// `-(w0 + 2 Σ w_m cos(m k h))`, the eigenvalue of the discrete operator on `exp(i k x)`.
pub fn second_symbol(w: &[f64], k: f64, h: f64) -> f64 {
    let mut s = w[0];
    for (m, wm) in w.iter().enumerate().skip(1) {
        s += 2.0 * wm * (m as f64 * k * h).cos();
    }
    -s
}

/// The largest eigenvalue of `-L` over all wavenumbers: the sum over axes of each axis's maximum
/// symbol, found on a fine sampling of `[0, π]` that includes `π`.
pub fn max_laplacian_symbol(accuracy: usize, spacing: &[f64]) -> Result<f64> {
    let mut total = 0.0;
    for &h in spacing {
        let w = second_weights(accuracy, h)?;
        let best = (0..=2048)
            .map(|s| second_symbol(&w, std::f64::consts::PI * s as f64 / 2048.0 / h, h))
            .fold(0.0f64, f64::max);
        total += best;
    }
    Ok(total)
}

/// Explicit heat equation `u⁺ = u + Δt κ L u`: stable while `Δt κ_max λ_max ≤ 2`.
pub fn heat_dt_limit(accuracy: usize, spacing: &[f64], kappa_max: f64) -> Result<f64> {
    Ok(2.0 / (kappa_max * max_laplacian_symbol(accuracy, spacing)?))
}

/// Leapfrog wave equation `u⁺ = 2u − u⁻ + c²Δt² L u`: stable while `c_max² Δt² λ_max ≤ 4`.
pub fn wave_dt_limit(accuracy: usize, spacing: &[f64], c_max: f64) -> Result<f64> {
    Ok(2.0 / (c_max * max_laplacian_symbol(accuracy, spacing)?.sqrt()))
}

/// Leapfrog variable-density wave `p⁺ = 2p − p⁻ + Δt² K D⁻(b̄ D⁺p)` with staggered first
/// derivatives of `accuracy`: stable while `c_eff² Δt² λ ≤ 4`, where `λ = Σ_a (2 Σ_m |w_m| /
/// h_a)²` is the largest eigenvalue of `−D⁻D⁺` (at the Nyquist wavenumber) and `c_eff² = max_i
/// K_i · max b` over the points the update at `i` reads (see [`vd_speed`]).
pub fn wave_vd_dt_limit(accuracy: usize, spacing: &[f64], c_eff: f64) -> Result<f64> {
    let w = fdlab_core::step::staggered_weights(1, accuracy)
        .map_err(|e| Error::Invalid(format!("scheme.order = {accuracy}: {e}")))?;
    // The weights of both sides: `Σ|w| = 2 Σ_m |w_m|`.
    let total: f64 = w.iter().map(|x| x.abs()).sum::<f64>();
    let lambda: f64 = spacing.iter().map(|h| (total / h).powi(2)).sum();
    Ok(2.0 / (c_eff * lambda.sqrt()))
}

/// The speed that bounds the variable-density step's stability: `sqrt(max_i K_i · max_j b_j)`
/// with `K = ρc²`, `b = 1/ρ`, `j` over the box of `radius` points around `i` (the buoyancies
/// the update at `i` averages), on a grid of `n` points (x fastest). Where ρ is constant it is
/// `c_max`.
pub fn vd_speed(n: [usize; 3], dim: usize, radius: usize, rho: &[f64], c: &[f64]) -> f64 {
    let cells = n.iter().product::<usize>();
    let at = |v: &[f64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let mut bmax: Vec<f64> = (0..cells).map(|i| 1.0 / at(rho, i)).collect();
    // A separable running maximum: along each axis in turn.
    let stride = [1, n[0], n[0] * n[1]];
    for a in 0..dim {
        let prev = bmax.clone();
        for (i, out) in bmax.iter_mut().enumerate() {
            let x = i / stride[a] % n[a];
            let lo = x.saturating_sub(radius);
            let hi = (x + radius).min(n[a] - 1);
            *out = (lo..=hi)
                .map(|y| prev[i - x * stride[a] + y * stride[a]])
                .fold(0.0, f64::max);
        }
    }
    (0..cells)
        .map(|i| at(rho, i) * at(c, i).powi(2) * bmax[i])
        .fold(0.0, f64::max)
        .sqrt()
}

/// Check the accuracy order: even, 2 to 16 (heat) or 2 to 8 (wave, `max`).
pub fn check_order(accuracy: usize, max: usize) -> Result<()> {
    if accuracy < 2 || !accuracy.is_multiple_of(2) || accuracy > max {
        return Err(Error::Invalid(format!(
            "scheme.order = {accuracy}: use an even order from 2 to {max}"
        )));
    }
    Ok(())
}

/// Ricker wavelet of peak frequency `f0`, delayed by `t0`: `(1 − 2a) e^{−a}`, `a = (π f0 (t − t0))²`.
pub fn ricker(t: f64, f0: f64, t0: f64) -> f64 {
    let a = (std::f64::consts::PI * f0 * (t - t0)).powi(2);
    (1.0 - 2.0 * a) * (-a).exp()
}

/// Convolutional PML coefficients along one axis (Pasalic & McGarry form for the second-order
/// wave equation): `ψⁿ = b ψⁿ⁻¹ + a ∂p`, `ζⁿ = b ζⁿ⁻¹ + a (∂²p + ∂ψ)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CpmlProfile {
    /// `a[i]`, zero outside the layer.
    pub a: Vec<f64>,
    /// `b[i]`, one outside the layer.
    pub b: Vec<f64>,
    /// Whether cell `i` needs the memory terms (inside the layer or within the stencil radius).
    pub active: Vec<bool>,
}

impl CpmlProfile {
    /// The profile for `n` cells of spacing `h` with `thickness` layer cells at each end,
    /// quadratic damping tuned for reflection coefficient `r_coef`, frequency shift `π f0`.
    pub fn new(
        n: usize,
        h: f64,
        thickness: usize,
        c_max: f64,
        f0: f64,
        dt: f64,
        radius: usize,
    ) -> CpmlProfile {
        let r_coef: f64 = 1e-4;
        let len = thickness as f64 * h;
        let d0 = -3.0 * c_max * r_coef.ln() / (2.0 * len.max(h));
        let alpha_max = std::f64::consts::PI * f0;
        let mut a = vec![0.0; n];
        let mut b = vec![1.0; n];
        let mut active = vec![false; n];
        for i in 0..n {
            let depth = if i < thickness {
                (thickness - i) as f64
            } else if i + thickness >= n {
                (i + thickness + 1 - n) as f64
            } else {
                0.0
            };
            if thickness > 0 && (i < thickness + radius || i + thickness + radius >= n) {
                active[i] = true;
            }
            if depth > 0.0 {
                let x = depth / thickness as f64;
                let d = d0 * x * x;
                let al = alpha_max * (1.0 - x);
                b[i] = (-(d + al) * dt).exp();
                a[i] = d / (d + al) * (b[i] - 1.0);
            }
        }
        CpmlProfile { a, b, active }
    }
}

/// Render `text` into a `nx × ny` coverage mask (1 inside the letters), centred, filling about
/// 80% of the width. Row `j = 0` is the bottom of the picture (y up).
pub fn text_mask(text: &str, nx: usize, ny: usize) -> Result<Vec<f64>> {
    use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
    use fdlab_output::FONT;
    let font =
        FontRef::try_from_slice(FONT).map_err(|e| Error::Invalid(format!("built-in font: {e}")))?;
    let mut mask = vec![0.0; nx * ny];
    if text.is_empty() {
        return Ok(mask);
    }
    // Measure at a unit scale, then scale so that the text fits 80% of width and 60% of height.
    let probe = font.as_scaled(PxScale::from(100.0));
    let width: f32 = text
        .chars()
        .map(|c| probe.h_advance(font.glyph_id(c)))
        .sum();
    let s = (0.8 * nx as f32 / width * 100.0).min(0.6 * ny as f32 / 100.0 * 100.0);
    let scaled = font.as_scaled(PxScale::from(s));
    let total: f32 = text
        .chars()
        .map(|c| scaled.h_advance(font.glyph_id(c)))
        .sum();
    let mut x = (nx as f32 - total) / 2.0;
    let base = (ny as f32 + scaled.ascent() + scaled.descent()) / 2.0;
    for c in text.chars() {
        let id = font.glyph_id(c);
        let glyph = id.with_scale_and_position(s, ab_glyph::point(x, base));
        x += scaled.h_advance(id);
        if let Some(out) = font.outline_glyph(glyph) {
            let bb = out.px_bounds();
            out.draw(|gx, gy, cov| {
                let px = bb.min.x as i64 + gx as i64;
                let py = bb.min.y as i64 + gy as i64;
                if px >= 0 && py >= 0 && (px as usize) < nx && (py as usize) < ny {
                    let j = ny - 1 - py as usize;
                    let m = &mut mask[px as usize + nx * j];
                    *m = (*m + cov as f64).min(1.0);
                }
            });
        }
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_order_symbol_max_is_four_over_h2() {
        let l = max_laplacian_symbol(2, &[0.5]).unwrap();
        assert!((l - 16.0).abs() < 1e-12, "{l}");
        // 2-D, 2nd order, h = 1: dt limit 2/(κ·8) = 0.25.
        assert!((heat_dt_limit(2, &[1.0, 1.0], 1.0).unwrap() - 0.25).abs() < 1e-12);
        // 1-D wave CFL: c dt/h ≤ 1.
        assert!((wave_dt_limit(2, &[1.0], 1.0).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn text_mask_has_letters() {
        let m = text_mask("Hi", 64, 32).unwrap();
        let on = m.iter().filter(|&&v| v > 0.5).count();
        assert!(on > 30 && on < 64 * 32 / 2, "{on}");
    }

    #[test]
    fn cpml_is_identity_outside_the_layer() {
        let p = CpmlProfile::new(50, 1.0, 10, 1.0, 0.05, 0.5, 2);
        assert_eq!(p.a[25], 0.0);
        assert_eq!(p.b[25], 1.0);
        assert!(p.a[0] < 0.0 && p.a[49] < 0.0);
        assert!((p.a[0] - p.a[49]).abs() < 1e-15);
        assert!(p.active[11] && !p.active[12]);
    }
}
