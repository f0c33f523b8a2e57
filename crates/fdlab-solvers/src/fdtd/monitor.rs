//! Running DFT monitors: the spectrum of the field on one grid plane, accumulated step by step.
//!
//! Each step adds `field(t)·exp(−i2πf·t)·Δt` to `F(f)` for every point of the plane, so the
//! spectra cost no stored time series: memory is `frequencies × components × plane` complex
//! values, kept in f64 whatever the field precision (the sum runs over many steps).

use super::grid::{Component, Fields, Grid};
use fdlab_core::Scalar;
use std::f64::consts::PI;

/// Points per wavelength `c/(f·max(Δ))` below which a frequency is refused: coarser than this
/// the Yee grid's numerical dispersion makes the spectrum meaningless.
pub const MIN_CELLS_PER_WAVELENGTH: f64 = 10.0;

/// What a [`DftMonitor`] records: a plane, its components and frequencies.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorSpec {
    /// The plane's normal axis, 0 (x), 1 (y) or 2 (z).
    pub axis: usize,
    /// The plane's cell index along `axis`: every component is taken at that index, i.e. at its
    /// own staggered position in the cell (see [`Component::offset`]). The plane spans the whole
    /// grid, CPML layers included: read only the points outside them.
    pub index: usize,
    /// Components accumulated; empty means the two E components tangential to the plane.
    pub components: Vec<Component>,
    /// Frequencies in cycles per unit time (normalized units, `c = 1`).
    pub frequencies: Vec<f64>,
}

/// The two E components tangential to a plane normal to `axis`.
pub fn tangential_e(axis: usize) -> Vec<Component> {
    match axis {
        0 => vec![Component::Ey, Component::Ez],
        1 => vec![Component::Ex, Component::Ez],
        _ => vec![Component::Ex, Component::Ey],
    }
}

/// The in-plane axes `[a, b]` of a plane normal to `axis`, slower first (`b` is the lower axis,
/// which varies fastest in the grid's storage): z → `[y, x]`, y → `[z, x]`, x → `[z, y]`.
pub fn plane_axes(axis: usize) -> [usize; 2] {
    match axis {
        0 => [2, 1],
        1 => [2, 0],
        _ => [1, 0],
    }
}

/// Why `spec` cannot be accumulated by a run of `duration` with step `dt` on `grid`, as a
/// sentence to put after the monitor's name; `None` if it can.
pub fn check(grid: &Grid, dt: f64, duration: f64, spec: &MonitorSpec) -> Option<String> {
    if spec.axis > 2 {
        return Some(format!(
            "axis {} does not exist: use 0 (x), 1 (y) or 2 (z)",
            spec.axis
        ));
    }
    let (a, n) = (spec.axis, grid.n[spec.axis]);
    if spec.index >= n {
        return Some(format!(
            "plane index {} along {} is outside the grid: use 0 ..= {} (positions 0 ..= {})",
            spec.index,
            ["x", "y", "z"][a],
            n - 1,
            (n - 1) as f64 * grid.spacing[a]
        ));
    }
    if spec.frequencies.is_empty() {
        return Some("has no frequencies: list at least one".into());
    }
    let nyquist = 0.5 / dt;
    let dmax = grid.spacing.iter().fold(0.0f64, |m, &d| m.max(d));
    let f_cells = 1.0 / (MIN_CELLS_PER_WAVELENGTH * dmax);
    for &f in &spec.frequencies {
        if !(f.is_finite() && f > 0.0) {
            return Some(format!("frequency {f}: use positive finite frequencies"));
        }
        if f > nyquist {
            return Some(format!(
                "frequency {f} is above the Nyquist limit 1/(2Δt) = {nyquist:e}: lower it or \
                 take a smaller time step"
            ));
        }
        if f > f_cells {
            return Some(format!(
                "frequency {f} has only {:.1} cells per wavelength c/(f·max Δ) (at least \
                 {MIN_CELLS_PER_WAVELENGTH} needed, i.e. f <= {f_cells:e}): lower it or refine \
                 the grid",
                1.0 / (f * dmax)
            ));
        }
        if 1.0 / f > duration {
            return Some(format!(
                "frequency {f} has a period {:e} longer than the run ({duration:e}): raise it \
                 above {:e} or run longer",
                1.0 / f,
                1.0 / duration
            ));
        }
    }
    None
}

/// A running DFT of some components on one grid plane.
///
/// `re` and `im` hold `F(f)` in the order `[frequency][component][a][b]` with `[a, b]` from
/// [`plane_axes`] (the lower axis fastest). An electric sample after step `n` is taken at time
/// `n·Δt`, a magnetic one at `(n − ½)·Δt`, where each is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct DftMonitor {
    /// What is recorded.
    pub spec: MonitorSpec,
    /// Points on the plane per in-plane axis `[n_a, n_b]`.
    pub shape: [usize; 2],
    /// Real parts of the spectra.
    pub re: Vec<f64>,
    /// Imaginary parts of the spectra.
    pub im: Vec<f64>,
    /// Storage index of every plane point, `a`-major.
    cells: Vec<usize>,
}

impl DftMonitor {
    /// Zero spectra for a spec that passed [`check`], with its default components filled in.
    pub(crate) fn new(grid: &Grid, mut spec: MonitorSpec) -> Self {
        if spec.components.is_empty() {
            spec.components = tangential_e(spec.axis);
        }
        let [a, b] = plane_axes(spec.axis);
        let shape = [grid.n[a], grid.n[b]];
        let mut cells = Vec::with_capacity(shape[0] * shape[1]);
        for ia in 0..shape[0] {
            for ib in 0..shape[1] {
                let mut c = [0; 3];
                c[spec.axis] = spec.index;
                c[a] = ia;
                c[b] = ib;
                cells.push(grid.index(c));
            }
        }
        let len = spec.frequencies.len() * spec.components.len() * cells.len();
        DftMonitor {
            spec,
            shape,
            re: vec![0.0; len],
            im: vec![0.0; len],
            cells,
        }
    }

    /// Storage index of every plane point, `a`-major.
    pub(crate) fn cells(&self) -> &[usize] {
        &self.cells
    }

    /// Number of accumulated values (`frequencies × components × n_a × n_b`), each complex.
    pub fn len(&self) -> usize {
        self.re.len()
    }

    /// Whether there is nothing to accumulate (never, for a checked spec).
    pub fn is_empty(&self) -> bool {
        self.re.is_empty()
    }

    /// `F` of frequency `f`, component `c`, at plane point `p` (`a`-major), as `(re, im)`.
    pub fn value(&self, f: usize, c: usize, p: usize) -> (f64, f64) {
        let i = (f * self.spec.components.len() + c) * self.cells.len() + p;
        (self.re[i], self.im[i])
    }

    /// Add this step's term: `steps` steps have been taken, each of length `dt`.
    pub(crate) fn accumulate<T: Scalar>(&mut self, fields: &Fields<T>, steps: u64, dt: f64) {
        let np = self.cells.len();
        let nc = self.spec.components.len();
        for (fi, &f) in self.spec.frequencies.iter().enumerate() {
            for (ci, &comp) in self.spec.components.iter().enumerate() {
                let half = if comp.is_electric() { 0.0 } else { 0.5 };
                let t = (steps as f64 - half) * dt;
                // exp(−iωt)·Δt, once per frequency and component rather than per point.
                let (s, c) = (2.0 * PI * f * t).sin_cos();
                let (wr, wi) = (c * dt, -s * dt);
                let v = fields.get(comp);
                let o = (fi * nc + ci) * np;
                let (re, im) = (&mut self.re[o..o + np], &mut self.im[o..o + np]);
                for ((r, i), &cell) in re.iter_mut().zip(im.iter_mut()).zip(&self.cells) {
                    let x = v[cell].as_f64();
                    *r += x * wr;
                    *i += x * wi;
                }
            }
        }
    }

    /// Zero the spectra (a restore starts from here).
    pub(crate) fn clear(&mut self) {
        self.re.fill(0.0);
        self.im.fill(0.0);
    }
}
