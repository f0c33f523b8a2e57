//! How a case's settings become the plain data of the output crate: what its pictures show
//! ([`look`]) and the element type of its field files ([`dtype`]). `fdlab-output` knows no
//! case; this is the one place that reads a case for it.

use crate::case::{Case, Physics};
use crate::stepper::PlaneSample;
use fdlab_core::Precision;
use fdlab_output::pictures::look::TimeUnit;
use fdlab_output::pictures::scale::Rule;
use fdlab_output::pictures::Look;
use fdlab_output::{ColorMap, Dtype};

/// The element type of the field files of a run in precision `p`.
pub(crate) fn dtype(p: Precision) -> Dtype {
    match p {
        Precision::F32 => Dtype::F32,
        Precision::F64 => Dtype::F64,
    }
}

/// A unit from the case: the case's own (`""` meaning none), else `default`.
fn unit(given: &Option<String>, default: Option<&str>) -> Option<String> {
    match given {
        Some(u) if u.is_empty() => None,
        Some(u) => Some(u.clone()),
        None => default.map(str::to_string),
    }
}

/// `v` with at most four decimals and no trailing zeros: "0.75", "12".
fn short(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The pictures of `case` stepped by `dt`, showing the samples `p` of the plane `z`.
pub(crate) fn look(case: &Case, dt: f64, p: PlaneSample, z: usize) -> Look {
    let s = &case.spec;
    let o = &s.output;
    let fdtd = s.physics == Physics::Fdtd;
    let signed = s.physics != Physics::Heat;
    let quantity = match (s.physics, &s.fdtd) {
        (Physics::Heat, _) => "temperature".to_string(),
        (Physics::Fdtd, Some(f)) => format!("{:?}", f.plot),
        _ => "pressure".to_string(),
    };
    let length = unit(&o.length_unit, (!fdtd).then_some("m"));
    let interval = o.every.max(1) as f64 * dt;
    let time = TimeUnit::new(unit(&o.time_unit, (!fdtd).then_some("s")), s.time.duration);
    let h = &s.grid.spacing;
    let at = (s.grid.shape.len() == 3).then(|| {
        let z = short(z as f64 * h.get(2).copied().unwrap_or(1.0));
        match &length {
            Some(u) => format!("z = {z} {u}"),
            None => format!("z = {z}"),
        }
    });
    Look {
        nx: p.width(),
        ny: p.height(),
        extent: [0.0, p.nx as f64 * h[0], 0.0, p.ny as f64 * h[1]],
        quantity: (quantity, unit(&o.value_unit, None)),
        length,
        dt,
        interval,
        time,
        at,
        cmap: if signed {
            ColorMap::Seismic
        } else {
            ColorMap::Heat
        },
        rule: Rule {
            signed,
            clip: o.clip.unwrap_or(if signed { 0.25 } else { 1.0 }),
            fixed: o.color_range,
        },
    }
}
