//! The rollout loop of the reference engine (`ai-ultimate-tictactoe`), shared
//! by the rules and CPU benchmarks so both time the same loop.

use std::hint::black_box;

use ai_ultimate_tictactoe as other;

/// Plays `games` random games from the empty board, `pick(n)` choosing one of
/// the `n` legal moves; returns the number of moves played.
pub fn playouts(games: u64, mut pick: impl FnMut(usize) -> usize) -> u64 {
    let mut played = 0;
    for _ in 0..games {
        let mut position = other::Position::start();
        loop {
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            let Some(m) = moves.iter().nth(pick(moves.len())) else {
                break;
            };
            let Ok(next) = position.play(m) else { break };
            position = next;
            played += 1;
        }
        black_box(&position);
    }
    played
}
