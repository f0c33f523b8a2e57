//! A task's working memory and the boundary-mapped row windows its edge loops read.

/// Per-task working memory.
pub(crate) struct Bufs<T> {
    /// Partial sums of stencils with more taps than one group, rows on their way to streaming
    /// stores (portable loops), edge windows (AVX2 loops).
    pub(crate) scratch: Vec<T>,
    /// Sums of the edge points of one row (portable edges).
    pub(crate) edge_acc: Vec<T>,
    /// Per tap: where its edge window starts in `scratch`, and its row stride there.
    pub(crate) offs: Vec<(usize, usize)>,
}

/// A window of boundary-mapped row points, as runs `(window offset, row offset, length)` of
/// consecutive points (periodic: two runs; Neumann: the mirrored points one by one).
#[derive(Debug)]
pub(crate) struct Copies {
    pub(crate) len: usize,
    pub(crate) runs: Vec<(usize, usize, usize)>,
}

impl Copies {
    pub(crate) fn new(idx: &[usize]) -> Copies {
        let mut runs: Vec<(usize, usize, usize)> = vec![];
        for (q, &i) in idx.iter().enumerate() {
            match runs.last_mut() {
                Some((_, from, len)) if *from + *len == i => *len += 1,
                _ => runs.push((q, i, 1)),
            }
        }
        Copies {
            len: idx.len(),
            runs,
        }
    }

    /// Fills `win` (`self.len` points) from `row`.
    #[inline]
    pub(crate) fn fill<T: Copy>(&self, win: &mut [T], row: &[T]) {
        for &(at, from, len) in &self.runs {
            for (d, s) in win[at..at + len].iter_mut().zip(&row[from..from + len]) {
                *d = *s;
            }
        }
    }
}
