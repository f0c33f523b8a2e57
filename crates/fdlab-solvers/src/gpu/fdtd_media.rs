//! E's coefficients as a medium index per cell: a case's cells hold a few distinct media
//! (vacuum, a dielectric, a conductor, PEC), so the one-pass step reads one byte per cell
//! and looks `(ca, cb)` up in a table in shared memory, instead of reading two values per
//! cell. In `f32` that is 12.25 values a cell and step moved instead of 14.

use fdlab_cuda::codegen::solver::fdtd::MEDIA;
use fdlab_cuda::CudaScalar;
use std::collections::HashMap;

/// The per-cell coefficients as indices into a table.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MediaIndex<T> {
    /// One index per cell.
    pub medium: Vec<u8>,
    /// `ca` of each medium, then (from [`MEDIA`]) `cb`: `2 · MEDIA` values, unused slots 0.
    pub table: Vec<T>,
    /// Media in the table.
    pub count: usize,
}

/// The index of `(ca, cb)`, or `None` when the cells hold more than [`MEDIA`] distinct pairs
/// (graded media set cell by cell): the kernel then reads the two arrays.
pub(super) fn media_index<T: CudaScalar>(ca: &[T], cb: &[T]) -> Option<MediaIndex<T>> {
    // Pairs compare by their bits, so that the table gives back exactly the values the
    // per-cell arrays hold.
    let key = |a: T, b: T| (a.as_f64().to_bits(), b.as_f64().to_bits());
    let mut slots: HashMap<(u64, u64), u8> = HashMap::new();
    let mut table = vec![T::zero(); 2 * MEDIA];
    let mut medium = Vec::with_capacity(ca.len());
    // Neighbouring cells mostly share a medium: one comparison instead of a hash lookup.
    let mut last: Option<((u64, u64), u8)> = None;
    for (&a, &b) in ca.iter().zip(cb) {
        let k = key(a, b);
        let slot = match last {
            Some((lk, s)) if lk == k => s,
            _ => {
                let n = slots.len();
                let s = match slots.get(&k) {
                    Some(&s) => s,
                    None if n < MEDIA => {
                        table[n] = a;
                        table[MEDIA + n] = b;
                        slots.insert(k, n as u8);
                        n as u8
                    }
                    None => return None,
                };
                last = Some((k, s));
                s
            }
        };
        medium.push(slot);
    }
    let count = slots.len();
    Some(MediaIndex {
        medium,
        table,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::{media_index, MEDIA};

    /// Every cell's pair comes back from the table exactly, in both precisions.
    #[test]
    fn the_table_gives_back_every_cells_coefficients() {
        let ca: Vec<f64> = (0..1000)
            .map(|i| [1.0, 0.9, 0.0][(i * 7 / 13) % 3])
            .collect();
        let cb: Vec<f64> = (0..1000).map(|i| [0.5, 0.25, 0.0][(i / 5) % 3]).collect();
        let m = media_index(&ca, &cb).expect("nine media fit");
        assert!(m.count <= 9 && m.count >= 3);
        for (c, &s) in m.medium.iter().enumerate() {
            assert_eq!(m.table[s as usize], ca[c]);
            assert_eq!(m.table[MEDIA + s as usize], cb[c]);
        }
        let ca32: Vec<f32> = ca.iter().map(|&v| v as f32 * 0.3).collect();
        let cb32: Vec<f32> = cb.iter().map(|&v| v as f32).collect();
        let m = media_index(&ca32, &cb32).expect("fits");
        for (c, &s) in m.medium.iter().enumerate() {
            assert_eq!(m.table[s as usize].to_bits(), ca32[c].to_bits());
            assert_eq!(m.table[MEDIA + s as usize], cb32[c]);
        }
    }

    /// Exactly `MEDIA` distinct pairs fit; one more does not.
    #[test]
    fn more_media_than_a_byte_holds_fall_back_to_the_arrays() {
        let ca: Vec<f32> = (0..MEDIA).map(|i| 1.0 - i as f32 * 1e-3).collect();
        let cb = vec![0.5f32; MEDIA];
        assert_eq!(media_index(&ca, &cb).map(|m| m.count), Some(MEDIA));
        let mut ca = ca;
        ca.push(0.01);
        let cb = vec![0.5f32; MEDIA + 1];
        assert!(media_index(&ca, &cb).is_none());
    }
}
