//! Host vectors for a picture's samples, made ready on a helper thread while the steps run.
//!
//! Each frame's samples leave the device into a vector of their own, which the run hands to
//! the thread that spills and draws them. The first write to a fresh vector of several megabytes faults in each of
//! its pages, which in a virtual machine costs several times the copy itself (a 2-vCPU VM: 9.3
//! ms for a fresh 4 MB vector, 1.5 ms for a touched one). A frame waits for the device, so
//! whatever it spends on the host the GPU spends idle; the helper thread touches the next
//! vectors while the GPU steps, and a frame only copies into one. On an H200 a run of 401
//! frames of 1024 × 512 points stepped 0.6 s faster for it
//! (docs/decisions.md#a-frames-samples-go-into-pages-touched-ahead).

use std::sync::mpsc::{sync_channel, Receiver};

/// Vectors of one length, touched ahead (two waiting at most).
pub(super) struct FramePool {
    len: usize,
    ready: Option<Receiver<Vec<f64>>>,
}

impl FramePool {
    /// A pool of vectors of `len` values. If no thread can be started, vectors are made on
    /// the caller's thread as before.
    pub(super) fn new(len: usize) -> FramePool {
        let (tx, rx) = sync_channel(2);
        let spawned = std::thread::Builder::new()
            .name("fdlab-frames".into())
            .spawn(move || {
                // Ends when the pool is dropped: the send then fails.
                while tx.send(touched(len)).is_ok() {}
            })
            .is_ok();
        FramePool {
            len,
            ready: spawned.then_some(rx),
        }
    }

    /// A vector of `len` values (zeros), its pages already touched when the helper kept up.
    pub(super) fn take(&self) -> Vec<f64> {
        self.ready
            .as_ref()
            .and_then(|r| r.recv().ok())
            .unwrap_or_else(|| vec![0.0; self.len])
    }
}

/// Zeros with every page written once, so that the pages are faulted in here.
fn touched(len: usize) -> Vec<f64> {
    let mut v = vec![0.0f64; len];
    let page = 4096 / std::mem::size_of::<f64>();
    for i in (0..len).step_by(page) {
        // SAFETY: `i < len`; volatile, so that the store of the zero the page already reads
        // as is not optimized away.
        unsafe { std::ptr::write_volatile(v.as_mut_ptr().add(i), 0.0) };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::FramePool;

    #[test]
    fn vectors_have_the_length_and_hold_zeros() {
        let pool = FramePool::new(3000);
        for _ in 0..5 {
            let v = pool.take();
            assert_eq!(v.len(), 3000);
            assert!(v.iter().all(|&x| x == 0.0));
        }
    }
}
