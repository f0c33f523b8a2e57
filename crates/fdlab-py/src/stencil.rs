//! `fdlab.Stencil`: a stencil description, built into a core stencil for an array's rank.
//!
//! A core [`Stencil`] takes its spacing from a [`Grid`]; a Python stencil stores the description
//! (axis, orders, spacing, or custom taps) and builds the core stencil the first time it meets
//! an array of a given rank. The weights depend only on the rank and the spacing, never on the
//! sizes, so one build per rank is cached and reused by every later call.

use std::sync::OnceLock;

use fdlab::{Axis, CoreError as Error, Grid, Stencil};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::error::{to_py, type_error, value_error};

/// Grid spacing of a Laplacian: one value for every axis, or one per axis in (x, y, z) order.
#[derive(Debug, Clone, PartialEq)]
enum Spacing {
    Uniform(f64),
    PerAxis(Vec<f64>),
}

/// What a stencil computes, before it meets a grid.
#[derive(Debug, Clone, PartialEq)]
enum Desc {
    Derivative {
        axis: Axis,
        order: usize,
        accuracy: usize,
        spacing: f64,
    },
    Laplacian {
        accuracy: usize,
        spacing: Spacing,
    },
    Custom(Vec<([i32; 3], f64)>),
}

/// A finite-difference stencil: a derivative, a Laplacian or custom weights.
///
/// Axes follow fdlab's x-fastest layout: axis 0 or "x" is the LAST axis of a C-ordered NumPy
/// array, 1 or "y" the one before, 2 or "z" the first of a 3-D array. Offsets and spacings are
/// given in the same (x, y, z) order.
#[pyclass(name = "Stencil", module = "fdlab", frozen)]
pub struct PyStencil {
    desc: Desc,
    /// The description's debug text: equal descriptions print alike (floats included), so it
    /// keys caches of compiled GPU plans and the hash.
    key: String,
    built: [OnceLock<Result<Stencil, Error>>; 3],
}

impl PyStencil {
    fn new(desc: Desc) -> PyResult<PyStencil> {
        let s = PyStencil {
            key: format!("{desc:?}"),
            desc,
            built: Default::default(),
        };
        // Build once for the smallest rank that has the stencil's axes, so that bad orders
        // and spacings fail here rather than at the first apply.
        let dim = match &s.desc {
            Desc::Derivative { axis, .. } => axis.index() + 1,
            Desc::Laplacian {
                spacing: Spacing::PerAxis(h),
                ..
            } => h.len().clamp(1, 3),
            _ => 1,
        };
        s.core(dim)?;
        Ok(s)
    }

    /// A text equal for equal descriptions and different otherwise (a cache key).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The core stencil for arrays of `dim` axes (1 to 3), built on first use.
    pub fn core(&self, dim: usize) -> PyResult<&Stencil> {
        if !(1..=3).contains(&dim) {
            return Err(value_error(format!(
                "fdlab arrays have 1, 2 or 3 axes, got {dim}"
            )));
        }
        self.built[dim - 1]
            .get_or_init(|| self.build(dim))
            .as_ref()
            .map_err(|e| to_py(e.clone()))
    }

    fn build(&self, dim: usize) -> Result<Stencil, Error> {
        let ones = vec![1usize; dim];
        match &self.desc {
            Desc::Derivative {
                axis,
                order,
                accuracy,
                spacing,
            } => {
                let mut h = vec![1.0; dim];
                if let Some(slot) = h.get_mut(axis.index()) {
                    *slot = *spacing;
                }
                Stencil::derivative(&Grid::new(&ones, &h)?, *axis, *order, *accuracy)
            }
            Desc::Laplacian { accuracy, spacing } => {
                let h = match spacing {
                    Spacing::Uniform(h) => vec![*h; dim],
                    Spacing::PerAxis(h) if h.len() == dim => h.clone(),
                    Spacing::PerAxis(h) => {
                        return Err(Error::Stencil {
                            detail: format!(
                                "the Laplacian has {} spacings but the array has {dim} axes; \
                                 give one spacing per axis (x first) or a single number",
                                h.len()
                            ),
                        })
                    }
                };
                Stencil::laplacian(&Grid::new(&ones, &h)?, *accuracy)
            }
            Desc::Custom(taps) => Stencil::custom(taps),
        }
    }
}

/// A tap as Python sees it: `((x, y, z), weight)`.
type TapTuple = ((i32, i32, i32), f64);

/// Reads an axis: 0, 1, 2 or "x", "y", "z" (x is the last NumPy axis).
fn parse_axis(axis: &Bound<'_, PyAny>) -> PyResult<Axis> {
    if let Ok(s) = axis.downcast::<PyString>() {
        let s = s.to_cow()?;
        return match s.to_ascii_lowercase().as_str() {
            "x" => Ok(Axis::X),
            "y" => Ok(Axis::Y),
            "z" => Ok(Axis::Z),
            _ => Err(value_error(format!(
                "unknown axis '{s}'; use \"x\" (last NumPy axis), \"y\" or \"z\", or 0, 1, 2"
            ))),
        };
    }
    if axis.is_instance_of::<pyo3::types::PyBool>() {
        return Err(type_error(
            "axis must be 0, 1, 2 or \"x\", \"y\", \"z\", not a bool",
        ));
    }
    let i: i64 = axis.extract().map_err(|_| {
        type_error(format!(
            "axis must be 0, 1, 2 or \"x\", \"y\", \"z\", not {}",
            type_name(axis)
        ))
    })?;
    usize::try_from(i)
        .ok()
        .and_then(Axis::from_index)
        .ok_or_else(|| {
            value_error(format!(
                "axis {i} does not exist; use 0 (x, the last NumPy axis), 1 (y) or 2 (z)"
            ))
        })
}

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Reads a positive order (derivative order or accuracy) that fits `usize`.
fn parse_order(what: &str, v: i64) -> PyResult<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| value_error(format!("{what} must be a positive integer, got {v}")))
}

/// Reads one custom offset: an int (x only) or 1 to 3 ints in (x, y, z) order.
fn parse_offset(o: &Bound<'_, PyAny>) -> PyResult<[i32; 3]> {
    let v: Vec<i64> = match o.extract::<i64>() {
        Ok(i) => vec![i],
        Err(_) => o.extract().map_err(|_| {
            type_error(format!(
                "an offset is an int or a tuple of 1 to 3 ints (x, y, z), not {}",
                type_name(o)
            ))
        })?,
    };
    if v.is_empty() || v.len() > 3 {
        return Err(value_error(format!(
            "an offset has 1 to 3 components (x, y, z), got {}",
            v.len()
        )));
    }
    let mut out = [0i32; 3];
    for (slot, c) in out.iter_mut().zip(&v) {
        *slot = i32::try_from(*c)
            .map_err(|_| value_error(format!("offset component {c} is out of range")))?;
    }
    Ok(out)
}

#[pymethods]
impl PyStencil {
    /// Central derivative of `order` along `axis` with `accuracy` (an even order of the error),
    /// scaled by `spacing` (the grid step along that axis).
    /// `axis` 0 or "x" is the last NumPy axis, 1 or "y" the one before it, 2 or "z" the first
    /// axis of a 3-D array (fdlab's x-fastest order, not NumPy's axis numbering).
    #[staticmethod]
    #[pyo3(signature = (axis, order = 1, accuracy = 2, spacing = 1.0))]
    fn derivative(
        axis: &Bound<'_, PyAny>,
        order: i64,
        accuracy: i64,
        spacing: f64,
    ) -> PyResult<PyStencil> {
        PyStencil::new(Desc::Derivative {
            axis: parse_axis(axis)?,
            order: parse_order("order", order)?,
            accuracy: parse_order("accuracy", accuracy)?,
            spacing,
        })
    }

    /// The Laplacian over every axis of the array it is applied to, with `accuracy`. `spacing`
    /// is one number for all axes or one per axis in (x, y, z) order.
    #[staticmethod]
    #[pyo3(signature = (accuracy = 2, spacing = None))]
    fn laplacian(accuracy: i64, spacing: Option<&Bound<'_, PyAny>>) -> PyResult<PyStencil> {
        let spacing = match spacing {
            None => Spacing::Uniform(1.0),
            Some(s) => match s.extract::<f64>() {
                Ok(h) => Spacing::Uniform(h),
                Err(_) => Spacing::PerAxis(s.extract().map_err(|_| {
                    type_error(format!(
                        "spacing must be a number or a sequence of numbers (x first), not {}",
                        type_name(s)
                    ))
                })?),
            },
        };
        if let Spacing::PerAxis(h) = &spacing
            && !(1..=3).contains(&h.len())
        {
            return Err(value_error(format!(
                "give 1 to 3 spacings (x, y, z), got {}",
                h.len()
            )));
        }
        PyStencil::new(Desc::Laplacian {
            accuracy: parse_order("accuracy", accuracy)?,
            spacing,
        })
    }

    /// Custom weights: `out[p] = sum(w * u[p + o])` over the pairs of `offsets` and `weights`.
    /// An offset is an int (along x) or a tuple of 1 to 3 ints in (x, y, z) order; weights are
    /// used as given (no spacing applied).
    #[staticmethod]
    fn custom(offsets: &Bound<'_, PyAny>, weights: Vec<f64>) -> PyResult<PyStencil> {
        let offsets: Vec<[i32; 3]> = offsets
            .try_iter()
            .map_err(|_| type_error("offsets must be a sequence"))?
            .map(|o| parse_offset(&o?))
            .collect::<PyResult<_>>()?;
        if offsets.len() != weights.len() {
            return Err(value_error(format!(
                "{} offsets but {} weights; give one weight per offset",
                offsets.len(),
                weights.len()
            )));
        }
        PyStencil::new(Desc::Custom(offsets.into_iter().zip(weights).collect()))
    }

    /// "derivative", "laplacian" or "custom".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.desc {
            Desc::Derivative { .. } => "derivative",
            Desc::Laplacian { .. } => "laplacian",
            Desc::Custom(_) => "custom",
        }
    }

    /// The taps for arrays of `ndim` axes: a list of `((x, y, z), weight)`.
    #[pyo3(signature = (ndim = 3))]
    fn taps(&self, ndim: usize) -> PyResult<Vec<TapTuple>> {
        Ok(self
            .core(ndim)?
            .taps()
            .iter()
            .map(|t| ((t.offset[0], t.offset[1], t.offset[2]), t.weight))
            .collect())
    }

    fn __repr__(&self) -> String {
        match &self.desc {
            Desc::Derivative {
                axis,
                order,
                accuracy,
                spacing,
            } => format!(
                "Stencil.derivative(axis=\"{}\", order={order}, accuracy={accuracy}, \
                 spacing={spacing:?})",
                axis.name()
            ),
            Desc::Laplacian { accuracy, spacing } => match spacing {
                Spacing::Uniform(h) => {
                    format!("Stencil.laplacian(accuracy={accuracy}, spacing={h:?})")
                }
                Spacing::PerAxis(h) => {
                    format!("Stencil.laplacian(accuracy={accuracy}, spacing={h:?})")
                }
            },
            Desc::Custom(taps) => format!("Stencil.custom(<{} taps>)", taps.len()),
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.key.hash(&mut h);
        h.finish()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyStencil>()
            .is_ok_and(|o| o.get().desc == self.desc)
    }
}
