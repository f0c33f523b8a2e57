//! Drude, Lorentz and Debye cells of the FDTD stepper on the device: per E component, the
//! cells' indices, their coefficients and their currents or polarizations (f64, as on the
//! CPU), advanced and applied by small kernels around the step.

use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use fdlab_cuda::Kernel;
use std::sync::Arc;

/// The Drude cells of each E component on the device, and their two kernels.
pub(super) struct DrudeCells {
    pub(super) advance: Arc<Kernel>,
    pub(super) apply: Arc<Kernel>,
    /// Per E component.
    pub(super) branches: Vec<DrudeBranch>,
}

/// One E component's Drude cells on the device: storage cells, each cell's medium (an index
/// into `kb`, the media's `(kJ, βJ)`), `J` (f64) and how many (the buffers hold one unused
/// element when there are none).
pub(super) struct DrudeBranch {
    pub(super) cells: CudaSlice<u32>,
    pub(super) medium: CudaSlice<u16>,
    pub(super) kb: CudaSlice<f64>,
    pub(super) j: CudaSlice<f64>,
    pub(super) n: i32,
}

/// A Drude branch's cells as 32-bit indices, each cell's medium as an index into the table
/// of distinct `(kJ, βJ)` pairs (flattened), or an error when the grid or the media are too
/// many for those widths.
pub(super) fn drude_lists(
    cells: &[usize],
    k: &[f64],
    b: &[f64],
) -> Result<(Vec<u32>, Vec<u16>, Vec<f64>)> {
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
    let mut table: Vec<(u64, u64)> = Vec::new();
    let mut medium = Vec::with_capacity(k.len());
    for (&kk, &bb) in k.iter().zip(b) {
        let key = (kk.to_bits(), bb.to_bits());
        let m = table.iter().position(|&t| t == key).unwrap_or_else(|| {
            table.push(key);
            table.len() - 1
        });
        medium.push(u16::try_from(m).map_err(|_| {
            Error::Invalid("more than 65536 distinct Drude media on the GPU".into())
        })?);
    }
    let kb = table
        .iter()
        .flat_map(|&(kk, bb)| [f64::from_bits(kk), f64::from_bits(bb)])
        .collect();
    Ok((idx, medium, kb))
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
    use super::drude_lists;

    /// Each cell's medium points at its own `(kJ, βJ)`: the table holds each pair once.
    #[test]
    fn drude_lists_keep_every_cells_coefficients() {
        let cells = [5usize, 9, 12, 40];
        let k = [0.9, 0.8, 0.9, 0.8];
        let b = [0.1, 0.2, 0.1, 0.3];
        let (idx, medium, kb) = drude_lists(&cells, &k, &b).unwrap();
        assert_eq!(idx, [5, 9, 12, 40]);
        assert_eq!(kb.len(), 2 * 3);
        for i in 0..4 {
            let m = medium[i] as usize;
            assert_eq!((kb[2 * m], kb[2 * m + 1]), (k[i], b[i]));
        }
        assert!(drude_lists(&[1 << 33], &[0.5], &[0.5]).is_err());
    }
}
