//! The leapfrog updates: a fused rayon loop over z-planes, and a plain reference.
//!
//! Neighbours past the last cell wrap on a periodic axis and read the wall (zero tangential E)
//! on a PEC or CPML axis (the CPML's own terms are a separate pass, see [`super::cpml`]); tangential E on the wall at index 0 is set to zero after each E update.

use super::cpml::Layers;
use super::grid::{Boundary, Fields, Grid};
use fdlab_core::Scalar;
use rayon::prelude::*;

/// Index of the next cell along an axis and the weight of its value (0 reads a PEC wall).
fn next<T: Scalar>(i: usize, n: usize, b: Boundary) -> (usize, T) {
    if i + 1 < n {
        (i + 1, T::one())
    } else if b == Boundary::Periodic {
        (0, T::one())
    } else {
        (i, T::zero())
    }
}

/// Index of the previous cell along an axis and its weight (0 where a PEC wall zeroes the result).
fn prev<T: Scalar>(i: usize, n: usize, b: Boundary) -> (usize, T) {
    if i > 0 {
        (i - 1, T::one())
    } else if b == Boundary::Periodic {
        (n - 1, T::one())
    } else {
        (i, T::zero())
    }
}

/// `H −= Δt ∇×E` (μ = 1), one fused pass over all three components.
pub(crate) fn update_h<T: Scalar>(g: &Grid, f: &mut Fields<T>, dt: f64) {
    let [nx, ny, nz] = g.n;
    let [bx, by, bz] = g.boundary;
    let plane = nx * ny;
    let [rx, ry, rz] = g.spacing.map(|d| T::from_f64(dt / d));
    let (ex, ey, ez) = (&f.ex[..], &f.ey[..], &f.ez[..]);
    f.hx.par_chunks_mut(plane)
        .zip(f.hy.par_chunks_mut(plane))
        .zip(f.hz.par_chunks_mut(plane))
        .enumerate()
        .for_each(|(k, ((hx, hy), hz))| {
            let (kp, wk) = next::<T>(k, nz, bz);
            for j in 0..ny {
                let (jp, wj) = next::<T>(j, ny, by);
                let r = k * plane + j * nx;
                let rj = k * plane + jp * nx;
                let rk = kp * plane + j * nx;
                // Cells 0..nx−1 have their x neighbour in the row: the same sums with the
                // weight 1 dropped (exact), over equal-length slices, so the loop vectorises.
                let m = nx - 1;
                let l0 = j * nx;
                let (exr, eyr, ezr) = (&ex[r..r + m], &ey[r..r + m], &ez[r..r + m]);
                let (ey1, ez1) = (&ey[r + 1..r + 1 + m], &ez[r + 1..r + 1 + m]);
                let (exj, ezj) = (&ex[rj..rj + m], &ez[rj..rj + m]);
                let (exk, eyk) = (&ex[rk..rk + m], &ey[rk..rk + m]);
                let (hxr, hyr, hzr) = (
                    &mut hx[l0..l0 + m],
                    &mut hy[l0..l0 + m],
                    &mut hz[l0..l0 + m],
                );
                for i in 0..m {
                    hxr[i] = hxr[i] - (ry * (wj * ezj[i] - ezr[i]) - rz * (wk * eyk[i] - eyr[i]));
                    hyr[i] = hyr[i] - (rz * (wk * exk[i] - exr[i]) - rx * (ez1[i] - ezr[i]));
                    hzr[i] = hzr[i] - (rx * (ey1[i] - eyr[i]) - ry * (wj * exj[i] - exr[i]));
                }
                for i in m..nx {
                    let (ip, wi) = next::<T>(i, nx, bx);
                    let c = r + i;
                    let (exc, eyc, ezc) = (ex[c], ey[c], ez[c]);
                    let l = j * nx + i;
                    hx[l] = hx[l] - (ry * (wj * ez[rj + i] - ezc) - rz * (wk * ey[rk + i] - eyc));
                    hy[l] = hy[l] - (rz * (wk * ex[rk + i] - exc) - rx * (wi * ez[r + ip] - ezc));
                    hz[l] = hz[l] - (rx * (wi * ey[r + ip] - eyc) - ry * (wj * ex[rj + i] - exc));
                }
            }
        });
}

/// `E = ca·E + cb·∇×H` per cell, one fused pass over all three components.
pub(crate) fn update_e<T: Scalar>(g: &Grid, f: &mut Fields<T>, ca: &[T], cb: &[T]) {
    let [nx, ny, nz] = g.n;
    let [bx, by, bz] = g.boundary;
    let plane = nx * ny;
    let [ix, iy, iz] = g.spacing.map(|d| T::from_f64(1.0 / d));
    let (hx, hy, hz) = (&f.hx[..], &f.hy[..], &f.hz[..]);
    let pec = [bx, by, bz].map(|b| b.has_walls());
    f.ex.par_chunks_mut(plane)
        .zip(f.ey.par_chunks_mut(plane))
        .zip(f.ez.par_chunks_mut(plane))
        .enumerate()
        .for_each(|(k, ((ex, ey), ez))| {
            let (km, wk) = prev::<T>(k, nz, bz);
            let wall_z = pec[2] && k == 0;
            for j in 0..ny {
                let (jm, wj) = prev::<T>(j, ny, by);
                let wall_y = pec[1] && j == 0;
                let r = k * plane + j * nx;
                let rj = k * plane + jm * nx;
                let rk = km * plane + j * nx;
                // Cells 1..nx have their −x neighbour in the row and are never on an x wall:
                // the same sums with the weight 1 dropped (exact), over equal-length slices.
                interior_e_row(
                    RowE {
                        h: [&hx[r..r + nx], &hy[r..r + nx], &hz[r..r + nx]],
                        hj: [&hx[rj..rj + nx], &hz[rj..rj + nx]],
                        hk: [&hx[rk..rk + nx], &hy[rk..rk + nx]],
                        ca: &ca[r..r + nx],
                        cb: &cb[r..r + nx],
                        inv: [ix, iy, iz],
                        w: [wj, wk],
                        walls: [wall_y, wall_z],
                    },
                    [
                        &mut ex[j * nx..(j + 1) * nx],
                        &mut ey[j * nx..(j + 1) * nx],
                        &mut ez[j * nx..(j + 1) * nx],
                    ],
                );
                // Cell 0: its −x neighbour wraps or is a PEC wall.
                {
                    let i = 0;
                    let (im, wi) = prev::<T>(i, nx, bx);
                    let wall_x = pec[0] && i == 0;
                    let c = r + i;
                    let (hxc, hyc, hzc) = (hx[c], hy[c], hz[c]);
                    let l = j * nx + i;
                    let curl_x = iy * (hzc - wj * hz[rj + i]) - iz * (hyc - wk * hy[rk + i]);
                    let curl_y = iz * (hxc - wk * hx[rk + i]) - ix * (hzc - wi * hz[r + im]);
                    let curl_z = ix * (hyc - wi * hy[r + im]) - iy * (hxc - wj * hx[rj + i]);
                    let (a, b) = (ca[c], cb[c]);
                    ex[l] = if wall_y || wall_z {
                        T::zero()
                    } else {
                        a * ex[l] + b * curl_x
                    };
                    ey[l] = if wall_x || wall_z {
                        T::zero()
                    } else {
                        a * ey[l] + b * curl_y
                    };
                    ez[l] = if wall_x || wall_y {
                        T::zero()
                    } else {
                        a * ez[l] + b * curl_z
                    };
                }
            }
        });
}

/// What [`interior_e_row`] reads of one row: H in the row, in the row at −y (x and z
/// components) and at −z (x and y), the coefficients, 1/Δ per axis, the −y/−z neighbour
/// weights (0 where a PEC wall zeroes the term) and whether the row lies on a y or z wall.
struct RowE<'a, T> {
    h: [&'a [T]; 3],
    hj: [&'a [T]; 2],
    hk: [&'a [T]; 2],
    ca: &'a [T],
    cb: &'a [T],
    inv: [T; 3],
    w: [T; 2],
    walls: [bool; 2],
}

/// E at cells 1..nx of a row, as the per-point loop computes them there.
fn interior_e_row<T: Scalar>(row: RowE<'_, T>, e: [&mut [T]; 3]) {
    let nx = row.ca.len();
    let m = nx - 1;
    let [hx, hy, hz] = row.h.map(|v| &v[1..nx]);
    let [_, hy0, hz0] = row.h.map(|v| &v[..m]);
    let [hxj, hzj] = row.hj.map(|v| &v[1..nx]);
    let [hxk, hyk] = row.hk.map(|v| &v[1..nx]);
    let (ca, cb) = (&row.ca[1..nx], &row.cb[1..nx]);
    let [ix, iy, iz] = row.inv;
    let [wj, wk] = row.w;
    let [ex, ey, ez] = e;
    let (ex, ey, ez) = (&mut ex[1..nx], &mut ey[1..nx], &mut ez[1..nx]);
    let [wall_y, wall_z] = row.walls;
    for i in 0..m {
        let curl_x = iy * (hz[i] - wj * hzj[i]) - iz * (hy[i] - wk * hyk[i]);
        let curl_y = iz * (hx[i] - wk * hxk[i]) - ix * (hz[i] - hz0[i]);
        let curl_z = ix * (hy[i] - hy0[i]) - iy * (hx[i] - wj * hxj[i]);
        let (a, b) = (ca[i], cb[i]);
        ex[i] = if wall_y || wall_z {
            T::zero()
        } else {
            a * ex[i] + b * curl_x
        };
        ey[i] = if wall_z {
            T::zero()
        } else {
            a * ey[i] + b * curl_y
        };
        ez[i] = if wall_y {
            T::zero()
        } else {
            a * ez[i] + b * curl_z
        };
    }
}

/// The same step written point by point in f64 from the textbook Yee equations, into fresh
/// arrays: the check on [`update_h`] and [`update_e`]. A CPML's layer pass is shared with the
/// fast step (it is already a plain per-point loop), and so is whatever `after_h` adds to H
/// before E reads it (the plane waves' surface corrections).
pub(crate) fn reference_step<T: Scalar>(
    g: &Grid,
    f: &mut Fields<T>,
    dt: f64,
    ca: &[T],
    cb: &[T],
    mut cpml: Option<&mut Layers<T>>,
    after_h: impl FnOnce(&mut Fields<T>),
) {
    let n = g.n;
    let [dx, dy, dz] = g.spacing;
    // A field value at a possibly out-of-range cell: wrapped on a periodic axis, zero past a
    // PEC wall (where only tangential E is ever read).
    let at = |v: &[T], i: isize, j: isize, k: isize| -> f64 {
        let mut p = [i, j, k];
        for a in 0..3 {
            let na = n[a] as isize;
            if p[a] < 0 || p[a] >= na {
                if g.boundary[a].has_walls() {
                    return 0.0;
                }
                p[a] = p[a].rem_euclid(na);
            }
        }
        v[g.index(p.map(|x| x as usize))].as_f64()
    };
    let cells = || {
        (0..n[2]).flat_map(move |k| {
            (0..n[1])
                .flat_map(move |j| (0..n[0]).map(move |i| [i as isize, j as isize, k as isize]))
        })
    };
    let idx = |[i, j, k]: [isize; 3]| g.index([i as usize, j as usize, k as usize]);

    let (mut hx, mut hy, mut hz) = (f.hx.clone(), f.hy.clone(), f.hz.clone());
    for [i, j, k] in cells() {
        let c = idx([i, j, k]);
        let curl_x = (at(&f.ez, i, j + 1, k) - at(&f.ez, i, j, k)) / dy
            - (at(&f.ey, i, j, k + 1) - at(&f.ey, i, j, k)) / dz;
        let curl_y = (at(&f.ex, i, j, k + 1) - at(&f.ex, i, j, k)) / dz
            - (at(&f.ez, i + 1, j, k) - at(&f.ez, i, j, k)) / dx;
        let curl_z = (at(&f.ey, i + 1, j, k) - at(&f.ey, i, j, k)) / dx
            - (at(&f.ex, i, j + 1, k) - at(&f.ex, i, j, k)) / dy;
        hx[c] = T::from_f64(f.hx[c].as_f64() - dt * curl_x);
        hy[c] = T::from_f64(f.hy[c].as_f64() - dt * curl_y);
        hz[c] = T::from_f64(f.hz[c].as_f64() - dt * curl_z);
    }
    (f.hx, f.hy, f.hz) = (hx, hy, hz);
    if let Some(l) = cpml.as_deref_mut() {
        l.correct_h(g, f, dt);
    }
    after_h(f);

    let (mut ex, mut ey, mut ez) = (f.ex.clone(), f.ey.clone(), f.ez.clone());
    let pec = g.boundary.map(|b| b.has_walls());
    for [i, j, k] in cells() {
        let c = idx([i, j, k]);
        let curl_x = (at(&f.hz, i, j, k) - at(&f.hz, i, j - 1, k)) / dy
            - (at(&f.hy, i, j, k) - at(&f.hy, i, j, k - 1)) / dz;
        let curl_y = (at(&f.hx, i, j, k) - at(&f.hx, i, j, k - 1)) / dz
            - (at(&f.hz, i, j, k) - at(&f.hz, i - 1, j, k)) / dx;
        let curl_z = (at(&f.hy, i, j, k) - at(&f.hy, i - 1, j, k)) / dx
            - (at(&f.hx, i, j, k) - at(&f.hx, i, j - 1, k)) / dy;
        let (a, b) = (ca[c].as_f64(), cb[c].as_f64());
        ex[c] = T::from_f64(a * f.ex[c].as_f64() + b * curl_x);
        ey[c] = T::from_f64(a * f.ey[c].as_f64() + b * curl_y);
        ez[c] = T::from_f64(a * f.ez[c].as_f64() + b * curl_z);
        // Tangential E on the walls at index 0.
        let wall = [pec[0] && i == 0, pec[1] && j == 0, pec[2] && k == 0];
        if wall[1] || wall[2] {
            ex[c] = T::zero();
        }
        if wall[0] || wall[2] {
            ey[c] = T::zero();
        }
        if wall[0] || wall[1] {
            ez[c] = T::zero();
        }
    }
    (f.ex, f.ey, f.ez) = (ex, ey, ez);
    if let Some(l) = cpml {
        l.correct_e(g, f, cb);
    }
}
