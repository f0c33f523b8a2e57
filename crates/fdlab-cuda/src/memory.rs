//! Device-memory arithmetic, apart from the driver so that it is tested without a GPU.

use crate::error::{Error, Result};

/// Bytes kept free for the context and the driver's own allocations.
///
/// ```
/// assert_eq!(fdlab_cuda::memory::MARGIN, 64 << 20);
/// ```
pub const MARGIN: u64 = 64 << 20;

/// Fails with [`Error::OutOfMemory`] unless `needed` bytes fit in `free` with [`MARGIN`] to spare.
///
/// ```
/// use fdlab_cuda::memory::fits;
/// assert!(fits(1 << 30, 2 << 30).is_ok());
/// let e = fits(3 << 30, 2 << 30).unwrap_err().to_string();
/// assert!(e.contains("needs 3.00 GiB, 2.00 GiB free"), "{e}");
/// ```
pub fn fits(needed: u64, free: u64) -> Result<()> {
    match needed.checked_add(MARGIN) {
        Some(total) if total <= free => Ok(()),
        _ => Err(Error::OutOfMemory {
            needed,
            free,
            kept: MARGIN,
        }),
    }
}

/// Bytes of `len` elements of `elem` bytes each, or [`Error::OutOfMemory`] when that overflows.
///
/// ```
/// use fdlab_cuda::memory::bytes_of;
/// assert_eq!(bytes_of(1000, 8).unwrap(), 8000);
/// assert!(bytes_of(usize::MAX, 8).is_err());
/// ```
pub fn bytes_of(len: usize, elem: usize) -> Result<u64> {
    len.checked_mul(elem)
        .map(|b| b as u64)
        .ok_or(Error::OutOfMemory {
            needed: u64::MAX,
            free: 0,
            kept: MARGIN,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_kept() {
        assert!(fits(0, MARGIN).is_ok());
        assert!(fits(1, MARGIN).is_err());
        assert!(fits(u64::MAX, u64::MAX).is_err());
        let free = 80 << 30;
        assert!(fits(free - MARGIN, free).is_ok());
        assert!(fits(free - MARGIN + 1, free).is_err());
    }

    #[test]
    fn the_message_gives_both_sizes_in_gib() {
        let e = fits(3 << 29, 1 << 29).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("needs 1.50 GiB, 0.50 GiB free"), "{text}");
        assert!(
            matches!(e, Error::OutOfMemory { needed, free, .. } if needed == 3 << 29 && free == 1 << 29)
        );
    }
}
