//! Why a move is refused.

/// Why a move is refused, with the API's stable `reason` codes.
///
/// When several reasons apply, the first in this order is given (the order
/// of the variants):
/// 1. `bad_address`: the address does not name a square of this depth (wrong
///    number of coordinates; a coordinate above 8 never makes an
///    [`Address`](super::Address) at all, so parse errors map here too).
/// 2. `board_closed`: the square's path from the root crosses a decided board,
///    including the decided root once the match is over.
/// 3. `wrong_board`: the square lies outside the relaxed target board.
/// 4. `cell_occupied`: the square already holds a mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
pub enum IllegalMove {
    /// The address does not name a square of this depth.
    #[error("the address does not name a square of this depth")]
    BadAddress,
    /// The square lies in a decided board (or the match is over).
    #[error("the square lies in a decided board")]
    BoardClosed,
    /// The square lies outside the target board.
    #[error("the square lies outside the target board")]
    WrongBoard,
    /// The square already holds a mark.
    #[error("the square is already taken")]
    CellOccupied,
}

impl IllegalMove {
    /// The stable machine-readable code of the API's `illegal_move` error.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            IllegalMove::BadAddress => "bad_address",
            IllegalMove::BoardClosed => "board_closed",
            IllegalMove::WrongBoard => "wrong_board",
            IllegalMove::CellOccupied => "cell_occupied",
        }
    }
}
