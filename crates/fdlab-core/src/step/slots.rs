//! The buffers of a step's fields, by name and time level, for any buffer type (host fields,
//! device fields): what the executors read and write, and the rotation between steps.

use super::{Role, StepDescription};

/// One buffer per time level of every field: a state field with `L` levels has `L + 1`
/// (levels `1−L ..= 0` and the `n+1` being written), other fields one (level 0).
///
/// ```
/// use fdlab_core::step::{FieldDecl, Slots, StepDescription};
/// use fdlab_core::Boundary;
/// let d = StepDescription { dim: 1, boundary: Boundary::Periodic, params: vec![],
///     fields: vec![FieldDecl::state("p", 2)], updates: vec![] };
/// let mut s = Slots::new(&d, |_, level| Ok::<_, ()>(level)).unwrap();
/// assert_eq!(s.get("p", -1), Some(&-1));
/// s.rotate();
/// assert_eq!(s.get("p", 0), Some(&1)); // what was n+1 is now n
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Slots<B> {
    names: Vec<String>,
    roles: Vec<Role>,
    bufs: Vec<Vec<Option<B>>>,
}

impl<B> Slots<B> {
    /// Makes every buffer with `make(field, level)`.
    pub fn new<E>(
        d: &StepDescription,
        mut make: impl FnMut(&str, i32) -> Result<B, E>,
    ) -> Result<Slots<B>, E> {
        let mut bufs = vec![];
        for f in &d.fields {
            let levels: Vec<i32> = match f.role {
                Role::State { levels } => (1 - levels as i32..=1).collect(),
                _ => vec![0],
            };
            bufs.push(
                levels
                    .into_iter()
                    .map(|l| make(&f.name, l).map(Some))
                    .collect::<Result<Vec<_>, E>>()?,
            );
        }
        Ok(Slots {
            names: d.fields.iter().map(|f| f.name.clone()).collect(),
            roles: d.fields.iter().map(|f| f.role).collect(),
            bufs,
        })
    }

    fn index(&self, name: &str, level: i32) -> Option<(usize, usize)> {
        let f = self.names.iter().position(|n| n == name)?;
        let slot = match self.roles[f] {
            Role::State { levels } => level + levels as i32 - 1,
            _ if level == 0 => 0,
            _ => return None,
        };
        (0..self.bufs[f].len() as i32)
            .contains(&slot)
            .then_some((f, slot as usize))
    }

    /// The buffer of `name` at `level`.
    pub fn get(&self, name: &str, level: i32) -> Option<&B> {
        let (f, s) = self.index(name, level)?;
        self.bufs[f][s].as_ref()
    }

    /// The buffer of `name` at `level`, writable.
    pub fn get_mut(&mut self, name: &str, level: i32) -> Option<&mut B> {
        let (f, s) = self.index(name, level)?;
        self.bufs[f][s].as_mut()
    }

    /// Takes the buffer out (to write it while others are read); put it back with
    /// [`Slots::put`].
    pub fn take(&mut self, name: &str, level: i32) -> Option<B> {
        let (f, s) = self.index(name, level)?;
        self.bufs[f][s].take()
    }

    /// Puts a buffer back (or replaces it). Returns false for a name or level that has none.
    pub fn put(&mut self, name: &str, level: i32, buf: B) -> bool {
        match self.index(name, level) {
            Some((f, s)) => {
                self.bufs[f][s] = Some(buf);
                true
            }
            None => false,
        }
    }

    /// Every field and level with its buffer (`None` while taken), e.g. to check shapes.
    pub fn each(&self) -> impl Iterator<Item = (&str, i32, Option<&B>)> {
        self.bufs.iter().enumerate().flat_map(move |(f, b)| {
            let first = match self.roles[f] {
                Role::State { levels } => 1 - levels as i32,
                _ => 0,
            };
            b.iter()
                .enumerate()
                .map(move |(s, x)| (self.names[f].as_str(), first + s as i32, x.as_ref()))
        })
    }

    /// Undoes [`Slots::rotate`]: every state field's levels move up by one (level 0 becomes
    /// n+1, the n+1 buffer becomes the oldest level). The adjoint of a step starts with it.
    pub fn unrotate(&mut self) {
        for (f, b) in self.bufs.iter_mut().enumerate() {
            if matches!(self.roles[f], Role::State { .. }) {
                b.rotate_right(1);
            }
        }
    }

    /// Ends a step: every state field's levels move down by one (n+1 becomes n; the oldest
    /// buffer is reused for the next n+1).
    pub fn rotate(&mut self) {
        for (f, b) in self.bufs.iter_mut().enumerate() {
            if matches!(self.roles[f], Role::State { .. }) {
                b.rotate_left(1);
            }
        }
    }
}
