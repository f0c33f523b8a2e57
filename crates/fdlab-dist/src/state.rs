//! A split run's state as the whole grid's: each block's interior gathered into one padded
//! array (what a one-process stepper saves), and a whole-grid array cut back into a block.
//!
//! A state part is a padded array of the whole grid, `values` numbers per point (1 for a
//! field, 3 for the CPML's memory variables), x fastest, with zero halos: the halos carry no
//! state (see [`fdlab_solvers::layout::Layout::zero_halos`]). A block's part is the window of
//! the whole grid's padded array around its points: its interior, and halos that are the
//! grid's zero halos at the grid's edges and its neighbours' points elsewhere (which the halo
//! exchange refills before they are read). A GPU slab's padded array holds its halo planes
//! as grid planes: [`block_of_slab`] and [`slab_of_whole`] move between the two.

use crate::decomp::Subdomain;
use crate::slab::Slab;
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

/// Bytes of one padded plane across the last axis of `l`, `values` numbers per point.
fn plane_bytes(l: &Layout, values: usize) -> usize {
    8 * values * l.p[..l.dim - 1].iter().product::<usize>()
}

/// A GPU slab's padded part `bytes` (`values` numbers per point, laid out as `s`, the slab's
/// array with its halo planes) as its block's padded part: the block's padded planes are the
/// slab's from its first halo plane's position on (padded plane `P` of the block is padded
/// plane `P + halo_below` of the slab), so that the block's interior is the slab's owned
/// planes.
pub(crate) fn block_of_slab(
    s: &Layout,
    halo_below: usize,
    owned: usize,
    values: usize,
    bytes: &[u8],
) -> Vec<u8> {
    let plane = plane_bytes(s, values);
    bytes[halo_below * plane..(halo_below + owned + 2 * s.r) * plane].to_vec()
}

/// The whole grid's padded part `whole` (`values` numbers per point, laid out as `g`) cut to
/// the planes of `slab`, as the slab's padded array: every plane of the slab, halo planes
/// included, is the whole grid's plane there (wrapping across a periodic axis), and the
/// slab's own padding is zero.
pub(crate) fn slab_of_whole(g: &Layout, slab: &Slab, values: usize, whole: &[u8]) -> Vec<u8> {
    let plane = plane_bytes(g, values);
    let r = g.r;
    let mut out = vec![0u8; (slab.planes() + 2 * r) * plane];
    for p in 0..slab.planes() {
        let from = (slab.global_plane(p) + r) * plane;
        let to = (p + r) * plane;
        out[to..to + plane].copy_from_slice(&whole[from..from + plane]);
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

    /// A GPU slab's planes cut from the whole grid's padded part hold the whole grid's
    /// planes, halo planes included (wrapping across a periodic axis), and its block's part
    /// cut back from them holds the block's points as its interior.
    #[test]
    fn slabs_cut_from_the_whole_grid_and_back() {
        for (shape, dim, ranks, periodic) in [
            ([5, 4, 11], 3, 3, true),
            ([7, 9, 1], 2, 2, false),
            ([6, 13, 1], 2, 3, true),
        ] {
            let r = 2;
            let mut dims = [1; 3];
            dims[dim - 1] = ranks;
            let d = Decomposition::new(shape, dim, ranks, Some(dims), [periodic; 3], r).unwrap();
            let g = Layout::new(shape, dim, r);
            for values in [1, 3] {
                let grid: Vec<f64> = (0..g.cells() * values).map(|i| 1.0 + i as f64).collect();
                let mut whole = vec![0.0; g.len() * values];
                let all = Subdomain {
                    offset: [0; 3],
                    n: shape,
                    ..d.subdomain(0)
                };
                place(&g, values, &all, &grid, &mut whole);
                let bytes = encode(&whole);
                for rank in 0..ranks {
                    let slab = Slab::new(&d, rank, dim, r).unwrap();
                    let sl = Layout::new(slab.shape(shape), dim, r);
                    let cut = slab_of_whole(&g, &slab, values, &bytes);
                    assert_eq!(cut.len(), sl.len() * values * 8);
                    // Each slab plane's interior is the whole grid's plane there.
                    let inner = interior(&sl, values, &decode(&cut));
                    let plane = inner.len() / slab.planes();
                    for p in 0..slab.planes() {
                        let at = slab.global_plane(p) * plane;
                        assert_eq!(&inner[p * plane..(p + 1) * plane], &grid[at..at + plane]);
                    }
                    let sub = d.subdomain(rank);
                    let bl = Layout::new(sub.n, dim, r);
                    let block = block_of_slab(&sl, slab.halo[0], slab.owned, values, &cut);
                    let want = decode(&window(&g, &bl, values, &sub, &bytes));
                    assert_eq!(
                        interior(&bl, values, &decode(&block)),
                        interior(&bl, values, &want)
                    );
                }
            }
        }
    }
}
