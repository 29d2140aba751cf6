//! A match of any depth: one enum over the four concrete trees.

use super::game::Game;
use super::{
    Address, BoardStatus, Depth, IllegalMove, MoveList, Outcome, Seat, Square, Status, Tree1,
    Tree2, Tree3, Tree4,
};

/// The state of one match of depth 1..=4.
///
/// Each variant holds the concrete tree of its depth; generic code (the CPU
/// player, perft) matches once and then runs monomorphised over [`Game`].
/// Depths 3 and 4 are boxed (556 bytes and 4.9 kB); the enum is 72 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// Depth 1: plain tic-tac-toe.
    D1(Tree1),
    /// Depth 2: Ultimate Tic-Tac-Toe.
    D2(Tree2),
    /// Depth 3.
    D3(Box<Tree3>),
    /// Depth 4.
    D4(Box<Tree4>),
}

/// A move list that could not be replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal move at ply {ply}: {reason}")]
pub struct ReplayError {
    /// The index of the refused move in the list (the moves played before it).
    pub ply: u32,
    /// Why it was refused.
    pub reason: IllegalMove,
}

/// Runs `$body` with `$tree` bound to the concrete tree of `$position`.
macro_rules! with_tree {
    ($position:expr, $tree:ident => $body:expr) => {
        match $position {
            Position::D1($tree) => $body,
            Position::D2($tree) => $body,
            Position::D3($tree) => $body,
            Position::D4($tree) => $body,
        }
    };
}

impl Position {
    /// The empty board of `depth`: X to move, every square legal.
    #[must_use]
    pub fn new(depth: Depth) -> Position {
        match depth.get() {
            1 => Position::D1(Tree1::new()),
            2 => Position::D2(Tree2::new()),
            3 => Position::D3(Box::default()),
            _ => Position::D4(Box::default()),
        }
    }

    /// Replays `moves` from the empty board of `depth`.
    ///
    /// # Errors
    /// [`ReplayError`] with the index and reason of the first refused move.
    pub fn replay(depth: Depth, moves: &[Square]) -> Result<Position, ReplayError> {
        let mut position = Position::new(depth);
        for (ply, &square) in (0u32..).zip(moves) {
            position
                .play_square(square)
                .map_err(|reason| ReplayError { ply, reason })?;
        }
        Ok(position)
    }

    /// The depth of the board tree.
    #[must_use]
    pub fn depth(&self) -> Depth {
        match self {
            Position::D1(_) => Depth::ONE,
            Position::D2(_) => Depth::TWO,
            Position::D3(_) => Depth::THREE,
            Position::D4(_) => Depth::FOUR,
        }
    }

    /// The number of moves played.
    #[must_use]
    pub fn ply(&self) -> u32 {
        with_tree!(self, tree => tree.ply())
    }

    /// The side to move: X on ply 0, then alternating. Once the match is over
    /// this is the side that would have moved next.
    #[must_use]
    pub fn turn(&self) -> Seat {
        with_tree!(self, tree => tree.turn())
    }

    /// The status of the match.
    #[must_use]
    pub fn status(&self) -> Status {
        with_tree!(self, tree => tree.status())
    }

    /// The relaxed target board: the deepest playable board on the path to
    /// the board the last move sent to (the root on ply 0). `None` once the
    /// match is over.
    #[must_use]
    pub fn target(&self) -> Option<Address> {
        with_tree!(self, tree => tree.target())
    }

    /// Clears `buf` and fills it with every legal move, in increasing flat
    /// index (empty once the match is over). Does not allocate when `buf` came
    /// from [`MoveList::new`] of this depth.
    pub fn legal_moves(&self, buf: &mut MoveList) {
        with_tree!(self, tree => tree.legal_moves(buf));
    }

    /// The square at `address`, if the side to move may play it.
    ///
    /// # Errors
    /// The first [`IllegalMove`] reason that applies, in the order documented there.
    pub fn check(&self, address: &Address) -> Result<Square, IllegalMove> {
        let square = Square::from_address(self.depth(), address).ok_or(IllegalMove::BadAddress)?;
        self.check_square(square)?;
        Ok(square)
    }

    /// Whether the side to move may play `square`.
    ///
    /// # Errors
    /// The first [`IllegalMove`] reason that applies; `bad_address` for a
    /// square of a deeper tree.
    pub fn check_square(&self, square: Square) -> Result<(), IllegalMove> {
        with_tree!(self, tree => tree.check_square(square))
    }

    /// Plays the square at `address` for the side to move.
    ///
    /// # Errors
    /// The first [`IllegalMove`] reason that applies; the position is then unchanged.
    pub fn play(&mut self, address: &Address) -> Result<Outcome, IllegalMove> {
        let square = self.check(address)?;
        Ok(self.play_checked(square))
    }

    /// Plays `square` for the side to move.
    ///
    /// # Errors
    /// The first [`IllegalMove`] reason that applies; the position is then unchanged.
    pub fn play_square(&mut self, square: Square) -> Result<Outcome, IllegalMove> {
        self.check_square(square)?;
        Ok(self.play_checked(square))
    }

    fn play_checked(&mut self, square: Square) -> Outcome {
        with_tree!(self, tree => {
            let decided = tree.play_unchecked(square);
            tree.outcome(square, decided)
        })
    }

    /// The mark on `square`; `None` when it is empty or not a square of this depth.
    #[must_use]
    pub fn cell(&self, square: Square) -> Option<Seat> {
        with_tree!(self, tree => tree.cell(square))
    }

    /// Appends the 9^d cells by flat index, `'.'` empty, `'x'` or `'o'`: the
    /// API's `board.cells`.
    pub fn write_cells(&self, out: &mut String) {
        with_tree!(self, tree => tree.write_cells(out));
    }

    /// The status of `board`; `None` unless it names a board of this depth
    /// (fewer than `d` coordinates). A board inside a decided board keeps its
    /// own status, though it is not playable.
    #[must_use]
    pub fn board_status(&self, board: &Address) -> Option<BoardStatus> {
        with_tree!(self, tree => tree.board_status(board))
    }

    /// Every decided board (won or drawn) with its status, in address order,
    /// the root first: the API's `board.boards`.
    #[must_use]
    pub fn decided_boards(&self) -> Vec<(Address, BoardStatus)> {
        with_tree!(self, tree => tree.decided_boards())
    }

    /// The last square played, if any.
    #[must_use]
    pub fn last_move(&self) -> Option<Square> {
        with_tree!(self, tree => tree.last_move())
    }

    /// Whether `seat` putting its mark on `square` would win the match,
    /// ignoring the target and whose turn it is (see [`Game::would_win_match`]).
    #[must_use]
    pub fn would_win_match(&self, square: Square, seat: Seat) -> bool {
        with_tree!(self, tree => tree.would_win_match(square, seat))
    }

    /// The number of legal moves, without listing them.
    #[must_use]
    pub fn count_legal_moves(&self) -> usize {
        with_tree!(self, tree => tree.count_legal_moves())
    }
}
