//! RULES.md, "The seed's worked examples", each built move by move at depth 2.

use uttt::rules::{Address, BoardStatus, IllegalMove, Seat, Status};

use super::support::{
    DOUBLE_WIN, DRAWN_BOARD_BESIDE_TWO_WINS, X_WINS_BOARD_TWO, addr, closed_draw,
    five_boards_to_four, game, legal, legal_addresses, play,
};

#[test]
fn forced_board_x_plays_the_centre_of_the_top_left_board_and_o_must_play_in_the_centre_board() {
    let position = game(2, &["0.4"]);
    assert_eq!(position.turn(), Seat::O);
    assert_eq!(position.target(), Some(addr("4")));
    let expected: Vec<String> = (0..9).map(|c| format!("4.{c}")).collect();
    assert_eq!(legal_addresses(&position), expected);
    assert_eq!(position.check(&addr("0.0")), Err(IllegalMove::WrongBoard));
    assert_eq!(position.check(&addr("8.8")), Err(IllegalMove::WrongBoard));
}

#[test]
fn free_move_o_sends_x_to_the_won_top_right_board_and_x_may_play_any_empty_square_of_any_open_board()
 {
    let mut position = game(2, X_WINS_BOARD_TWO);
    assert_eq!(
        position.board_status(&addr("2")),
        Some(BoardStatus::Won(Seat::X))
    );
    play(&mut position, &["5.2"]); // O sends X to board [2]
    assert_eq!(position.turn(), Seat::X);
    assert_eq!(position.target(), Some(Address::ROOT));
    let moves = legal(&position);
    assert_eq!(moves.len(), 81 - 9 - 3);
    for board in [0, 1, 3, 4, 5, 6, 7, 8] {
        for cell in 0..9 {
            let address = addr(&format!("{board}.{cell}"));
            let taken = ["3.2", "4.2", "5.2"].contains(&address.to_string().as_str());
            let expected = if taken {
                Err(IllegalMove::CellOccupied)
            } else {
                Ok(())
            };
            assert_eq!(position.check(&address).map(|_| ()), expected, "{address}");
        }
    }
}

#[test]
fn double_win_o_wins_a_local_board_that_is_its_third_in_a_row_and_the_match_on_that_move() {
    let mut position = game(2, &DOUBLE_WIN[..DOUBLE_WIN.len() - 1]);
    assert_eq!(position.status(), Status::Ongoing);
    assert_eq!(position.board_status(&addr("8")), Some(BoardStatus::Open));
    let outcome = play(&mut position, &["8.8"]);
    assert_eq!(outcome.status, Status::Won(Seat::O));
    assert_eq!(
        outcome.decided().len(),
        2,
        "board [8] and the root, in one move"
    );
    assert_eq!(position.status(), Status::Won(Seat::O));
    assert!(legal(&position).is_empty());
}

#[test]
fn closed_draw_the_last_open_board_fills_without_a_line_and_with_no_global_line_the_match_is_drawn()
{
    let moves = closed_draw();
    let mut position = game(2, &moves[..moves.len() - 1]);
    let open: Vec<Address> = (0..9)
        .map(|b| addr(&b.to_string()))
        .filter(|b| position.board_status(b) == Some(BoardStatus::Open))
        .collect();
    assert_eq!(open, [addr("8")], "board [8] is the last open board");
    let outcome = play(&mut position, &moves[moves.len() - 1..]);
    assert_eq!(
        outcome.decided(),
        &[
            (Address::ROOT, BoardStatus::Drawn),
            (addr("8"), BoardStatus::Drawn)
        ]
    );
    assert_eq!(position.status(), Status::Drawn);
}

#[test]
fn ruling_no_move_inside_a_won_board() {
    let position = game(2, &[X_WINS_BOARD_TWO, &["5.2"]].concat());
    for cell in 0..9 {
        assert_eq!(
            position.check(&addr(&format!("2.{cell}"))),
            Err(IllegalMove::BoardClosed)
        );
    }
}

#[test]
fn ruling_a_drawn_board_does_not_count_toward_a_line() {
    let position = game(2, DRAWN_BOARD_BESIDE_TWO_WINS);
    assert_eq!(position.board_status(&addr("2")), Some(BoardStatus::Drawn));
    assert_eq!(
        position.status(),
        Status::Ongoing,
        "X X draw in the top row is no line"
    );
}

#[test]
fn ruling_more_boards_does_not_win() {
    let position = game(2, &five_boards_to_four());
    assert_eq!(position.status(), Status::Drawn);
}
