//! The exact discrete adjoint (transpose) of a step description, and the gradients of a
//! misfit with respect to its coefficient fields and parameters.
//!
//! A step whose updates are linear in the state and auxiliary fields ([`LinearStep`]) is a
//! linear map `S` of the slots (every state level `1−L ..= 1` and every auxiliary), plus
//! affine terms in parameters (point sources). [`AdjointStep::step`] applies `Sᵀ`:
//!
//! 1. the rotation undone ([`Slots::unrotate`]: the transpose of a permutation is its
//!    inverse);
//! 2. the updates in reverse order, each transposed: for `y := Σ c·x(i+o) + a` on region `R`,
//!    for every `i` in `R`: `t = ȳ(i); ȳ(i) = 0;` then `x̄(j) += c(i)·t` for each term, `j`
//!    the point the read `i+o` lands on (periodic: wrapped, Neumann: mirrored; Dirichlet: a
//!    read outside the grid was zero and contributes nothing). A term reading `y` itself at
//!    offset 0 adds back into `ȳ(i)`. Points outside `R` pass their adjoint through.
//!
//! The transpose runs in `f64`, a row of the region at a time, on one thread.
//!
//! **The adjoint state** is a [`Slots`] of the description's layout: before
//! [`AdjointStep::step`] it holds `∂J/∂` of the forward slots *after* step `n` (levels
//! `1−L ..= 0` of each state field, level 1, the buffer the next step overwrites, and every
//! auxiliary), afterwards `∂J/∂` of the slots *before* step `n`. When the state updates
//! cover the whole grid (all physics here), level 1 carries nothing between steps and its
//! adjoint leaves each step zero. Coefficient buffers of the adjoint slots are neither read
//! nor written.
//!
//! **Gradients.** [`AdjointStep::gradient_step`] also accumulates, for every coefficient
//! field `k`, `g_k(j) += t · ∂(term)/∂k(j)` over the terms containing `k` (`j` the point
//! its read lands on; under Dirichlet the nearest point inside the grid), with the forward
//! values each update read: it re-runs step `n` from the forward slots before it (with the
//! forward executor, bit for bit) and undoes the updates as it transposes them. It returns,
//! per parameter, `∂/∂p ⟨ȳ, S(x)⟩` over all terms; [`AdjointStep::step`] returns the part
//! of the affine terms only, which for a source amplitude is the whole derivative.
//!
//! A time loop, `J` depending on the slots after each step:
//!
//! ```text
//! adjoint slots ← 0
//! for n = N−1 down to 0:
//!     add ∂J/∂(slots after step n) into the adjoint slots (e.g. residuals at receivers)
//!     ∂J/∂params(n) ← gradient_step(forward slots before step n, params(n), adjoint, g)
//! ```
//!
//! (the forward slots of step `n` stored, or recomputed from checkpoints:
//! [`fdlab_core::step::revolve`]).

use super::{apply_update, check_buffers};
use fdlab_core::step::{FactorKind, LinearStep, Role, Slots, StepDescription, StepError};
use fdlab_core::{Field, Grid, Region, Scalar};

mod checkpointed;
mod rows;

pub use checkpointed::Reversed;

/// `∂J/∂k` for every coefficient field `k` of a description, accumulated by
/// [`AdjointStep::gradient_step`] (in `f64`, x fastest).
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    names: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Gradient {
    /// Zero for every coefficient field of `d` on `grid`.
    pub fn zeros(d: &StepDescription, grid: &Grid) -> Gradient {
        let names: Vec<String> = d
            .fields
            .iter()
            .filter(|f| f.role == Role::Coefficient)
            .map(|f| f.name.clone())
            .collect();
        Gradient {
            values: vec![vec![0.0; grid.len()]; names.len()],
            names,
        }
    }

    /// The gradient with respect to coefficient field `name`.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(&self.values[i])
    }

    /// Every coefficient field's name and gradient, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[f64])> {
        self.names
            .iter()
            .zip(&self.values)
            .map(|(n, v)| (n.as_str(), v.as_slice()))
    }
}

/// A step description with its linearisation: what transposes steps of it.
///
/// ```
/// use fdlab_core::step::{physics::acoustic_vd, Slots};
/// use fdlab_core::{Boundary, Field, Grid};
/// use fdlab_cpu::step::AdjointStep;
/// let g = Grid::unit(&[16, 12]).unwrap();
/// let d = acoustic_vd(&g, 4, Boundary::Dirichlet).unwrap();
/// let adj = AdjointStep::new(&d).unwrap();
/// let fwd = Slots::new(&d, |_, _| Ok::<_, ()>(Field::<f64>::filled(&g, 1.0))).unwrap();
/// let mut a = Slots::new(&d, |_, _| Ok::<_, ()>(Field::<f64>::random(&g, 1))).unwrap();
/// let dp = adj.step(&g, &fwd, &[("dt", 1e-3)], &mut a).unwrap();
/// assert_eq!(dp, vec![0.0]); // dt multiplies reads: no affine part
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AdjointStep {
    d: StepDescription,
    linear: LinearStep,
}

/// A term with its names resolved and its parameters multiplied out.
struct Compiled {
    /// `weight × Π parameter^power` (parameters are constant through a step).
    scale: f64,
    /// Per parameter factor: the parameter's number and `∂scale/∂parameter`.
    dscale: Vec<(usize, f64)>,
    /// Coefficient factors: the number of the read in [`CompiledUpdate::reads`], power.
    coefs: Vec<(usize, i32)>,
    /// Buffer number (see [`AdjointStep::buffers`]) and offset.
    read: Option<(usize, [i32; 3])>,
}

/// An update's terms.
struct CompiledUpdate {
    /// The distinct coefficient reads of its terms: the coefficient's number (declaration
    /// order among coefficients) and the offset.
    reads: Vec<(usize, [i32; 3])>,
    terms: Vec<Compiled>,
}

/// `x^p`, exact for `p = 1`.
fn pow(x: f64, p: i32) -> f64 {
    if p == 1 {
        x
    } else {
        x.powi(p)
    }
}

fn each_point(r: Region, mut f: impl FnMut([usize; 3])) {
    for k in r.lo[2]..r.hi[2] {
        for j in r.lo[1]..r.hi[1] {
            for i in r.lo[0]..r.hi[0] {
                f([i, j, k]);
            }
        }
    }
}

impl AdjointStep {
    /// Validates and linearises `d`; errors with [`StepError::Nonlinear`] for updates that
    /// are not linear in the state and auxiliary fields.
    pub fn new(d: &StepDescription) -> Result<AdjointStep, StepError> {
        Ok(AdjointStep {
            linear: LinearStep::new(d)?,
            d: d.clone(),
        })
    }

    /// The description.
    pub fn description(&self) -> &StepDescription {
        &self.d
    }

    /// Its linearisation.
    pub fn linear(&self) -> &LinearStep {
        &self.linear
    }

    /// Applies the transpose of one step to `adjoint` (see the module's documentation):
    /// before, the adjoint of the slots after the step; after, of the slots before it.
    /// Coefficients are read from `forward` (only its coefficient buffers are read).
    /// Returns, per declared parameter, the derivative through its affine terms (for a
    /// source amplitude, `∂J/∂s` at this step).
    pub fn step<T: Scalar>(
        &self,
        grid: &Grid,
        forward: &Slots<Field<T>>,
        params: &[(&str, f64)],
        adjoint: &mut Slots<Field<T>>,
    ) -> Result<Vec<f64>, StepError> {
        self.transpose(grid, forward, params, adjoint, None)
    }

    /// [`AdjointStep::step`] that also adds `∂J/∂k` of this step to `gradient` for every
    /// coefficient field `k`. `forward` must be the forward slots before this step (as
    /// [`super::run_step`] left them after the previous one); returns, per parameter, the
    /// derivative through every term (affine and multiplying reads, as `dt`).
    pub fn gradient_step<T: Scalar>(
        &self,
        grid: &Grid,
        forward: &Slots<Field<T>>,
        params: &[(&str, f64)],
        adjoint: &mut Slots<Field<T>>,
        gradient: &mut Gradient,
    ) -> Result<Vec<f64>, StepError> {
        let coefs = self.coefficients();
        if gradient.names != coefs || gradient.values.iter().any(|v| v.len() != grid.len()) {
            return Err(StepError::Params {
                detail: "the gradient does not belong to this description and grid; make it \
                         with Gradient::zeros(description, grid)"
                    .into(),
            });
        }
        self.transpose(grid, forward, params, adjoint, Some(gradient))
    }

    /// The non-coefficient buffers `(field, level)`, in declaration order.
    fn buffers(&self) -> Vec<(String, i32)> {
        let mut out = vec![];
        for f in &self.d.fields {
            match f.role {
                Role::State { levels } => {
                    out.extend((1 - levels as i32..=1).map(|l| (f.name.clone(), l)));
                }
                Role::Auxiliary => out.push((f.name.clone(), 0)),
                Role::Coefficient => {}
            }
        }
        out
    }

    fn coefficients(&self) -> Vec<&str> {
        let d = &self.d;
        let c = d.fields.iter().filter(|f| f.role == Role::Coefficient);
        c.map(|f| f.name.as_str()).collect()
    }

    fn compile(&self, bufs: &[(String, i32)], values: &[f64]) -> Vec<CompiledUpdate> {
        let coefs = self.coefficients();
        let pos = |xs: &[&str], n: &str| xs.iter().position(|x| *x == n).unwrap_or(0);
        let params: Vec<&str> = self.d.params.iter().map(|p| p.as_str()).collect();
        let mut out = vec![];
        for u in &self.linear.updates {
            let mut terms = vec![];
            let mut reads: Vec<(usize, [i32; 3])> = vec![];
            for t in &u.terms {
                let mut scale = t.weight;
                let mut ps = vec![];
                let mut cs = vec![];
                for f in &t.factors {
                    match &f.kind {
                        FactorKind::Coefficient { name, offset } => {
                            let r = (pos(&coefs, name), *offset);
                            let m = reads.iter().position(|x| *x == r).unwrap_or_else(|| {
                                reads.push(r);
                                reads.len() - 1
                            });
                            cs.push((m, f.power));
                        }
                        FactorKind::Param(p) => {
                            let q = pos(&params, p);
                            ps.push((q, values[q], f.power));
                            scale *= pow(values[q], f.power);
                        }
                    }
                }
                let dscale = (ps.iter().enumerate())
                    .map(|(n, &(q, v, p))| {
                        let others = (ps.iter().enumerate())
                            .filter(|&(m, _)| m != n)
                            .fold(t.weight, |acc, (_, &(_, w, r))| acc * pow(w, r));
                        (q, others * f64::from(p) * v.powi(p - 1))
                    })
                    .collect();
                let read = t.read.as_ref().map(|r| {
                    let b = bufs.iter().position(|(n, l)| *n == r.name && *l == r.level);
                    (b.unwrap_or(0), r.offset)
                });
                terms.push(Compiled {
                    scale,
                    dscale,
                    coefs: cs,
                    read,
                });
            }
            out.push(CompiledUpdate { reads, terms });
        }
        out
    }

    fn transpose<T: Scalar>(
        &self,
        grid: &Grid,
        forward: &Slots<Field<T>>,
        params: &[(&str, f64)],
        adjoint: &mut Slots<Field<T>>,
        mut gradient: Option<&mut Gradient>,
    ) -> Result<Vec<f64>, StepError> {
        let d = &self.d;
        d.validate_on(grid)?;
        let values = d.param_values(params)?;
        check_buffers(grid, forward)?;
        let bufs = self.buffers();
        for (name, level) in &bufs {
            let b = adjoint
                .get(name, *level)
                .ok_or_else(|| StepError::UnknownField { name: name.clone() })?;
            if b.grid().shape() != grid.shape() {
                return Err(StepError::Model(fdlab_core::Error::Shape {
                    expected: grid.dims().to_vec(),
                    got: b.grid().dims().to_vec(),
                }));
            }
        }
        let terms = self.compile(&bufs, &values);
        let regions: Vec<Region> = (self.linear.updates.iter())
            .map(|u| u.region.resolve(grid, u.reach))
            .collect();
        // The forward stages: run the step, keeping what each update overwrote.
        let mut fwd = gradient.as_ref().map(|_| forward.clone());
        let mut undo: Vec<Vec<T>> = vec![];
        if let Some(f) = fwd.as_mut() {
            for (u, r) in d.updates.iter().zip(&regions) {
                let t = f.get(&u.target, u.level).map_or(&[][..], |b| b.as_slice());
                let mut old = vec![];
                each_point(*r, |[i, j, k]| old.push(t[grid.index(i, j, k)]));
                undo.push(old);
                apply_update(d, grid, f, &values, u, false)?;
            }
        }
        adjoint.unrotate();
        let mut adj: Vec<Vec<f64>> = bufs
            .iter()
            .map(|(n, l)| {
                let b = adjoint.get(n, *l).map_or(&[][..], |f| f.as_slice());
                b.iter().map(|v| v.as_f64()).collect()
            })
            .collect();
        let coefs: Vec<&[T]> = self
            .coefficients()
            .iter()
            .map(|n| forward.get(n, 0).map_or(&[][..], |f| f.as_slice()))
            .collect();
        let mut dparams = vec![0.0; values.len()];
        let bc = d.boundary;
        for (n, u) in self.linear.updates.iter().enumerate().rev() {
            let ty = bufs
                .iter()
                .position(|(name, l)| *name == u.target && *l == u.level)
                .ok_or_else(|| StepError::UnknownField {
                    name: u.target.clone(),
                })?;
            // The forward slots as this update found them.
            let stage: Option<Vec<&[T]>> = match fwd.as_mut() {
                Some(f) => {
                    if let Some(t) = f.get_mut(&u.target, u.level) {
                        let t = t.as_mut_slice();
                        let mut old = undo[n].iter();
                        each_point(regions[n], |[i, j, k]| {
                            if let Some(v) = old.next() {
                                t[grid.index(i, j, k)] = *v;
                            }
                        });
                    }
                    let f = &*f;
                    Some(
                        bufs.iter()
                            .map(|(name, l)| f.get(name, *l).map_or(&[][..], |b| b.as_slice()))
                            .collect(),
                    )
                }
                None => None,
            };
            let inputs = rows::Inputs {
                grid,
                bc,
                coefs: &coefs,
                stage: stage.as_deref(),
            };
            let g = gradient.as_deref_mut().map(|g| g.values.as_mut_slice());
            rows::transpose_update(
                &terms[n],
                regions[n],
                ty,
                &inputs,
                &mut adj,
                &mut dparams,
                g,
            );
        }
        for ((name, level), a) in bufs.iter().zip(adj) {
            if let Some(b) = adjoint.get_mut(name, *level) {
                for (o, v) in b.as_mut_slice().iter_mut().zip(a) {
                    *o = T::from_f64(v);
                }
            }
        }
        Ok(dparams)
    }
}
