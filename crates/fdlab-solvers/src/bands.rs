//! The CPU steppers' sweeps over bands of interior rows, in parallel, writing the output
//! field with streaming stores (non-temporal: whole cache lines written without first being
//! read, so a step moves one read and one write per point rather than the read for
//! ownership's extra read). The y and z halos are filled after the sweep, so that the next step
//! finds every halo filled.
//!
//! - [`sweep`]: each row writes itself straight into the output, streaming whole lines as it
//!   computes them, x halos included (the heat step).
//! - [`sweep_with`]: each band is computed into a per-thread scratch buffer (x halos set there),
//!   then streamed out with [`fdlab_cpu::copy::stream_copy`]: computing a row as a few passes
//!   over slices lets the compiler vectorise every pass (the wave step).

use crate::layout::Layout;
use crate::rows::store_fence;
use fdlab_core::Scalar;
use fdlab_cpu::{copy::stream_copy, Par};
use rayon::prelude::*;

/// Rows of one piece of a band of [`sweep_with`]: about 16 KiB, so that the scratch stays in the L1 cache between being
/// written and being streamed out.
fn band_rows<T>(l: &Layout) -> usize {
    rows_of::<T>(l, 16 * 1024)
}

/// Rows of a band of [`sweep`]'s columns: about 128 KiB, so that the three planes' worth of
/// such bands a column reads (below, at and above its rows) stay in the L2 cache. Measured on
/// a 2-core Zen 5 VM, 256³ heat steps: 16 KiB bands 52–63% of the copy (f32), 128 KiB 72–75%;
/// whole planes one after the other did no better than 16 KiB.
fn column_rows<T>(l: &Layout) -> usize {
    rows_of::<T>(l, 128 * 1024)
}

/// Rows of at most about `bytes` bytes of padded rows (at least one), evened out over the
/// plane so that no band is left with a few rows.
fn rows_of<T>(l: &Layout, bytes: usize) -> usize {
    let most = (bytes / (l.p[0] * std::mem::size_of::<T>())).clamp(1, l.n[1]);
    l.n[1].div_ceil(l.n[1].div_ceil(most))
}

/// Computes every interior row of `out` with `row(c, prow)`, where `c` is the padded index of
/// the row's first interior point and `prow` the whole padded row (`p[0]` values): the row
/// writes its interior and its x halos, possibly with streaming stores, and returns its first
/// non-finite value (index within the interior, value), if any. Rows go in bands over rayon's
/// threads; each band ends with a store fence. The y and z halos of `out` are then filled:
/// periodic images when `periodic`, else left alone. Returns the padded index and value of the
/// first non-finite point, if any.
pub(crate) fn sweep<T, F>(l: &Layout, periodic: bool, out: &mut [T], row: F) -> Option<(usize, f64)>
where
    T: Scalar,
    F: Fn(usize, &mut [T]) -> Option<(usize, f64)> + Sync,
{
    let px = l.p[0];
    let mut none: [(); 0] = [];
    let bad = columns(bands(l, column_rows::<T>(l), out, &mut none), l.n[2])
        .into_par_iter()
        .map(|column| {
            let mut bad: Option<(usize, f64)> = None;
            for (k, j0, dst, _) in column {
                for (jr, prow) in dst.chunks_exact_mut(px).enumerate() {
                    let c = l.idx(0, j0 + jr, k);
                    let found = row(c, prow);
                    bad = match (bad, found.map(|(i, v)| (c + i, v))) {
                        (Some(b), Some(f)) => Some(if f.0 < b.0 { f } else { b }),
                        (b, f) => b.or(f),
                    };
                }
            }
            store_fence();
            bad
        })
        .collect::<Vec<_>>();
    if periodic {
        fill_periodic_yz(l, out);
    }
    bad.into_iter().flatten().min_by_key(|(i, _)| *i)
}

/// Runs of planes each plane's `per_plane` bands are cut into, so that the columns number at
/// least four per thread and a whole multiple of the `threads` where `nz` allows: with equal
/// columns, a last round of fewer columns than threads leaves the others idle. (256³ `f32`
/// heat on two threads: three bands a plane in three runs made nine columns, five for one
/// thread and four for the other.)
fn column_runs(per_plane: usize, nz: usize, threads: usize) -> usize {
    let nz = nz.max(1);
    let mut runs = (4 * threads).div_ceil(per_plane.max(1)).clamp(1, nz);
    while runs < nz && !(per_plane * nz.div_ceil(nz.div_ceil(runs))).is_multiple_of(threads) {
        runs += 1;
    }
    runs
}

/// The bands (in memory order, `nz` planes of them) regrouped into columns: each column is
/// one band's rows through a run of consecutive planes, so that a thread marching up a column
/// finds the planes below and at its rows still in cache and reads only the leading plane's
/// from memory. Enough columns for every thread to get several (the planes are cut into runs
/// when a plane has few bands).
#[allow(clippy::type_complexity)]
fn columns<'a, T, C>(
    bands: Vec<(usize, usize, &'a mut [T], &'a mut [C])>,
    nz: usize,
) -> Vec<Vec<(usize, usize, &'a mut [T], &'a mut [C])>> {
    let per_plane = bands.len() / nz.max(1);
    let threads = rayon::current_num_threads().max(1);
    let runs = column_runs(per_plane, nz, threads);
    let run_len = nz.div_ceil(runs);
    let mut cols: Vec<Vec<_>> = (0..per_plane * nz.div_ceil(run_len))
        .map(|_| Vec::new())
        .collect();
    for (i, band) in bands.into_iter().enumerate() {
        let (k, b) = (i / per_plane, i % per_plane);
        cols[(k / run_len) * per_plane + b].push(band);
    }
    cols
}

/// Bands of `rows` interior rows, in order: (z index, first y index, the band's
/// padded rows in `out`, the same part of `comp`, or an empty slice when `comp` is empty).
/// Each band's padded rows are contiguous, so both arrays split into disjoint pieces.
#[allow(clippy::type_complexity)]
fn bands<'a, T, C>(
    l: &Layout,
    rows: usize,
    out: &'a mut [T],
    comp: &'a mut [C],
) -> Vec<(usize, usize, &'a mut [T], &'a mut [C])> {
    let (px, py) = (l.p[0], l.p[1]);
    let bands_per_plane = l.n[1].div_ceil(rows);
    let hz = l.halo(2);
    let has_comp = !comp.is_empty();
    let mut pieces = Vec::new();
    let (mut rest, mut rest_c) = (out, comp);
    let mut offset = 0;
    for k in 0..l.n[2] {
        for b in 0..bands_per_plane {
            let j0 = b * rows;
            let j1 = (j0 + rows).min(l.n[1]);
            let start = px * ((j0 + l.halo(1)) + py * (k + hz));
            let len = px * (j1 - j0);
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - offset);
            let (piece, tail) = tail.split_at_mut(len);
            rest = tail;
            let piece_c: &mut [C] = if has_comp {
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
    pieces
}

/// [`sweep`] with three more things: with `keep`, `dst` holds the row's values in `out` on
/// entry (an update in place); `comp`, a per-point array of the padded layout's length (or
/// empty), whose slice over the row's interior points is passed beside `dst`; and columns of
/// bands of about `column_bytes` of rows (see [`columns`]), each band computed in pieces of
/// [`band_rows`] rows through the scratch buffer. When `column_bytes` covers whole planes the
/// pieces go in memory order instead, split over the threads as they come.
pub(crate) fn sweep_with<T, C, F>(
    l: &Layout,
    periodic: bool,
    keep: bool,
    column_bytes: usize,
    out: &mut [T],
    comp: &mut [C],
    row: F,
) -> Option<(usize, f64)>
where
    T: Scalar,
    C: Send,
    F: Fn(usize, &mut [T], &mut [C]) -> Option<(usize, f64)> + Sync,
{
    let (r, px, n0) = (l.r, l.p[0], l.n[0]);
    let has_comp = !comp.is_empty();
    let sub = band_rows::<T>(l);
    let rows = rows_of::<T>(l, column_bytes).max(sub);
    // Whole planes: the pieces in memory order, split over the threads as they come (each
    // thread gets runs of consecutive planes).
    let cols = if rows >= l.n[1] {
        bands(l, sub, out, comp)
            .into_iter()
            .map(|band| vec![band])
            .collect()
    } else {
        columns(bands(l, rows, out, comp), l.n[2])
    };
    let bad = cols
        .into_par_iter()
        .map_init(Vec::new, |scratch: &mut Vec<T>, column| {
            let mut bad: Option<(usize, f64)> = None;
            for (k, j0, dst, dst_c) in column {
                for (b, piece) in dst.chunks_mut(sub * px).enumerate() {
                    let (start, j0) = (b * sub * px, j0 + b * sub);
                    if keep {
                        scratch.clear();
                        scratch.extend_from_slice(piece);
                    } else if scratch.len() != piece.len() {
                        // Every element is written below, so the buffer is only grown, never
                        // cleared.
                        scratch.resize(piece.len(), T::zero());
                    }
                    for (jr, srow) in scratch.chunks_exact_mut(px).enumerate() {
                        let c = l.idx(0, j0 + jr, k);
                        let crow: &mut [C] = if has_comp {
                            let at = start + jr * px + r;
                            &mut dst_c[at..at + n0]
                        } else {
                            &mut []
                        };
                        let found = row(c, &mut srow[r..r + n0], crow);
                        if bad.is_none() {
                            bad = found.map(|(i, v)| (c + i, v));
                        }
                        for h in 0..r {
                            if periodic {
                                srow[h] = srow[h + n0];
                                srow[r + n0 + h] = srow[r + h];
                            } else {
                                srow[h] = T::zero();
                                srow[r + n0 + h] = T::zero();
                            }
                        }
                    }
                    // Equal lengths by construction, so this cannot fail.
                    let _ = stream_copy(scratch, piece, Par::Seq);
                }
            }
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

    #[test]
    fn columns_come_in_whole_rounds_of_the_threads_where_the_planes_allow() {
        // 256³ f32 heat on two threads: three bands a plane, four runs (twelve columns).
        assert_eq!(column_runs(3, 256, 2), 4);
        // Five bands a plane: two runs already make ten.
        assert_eq!(column_runs(5, 256, 2), 2);
        for (per_plane, nz, threads) in [(3, 256, 2), (7, 100, 4), (1, 64, 3), (2, 9, 4)] {
            let runs = column_runs(per_plane, nz, threads);
            let columns = per_plane * nz.div_ceil(nz.div_ceil(runs));
            assert!(
                columns >= 4 * threads || runs == nz,
                "{per_plane} {nz} {threads}"
            );
            assert!(
                columns % threads == 0 || runs == nz,
                "{per_plane} {nz} {threads}"
            );
        }
        // Too few planes to round up: every plane its own run.
        assert_eq!(column_runs(1, 3, 2), 3);
    }

    /// The sweep writes each interior point once, in place, and fills halos exactly as the
    /// layout's own periodic fill does.
    #[test]
    fn sweep_fills_interior_and_halos_like_the_layout() {
        for (n, dim, r) in [([7, 5, 4], 3, 2), ([9, 6, 1], 2, 3), ([5, 4, 3], 3, 1)] {
            let l = Layout::new(n, dim, r);
            for periodic in [true, false] {
                let mut out = vec![f64::NAN; l.len()];
                // Each interior point's value is its padded index; the row sets its x halos.
                let bad = sweep(&l, periodic, &mut out, |c, prow: &mut [f64]| {
                    let n0 = n[0];
                    for (i, d) in prow[r..r + n0].iter_mut().enumerate() {
                        *d = (c + i) as f64;
                    }
                    for h in 0..r {
                        let image = |i: usize| if periodic { (c + i) as f64 } else { 0.0 };
                        prow[h] = image(n0 - r + h);
                        prow[r + n0 + h] = image(h);
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
                    // Zero halos on x (set by the row); other halo rows are never written.
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
        let bad = sweep(&l, false, &mut out, |c, prow: &mut [f32]| {
            if c >= l.idx(0, 2, 1) {
                prow[1 + 3] = f32::INFINITY;
                return Some((3, f64::INFINITY));
            }
            None
        });
        assert_eq!(bad, Some((l.idx(3, 2, 1), f64::INFINITY)));
    }
}
