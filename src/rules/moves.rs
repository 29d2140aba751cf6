//! A reusable buffer of legal moves.

use std::fmt;

use super::lines::{COUNT, FULL, POSITIONS};
use super::{Depth, Square};

/// A reusable list of squares, filled by `legal_moves`.
///
/// [`MoveList::new`] allocates room for every square of the depth (9^d, plus
/// nine squares of slack), so filling it for a position of that depth or
/// shallower never allocates. The open squares of a board are written nine
/// at a time, without a branch per square; what lies past the end of the
/// list is never read.
#[derive(Clone, Default)]
pub struct MoveList {
    /// Always at least `len + 9` long once written to; only `..len` is the list.
    squares: Vec<Square>,
    len: usize,
}

impl MoveList {
    /// An empty list with room for every square of `depth`.
    #[must_use]
    pub fn new(depth: Depth) -> MoveList {
        MoveList {
            squares: vec![Square::from_raw(0); depth.squares() + 9],
            len: 0,
        }
    }

    /// The squares, in increasing flat index.
    #[must_use]
    pub fn as_slice(&self) -> &[Square] {
        &self.squares[..self.len]
    }

    /// The number of squares.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty (the match is over).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The squares, in increasing flat index.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, Square>> {
        self.as_slice().iter().copied()
    }

    /// Whether `square` is in the list.
    #[must_use]
    pub fn contains(&self, square: Square) -> bool {
        self.as_slice().contains(&square)
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `first + p` for every position `p` set in `open` (bits 0..=8).
    #[inline]
    pub(crate) fn push_positions(&mut self, first: usize, open: u16) {
        let open = usize::from(open & FULL);
        let end = self.len + 9;
        if self.squares.len() < end {
            self.squares.resize(end, Square::from_raw(0));
        }
        for (slot, &position) in self.squares[self.len..end].iter_mut().zip(&POSITIONS[open]) {
            // Below 9^4 + 9, so it fits in a u16.
            *slot = Square::from_raw((first + usize::from(position)) as u16);
        }
        self.len += usize::from(COUNT[open]);
    }
}

impl PartialEq for MoveList {
    fn eq(&self, other: &MoveList) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for MoveList {}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = Square;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, Square>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
