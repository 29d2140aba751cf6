//! The two seats of a match.

use std::fmt;

/// One of the two players of a match. X always moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seat {
    /// The first player.
    X,
    /// The second player.
    O,
}

impl Seat {
    /// Both seats, X first.
    pub const ALL: [Seat; 2] = [Seat::X, Seat::O];

    /// The opponent of this seat.
    #[must_use]
    pub const fn other(self) -> Seat {
        match self {
            Seat::X => Seat::O,
            Seat::O => Seat::X,
        }
    }

    /// The mark of this seat in the API's `cells` string: `'x'` or `'o'`.
    #[must_use]
    pub const fn as_char(self) -> char {
        match self {
            Seat::X => 'x',
            Seat::O => 'o',
        }
    }

    /// 0 for X, 1 for O: the index of this seat's mask in a board.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Seat::X => 0,
            Seat::O => 1,
        }
    }

    /// The seat that moves at a given ply (moves already played): X on even plies.
    #[must_use]
    pub const fn to_move_at(ply: u32) -> Seat {
        if ply.is_multiple_of(2) {
            Seat::X
        } else {
            Seat::O
        }
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = match self {
            Seat::X => "x",
            Seat::O => "o",
        };
        f.write_str(mark)
    }
}
