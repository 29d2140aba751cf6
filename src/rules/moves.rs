//! A reusable buffer of legal moves.

use super::{Depth, Square};

/// A reusable list of squares, filled by `legal_moves`.
///
/// [`MoveList::new`] reserves room for every square of the depth (9^d), so
/// filling it for a position of that depth or shallower never allocates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveList {
    squares: Vec<Square>,
}

impl MoveList {
    /// An empty list with room for every square of `depth`.
    #[must_use]
    pub fn new(depth: Depth) -> MoveList {
        MoveList {
            squares: Vec::with_capacity(depth.squares()),
        }
    }

    /// The squares, in increasing flat index.
    #[must_use]
    pub fn as_slice(&self) -> &[Square] {
        &self.squares
    }

    /// The number of squares.
    #[must_use]
    pub fn len(&self) -> usize {
        self.squares.len()
    }

    /// Whether the list is empty (the match is over).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.squares.is_empty()
    }

    /// The squares, in increasing flat index.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, Square>> {
        self.squares.iter().copied()
    }

    /// Whether `square` is in the list.
    #[must_use]
    pub fn contains(&self, square: Square) -> bool {
        self.squares.contains(&square)
    }

    pub(crate) fn clear(&mut self) {
        self.squares.clear();
    }

    #[inline]
    pub(crate) fn push(&mut self, square: Square) {
        self.squares.push(square);
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = Square;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, Square>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
