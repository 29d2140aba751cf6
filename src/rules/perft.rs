//! Perft: the number of move sequences of a given length, the standard check
//! of a move generator (and its usual speed measure).
//!
//! A match that ends before the last ply contributes nothing: the counts are
//! the leaves exactly `plies` moves deep.

use super::game::Game;
use super::{Position, Square, Tree1, Tree2, Tree3, Tree4};

/// The number of leaves `plies` moves below `game`, counting the moves at
/// the last ply without playing them (bulk counting).
#[must_use]
pub fn perft<G: Game>(game: &G, plies: u32) -> u64 {
    match plies {
        0 => 1,
        1 => game.count_legal_moves() as u64,
        _ => {
            let mut total = 0;
            game.for_each_legal_move(|square| {
                let mut child = game.clone();
                child.play_unchecked(square);
                total += perft(&child, plies - 1);
            });
            total
        }
    }
}

/// The same count as [`perft`], but playing every leaf move too (no bulk
/// counting): a check of `play_unchecked` at the last ply, and a fairer
/// comparison with engines that count this way.
#[must_use]
pub fn perft_without_bulk<G: Game>(game: &G, plies: u32) -> u64 {
    if plies == 0 {
        return 1;
    }
    let mut total = 0;
    game.for_each_legal_move(|square| {
        let mut child = game.clone();
        child.play_unchecked(square);
        total += perft_without_bulk(&child, plies - 1);
    });
    total
}

/// The perft count under each legal move of `game`, in increasing flat index.
/// The counts add up to `perft(game, plies)`; `plies` counts the first move.
#[must_use]
pub fn divide<G: Game>(game: &G, plies: u32) -> Vec<(Square, u64)> {
    let mut counts = Vec::new();
    if plies == 0 {
        return counts;
    }
    game.for_each_legal_move(|square| {
        let mut child = game.clone();
        child.play_unchecked(square);
        counts.push((square, perft(&child, plies - 1)));
    });
    counts
}

/// [`perft`] of a position of any depth.
#[must_use]
pub fn perft_position(position: &Position, plies: u32) -> u64 {
    match position {
        Position::D1(tree) => perft::<Tree1>(tree, plies),
        Position::D2(tree) => perft::<Tree2>(tree, plies),
        Position::D3(tree) => perft::<Tree3>(tree, plies),
        Position::D4(tree) => perft::<Tree4>(tree, plies),
    }
}

/// [`divide`] of a position of any depth.
#[must_use]
pub fn divide_position(position: &Position, plies: u32) -> Vec<(Square, u64)> {
    match position {
        Position::D1(tree) => divide::<Tree1>(tree, plies),
        Position::D2(tree) => divide::<Tree2>(tree, plies),
        Position::D3(tree) => divide::<Tree3>(tree, plies),
        Position::D4(tree) => divide::<Tree4>(tree, plies),
    }
}
