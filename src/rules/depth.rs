//! The depth of a match's board tree.

use std::fmt;

/// The number of levels of a match's board tree, 1..=4.
///
/// Depth 1 is plain tic-tac-toe, depth 2 is Ultimate Tic-Tac-Toe (81 squares,
/// 10 boards), depth 3 has 729 squares and 91 boards, depth 4 has 6,561 squares
/// and 820 boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Depth(u8);

/// A depth outside 1..=4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("depth must be between 1 and 4, not {0}")]
pub struct DepthError(pub u8);

impl Depth {
    /// Plain tic-tac-toe.
    pub const ONE: Depth = Depth(1);
    /// Ultimate Tic-Tac-Toe.
    pub const TWO: Depth = Depth(2);
    /// Three levels: 729 squares.
    pub const THREE: Depth = Depth(3);
    /// Four levels: 6,561 squares.
    pub const FOUR: Depth = Depth(4);
    /// Every depth, shallowest first.
    pub const ALL: [Depth; 4] = [Depth::ONE, Depth::TWO, Depth::THREE, Depth::FOUR];

    /// A depth from its number of levels.
    ///
    /// # Errors
    /// [`DepthError`] when `levels` is not in 1..=4.
    pub const fn new(levels: u8) -> Result<Depth, DepthError> {
        if levels >= 1 && levels <= 4 {
            Ok(Depth(levels))
        } else {
            Err(DepthError(levels))
        }
    }

    /// The number of levels, 1..=4.
    #[must_use]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The number of squares, 9^d.
    #[must_use]
    pub const fn squares(self) -> usize {
        9usize.pow(self.0 as u32)
    }

    /// The number of boards, (9^d - 1) / 8: the root plus every board below it.
    #[must_use]
    pub const fn boards(self) -> usize {
        (self.squares() - 1) / 8
    }

    /// The number of bits that hold one square's flat index: ceil(log2(9^d)),
    /// that is 4, 7, 10 or 13.
    #[must_use]
    pub const fn square_bits(self) -> u32 {
        usize::BITS - (self.squares() - 1).leading_zeros()
    }
}

impl TryFrom<u8> for Depth {
    type Error = DepthError;

    fn try_from(levels: u8) -> Result<Depth, DepthError> {
        Depth::new(levels)
    }
}

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
