use proptest::prelude::*;

use super::{
    BLUNDER, INACCURACY, Judgement, MISTAKE, PositionEval, accuracy, analyse, evaluate,
    move_accuracy, review, seat_of_ply,
};
use crate::cpu::{Budget, Rng};
use crate::rules::{Depth, MoveList, Position, Seat, Square};

fn depth(levels: u8) -> Depth {
    Depth::new(levels).unwrap()
}

fn squares(levels: u8, indices: &[usize]) -> Vec<Square> {
    indices
        .iter()
        .map(|&i| Square::new(depth(levels), i).unwrap())
        .collect()
}

/// A whole match of uniformly random legal moves.
fn random_game(levels: u8, seed: u64) -> Vec<Square> {
    let mut rng = Rng::new(seed);
    let mut position = Position::new(depth(levels));
    let mut moves = MoveList::new(depth(levels));
    let mut line = Vec::new();
    loop {
        position.legal_moves(&mut moves);
        let Some(&square) = moves.as_slice().get(rng.below(moves.len().max(1))) else {
            return line;
        };
        position.play_square(square).unwrap();
        line.push(square);
    }
}

/// A whole match in which every move is the engine's best (as the analysis
/// evaluates it, with the same seeds).
fn engine_game(levels: u8, iterations: u32, seed: u64) -> Vec<Square> {
    let mut position = Position::new(depth(levels));
    let mut line = Vec::new();
    while !position.status().is_over() {
        let ply = line.len() as u64;
        let eval = evaluate(
            &position,
            Budget::iterations(iterations),
            seed.wrapping_add(ply),
            &super::Frozen,
        );
        let square = eval.square.unwrap();
        position.play_square(square).unwrap();
        line.push(square);
    }
    line
}

#[test]
fn thresholds_are_ordered_and_judged_as_documented() {
    const { assert!(0.0 < INACCURACY && INACCURACY < MISTAKE && MISTAKE < BLUNDER) };
    assert_eq!(Judgement::of(0.0, true), Judgement::Best);
    assert_eq!(Judgement::of(0.9, true), Judgement::Best);
    assert_eq!(Judgement::of(0.0, false), Judgement::Good);
    assert_eq!(Judgement::of(0.099, false), Judgement::Good);
    assert_eq!(Judgement::of(0.10, false), Judgement::Inaccuracy);
    assert_eq!(Judgement::of(0.199, false), Judgement::Inaccuracy);
    assert_eq!(Judgement::of(0.20, false), Judgement::Mistake);
    assert_eq!(Judgement::of(0.299, false), Judgement::Mistake);
    assert_eq!(Judgement::of(0.30, false), Judgement::Blunder);
    assert_eq!(Judgement::of(1.0, false), Judgement::Blunder);
    let names: Vec<_> = Judgement::ALL.iter().map(|j| j.as_str()).collect();
    assert_eq!(names, ["best", "good", "inaccuracy", "mistake", "blunder"]);
}

#[test]
fn move_accuracy_follows_the_lichess_curve() {
    assert!((move_accuracy(0.0) - 100.0).abs() < 1e-3);
    assert!((move_accuracy(0.10) - 63.6).abs() < 0.5);
    assert!((move_accuracy(0.30) - 24.8).abs() < 0.5);
    assert!(move_accuracy(0.81).abs() < 1e-6);
    assert!(move_accuracy(0.79) > 0.0);
    assert!((accuracy([]) - 100.0).abs() < 1e-6);
    assert!((accuracy([0.0, 0.3]) - (100.0 + move_accuracy(0.3)) / 2.0).abs() < 1e-3);
}

/// Tic-tac-toe: X 0, O 4, X 1 threatens 2; O plays 3 instead of blocking,
/// and X wins at 2.
const BLUNDER_GAME: [usize; 5] = [0, 4, 1, 3, 2];

#[test]
fn a_move_that_allows_a_one_move_win_is_a_blunder() {
    let moves = squares(1, &BLUNDER_GAME);
    let review = analyse(depth(1), &moves, 20_000, 7).unwrap();
    assert_eq!(review.plies.len(), moves.len());
    let blunder = review.plies[3];
    assert_eq!(blunder.seat, Seat::O);
    assert_eq!(
        blunder.best,
        squares(1, &[2])[0],
        "blocking is the only move"
    );
    assert!(
        (blunder.best_win - 0.5).abs() < 1e-6,
        "blocking draws: {blunder:?}"
    );
    assert!(blunder.played_win.abs() < 1e-6, "X then wins at once");
    assert_eq!(blunder.judgement, Judgement::Blunder);
    // X's winning move ends the match: the engine's move, X's chance 1.
    let last = review.plies[4];
    assert_eq!(last.judgement, Judgement::Best);
    assert!((last.win_x - 1.0).abs() < 1e-6);
    assert!(review.accuracy_o < review.accuracy_x);
}

#[test]
fn a_forced_win_evaluates_to_one() {
    // X 0, O 1, X 4, O 8 (forced): X forks with 6 (or 3) and wins.
    let position = Position::replay(depth(1), &squares(1, &[0, 1, 4, 8])).unwrap();
    let eval = evaluate(&position, Budget::iterations(50_000), 3, &super::Frozen);
    assert!(eval.proven, "{eval:?}");
    assert!((eval.value - 1.0).abs() < 1e-6, "{eval:?}");
    // And O, to move after X's fork, has lost.
    let forked = Position::replay(depth(1), &squares(1, &[0, 1, 4, 8, 6])).unwrap();
    let eval = evaluate(&forked, Budget::iterations(50_000), 3, &super::Frozen);
    assert!(eval.value.abs() < 1e-6, "{eval:?}");
}

#[test]
fn a_drawn_tic_tac_toe_position_is_a_proven_draw() {
    // X in a corner, O in the centre: a draw with correct play.
    let position = Position::replay(depth(1), &squares(1, &[0, 4])).unwrap();
    let eval = evaluate(&position, Budget::iterations(200_000), 1, &super::Frozen);
    assert!(eval.proven, "{eval:?}");
    assert!((eval.value - 0.5).abs() < 1e-6, "{eval:?}");
}

#[test]
fn the_same_seed_gives_the_same_analysis() {
    let moves = random_game(2, 5);
    let a = analyse(depth(2), &moves, 300, 9).unwrap();
    let b = analyse(depth(2), &moves, 300, 9).unwrap();
    assert_eq!(a, b);
}

#[test]
fn an_illegal_move_list_is_refused_with_its_index() {
    let moves = squares(1, &[0, 0]);
    assert_eq!(analyse(depth(1), &moves, 10, 1), Err(1));
}

#[test]
fn a_prefix_of_the_evaluations_judges_a_prefix_of_the_moves() {
    let moves = squares(1, &BLUNDER_GAME);
    let eval = PositionEval {
        win: 0.5,
        best: Some(moves[0]),
    };
    assert!(review(&moves, &[]).plies.is_empty());
    assert!(review(&moves, &[eval]).plies.is_empty());
    assert_eq!(review(&moves, &[eval, eval, eval]).plies.len(), 2);
}

fn check_review(levels: u8, moves: &[Square], iterations: u32, seed: u64) {
    let review = analyse(depth(levels), moves, iterations, seed).unwrap();
    assert_eq!(review.plies.len(), moves.len());
    for (k, ply) in review.plies.iter().enumerate() {
        assert_eq!(ply.ply as usize, k);
        assert_eq!(ply.seat, seat_of_ply(k));
        assert_eq!(ply.square, moves[k]);
        for chance in [ply.win_x, ply.best_win, ply.played_win, ply.loss] {
            assert!((0.0..=1.0).contains(&chance), "ply {k}: {ply:?}");
        }
        assert_eq!(
            ply.judgement,
            Judgement::of(ply.loss, ply.best == ply.square)
        );
        if ply.best == ply.square {
            assert!(ply.loss.abs() < f32::EPSILON, "ply {k}: {ply:?}");
            assert_eq!(ply.judgement, Judgement::Best);
        }
    }
    for side in [review.accuracy_x, review.accuracy_o] {
        assert!((0.0..=100.0).contains(&side), "{review:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_tic_tac_toe_games_review_within_bounds(seed in any::<u64>()) {
        let moves = random_game(1, seed);
        check_review(1, &moves, 500, seed);
    }

    #[test]
    fn random_depth_two_games_review_within_bounds(seed in any::<u64>()) {
        let moves = random_game(2, seed);
        check_review(2, &moves, 60, seed);
    }

    #[test]
    fn judgements_never_improve_as_the_loss_grows(a in 0.0_f32..=1.0, b in 0.0_f32..=1.0) {
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let rank = |j: Judgement| Judgement::ALL.iter().position(|&x| x == j).unwrap();
        prop_assert!(rank(Judgement::of(low, false)) <= rank(Judgement::of(high, false)));
        prop_assert!(move_accuracy(low) >= move_accuracy(high));
    }
}

#[test]
fn a_game_of_engine_moves_is_all_best_with_accuracy_100() {
    for (levels, iterations) in [(1, 2_000), (2, 200)] {
        let moves = engine_game(levels, iterations, 21);
        let review = analyse(depth(levels), &moves, iterations, 21).unwrap();
        assert_eq!(review.plies.len(), moves.len());
        for ply in &review.plies {
            assert_eq!(ply.judgement, Judgement::Best, "{ply:?}");
            assert!(ply.loss.abs() < f32::EPSILON);
        }
        assert!((review.accuracy_x - 100.0).abs() < 1e-3, "{review:?}");
        assert!((review.accuracy_o - 100.0).abs() < 1e-3, "{review:?}");
    }
}
