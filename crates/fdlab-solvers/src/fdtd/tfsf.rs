//! Plane waves through a total-field/scattered-field (TFSF) box.
//!
//! Inside the box the grid holds the total field, outside it only the scattered field. Where a
//! curl term of an update reads a neighbour on the other side of the box's surface, the
//! incident field at that neighbour is added (neighbour outside, component inside) or
//! subtracted (neighbour inside, component outside), so the incident wave appears on the
//! entry face, crosses the box and vanishes at its far faces; anything scattered by objects in
//! the box leaves it and is seen alone outside. The corrections are a list built once, sized to
//! the box's surface; edges and corners need no special case.
//!
//! The incident field comes from a 1-D Yee line along the propagation axis with the same cell
//! size and time step. For a wave along a grid axis that line is the 3-D scheme restricted to
//! fields that vary along that axis only, so it has exactly the grid's numerical dispersion:
//! the wave leaks out of the box only at rounding level (and at the level of the line's own
//! absorbing end, below 1e-6). The line is driven by a hard source two cells before the entry
//! face and ends in a matched lossy layer.

use super::grid::{Component, Fields, Grid};
use super::source::Waveform;
use super::Fdtd;
use crate::error::{Error, Result};
use fdlab_core::Scalar;

const AXES: [&str; 3] = ["x", "y", "z"];

/// Cells of the incident line's absorbing layer and their grading order.
const TAIL: usize = 64;
const TAIL_ORDER: i32 = 3;
/// Cells of the line before the entry face (the hard source sits on the first node).
const LEAD: i64 = 2;

/// A plane wave along a grid axis, injected through the faces of a TFSF box (see the module
/// docs of [`Fdtd::add_plane_wave`]).
///
/// The box spans grid nodes `lo[a] ..= hi[a]` per axis (node `m` is at `m·d`). A side at node 0
/// (low) or at node `n` or beyond (high) is open: the total-field region runs to the end of the
/// grid there, so a box open on every side but the entry face is a plane source. The entry face
/// (`lo` for a wave along +axis, `hi` along −axis) must exist.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaneWave {
    /// Propagation axis, 0 (x), 1 (y) or 2 (z).
    pub axis: usize,
    /// Propagation towards decreasing coordinates along `axis` when true.
    pub backward: bool,
    /// The electric component of the wave, perpendicular to `axis`.
    pub polarization: Component,
    /// Low corner of the total-field box, in nodes.
    pub lo: [usize; 3],
    /// High corner of the total-field box, in nodes.
    pub hi: [usize; 3],
    /// The incident E on the entry face is `amplitude · w(t)`.
    pub waveform: Waveform,
    /// Amplitude of the incident E (the incident H is the same, times the direction).
    pub amplitude: f64,
}

impl PlaneWave {
    /// `(a, p, q)`: propagation axis, E axis, H axis.
    fn axes(&self) -> (usize, usize, usize) {
        let a = self.axis;
        let p = self.polarization as usize;
        (a, p, 3 - a - p)
    }

    /// Whether the box reaches the low / high end of axis `b` (no face there).
    fn open(&self, grid: &Grid, b: usize) -> [bool; 2] {
        [self.lo[b] == 0, self.hi[b] >= grid.n[b]]
    }

    /// Whether a point at `pos` (in cells) lies in the total-field region.
    fn inside(&self, grid: &Grid, pos: [f64; 3]) -> bool {
        (0..3).all(|b| {
            let [lo_open, hi_open] = self.open(grid, b);
            (lo_open || pos[b] >= self.lo[b] as f64) && (hi_open || pos[b] <= self.hi[b] as f64)
        })
    }

    /// Refuse what the corrections cannot handle, with the reason.
    pub(crate) fn check(&self, grid: &Grid) -> Result<()> {
        let bad = |why: String| Err(Error::Invalid(format!("FDTD plane wave: {why}")));
        if self.axis > 2 {
            return bad(format!("axis {}: use 0 (x), 1 (y) or 2 (z)", self.axis));
        }
        let p = self.polarization as usize;
        if !self.polarization.is_electric() || p == self.axis {
            return bad(format!(
                "polarization {:?} along {}: give the electric component perpendicular to the \
                 propagation axis",
                self.polarization, AXES[self.axis]
            ));
        }
        if !self.amplitude.is_finite() {
            return bad(format!("amplitude {}: must be finite", self.amplitude));
        }
        for b in 0..3 {
            let n = grid.n[b];
            if self.lo[b] >= self.hi[b] {
                return bad(format!(
                    "box nodes {:?} ..= {:?} are empty along {}: give lo < hi",
                    self.lo, self.hi, AXES[b]
                ));
            }
            let [lo_open, hi_open] = self.open(grid, b);
            if !grid.boundary[b].has_walls() && lo_open != hi_open {
                return bad(format!(
                    "the box is open at one end of the periodic axis {} only: span the whole \
                     axis (nodes 0 ..= {n}) or keep both faces inside (1 ..= {})",
                    AXES[b],
                    n - 1
                ));
            }
            // A face at node F corrects cells F − 1 and F: both outside any CPML layer.
            let t = grid.boundary[b].cpml().map_or(0, |c| c.thickness);
            let face_ok = |f: usize| f > t && f + t < n;
            for (open, f) in [(lo_open, self.lo[b]), (hi_open, self.hi[b])] {
                if !open && !face_ok(f) {
                    return bad(format!(
                        "the box face at node {f} along {} lies in or against the CPML: keep \
                         faces at nodes {} ..= {} or open the side (0 or {n})",
                        AXES[b],
                        t + 1,
                        n - t - 1
                    ));
                }
            }
        }
        let [lo_open, hi_open] = self.open(grid, self.axis);
        if (!self.backward && lo_open) || (self.backward && hi_open) {
            return bad(format!(
                "the box has no entry face: a wave along {}{} enters through its {} face, so \
                 move that side inside the grid",
                if self.backward { "−" } else { "+" },
                AXES[self.axis],
                if self.backward { "high" } else { "low" }
            ));
        }
        Ok(())
    }
}

/// One correction: `field[cell] += coef · incident[line]` (times Δt for H, `cb` for E).
#[derive(Debug, Clone, Copy)]
struct Fix {
    component: Component,
    cell: usize,
    coef: f64,
    line: usize,
}

/// The incident wave on a 1-D Yee line in the wave's own coordinate `ξ` (increasing along the
/// propagation): `e` on nodes, `h` on half nodes, `h = e` for the travelling wave.
#[derive(Debug, Clone)]
struct Line {
    e: Vec<f64>,
    h: Vec<f64>,
    /// `(decay, gain)` of the E and H updates per node, from the absorbing layer's loss.
    ce: Vec<(f64, f64)>,
    ch: Vec<(f64, f64)>,
}

impl Line {
    /// A line with `nodes` physical nodes (then the absorbing layer), cell `d`, step `dt`.
    fn new(nodes: usize, d: f64, dt: f64) -> Self {
        let len = nodes + TAIL;
        // Matched loss (σ* = σ with η = 1), graded as a polynomial over the tail.
        let sigma_max = 0.8 * (TAIL_ORDER as f64 + 1.0) / d;
        let sigma = |x: f64| {
            let depth = (x - nodes as f64) / TAIL as f64;
            sigma_max * depth.clamp(0.0, 1.0).powi(TAIL_ORDER)
        };
        let coef = |s: f64| {
            let l = 0.5 * s * dt;
            ((1.0 - l) / (1.0 + l), dt / d / (1.0 + l))
        };
        Line {
            e: vec![0.0; len + 1],
            h: vec![0.0; len],
            ce: (0..=len).map(|m| coef(sigma(m as f64))).collect(),
            ch: (0..len).map(|m| coef(sigma(m as f64 + 0.5))).collect(),
        }
    }

    fn advance_h(&mut self) {
        for (m, h) in self.h.iter_mut().enumerate() {
            let (a, b) = self.ch[m];
            *h = a * *h - b * (self.e[m + 1] - self.e[m]);
        }
    }

    /// Advance E, then impose the source value on node 0; the last node is a PEC end.
    fn advance_e(&mut self, source: f64) {
        let last = self.e.len() - 1;
        for m in 1..last {
            let (a, b) = self.ce[m];
            self.e[m] = a * self.e[m] - b * (self.h[m] - self.h[m - 1]);
        }
        self.e[0] = source;
    }
}

/// A plane wave's incident line and surface corrections.
#[derive(Debug, Clone)]
pub(crate) struct Injector {
    wave: PlaneWave,
    line: Line,
    /// `σ·s`: the incident `H_q` is this times the line's `h`.
    h_sign: f64,
    /// Delay from the source node to the entry face.
    lead: f64,
    fix_h: Vec<Fix>,
    fix_e: Vec<Fix>,
}

/// `ε_{ijk}` for distinct axes (0 otherwise).
fn levi(i: usize, j: usize, k: usize) -> f64 {
    match (i, j, k) {
        (0, 1, 2) | (1, 2, 0) | (2, 0, 1) => 1.0,
        (0, 2, 1) | (2, 1, 0) | (1, 0, 2) => -1.0,
        _ => 0.0,
    }
}

const E: [Component; 3] = [Component::Ex, Component::Ey, Component::Ez];
const H: [Component; 3] = [Component::Hx, Component::Hy, Component::Hz];

impl Injector {
    /// Build the line and the corrections of a checked wave.
    fn new(grid: &Grid, dt: f64, wave: PlaneWave) -> Self {
        let (a, p, q) = wave.axes();
        let n = grid.n;
        // Line coordinate of node i: ξ = dir·(i − i0), with the entry face at ξ = LEAD.
        let dir: i64 = if wave.backward { -1 } else { 1 };
        let i0 = if wave.backward {
            wave.hi[a] as i64 + LEAD
        } else {
            wave.lo[a] as i64 - LEAD
        };
        let e_index = |i: usize| (dir * (i as i64 - i0)) as usize;
        // H at i + ½: ξ + ½ with ξ = i − i0 forward, i0 − i − 1 backward.
        let h_index = |i: usize| {
            if wave.backward {
                (i0 - i as i64 - 1) as usize
            } else {
                (i as i64 - i0) as usize
            }
        };
        let step = |c: [usize; 3], b: usize, up: bool| -> Option<[usize; 3]> {
            let mut x = c;
            if up {
                x[b] = (c[b] + 1 < n[b]).then_some(c[b] + 1)?;
            } else {
                x[b] = c[b].checked_sub(1)?;
            }
            Some(x)
        };
        let mut fix_h = Vec::new();
        let mut fix_e = Vec::new();
        // Each curl term crosses the surface only along its derivative axis b, next to a face.
        for b in 0..3 {
            let mut rows: Vec<usize> = Vec::new();
            for f in [wave.lo[b], wave.hi[b]] {
                for i in [f.wrapping_sub(1), f] {
                    if i < n[b] && !rows.contains(&i) {
                        rows.push(i);
                    }
                }
            }
            for &ib in &rows {
                for_plane(grid, b, ib, |c| {
                    // H_h −= Δt ε_{h b p} (E_p[c + b̂] − E_p[c]) / d_b, for h the third axis.
                    if b != p {
                        let h = 3 - b - p;
                        let eps = levi(h, b, p) / grid.spacing[b];
                        for (up, coef) in [(true, -eps), (false, eps)] {
                            let Some(nb) = (if up { step(c, b, true) } else { Some(c) }) else {
                                continue;
                            };
                            if let Some(s) = cross(&wave, grid, (H[h], c), (E[p], nb)) {
                                fix_h.push(Fix {
                                    component: H[h],
                                    cell: grid.index(c),
                                    coef: s * coef,
                                    line: e_index(nb[a]),
                                });
                            }
                        }
                    }
                    // E_e += cb ε_{e b q} (H_q[c] − H_q[c − b̂]) / d_b, for e the third axis.
                    if b != q {
                        let e = 3 - b - q;
                        let eps = levi(e, b, q) / grid.spacing[b];
                        for (down, coef) in [(false, eps), (true, -eps)] {
                            let Some(nb) = (if down { step(c, b, false) } else { Some(c) }) else {
                                continue;
                            };
                            if let Some(s) = cross(&wave, grid, (E[e], c), (H[q], nb)) {
                                fix_e.push(Fix {
                                    component: E[e],
                                    cell: grid.index(c),
                                    coef: s * coef,
                                    line: h_index(nb[a]),
                                });
                            }
                        }
                    }
                });
            }
        }
        let far = fix_h
            .iter()
            .chain(&fix_e)
            .map(|f| f.line)
            .max()
            .unwrap_or(0);
        let d = grid.spacing[a];
        Injector {
            line: Line::new(far + 2, d, dt),
            h_sign: dir as f64 * levi(q, a, p),
            lead: LEAD as f64 * d,
            fix_h,
            fix_e,
            wave,
        }
    }

    /// Every cell a correction touches (targets only; their neighbours are one cell away).
    fn cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.fix_h.iter().chain(&self.fix_e).map(|f| f.cell)
    }

    /// After the H update from `E^n`: the line still holds `e^n`.
    fn correct_h<T: Scalar>(&self, f: &mut Fields<T>, dt: f64) {
        for x in &self.fix_h {
            let v = f.get_mut(x.component);
            v[x.cell] = T::from_f64(v[x.cell].as_f64() + dt * x.coef * self.line.e[x.line]);
        }
    }

    /// After the E update from `H^{n+½}`: the line holds `h^{n+½}`.
    fn correct_e<T: Scalar>(&self, f: &mut Fields<T>, cb: &[T]) {
        for x in &self.fix_e {
            let v = f.get_mut(x.component);
            let inc = self.h_sign * self.line.h[x.line];
            v[x.cell] = T::from_f64(v[x.cell].as_f64() + cb[x.cell].as_f64() * x.coef * inc);
        }
    }
}

/// The sign of the incident term to add when `target` reads `neighbour` across the surface:
/// +1 from inside reading outside, −1 from outside reading inside, `None` if on one side.
fn cross(
    wave: &PlaneWave,
    grid: &Grid,
    target: (Component, [usize; 3]),
    neighbour: (Component, [usize; 3]),
) -> Option<f64> {
    let pos = |(c, x): (Component, [usize; 3])| {
        let o = c.offset();
        std::array::from_fn(|b| x[b] as f64 + o[b])
    };
    let t = wave.inside(grid, pos(target));
    let n = wave.inside(grid, pos(neighbour));
    match (t, n) {
        (true, false) => Some(1.0),
        (false, true) => Some(-1.0),
        _ => None,
    }
}

/// Call `f` on every cell with index `i` along axis `b`.
fn for_plane(grid: &Grid, b: usize, i: usize, mut f: impl FnMut([usize; 3])) {
    let (u, v) = ((b + 1) % 3, (b + 2) % 3);
    for ju in 0..grid.n[u] {
        for jv in 0..grid.n[v] {
            let mut c = [0; 3];
            c[b] = i;
            c[u] = ju;
            c[v] = jv;
            f(c);
        }
    }
}

/// One correction of a stepper that applies them itself (the GPU's): `field[cell] += k ·
/// incident[slot]` after the H update, `field[cell] += (cb[cell] · k) · incident[slot]` after
/// the E update, each rounded to the field's type, in the CPU's order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Correction {
    pub component: Component,
    pub cell: usize,
    /// `Δt · coef` after the H update, `coef` after the E update.
    pub k: f64,
    /// The incident value's index in a step's row of [`PlaneWaves::step_lines`].
    pub slot: usize,
}

/// Every correction of a simulation's plane waves and the line nodes their incident values
/// come from: see [`PlaneWaves::plan`].
#[derive(Debug, Clone, Default)]
pub(crate) struct IncidentPlan {
    /// After the H update, in the CPU's order.
    pub h: Vec<Correction>,
    /// After the E update, in the CPU's order.
    pub e: Vec<Correction>,
    /// Per slot of the H corrections' row: (wave, line node whose `e` it is).
    nodes_h: Vec<(usize, usize)>,
    /// Per slot of the E corrections' row: (wave, line half node whose `h` it is).
    nodes_e: Vec<(usize, usize)>,
}

impl IncidentPlan {
    /// Values in a step's row for the H corrections.
    pub(crate) fn slots_h(&self) -> usize {
        self.nodes_h.len()
    }

    /// Values in a step's row for the E corrections.
    pub(crate) fn slots_e(&self) -> usize {
        self.nodes_e.len()
    }
}

/// Every plane wave of a simulation, advanced together.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlaneWaves(Vec<Injector>);

impl PlaneWaves {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Corrections after the H update, then the lines' H to `n + ½`.
    pub(crate) fn after_h<T: Scalar>(&mut self, f: &mut Fields<T>, dt: f64) {
        for w in &mut self.0 {
            w.correct_h(f, dt);
            w.line.advance_h();
        }
    }

    /// Corrections after the E update, then the lines' E to `n + 1` (time `t`).
    pub(crate) fn after_e<T: Scalar>(&mut self, f: &mut Fields<T>, cb: &[T], t: f64) {
        for w in &mut self.0 {
            w.correct_e(f, cb);
            let s = w.wave.amplitude * w.wave.waveform.value(t + w.lead);
            w.line.advance_e(s);
        }
    }

    /// The lines' fields, wave by wave (e then h), for a checkpoint.
    pub(crate) fn state(&self) -> Vec<f64> {
        let mut v = Vec::new();
        for w in &self.0 {
            v.extend_from_slice(&w.line.e);
            v.extend_from_slice(&w.line.h);
        }
        v
    }

    pub(crate) fn len(&self) -> usize {
        self.0.iter().map(|w| w.line.e.len() + w.line.h.len()).sum()
    }

    /// Put back [`PlaneWaves::state`]; `false` if the length does not fit.
    pub(crate) fn set_state(&mut self, v: &[f64]) -> bool {
        if v.len() != self.len() {
            return false;
        }
        let mut rest = v;
        for w in &mut self.0 {
            let (ne, nh) = (w.line.e.len(), w.line.h.len());
            w.line.e.copy_from_slice(&rest[..ne]);
            w.line.h.copy_from_slice(&rest[ne..ne + nh]);
            rest = &rest[ne + nh..];
        }
        true
    }

    pub(crate) fn clear(&mut self) {
        for w in &mut self.0 {
            w.line.e.fill(0.0);
            w.line.h.fill(0.0);
        }
    }

    /// The corrections of every wave, for a stepper that applies them itself while
    /// [`PlaneWaves::step_lines`] advances the incident lines: the lines do not depend on the
    /// grid's fields, so their values for a whole call can be computed ahead. Each distinct
    /// line node a wave's corrections read gets one slot.
    pub(crate) fn plan(&self, dt: f64) -> IncidentPlan {
        let mut plan = IncidentPlan::default();
        for (wi, w) in self.0.iter().enumerate() {
            // A line's node, per line index: a box face holds ~10⁶ corrections and a few
            // hundred lines, so a search of the nodes per correction cost tenths of a second.
            let lines = w.fix_h.iter().chain(&w.fix_e).map(|f| f.line + 1).max();
            let mut node_h = vec![usize::MAX; lines.unwrap_or(0)];
            let mut node_e = node_h.clone();
            let slot = |nodes: &mut Vec<(usize, usize)>, index: &mut [usize], line: usize| {
                if index[line] == usize::MAX {
                    nodes.push((wi, line));
                    index[line] = nodes.len() - 1;
                }
                index[line]
            };
            for f in &w.fix_h {
                let s = slot(&mut plan.nodes_h, &mut node_h, f.line);
                plan.h.push(Correction {
                    component: f.component,
                    cell: f.cell,
                    k: dt * f.coef,
                    slot: s,
                });
            }
            for f in &w.fix_e {
                let s = slot(&mut plan.nodes_e, &mut node_e, f.line);
                plan.e.push(Correction {
                    component: f.component,
                    cell: f.cell,
                    k: f.coef,
                    slot: s,
                });
            }
        }
        plan
    }

    /// One step of the lines alone, as [`PlaneWaves::after_h`] and [`PlaneWaves::after_e`]
    /// advance them: appends the row the H corrections of this step read (`e` before the
    /// lines' H update) to `h`, and the row the E corrections read (the incident `H`, after
    /// it) to `e`. `t` is the time E reaches.
    pub(crate) fn step_lines(
        &mut self,
        plan: &IncidentPlan,
        t: f64,
        h: &mut Vec<f64>,
        e: &mut Vec<f64>,
    ) {
        h.extend(plan.nodes_h.iter().map(|&(w, m)| self.0[w].line.e[m]));
        for w in &mut self.0 {
            w.line.advance_h();
        }
        e.extend(
            plan.nodes_e
                .iter()
                .map(|&(w, m)| self.0[w].h_sign * self.0[w].line.h[m]),
        );
        for w in &mut self.0 {
            let s = w.wave.amplitude * w.wave.waveform.value(t + w.lead);
            w.line.advance_e(s);
        }
    }
}

impl<T: Scalar> Fdtd<T> {
    /// Add a plane wave through a total-field/scattered-field box (see [`PlaneWave`]).
    ///
    /// The incident wave travels in vacuum, so the cells on both sides of the box's faces must
    /// be vacuum: set the materials first (objects go inside the box, away from its faces);
    /// a face through a material is refused. Inside the box the fields are total, outside only
    /// what the objects scatter.
    ///
    /// ```
    /// use fdlab_solvers::fdtd::{Boundary, Component, Fdtd, Grid, PlaneWave, Waveform};
    /// let grid = Grid::new([2, 2, 40], [0.05; 3], [Boundary::Periodic, Boundary::Periodic, Boundary::Pec])?;
    /// let mut sim = Fdtd::<f64>::new(grid.clone(), 0.9 * grid.dt_limit())?;
    /// sim.add_plane_wave(PlaneWave {
    ///     axis: 2,
    ///     backward: false,
    ///     polarization: Component::Ex,
    ///     lo: [0, 0, 10],
    ///     hi: [2, 2, 30],
    ///     waveform: Waveform::Gaussian { t0: 0.3, tau: 0.1 },
    ///     amplitude: 1.0,
    /// })?;
    /// // The peak reaches z = 1.0 (node 20) at t = t0 + 0.5, about step 31.
    /// sim.run(31);
    /// // Between the faces the pulse travels; before the entry face nothing leaks.
    /// assert!(sim.fields().ex[grid.index([0, 0, 20])].abs() > 0.1);
    /// assert!(sim.fields().ex[grid.index([0, 0, 5])].abs() < 1e-9);
    /// # Ok::<(), fdlab_solvers::Error>(())
    /// ```
    pub fn add_plane_wave(&mut self, wave: PlaneWave) -> Result<()> {
        wave.check(&self.grid)?;
        let inj = Injector::new(&self.grid, self.dt, wave);
        let n = self.grid.n;
        let vacuum = self.vacuum_mask();
        for c in inj.cells() {
            let ijk = [c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])];
            // The face corrections read cells on both sides: check a cell beyond each target.
            for b in 0..3 {
                for x in [ijk[b].wrapping_sub(1), ijk[b], ijk[b] + 1] {
                    if x >= n[b] {
                        continue;
                    }
                    let mut m = ijk;
                    m[b] = x;
                    let i = self.grid.index(m);
                    if !vacuum[i] {
                        return Err(Error::Invalid(format!(
                            "FDTD plane wave: cell {m:?} next to the TFSF box's surface is not \
                             vacuum; the incident wave is computed in vacuum, so keep materials \
                             inside the box and at least one cell away from its faces (or open \
                             the box on that side)"
                        )));
                    }
                }
            }
        }
        self.plane_waves.0.push(inj);
        Ok(())
    }
}
