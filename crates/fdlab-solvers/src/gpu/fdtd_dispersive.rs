//! Drude, Lorentz and Debye cells of the FDTD stepper on the device: per E component, the
//! cells' indices, their coefficients and their currents or polarizations (f64, as on the
//! CPU), advanced and applied by small kernels around the step.

use super::Gpu;
use crate::error::{Error, Result};
use crate::fdtd::drude::BranchView;
use cudarc::driver::{CudaSlice, LaunchConfig};
use fdlab_cuda::Kernel;
use std::sync::Arc;

/// The Drude cells of each E component on the device, and their two kernels. Each
/// component's currents lie in one box of cells that holds every Drude cell ([`DrudeBox`];
/// zero at the box's other cells): the list kernels reach a cell's `J` through its slot,
/// the two-step pass through its position.
pub(super) struct DrudeCells {
    pub(super) advance: Arc<Kernel>,
    pub(super) apply: Arc<Kernel>,
    /// Per E component.
    pub(super) branches: Vec<DrudeBranch>,
    /// `(kJ, βJ)` of each distinct medium, flattened (one unused pair when there are none).
    pub(super) kb: CudaSlice<f64>,
    /// Distinct media in `kb`.
    pub(super) media: usize,
    /// Where `J` lies.
    pub(super) bounds: DrudeBox,
}

/// One E component's Drude cells on the device: storage cells, each cell's slot in the box
/// and its medium (an index into `kb`), `J` (f64, the box's cells) and how many cells (the
/// lists hold one unused element when there are none); the slots and media on the host too.
pub(super) struct DrudeBranch {
    pub(super) cells: CudaSlice<u32>,
    pub(super) slot: CudaSlice<u32>,
    pub(super) medium: CudaSlice<u16>,
    pub(super) j: CudaSlice<f64>,
    pub(super) n: i32,
    slots: Vec<u32>,
    media: Vec<u16>,
}

/// The box of cells `[lo, lo + n)` that holds every Drude cell: `J`'s layout, x fastest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct DrudeBox {
    pub(super) lo: [usize; 3],
    pub(super) n: [usize; 3],
}

impl DrudeBox {
    /// The smallest box around `cells` (storage indices of a grid of `grid` cells); empty
    /// when there are none.
    pub(super) fn around<'a>(cells: impl Iterator<Item = &'a usize>, grid: [usize; 3]) -> Self {
        let mut lo = [usize::MAX; 3];
        let mut hi = [0; 3];
        for &c in cells {
            let at = [c % grid[0], c / grid[0] % grid[1], c / (grid[0] * grid[1])];
            for a in 0..3 {
                lo[a] = lo[a].min(at[a]);
                hi[a] = hi[a].max(at[a] + 1);
            }
        }
        if lo[0] == usize::MAX {
            return DrudeBox {
                lo: [0; 3],
                n: [0; 3],
            };
        }
        DrudeBox {
            lo,
            n: std::array::from_fn(|a| hi[a] - lo[a]),
        }
    }

    /// The box's cells.
    pub(super) fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Where grid cell `c` (inside the box) lies in it.
    fn slot(&self, c: usize, grid: [usize; 3]) -> usize {
        let at = [c % grid[0], c / grid[0] % grid[1], c / (grid[0] * grid[1])];
        let [x, y, z] = std::array::from_fn(|a| at[a] - self.lo[a]);
        x + self.n[0] * (y + self.n[1] * z)
    }

    /// The kernel's arguments: the corner, then the sizes.
    pub(super) fn args(&self) -> [i32; 6] {
        let [a, b, c] = self.lo.map(|v| v as i32);
        let [d, e, f] = self.n.map(|v| v as i32);
        [a, b, c, d, e, f]
    }
}

/// The host side of a branch: its cells (32-bit), each cell's medium (an index into the
/// shared table of distinct `(kJ, βJ)` pairs) and slot in `bounds`.
type HostBranch = (Vec<u32>, Vec<u16>, Vec<u32>);

/// Each branch's lists and the table of media, flattened, or an error when the grid or the
/// media are too many for the lists' widths.
fn drude_lists(
    branches: &[BranchView<'_>; 3],
    bounds: &DrudeBox,
    grid: [usize; 3],
) -> Result<(Vec<HostBranch>, Vec<f64>)> {
    let mut table: Vec<(u64, u64)> = Vec::new();
    let mut out = Vec::new();
    for (cells, k, b, _) in branches {
        let idx = cells
            .iter()
            .map(|&c| u32::try_from(c))
            .collect::<std::result::Result<Vec<u32>, _>>()
            .map_err(|_| {
                Error::Invalid(
                    "the GPU indexes Drude cells with 32 bits: use a grid of fewer than 2³² points"
                        .into(),
                )
            })?;
        let mut medium = Vec::with_capacity(k.len());
        for (&kk, &bb) in k.iter().zip(b.iter()) {
            let key = (kk.to_bits(), bb.to_bits());
            let m = table.iter().position(|&t| t == key).unwrap_or_else(|| {
                table.push(key);
                table.len() - 1
            });
            medium.push(u16::try_from(m).map_err(|_| {
                Error::Invalid("more than 65536 distinct Drude media on the GPU".into())
            })?);
        }
        // The box is no larger than the grid, whose cells fit in 32 bits (checked above).
        let slots = cells.iter().map(|&c| bounds.slot(c, grid) as u32).collect();
        out.push((idx, medium, slots));
    }
    let kb = table
        .iter()
        .flat_map(|&(kk, bb)| [f64::from_bits(kk), f64::from_bits(bb)])
        .collect();
    Ok((out, kb))
}

impl DrudeCells {
    /// The cells of `drude` (a grid of `grid` cells) on the device, with their kernels.
    pub(super) fn new(
        gpu: &Gpu,
        kernels: (Arc<Kernel>, Arc<Kernel>),
        drude: &crate::fdtd::drude::Cells,
        grid: [usize; 3],
    ) -> Result<Self> {
        let views = drude.branches();
        let bounds = DrudeBox::around(views.iter().flat_map(|v| v.0.iter()), grid);
        let (lists, kb) = drude_lists(&views, &bounds, grid)?;
        let media = kb.len() / 2;
        let mut branches = Vec::new();
        for ((idx, medium, slots), (_, _, _, j)) in lists.into_iter().zip(views.iter()) {
            // Empty lists still need a valid pointer: one unused element.
            let or_one = |v: &[u32]| if v.is_empty() { vec![0] } else { v.to_vec() };
            let boxed = scatter(j, &slots, bounds.len());
            branches.push(DrudeBranch {
                cells: gpu.upload(&or_one(&idx))?,
                slot: gpu.upload(&or_one(&slots))?,
                medium: gpu.upload(if medium.is_empty() { &[0] } else { &medium[..] })?,
                j: gpu.upload(&boxed)?,
                n: idx.len() as i32,
                slots,
                media: medium,
            });
        }
        Ok(DrudeCells {
            advance: kernels.0,
            apply: kernels.1,
            branches,
            kb: gpu.upload(if kb.is_empty() { &[0.0, 0.0] } else { &kb[..] })?,
            media,
            bounds,
        })
    }

    /// Each branch's `J` in list order (the CPU stepper's state).
    pub(super) fn state(&self, gpu: &Gpu) -> Result<Vec<f64>> {
        let mut out = Vec::new();
        for br in &self.branches {
            let boxed = gpu.download(&br.j)?;
            out.extend(br.slots.iter().map(|&s| boxed[s as usize]));
        }
        Ok(out)
    }

    /// Values in [`DrudeCells::state`].
    pub(super) fn state_len(&self) -> usize {
        self.branches.iter().map(|b| b.slots.len()).sum()
    }

    /// Put back what [`DrudeCells::state`] gave (`j` holds [`DrudeCells::state_len`] values).
    pub(super) fn restore(&mut self, gpu: &Gpu, j: &[f64]) -> Result<()> {
        let mut at = 0;
        let len = self.bounds.len();
        for br in self.branches.iter_mut() {
            let n = br.slots.len();
            let boxed = scatter(&j[at..at + n], &br.slots, len);
            gpu.stream
                .memcpy_htod(&boxed, &mut br.j)
                .map_err(super::driver("cuMemcpyHtoD"))?;
            at += n;
        }
        Ok(())
    }

    /// Each branch's media as one byte per box cell for the two-step pass: 0 outside the
    /// branch's cells, the medium's index + 1 on them; `None` when more than 255 media.
    pub(super) fn box_media(&self) -> Option<Vec<Vec<u8>>> {
        if self.media > 255 {
            return None;
        }
        let len = self.bounds.len().max(1);
        Some(
            self.branches
                .iter()
                .map(|br| {
                    let mut m = vec![0u8; len];
                    for (&s, &k) in br.slots.iter().zip(&br.media) {
                        m[s as usize] = k as u8 + 1;
                    }
                    m
                })
                .collect(),
        )
    }
}

/// `values` at `slots` of a box of `len` cells, zero elsewhere (at least one element).
fn scatter(values: &[f64], slots: &[u32], len: usize) -> Vec<f64> {
    let mut boxed = vec![0.0; len.max(1)];
    for (&v, &s) in values.iter().zip(slots) {
        boxed[s as usize] = v;
    }
    boxed
}

/// The Lorentz and Debye cells on the device, and their two kernels.
pub(super) struct PoleCells {
    pub(super) advance: Arc<Kernel>,
    pub(super) apply: Arc<Kernel>,
    /// Lorentz x, y, z, then Debye x, y, z (the CPU's state order).
    pub(super) branches: Vec<PoleBranch>,
}

/// One branch of Lorentz or Debye cells of one E component: storage cells, their three
/// coefficients, `P` and the auxiliary value (f64), how many (buffers hold one unused element
/// when there are none).
pub(super) struct PoleBranch {
    pub(super) lorentz: i32,
    pub(super) cells: CudaSlice<i64>,
    pub(super) c: CudaSlice<f64>,
    pub(super) p: CudaSlice<f64>,
    pub(super) q: CudaSlice<f64>,
    pub(super) n: i32,
}

/// One thread per dispersive cell, up to 1024 blocks (the kernels loop over the rest).
pub(super) fn drude_config(n: i32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(256).clamp(1, 1024), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{drude_lists, DrudeBox};

    /// Each cell's medium points at its own `(kJ, βJ)` (the table holds each pair once, for
    /// all branches) and its slot at its place in the box around every branch's cells.
    #[test]
    fn drude_lists_keep_every_cells_coefficients_and_place() {
        let grid = [10, 8, 6];
        let at = |x: usize, y: usize, z: usize| x + 10 * (y + 8 * z);
        let (cx, cy) = ([at(2, 3, 1), at(5, 3, 1)], [at(3, 6, 4)]);
        let (kx, bx, jx) = ([0.9, 0.8], [0.1, 0.2], [1.0, 2.0]);
        let (ky, by, jy) = ([0.9], [0.1], [3.0]);
        let views = [
            (&cx[..], &kx[..], &bx[..], &jx[..]),
            (&cy[..], &ky[..], &by[..], &jy[..]),
            (&[][..], &[][..], &[][..], &[][..]),
        ];
        let bounds = DrudeBox::around(views.iter().flat_map(|v| v.0.iter()), grid);
        assert_eq!(bounds.lo, [2, 3, 1]);
        assert_eq!(bounds.n, [4, 4, 4]);
        let (lists, kb) = drude_lists(&views, &bounds, grid).unwrap();
        assert_eq!(kb, [0.9, 0.1, 0.8, 0.2]);
        assert_eq!(lists[0].0, [at(2, 3, 1) as u32, at(5, 3, 1) as u32]);
        assert_eq!(lists[0].1, [0, 1]);
        assert_eq!(lists[1].1, [0]);
        assert_eq!(lists[0].2, [0, 3]);
        assert_eq!(lists[1].2, [1 + 4 * (3 + 4 * 3)]);
        assert!(lists[2].0.is_empty());
        let none = DrudeBox::around([].iter(), grid);
        assert_eq!(none.len(), 0);
        let far = [1usize << 33];
        let big = [(&far[..], &kx[..1], &bx[..1], &jx[..1]), views[2], views[2]];
        assert!(drude_lists(&big, &none, [1 << 34, 1, 1]).is_err());
    }
}
