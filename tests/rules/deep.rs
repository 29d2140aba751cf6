//! The closing and relaxation rules at depths 3 and 4, on positions from
//! seeded random games (low-ply perft cannot reach them: no board closes
//! before ply 9 at depth 3).

use uttt::rules::{Address, BoardStatus, IllegalMove, Position, Seat, Square, Status};

use super::support::{Step, all_squares, depth, find_in_random_games, legal};

/// The position after `moves` of a random game of depth `levels`.
fn replay(levels: u8, moves: &[Square]) -> Position {
    Position::replay(depth(levels), moves).unwrap()
}

/// The boards decided by the step's move, of `len` coordinates.
fn decided_of_len(step: &Step<'_>, len: usize) -> Vec<(Address, BoardStatus)> {
    step.outcome
        .decided()
        .iter()
        .copied()
        .filter(|(a, _)| a.len() == len)
        .collect()
}

/// The board the step's move sent the opponent to: its address without the
/// first coordinate.
fn sent_to(step: &Step<'_>) -> Address {
    step.square
        .to_address(step.after.depth())
        .without_first()
        .unwrap()
}

/// Squares under `board`.
fn squares_under(position: &Position, board: &Address) -> Vec<Square> {
    all_squares(position.depth())
        .filter(|s| board.contains(&s.to_address(position.depth())))
        .collect()
}

/// The legal moves under a target, from first principles: empty squares none
/// of whose enclosing boards is decided.
fn expected_legal_under(position: &Position, target: &Address) -> Vec<Square> {
    squares_under(position, target)
        .into_iter()
        .filter(|&s| position.cell(s).is_none())
        .filter(|&s| playable(position, &s.to_address(position.depth()).parent().unwrap()))
        .collect()
}

/// Every square under `board` is refused as `board_closed` and none is legal.
fn assert_closed(position: &Position, board: &Address) {
    let moves = legal(position);
    for square in squares_under(position, board) {
        assert_eq!(
            position.check_square(square),
            Err(IllegalMove::BoardClosed),
            "{board}"
        );
        assert!(!moves.contains(&square));
    }
}

fn mover(step: &Step<'_>) -> Seat {
    step.before.turn()
}

fn a_won_leaf_board_closes_its_squares(levels: u8) {
    let leaf = usize::from(levels) - 1;
    let moves = find_in_random_games(levels, |step| {
        !step.outcome.status.is_over()
            && decided_of_len(step, leaf)
                .iter()
                .any(|(_, s)| matches!(s, BoardStatus::Won(_)))
    });
    let position = replay(levels, &moves);
    let last = *moves.last().unwrap();
    let board = last.to_address(depth(levels)).parent().unwrap();
    assert_eq!(
        position.board_status(&board),
        Some(BoardStatus::Won(Seat::to_move_at(position.ply() - 1)))
    );
    assert_closed(&position, &board);
}

#[test]
fn at_depth_three_a_won_board_deep_in_the_tree_closes_its_squares() {
    a_won_leaf_board_closes_its_squares(3);
}

#[test]
fn at_depth_four_a_won_board_deep_in_the_tree_closes_its_squares() {
    a_won_leaf_board_closes_its_squares(4);
}

fn a_drawn_leaf_board_closes_and_counts_for_nobody(levels: u8) {
    let leaf = usize::from(levels) - 1;
    let moves = find_in_random_games(levels, |step| {
        !step.outcome.status.is_over()
            && decided_of_len(step, leaf)
                .iter()
                .any(|(_, s)| *s == BoardStatus::Drawn)
    });
    let position = replay(levels, &moves);
    let board = moves
        .last()
        .unwrap()
        .to_address(depth(levels))
        .parent()
        .unwrap();
    assert_eq!(position.board_status(&board), Some(BoardStatus::Drawn));
    assert!(
        squares_under(&position, &board)
            .iter()
            .all(|&s| position.cell(s).is_some())
    );
    assert_closed(&position, &board);
    // The parent gained a decided position, but no held one: it cannot have been won by this move.
    let parent = board.parent().unwrap();
    let before = replay(levels, &moves[..moves.len() - 1]);
    assert_eq!(before.board_status(&parent), Some(BoardStatus::Open));
    assert!(matches!(
        position.board_status(&parent),
        Some(BoardStatus::Open | BoardStatus::Drawn)
    ));
}

#[test]
fn at_depth_three_a_drawn_board_deep_in_the_tree_closes_and_counts_for_nobody() {
    a_drawn_leaf_board_closes_and_counts_for_nobody(3);
}

#[test]
fn at_depth_four_a_drawn_board_deep_in_the_tree_closes_and_counts_for_nobody() {
    a_drawn_leaf_board_closes_and_counts_for_nobody(4);
}

/// A board of `len` coordinates won while one of its children was open.
fn a_won_middle_board_makes_its_open_children_unplayable(levels: u8, len: usize) {
    let has_open_child = |position: &Position, board: &Address| {
        (0..9).any(|p| position.board_status(&board.child(p).unwrap()) == Some(BoardStatus::Open))
    };
    let moves = find_in_random_games(levels, |step| {
        !step.outcome.status.is_over()
            && decided_of_len(step, len)
                .iter()
                .any(|(b, s)| matches!(s, BoardStatus::Won(_)) && has_open_child(step.after, b))
    });
    let position = replay(levels, &moves);
    let square = *moves.last().unwrap();
    let mut board = square.to_address(depth(levels));
    while board.len() > len {
        board = board.parent().unwrap();
    }
    assert_eq!(
        position.board_status(&board),
        Some(BoardStatus::Won(Seat::to_move_at(position.ply() - 1)))
    );
    let open_children: Vec<Address> = (0..9)
        .map(|p| board.child(p).unwrap())
        .filter(|c| position.board_status(c) == Some(BoardStatus::Open))
        .collect();
    assert!(!open_children.is_empty());
    for child in &open_children {
        // Still open itself, with empty squares, yet none of them can be played.
        assert!(
            squares_under(&position, child)
                .iter()
                .any(|&s| position.cell(s).is_none())
        );
        assert_closed(&position, child);
    }
}

#[test]
fn at_depth_three_a_won_middle_board_makes_its_open_children_unplayable() {
    a_won_middle_board_makes_its_open_children_unplayable(3, 1);
}

#[test]
fn at_depth_four_a_won_middle_board_makes_its_open_children_unplayable() {
    a_won_middle_board_makes_its_open_children_unplayable(4, 2);
    a_won_middle_board_makes_its_open_children_unplayable(4, 1);
}

/// The sent-to board is decided, and the deepest playable board on its path
/// has `target_len` coordinates: the target is that board, and the legal
/// moves are exactly its open squares.
fn the_target_relaxes_to(levels: u8, target_len: usize) {
    let moves = find_in_random_games(levels, |step| {
        !step.outcome.status.is_over() && {
            let sent = sent_to(step);
            let mut deepest = sent;
            while !playable(step.after, &deepest) {
                deepest = deepest.parent().unwrap();
            }
            deepest.len() == target_len && sent.len() > target_len
        }
    });
    let position = replay(levels, &moves);
    let square = *moves.last().unwrap();
    let sent = square.to_address(depth(levels)).without_first().unwrap();
    let mut target = sent;
    while target.len() > target_len {
        target = target.parent().unwrap();
    }
    assert!(
        !playable(&position, &sent),
        "the sent-to board {sent} is not playable"
    );
    assert!(playable(&position, &target));
    assert_eq!(position.target(), Some(target), "sent to {sent}");
    assert_eq!(legal(&position), expected_legal_under(&position, &target));
    assert!(!legal(&position).is_empty());
    // Outside the target: wrong_board, unless closed.
    for square in all_squares(depth(levels))
        .filter(|s| !target.contains(&s.to_address(depth(levels))))
        .take(2_000)
    {
        assert!(matches!(
            position.check_square(square),
            Err(IllegalMove::WrongBoard | IllegalMove::BoardClosed)
        ));
    }
}

/// A board is playable when neither it nor any ancestor is decided.
fn playable(position: &Position, board: &Address) -> bool {
    let mut board = Some(*board);
    while let Some(b) = board {
        if position.board_status(&b) != Some(BoardStatus::Open) {
            return false;
        }
        board = b.parent();
    }
    true
}

#[test]
fn at_depth_three_the_target_relaxes_by_one_level_when_the_sent_to_board_is_decided() {
    the_target_relaxes_to(3, 1);
}

#[test]
fn at_depth_three_the_target_relaxes_to_the_root_when_the_sent_to_boards_parent_is_decided() {
    the_target_relaxes_to(3, 0);
}

#[test]
fn at_depth_four_the_target_relaxes_by_one_level() {
    the_target_relaxes_to(4, 2);
}

#[test]
fn at_depth_four_the_target_relaxes_by_two_levels() {
    the_target_relaxes_to(4, 1);
}

#[test]
fn at_depth_four_the_target_relaxes_all_the_way_to_the_root() {
    the_target_relaxes_to(4, 0);
}

#[test]
fn at_depth_three_a_win_cascades_two_levels_in_one_move() {
    let moves = find_in_random_games(3, |step| {
        let won = BoardStatus::Won(mover(step));
        !step.outcome.status.is_over()
            && step.outcome.decided().len() == 2
            && step.outcome.decided().iter().all(|(_, s)| *s == won)
    });
    let before = replay(3, &moves[..moves.len() - 1]);
    let mut position = before.clone();
    let outcome = position.play_square(*moves.last().unwrap()).unwrap();
    let leaf = moves.last().unwrap().to_address(depth(3)).parent().unwrap();
    let middle = leaf.parent().unwrap();
    let seat = before.turn();
    assert_eq!(before.board_status(&leaf), Some(BoardStatus::Open));
    assert_eq!(before.board_status(&middle), Some(BoardStatus::Open));
    assert_eq!(
        outcome.decided(),
        &[
            (middle, BoardStatus::Won(seat)),
            (leaf, BoardStatus::Won(seat))
        ]
    );
    assert_eq!(position.board_status(&middle), Some(BoardStatus::Won(seat)));
    assert_eq!(position.status(), Status::Ongoing);
}

#[test]
fn at_depth_three_a_winning_move_cascades_from_a_leaf_board_to_the_root() {
    let moves = find_in_random_games(3, |step| matches!(step.outcome.status, Status::Won(_)));
    let before = replay(3, &moves[..moves.len() - 1]);
    let mut position = before.clone();
    let outcome = position.play_square(*moves.last().unwrap()).unwrap();
    let won = BoardStatus::Won(before.turn());
    let leaf = moves.last().unwrap().to_address(depth(3)).parent().unwrap();
    assert_eq!(
        outcome.decided(),
        &[
            (Address::ROOT, won),
            (leaf.parent().unwrap(), won),
            (leaf, won)
        ]
    );
}

#[test]
fn at_depth_three_a_middle_board_whose_positions_are_all_decided_without_a_line_is_drawn() {
    let moves = find_in_random_games(3, |step| {
        !step.outcome.status.is_over()
            && decided_of_len(step, 1)
                .iter()
                .any(|(_, s)| *s == BoardStatus::Drawn)
    });
    let position = replay(3, &moves);
    let middle = moves
        .last()
        .unwrap()
        .to_address(depth(3))
        .parent()
        .unwrap()
        .parent()
        .unwrap();
    assert_eq!(position.board_status(&middle), Some(BoardStatus::Drawn));
    let children: Vec<BoardStatus> = (0..9)
        .map(|p| position.board_status(&middle.child(p).unwrap()).unwrap())
        .collect();
    assert!(children.iter().all(|s| s.is_decided()), "{children:?}");
    assert_closed(&position, &middle);
}

#[test]
fn at_depth_four_a_win_cascades_from_a_leaf_board_through_the_levels_above() {
    let moves = find_in_random_games(4, |step| {
        let won = BoardStatus::Won(mover(step));
        step.outcome.decided().len() >= 2 && step.outcome.decided().iter().all(|(_, s)| *s == won)
    });
    let position = replay(4, &moves);
    let square = *moves.last().unwrap();
    let leaf = square.to_address(depth(4)).parent().unwrap();
    let won = BoardStatus::Won(Seat::to_move_at(position.ply() - 1));
    assert_eq!(position.board_status(&leaf), Some(won));
    assert_eq!(position.board_status(&leaf.parent().unwrap()), Some(won));
}
