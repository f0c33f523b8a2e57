//! How many threads an executor or the copy reference uses.

/// How many threads the fast executor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Par {
    /// One thread.
    Seq,
    /// Rayon's current pool (the global one: all cores), one contiguous block per thread.
    #[default]
    Rayon,
}
