//! The Yee form: the FDTD step of [`super::physics::yee`] recognised in a description, with
//! what the FDTD kernels are generated from (weights, walls, layers, Drude currents).
//!
//! The recogniser reads the weights, walls, layers and currents off the description, builds
//! the form's description from them and requires the two to be equal update by update: the
//! kernels compute exactly that step, so anything else is refused with the first part that
//! differs.

use super::physics::yee::{terms, Side, Yee, E, H};
use super::{Expr, FieldDecl, Stagger, StepDescription, StepError, StepRegion, Update};
use crate::boundary::Boundary;
use crate::grid::{Axis, Grid, Region};
use crate::stencil::Stencil;
use crate::step::Role;

/// A Yee step's numbers: what the FDTD kernels take from its description.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YeeForm {
    /// Per axis: PEC walls (tangential E held at zero on plane 0) rather than a wrap.
    pub walls: [bool; 3],
    /// Per axis: the H update's difference weight, `Δt/Δ`.
    pub rate: [f64; 3],
    /// Per axis: the E update's and the CPML terms' difference weight, `1/Δ`.
    pub inv: [f64; 3],
    /// The weight of the H side's CPML terms, `Δt` (0 without a CPML).
    pub dt: f64,
    /// Per axis: the CPML's thickness in cells at each end.
    pub cpml: [Option<usize>; 3],
    /// Whether the step advances Drude currents.
    pub drude: bool,
}

fn refuse(part: &str, detail: impl Into<String>) -> StepError {
    StepError::NotYee {
        part: part.into(),
        detail: detail.into(),
    }
}

/// The offset `k` cells along axis `a`.
fn along(a: usize, k: i32) -> [i32; 3] {
    let mut o = [0; 3];
    o[a] = k;
    o
}

/// `w·(f(i+1) − f(i))` (`Forward`) or `w·(f(i) − f(i−1))` (`Backward`) along `a`.
fn difference(f: Expr, a: usize, stagger: Stagger, w: f64) -> Result<Expr, StepError> {
    let lo = if stagger == Stagger::Forward { 0 } else { -1 };
    let s = Stencil::custom(&[(along(a, lo), -w), (along(a, lo + 1), w)])?;
    Ok(f.diff(Axis::ALL[a], stagger, s))
}

/// Where component `c` of `side`'s target field lies: E on half points along `c`, H on half
/// points along the other two axes.
fn located(decl: FieldDecl, electric: bool, c: usize) -> FieldDecl {
    (0..3)
        .filter(|&a| (a == c) == electric)
        .fold(decl, |d, a| d.half_on(Axis::ALL[a]))
}

impl YeeForm {
    /// The fields of the form's description.
    fn fields(&self) -> Vec<FieldDecl> {
        let mut f = vec![];
        for (c, e) in E.iter().enumerate() {
            f.push(located(FieldDecl::state(e, 1), true, c));
        }
        for (c, h) in H.iter().enumerate() {
            f.push(located(FieldDecl::state(h, 1), false, c));
        }
        for c in 0..3 {
            f.push(located(FieldDecl::coefficient(&Yee::ca(c)), true, c));
            f.push(located(FieldDecl::coefficient(&Yee::cb(c)), true, c));
        }
        if self.drude {
            for c in 0..3 {
                f.push(located(FieldDecl::auxiliary(&Yee::current(c)), true, c));
                f.push(located(FieldDecl::coefficient(&Yee::kj(c)), true, c));
                f.push(located(FieldDecl::coefficient(&Yee::bj(c)), true, c));
            }
        }
        for a in (0..3).filter(|&a| self.cpml[a].is_some()) {
            for side in [Side::H, Side::E] {
                for (t, (ti, _, _)) in terms(a).into_iter().enumerate() {
                    let electric = side == Side::E;
                    f.push(located(
                        FieldDecl::auxiliary(&Yee::psi(side, a, t)),
                        electric,
                        ti,
                    ));
                    for name in [
                        Yee::kappa(side, a, t),
                        Yee::decay(side, a, t),
                        Yee::gain(side, a, t),
                    ] {
                        f.push(located(FieldDecl::coefficient(&name), electric, ti));
                    }
                }
            }
        }
        f
    }

    /// The slabs of a CPML of `t` cells at the two ends of axis `a` of a grid of `n` cells,
    /// less plane 0 of each walled axis in `off` (the planes where tangential E is zero).
    fn slabs(&self, n: [usize; 3], a: usize, t: usize, off: &[usize]) -> [Region; 2] {
        let mut lo = Region { lo: [0; 3], hi: n };
        lo.hi[a] = t;
        let mut hi = Region { lo: [0; 3], hi: n };
        hi.lo[a] = n[a] - t;
        for r in [&mut lo, &mut hi] {
            for &b in off.iter().filter(|&&b| self.walls[b]) {
                r.lo[b] = r.lo[b].max(1);
            }
        }
        [lo, hi]
    }

    /// The updates of the form's description on a grid of `n` cells, each with the part of
    /// the step it is (what a refusal names).
    fn parts(&self, n: [usize; 3]) -> Result<Vec<(String, Update)>, StepError> {
        let mut u: Vec<(String, Update)> = vec![];
        let at1 = |f: &str| Expr::at(f, 1, [0; 3]);
        if self.drude {
            for (c, e) in E.iter().enumerate() {
                let j = Yee::current(c);
                let next = Expr::field(&Yee::kj(c)) * Expr::field(&j)
                    + Expr::field(&Yee::bj(c)) * Expr::field(e);
                u.push((format!("the Drude current {j}"), Update::new(&j, 0, next)));
            }
        }
        for (c, h) in H.iter().enumerate() {
            let (b, d) = ((c + 1) % 3, (c + 2) % 3);
            let curl = difference(Expr::field(E[d]), b, Stagger::Forward, self.rate[b])?
                - difference(Expr::field(E[b]), d, Stagger::Forward, self.rate[d])?;
            let next = Expr::field(h) - curl;
            u.push((format!("the H update of {h}"), Update::new(h, 1, next)));
        }
        self.layer_parts(n, Side::H, &mut u)?;
        for (c, e) in E.iter().enumerate() {
            let (b, d) = ((c + 1) % 3, (c + 2) % 3);
            let curl = difference(at1(H[d]), b, Stagger::Backward, self.inv[b])?
                - difference(at1(H[b]), d, Stagger::Backward, self.inv[d])?;
            let next = Expr::field(&Yee::ca(c)) * Expr::field(e) + Expr::field(&Yee::cb(c)) * curl;
            u.push((format!("the E update of {e}"), Update::new(e, 1, next)));
        }
        for (c, e) in E.iter().enumerate() {
            for w in (0..3).filter(|&w| w != c && self.walls[w]) {
                let mut plane = Region { lo: [0; 3], hi: n };
                plane.hi[w] = 1;
                let axis = Axis::ALL[w].name();
                u.push((
                    format!("the PEC wall of {e} at {axis} = 0"),
                    Update::new(e, 1, Expr::Const(0.0)).on(StepRegion::Box(plane)),
                ));
            }
        }
        self.layer_parts(n, Side::E, &mut u)?;
        if self.drude {
            for (c, e) in E.iter().enumerate() {
                let next = at1(e) - Expr::field(&Yee::cb(c)) * Expr::field(&Yee::current(c));
                u.push((format!("the Drude term of {e}"), Update::new(e, 1, next)));
            }
        }
        Ok(u)
    }

    /// The CPML terms of `side`'s half step, axis by axis: per slab and curl term, the memory
    /// variable, then its correction.
    fn layer_parts(
        &self,
        n: [usize; 3],
        side: Side,
        u: &mut Vec<(String, Update)>,
    ) -> Result<(), StepError> {
        let electric = side == Side::E;
        for a in 0..3 {
            let Some(t) = self.cpml[a] else { continue };
            for (t_i, (ti, si, sign)) in terms(a).into_iter().enumerate() {
                let (target, source, stagger, level) = if electric {
                    (E[ti], H[si], Stagger::Backward, 1)
                } else {
                    (H[ti], E[si], Stagger::Forward, 0)
                };
                let psi = Yee::psi(side, a, t_i);
                let dsrc = difference(Expr::at(source, level, [0; 3]), a, stagger, self.inv[a])?;
                let memory = Expr::field(&Yee::decay(side, a, t_i)) * Expr::field(&psi)
                    + Expr::field(&Yee::gain(side, a, t_i)) * dsrc.clone();
                let term = Expr::field(&Yee::kappa(side, a, t_i)) * dsrc + Expr::field(&psi);
                let old = Expr::at(target, 1, [0; 3]);
                let corrected = match (electric, sign > 0.0) {
                    (true, true) => old + Expr::field(&Yee::cb(ti)) * term,
                    (true, false) => old - Expr::field(&Yee::cb(ti)) * term,
                    (false, _) => old + Expr::Const(-sign * self.dt) * term,
                };
                let off: &[usize] = if electric {
                    &[(ti + 1) % 3, (ti + 2) % 3]
                } else {
                    &[]
                };
                for (end, slab) in ["low", "high"].iter().zip(self.slabs(n, a, t, off)) {
                    let axis = Axis::ALL[a].name();
                    u.push((
                        format!("the CPML memory {psi} at the {end} {axis} end"),
                        Update::new(&psi, 0, memory.clone()).on(StepRegion::Box(slab)),
                    ));
                    u.push((
                        format!("the CPML term of {target} from {psi} at the {end} {axis} end"),
                        Update::new(target, 1, corrected.clone()).on(StepRegion::Box(slab)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The form's description on a grid of `n` cells.
    pub fn description(&self, n: [usize; 3]) -> Result<StepDescription, StepError> {
        Ok(StepDescription {
            dim: 3,
            boundary: Boundary::Periodic,
            fields: self.fields(),
            params: vec![],
            updates: self.parts(n)?.into_iter().map(|(_, u)| u).collect(),
        })
    }

    /// Recognises `d` on `grid` as the Yee form, or names the first part that differs from
    /// it (an FDTD kernel computes exactly this step).
    pub fn of(d: &StepDescription, grid: &Grid) -> Result<YeeForm, StepError> {
        if d.dim != 3 || grid.dim() != 3 {
            return Err(refuse(
                "the grid",
                format!("{}-D; the Yee form is 3-D", d.dim),
            ));
        }
        d.validate_on(grid)?;
        if d.boundary != Boundary::Periodic {
            return Err(refuse(
                "the boundary",
                format!(
                    "{}; the Yee form reads past the last cell periodically (a wall is an \
                     update holding tangential E at zero on plane 0)",
                    d.boundary.name()
                ),
            ));
        }
        for name in E.iter().chain(&H) {
            match d.field(name).map(|f| f.role) {
                Some(Role::State { levels: 1 }) => {}
                _ => {
                    return Err(refuse(
                        &format!("field '{name}'"),
                        "missing or not a state field of one level",
                    ))
                }
            }
        }
        let form = YeeForm {
            walls: std::array::from_fn(|a| wall_of(d, a)),
            rate: weights(d, &H)?,
            inv: weights(d, &E)?,
            dt: cpml_weight(d),
            cpml: std::array::from_fn(|a| thickness(d, a)),
            drude: d.field(&Yee::current(0)).is_some(),
        };
        let n = grid.shape();
        for (a, t) in form.cpml.iter().enumerate() {
            if t.is_some_and(|t| t == 0 || 2 * t > n[a]) {
                return Err(refuse(
                    &Yee::psi(Side::H, a, 0),
                    "its slabs overlap or are empty; a CPML takes 1 to half the axis's cells",
                ));
            }
        }
        form.matches(d, n)?;
        Ok(form)
    }

    /// Whether `d` is this form's description on `n` cells; else the first part that differs.
    fn matches(&self, d: &StepDescription, n: [usize; 3]) -> Result<(), StepError> {
        let fields = self.fields();
        for f in &d.fields {
            if !fields.contains(f) {
                return Err(refuse(
                    &format!("field '{}'", f.name),
                    "not one of the form's fields (or declared with another role or staggering)",
                ));
            }
        }
        if let Some(f) = fields.iter().find(|f| d.field(&f.name).is_none()) {
            return Err(refuse(&format!("field '{}'", f.name), "missing"));
        }
        if let Some(p) = d.params.first() {
            return Err(refuse(
                &format!("parameter '{p}'"),
                "the form takes none (its numbers are literals)",
            ));
        }
        let parts = self.parts(n)?;
        for (i, (part, want)) in parts.iter().enumerate() {
            match d.updates.get(i) {
                Some(u) if u == want => {}
                Some(u) => {
                    return Err(refuse(
                        part,
                        format!(
                            "update {i} (of '{}' on {:?}) differs from the form's (of '{}' on \
                             {:?})",
                            u.target, u.region, want.target, want.region
                        ),
                    ))
                }
                None => return Err(refuse(part, format!("missing (update {i})"))),
            }
        }
        if let Some(u) = d.updates.get(parts.len()) {
            return Err(refuse(
                &format!("update {} (of '{}')", parts.len(), u.target),
                "past the form's last update",
            ));
        }
        Ok(())
    }
}

/// Whether some update holds an E component at zero on plane 0 of axis `a`.
fn wall_of(d: &StepDescription, a: usize) -> bool {
    d.updates.iter().any(|u| {
        E.contains(&u.target.as_str())
            && u.expr == Expr::Const(0.0)
            && matches!(u.region, StepRegion::Box(r) if r.lo[a] == 0 && r.hi[a] == 1)
    })
}

/// Per axis, the weight of the first two-point difference along it in the whole-grid update
/// of `fields`' component `a + 1` (which holds `∂_a` of another component).
fn weights(d: &StepDescription, fields: &[&str; 3]) -> Result<[f64; 3], StepError> {
    let mut w = [0.0; 3];
    for (a, w) in w.iter_mut().enumerate() {
        let target = fields[(a + 1) % 3];
        let part = format!("the whole-grid update of {target}");
        let u = d
            .updates
            .iter()
            .find(|u| u.target == target && u.level == 1 && u.region == StepRegion::All)
            .ok_or_else(|| refuse(&part, "missing"))?;
        let mut found = None;
        u.expr.walk(&mut |e| {
            if let (None, Expr::Diff(df)) = (found, e) {
                let taps = df.stencil.taps();
                found = (df.axis.index() == a && taps.len() == 2).then(|| taps[1].weight);
            }
        });
        *w = found.ok_or_else(|| {
            refuse(
                &part,
                format!("no two-point difference along {}", Axis::ALL[a].name()),
            )
        })?;
    }
    Ok(w)
}

/// The CPML's thickness along `a`: the extent of the first update of its first H memory
/// variable (the low slab).
fn thickness(d: &StepDescription, a: usize) -> Option<usize> {
    let psi = Yee::psi(Side::H, a, 0);
    d.updates
        .iter()
        .find(|u| u.target == psi)
        .and_then(|u| match u.region {
            StepRegion::Box(r) => Some(r.hi[a].saturating_sub(r.lo[a])),
            _ => None,
        })
}

/// `Δt` of the H side's CPML terms: the constant of the first correction reading the first
/// axis's first H memory variable (its curl sign is −1, so the constant is `+Δt`).
fn cpml_weight(d: &StepDescription) -> f64 {
    let Some(a) = (0..3).find(|&a| d.field(&Yee::psi(Side::H, a, 0)).is_some()) else {
        return 0.0;
    };
    let psi = Yee::psi(Side::H, a, 0);
    let mut out = 0.0;
    if let Some(u) = d
        .updates
        .iter()
        .find(|u| u.target != psi && u.expr.reads().iter().any(|(name, _, _)| *name == psi))
    {
        let mut found = None;
        u.expr.walk(&mut |e| {
            if let (None, Expr::Const(v)) = (found, e) {
                found = Some(*v);
            }
        });
        out = found.unwrap_or(0.0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::physics::{yee, Yee};

    fn grid() -> Grid {
        Grid::new(&[11, 9, 13], &[0.1, 0.2, 0.3]).unwrap()
    }

    const SPEC: Yee = Yee {
        dt: 0.05,
        walls: [false, true, true],
        cpml: [None, Some(2), Some(3)],
        drude: true,
    };

    /// The description of every arrangement validates and is recognised with the numbers it
    /// was built from: the CPU stepper's `Δt/Δ` and `1/Δ`, walls, layers and currents.
    #[test]
    fn the_yee_step_is_recognised_with_its_numbers() {
        let g = grid();
        for walls in [[false; 3], [true; 3], [false, true, true]] {
            for cpml in [[None; 3], [None, Some(2), Some(3)]] {
                for drude in [false, true] {
                    if cpml.iter().zip(walls).any(|(c, w)| c.is_some() && !w) {
                        continue;
                    }
                    let spec = Yee {
                        walls,
                        cpml,
                        drude,
                        ..SPEC
                    };
                    let d = yee(&g, &spec).unwrap();
                    d.validate_on(&g).unwrap();
                    let f = YeeForm::of(&d, &g).unwrap();
                    assert_eq!(f.walls, walls);
                    assert_eq!(f.cpml, cpml);
                    assert_eq!(f.drude, drude);
                    assert_eq!(f.rate, [0.05 / 0.1, 0.05 / 0.2, 0.05 / 0.3]);
                    assert_eq!(f.inv, [1.0 / 0.1, 1.0 / 0.2, 1.0 / 0.3]);
                    let layers = cpml.iter().any(Option::is_some);
                    assert_eq!(f.dt, if layers { 0.05 } else { 0.0 });
                }
            }
        }
    }

    fn refused(d: &StepDescription) -> String {
        match YeeForm::of(d, &grid()) {
            Err(StepError::NotYee { part, .. }) => part,
            other => panic!("{other:?}"),
        }
    }

    /// A description that differs from the form anywhere is refused with the part that
    /// differs.
    #[test]
    fn a_step_off_the_form_is_refused_with_the_part_that_differs() {
        let g = grid();
        let d = yee(&g, &SPEC).unwrap();
        let mut other = d.clone();
        other.boundary = Boundary::Dirichlet;
        assert_eq!(refused(&other), "the boundary");
        // A different weight in one term of the E update.
        let mut other = d.clone();
        let i = other.updates.iter().position(|u| u.target == "ey").unwrap();
        other.updates[i].expr = other.updates[i].expr.clone() * Expr::Const(2.0);
        assert_eq!(refused(&other), "the E update of ey");
        // A CPML memory variable on a thinner slab.
        let mut other = d.clone();
        let i = other
            .updates
            .iter()
            .rposition(|u| u.target == "psi_e_z1")
            .unwrap();
        if let StepRegion::Box(r) = &mut other.updates[i].region {
            r.lo[2] += 1;
        }
        assert_eq!(
            refused(&other),
            "the CPML memory psi_e_z1 at the high z end"
        );
        // An extra update, and a missing wall.
        let mut other = d.clone();
        other
            .updates
            .push(Update::new("hx", 1, Expr::at("hx", 1, [0; 3])));
        let last = other.updates.len() - 1;
        assert_eq!(refused(&other), format!("update {last} (of 'hx')"));
        let mut other = d;
        other
            .updates
            .retain(|u| u.expr != Expr::Const(0.0) || u.target != "ez");
        assert!(
            refused(&other).starts_with("the PEC wall of"),
            "{}",
            refused(&other)
        );
    }

    /// Walls must back a CPML, which must fit its axis.
    #[test]
    fn a_cpml_needs_walls_and_room() {
        let g = grid();
        let bad = |spec: Yee| matches!(yee(&g, &spec), Err(StepError::NotYee { .. }));
        assert!(bad(Yee {
            walls: [false; 3],
            ..SPEC
        }));
        assert!(bad(Yee {
            cpml: [None, Some(5), None],
            ..SPEC
        }));
    }
}
