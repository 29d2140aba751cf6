//! Squares, named by their flat index.

use super::{Address, Depth};

/// A square of a board tree of known depth, by its flat index
/// `a1·9^(d-1) + … + ad` (the index into the API's `cells` string).
///
/// A square only means something together with its depth: the constructors
/// check the index against the depth, and a square of one depth handed to a
/// position of another is refused (or read as empty) where it does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u16);

impl Square {
    /// The square with flat index `index` at `depth`; `None` unless `index < 9^d`.
    #[must_use]
    pub fn new(depth: Depth, index: usize) -> Option<Square> {
        if index < depth.squares() {
            // Below 9^4 = 6,561, so it fits in a u16.
            Some(Square(index as u16))
        } else {
            None
        }
    }

    /// The square at `address`; `None` unless the address has exactly `d` coordinates.
    #[must_use]
    pub fn from_address(depth: Depth, address: &Address) -> Option<Square> {
        if address.len() == usize::from(depth.get()) {
            Square::new(depth, address.offset())
        } else {
            None
        }
    }

    /// The address of this square at `depth`: `d` coordinates, root first.
    #[must_use]
    pub fn to_address(self, depth: Depth) -> Address {
        Address::from_offset(usize::from(depth.get()), self.index())
    }

    /// The flat index.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// A square from a flat index the caller knows to be in range.
    pub(crate) const fn from_raw(index: u16) -> Square {
        Square(index)
    }
}
