//! The consistency audit of a stored match (`uttt::service::audit`): a
//! consistent match passes, and each kind of damage — a tampered position, a
//! missing move, a wrong winner, a bad square — is reported as what it is.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;
use uttt::rules::{Depth, MoveList, Position, Seat, Square, Status, encode};
use uttt::service::admin::ExportRecord;
use uttt::service::audit::{Discrepancy, Place, StoredMatch, StoredMove, audit};

/// X takes the top row of a tic-tac-toe board (depth 1): 0 3 1 4 2.
const X_ROW: [usize; 5] = [0, 3, 1, 4, 2];

fn depth(levels: u8) -> Depth {
    Depth::new(levels).unwrap()
}

fn squares(depth: Depth, indices: &[usize]) -> Vec<Square> {
    indices
        .iter()
        .map(|&i| Square::new(depth, i).unwrap())
        .collect()
}

/// The move rows of `squares`, numbered from 0 and alternating from X.
fn rows(squares: &[Square]) -> Vec<StoredMove<'static>> {
    (0..)
        .zip(squares)
        .map(|(ply, square)| StoredMove {
            ply,
            seat: Some(if ply % 2 == 0 { "x" } else { "o" }),
            place: Place::Index(square.index() as i64),
        })
        .collect()
}

/// A match stored as the server stores it: rows, position and ply count agree.
fn stored<'a>(
    depth: Depth,
    moves: &[Square],
    position: &'a [u8],
    result: (&'a str, Option<&'a str>, Option<&'a str>),
) -> StoredMatch<'a> {
    StoredMatch {
        depth: i64::from(depth.get()),
        moves: rows(moves),
        position: Some(position),
        ply: Some(moves.len() as i64),
        status: result.0,
        reason: result.1,
        winner: result.2,
    }
}

const X_WON: (&str, Option<&str>, Option<&str>) = ("finished", Some("three_in_a_row"), Some("x"));

/// X's top-row game: its depth, moves and stored position.
fn x_won() -> (Depth, Vec<Square>, Vec<u8>) {
    let d = depth(1);
    let won = squares(d, &X_ROW);
    let bytes = encode(d, &won);
    (d, won, bytes)
}

#[test]
fn consistent_matches_pass() {
    let (d, won, bytes) = x_won();
    assert_eq!(audit(&stored(d, &won, &bytes, X_WON)), vec![]);

    let open = squares(d, &X_ROW[..3]);
    let bytes = encode(d, &open);
    assert_eq!(
        audit(&stored(d, &open, &bytes, ("active", None, None))),
        vec![]
    );
    for reason in ["timeout", "resignation"] {
        let ended = stored(d, &open, &bytes, ("finished", Some(reason), Some("o")));
        assert_eq!(audit(&ended), vec![], "{reason}");
    }

    // x o x / x o o / o x x: nobody has a line.
    let drawn = squares(d, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    let bytes = encode(d, &drawn);
    assert_eq!(Position::replay(d, &drawn).unwrap().status(), Status::Drawn);
    assert_eq!(
        audit(&stored(d, &drawn, &bytes, ("finished", Some("draw"), None))),
        vec![]
    );

    let empty = encode(d, &[]);
    assert_eq!(
        audit(&stored(d, &[], &empty, ("active", None, None))),
        vec![]
    );
}

#[test]
fn a_consistent_export_record_passes_and_a_wrong_one_does_not() {
    let record = |moves: &str, winner: &str| -> ExportRecord {
        serde_json::from_value(json!({
            "id": "m1", "mode": "casual", "ladder": null, "rated": false, "depth": 1,
            "time_control": {"kind": "none"}, "x": null, "o": null,
            "status": "finished", "winner": winner, "reason": "three_in_a_row",
            "created_at": "2026-01-01T00:00:00Z", "finished_at": null, "moves": moves,
        }))
        .unwrap()
    };
    let good = record("0 3 1 4 2", "x");
    assert_eq!(audit(&StoredMatch::from_export(&good)), vec![]);
    let wrong = record("0 3 1 4 2", "o");
    assert!(matches!(
        audit(&StoredMatch::from_export(&wrong)).as_slice(),
        [Discrepancy::Result {
            replayed: Status::Won(Seat::X),
            ..
        }]
    ));
    let unreadable = record("0 3 1 4 x", "x");
    assert_eq!(
        audit(&StoredMatch::from_export(&unreadable)),
        vec![Discrepancy::NotASquare {
            index: 4,
            place: "x".into(),
            depth: 1
        }]
    );
}

#[test]
fn a_tampered_position_is_reported() {
    let d = depth(1);
    let won = squares(d, &X_ROW);
    // The same number of moves, one of them elsewhere.
    let bytes = encode(d, &squares(d, &[0, 3, 1, 5, 2]));
    assert_eq!(
        audit(&stored(d, &won, &bytes, X_WON)),
        vec![
            Discrepancy::RecordDiffers {
                recorded: 5,
                stored: 5
            },
            Discrepancy::PositionDiffers,
        ]
    );
    let garbage = [0xff, 0, 0];
    assert!(matches!(
        audit(&stored(d, &won, &garbage, X_WON)).as_slice(),
        [Discrepancy::Undecodable(_)]
    ));
}

#[test]
fn a_missing_move_is_reported() {
    let (d, won, bytes) = x_won();

    // The last move row is gone: the record, the position, the count and the result disagree.
    let mut last_gone = stored(d, &won, &bytes, X_WON);
    last_gone.moves.pop();
    assert_eq!(
        audit(&last_gone),
        vec![
            Discrepancy::RecordDiffers {
                recorded: 5,
                stored: 4
            },
            Discrepancy::PositionDiffers,
            Discrepancy::PlyCount {
                counted: 5,
                stored: 4
            },
            Discrepancy::Result {
                status: "finished".into(),
                reason: Some("three_in_a_row".into()),
                winner: Some("x".into()),
                replayed: Status::Ongoing,
            },
        ]
    );

    // A move row in the middle is gone: the numbering has a gap and the seats no longer alternate.
    let mut middle_gone = stored(d, &won, &bytes, X_WON);
    middle_gone.moves.remove(1);
    let found = audit(&middle_gone);
    assert_eq!(found[0], Discrepancy::PlyNumber { index: 1, ply: 2 });
    assert_eq!(
        found[1],
        Discrepancy::SeatOutOfTurn {
            index: 1,
            seat: "x".into()
        }
    );
    assert!(found.contains(&Discrepancy::RecordDiffers {
        recorded: 5,
        stored: 4
    }));
}

#[test]
fn a_wrong_winner_is_reported() {
    let (d, won, bytes) = x_won();
    for (status, reason, winner) in [
        ("finished", Some("three_in_a_row"), Some("o")),
        ("finished", Some("three_in_a_row"), None),
        ("finished", Some("draw"), None),
        ("finished", Some("timeout"), Some("x")),
        ("active", None, None),
        ("finished", Some("three_in_a_row"), Some("z")),
        ("paused", Some("three_in_a_row"), Some("x")),
    ] {
        assert_eq!(
            audit(&stored(d, &won, &bytes, (status, reason, winner))),
            vec![Discrepancy::Result {
                status: status.into(),
                reason: reason.map(Into::into),
                winner: winner.map(Into::into),
                replayed: Status::Won(Seat::X),
            }],
            "{status} {reason:?} {winner:?}"
        );
    }
    // An open position cannot have been won, drawn, or timed out without a winner.
    let open = squares(d, &X_ROW[..4]);
    let bytes = encode(d, &open);
    for (status, reason, winner) in [
        ("finished", Some("three_in_a_row"), Some("x")),
        ("finished", Some("draw"), None),
        ("finished", Some("timeout"), None),
        ("active", None, Some("x")),
    ] {
        assert_eq!(
            audit(&stored(d, &open, &bytes, (status, reason, winner))).len(),
            1
        );
    }
}

#[test]
fn bad_squares_depths_and_illegal_moves_are_reported() {
    let (d, won, bytes) = x_won();
    let mut off_board = stored(d, &won, &bytes, X_WON);
    off_board.moves[2].place = Place::Index(9);
    assert_eq!(
        audit(&off_board),
        vec![Discrepancy::NotASquare {
            index: 2,
            place: "9".into(),
            depth: 1
        }]
    );

    let mut bad_depth = stored(d, &won, &bytes, X_WON);
    bad_depth.depth = 5;
    assert_eq!(audit(&bad_depth), vec![Discrepancy::BadDepth(5)]);

    // The same square twice.
    let mut twice = stored(d, &won, &bytes, X_WON);
    twice.moves[2].place = Place::Index(0);
    assert!(matches!(
        audit(&twice).as_slice(),
        [Discrepancy::Illegal(e)] if e.ply == 2
    ));
}

/// A random game of `levels` depth, `length` moves at most, chosen by `seed`.
fn random_game(levels: u8, length: usize, mut seed: u64) -> (Position, Vec<Square>) {
    let mut position = Position::new(depth(levels));
    let mut played = Vec::new();
    let mut legal = MoveList::new(position.depth());
    while played.len() < length && position.status() == Status::Ongoing {
        position.legal_moves(&mut legal);
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let square = legal.as_slice()[(seed >> 33) as usize % legal.as_slice().len()];
        position.play_square(square).unwrap();
        played.push(square);
    }
    (position, played)
}

/// The stored result of a position as the server records it.
fn result_of(position: &Position) -> (&'static str, Option<&'static str>, Option<&'static str>) {
    match position.status() {
        Status::Ongoing => ("active", None, None),
        Status::Won(Seat::X) => X_WON,
        Status::Won(Seat::O) => ("finished", Some("three_in_a_row"), Some("o")),
        Status::Drawn => ("finished", Some("draw"), None),
    }
}

proptest! {
    #[test]
    fn every_recorded_game_is_consistent_and_losing_any_move_is_noticed(
        levels in 1u8..=3,
        length in 1usize..120,
        seed in any::<u64>(),
        lost in any::<prop::sample::Index>(),
    ) {
        let (position, played) = random_game(levels, length, seed);
        let bytes = encode(position.depth(), &played);
        let whole = stored(position.depth(), &played, &bytes, result_of(&position));
        prop_assert_eq!(audit(&whole), vec![]);
        let mut damaged = whole.clone();
        damaged.moves.remove(lost.index(played.len()));
        prop_assert!(!audit(&damaged).is_empty());
    }
}
