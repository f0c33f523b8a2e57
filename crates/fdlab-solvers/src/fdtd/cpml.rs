//! Convolutional PML (Roden & Gedney 2000): an absorbing layer of `N` cells inside the grid at
//! both ends of an axis, backed by PEC walls.
//!
//! In the layer every derivative `∂_a` in the curls becomes `(1/κ_a) ∂_a + ψ_a`, with the memory
//! variable `ψⁿ = b ψⁿ⁻¹ + c ∂_a F`, `b = exp(−(σ/κ + α)Δt)` and `c = σ(b − 1)/(κ(σ + κα))`
//! (normalized units, `ε0 = 1`). The main updates in [`super::update`] stay untouched (and
//! fast); after each of them one extra pass over the layer cells only adds the difference
//! `s·((1/κ − 1)·D + ψ)` for each such term `s·D` of the curl. The pass is additive per axis, so
//! edges and corners, which lie in two or three layers, need no special case.
//!
//! Profiles, with depth `ρ` into the layer of thickness `L = N·Δ` and grading order `m`:
//! `σ = σ_max (ρ/L)^m` with `σ_max = 0.8 (m + 1)/(η Δ)` (`η = 1`), `κ = 1 + (κ_max − 1)(ρ/L)^m`,
//! and `α = α_max (1 − ρ/L)`: largest at the interface, where the complex frequency shift lets
//! evanescent waves decay and keeps the layer from drifting at very low frequencies, and zero at
//! the wall, where `σ` does the absorbing. `σ_max` assumes vacuum in the layer (`ε_r = 1`).

use super::grid::{Component, Fields, Grid};
use fdlab_core::Scalar;
use rayon::prelude::*;

/// The two layers (low and high end) of one axis: profiles per layer position and the ψ arrays.
///
/// The layers are stored as one slab of `2N` cells along the axis (low layer first) and the
/// full grid across it; slab position `l` is grid index `l` for `l < N`, else `n − 2N + l`.
#[derive(Debug, Clone)]
struct AxisLayers<T> {
    axis: usize,
    thickness: usize,
    /// Slab shape.
    dims: [usize; 3],
    /// `(1/κ − 1, b, c)` per slab position, at the E update's derivative points (integer
    /// positions along the axis) and the H update's (half-integer).
    coef_e: Vec<[T; 3]>,
    coef_h: Vec<[T; 3]>,
    /// ψ of the two curl terms with a derivative along this axis, for E and for H.
    psi_e: [Vec<T>; 2],
    psi_h: [Vec<T>; 2],
}

/// One axis's CPML coefficients `(1/κ − 1, b, c)` per slab position (low layer first, then
/// high), at E's and at H's derivative points; the ψ arrays of that axis are slabs of the grid
/// with `2·thickness` cells along `axis` (x fastest), two for E then two for H.
#[derive(Debug, Clone)]
pub(crate) struct AxisProfile<T> {
    pub axis: usize,
    pub thickness: usize,
    pub coef_e: Vec<[T; 3]>,
    pub coef_h: Vec<[T; 3]>,
}

/// All CPML layers of a grid with their ψ memory variables (axes without a CPML have none).
#[derive(Debug, Clone)]
pub(crate) struct Layers<T> {
    axes: Vec<AxisLayers<T>>,
}

const E: [Component; 3] = [Component::Ex, Component::Ey, Component::Ez];
const H: [Component; 3] = [Component::Hx, Component::Hy, Component::Hz];

/// The curl terms with a derivative along `a`: `(target, source, sign)` as component indices.
/// Component `a+1` of a curl holds `−∂_a F_{a+2}` and component `a+2` holds `+∂_a F_{a+1}`.
fn terms(a: usize) -> [(usize, usize, f64); 2] {
    let (b, c) = ((a + 1) % 3, (a + 2) % 3);
    [(b, c, -1.0), (c, b, 1.0)]
}

impl<T: Scalar> Layers<T> {
    /// The layers of `grid` for time step `dt`, or `None` without any CPML axis.
    pub(crate) fn new(grid: &Grid, dt: f64) -> Option<Self> {
        let axes: Vec<_> = (0..3)
            .filter_map(|a| grid.boundary[a].cpml().map(|p| (a, p)))
            .map(|(a, p)| {
                let (n, t, d) = (grid.n[a], p.thickness, grid.spacing[a]);
                let mut dims = grid.n;
                dims[a] = 2 * t;
                let size = dims.iter().product();
                // Depth into the layer, in cells, of grid position x (in cells).
                let depth = |x: f64| (t as f64 - x).max(x - (n - t) as f64).max(0.0);
                let prof = |off: f64| -> Vec<[T; 3]> {
                    (0..2 * t)
                        .map(|l| {
                            let i = if l < t { l } else { n - 2 * t + l };
                            p.coefficients(depth(i as f64 + off), d, dt)
                                .map(T::from_f64)
                        })
                        .collect()
                };
                AxisLayers {
                    axis: a,
                    thickness: t,
                    dims,
                    coef_e: prof(0.0),
                    coef_h: prof(0.5),
                    psi_e: [vec![T::zero(); size], vec![T::zero(); size]],
                    psi_h: [vec![T::zero(); size], vec![T::zero(); size]],
                }
            })
            .collect();
        (!axes.is_empty()).then_some(Layers { axes })
    }

    /// After `H −= Δt ∇×E`: the CPML part of the curl in the layers.
    pub(crate) fn correct_h(&mut self, g: &Grid, f: &mut Fields<T>, dt: f64) {
        for layer in &mut self.axes {
            layer.pass(g, f, None, dt);
        }
    }

    /// After `E = ca·E + cb·∇×H`: the CPML part of the curl in the layers, times `cb`.
    pub(crate) fn correct_e(&mut self, g: &Grid, f: &mut Fields<T>, cb: &[T]) {
        for layer in &mut self.axes {
            layer.pass(g, f, Some(cb), 0.0);
        }
    }

    /// Each CPML axis's profiles, in the order of [`Layers::state`]: what the GPU stepper
    /// uploads to apply the same terms inside its fused kernels.
    pub(crate) fn profiles(&self) -> Vec<AxisProfile<T>> {
        self.axes
            .iter()
            .map(|l| AxisProfile {
                axis: l.axis,
                thickness: l.thickness,
                coef_e: l.coef_e.clone(),
                coef_h: l.coef_h.clone(),
            })
            .collect()
    }

    /// All ψ values, axis by axis (E then H), for checkpoints.
    pub(crate) fn state(&self) -> Vec<T> {
        let mut out = Vec::new();
        for l in &self.axes {
            for v in l.psi_e.iter().chain(&l.psi_h) {
                out.extend_from_slice(v);
            }
        }
        out
    }

    /// Put back what [`Layers::state`] returned; `false` if the length does not fit.
    pub(crate) fn set_state(&mut self, s: &[T]) -> bool {
        let total: usize = self.axes.iter().map(|l| 4 * l.psi_e[0].len()).sum();
        if s.len() != total {
            return false;
        }
        let mut at = 0;
        for l in &mut self.axes {
            for v in l.psi_e.iter_mut().chain(l.psi_h.iter_mut()) {
                let len = v.len();
                v.copy_from_slice(&s[at..at + len]);
                at += len;
            }
        }
        true
    }

    /// Zero every ψ.
    pub(crate) fn clear(&mut self) {
        for l in &mut self.axes {
            for v in l.psi_e.iter_mut().chain(l.psi_h.iter_mut()) {
                v.fill(T::zero());
            }
        }
    }
}

impl<T: Scalar> AxisLayers<T> {
    /// One pass over the slab: for each curl term `s·∂_a F` of the updated field (E when `cb`
    /// is given, else H), update ψ and add `w·s·((1/κ − 1)·D + ψ)` with `w = cb` for E and
    /// `−Δt` for H. Parallel over slab planes, row by row over contiguous runs of cells.
    fn pass(&mut self, g: &Grid, f: &mut Fields<T>, cb: Option<&[T]>, dt: f64) {
        let (a, t, dims) = (self.axis, self.thickness, self.dims);
        let n = g.n;
        let electric = cb.is_some();
        let inv = T::from_f64(1.0 / g.spacing[a]);
        let minus_dt = T::from_f64(-dt);
        let stride = [1, n[0], n[0] * n[1]][a];
        let targets = if electric { E } else { H };
        let Fields {
            ex,
            ey,
            ez,
            hx,
            hy,
            hz,
        } = f;
        // Borrow the updated triple mutably and the other one shared, without copies.
        let (dsts, srcs) = if electric {
            ([ex, ey, ez], [&*hx, &*hy, &*hz])
        } else {
            ([hx, hy, hz], [&*ex, &*ey, &*ez])
        };
        let coef = if electric { &self.coef_e } else { &self.coef_h };
        let psis = if electric {
            &mut self.psi_e
        } else {
            &mut self.psi_h
        };
        let plane = n[0] * n[1];
        // Slab position `l` along an axis of `m` cells → grid index.
        let global = |l: usize, m: usize| if l < t { l } else { m - 2 * t + l };
        let x_wall = g.boundary[0].has_walls();
        for (term, &(ti, si, sign)) in terms(a).iter().enumerate() {
            let tc = targets[ti];
            let src = &srcs[si][..];
            let sign = T::from_f64(sign);
            // E tangential to the x walls stays zero at i = 0 (the walls of the other axes
            // are whole rows, skipped below).
            let first = usize::from(electric && x_wall && tc != Component::Ex);
            // Slab plane `ks` is field plane `ks`, except on a z layer, whose slab planes are
            // the 2N field planes of the two layers in order: pair them up, then go parallel.
            let planes: Vec<(usize, &mut [T])> = dsts[ti]
                .chunks_mut(plane)
                .enumerate()
                .filter(|(k, _)| a != 2 || *k < t || *k + t >= n[2])
                .collect();
            planes
                .into_par_iter()
                .zip(psis[term].par_chunks_mut(dims[0] * dims[1]))
                .enumerate()
                .for_each(|(ks, ((k, dst), psi))| {
                    for js in 0..dims[1] {
                        let j = if a == 1 { global(js, n[1]) } else { js };
                        let l_row = [0, js, ks][a];
                        // A row on a wall of the target (y or z, or the layer's own wall at
                        // index 0) is held at zero: nothing to correct.
                        if electric && (g.on_pec_wall(tc, [1, j, k]) || (a > 0 && l_row == 0)) {
                            continue;
                        }
                        let r = k * plane + j * n[0];
                        let lr = j * n[0];
                        let pr = js * dims[0];
                        if a > 0 {
                            // One coefficient set for the whole row: plain slice loops.
                            let i0 = first;
                            let here = &src[r + i0..r + n[0]];
                            let psi = &mut psi[pr + i0..pr + n[0]];
                            let out = &mut dst[lr + i0..lr + n[0]];
                            let k3 = coef[l_row];
                            let ia = [0, j, k][a];
                            match cb {
                                Some(cb) => {
                                    let nb = &src[r - stride + i0..r - stride + n[0]];
                                    let w = &cb[r + i0..r + n[0]];
                                    kernel(
                                        out,
                                        psi,
                                        k3,
                                        |i| (here[i] - nb[i]) * inv,
                                        |i| sign * w[i],
                                    );
                                }
                                None if ia + 1 < n[a] => {
                                    let nb = &src[r + stride + i0..r + stride + n[0]];
                                    kernel(
                                        out,
                                        psi,
                                        k3,
                                        |i| (nb[i] - here[i]) * inv,
                                        |_| sign * minus_dt,
                                    );
                                }
                                None => {
                                    kernel(out, psi, k3, |i| -here[i] * inv, |_| sign * minus_dt)
                                }
                            }
                            continue;
                        }
                        // An x layer: two runs of cells, [first, last + 1, slab position of
                        // the first], with the coefficients varying along the run.
                        let lo = usize::from(electric);
                        for (i0, i1, p0) in [(lo, t, lo), (n[0] - t, n[0], t)] {
                            for i in i0..i1 {
                                let c = r + i;
                                let l = p0 + (i - i0);
                                let ia = i;
                                // The same one-sided difference as the main update; a
                                // missing neighbour is the PEC wall (zero tangential field).
                                let d = if electric {
                                    (src[c] - src[c - stride]) * inv
                                } else if ia + 1 < n[a] {
                                    (src[c + stride] - src[c]) * inv
                                } else {
                                    -src[c] * inv
                                };
                                let [kinv, b, cc] = coef[l];
                                let s = pr + p0 + (i - i0);
                                psi[s] = b * psi[s] + cc * d;
                                let w = cb.map_or(minus_dt, |cb| cb[c]);
                                dst[lr + i] = dst[lr + i] + w * sign * (kinv * d + psi[s]);
                            }
                        }
                    }
                });
        }
    }
}

/// Along a run of cells with one coefficient set `(1/κ − 1, b, c)`: `ψ = b·ψ + c·D` and
/// `out += w·((1/κ − 1)·D + ψ)`, with `D` and the signed weight `w` per cell.
#[inline(always)]
fn kernel<T: Scalar>(
    out: &mut [T],
    psi: &mut [T],
    [kinv, b, c]: [T; 3],
    d: impl Fn(usize) -> T,
    w: impl Fn(usize) -> T,
) {
    let psi = &mut psi[..out.len()];
    for (i, (o, p)) in out.iter_mut().zip(psi.iter_mut()).enumerate() {
        let d = d(i);
        *p = b * *p + c * d;
        *o = *o + w(i) * (kinv * d + *p);
    }
}
