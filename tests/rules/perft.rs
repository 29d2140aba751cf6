//! Perft counts: the data file, bulk against non-bulk counting, the simple
//! implementation and ai-ultimate-tictactoe.

use uttt::rules::perft::{divide, divide_position, perft, perft_position, perft_without_bulk};
use uttt::rules::{Game, MoveList, Position, Square, Tree1, Tree2, Tree3, Tree4};

use super::simple::Simple;
use super::support::{Rng, depth};

struct Entry {
    depth: u8,
    plies: u32,
    leaves: u64,
    slow: bool,
}

fn entries() -> Vec<Entry> {
    include_str!("../data/perft.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Entry {
                depth: fields[0].parse().unwrap(),
                plies: fields[1].parse().unwrap(),
                leaves: fields[2].parse().unwrap(),
                slow: fields.get(3) == Some(&"slow"),
            }
        })
        .collect()
}

fn check_entries(slow: bool) {
    let entries: Vec<Entry> = entries().into_iter().filter(|e| e.slow == slow).collect();
    assert!(!entries.is_empty());
    for entry in entries {
        let start = Position::new(depth(entry.depth));
        assert_eq!(
            perft_position(&start, entry.plies),
            entry.leaves,
            "depth {} ply {}",
            entry.depth,
            entry.plies
        );
    }
}

#[test]
fn perft_from_the_empty_board_matches_the_data_file() {
    check_entries(false);
}

#[test]
#[ignore = "2.6 billion leaves: 3-4 s; run with --ignored, or `uttt perft --depth 2 --plies 9`"]
fn perft_from_the_empty_board_matches_the_slow_entries_of_the_data_file() {
    check_entries(true);
}

#[test]
fn the_data_file_has_every_count_of_the_issue() {
    let listed: Vec<(u8, u32)> = entries().iter().map(|e| (e.depth, e.plies)).collect();
    let wanted = (1..=9)
        .map(|p| (1, p))
        .chain((1..=9).map(|p| (2, p)))
        .chain((1..=5).map(|p| (3, p)));
    for key in wanted.chain((1..=3).map(|p| (4, p))) {
        assert!(listed.contains(&key), "{key:?}");
    }
}

#[test]
fn perft_without_bulk_counting_gives_the_same_counts() {
    let start1 = Tree1::start();
    for plies in 0..=9 {
        assert_eq!(perft_without_bulk(&start1, plies), perft(&start1, plies));
    }
    let start2 = Tree2::start();
    for plies in 0..=5 {
        assert_eq!(perft_without_bulk(&start2, plies), perft(&start2, plies));
    }
    assert_eq!(perft_without_bulk(&Tree3::start(), 3), 58_824);
    assert_eq!(perft_without_bulk(&Tree4::start(), 2), 59_040);
}

#[test]
fn divide_adds_up_to_perft() {
    let start = Tree2::start();
    let counts = divide(&start, 4);
    assert_eq!(counts.len(), 81);
    assert_eq!(counts.iter().map(|&(_, n)| n).sum::<u64>(), 55_080);
    // By symmetry, the corners agree with each other, and so do the centres.
    let at = |i: usize| counts.iter().find(|(s, _)| s.index() == i).unwrap().1;
    assert_eq!(at(0), at(80));
    assert_eq!(at(40), at(40));
    assert_eq!(divide_position(&Position::new(depth(1)), 1).len(), 9);
}

/// A position `plies` moves into the seeded random game (or its end) at `levels` depth.
fn random_position(levels: u8, seed: u64, plies: u32) -> (Position, Simple) {
    let mut position = Position::new(depth(levels));
    let mut simple = Simple::new(usize::from(levels));
    let mut moves = MoveList::new(depth(levels));
    let mut rng = Rng(seed);
    while position.ply() < plies {
        position.legal_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        let square = moves.as_slice()[rng.below(moves.len())];
        position.play_square(square).unwrap();
        simple.play_index(square.index()).unwrap();
    }
    (position, simple)
}

#[test]
fn the_simple_implementation_gives_the_same_perft_from_the_empty_board() {
    let simple = Simple::new(1);
    for plies in 1..=9 {
        assert_eq!(
            simple.perft(plies),
            perft_position(&Position::new(depth(1)), plies),
            "depth 1 ply {plies}"
        );
    }
    for (levels, plies) in [(2, 4), (3, 2), (4, 1)] {
        let simple = Simple::new(usize::from(levels));
        for plies in 1..=plies {
            assert_eq!(
                simple.perft(plies),
                perft_position(&Position::new(depth(levels)), plies)
            );
        }
    }
}

#[test]
fn the_simple_implementation_gives_the_same_perft_deep_into_random_games() {
    // Late positions, where boards have closed and targets relax.
    for (levels, plies_into_game, perft_plies, seeds) in [
        (2, 20, 3, 0..6),
        (2, 40, 3, 0..6),
        (3, 250, 2, 0..3),
        (3, 450, 2, 0..3),
        (4, 3_000, 1, 0..2),
    ] {
        for seed in seeds {
            let (position, simple) = random_position(levels, seed, plies_into_game);
            assert_eq!(
                perft_position(&position, perft_plies),
                simple.perft(perft_plies),
                "depth {levels} seed {seed} at ply {}",
                position.ply()
            );
        }
    }
}

#[test]
fn depth_two_perft_agrees_with_ai_ultimate_tictactoe() {
    let theirs = ai_ultimate_tictactoe::Position::start();
    for plies in 1..=5u8 {
        assert_eq!(
            ai_ultimate_tictactoe::perft(theirs, plies),
            perft(&Tree2::start(), u32::from(plies))
        );
    }
}

#[test]
fn perft_stops_at_the_end_of_the_match() {
    // Depth 1 after X wins on move 5: nothing below.
    let mut position = Position::new(depth(1));
    for index in [0, 3, 1, 4, 2] {
        position
            .play_square(Square::new(depth(1), index).unwrap())
            .unwrap();
    }
    assert!(position.status().is_over());
    assert_eq!(perft_position(&position, 0), 1);
    assert_eq!(perft_position(&position, 1), 0);
    assert_eq!(perft_position(&position, 3), 0);
}
