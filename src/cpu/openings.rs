//! Random openings for matches between CPU players: a few uniformly random
//! plies, so that games between deterministic players differ.

use std::collections::HashSet;

use crate::rules::{Depth, MoveList, Position, Square};

use super::Rng;

/// Up to `count` distinct openings of `plies` random legal moves from the
/// empty board of `depth`, none of which ends the match. Fewer when the
/// depth has fewer distinct openings of that length than asked (tic-tac-toe
/// has 9 of one ply): generation stops after `count * 100` draws.
#[must_use]
pub fn random_openings(depth: Depth, plies: u32, count: usize, seed: u64) -> Vec<Vec<Square>> {
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::new();
    let mut openings = Vec::with_capacity(count);
    let mut moves = MoveList::new(depth);
    for _ in 0..count.saturating_mul(100) {
        if openings.len() == count {
            break;
        }
        let mut position = Position::new(depth);
        let mut line = Vec::with_capacity(plies as usize);
        for _ in 0..plies {
            position.legal_moves(&mut moves);
            let Some(&square) = moves.as_slice().get(rng.below(moves.len().max(1))) else {
                break;
            };
            // Legal by construction.
            if position.play_square(square).is_err() {
                break;
            }
            line.push(square);
        }
        let complete = line.len() == plies as usize && !position.status().is_over();
        if complete && seen.insert(line.clone()) {
            openings.push(line);
        }
    }
    openings
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::random_openings;
    use crate::rules::{Depth, Position};

    #[test]
    fn openings_are_legal_unfinished_and_distinct_at_every_depth() {
        for levels in 1..=4 {
            let depth = Depth::new(levels).unwrap();
            for plies in [0, 1, 2, 4] {
                let count = if levels == 1 { 40 } else { 200 };
                let openings = random_openings(depth, plies, count, 11);
                let distinct: HashSet<_> = openings.iter().collect();
                assert_eq!(
                    distinct.len(),
                    openings.len(),
                    "depth {levels}, {plies} plies"
                );
                for line in &openings {
                    assert_eq!(line.len(), plies as usize);
                    let position = Position::replay(depth, line).expect("a legal line");
                    assert!(!position.status().is_over());
                }
                let expected = match (levels, plies) {
                    (_, 0) => 1,
                    (1, 1) => 9,
                    (2, 1) => 81,
                    _ => count,
                };
                assert_eq!(openings.len(), expected, "depth {levels}, {plies} plies");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_openings() {
        let depth = Depth::new(2).unwrap();
        assert_eq!(
            random_openings(depth, 3, 50, 5),
            random_openings(depth, 3, 50, 5)
        );
        assert_ne!(
            random_openings(depth, 3, 50, 5),
            random_openings(depth, 3, 50, 6)
        );
    }
}
