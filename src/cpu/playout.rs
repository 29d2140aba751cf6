//! Playouts: the Monte-Carlo half of the search.

use crate::rules::{Game, Status};

use super::Rng;

/// How a playout picks its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Playout {
    /// Uniformly random legal moves.
    Random,
    /// Random, except that a move winning the match is always taken.
    Decisive,
    /// Take a move that wins a board when there is one, otherwise (when
    /// sent to one board) avoid sending the opponent to a closed board (a
    /// free choice), otherwise random ([`Game::pick_greedy_move`]).
    Greedy,
    /// As [`Playout::Greedy`], and also avoid sending the opponent to a
    /// board they can complete a line in at once.
    Careful,
}

/// Plays uniformly random legal moves on `game` until the match ends and
/// returns its final status.
///
/// Allocates nothing, nor lists the moves: each step counts them and takes
/// the one at a random index.
#[inline]
pub fn random_playout<G: Game>(game: &mut G, rng: &mut Rng) -> Status {
    game.play_out(false, |count| rng.below(count))
}

/// Finishes the match on `game` with `policy` and returns its final status.
#[inline]
pub fn playout<G: Game>(game: &mut G, rng: &mut Rng, policy: Playout) -> Status {
    let careful = match policy {
        Playout::Random => return random_playout(game, rng),
        Playout::Decisive => return game.play_out(true, |count| rng.below(count)),
        Playout::Greedy => false,
        Playout::Careful => true,
    };
    while let Some(square) = game.pick_greedy_move(careful, |count| rng.below(count)) {
        game.play_unchecked(square);
    }
    game.status()
}
