//! Random playouts: the Monte-Carlo half of the search.

use crate::rules::{Game, Status};

use super::Rng;

/// Plays uniformly random legal moves on `game` until the match ends and
/// returns its final status.
///
/// Allocates nothing, nor lists the moves: each step counts them and takes
/// the one at a random index.
#[inline]
pub fn random_playout<G: Game>(game: &mut G, rng: &mut Rng) -> Status {
    while let Some(square) = game.pick_legal_move(|count| rng.below(count)) {
        game.play_unchecked(square);
    }
    game.status()
}
