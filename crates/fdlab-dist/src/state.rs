//! A split run's state as the whole grid's: each block's interior gathered into one padded
//! array (what a one-process stepper saves), and a whole-grid array cut back into a block.
//!
//! A state part is a padded array of the whole grid, `values` numbers per point (1 for a
//! field, 3 for the CPML's memory variables), x fastest, with zero halos: the halos carry no
//! state (see [`fdlab_solvers::layout::Layout::zero_halos`]). A block's part is the window of
//! the whole grid's padded array around its points: its interior, and halos that are the
//! grid's zero halos at the grid's edges and its neighbours' points elsewhere (which the halo
//! exchange refills before they are read).

use crate::decomp::Subdomain;
use fdlab_solvers::layout::Layout;

/// The numbers of a state part's bytes (little-endian f64, as the steppers save them).
pub(crate) fn decode(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}

/// The bytes of a state part's numbers.
pub(crate) fn encode(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Numbers per point of a padded array of `len` numbers laid out as `l`, or `None` when
/// `len` is not a whole multiple of its points.
pub(crate) fn values_per_point(l: &Layout, len: usize) -> Option<usize> {
    (len > 0 && len.is_multiple_of(l.len())).then(|| len / l.len())
}

/// The interior points of a padded array `data` (`values` numbers per point, laid out as
/// `l`), x fastest.
pub(crate) fn interior(l: &Layout, values: usize, data: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(l.cells() * values);
    for k in 0..l.n[2] {
        for j in 0..l.n[1] {
            let at = l.idx(0, j, k) * values;
            out.extend_from_slice(&data[at..at + l.n[0] * values]);
        }
    }
    out
}

/// Put the interior points of block `sub` (as [`interior`] lists them) into `whole`, the
/// padded array of the whole grid laid out as `g`.
pub(crate) fn place(g: &Layout, values: usize, sub: &Subdomain, block: &[f64], whole: &mut [f64]) {
    let o = sub.offset;
    let row = sub.n[0] * values;
    let mut at = 0;
    for k in 0..sub.n[2] {
        for j in 0..sub.n[1] {
            let to = g.idx(o[0], o[1] + j, o[2] + k) * values;
            whole[to..to + row].copy_from_slice(&block[at..at + row]);
            at += row;
        }
    }
}

/// The window of the whole grid's padded part `whole` (bytes, `values` numbers per point,
/// laid out as `g`) that block `sub`'s padded array (laid out as `l`) covers.
pub(crate) fn window(
    g: &Layout,
    l: &Layout,
    values: usize,
    sub: &Subdomain,
    whole: &[u8],
) -> Vec<u8> {
    // Padded position p of the block is padded position p + offset of the whole grid.
    let o: [usize; 3] = std::array::from_fn(|a| if a < l.dim { sub.offset[a] } else { 0 });
    let point = 8 * values;
    let row = l.p[0] * point;
    let mut out = Vec::with_capacity(l.len() * point);
    for k in 0..l.p[2] {
        for j in 0..l.p[1] {
            let from = (o[0] + g.p[0] * (o[1] + j + g.p[1] * (o[2] + k))) * point;
            out.extend_from_slice(&whole[from..from + row]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decomposition;

    /// Blocks' interiors placed into the whole grid, then windows cut from it, give each
    /// block its points back, with zero halos at the grid's edges and its neighbours'
    /// points elsewhere.
    #[test]
    fn places_and_windows_are_inverse() {
        for (shape, dim, dims) in [([13, 7, 1], 2, [3, 2, 1]), ([9, 5, 7], 3, [2, 1, 3])] {
            let r = 2;
            let d = Decomposition::new(shape, dim, 6, Some(dims), [false; 3], r).unwrap();
            let g = Layout::new(d.shape(), dim, r);
            for values in [1, 3] {
                let mut whole = vec![0.0; g.len() * values];
                let mut want = whole.clone();
                for (i, w) in want.chunks_exact_mut(values).enumerate() {
                    let p = g.point(i);
                    let inside = (0..3).all(|a| p[a] < g.n[a]);
                    if inside && g.idx(p[0], p[1], p[2]) == i {
                        for (v, x) in w.iter_mut().enumerate() {
                            *x = (1 + i * values + v) as f64;
                        }
                    }
                }
                let bytes = encode(&want);
                for rank in 0..d.ranks() {
                    let s = d.subdomain(rank);
                    let l = Layout::new(s.n, dim, r);
                    let block = decode(&window(&g, &l, values, &s, &bytes));
                    assert_eq!(block.len(), l.len() * values);
                    // Every halo point is the whole grid's point there, or zero off the grid.
                    for (i, v) in block.chunks_exact(values).enumerate() {
                        let (x, y, z) = (i % l.p[0], (i / l.p[0]) % l.p[1], i / (l.p[0] * l.p[1]));
                        let gi = x
                            + s.offset[0]
                            + g.p[0]
                                * (y + s.offset[1]
                                    + g.p[1] * (z + if dim == 3 { s.offset[2] } else { 0 }));
                        assert_eq!(v, &want[gi * values..(gi + 1) * values]);
                    }
                    place(&g, values, &s, &interior(&l, values, &block), &mut whole);
                }
                assert_eq!(whole, want);
            }
        }
    }
}
