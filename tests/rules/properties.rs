//! Property tests over random games at every depth: the fast implementation
//! against the simple one, and the invariants of RULES.md.

use proptest::collection::vec;
use proptest::prelude::*;

use uttt::rules::{
    Address, BoardStatus, Depth, IllegalMove, MoveList, Position, Square, Status, decode, encode,
};

use super::simple::{Simple, coords_of};
use super::support::depth;

/// Plays the game the choices pick (`choice % number of legal moves` at each
/// ply) and checks both implementations at every ply. Every `full_every`
/// plies, every square's reason is compared and every legal move is played.
fn check_game(levels: u8, choices: &[u16], full_every: usize) {
    let depth = depth(levels);
    let mut fast = Position::new(depth);
    let mut simple = Simple::new(usize::from(levels));
    let mut moves = MoveList::new(depth);
    let mut record = Vec::new();
    let mut cells = String::new();
    for (ply, &choice) in choices.iter().enumerate() {
        let analysis = simple.analyse();
        assert_eq!(fast.ply() as usize, ply);
        assert_eq!(fast.turn(), simple.turn());
        assert_eq!(fast.status(), analysis.status);
        assert_eq!(fast.target().map(|t| t.coords().to_vec()), analysis.target);
        fast.legal_moves(&mut moves);
        let fast_legal: Vec<usize> = moves.iter().map(Square::index).collect();
        assert_eq!(fast_legal, analysis.legal, "legal moves at ply {ply}");
        assert_eq!(fast.count_legal_moves(), moves.len());
        assert_eq!(
            fast.status() == Status::Ongoing,
            !moves.is_empty(),
            "a player to move has a move"
        );

        let mut simple_decided: Vec<(Vec<u8>, BoardStatus)> = analysis
            .boards
            .iter()
            .filter(|(_, s)| s.is_decided())
            .map(|(a, s)| (a.clone(), *s))
            .collect();
        simple_decided.sort();
        let before = fast.decided_boards();
        let fast_decided: Vec<(Vec<u8>, BoardStatus)> = before
            .iter()
            .map(|(a, s)| (a.coords().to_vec(), *s))
            .collect();
        assert_eq!(fast_decided, simple_decided);

        let full = ply % full_every == 0 || levels <= 2;
        if full {
            cells.clear();
            fast.write_cells(&mut cells);
            for (index, mark) in cells.chars().enumerate() {
                assert_eq!(mark, simple.cell(index).map_or('.', |s| s.as_char()));
            }
        }
        // Every square is refused for the same reason as the simple
        // implementation gives, or accepted by both.
        let squares: Vec<usize> = if full {
            (0..depth.squares()).collect()
        } else {
            (0..16)
                .map(|k| (usize::from(choice) * 7_919 + k * 104_729) % depth.squares())
                .collect()
        };
        for index in squares {
            let address = Address::new(&coords_of(usize::from(levels), index)).unwrap();
            let expected = simple.reason(&analysis, address.coords());
            assert_eq!(
                fast.check(&address).map(|_| ()),
                expected,
                "{address} at ply {ply}"
            );
        }
        // Every legal move is accepted by play.
        let step = if full {
            1
        } else {
            moves.len().div_ceil(4).max(1)
        };
        for square in moves.iter().step_by(step) {
            let mut child = fast.clone();
            let outcome = child.play_square(square).unwrap();
            assert_eq!(child.ply() as usize, ply + 1);
            assert_eq!(outcome.status, child.status());
        }
        // Addresses of the wrong length, and squares of deeper trees, are bad addresses.
        for len in (0..=Address::MAX_LEN).filter(|&len| len != usize::from(levels)) {
            let address = Address::new(&[1, 2, 3, 4][..len]).unwrap();
            assert_eq!(fast.check(&address), Err(IllegalMove::BadAddress));
        }
        if let Some(too_big) = Square::new(Depth::FOUR, depth.squares()) {
            assert_eq!(
                fast.clone().play_square(too_big),
                Err(IllegalMove::BadAddress)
            );
        }

        if moves.is_empty() {
            break;
        }
        let square = moves.as_slice()[usize::from(choice) % moves.len()];
        let outcome = fast.play_square(square).unwrap();
        simple.play_analysed(&analysis, square.index()).unwrap();
        record.push(square);
        assert_eq!(fast.last_move(), Some(square));
        // A decided board never changes; the new ones are what the outcome reports.
        let after = fast.decided_boards();
        assert!(after.is_sorted(), "decided boards are in address order");
        for board in &before {
            assert!(
                after.binary_search(board).is_ok(),
                "{board:?} changed at ply {ply}"
            );
        }
        let mut new: Vec<(Address, BoardStatus)> = after
            .into_iter()
            .filter(|b| before.binary_search(b).is_err())
            .collect();
        new.sort();
        let mut reported = outcome.decided().to_vec();
        reported.sort();
        assert_eq!(new, reported);
    }
    let (decoded, decoded_moves) = decode(&encode(depth, &record)).unwrap();
    assert_eq!(decoded_moves, record);
    assert_eq!(decoded, fast);
    assert_eq!(Position::replay(depth, &record).unwrap(), fast);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fast_and_simple_agree_over_random_games_at_depth_one(choices in vec(any::<u16>(), 0..=9)) {
        check_game(1, &choices, 1);
    }

    #[test]
    fn fast_and_simple_agree_over_random_games_at_depth_two(choices in vec(any::<u16>(), 0..=81)) {
        check_game(2, &choices, 1);
    }

    #[test]
    fn depth_two_legal_moves_agree_with_ai_ultimate_tictactoe(choices in vec(any::<u16>(), 0..=81)) {
        use ai_ultimate_tictactoe as other;
        let mut ours = Position::new(depth(2));
        let mut theirs = other::Position::start();
        let mut moves = MoveList::new(depth(2));
        for choice in choices {
            ours.legal_moves(&mut moves);
            let mut their_moves: Vec<usize> = theirs
                .legal_moves()
                .iter()
                .map(|m| usize::from(m.board()) * 9 + usize::from(m.cell()))
                .collect();
            their_moves.sort_unstable();
            prop_assert_eq!(moves.iter().map(Square::index).collect::<Vec<_>>(), their_moves);
            if moves.is_empty() {
                break;
            }
            let square = moves.as_slice()[usize::from(choice) % moves.len()];
            ours.play_square(square).unwrap();
            let index = square.index() as u8;
            theirs = theirs.play(other::Move::new(index / 9, index % 9)).unwrap();
        }
        let their_status = match theirs.result() {
            other::GameResult::Ongoing => Status::Ongoing,
            other::GameResult::Draw => Status::Drawn,
            other::GameResult::Win(other::Player::X) => Status::Won(uttt::rules::Seat::X),
            other::GameResult::Win(other::Player::O) => Status::Won(uttt::rules::Seat::O),
        };
        prop_assert_eq!(ours.status(), their_status);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fast_and_simple_agree_over_random_games_at_depth_three(choices in vec(any::<u16>(), 0..=729)) {
        check_game(3, &choices, 50);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn fast_and_simple_agree_over_random_games_at_depth_four(choices in vec(any::<u16>(), 6_561)) {
        check_game(4, &choices, 500);
    }
}
