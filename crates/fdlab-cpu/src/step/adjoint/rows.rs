//! One update transposed a row at a time: each term's coefficient product over a row of the
//! region, then a shifted add into the adjoint of the field it reads (contiguous where the
//! row's reads stay inside the grid, mapped through the boundary point by point elsewhere).

use super::super::map;
use super::CompiledUpdate;
use fdlab_core::{Boundary, Grid, Region, Scalar};

/// Where the points of a row, shifted by an offset, land.
enum Row {
    /// A contiguous run starting at this flat index.
    Contig(usize),
    /// Point by point; `None` outside the grid (a zero halo).
    Mapped(Vec<Option<usize>>),
}

impl Row {
    /// The `len` points from `start` along x, shifted by `o`, under `bc` (`nearest`: clamped
    /// into the grid).
    fn new(
        bc: Boundary,
        nearest: bool,
        start: [usize; 3],
        len: usize,
        o: [i32; 3],
        grid: &Grid,
    ) -> Row {
        let shape = grid.shape();
        let at = |a: usize| map(bc, nearest, start[a] as i64 + o[a] as i64, shape[a]);
        let x0 = start[0] as i64 + o[0] as i64;
        match (at(1), at(2)) {
            (Some(y), Some(z)) if x0 >= 0 && x0 + len as i64 <= shape[0] as i64 => {
                Row::Contig(grid.index(x0 as usize, y, z))
            }
            (Some(y), Some(z)) => Row::Mapped(
                (0..len as i64)
                    .map(|i| map(bc, nearest, x0 + i, shape[0]).map(|x| grid.index(x, y, z)))
                    .collect(),
            ),
            _ => Row::Mapped(vec![None; len]),
        }
    }

    /// `out[i] = data[point i]` (0 outside the grid).
    fn gather<T: Scalar>(&self, data: &[T], out: &mut [f64]) {
        match self {
            Row::Contig(s) => {
                let n = out.len();
                for (o, v) in out.iter_mut().zip(&data[*s..*s + n]) {
                    *o = v.as_f64();
                }
            }
            Row::Mapped(ix) => {
                for (o, i) in out.iter_mut().zip(ix) {
                    *o = i.map_or(0.0, |i| data[i].as_f64());
                }
            }
        }
    }

    /// `data[point i] += vals[i]` (dropped outside the grid), in order of `i`.
    fn add(&self, data: &mut [f64], vals: &[f64]) {
        match self {
            Row::Contig(s) => {
                for (d, v) in data[*s..*s + vals.len()].iter_mut().zip(vals) {
                    *d += v;
                }
            }
            Row::Mapped(ix) => {
                for (i, v) in ix.iter().zip(vals) {
                    if let Some(i) = i {
                        data[*i] += v;
                    }
                }
            }
        }
    }
}

/// What a transposed update reads and accumulates besides the adjoint buffers.
pub(super) struct Inputs<'a, T> {
    pub grid: &'a Grid,
    pub bc: Boundary,
    /// Coefficient fields, in declaration order among coefficients.
    pub coefs: &'a [&'a [T]],
    /// The forward buffers as the update found them (for gradients), by buffer number.
    pub stage: Option<&'a [&'a [T]]>,
}

/// Transposes update `cu` (writing buffer `ty` on `region`): see the parent module. Adds
/// parameter derivatives to `dparams` (affine terms only without `stage`) and, with
/// `gradient`, coefficient derivatives.
pub(super) fn transpose_update<T: Scalar>(
    cu: &CompiledUpdate,
    region: Region,
    ty: usize,
    inp: &Inputs<'_, T>,
    adj: &mut [Vec<f64>],
    dparams: &mut [f64],
    mut gradient: Option<&mut [Vec<f64>]>,
) {
    let grid = inp.grid;
    let ex = region.hi[0].saturating_sub(region.lo[0]);
    if ex == 0 {
        return;
    }
    let nearest = inp.bc == Boundary::Dirichlet;
    let mut t = vec![0.0; ex];
    let (mut cprod, mut val, mut x) = (vec![0.0; ex], vec![0.0; ex], vec![0.0; ex]);
    // Per distinct coefficient read: where it lands and its values along the row.
    let mut rows: Vec<Row> = Vec::with_capacity(cu.reads.len());
    let mut raw = vec![vec![0.0; ex]; cu.reads.len()];
    for k in region.lo[2]..region.hi[2] {
        for j in region.lo[1]..region.hi[1] {
            let start = [region.lo[0], j, k];
            let base = grid.index(start[0], j, k);
            t.copy_from_slice(&adj[ty][base..base + ex]);
            adj[ty][base..base + ex].fill(0.0);
            if t.iter().all(|v| *v == 0.0) {
                continue;
            }
            rows.clear();
            for (&(c, o), out) in cu.reads.iter().zip(&mut raw) {
                let r = Row::new(inp.bc, nearest, start, ex, o, grid);
                r.gather(inp.coefs[c], out);
                rows.push(r);
            }
            for term in &cu.terms {
                // The product of the coefficient factors (parameters are in `scale`).
                match term.coefs[..] {
                    [] => cprod.fill(1.0),
                    [(a, 1)] => cprod.copy_from_slice(&raw[a]),
                    [(a, 1), (b, 1)] => {
                        for ((p, u), v) in cprod.iter_mut().zip(&raw[a]).zip(&raw[b]) {
                            *p = u * v;
                        }
                    }
                    _ => {
                        for (i, p) in cprod.iter_mut().enumerate() {
                            *p = (term.coefs.iter())
                                .fold(1.0, |acc, &(m, power)| acc * super::pow(raw[m][i], power));
                        }
                    }
                }
                match term.read {
                    Some((b, o)) => {
                        let r = Row::new(inp.bc, false, start, ex, o, grid);
                        for ((v, p), t) in val.iter_mut().zip(&cprod).zip(&t) {
                            *v = term.scale * p * t;
                        }
                        r.add(&mut adj[b], &val);
                        match inp.stage {
                            Some(s) => r.gather(s[b], &mut x),
                            None => continue,
                        }
                    }
                    None => x.fill(1.0),
                }
                if !term.dscale.is_empty() {
                    let sum: f64 = (cprod.iter().zip(&x).zip(&t))
                        .map(|((p, x), t)| p * x * t)
                        .sum();
                    for &(q, ds) in &term.dscale {
                        dparams[q] += ds * sum;
                    }
                }
                let Some(g) = gradient.as_deref_mut() else {
                    continue;
                };
                // x · t · scale, then times the derivative of the coefficient product.
                for (x, t) in x.iter_mut().zip(&t) {
                    *x *= t * term.scale;
                }
                for (f, &(m, power)) in term.coefs.iter().enumerate() {
                    match term.coefs[..] {
                        [(_, 1)] => val.copy_from_slice(&x),
                        [(a, 1), (b, 1)] => {
                            let other = if f == 0 { &raw[b] } else { &raw[a] };
                            for ((v, x), o) in val.iter_mut().zip(&x).zip(other) {
                                *v = x * o;
                            }
                        }
                        _ => {
                            for (i, v) in val.iter_mut().enumerate() {
                                let others = (term.coefs.iter().enumerate())
                                    .filter(|&(h, _)| h != f)
                                    .fold(1.0, |acc, (_, &(n, pw))| {
                                        acc * super::pow(raw[n][i], pw)
                                    });
                                *v = others
                                    * f64::from(power)
                                    * super::pow(raw[m][i], power - 1)
                                    * x[i];
                            }
                        }
                    }
                    rows[m].add(&mut g[cu.reads[m].0], &val);
                }
            }
        }
    }
}
