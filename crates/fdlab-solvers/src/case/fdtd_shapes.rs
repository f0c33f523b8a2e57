//! The geometry of a `[[fdtd.materials]]` entry: a box, a sphere or a slab, in cells.

use super::fdtd_spec::{extent, MaterialBox};
use super::Case;
use crate::error::Result;
use crate::fdtd::{Grid, Shape};

/// The cells `m` fills, or an error naming the key under `key` (e.g. `fdtd.materials[0]`).
pub(super) fn shape(case: &Case, key: &str, grid: &Grid, m: &MaterialBox) -> Result<Shape> {
    let given = [
        (m.lo.is_some() || m.hi.is_some(), "lo/hi"),
        (m.center.is_some() || m.radius.is_some(), "center/radius"),
        (m.slab.is_some(), "slab"),
    ];
    let named: Vec<&str> = given.iter().filter(|g| g.0).map(|g| g.1).collect();
    if named.len() != 1 {
        return Err(case.invalid(
            key,
            format!(
                "give exactly one geometry: lo and hi (a box), center and radius (a sphere) or \
                 slab = {{ axis, lo, hi }}; found {}",
                if named.is_empty() {
                    "none".to_string()
                } else {
                    named.join(" and ")
                }
            ),
        ));
    }
    let ext = extent(grid);
    if let (Some(c), Some(r)) = (&m.center, m.radius) {
        if c.len() != 3 {
            return Err(case.invalid(
                &format!("{key}.center"),
                format!("{c:?}: give 3 coordinates"),
            ));
        }
        let sphere = Shape::Sphere {
            center: [c[0], c[1], c[2]],
            radius: r,
        };
        sphere.cells(grid, "material").map_err(|e| {
            let why = e.to_string();
            let why = why.trim_start_matches("invalid case: FDTD material ");
            case.invalid(&format!("{key}.center"), why.to_string())
        })?;
        return Ok(sphere);
    }
    if m.center.is_some() || m.radius.is_some() {
        return Err(case.invalid(key, "a sphere needs both center and radius".into()));
    }
    let (lo, hi) = match (&m.lo, &m.hi, &m.slab) {
        (Some(lo), Some(hi), None) => (lo.clone(), hi.clone()),
        (None, None, Some(s)) => {
            let a = s.axis.index();
            let mut lo = vec![0.0; 3];
            let mut hi = ext.to_vec();
            (lo[a], hi[a]) = (s.lo, s.hi);
            (lo, hi)
        }
        _ => {
            return Err(case.invalid(key, "a box needs both lo and hi".into()));
        }
    };
    let corner = if m.slab.is_some() { "slab" } else { "lo" };
    let tol = 1e-9;
    let inside = lo.len() == 3
        && hi.len() == 3
        && (0..3).all(|a| lo[a] >= -tol * ext[a] && hi[a] <= ext[a] * (1.0 + tol));
    if !inside {
        return Err(case.invalid(
            &format!("{key}.{corner}"),
            format!(
                "box {lo:?} ..= {hi:?} is outside the grid (or has not 3 coordinates per \
                 corner); use corners in 0 ..= {ext:?}"
            ),
        ));
    }
    // Cells whose centres (i + ½)·d lie in lo ..= hi.
    let mut first_cell = [0; 3];
    let mut last_cell = [0; 3];
    for a in 0..3 {
        let d = grid.spacing[a];
        let first = (lo[a] / d - 0.5).ceil().max(0.0);
        let last = (hi[a] / d - 0.5).floor().min(grid.n[a] as f64 - 1.0);
        if last < first {
            return Err(case.invalid(
                &format!("{key}.{}", if m.slab.is_some() { "slab" } else { "hi" }),
                format!(
                    "box {lo:?} ..= {hi:?} holds no cell centre along axis {a}; make it at \
                     least one cell ({d}) wide"
                ),
            ));
        }
        (first_cell[a], last_cell[a]) = (first as usize, last as usize);
    }
    Ok(Shape::Box {
        lo: first_cell,
        hi: last_cell,
    })
}
