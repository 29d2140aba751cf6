//! RULES.md, "Turns and the send rule" (the deep relaxation cases are in `deep`).

use uttt::rules::{Address, BoardStatus, IllegalMove, MoveList, Position, Seat, Square};

use super::support::{
    Rng, X_WINS_BOARD_TWO, addr, all_squares, depth, game, legal, legal_addresses, play,
};

#[test]
fn x_moves_first_and_the_players_alternate() {
    for levels in 1..=4 {
        let depth = depth(levels);
        let mut position = Position::new(depth);
        let mut moves = MoveList::new(depth);
        let mut rng = Rng(u64::from(levels));
        let mut cells = String::new();
        for ply in 0..9 {
            assert_eq!(position.ply(), ply);
            let seat = if ply % 2 == 0 { Seat::X } else { Seat::O };
            assert_eq!(position.turn(), seat);
            position.legal_moves(&mut moves);
            let square = moves.as_slice()[rng.below(moves.len())];
            if position.play_square(square).unwrap().status.is_over() {
                break;
            }
            assert_eq!(position.cell(square), Some(seat));
            cells.clear();
            position.write_cells(&mut cells);
            assert_eq!(cells.as_bytes()[square.index()] as char, seat.as_char());
        }
    }
}

#[test]
fn the_first_move_may_be_any_square() {
    for levels in 1..=4 {
        let depth = depth(levels);
        let position = Position::new(depth);
        assert_eq!(position.target(), Some(Address::ROOT));
        assert_eq!(legal(&position), all_squares(depth).collect::<Vec<_>>());
        for square in all_squares(depth) {
            assert_eq!(position.check_square(square), Ok(()));
        }
    }
}

#[test]
fn a_move_sends_the_opponent_to_the_board_named_by_the_rest_of_its_address() {
    for (levels, first, sent) in [
        (2, "1.2", "2"),
        (3, "0.1.2", "1.2"),
        (4, "0.1.2.3", "1.2.3"),
        (4, "8.0.0.7", "0.0.7"),
    ] {
        let position = game(levels, &[first]);
        assert_eq!(position.target(), Some(addr(sent)), "{first}");
        let expected: Vec<String> = (0..9).map(|p| format!("{sent}.{p}")).collect();
        assert_eq!(legal_addresses(&position), expected);
    }
    // And the opponent chooses the remaining coordinate, sending back in turn.
    let position = game(3, &["0.1.2", "1.2.5"]);
    assert_eq!(position.target(), Some(addr("2.5")));
}

#[test]
fn at_depth_two_playing_cell_c_of_any_board_sends_the_opponent_to_board_c() {
    for square in all_squares(depth(2)) {
        let mut position = Position::new(depth(2));
        position.play_square(square).unwrap();
        let cell = square.to_address(depth(2)).coords()[1];
        assert_eq!(position.target(), Some(addr(&cell.to_string())));
        assert_eq!(
            legal(&position).len(),
            if square.index() / 9 == usize::from(cell) {
                8
            } else {
                9
            }
        );
    }
}

#[test]
fn at_depth_one_the_target_is_always_the_root() {
    let mut position = Position::new(depth(1));
    for cell in ["4", "0", "8", "2", "1", "7", "3"] {
        assert_eq!(position.target(), Some(Address::ROOT));
        play(&mut position, &[cell]);
    }
    assert_eq!(position.target(), Some(Address::ROOT));
    assert_eq!(legal_addresses(&position), ["5", "6"]);
}

#[test]
fn a_square_outside_the_target_board_is_refused_as_wrong_board() {
    let mut position = game(2, &["0.4"]);
    assert_eq!(position.check(&addr("3.4")), Err(IllegalMove::WrongBoard));
    assert_eq!(position.play(&addr("3.4")), Err(IllegalMove::WrongBoard));
    assert_eq!(position.ply(), 1, "a refused move changes nothing");
    let position = game(3, &["0.1.2"]);
    assert_eq!(position.check(&addr("1.3.0")), Err(IllegalMove::WrongBoard));
    assert_eq!(position.check(&addr("2.1.0")), Err(IllegalMove::WrongBoard));
    assert!(position.check(&addr("1.2.0")).is_ok());
}

#[test]
fn an_occupied_square_is_refused_as_cell_occupied() {
    let position = game(2, &["4.4"]);
    assert_eq!(position.check(&addr("4.4")), Err(IllegalMove::CellOccupied));
    let position = game(1, &["4"]);
    assert_eq!(position.check(&addr("4")), Err(IllegalMove::CellOccupied));
}

#[test]
fn a_target_board_that_is_decided_relaxes_to_its_parent() {
    // Board 2 is won by X; O sends X there with cell 2: the target relaxes to the root.
    let mut position = game(2, X_WINS_BOARD_TWO);
    assert_eq!(
        position.board_status(&addr("2")),
        Some(BoardStatus::Won(Seat::X))
    );
    assert_eq!(position.target(), Some(addr("5")));
    play(&mut position, &["5.2"]);
    assert_eq!(position.target(), Some(Address::ROOT));
}

#[test]
fn legal_moves_are_the_empty_squares_of_the_target_outside_decided_boards() {
    let position = game(2, &[X_WINS_BOARD_TWO, &["5.2"]].concat());
    let expected: Vec<Square> = all_squares(depth(2))
        .filter(|&s| position.cell(s).is_none())
        .filter(|&s| {
            let board = s.to_address(depth(2)).parent().unwrap();
            position.board_status(&board) == Some(BoardStatus::Open)
        })
        .collect();
    assert_eq!(expected.len(), 81 - 9 - 3);
    assert_eq!(legal(&position), expected);
}

#[test]
fn a_player_to_move_always_has_a_legal_move() {
    for levels in 1..=3 {
        let depth = depth(levels);
        let mut moves = MoveList::new(depth);
        for seed in 0..20 {
            let mut rng = Rng(seed);
            let mut position = Position::new(depth);
            while !position.status().is_over() {
                position.legal_moves(&mut moves);
                assert!(
                    !moves.is_empty(),
                    "depth {levels} seed {seed} ply {}",
                    position.ply()
                );
                assert_eq!(position.count_legal_moves(), moves.len());
                position
                    .play_square(moves.as_slice()[rng.below(moves.len())])
                    .unwrap();
            }
            position.legal_moves(&mut moves);
            assert!(moves.is_empty());
            assert_eq!(position.target(), None);
        }
    }
}

#[test]
fn legal_moves_refill_a_reused_list_without_reallocating_it() {
    for levels in 1..=4 {
        let depth = depth(levels);
        let mut moves = MoveList::new(depth);
        let buffer = moves.as_slice().as_ptr();
        let mut rng = Rng(9);
        let mut position = Position::new(depth);
        for _ in 0..200 {
            position.legal_moves(&mut moves);
            assert_eq!(moves.as_slice().as_ptr(), buffer);
            if moves.is_empty() {
                break;
            }
            position
                .play_square(moves.as_slice()[rng.below(moves.len())])
                .unwrap();
        }
    }
    // A list from `default` grows once, and then holds the same moves.
    let mut grown = MoveList::default();
    let position = Position::new(depth(2));
    position.legal_moves(&mut grown);
    assert_eq!(grown.as_slice(), legal(&position));
}
