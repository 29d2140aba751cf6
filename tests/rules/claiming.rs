//! RULES.md, "Claiming and drawing boards" (the deep cases are in `deep`).

use uttt::rules::{Address, BoardStatus, IllegalMove, Position, Seat, Status};

use super::support::{
    DOUBLE_WIN, DRAWN_BOARD_BESIDE_TWO_WINS, X_WINS_BOARD_TWO, addr, closed_draw, depth,
    five_boards_to_four, game, legal, legal_addresses, play,
};

#[test]
fn three_squares_in_a_line_win_a_board() {
    let mut position = game(2, &X_WINS_BOARD_TWO[..4]);
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Open));
    let outcome = play(&mut position, &X_WINS_BOARD_TWO[4..]);
    assert_eq!(
        position.board_status(&addr("2")),
        Some(BoardStatus::Won(Seat::X))
    );
    assert_eq!(outcome.decided(), &[(addr("2"), BoardStatus::Won(Seat::X))]);
    assert_eq!(outcome.status, Status::Ongoing);
}

#[test]
fn a_won_board_closes_at_once() {
    let position = game(2, X_WINS_BOARD_TWO);
    for cell in 0..9 {
        let address = addr(&format!("2.{cell}"));
        assert_eq!(
            position.check(&address),
            Err(IllegalMove::BoardClosed),
            "{address}"
        );
    }
    // Even with a free move, no square of board 2 is legal.
    let position = game(2, &[X_WINS_BOARD_TWO, &["5.2"]].concat());
    assert_eq!(position.target(), Some(Address::ROOT));
    assert!(legal(&position).iter().all(|s| s.index() / 9 != 2));
    assert_eq!(position.check(&addr("2.0")), Err(IllegalMove::BoardClosed));
}

#[test]
fn a_won_child_board_is_a_held_position_of_its_parent() {
    // O's boards 6, 7 and 8 are three held positions in the root's bottom row.
    let position = game(2, DOUBLE_WIN);
    for board in ["6", "7", "8"] {
        assert_eq!(
            position.board_status(&addr(board)),
            Some(BoardStatus::Won(Seat::O))
        );
    }
    assert_eq!(position.status(), Status::Won(Seat::O));
}

#[test]
fn a_board_with_all_nine_positions_decided_and_no_line_is_drawn() {
    let mut position = game(
        2,
        &DRAWN_BOARD_BESIDE_TWO_WINS[..DRAWN_BOARD_BESIDE_TWO_WINS.len() - 1],
    );
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Open));
    let outcome = play(&mut position, &["2.2"]);
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Drawn));
    assert_eq!(outcome.decided(), &[(addr("2"), BoardStatus::Drawn)]);
}

#[test]
fn a_drawn_board_closes_and_counts_for_neither_player() {
    // X holds boards 0 and 1; board 2, the third of the top row, is drawn.
    let position = game(2, DRAWN_BOARD_BESIDE_TWO_WINS);
    assert_eq!(
        position.board_status(&addr("0")),
        Some(BoardStatus::Won(Seat::X))
    );
    assert_eq!(
        position.board_status(&addr("1")),
        Some(BoardStatus::Won(Seat::X))
    );
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Drawn));
    assert_eq!(position.status(), Status::Ongoing);
    // Closed: the last move sent O to board 2, which relaxes to the root.
    assert_eq!(position.target(), Some(Address::ROOT));
    assert!(
        legal(&position)
            .iter()
            .all(|s| !(18..27).contains(&s.index()))
    );
}

#[test]
fn a_full_board_without_a_line_is_drawn() {
    // Depth 1, the ninth square: X o X / X o o / o X X fills without a line.
    let position = game(1, &["0", "1", "2", "4", "3", "5", "7", "6", "8"]);
    assert_eq!(position.status(), Status::Drawn);
}

#[test]
fn a_move_that_fills_a_board_and_completes_a_line_wins_it() {
    let position = game(1, &["0", "1", "2", "4", "3", "5", "7", "8", "6"]);
    assert_eq!(position.status(), Status::Won(Seat::X));
}

#[test]
fn there_is_no_early_draw_when_no_line_is_left() {
    // Depth 1 after eight moves: nobody can make a line with the last square.
    let position = game(1, &["0", "1", "2", "4", "3", "5", "7", "6"]);
    assert_eq!(position.status(), Status::Ongoing);
    assert_eq!(legal(&position).len(), 1);
    // Depth 2: board 2 has one empty square and no line left; it stays open and playable.
    let position = game(
        2,
        &DRAWN_BOARD_BESIDE_TWO_WINS[..DRAWN_BOARD_BESIDE_TWO_WINS.len() - 1],
    );
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Open));
    assert_eq!(position.check(&addr("2.2")).map(|s| s.index()), Ok(20));
}

#[test]
fn a_win_cascades_upward_in_the_same_move() {
    let mut position = game(2, &DOUBLE_WIN[..DOUBLE_WIN.len() - 1]);
    let outcome = play(&mut position, &DOUBLE_WIN[DOUBLE_WIN.len() - 1..]);
    assert_eq!(
        outcome.decided(),
        &[
            (Address::ROOT, BoardStatus::Won(Seat::O)),
            (addr("8"), BoardStatus::Won(Seat::O))
        ]
    );
    assert_eq!(outcome.status, Status::Won(Seat::O));
}

#[test]
fn the_match_ends_when_the_root_is_decided() {
    let mut position = game(2, DOUBLE_WIN);
    assert_eq!(position.status(), Status::Won(Seat::O));
    assert_eq!(
        position.board_status(&Address::ROOT),
        Some(BoardStatus::Won(Seat::O))
    );
    assert_eq!(position.target(), None);
    assert!(legal(&position).is_empty());
    assert_eq!(position.count_legal_moves(), 0);
    // Every square, even an empty one of an open board, is now in a closed board.
    assert_eq!(position.board_status(&addr("0")), Some(BoardStatus::Open));
    assert_eq!(position.play(&addr("0.0")), Err(IllegalMove::BoardClosed));
    assert_eq!(position.play(&addr("0")), Err(IllegalMove::BadAddress));
    assert_eq!(position.ply(), DOUBLE_WIN.len() as u32);
}

#[test]
fn a_drawn_root_is_a_draw() {
    let position = game(2, &closed_draw());
    assert_eq!(position.status(), Status::Drawn);
    assert_eq!(position.status().winner(), None);
    assert!(legal(&position).is_empty());
}

#[test]
fn claiming_more_boards_than_the_opponent_wins_nothing() {
    let position = game(2, &five_boards_to_four());
    let count = |seat| {
        position
            .decided_boards()
            .iter()
            .filter(|(a, s)| a.len() == 1 && *s == BoardStatus::Won(seat))
            .count()
    };
    assert_eq!((count(Seat::X), count(Seat::O)), (5, 4));
    assert_eq!(position.status(), Status::Drawn);
}

#[test]
fn decided_boards_are_listed_root_first_then_in_address_order() {
    let position = game(2, DOUBLE_WIN);
    let decided: Vec<String> = position
        .decided_boards()
        .iter()
        .map(|(a, _)| a.to_string())
        .collect();
    assert_eq!(decided, ["", "6", "7", "8"]);
    let position = game(2, &closed_draw());
    let boards: Vec<(String, BoardStatus)> = position
        .decided_boards()
        .iter()
        .map(|(a, s)| (a.to_string(), *s))
        .collect();
    use BoardStatus::{Drawn, Won};
    use Seat::{O, X};
    let expected = [
        ("", Drawn),
        ("0", Won(X)),
        ("1", Won(O)),
        ("2", Won(X)),
        ("3", Won(X)),
        ("4", Won(O)),
    ]
    .into_iter()
    .chain([("5", Won(O)), ("6", Won(O)), ("7", Won(X)), ("8", Drawn)])
    .map(|(a, s)| (a.to_string(), s))
    .collect::<Vec<_>>();
    assert_eq!(boards, expected);
    assert!(Position::new(depth(3)).decided_boards().is_empty());
}

#[test]
fn a_root_with_no_line_left_is_not_drawn_before_its_last_board_closes() {
    // `closed_draw` up to X's win of board 7: the root reads X O X / X O O /
    // O X _, so no line can be made any more, yet board 8 is open. No early
    // draw: the match goes on in board 8 until it closes.
    let moves = closed_draw();
    let seven = moves
        .iter()
        .position(|m| *m == "7.8")
        .expect("X wins board 7")
        + 1;
    let position = game(2, &moves[..seven]);
    assert_eq!(
        position.board_status(&addr("7")),
        Some(BoardStatus::Won(Seat::X))
    );
    assert_eq!(
        position.board_status(&Address::ROOT),
        Some(BoardStatus::Open)
    );
    assert_eq!(position.status(), Status::Ongoing);
    let left = legal_addresses(&position);
    assert!(!left.is_empty());
    assert!(left.iter().all(|a| a.starts_with("8.")), "{left:?}");
}

#[test]
fn a_win_that_fills_the_root_without_a_line_draws_the_match_in_the_same_move() {
    // The last move of `five_boards_to_four` wins board 8 for X: the leaf's
    // win closes the root, which has no line, so both are decided at once.
    let moves = five_boards_to_four();
    let (before, last) = moves.split_at(moves.len() - 1);
    let mut position = game(2, before);
    assert_eq!(position.status(), Status::Ongoing);
    let outcome = play(&mut position, last);
    assert_eq!(
        outcome.decided(),
        &[
            (Address::ROOT, BoardStatus::Drawn),
            (addr("8"), BoardStatus::Won(Seat::X))
        ]
    );
    assert_eq!(position.status(), Status::Drawn);
}
