//! Owned, view and mutable-view fields of one scalar type on a grid.

use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::scalar::Scalar;
use rand::{Rng, SeedableRng};

fn check_len(grid: &Grid, len: usize) -> Result<()> {
    if len != grid.len() {
        return Err(Error::Shape {
            expected: vec![grid.len()],
            got: vec![len],
        });
    }
    Ok(())
}

/// A field that owns its data.
///
/// ```
/// use fdlab_core::{Field, Grid};
/// let g = Grid::unit(&[8, 4]).unwrap();
/// let f = Field::<f64>::from_fn(&g, |x| x[0] + 10.0 * x[1]);
/// assert_eq!(f.as_slice()[g.index(2, 1, 0)], 2.0 / 8.0 + 10.0 / 4.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Field<T> {
    grid: Grid,
    data: Vec<T>,
}

/// A borrowed, read-only field.
#[derive(Debug, Clone, Copy)]
pub struct FieldView<'a, T> {
    grid: &'a Grid,
    data: &'a [T],
}

/// A borrowed, writable field.
#[derive(Debug)]
pub struct FieldViewMut<'a, T> {
    grid: &'a Grid,
    data: &'a mut [T],
}

impl<T: Scalar> Field<T> {
    /// A field of zeros.
    pub fn zeros(grid: &Grid) -> Field<T> {
        Field::filled(grid, T::zero())
    }

    /// A field with every point `value`.
    pub fn filled(grid: &Grid, value: T) -> Field<T> {
        Field {
            grid: grid.clone(),
            data: vec![value; grid.len()],
        }
    }

    /// A field of NaN: what outputs are poisoned with before a kernel writes them.
    pub fn nan(grid: &Grid) -> Field<T> {
        Field::filled(grid, T::nan())
    }

    /// Wraps `data`; it must have `grid.len()` elements.
    pub fn from_vec(grid: &Grid, data: Vec<T>) -> Result<Field<T>> {
        check_len(grid, data.len())?;
        Ok(Field {
            grid: grid.clone(),
            data,
        })
    }

    /// Samples `f` at every point's coordinates (computed in `f64`, then rounded).
    pub fn from_fn(grid: &Grid, f: impl Fn([f64; 3]) -> f64) -> Field<T> {
        let [nx, ny, nz] = grid.shape();
        let mut data = Vec::with_capacity(grid.len());
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    data.push(T::from_f64(f(grid.coords(i, j, k))));
                }
            }
        }
        Field {
            grid: grid.clone(),
            data,
        }
    }

    /// Uniform random values in [-1, 1), reproducible from `seed`.
    pub fn random(grid: &Grid, seed: u64) -> Field<T> {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let data = (0..grid.len())
            .map(|_| T::from_f64(rng.gen_range(-1.0..1.0)))
            .collect();
        Field {
            grid: grid.clone(),
            data,
        }
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The data, x fastest.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The data, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The data, owned.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A read-only view.
    pub fn view(&self) -> FieldView<'_, T> {
        FieldView {
            grid: &self.grid,
            data: &self.data,
        }
    }

    /// A writable view.
    pub fn view_mut(&mut self) -> FieldViewMut<'_, T> {
        FieldViewMut {
            grid: &self.grid,
            data: &mut self.data,
        }
    }

    /// Value at `(i, j, k)`.
    pub fn at(&self, i: usize, j: usize, k: usize) -> T {
        self.data[self.grid.index(i, j, k)]
    }
}

impl<'a, T: Scalar> FieldView<'a, T> {
    /// Views `data` as a field on `grid`; it must have `grid.len()` elements.
    pub fn new(grid: &'a Grid, data: &'a [T]) -> Result<Self> {
        check_len(grid, data.len())?;
        Ok(FieldView { grid, data })
    }

    /// The grid.
    pub fn grid(&self) -> &'a Grid {
        self.grid
    }

    /// The data, x fastest.
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

impl<'a, T: Scalar> FieldViewMut<'a, T> {
    /// Views `data` as a writable field on `grid`; it must have `grid.len()` elements.
    pub fn new(grid: &'a Grid, data: &'a mut [T]) -> Result<Self> {
        check_len(grid, data.len())?;
        Ok(FieldViewMut { grid, data })
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        self.grid
    }

    /// The data, x fastest.
    pub fn as_slice(&self) -> &[T] {
        self.data
    }

    /// The data, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.data
    }

    /// A shorter-lived writable view of the same data.
    pub fn reborrow(&mut self) -> FieldViewMut<'_, T> {
        FieldViewMut {
            grid: self.grid,
            data: self.data,
        }
    }
}
