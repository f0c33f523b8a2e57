//! A subdomain as a GPU stepper holds it: the block plus its halo planes along the march axis
//! (z in 3-D, y in 2-D), stored as ordinary grid planes of one contiguous array.
//!
//! The GPU step kernels take whole grids, so a block split along the march axis is handed to
//! them as a slightly taller grid: `r` extra planes on each side that has a neighbouring rank.
//! The kernel then computes those halo planes too (from whatever lies beyond them: zeros or
//! the slab's own far side), which is wrong there and harmless, because every step ends with
//! the exchange writing the neighbours' planes over them. Every plane the block owns reads
//! only owned or exchanged planes, so it gets exactly the single-grid result. Halo planes are
//! contiguous in memory, so an exchange is four plain copies of `r` planes, with no packing.

use crate::decomp::{Decomposition, Neighbour, Subdomain};
use crate::error::{Error, Result};
use fdlab_solvers::physics::CpmlProfile;
use fdlab_solvers::{HeatSetup, WaveBoundary, WaveSetup};
use std::ops::Range;

/// One rank's slab: where its planes come from and which ranges of its array are exchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slab {
    /// The march axis (2 in 3-D, 1 in 2-D).
    pub axis: usize,
    /// Values per plane (`nx·ny` in 3-D, `nx` in 2-D).
    pub plane: usize,
    /// The stencil radius: planes exchanged per face.
    pub r: usize,
    /// Halo planes below and above the block (`r` where a rank is across, 0 at an edge).
    pub halo: [usize; 2],
    /// Planes the block owns.
    pub owned: usize,
    /// Global index of the block's first plane.
    pub offset: usize,
    /// Planes along the march axis of the whole grid.
    pub global: usize,
    /// The ranks across the lower and upper faces, if any.
    pub neighbours: [Option<usize>; 2],
}

impl Slab {
    /// The slab of `rank` in `d`, which must split the march axis only.
    pub fn new(d: &Decomposition, rank: usize, dim: usize, r: usize) -> Result<Slab> {
        let axis = dim - 1;
        let dims = d.dims();
        if (0..3).any(|a| a != axis && dims[a] != 1) {
            return Err(Error::Unsupported(format!(
                "a GPU run split as {:?}: the GPU steppers split the grid along its last axis \
                 only (give --process-grid {})",
                &dims[..dim],
                split_grid(dim, d.ranks())
            )));
        }
        let sub: &Subdomain = &d.subdomain(rank);
        let side = |i: usize| match sub.neighbours[axis][i] {
            Neighbour::Rank(q) => Some(q),
            Neighbour::Edge => None,
        };
        let neighbours = [side(0), side(1)];
        let shape = d.shape();
        Ok(Slab {
            axis,
            plane: shape[..axis].iter().product(),
            r,
            halo: neighbours.map(|q| if q.is_some() { r } else { 0 }),
            owned: sub.n[axis],
            offset: sub.offset[axis],
            global: shape[axis],
            neighbours,
        })
    }

    /// Planes in the slab's array.
    pub fn planes(&self) -> usize {
        self.halo[0] + self.owned + self.halo[1]
    }

    /// The global plane that slab plane `p` holds (wrapping across a periodic axis).
    pub fn global_plane(&self, p: usize) -> usize {
        (self.offset + self.global + p - self.halo[0]) % self.global
    }

    /// The owned values, as a range of the slab's array.
    pub fn owned_range(&self) -> Range<usize> {
        self.planes_range(self.halo[0], self.owned)
    }

    /// The values sent across face `side` (0 below, 1 above): the `r` owned planes next to it.
    pub fn send_range(&self, side: usize) -> Range<usize> {
        let first = if side == 0 {
            self.halo[0]
        } else {
            self.halo[0] + self.owned - self.r
        };
        self.planes_range(first, self.r)
    }

    /// The halo planes across face `side`.
    pub fn halo_range(&self, side: usize) -> Range<usize> {
        let first = if side == 0 {
            0
        } else {
            self.halo[0] + self.owned
        };
        self.planes_range(first, self.halo[side])
    }

    fn planes_range(&self, first: usize, count: usize) -> Range<usize> {
        first * self.plane..(first + count) * self.plane
    }

    /// A per-point array of the whole grid (x fastest) cut to the slab's planes; a one-value
    /// (constant) array stays as it is.
    pub fn cut(&self, data: &[f64]) -> Vec<f64> {
        if data.len() == 1 {
            return data.to_vec();
        }
        let mut out = Vec::with_capacity(self.planes() * self.plane);
        for p in 0..self.planes() {
            let g = self.global_plane(p) * self.plane;
            out.extend_from_slice(&data[g..g + self.plane]);
        }
        out
    }

    /// The slab's grid sizes for a whole grid of `n` points.
    pub fn shape(&self, n: [usize; 3]) -> [usize; 3] {
        let mut s = n;
        s[self.axis] = self.planes();
        s
    }

    /// A global cell in the slab's coordinates, if the block owns it.
    pub fn local(&self, cell: [usize; 3]) -> Option<[usize; 3]> {
        let c = cell[self.axis];
        (c >= self.offset && c < self.offset + self.owned).then(|| {
            let mut l = cell;
            l[self.axis] = c - self.offset + self.halo[0];
            l
        })
    }

    /// Whether a cell of the slab's array lies in the planes sent to a neighbour.
    pub fn on_edge(&self, cell: [usize; 3]) -> bool {
        let p = cell[self.axis];
        let low = self.halo[0];
        let high = low + self.owned;
        (self.neighbours[0].is_some() && p < low + self.r)
            || (self.neighbours[1].is_some() && p + self.r >= high)
    }

    /// A cell of the slab's array in the block's own coordinates (a halo plane's cell is
    /// reported as the nearest owned plane's).
    pub fn to_block(&self, cell: [usize; 3]) -> [usize; 3] {
        let mut b = cell;
        b[self.axis] = cell[self.axis]
            .saturating_sub(self.halo[0])
            .min(self.owned - 1);
        b
    }
}

/// The process grid that splits `ranks` along the last of `dim` axes, as `--process-grid`
/// takes it (`1x1x4`).
pub fn split_grid(dim: usize, ranks: usize) -> String {
    let mut parts = vec!["1".to_string(); dim];
    parts[dim - 1] = ranks.to_string();
    parts.join("x")
}

/// Whether `setup` can run as GPU slabs: heat, and constant-density waves (CPML included).
pub fn supported(setup: &fdlab_solvers::setup::Setup) -> Result<()> {
    use fdlab_solvers::setup::Setup;
    match setup {
        Setup::Heat(_) => Ok(()),
        Setup::Wave(w) if w.density.is_some() => Err(crate::error::Error::density_refused()),
        Setup::Wave(_) => Ok(()),
        _ => Err(Error::Unsupported(
            "FDTD cases (only heat and wave are decomposed)".into(),
        )),
    }
}

/// The heat setup of `slab`'s planes (halo planes included; their boundary flag is the whole
/// grid's, which matters only at the grid's edges).
pub fn heat(s: &HeatSetup, slab: &Slab) -> HeatSetup {
    HeatSetup {
        n: slab.shape(s.n),
        kappa: slab.cut(&s.kappa),
        initial: slab.cut(&s.initial),
        ..s.clone()
    }
}

/// The wave setup of `slab`'s planes: material and fields with the halo planes, and the
/// sources and receivers the block owns (receivers in their global order). Its CPML profiles,
/// if any, are not the right ones: a stepper of it takes [`cpml_profiles`] instead.
pub fn wave(s: &WaveSetup, slab: &Slab) -> Result<WaveSetup> {
    if s.density.is_some() {
        return Err(crate::error::Error::density_refused());
    }
    crate::part::refuse_spread_receivers(s)?;
    Ok(WaveSetup {
        n: slab.shape(s.n),
        velocity: slab.cut(&s.velocity),
        initial: slab.cut(&s.initial),
        previous: s.previous.as_ref().map(|p| slab.cut(p)),
        sources: s
            .sources
            .iter()
            .filter_map(|src| crate::part::local_source(src, |c| slab.local(c)))
            .collect(),
        // Checked above: every receiver is its cell alone.
        receiver_spread: vec![],
        receivers: s.receivers.iter().filter_map(|&c| slab.local(c)).collect(),
        ..s.clone()
    })
}

/// The whole grid's CPML profiles cut to `slab`'s planes, halo planes included (the layers
/// lie at the whole grid's edges, and their damping follows its largest velocity), or `None`
/// without a CPML.
pub fn cpml_profiles(s: &WaveSetup, slab: &Slab) -> Result<Option<[CpmlProfile; 3]>> {
    if !matches!(s.boundary, WaveBoundary::Cpml { .. }) {
        return Ok(None);
    }
    let Some(mut profiles) = s.stencil_coefficients()?.cpml else {
        return Ok(None);
    };
    let p = &profiles[slab.axis];
    let planes = (0..slab.planes()).map(|q| slab.global_plane(q));
    let cut = CpmlProfile {
        a: planes.clone().map(|g| p.a[g]).collect(),
        b: planes.clone().map(|g| p.b[g]).collect(),
        active: planes.map(|g| p.active[g]).collect(),
    };
    profiles[slab.axis] = cut;
    Ok(Some(profiles))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slabs(n: [usize; 3], dim: usize, ranks: usize, periodic: bool, r: usize) -> Vec<Slab> {
        let mut dims = [1; 3];
        dims[dim - 1] = ranks;
        let d = Decomposition::new(n, dim, ranks, Some(dims), [periodic; 3], r).unwrap();
        (0..ranks)
            .map(|q| Slab::new(&d, q, dim, r).unwrap())
            .collect()
    }

    #[test]
    fn periodic_slabs_wrap_and_exchange_r_planes() {
        let s = slabs([4, 3, 10], 3, 3, true, 2);
        assert_eq!(s.iter().map(|x| x.owned).sum::<usize>(), 10);
        for (q, x) in s.iter().enumerate() {
            assert_eq!(x.halo, [2, 2]);
            assert_eq!(x.neighbours, [Some((q + 2) % 3), Some((q + 1) % 3)]);
            assert_eq!(x.planes(), x.owned + 4);
            assert_eq!(x.plane, 12);
            // The first halo plane is the global plane two below the block's first.
            assert_eq!(x.global_plane(0), (x.offset + 10 - 2) % 10);
            assert_eq!(x.send_range(0).len(), 24);
            assert_eq!(x.halo_range(1).end, x.planes() * 12);
        }
        // What rank q sends up lands in rank q+1's lower halo: the same global planes.
        for q in 0..3 {
            let (a, b) = (&s[q], &s[(q + 1) % 3]);
            let sent = a.send_range(1).start / 12;
            let got = b.halo_range(0).start / 12;
            assert_eq!(a.global_plane(sent), b.global_plane(got));
        }
    }

    #[test]
    fn edges_have_no_halo_planes() {
        let s = slabs([5, 9, 1], 2, 2, false, 1);
        assert_eq!(s[0].halo, [0, 1]);
        assert_eq!(s[1].halo, [1, 0]);
        assert_eq!(s[0].neighbours, [None, Some(1)]);
        assert_eq!(s[0].plane, 5);
        assert_eq!(s[0].halo_range(0), 0..0);
    }

    #[test]
    fn cut_takes_the_slab_planes_of_the_whole_grid() {
        let n = [2, 2, 6];
        let s = slabs(n, 3, 2, true, 1);
        let data: Vec<f64> = (0..24).map(f64::from).collect();
        let c = s[0].cut(&data);
        // Planes 5 (wrapped), 0, 1, 2, 3.
        let planes: Vec<f64> = c.chunks(4).map(|p| p[0] / 4.0).collect();
        assert_eq!(planes, vec![5.0, 0.0, 1.0, 2.0, 3.0]);
        assert_eq!(s[0].cut(&[7.0]), vec![7.0]);
    }

    #[test]
    fn cells_map_between_global_slab_and_block() {
        let s = slabs([3, 3, 8], 3, 2, true, 2);
        assert_eq!(s[1].local([1, 2, 5]), Some([1, 2, 3]));
        assert_eq!(s[1].local([1, 2, 1]), None);
        assert_eq!(s[1].to_block([1, 2, 3]), [1, 2, 1]);
        assert_eq!(s[1].to_block([0, 0, 0]), [0, 0, 0]);
    }

    #[test]
    fn splits_across_other_axes_are_refused() {
        let d = Decomposition::new([8, 8, 8], 3, 2, Some([2, 1, 1]), [true; 3], 1).unwrap();
        let e = Slab::new(&d, 0, 3, 1).unwrap_err().to_string();
        assert!(e.contains("1x1x2"), "{e}");
    }

    /// A slab's CPML profiles are the whole grid's at its planes, halo planes included, and
    /// its kernels generate however thin it is against the layers.
    #[test]
    fn cpml_slabs_take_the_whole_grids_profiles() {
        use fdlab_solvers::setup::Setup;
        let cpml = WaveBoundary::Cpml {
            thickness: 10,
            f0: 0.0,
        };
        for (n, dim, order, ranks) in [([23, 12, 1], 2, 2, 3), ([12, 10, 16], 3, 4, 3)] {
            let Setup::Wave(w) = crate::cases::wave(n, dim, order, cpml) else {
                unreachable!("a wave case")
            };
            let whole = w.stencil_coefficients().unwrap().cpml.unwrap();
            for s in slabs(n, dim, ranks, false, order / 2) {
                let p = cpml_profiles(&w, &s).unwrap().unwrap();
                let a = s.axis;
                assert_eq!(p[a].a.len(), s.planes());
                for q in 0..s.planes() {
                    let g = s.global_plane(q);
                    assert_eq!(p[a].a[q].to_bits(), whole[a].a[g].to_bits());
                    assert_eq!(p[a].b[q].to_bits(), whole[a].b[g].to_bits());
                    assert_eq!(p[a].active[q], whole[a].active[g]);
                }
                assert_eq!(p[0].a, whole[0].a);
                let part = Setup::Wave(wave(&w, &s).unwrap());
                for precision in [fdlab_core::Precision::F32, fdlab_core::Precision::F64] {
                    let k = fdlab_solvers::gpu::kernel_sources(&part, precision).unwrap();
                    assert!(k.iter().any(|k| k.name.contains("wave_cpml")));
                }
            }
        }
    }
}
