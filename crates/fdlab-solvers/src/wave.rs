//! Acoustic wave `p_tt = c² Δp + s(t) δ(x − x_s)`: leapfrog in time, 2nd–8th order in space,
//! variable velocity, Ricker point sources, receivers and convolutional PML.

use crate::bands::sweep_with;
use crate::error::{Error, Result};
use crate::hicks::Weighted;
use crate::layout::{to_bytes, HaloFill, Layout};
use crate::physics::{first_weights, ricker, CpmlProfile};
use crate::stepper::{first_bad, first_non_finite, StatePart, Stepper};
use crate::wave_row::{CpmlRows, WaveRow};
use fdlab_core::Scalar;
use rayon::prelude::*;
use std::sync::Arc;

/// How the wave leaves the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WaveBoundary {
    /// Wraps around.
    Periodic,
    /// `p = 0` outside the grid (reflects).
    Rigid,
    /// Absorbing convolutional PML of `thickness` cells inside the grid, tuned for `f0`.
    Cpml {
        /// Layer cells at each side.
        thickness: usize,
        /// Dominant frequency (sets the CPML frequency shift).
        f0: f64,
    },
}

/// A point source: adds `Δt² · amplitude · s(t) / ΔV` at its cell each step, `s` a Ricker
/// wavelet or given samples; between grid points, spread over [`PointSource::spread`]'s
/// points, each adding its weight times that (see [`crate::hicks`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointSource {
    /// Grid cell (the nearest, when the source is spread).
    pub cell: [usize; 3],
    /// Peak frequency.
    pub f0: f64,
    /// Delay of the wavelet's peak.
    pub t0: f64,
    /// Amplitude.
    pub amplitude: f64,
    /// The grid points and weights it is spread over; empty: `cell` alone, weight 1.
    pub spread: Vec<Weighted>,
    /// One value per step (value `k` at time `k·Δt`, zero after the last) in place of the
    /// Ricker of `f0` and `t0`.
    pub wavelet: Option<Arc<[f64]>>,
}

impl PointSource {
    /// The grid points and weights it adds to: [`PointSource::spread`], or `cell` alone.
    pub fn points(&self) -> Vec<Weighted> {
        points_or_cell(&self.spread, self.cell)
    }

    /// `s(t)` at step `step` (time `step · dt`): the wavelet's sample, or the Ricker's value.
    pub fn wavelet_at(&self, step: u64, dt: f64) -> f64 {
        match &self.wavelet {
            Some(w) => usize::try_from(step)
                .ok()
                .and_then(|k| w.get(k))
                .copied()
                .unwrap_or(0.0),
            None => ricker(step as f64 * dt, self.f0, self.t0),
        }
    }
}

/// `spread`, or `cell` alone with weight 1 when it is empty.
fn points_or_cell(spread: &[Weighted], cell: [usize; 3]) -> Vec<Weighted> {
    if spread.is_empty() {
        vec![(cell, 1.0)]
    } else {
        spread.to_vec()
    }
}

/// Wave equation parameters in backend-neutral form.
#[derive(Debug, Clone)]
pub struct WaveSetup {
    /// Grid sizes (nz = 1 in 2-D).
    pub n: [usize; 3],
    /// Number of axes (2 or 3).
    pub dim: usize,
    /// Spacing per axis.
    pub spacing: [f64; 3],
    /// Spatial accuracy order (2 to 8, even).
    pub order: usize,
    /// Time step.
    pub dt: f64,
    /// Velocity: one value, or one per grid point.
    pub velocity: Vec<f64>,
    /// Density: one value, or one per grid point; `None` for the constant-density equation
    /// `p_tt = c²Δp` (with a density the step is [`crate::wave_vd`]'s).
    pub density: Option<Vec<f64>>,
    /// Boundary treatment.
    pub boundary: WaveBoundary,
    /// Pressure at step 0.
    pub initial: Vec<f64>,
    /// Pressure at step −1 (`None`: equal to step 0, i.e. at rest).
    pub previous: Option<Vec<f64>>,
    /// Point sources.
    pub sources: Vec<PointSource>,
    /// Receiver cells (the nearest, for a receiver between grid points); trace sample `s` is
    /// the pressure at time `(s + 1) Δt`.
    pub receivers: Vec<[usize; 3]>,
    /// Per receiver, the grid points and weights its value is gathered from (the weighted
    /// sum, [`crate::hicks`]); a list shorter than `receivers`, or an empty entry: the
    /// receiver's cell alone, weight 1.
    pub receiver_spread: Vec<Vec<Weighted>>,
}

impl WaveSetup {
    /// The grid points and weights receiver `i` gathers from.
    pub fn receiver_points(&self, i: usize) -> Vec<Weighted> {
        let spread = self
            .receiver_spread
            .get(i)
            .map_or(&[][..], |v| v.as_slice());
        points_or_cell(spread, self.receivers[i])
    }

    /// Whether a source or receiver is spread over more than its cell.
    pub fn has_spread_points(&self) -> bool {
        self.sources.iter().any(|s| s.points().len() > 1)
            || (0..self.receivers.len()).any(|i| self.receiver_points(i).len() > 1)
    }
}

/// One shot's point sources and receivers: what changes from shot to shot of a case with
/// shots, while the stepper (grid, coefficients, kernels) stays.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShotPoints {
    /// Point sources.
    pub sources: Vec<PointSource>,
    /// Receiver cells, as [`WaveSetup::receivers`].
    pub receivers: Vec<[usize; 3]>,
    /// Per receiver, its grid points and weights, as [`WaveSetup::receiver_spread`].
    pub receiver_spread: Vec<Vec<Weighted>>,
}

impl ShotPoints {
    /// The grid points and weights receiver `i` gathers from.
    pub fn receiver_points(&self, i: usize) -> Vec<Weighted> {
        let spread = self
            .receiver_spread
            .get(i)
            .map_or(&[][..], |v| v.as_slice());
        points_or_cell(spread, self.receivers[i])
    }
}

impl WaveSetup {
    /// This setup's sources and receivers.
    pub fn shot_points(&self) -> ShotPoints {
        ShotPoints {
            sources: self.sources.clone(),
            receivers: self.receivers.clone(),
            receiver_spread: self.receiver_spread.clone(),
        }
    }

    /// Replace the sources and receivers with `points`.
    pub fn set_shot_points(&mut self, points: &ShotPoints) {
        self.sources = points.sources.clone();
        self.receivers = points.receivers.clone();
        self.receiver_spread = points.receiver_spread.clone();
    }
}

/// `points` with the cells as indices into a padded field of `l` and the weights in `T`.
fn padded<T: Scalar>(l: &Layout, points: &[Weighted]) -> Vec<(usize, T)> {
    points
        .iter()
        .map(|&(c, w)| (l.idx(c[0], c[1], c[2]), T::from_f64(w)))
        .collect()
}

/// The weighted sum of `p` over `points`, in f64 (one point: its weighted value as it is).
fn gather<T: Scalar>(points: &[(usize, T)], p: &[T]) -> f64 {
    match points {
        [(c, w)] => (*w * p[*c]).as_f64(),
        _ => points.iter().map(|&(c, w)| (w * p[c]).as_f64()).sum(),
    }
}

/// CPU wave stepper: one fused pass per step (stencil, update, CPML ζ terms), plus a pass over
/// the layer cells for the ψ memory variables when a CPML is present. The ψ pass stays
/// separate because a row's ζ terms read ψ of the rows within the stencil radius along y and
/// z, which other threads' columns own: all of ψ must be new before any row reads it.
pub struct WaveCpu<T: Scalar> {
    /// Seconds [`WaveSetup::coefficients`] took while building.
    coefficients_s: f64,
    /// Whether the state it was built with is zero everywhere (see [`Stepper::rewind_to_rest`]).
    at_rest: bool,
    layout: Layout,
    periodic: bool,
    w2: [Vec<T>; 3],
    w0: T,
    w1: [Vec<T>; 3],
    c2dt2: Vec<T>,
    p: Vec<T>,
    q: Vec<T>,
    cpml: Option<[CpmlProfile; 3]>,
    /// The CPML's coefficients in `T`, with the x runs the row passes take.
    cpml_rows: Option<CpmlRows<T>>,
    psi: Vec<[T; 3]>,
    zeta: Vec<[T; 3]>,
    dt: f64,
    inv_dv: f64,
    /// Each source's points (padded index, weight) and the source.
    sources: Vec<(Vec<(usize, T)>, PointSource)>,
    /// Each receiver's points (padded index, weight).
    receivers: Vec<Vec<(usize, T)>>,
    traces: Vec<Vec<f64>>,
    step: u64,
    reference: bool,
    /// Whether `p`'s periodic halos hold the images of its interior.
    halos_filled: bool,
    /// Fills `p`'s halos before each step instead of the setup's boundary.
    halo_fill: Option<Box<dyn HaloFill<T>>>,
    /// Fills ψ's halos after its update, when `halo_fill` is set and there is a CPML.
    psi_fill: Option<Box<dyn HaloFill<[T; 3]>>>,
}

/// Bytes of rows in a band of the step's columns (see [`crate::bands::sweep_with`]). Without
/// a CPML, whole planes in memory order: on the device host's 16 Xeon cores, 320³ `f32`,
/// bands of 64 KiB marching up through z took 18.5 ms a step (median of 5) against 15.1 ms.
/// With one, bands of about 64 KiB, whose planes (and the memory variables ψ and ζ, three
/// values a point) stay in a 0.5–2 MiB L2 so that only the leading plane comes from memory.
fn wave_column_bytes(cpml: bool) -> usize {
    if cpml {
        64 * 1024
    } else {
        usize::MAX
    }
}

/// A padded copy of `data` (or zeros), each plane first written by the thread that the
/// sweep's bands, contiguous runs of planes split over rayon's threads, most likely give it:
/// on a NUMA host the pages then lie on the node of the thread that streams them each step.
fn pad_parallel<T: Scalar>(l: &Layout, data: Option<&[f64]>) -> Vec<T> {
    let plane = l.p[0] * l.p[1];
    let mut out: Vec<T> = Vec::with_capacity(l.len());
    out.spare_capacity_mut()
        .par_chunks_mut(plane)
        .enumerate()
        .for_each(|(kp, dst)| {
            for (jp, row) in dst.chunks_mut(l.p[0]).enumerate() {
                for (ip, v) in row.iter_mut().enumerate() {
                    let inside = |x: usize, h: usize, n: usize| x >= h && x < h + n;
                    let value = match data {
                        Some(d)
                            if inside(ip, l.r, l.n[0])
                                && inside(jp, l.halo(1), l.n[1])
                                && inside(kp, l.halo(2), l.n[2]) =>
                        {
                            let (i, j, k) = (ip - l.r, jp - l.halo(1), kp - l.halo(2));
                            T::from_f64(d[i + l.n[0] * (j + l.n[1] * k)])
                        }
                        _ => T::zero(),
                    };
                    v.write(value);
                }
            }
        });
    // SAFETY: the planes cover the capacity (`len` is a whole number of planes) and every
    // element was written above.
    unsafe { out.set_len(l.len()) };
    out
}

/// [`pad_parallel`] for a per-point array of ψ or ζ, all zero.
fn zeros_parallel<T: Scalar>(l: &Layout, len: usize) -> Vec<[T; 3]> {
    let plane = l.p[0] * l.p[1];
    let mut out: Vec<[T; 3]> = Vec::with_capacity(len);
    out.spare_capacity_mut()
        .par_chunks_mut(plane)
        .for_each(|dst| {
            dst.iter_mut().for_each(|v| {
                v.write([T::zero(); 3]);
            })
        });
    // SAFETY: every element of the capacity was written above.
    unsafe { out.set_len(len) };
    out
}

/// The wave update's coefficients as plain f64 arrays: what any backend uploads.
#[derive(Debug, Clone, PartialEq)]
pub struct WaveCoefficients {
    /// Per axis, second-derivative weights for offsets 0..=r (divided by h²; zero on unused axes).
    pub w2: [Vec<f64>; 3],
    /// Per axis, first-derivative weights for offsets 0..=r (antisymmetric; for the CPML terms).
    pub w1: [Vec<f64>; 3],
    /// Sum of the centre weights of `w2` over the axes.
    pub w0: f64,
    /// `c² Δt²` at every grid point, x fastest.
    pub c2dt2: Vec<f64>,
    /// CPML profiles per axis, when the boundary is a CPML.
    pub cpml: Option<[CpmlProfile; 3]>,
    /// `1 / ΔV`, the point-source scale.
    pub inv_dv: f64,
}

impl WaveSetup {
    /// The backend-neutral coefficients of this setup.
    /// Refused for a setup with a density: its step is [`crate::wave_vd`]'s, and these
    /// coefficients would silently drop the density.
    pub fn coefficients(&self) -> Result<WaveCoefficients> {
        self.coefficients_with(true)
    }

    /// The step as a description: `p⁺ = 2p − p⁻ + c²Δt² Σ_a ∂²_a p` with this setup's
    /// order, periodic or zero outside the grid (a rigid wall, and a CPML's grid too), and
    /// with a CPML its memory variables on the layers
    /// ([`acoustic_layers`](fdlab_core::step::physics::acoustic_layers)). Point sources and
    /// receivers act after it. Refused for a variable-density setup, whose step is
    /// [`crate::wave_vd`]'s.
    pub fn description(&self) -> Result<fdlab_core::step::StepDescription> {
        use fdlab_core::step::physics::{acoustic_layers, Layers};
        if self.density.is_some() {
            return Err(Error::Usage(
                "a variable-density setup (density given) is described by crate::wave_vd".into(),
            ));
        }
        let grid = fdlab_core::Grid::new(&self.n[..self.dim], &self.spacing[..self.dim])?;
        let boundary = if self.boundary == WaveBoundary::Periodic {
            fdlab_core::Boundary::Periodic
        } else {
            fdlab_core::Boundary::Dirichlet
        };
        let layers = match self.boundary {
            WaveBoundary::Cpml { thickness, .. } => Some(Layers {
                thickness,
                reach: self.order / 2,
            }),
            _ => None,
        };
        Ok(acoustic_layers(&grid, self.order, boundary, layers)?)
    }

    /// As [`WaveSetup::coefficients`] without `c²Δt²` (left empty): what generating the
    /// kernels reads, without an array of the grid's size.
    pub fn stencil_coefficients(&self) -> Result<WaveCoefficients> {
        self.coefficients_with(false)
    }

    /// `c² Δt²` at every grid point (x fastest) in `T`, computed straight in it: what a
    /// stepper in `T` holds, without an `f64` array of the grid's size on the way.
    pub fn c2dt2_in<T: Scalar + Default>(&self) -> Vec<T> {
        let (v, dt) = (&self.velocity, self.dt);
        if v.len() == 1 {
            crate::par::filled(self.n.iter().product(), T::from_f64(v[0] * v[0] * dt * dt))
        } else {
            crate::par::map(v, |c| T::from_f64(c * c * dt * dt))
        }
    }

    fn coefficients_with(&self, fields: bool) -> Result<WaveCoefficients> {
        let s = self;
        if s.density.is_some() {
            return Err(Error::Usage(
                "a variable-density setup (density given) runs on crate::wave_vd's stepper, \
                 not the constant-density one"
                    .into(),
            ));
        }
        let r = s.order / 2;
        let (form, _layers) = fdlab_core::step::StencilUpdate::of_whole_grid(&s.description()?)?;
        let (w2, w0) = form.symmetric_weights(s.dim, r)?;
        let mut w1: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; r + 1]);
        for a in 0..s.dim {
            w1[a] = first_weights(s.order, s.spacing[a])?;
        }
        let c2dt2: Vec<f64> = if fields { s.c2dt2_in() } else { vec![] };
        let c_max = crate::par::max(&s.velocity, 0.0);
        let cpml = match s.boundary {
            WaveBoundary::Cpml { thickness, f0 } => Some(std::array::from_fn(|a| {
                if a < s.dim {
                    CpmlProfile::new(s.n[a], s.spacing[a], thickness, c_max, f0, s.dt, r)
                } else {
                    CpmlProfile::new(1, 1.0, 0, c_max, f0, s.dt, r)
                }
            })),
            _ => None,
        };
        let dv: f64 = s.spacing[..s.dim].iter().product();
        Ok(WaveCoefficients {
            w2,
            w1,
            w0,
            c2dt2,
            cpml,
            inv_dv: 1.0 / dv,
        })
    }
}

impl<T: Scalar> WaveCpu<T> {
    /// Build the stepper.
    pub fn new(s: &WaveSetup) -> Result<Self> {
        let l = Layout::new(s.n, s.dim, s.order / 2);
        let t = std::time::Instant::now();
        let co = s.coefficients()?;
        let coefficients_s = t.elapsed().as_secs_f64();
        let to_t = |w: &[Vec<f64>; 3]| -> [Vec<T>; 3] {
            std::array::from_fn(|a| w[a].iter().map(|&x| T::from_f64(x)).collect())
        };
        let (w2, w1, w0, c2, cpml, inv_dv) = (
            to_t(&co.w2),
            to_t(&co.w1),
            co.w0,
            co.c2dt2,
            co.cpml,
            co.inv_dv,
        );
        let extra = if cpml.is_some() { l.len() } else { 0 };
        let p: Vec<T> = pad_parallel(&l, Some(&s.initial));
        let q: Vec<T> = pad_parallel(&l, Some(s.previous.as_ref().unwrap_or(&s.initial)));
        let (sources, receivers) = cpu_points(&l, &s.shot_points());
        let zero = |v: &[f64]| v.iter().all(|&x| x == 0.0);
        Ok(WaveCpu {
            coefficients_s,
            at_rest: zero(&s.initial) && s.previous.as_deref().is_none_or(zero),
            layout: l,
            periodic: s.boundary == WaveBoundary::Periodic,
            w2,
            w0: T::from_f64(w0),
            w1,
            c2dt2: pad_parallel(&l, Some(&c2)),
            p,
            q,
            psi: zeros_parallel(&l, extra),
            zeta: zeros_parallel(&l, extra),
            dt: s.dt,
            inv_dv,
            sources,
            receivers,
            traces: vec![vec![]; s.receivers.len()],
            step: 0,
            reference: false,
            halos_filled: false,
            cpml_rows: cpml.as_ref().map(CpmlRows::new),
            cpml,
            halo_fill: None,
            psi_fill: None,
        })
    }

    /// Fill the pressure's halos with `fill` before every step instead of the setup's boundary
    /// (periodic images or zeros): how a subdomain of a decomposed grid gets its neighbours'
    /// values. With a CPML, `psi_fill` fills the halos of the memory variables ψ after they
    /// are updated (their derivative is read across the subdomain's faces); without one it is
    /// not used. A CPML without `psi_fill` is refused.
    pub fn set_halo_fill(
        &mut self,
        fill: Box<dyn HaloFill<T>>,
        psi_fill: Option<Box<dyn HaloFill<[T; 3]>>>,
    ) -> Result<()> {
        if self.cpml.is_some() && psi_fill.is_none() {
            return Err(Error::Invalid(
                "a CPML boundary whose halos come from elsewhere needs its ψ halos filled too"
                    .into(),
            ));
        }
        self.periodic = false;
        self.halo_fill = Some(fill);
        self.psi_fill = psi_fill.filter(|_| self.cpml.is_some());
        Ok(())
    }

    /// Use `profiles` (one per axis, as long as this grid's axis) instead of the CPML profiles
    /// of the setup: a subdomain takes the slice of the whole grid's, whose layers lie at the
    /// whole grid's edges. Refused without a CPML or with a length that does not match.
    pub fn set_cpml_profiles(&mut self, profiles: [CpmlProfile; 3]) -> Result<()> {
        let l = self.layout;
        let fits = (0..3).all(|a| {
            let p = &profiles[a];
            a >= l.dim || (p.a.len() == l.n[a] && p.b.len() == l.n[a] && p.active.len() == l.n[a])
        });
        if self.cpml.is_none() || !fits {
            return Err(Error::Invalid(format!(
                "CPML profiles for a {:?} grid do not fit this {}stepper",
                profiles.each_ref().map(|p| p.a.len()),
                if self.cpml.is_none() {
                    "CPML-less "
                } else {
                    ""
                }
            )));
        }
        self.cpml_rows = Some(CpmlRows::new(&profiles));
        self.cpml = Some(profiles);
        Ok(())
    }

    /// ψ_a = b ψ_a + a ∂_a p on the layer cells, row by row in parallel.
    fn update_psi(&mut self) {
        if self.cpml_rows.is_none() {
            return;
        }
        let l = self.layout;
        let mut psi = std::mem::take(&mut self.psi);
        let kernel = self.kernel(&[]);
        psi.par_chunks_mut(l.p[0])
            .enumerate()
            .for_each(|(row, out)| {
                if let Some((j, k)) = l.row_point(row) {
                    kernel.psi_row(l.idx(0, j, k), j, k, out);
                }
            });
        self.psi = psi;
    }

    /// The row kernel over this step's fields, reading `psi` as ψ.
    fn kernel<'a>(&'a self, psi: &'a [[T; 3]]) -> WaveRow<'a, T> {
        WaveRow {
            l: self.layout,
            p: &self.p,
            psi,
            w2: &self.w2,
            w0: self.w0,
            w1: &self.w1,
            c2dt2: &self.c2dt2,
            cpml: self.cpml_rows.as_ref(),
        }
    }

    /// Use the simple per-point reference update instead of the fused one (for tests).
    pub fn use_reference(&mut self, on: bool) {
        self.reference = on;
    }

    /// The obvious form of one update, point by point in f64: ψ first, then p⁺ and ζ.
    fn update_reference(&mut self) -> Option<(usize, f64)> {
        let l = self.layout;
        let f = |v: T| v.as_f64();
        let points = || {
            (0..l.n[2]).flat_map(move |k| {
                (0..l.n[1]).flat_map(move |j| (0..l.n[0]).map(move |i| [i, j, k]))
            })
        };
        if let Some(prof) = &self.cpml {
            for x in points() {
                let c = l.idx(x[0], x[1], x[2]);
                for a in 0..l.dim {
                    let (ca, cb) = (prof[a].a[x[a]], prof[a].b[x[a]]);
                    if ca == 0.0 {
                        continue;
                    }
                    let s = l.stride(a);
                    let d: f64 = (1..=l.r)
                        .map(|m| f(self.w1[a][m]) * (f(self.p[c + m * s]) - f(self.p[c - m * s])))
                        .sum();
                    self.psi[c][a] = T::from_f64(cb * f(self.psi[c][a]) + ca * d);
                }
            }
        }
        let mut bad = None;
        for x in points() {
            let c = l.idx(x[0], x[1], x[2]);
            let mut total = 0.0;
            for a in 0..l.dim {
                let s = l.stride(a);
                let d2: f64 = f(self.w2[a][0]) * f(self.p[c])
                    + (1..=l.r)
                        .map(|m| f(self.w2[a][m]) * (f(self.p[c - m * s]) + f(self.p[c + m * s])))
                        .sum::<f64>();
                total += d2;
                if let Some(prof) = self.cpml.as_ref().filter(|pr| pr[a].active[x[a]]) {
                    let dpsi: f64 = (1..=l.r)
                        .map(|m| {
                            f(self.w1[a][m])
                                * (f(self.psi[c + m * s][a]) - f(self.psi[c - m * s][a]))
                        })
                        .sum();
                    let z = prof[a].b[x[a]] * f(self.zeta[c][a]) + prof[a].a[x[a]] * (d2 + dpsi);
                    self.zeta[c][a] = T::from_f64(z);
                    total += dpsi + z;
                }
            }
            let v = 2.0 * f(self.p[c]) - f(self.q[c]) + f(self.c2dt2[c]) * total;
            self.q[c] = T::from_f64(v);
            // The stored value: an f32 step can overflow where the f64 sum does not.
            if bad.is_none() && !self.q[c].is_finite() {
                bad = Some((c, self.q[c].as_f64()));
            }
        }
        bad
    }

    fn step_once(&mut self) -> Result<Option<(usize, f64)>> {
        if let Some(fill) = self.halo_fill.as_mut() {
            fill.fill(&self.layout, &mut self.p)?;
        }
        // The fused step leaves its output's halos filled; anything else (a new or restored
        // field, the reference step, a source added after the sweep) needs them filled here.
        if self.periodic && !self.halos_filled {
            self.layout.fill_periodic(&mut self.p);
        }
        if self.reference {
            let bad = self.update_reference();
            self.halos_filled = false;
            return Ok(self.finish_step(bad.into_iter().map(Some)));
        }
        self.update_psi();
        if let Some(fill) = self.psi_fill.as_mut() {
            fill.fill(&self.layout, &mut self.psi)?;
        }
        let (mut q, mut zeta) = (std::mem::take(&mut self.q), std::mem::take(&mut self.zeta));
        let kernel = self.kernel(&self.psi);
        let bad = sweep_with(
            &self.layout,
            self.periodic,
            true,
            wave_column_bytes(self.cpml.is_some()),
            &mut q,
            &mut zeta,
            |c, out: &mut [T], zeta| {
                kernel.run(c, out, zeta);
                first_non_finite(out)
            },
        );
        (self.q, self.zeta) = (q, zeta);
        self.halos_filled = self.sources.is_empty();
        Ok(self.finish_step(std::iter::once(bad)))
    }

    /// Sources, the time-level swap and the receivers, after the update.
    fn finish_step(
        &mut self,
        bad: impl Iterator<Item = Option<(usize, f64)>>,
    ) -> Option<(usize, f64)> {
        let bad = first_bad(bad);
        for (points, src) in &self.sources {
            let s = src.wavelet_at(self.step, self.dt);
            let v = T::from_f64(self.dt * self.dt * src.amplitude * s * self.inv_dv);
            for &(c, w) in points {
                self.q[c] = self.q[c] + w * v;
            }
        }
        std::mem::swap(&mut self.p, &mut self.q);
        for (tr, points) in self.traces.iter_mut().zip(&self.receivers) {
            tr.push(gather(points, &self.p));
        }
        bad
    }

    /// The pressure one step back, at the grid points.
    pub fn previous(&self) -> Vec<f64> {
        self.layout.unpad(&self.q)
    }
}

/// The source and receiver lists of a CPU stepper on layout `l` for `points`.
type CpuPoints<T> = (Vec<(Vec<(usize, T)>, PointSource)>, Vec<Vec<(usize, T)>>);

fn cpu_points<T: Scalar>(l: &Layout, points: &ShotPoints) -> CpuPoints<T> {
    let sources = points
        .sources
        .iter()
        .map(|src| (padded(l, &src.points()), src.clone()))
        .collect();
    let receivers = (0..points.receivers.len())
        .map(|i| padded(l, &points.receiver_points(i)))
        .collect();
    (sources, receivers)
}

impl<T: Scalar> Stepper for WaveCpu<T> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        crate::startup::BuildTimes {
            coefficients_s: self.coefficients_s,
            ..Default::default()
        }
    }

    fn advance(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            let bad = self.step_once()?;
            self.step += 1;
            if let Some((c, value)) = bad {
                return Err(Error::NonFinite {
                    step: self.step,
                    cell: self.layout.point(c),
                    value,
                });
            }
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn set_points(&mut self, points: &ShotPoints) -> Result<()> {
        if self.halo_fill.is_some() {
            return Err(Error::Usage(
                "a subdomain of a split grid takes its sources from the whole grid's setup;                  shots run on whole grids"
                    .into(),
            ));
        }
        (self.sources, self.receivers) = cpu_points(&self.layout, points);
        self.traces = vec![vec![]; points.receivers.len()];
        self.halos_filled = false;
        Ok(())
    }

    fn field(&self) -> Result<Vec<f64>> {
        Ok(self.layout.unpad(&self.p))
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        // Halos zeroed (see Layout::zero_halos): restoring refills them before they are read.
        let l = self.layout;
        let flat = |v: &[[T; 3]]| {
            let v = l.zero_halos(v, [T::zero(); 3]);
            to_bytes(&v.iter().flatten().copied().collect::<Vec<T>>())
        };
        let mut parts = vec![
            ("p".into(), to_bytes(&l.zero_halos(&self.p, T::zero()))),
            ("q".into(), to_bytes(&l.zero_halos(&self.q, T::zero()))),
        ];
        if self.cpml.is_some() {
            parts.push(("psi".into(), flat(&self.psi)));
            parts.push(("zeta".into(), flat(&self.zeta)));
        }
        let tr: Vec<f64> = self.traces.iter().flatten().copied().collect();
        parts.push(("traces".into(), to_bytes(&tr)));
        Ok(parts)
    }

    fn rewind_to_rest(&mut self) -> Result<bool> {
        if !self.at_rest {
            return Ok(false);
        }
        self.p.par_iter_mut().for_each(|v| *v = T::zero());
        self.q.par_iter_mut().for_each(|v| *v = T::zero());
        self.psi.par_iter_mut().for_each(|v| *v = [T::zero(); 3]);
        self.zeta.par_iter_mut().for_each(|v| *v = [T::zero(); 3]);
        self.traces.iter_mut().for_each(Vec::clear);
        self.step = 0;
        self.halos_filled = false;
        Ok(true)
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let get = |name: &str, len: usize| crate::stepper::state_part::<T>(parts, name, len);
        let len = self.layout.len();
        self.p = get("p", len)?;
        self.q = get("q", len)?;
        if self.cpml.is_some() {
            let unflat = |v: Vec<T>| v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
            self.psi = unflat(get("psi", 3 * len)?);
            self.zeta = unflat(get("zeta", 3 * len)?);
        }
        let nr = self.receivers.len();
        // In f64 whatever the run's precision: a receiver between grid points sums its
        // points in f64.
        let tr: Vec<f64> = crate::stepper::state_part(parts, "traces", nr * step as usize)?;
        self.traces = (0..nr)
            .map(|i| tr[i * step as usize..(i + 1) * step as usize].to_vec())
            .collect();
        self.step = step;
        self.halos_filled = false;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.layout.cells()
    }

    fn bytes_per_step(&self) -> usize {
        // p and p⁻ read, p⁺ written, c²Δt² read.
        4 * self.layout.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cpu"
    }
}
