//! The fast path of the step executor: each update's expression evaluated a box at a time,
//! bottom-up, over contiguous arrays (a stencil's operand once over its box widened by the
//! stencil's reach, then the taps as shifted sums), in chunks of planes run by rayon.
//!
//! Every point gets exactly the operations of the point-by-point reference ([`super::eval`])
//! in the same order (taps summed from zero in tap order, reads outside the grid answered by
//! the boundary), so the two agree bit for bit; the tests hold them to that.

use super::{map, Node};
use fdlab_core::{Boundary, Grid, Region, Scalar};
use rayon::prelude::*;

/// A box of points `lo..hi` (half open) that may reach outside the grid.
#[derive(Debug, Clone, Copy)]
struct Span {
    lo: [i64; 3],
    hi: [i64; 3],
}

impl Span {
    fn extent(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| (self.hi[a] - self.lo[a]).max(0) as usize)
    }

    fn len(&self) -> usize {
        self.extent().iter().product()
    }

    /// Widened by the offsets `below ..= above` of a stencil's taps.
    fn widen(&self, below: [i64; 3], above: [i64; 3]) -> Span {
        Span {
            lo: [0, 1, 2].map(|a| self.lo[a] + below[a]),
            hi: [0, 1, 2].map(|a| self.hi[a] + above[a]),
        }
    }
}

/// A value over a span: one number everywhere (constants, parameters) or one per point.
enum Val {
    Scalar(f64),
    Array(Vec<f64>),
}

/// Field values over `span` shifted by `offset`, reads outside the grid per `bc`.
fn read<T: Scalar>(
    data: &[T],
    offset: [i32; 3],
    nearest: bool,
    span: Span,
    grid: &Grid,
    bc: Boundary,
) -> Vec<f64> {
    let shape = grid.shape();
    let [ex, ey, ez] = span.extent();
    let mut out = Vec::with_capacity(ex * ey * ez);
    let x0 = span.lo[0] + offset[0] as i64;
    let inside_x = x0 >= 0 && x0 + ex as i64 <= shape[0] as i64;
    let xs: Vec<Option<usize>> = if inside_x {
        vec![]
    } else {
        (0..ex as i64)
            .map(|i| map(bc, nearest, x0 + i, shape[0]))
            .collect()
    };
    for k in 0..ez as i64 {
        let kk = map(bc, nearest, span.lo[2] + k + offset[2] as i64, shape[2]);
        for j in 0..ey as i64 {
            let jj = map(bc, nearest, span.lo[1] + j + offset[1] as i64, shape[1]);
            let (Some(jj), Some(kk)) = (jj, kk) else {
                out.extend(std::iter::repeat_n(0.0, ex));
                continue;
            };
            let row = grid.index(0, jj, kk);
            if inside_x {
                let s = row + x0 as usize;
                out.extend(data[s..s + ex].iter().map(|v| v.as_f64()));
            } else {
                out.extend(xs.iter().map(|x| x.map_or(0.0, |x| data[row + x].as_f64())));
            }
        }
    }
    out
}

/// The taps' offset range per axis: `(below, above)`, below ≤ 0 ≤ above.
fn tap_range(taps: &[([i32; 3], f64)]) -> ([i64; 3], [i64; 3]) {
    let mut lo = [0i64; 3];
    let mut hi = [0i64; 3];
    for (o, _) in taps {
        for a in 0..3 {
            lo[a] = lo[a].min(o[a] as i64);
            hi[a] = hi[a].max(o[a] as i64);
        }
    }
    (lo, hi)
}

fn eval<T: Scalar>(n: &Node<'_, T>, span: Span, grid: &Grid, bc: Boundary) -> Val {
    match n {
        Node::Read(data, o, nearest) => Val::Array(read(data, *o, *nearest, span, grid, bc)),
        Node::Const(c) => Val::Scalar(*c),
        Node::Neg(a) => match eval(a, span, grid, bc) {
            Val::Scalar(x) => Val::Scalar(-x),
            Val::Array(mut v) => {
                v.iter_mut().for_each(|x| *x = -*x);
                Val::Array(v)
            }
        },
        Node::Bin(op, a, b) => match (eval(a, span, grid, bc), eval(b, span, grid, bc)) {
            (Val::Scalar(x), Val::Scalar(y)) => Val::Scalar(op.apply(x, y)),
            (Val::Array(mut v), Val::Scalar(y)) => {
                v.iter_mut().for_each(|x| *x = op.apply(*x, y));
                Val::Array(v)
            }
            (Val::Scalar(x), Val::Array(mut v)) => {
                v.iter_mut().for_each(|y| *y = op.apply(x, *y));
                Val::Array(v)
            }
            (Val::Array(mut v), Val::Array(w)) => {
                v.iter_mut()
                    .zip(&w)
                    .for_each(|(x, y)| *x = op.apply(*x, *y));
                Val::Array(v)
            }
        },
        Node::Diff(taps, e) => {
            let (below, above) = tap_range(taps);
            let wide = span.widen(below, above);
            let [wx, wy, _] = wide.extent();
            let inner = match eval(e, wide, grid, bc) {
                Val::Array(v) => v,
                Val::Scalar(c) => vec![c; wide.len()],
            };
            let [ex, ey, ez] = span.extent();
            let mut out = vec![0.0; span.len()];
            for (o, w) in taps {
                // Where point (0, 0, 0) of `span`, shifted by the tap, lies in `wide`.
                let s = [0, 1, 2].map(|a| (o[a] as i64 - below[a]) as usize);
                let mut at = 0;
                for k in 0..ez {
                    for j in 0..ey {
                        let src = s[0] + wx * (s[1] + j + wy * (s[2] + k));
                        let row = &inner[src..src + ex];
                        for (acc, v) in out[at..at + ex].iter_mut().zip(row) {
                            *acc += w * v;
                        }
                        at += ex;
                    }
                }
            }
            Val::Array(out)
        }
    }
}

/// Points a chunk aims at: small enough to stay in cache with its temporaries, and enough
/// chunks to keep every thread busy.
const CHUNK_POINTS: usize = 1 << 15;

/// The value of `node` at every point of `region` (x fastest, then y, then z), computed in
/// chunks of planes (rows in 2-D) along the region's outermost extended axis.
pub(super) fn eval_region<T: Scalar>(
    node: &Node<'_, T>,
    region: Region,
    grid: &Grid,
    bc: Boundary,
) -> Vec<f64> {
    let extent = [0, 1, 2].map(|a| region.hi[a] - region.lo[a]);
    let axis = if extent[2] > 1 { 2 } else { 1 };
    let layer: usize = extent[..axis].iter().product::<usize>().max(1);
    let threads = rayon::current_num_threads().max(1);
    let per = (CHUNK_POINTS / layer)
        .max(1)
        .min(extent[axis].div_ceil(4 * threads).max(1));
    let starts: Vec<usize> = (0..extent[axis]).step_by(per).collect();
    let parts: Vec<Vec<f64>> = starts
        .par_iter()
        .map(|&s| {
            let mut span = Span {
                lo: region.lo.map(|v| v as i64),
                hi: region.hi.map(|v| v as i64),
            };
            span.lo[axis] = (region.lo[axis] + s) as i64;
            span.hi[axis] = (region.lo[axis] + (s + per).min(extent[axis])) as i64;
            match eval(node, span, grid, bc) {
                Val::Array(v) => v,
                Val::Scalar(c) => vec![c; span.len()],
            }
        })
        .collect();
    parts.concat()
}
