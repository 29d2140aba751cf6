//! One-move tactics at the root: take a win that is there, and do not hand
//! the opponent one.

use crate::rules::{Game, Square};

/// The first of `moves` that wins the match at once for the side to move.
pub fn winning_move<G: Game>(game: &G, moves: &[Square]) -> Option<Square> {
    let me = game.turn();
    moves
        .iter()
        .copied()
        .find(|&square| game.would_win_match(square, me))
}

/// The squares where the opponent of the side to move would win the match
/// if they could play there (wherever the next move sends them).
pub fn threats<G: Game>(game: &G) -> Vec<Square> {
    let depth = G::DEPTH;
    let them = game.turn().other();
    (0..depth.squares())
        .filter_map(|index| Square::new(depth, index))
        .filter(|&square| game.would_win_match(square, them))
        .collect()
}

/// The moves after which the opponent has no winning reply: all of `moves`
/// when there is no threat, none when every move loses at once.
///
/// Only the squares threatened now need checking after each move: a move
/// adds the mover's marks and closes boards, so it can take threats away
/// but never give the opponent a new one.
pub fn safe_moves<G: Game>(game: &G, moves: &[Square]) -> Vec<Square> {
    let threats = threats(game);
    if threats.is_empty() {
        return moves.to_vec();
    }
    let them = game.turn().other();
    moves
        .iter()
        .copied()
        .filter(|&square| {
            let mut next = game.clone();
            next.play_unchecked(square);
            !threats.iter().any(|&threat| {
                next.check_square(threat).is_ok() && next.would_win_match(threat, them)
            })
        })
        .collect()
}
