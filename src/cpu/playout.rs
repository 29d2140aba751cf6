//! Random playouts: the Monte-Carlo half of the search.

use crate::rules::{Game, Status};

use super::Rng;

/// Plays uniformly random legal moves on `game` until the match ends and
/// returns its final status.
///
/// Allocates nothing, nor lists the moves: it counts them and takes the one
/// at a random index.
#[inline]
pub fn random_playout<G: Game>(game: &mut G, rng: &mut Rng) -> Status {
    loop {
        let count = game.count_legal_moves();
        if count == 0 {
            return game.status();
        }
        let Some(square) = game.nth_legal_move(rng.below(count)) else {
            return game.status();
        };
        game.play_unchecked(square);
    }
}
