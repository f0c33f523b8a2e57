//! Plans the temporally blocked wave pass: the tile for `k` steps per pass and what a
//! schedule's request asks for. The kernel and its design are in fdlab-cuda's
//! `codegen::solver::wave_pass`.

use super::temporal::{Request, Temporal};
pub use fdlab_cuda::codegen::solver::shape::WaveShape;

/// The default tile for `k` steps per pass of radius `r` in `dim` dimensions with
/// `bytes`-byte values: the most output per tile point among tiles 64 or 32 points wide
/// (a warp per row or two) whose block fits the registers; `None` when none fits.
pub fn tile_for_k(dim: usize, r: u32, bytes: usize, k: u32) -> Option<WaveShape> {
    let candidates: Vec<(u32, u32, u32)> = if dim == 3 {
        let mut v = vec![];
        for sx in [64, 32] {
            for sy in [32, 48, 64] {
                for p in [4, 8, 2, 16] {
                    v.push((sx, sy, p));
                }
            }
        }
        v
    } else {
        vec![(256, 1, 1), (512, 1, 1), (1024, 1, 1)]
    };
    let chunk = if dim == 3 { 128 } else { 512 };
    // The most output per tile point among the shapes that fit.
    candidates
        .into_iter()
        .map(|(sx, sy, p)| WaveShape {
            t: Temporal {
                k,
                sx,
                sy,
                p,
                chunk,
            },
            r,
        })
        .filter(|s| s.invalid(dim, bytes).is_none() && s.fits_registers(bytes))
        .rev()
        .max_by(|a, b| {
            let share = |s: &WaveShape| {
                let (ox, oy) = s.out(dim);
                (ox * oy) as f64 / (s.t.sx * s.t.sy) as f64
            };
            share(a).total_cmp(&share(b))
        })
}

/// The shape a wave run uses for `request` (the default is single steps, which are faster:
/// see the module's notes): `None` for single steps. A
/// requested shape that cannot run is an error.
pub fn plan(
    dim: usize,
    r: u32,
    bytes: usize,
    request: Request,
) -> Result<Option<WaveShape>, String> {
    match request {
        Request::Off => Ok(None),
        Request::K(k) => tile_for_k(dim, r, bytes, k)
            .map(Some)
            .ok_or_else(|| format!("no wave tile fits k = {k}, radius {r}, {bytes}-byte values")),
        Request::Shape(t) => {
            let s = WaveShape { t, r };
            match s.invalid(dim, bytes) {
                Some(why) => Err(format!("wave temporal shape {t}: {why}")),
                None => Ok(Some(s)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_tiles_fit_and_leave_output() {
        for dim in [2, 3] {
            for r in 1..=4 {
                // Three steps per pass fit the low orders only (registers).
                for k in 2..=if r <= 2 { 3 } else { 2 } {
                    let s = tile_for_k(dim, r, 4, k).expect("an f32 tile");
                    assert_eq!(s.invalid(dim, 4), None, "{s:?}");
                }
            }
        }
        // The 8th-order 3-D step with two steps per pass: 64 × 32 or taller.
        let s = tile_for_k(3, 4, 4, 2).unwrap();
        assert!(s.out(3).0 >= 48 && s.out(3).1 >= 16, "{s:?}");
        assert_eq!(plan(3, 4, 8, Request::Off), Ok(None));
        let bad = Temporal {
            k: 2,
            sx: 48,
            sy: 32,
            p: 4,
            chunk: 64,
        };
        assert!(plan(3, 4, 4, Request::Shape(bad)).is_err());
    }
}
