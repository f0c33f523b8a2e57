//! The CPU steppers' sweep: bands of interior rows computed into a per-thread scratch buffer,
//! then written to the output field with streaming stores.
//!
//! Why a scratch buffer: computing a row as a few passes over slices (the centre, then each
//! neighbour pair) lets the compiler vectorise every pass; the finished band leaves through
//! [`fdlab_cpu::copy::stream_copy`], whose non-temporal stores write whole cache lines without
//! first reading them, so a step moves one read and one write per point rather than the
//! read-for-ownership's extra read. The x halos of each row are set in the scratch (periodic
//! images or zeros), and the y and z halos after the sweep, so that the next step finds every
//! halo filled.

use crate::layout::Layout;
use fdlab_core::Scalar;
use fdlab_cpu::{copy::stream_copy, Par};
use rayon::prelude::*;

/// Rows of one band: about 16 KiB, so that the scratch stays in the L1 cache between being
/// written and being streamed out.
fn band_rows<T>(l: &Layout) -> usize {
    (16 * 1024 / (l.p[0] * std::mem::size_of::<T>())).clamp(1, l.n[1])
}

/// Computes every interior row of `out` with `row(c, dst)`, where `c` is the padded index of
/// the row's first interior point and `dst` its `n[0]` interior values; the row returns its
/// first non-finite value (index within the row, value), if any. Halos of `out` are then
/// filled: periodic images when `periodic`, zeros otherwise. Returns the padded index and value
/// of the first non-finite point, if any.
pub(crate) fn sweep<T, F>(l: &Layout, periodic: bool, out: &mut [T], row: F) -> Option<(usize, f64)>
where
    T: Scalar,
    F: Fn(usize, &mut [T]) -> Option<(usize, f64)> + Sync,
{
    let mut none: [(); 0] = [];
    sweep_with(l, periodic, false, out, &mut none, |c, dst, _| row(c, dst))
}

/// [`sweep`] with two more things: with `keep`, `dst` holds the row's values in `out` on
/// entry (an update in place); and `comp`, a per-point array of the padded layout's length (or
/// empty), whose slice over the row's interior points is passed beside `dst`.
pub(crate) fn sweep_with<T, C, F>(
    l: &Layout,
    periodic: bool,
    keep: bool,
    out: &mut [T],
    comp: &mut [C],
    row: F,
) -> Option<(usize, f64)>
where
    T: Scalar,
    C: Send,
    F: Fn(usize, &mut [T], &mut [C]) -> Option<(usize, f64)> + Sync,
{
    let (r, px, py) = (l.r, l.p[0], l.p[1]);
    let rows = band_rows::<T>(l);
    let bands_per_plane = l.n[1].div_ceil(rows);
    let hz = l.halo(2);
    let has_comp = !comp.is_empty();
    // Each band's padded rows are contiguous in `out` (and `comp`): split both into pieces.
    let mut pieces: Vec<(usize, usize, &mut [T], &mut [C])> = Vec::new();
    let (mut rest, mut rest_c) = (&mut out[..], &mut comp[..]);
    let mut offset = 0;
    for k in 0..l.n[2] {
        for b in 0..bands_per_plane {
            let j0 = b * rows;
            let j1 = (j0 + rows).min(l.n[1]);
            let start = px * ((j0 + l.halo(1)) + py * (k + hz));
            let len = px * (j1 - j0);
            let (_, tail) = rest.split_at_mut(start - offset);
            let (piece, tail) = tail.split_at_mut(len);
            rest = tail;
            let piece_c = if has_comp {
                let (_, tail) = std::mem::take(&mut rest_c).split_at_mut(start - offset);
                let (piece_c, tail) = tail.split_at_mut(len);
                rest_c = tail;
                piece_c
            } else {
                &mut []
            };
            pieces.push((k, j0, piece, piece_c));
            offset = start + len;
        }
    }
    let bad = pieces
        .into_par_iter()
        .map_init(Vec::new, |scratch: &mut Vec<T>, (k, j0, dst, dst_c)| {
            if keep {
                scratch.clear();
                scratch.extend_from_slice(dst);
            } else if scratch.len() != dst.len() {
                // Every element is written below, so the buffer is only grown, never cleared.
                scratch.resize(dst.len(), T::zero());
            }
            let mut bad = None;
            for (jr, srow) in scratch.chunks_exact_mut(px).enumerate() {
                let c = l.idx(0, j0 + jr, k);
                let crow: &mut [C] = if has_comp {
                    &mut dst_c[jr * px + r..jr * px + r + l.n[0]]
                } else {
                    &mut []
                };
                let found = row(c, &mut srow[r..r + l.n[0]], crow);
                if bad.is_none() {
                    bad = found.map(|(i, v)| (c + i, v));
                }
                for h in 0..r {
                    if periodic {
                        srow[h] = srow[h + l.n[0]];
                        srow[r + l.n[0] + h] = srow[r + h];
                    } else {
                        srow[h] = T::zero();
                        srow[r + l.n[0] + h] = T::zero();
                    }
                }
            }
            // Equal lengths by construction, so this cannot fail.
            let _ = stream_copy(scratch, dst, Par::Seq);
            bad
        })
        .collect::<Vec<_>>();
    if periodic {
        fill_periodic_yz(l, out);
    }
    bad.into_iter().flatten().min_by_key(|(i, _)| *i)
}

/// Periodic images of the y halo rows of every interior plane, then of the z halo planes
/// (whole padded planes, so the corners come along). The x halos are already set.
fn fill_periodic_yz<T: Scalar>(l: &Layout, u: &mut [T]) {
    let (r, px, py) = (l.r, l.p[0], l.p[1]);
    let plane = px * py;
    let hz = l.halo(2);
    for k in 0..l.n[2] {
        let base = plane * (k + hz);
        for h in 0..r {
            // Row h mirrors row n1 + h; row r + n1 + h mirrors row r + h.
            u.copy_within(
                base + px * (h + l.n[1])..base + px * (h + l.n[1] + 1),
                base + px * h,
            );
            u.copy_within(
                base + px * (r + h)..base + px * (r + h + 1),
                base + px * (r + l.n[1] + h),
            );
        }
    }
    if l.dim == 3 {
        let nz = l.n[2];
        for h in 0..r {
            u.copy_within(plane * (h + nz)..plane * (h + nz + 1), plane * h);
            u.copy_within(plane * (r + h)..plane * (r + h + 1), plane * (r + nz + h));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep writes each interior point once, in place, and fills halos exactly as the
    /// layout's own periodic fill does.
    #[test]
    fn sweep_fills_interior_and_halos_like_the_layout() {
        for (n, dim, r) in [([7, 5, 4], 3, 2), ([9, 6, 1], 2, 3), ([5, 4, 3], 3, 1)] {
            let l = Layout::new(n, dim, r);
            for periodic in [true, false] {
                let mut out = vec![f64::NAN; l.len()];
                // Each interior point's value is its padded index.
                let bad = sweep(&l, periodic, &mut out, |c, dst: &mut [f64]| {
                    for (i, d) in dst.iter_mut().enumerate() {
                        *d = (c + i) as f64;
                    }
                    None
                });
                assert!(bad.is_none());
                let mut want = vec![0.0; l.len()];
                for k in 0..n[2] {
                    for j in 0..n[1] {
                        for i in 0..n[0] {
                            let c = l.idx(i, j, k);
                            want[c] = c as f64;
                        }
                    }
                }
                if periodic {
                    l.fill_periodic(&mut want);
                    // The sweep never writes z halo rows that lie outside every plane band,
                    // except through the plane copies: every element must now match.
                    assert_eq!(out, want, "{n:?} r {r} periodic");
                } else {
                    // Zero halos on x (set in the scratch); other halo rows are never written.
                    for (idx, (&o, &w)) in out.iter().zip(&want).enumerate() {
                        if !o.is_nan() {
                            assert_eq!(o, w, "{n:?} r {r} at {idx}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_first_bad_point_is_reported() {
        let l = Layout::new([6, 5, 4], 3, 1);
        let mut out = vec![0.0f32; l.len()];
        let bad = sweep(&l, false, &mut out, |c, dst: &mut [f32]| {
            if c >= l.idx(0, 2, 1) {
                dst[3] = f32::INFINITY;
                return Some((3, f64::INFINITY));
            }
            None
        });
        assert_eq!(bad, Some((l.idx(3, 2, 1), f64::INFINITY)));
    }
}
