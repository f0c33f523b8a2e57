//! The CPU copy reference: a parallel copy with non-temporal (streaming) stores, the most bytes
//! per second a CPU moves from one buffer to another, and a helper that measures it.
//!
//! Why streaming stores: an ordinary store first reads the destination line from memory
//! (read for ownership), so `copy_from_slice` moves three bytes for every two it counts, and a
//! stencil executor that streams its outputs beats it (well over 100% "of copy"). A streaming
//! store writes whole lines without reading them, as the executors do for large outputs.
//!
//! ```
//! use fdlab_cpu::{copy, Par};
//! let src: Vec<u32> = (0..1000).collect();
//! let mut dst = vec![0u32; 1000];
//! copy::stream_copy(&src, &mut dst, Par::Rayon).unwrap();
//! assert_eq!(src, dst);
//! ```

use crate::par::Par;
use fdlab_core::{Error, Result};
use rayon::prelude::*;
use std::time::Instant;

/// Bytes of one cache line: streaming stores go by whole lines.
const LINE: usize = 64;

/// Copies below this many bytes run on one thread (splitting costs more than it saves).
const PAR_MIN_BYTES: usize = 1 << 20;

/// Copies `src` into `dst` with non-temporal stores for every whole 64-byte line of `dst`
/// (512-bit stores where the CPU has AVX-512F, else 256-bit with AVX2, else 128-bit SSE2;
/// detected at run time; `copy_from_slice` on other targets), over rayon's threads in one
/// contiguous piece per thread with [`Par::Rayon`]. The unaligned head and tail are copied
/// with ordinary stores; each piece ends with `sfence`, so that the data is visible to the
/// caller when this returns.
///
/// # Errors
/// [`Error::Shape`] when `src` and `dst` differ in length.
pub fn stream_copy<T: Copy + Send + Sync>(src: &[T], dst: &mut [T], par: Par) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::Shape {
            expected: vec![src.len()],
            got: vec![dst.len()],
        });
    }
    let bytes = std::mem::size_of_val(src);
    let pieces = match par {
        Par::Seq => 1,
        Par::Rayon if bytes < PAR_MIN_BYTES => 1,
        Par::Rayon => rayon::current_num_threads().max(1),
    };
    if pieces == 1 || src.is_empty() {
        copy_piece(src, dst);
        return Ok(());
    }
    let chunk = src.len().div_ceil(pieces);
    dst.par_chunks_mut(chunk)
        .zip(src.par_chunks(chunk))
        .for_each(|(d, s)| copy_piece(s, d));
    Ok(())
}

/// One thread's piece of [`stream_copy`] (equal lengths), fenced.
fn copy_piece<T: Copy>(src: &[T], dst: &mut [T]) {
    debug_assert_eq!(src.len(), dst.len());
    #[cfg(target_arch = "x86_64")]
    {
        let n = std::mem::size_of_val(src);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = ((LINE - d as usize % LINE) % LINE).min(n);
        let lines = (n - head) / LINE;
        let body = lines * LINE;
        // SAFETY: `s` is readable and `d` writable for `n` bytes (the byte lengths of `src` and
        // `dst`, which do not overlap: one is borrowed mutably); `T: Copy`, so copying its
        // bytes copies it. `head + body <= n`; `d + head` is 64-byte aligned, as the streaming
        // loops require; each loop runs only where its instruction set was detected.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let (sb, db) = (s.add(head), d.add(head));
            if std::arch::is_x86_feature_detected!("avx512f") {
                x86::lines512(sb, db, lines);
            } else if std::arch::is_x86_feature_detected!("avx2") {
                x86::lines256(sb, db, lines);
            } else {
                x86::lines128(sb, db, lines);
            }
            std::ptr::copy_nonoverlapping(sb.add(body), db.add(body), n - head - body);
        }
        store_fence();
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Streaming line copies. Whole blocks of four pages go four pages at once (one line from
/// each page per step, the next lines prefetched), as glibc's large `memcpy` does: measured on
/// a 2-vCPU Zen 4 VM with 1 GiB, ~12 GB/s against ~9-10 GB/s for one line after the other
/// (and ~11 GB/s for `copy_from_slice`). The rest goes four lines a step, then line by line.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Bytes of a page.
    const PAGE: usize = 4096;

    /// Copies `lines` 64-byte lines from `s` to `d` with 512-bit streaming stores.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `s` readable and `d` writable for `64·lines` bytes, not
    /// overlapping; `d` 64-byte aligned.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn lines512(s: *const u8, d: *mut u8, lines: usize) {
        let bytes = lines * 64;
        let mut base = 0;
        while base + 4 * PAGE <= bytes {
            let mut o = base;
            while o < base + PAGE {
                for q in 0..4 {
                    _mm_prefetch::<_MM_HINT_T0>(s.wrapping_add(o + q * PAGE + 256).cast());
                }
                let v0 = _mm512_loadu_si512(s.add(o).cast());
                let v1 = _mm512_loadu_si512(s.add(o + PAGE).cast());
                let v2 = _mm512_loadu_si512(s.add(o + 2 * PAGE).cast());
                let v3 = _mm512_loadu_si512(s.add(o + 3 * PAGE).cast());
                _mm512_stream_si512(d.add(o).cast(), v0);
                _mm512_stream_si512(d.add(o + PAGE).cast(), v1);
                _mm512_stream_si512(d.add(o + 2 * PAGE).cast(), v2);
                _mm512_stream_si512(d.add(o + 3 * PAGE).cast(), v3);
                o += 64;
            }
            base += 4 * PAGE;
        }
        let mut o = base;
        while o + 256 <= bytes {
            // All loads of a step before its stores: more lines in flight.
            let v0 = _mm512_loadu_si512(s.add(o).cast());
            let v1 = _mm512_loadu_si512(s.add(o + 64).cast());
            let v2 = _mm512_loadu_si512(s.add(o + 128).cast());
            let v3 = _mm512_loadu_si512(s.add(o + 192).cast());
            _mm512_stream_si512(d.add(o).cast(), v0);
            _mm512_stream_si512(d.add(o + 64).cast(), v1);
            _mm512_stream_si512(d.add(o + 128).cast(), v2);
            _mm512_stream_si512(d.add(o + 192).cast(), v3);
            o += 256;
        }
        while o < bytes {
            _mm512_stream_si512(d.add(o).cast(), _mm512_loadu_si512(s.add(o).cast()));
            o += 64;
        }
    }

    /// Streams the line at byte `o` of `s` to `d` with two 256-bit stores.
    ///
    /// # Safety
    /// As [`lines256`], for the line at `o`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn line256(s: *const u8, d: *mut u8, o: usize) {
        let v0 = _mm256_loadu_si256(s.add(o).cast());
        let v1 = _mm256_loadu_si256(s.add(o + 32).cast());
        _mm256_stream_si256(d.add(o).cast(), v0);
        _mm256_stream_si256(d.add(o + 32).cast(), v1);
    }

    /// [`lines512`] with 256-bit stores.
    ///
    /// # Safety
    /// As [`lines512`], with AVX2 instead of AVX-512F.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lines256(s: *const u8, d: *mut u8, lines: usize) {
        let bytes = lines * 64;
        let mut base = 0;
        while base + 4 * PAGE <= bytes {
            let mut o = base;
            while o < base + PAGE {
                for q in 0..4 {
                    _mm_prefetch::<_MM_HINT_T0>(s.wrapping_add(o + q * PAGE + 256).cast());
                }
                for q in 0..4 {
                    line256(s, d, o + q * PAGE);
                }
                o += 64;
            }
            base += 4 * PAGE;
        }
        for o in (base..bytes).step_by(64) {
            line256(s, d, o);
        }
    }

    /// [`lines512`] with 128-bit stores (SSE2, the x86-64 baseline).
    ///
    /// # Safety
    /// As [`lines512`], with no CPU requirement.
    pub(super) unsafe fn lines128(s: *const u8, d: *mut u8, lines: usize) {
        for o in (0..lines * 64).step_by(16) {
            _mm_stream_si128(d.add(o).cast(), _mm_loadu_si128(s.add(o).cast()));
        }
    }
}

/// Measures [`stream_copy`] over all of rayon's threads: a source and a destination of
/// `bytes` bytes each (both touched before timing), one warm-up copy, then `reps` timed
/// copies (at least one). Returns the bandwidth of each, bytes read + written (`2·bytes`) per
/// second, in GB/s: `(median, min, max)`. Use ≥ 1 GiB, several times the last-level cache.
///
/// # Errors
/// [`Error::Size`] when `bytes` is 0 or the two buffers cannot be allocated.
pub fn copy_bandwidth_gbps(bytes: usize, reps: usize) -> Result<(f64, f64, f64)> {
    let n = bytes / 8;
    let alloc = |fill: u64| -> Result<Vec<u64>> {
        let mut v = Vec::new();
        v.try_reserve_exact(n).map_err(|_| Error::Size {
            detail: format!("cannot allocate {bytes} bytes for the copy reference; ask for less"),
        })?;
        v.resize(n, fill);
        Ok(v)
    };
    if n == 0 {
        return Err(Error::Size {
            detail: "the copy reference needs at least 8 bytes".into(),
        });
    }
    let src = alloc(0x5a5a_5a5a_5a5a_5a5a)?;
    let mut dst = alloc(0)?;
    stream_copy(&src, &mut dst, Par::Rayon)?;
    let moved = 2.0 * (n * 8) as f64;
    let mut gbps = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        stream_copy(&src, &mut dst, Par::Rayon)?;
        gbps.push(moved / t.elapsed().as_secs_f64().max(1e-12) / 1e9);
    }
    gbps.sort_by(f64::total_cmp);
    Ok((gbps[gbps.len() / 2], gbps[0], gbps[gbps.len() - 1]))
}

/// `dst.copy_from_slice(src)` on one thread, with SSE2 streaming stores for the whole 64-byte
/// lines of `dst`, unfenced: the executors' portable loops call it row by row and fence once
/// at the end of a task ([`store_fence`]).
#[cfg(target_arch = "x86_64")]
pub(crate) fn stream_copy_lines<T: Copy>(dst: &mut [T], src: &[T]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    assert_eq!(dst.len(), src.len());
    let size = std::mem::size_of::<T>();
    let head_bytes = (LINE - dst.as_ptr() as usize % LINE) % LINE;
    // `%` rather than `is_multiple_of` (Rust 1.87), for the workspace's Rust 1.80.
    #[allow(clippy::manual_is_multiple_of)]
    let odd = size == 0 || LINE % size != 0 || head_bytes % size != 0;
    if odd {
        dst.copy_from_slice(src);
        return;
    }
    let head = (head_bytes / size).min(dst.len());
    let per_line = LINE / size;
    let lines = (dst.len() - head) / per_line;
    let body_end = head + lines * per_line;
    dst[..head].copy_from_slice(&src[..head]);
    let (d, s) = (&mut dst[head..body_end], &src[head..body_end]);
    let (d, s) = (d.as_mut_ptr().cast::<u8>(), s.as_ptr().cast::<u8>());
    for l in 0..lines {
        for q in 0..LINE / 16 {
            let o = l * LINE + q * 16;
            // SAFETY: `o + 16 <= lines·64`, the byte length of `d` and `s` (`lines·per_line`
            // elements of `size` bytes); `d` starts on a 64-byte boundary, so `d + o` is 16-byte
            // aligned as `_mm_stream_si128` requires; `_mm_loadu_si128` takes any alignment;
            // SSE2 is part of the x86-64 baseline. `T: Copy` so a byte copy is a valid copy.
            unsafe {
                _mm_stream_si128(
                    d.add(o).cast::<__m128i>(),
                    _mm_loadu_si128(s.add(o).cast::<__m128i>()),
                );
            }
        }
    }
    dst[body_end..].copy_from_slice(&src[body_end..]);
}

/// `dst.copy_from_slice(src)` (no streaming stores on this target).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn stream_copy_lines<T: Copy>(dst: &mut [T], src: &[T]) {
    dst.copy_from_slice(src);
}

/// Orders this thread's streaming stores before anything it does next (the end of the task,
/// which rayon's join publishes to the caller).
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline; `sfence` has no other precondition.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line loop this CPU can run, against `copy_from_slice`, for every alignment of the
    /// source against the (64-byte aligned) destination and a few line counts.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn each_line_loop_copies_exactly_the_lines() {
        type Lines = unsafe fn(*const u8, *mut u8, usize);
        let mut loops: Vec<(&str, Lines)> = vec![("sse2", x86::lines128)];
        if std::arch::is_x86_feature_detected!("avx2") {
            loops.push(("avx2", x86::lines256));
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            loops.push(("avx512f", x86::lines512));
        }
        // Up to two blocks of four pages and a few lines more.
        let src: Vec<u8> = (0..64 * 520).map(|i| (i * 7 + 3) as u8).collect();
        for (name, lines) in loops {
            for n in [0, 1, 3, 4, 5, 9, 255, 256, 257, 512 + 7] {
                for so in [0, 1, 16, 33, 63] {
                    // u128 storage: 16-byte aligned; find the 64-byte aligned start in it.
                    let mut dst = vec![0u128; 4 * n + 8];
                    let base = dst.as_mut_ptr().cast::<u8>();
                    let at = (64 - base as usize % 64) % 64;
                    let bytes = 64 * n;
                    // SAFETY: the CPU has the loop's instruction set (checked above); `src`
                    // has `64·520 >= so + bytes` bytes; `dst` has `64·n + 128 >= at + bytes`
                    // bytes from `base`, `base + at` 64-byte aligned.
                    unsafe { lines(src.as_ptr().add(so), base.add(at), n) };
                    // SAFETY: as above, the bytes of `dst` (plain integers).
                    let got = unsafe { std::slice::from_raw_parts(base, 16 * dst.len()) };
                    assert_eq!(&got[at..at + bytes], &src[so..so + bytes], "{name} n={n}");
                    assert!(got[..at].iter().all(|&b| b == 0), "{name}: wrote before");
                    assert!(
                        got[at + bytes..].iter().all(|&b| b == 0),
                        "{name}: wrote after"
                    );
                }
            }
        }
    }

    #[test]
    fn stream_copy_lines_matches_copy_from_slice() {
        let src: Vec<f32> = (0..300).map(|i| i as f32 * 0.5).collect();
        for (o, len) in [(0, 0), (1, 1), (3, 15), (5, 16), (7, 17), (2, 250)] {
            let mut dst = vec![-1.0f32; 300];
            stream_copy_lines(&mut dst[o..o + len], &src[..len]);
            store_fence();
            assert_eq!(&dst[o..o + len], &src[..len]);
            assert!(dst[..o].iter().chain(&dst[o + len..]).all(|&x| x == -1.0));
        }
    }
}
