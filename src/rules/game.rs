//! The interface the CPU player and perft are written against, so they
//! monomorphise over each depth's concrete type.

use super::{Depth, IllegalMove, MoveList, Seat, Square, Status};

/// A match of one fixed depth: implemented by [`Tree1`](super::Tree1) …
/// [`Tree4`](super::Tree4), so generic code compiles once per depth and pays
/// nothing for the depths it does not use.
pub trait Game: Clone + PartialEq {
    /// The depth of this type's board tree.
    const DEPTH: Depth;

    /// The empty tree: X to move, every square legal.
    fn start() -> Self;

    /// The number of moves played.
    fn ply(&self) -> u32;

    /// The side to move (X on even plies). Once the match is over this is the
    /// side that would have moved next.
    fn turn(&self) -> Seat {
        Seat::to_move_at(self.ply())
    }

    /// The status of the match (of its root board).
    fn status(&self) -> Status;

    /// Whether the match is over.
    fn is_over(&self) -> bool {
        self.status().is_over()
    }

    /// The last square played, if any.
    fn last_move(&self) -> Option<Square>;

    /// The mark on `square`; `None` when it is empty or not a square of this depth.
    fn cell(&self, square: Square) -> Option<Seat>;

    /// Whether the side to move may play `square`.
    ///
    /// # Errors
    /// The first [`IllegalMove`] reason that applies, in the documented order.
    fn check_square(&self, square: Square) -> Result<(), IllegalMove>;

    /// Calls `visit` with every legal move, in increasing flat index; nothing
    /// once the match is over.
    fn for_each_legal_move(&self, visit: impl FnMut(Square));

    /// Clears `buf` and fills it with every legal move, in increasing flat index.
    /// Does not allocate when `buf` came from [`MoveList::new`] of this depth.
    fn legal_moves(&self, buf: &mut MoveList);

    /// The number of legal moves, without listing them (bulk counting).
    fn count_legal_moves(&self) -> usize;

    /// The legal move at index `n` of [`Game::legal_moves`]' order; `None`
    /// when there are not that many. With [`Game::count_legal_moves`] this
    /// picks a random move without listing them (a playout's step).
    fn nth_legal_move(&self, n: usize) -> Option<Square>;

    /// The legal move at the index `pick` chooses, given the number of legal
    /// moves (it is not called once the match is over); `None` when the
    /// match is over or the index is out of range. The same as counting and
    /// then [`Game::nth_legal_move`], in one pass when the target is a
    /// leaf-level board: a random playout's step.
    fn pick_legal_move(&self, pick: impl FnOnce(usize) -> usize) -> Option<Square>;

    /// A playout's step with one-move sense, `pick(n)` choosing one of `n`
    /// candidates (it is not called once the match is over, and may be called
    /// more than once): a move that wins its leaf-level board when there is
    /// one; otherwise, when the side to move was sent to one leaf-level
    /// board, a move that does not send the opponent to a closed board (a
    /// free choice of board) and, when `careful`, not to a board where they
    /// can complete a line at once, when there is one; otherwise any legal
    /// move (so with a free choice, any move when no board can be won).
    /// `None` once the match is over.
    fn pick_greedy_move(&self, careful: bool, pick: impl FnMut(usize) -> usize) -> Option<Square>;

    /// Plays random legal moves until the match ends, `pick(n)` choosing
    /// one of the `n` legal moves in [`Game::legal_moves`]' order at each
    /// step, and returns the final status: the same moves, and the same
    /// final state, as [`Game::pick_legal_move`] and
    /// [`Game::play_unchecked`] in a loop (a random playout), which is what
    /// this does unless a depth has a faster way.
    ///
    /// When `decisive`, a step where the side to move can win the match
    /// plays the first such move instead (and `pick` is not called).
    fn play_out(&mut self, decisive: bool, pick: impl FnMut(usize) -> usize) -> Status {
        play_out_step_by_step(self, decisive, pick)
    }

    /// The first legal move, in [`Game::legal_moves`]' order, that wins the
    /// match for the side to move; `None` when there is none.
    fn match_winning_move(&self) -> Option<Square> {
        let me = self.turn();
        let mut found = None;
        self.for_each_legal_move(|square| {
            if found.is_none() && self.would_win_match(square, me) {
                found = Some(square);
            }
        });
        found
    }

    /// Whether `seat` putting its mark on `square` would complete a line in
    /// the leaf-level board holding it (the square is empty and the board
    /// open); ignores the target and whose turn it is.
    fn wins_board(&self, square: Square, seat: Seat) -> bool;

    /// Whether the side to move has a legal move that wins its leaf-level
    /// board; false once the match is over.
    fn can_win_a_board(&self) -> bool;

    /// Whether the side to move may choose among several leaf-level boards
    /// (it was sent to a closed one); false once the match is over.
    fn free_choice(&self) -> bool;

    /// Whether `seat` putting its mark on `square` would win the match: the
    /// square is empty, no board on its path is decided, and the mark
    /// completes a line in its board, that board a line in its parent, and so
    /// on up to the root.
    ///
    /// Ignores the target and whose turn it is, so it also names the squares
    /// the opponent threatens. Costs at most one line lookup per level, far
    /// less than copying the tree to play the move.
    fn would_win_match(&self, square: Square, seat: Seat) -> bool;

    /// Plays `square` for the side to move and returns how many boards the move
    /// decided (0 ..= depth: the board holding the square and the ancestors
    /// the win or draw cascaded to).
    ///
    /// The caller guarantees that the move is legal ([`Game::check_square`]);
    /// this is checked only by a debug assertion. An illegal square leaves
    /// the tree in a state no game reaches.
    ///
    /// # Panics
    /// May panic when `square` is not a square of this depth.
    fn play_unchecked(&mut self, square: Square) -> usize;
}

/// [`Game::play_out`] one [`Game::pick_legal_move`] and
/// [`Game::play_unchecked`] at a time: the default, and what depths
/// without a fast path run.
pub(crate) fn play_out_step_by_step<G: Game>(
    game: &mut G,
    decisive: bool,
    mut pick: impl FnMut(usize) -> usize,
) -> Status {
    loop {
        if decisive && let Some(win) = game.match_winning_move() {
            game.play_unchecked(win);
            continue;
        }
        let Some(square) = game.pick_legal_move(&mut pick) else {
            break;
        };
        game.play_unchecked(square);
    }
    game.status()
}
