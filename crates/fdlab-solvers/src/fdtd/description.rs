//! The FDTD step as a description ([`fdlab_core::step::physics::yee`]): the Yee updates with
//! their CPML terms and Drude currents, what the GPU stepper's kernels are lowered from and
//! what the generic step executors run. Lorentz and Debye polarisations, plane waves, point
//! sources, probes and DFT monitors act outside it, as on the CPU (see `docs/fdtd-design.md`).

use super::{Fdtd, FdtdSetup, Grid};
use crate::error::Result;
use fdlab_core::step::physics::yee::{terms, Side, Yee, E, H};
use fdlab_core::step::{Slots, StepDescription};
use fdlab_core::{Field, Scalar};

/// The Yee step on `grid` with time step `dt`, with Drude currents where `drude`.
fn describe(grid: &Grid, dt: f64, drude: bool) -> Result<StepDescription> {
    let g = fdlab_core::Grid::new(&grid.n, &grid.spacing)?;
    let spec = Yee {
        dt,
        walls: grid.boundary.map(|b| b.has_walls()),
        cpml: grid.boundary.map(|b| b.cpml().map(|p| p.thickness)),
        drude,
    };
    Ok(fdlab_core::step::physics::yee(&g, &spec)?)
}

impl FdtdSetup {
    /// The case's Yee step as a description: walls, CPML terms, and Drude currents when a
    /// box that is not a conductor has a Drude term.
    pub fn description(&self) -> Result<StepDescription> {
        let drude = self.boxes.iter().any(|b| b.drude.is_some() && !b.pec);
        describe(&self.grid, self.dt, drude)
    }
}

impl<T: Scalar> Fdtd<T> {
    /// This simulation's Yee step as a description (Drude currents when it has Drude cells);
    /// its Lorentz and Debye cells, plane waves, sources and probes are not part of it.
    pub fn description(&self) -> Result<StepDescription> {
        describe(&self.grid, self.dt, !self.drude.is_empty())
    }

    /// The slots of `d` (this simulation's [`Fdtd::description`]) in `f64`, holding its
    /// fields, `Ca` and `Cb`, CPML profiles and memory variables and Drude currents and
    /// coefficients: one step of `d` on them is one [`Fdtd::step`] without the parts the
    /// description leaves out.
    pub fn description_slots(&self, d: &StepDescription) -> Result<Slots<Field<f64>>> {
        let g = fdlab_core::Grid::new(&self.grid.n, &self.grid.spacing)?;
        let cells = self.grid.cells();
        let mut arrays: Vec<(String, Vec<f64>)> = vec![];
        let f = &self.fields;
        let own = [&f.ex, &f.ey, &f.ez, &f.hx, &f.hy, &f.hz];
        for (name, v) in E.iter().chain(&H).zip(own) {
            arrays.push((name.to_string(), v.iter().map(|x| x.as_f64()).collect()));
        }
        let ca: Vec<f64> = self.ca.iter().map(|x| x.as_f64()).collect();
        let cb: Vec<f64> = self.cb.iter().map(|x| x.as_f64()).collect();
        for c in 0..3 {
            arrays.push((Yee::ca(c), ca.clone()));
            arrays.push((Yee::cb(c), cb.clone()));
        }
        for (c, (list, k, b, j)) in self.drude.branches().into_iter().enumerate() {
            let mut out = [vec![0.0; cells], vec![0.0; cells], vec![0.0; cells]];
            for (i, &cell) in list.iter().enumerate() {
                out[0][cell] = j[i];
                out[1][cell] = k[i];
                out[2][cell] = b[i];
            }
            let [jv, kv, bv] = out;
            arrays.push((Yee::current(c), jv));
            arrays.push((Yee::kj(c), kv));
            arrays.push((Yee::bj(c), bv));
        }
        self.layer_arrays(&mut arrays);
        let n = self.grid.n;
        let made = Slots::new(d, |name, level| {
            let data = match arrays.iter().find(|(a, _)| a == name) {
                Some((_, v)) if level < 1 => v.clone(),
                _ => vec![0.0; n.iter().product()],
            };
            Field::from_vec(&g, data)
        })?;
        Ok(made)
    }

    /// The CPML's profiles and memory variables as whole-grid arrays named as in
    /// [`Yee`] (profiles zero outside the layers).
    fn layer_arrays(&self, arrays: &mut Vec<(String, Vec<f64>)>) {
        let Some(layers) = &self.cpml else { return };
        let (n, cells) = (self.grid.n, self.grid.cells());
        let state = layers.state();
        let mut at = 0;
        for p in layers.profiles() {
            let (a, t) = (p.axis, p.thickness);
            let mut dims = n;
            dims[a] = 2 * t;
            let size: usize = dims.iter().product();
            // Slab position `l` along the axis → grid index.
            let global = |l: usize| if l < t { l } else { n[a] - 2 * t + l };
            let mut slab_of = |side: Side, prof: &[[T; 3]], at: &mut usize| {
                for (term, _) in terms(a).iter().enumerate() {
                    let mut psi = vec![0.0; cells];
                    let mut coef = [vec![0.0; cells], vec![0.0; cells], vec![0.0; cells]];
                    for s in 0..size {
                        let mut ijk = [
                            s % dims[0],
                            (s / dims[0]) % dims[1],
                            s / (dims[0] * dims[1]),
                        ];
                        let l = ijk[a];
                        ijk[a] = global(l);
                        let c = ijk[0] + n[0] * (ijk[1] + n[1] * ijk[2]);
                        psi[c] = state[*at + s].as_f64();
                        for (v, x) in coef.iter_mut().zip(prof[l]) {
                            v[c] = x.as_f64();
                        }
                    }
                    *at += size;
                    let [k, b, cc] = coef;
                    arrays.push((Yee::psi(side, a, term), psi));
                    arrays.push((Yee::kappa(side, a, term), k));
                    arrays.push((Yee::decay(side, a, term), b));
                    arrays.push((Yee::gain(side, a, term), cc));
                }
            };
            // The CPU keeps ψ axis by axis, E's two terms, then H's.
            slab_of(Side::E, &p.coef_e, &mut at);
            slab_of(Side::H, &p.coef_h, &mut at);
        }
    }
}
