//! The status of a board, of a match, and what one move changed.

use super::{Address, Seat, Square};

/// The status of one board of the tree.
///
/// This is the board's own status: an open board nested inside a decided one
/// is still `Open`, though none of its squares can be played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoardStatus {
    /// Not decided.
    Open,
    /// A line of this seat's positions: the board is closed and counts for it.
    Won(Seat),
    /// All nine positions decided without a line: closed, counts for nobody.
    Drawn,
}

impl BoardStatus {
    /// Whether the board is won or drawn (closed).
    #[must_use]
    pub const fn is_decided(self) -> bool {
        !matches!(self, BoardStatus::Open)
    }
}

/// The status of a match: the status of its root board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The root is open: the side to move has at least one legal move.
    Ongoing,
    /// The root is won by this seat.
    Won(Seat),
    /// The root is drawn.
    Drawn,
}

impl Status {
    /// Whether the match has ended.
    #[must_use]
    pub const fn is_over(self) -> bool {
        !matches!(self, Status::Ongoing)
    }

    /// The winner, if any.
    #[must_use]
    pub const fn winner(self) -> Option<Seat> {
        match self {
            Status::Won(seat) => Some(seat),
            Status::Ongoing | Status::Drawn => None,
        }
    }
}

impl From<Status> for BoardStatus {
    fn from(status: Status) -> BoardStatus {
        match status {
            Status::Ongoing => BoardStatus::Open,
            Status::Won(seat) => BoardStatus::Won(seat),
            Status::Drawn => BoardStatus::Drawn,
        }
    }
}

impl From<BoardStatus> for Status {
    fn from(status: BoardStatus) -> Status {
        match status {
            BoardStatus::Open => Status::Ongoing,
            BoardStatus::Won(seat) => Status::Won(seat),
            BoardStatus::Drawn => Status::Drawn,
        }
    }
}

/// What an accepted move did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The match status after the move.
    pub status: Status,
    /// The square played.
    pub square: Square,
    decided: [(Address, BoardStatus); Address::MAX_LEN],
    decided_len: u8,
}

impl Outcome {
    /// An outcome from the boards the move decided, shallowest first.
    pub(crate) fn new(status: Status, square: Square, decided: &[(Address, BoardStatus)]) -> Self {
        let mut outcome = Outcome {
            status,
            square,
            decided: [(Address::ROOT, BoardStatus::Open); Address::MAX_LEN],
            decided_len: 0,
        };
        for (slot, board) in outcome.decided.iter_mut().zip(decided) {
            *slot = *board;
            outcome.decided_len += 1;
        }
        outcome
    }

    /// The boards this move decided, shallowest first (the root, when the move
    /// ended the match, comes first). They form one chain: the board holding
    /// the square and some of its ancestors, since a win or a draw cascades
    /// upward in the same move.
    #[must_use]
    pub fn decided(&self) -> &[(Address, BoardStatus)] {
        &self.decided[..usize::from(self.decided_len)]
    }
}
