//! Random playouts: the Monte-Carlo half of the search.

use crate::rules::{Game, MoveList, Status};

use super::Rng;

/// Plays uniformly random legal moves on `game` until the match ends and
/// returns its final status.
///
/// Allocates nothing: `moves` is the caller's buffer, and it should come from
/// [`MoveList::new`] of `G`'s depth so that filling it never grows it.
#[inline]
pub fn random_playout<G: Game>(game: &mut G, rng: &mut Rng, moves: &mut MoveList) -> Status {
    loop {
        game.legal_moves(moves);
        let list = moves.as_slice();
        if list.is_empty() {
            return game.status();
        }
        game.play_unchecked(list[rng.below(list.len())]);
    }
}
