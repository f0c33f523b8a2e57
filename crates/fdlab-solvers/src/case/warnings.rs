//! What a wave case asks for that runs but probably not as meant: a source or receiver in the
//! absorbing layer, a source whose wavelength spans few cells, a source that peaks after the
//! run ends. Each is one line starting with the key it concerns; nothing here prints (the
//! callers show them).

use super::{BoundarySpec, Case, Plan};

/// Cells per wavelength at a Ricker source's peak frequency below which we warn. Centred
/// stencils lose phase accuracy quickly below it; a Ricker carries energy up to about 2.5
/// times its peak, so even 5 cells at the peak leaves its upper band coarser still.
const MIN_CELLS_PER_WAVELENGTH: f64 = 5.0;

/// The warnings of a validated wave case whose slowest velocity is `c_min`.
pub(crate) fn wave(case: &Case, plan: &Plan, c_min: f64) -> Vec<String> {
    let s = &case.spec;
    let mut out = vec![];
    let placed = s
        .sources
        .iter()
        .enumerate()
        .map(|(i, x)| (format!("sources[{i}]"), &x.position))
        .chain(
            s.receivers
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("receivers[{i}]"), &r.position)),
        );
    for (key, x) in placed {
        match *case.boundary() {
            BoundarySpec::Cpml { thickness } => out.extend(in_cpml(case, &key, x, thickness)),
            BoundarySpec::Dirichlet => out.extend(by_wall(case, &key, x)),
            BoundarySpec::Periodic => {}
        }
    }
    // The coarsest axis limits the resolution of a wave travelling along it.
    let h = s.grid.spacing.iter().cloned().fold(0.0, f64::max);
    let duration = plan.steps as f64 * plan.dt;
    for (i, src) in s.sources.iter().enumerate() {
        let f = src.frequency;
        let cells = c_min / f / h;
        if cells < MIN_CELLS_PER_WAVELENGTH {
            out.push(format!(
                "sources[{i}]: frequency {f} gives {cells:.2} cells per wavelength at the \
                 peak (wavelength c_min / frequency = {:e} with c_min = {c_min}, over the \
                 largest spacing {h}); below {MIN_CELLS_PER_WAVELENGTH} the grid disperses \
                 the wave: use frequency <= {:e} or a finer grid",
                c_min / f,
                c_min / (MIN_CELLS_PER_WAVELENGTH * h)
            ));
        }
        if src.wavelet.is_some() {
            continue;
        }
        let (delay, given) = match src.delay {
            Some(d) => (d, "delay"),
            None => (1.5 / f, "delay (by default 1.5 / frequency)"),
        };
        if delay > duration {
            out.push(format!(
                "sources[{i}]: {given} {delay:e} is longer than the run's duration \
                 {duration:e}: the wavelet peaks after the last step; lengthen \
                 time.duration or shorten the delay"
            ));
        }
    }
    out
}

/// A warning when position `x` (already checked to lie in the grid) is between grid points
/// and its interpolation's support reaches a rigid wall: the weights beyond it are mirrored
/// with opposite sign, so that the point sees its image in the wall.
fn by_wall(case: &Case, key: &str, x: &[f64]) -> Option<String> {
    let g = &case.spec.grid;
    let cells = case.in_cells(x);
    let r = crate::hicks::HALF_WIDTH as f64;
    let a = (0..case.dim()).find(|&a| {
        let c = cells[a];
        !crate::hicks::on_grid(c)
            && (c.floor() - r + 1.0 < 0.0 || c.floor() + r >= g.shape[a] as f64)
    })?;
    Some(format!(
        "{key}: position {x:?} is between grid points within {r} cells of the rigid wall along \
         axis {a}: its interpolation weights beyond the wall are mirrored with opposite sign \
         (the wall is p = 0 one spacing outside the grid); move it further in, or onto a grid \
         point, for a free-space source or receiver"
    ))
}

/// A warning when position `x` (already checked to lie in the grid) is in the CPML layer of
/// `thickness` cells, where the wave is damped: a source there radiates little, a receiver
/// records the damped field.
fn in_cpml(case: &Case, key: &str, x: &[f64], thickness: usize) -> Option<String> {
    let g = &case.spec.grid;
    let cell = case.nearest(x)?;
    let a = (0..case.dim()).find(|&a| cell[a] < thickness || cell[a] + thickness >= g.shape[a])?;
    let h = g.spacing[a];
    Some(format!(
        "{key}: position {x:?} (cell {:?}) lies in the CPML absorbing layer along axis {a} \
         ({thickness} cells at each end), where the wave is damped: move it into {} ..= {} \
         on that axis or make the layer thinner",
        &cell[..case.dim()],
        thickness as f64 * h,
        (g.shape[a] - 1 - thickness) as f64 * h
    ))
}
