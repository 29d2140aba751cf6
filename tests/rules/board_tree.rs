//! RULES.md, "Board tree and addresses".

use uttt::rules::{
    Address, AddressError, BoardStatus, Depth, IllegalMove, Position, Seat, Square, Status,
};

use super::support::{addr, depth, game, legal};

#[test]
fn a_match_has_a_depth_from_one_to_four() {
    for levels in 1..=4 {
        assert_eq!(Depth::new(levels).map(Depth::get), Ok(levels));
        assert_eq!(Position::new(depth(levels)).depth().get(), levels);
    }
    for levels in [0, 5, 9, u8::MAX] {
        assert!(Depth::new(levels).is_err(), "depth {levels}");
    }
}

#[test]
fn each_depth_has_the_stated_numbers_of_squares_and_boards() {
    for (levels, squares, boards) in [(1, 9, 1), (2, 81, 10), (3, 729, 91), (4, 6_561, 820)] {
        let depth = depth(levels);
        assert_eq!(depth.squares(), squares);
        assert_eq!(depth.boards(), boards);
        let position = Position::new(depth);
        let mut cells = String::new();
        position.write_cells(&mut cells);
        assert_eq!(cells.len(), squares);
        assert_eq!(legal(&position).len(), squares);
        // Every address shorter than the depth names a board, and no other.
        let mut board_count = 0;
        let mut frontier = vec![Address::ROOT];
        while let Some(address) = frontier.pop() {
            if position.board_status(&address).is_some() {
                board_count += 1;
                frontier.extend((0..9).filter_map(|p| address.child(p)));
            } else {
                assert_eq!(address.len(), usize::from(levels), "{address}");
            }
        }
        assert_eq!(board_count, boards, "depth {levels}");
    }
}

#[test]
fn positions_are_numbered_row_by_row_from_the_top_left() {
    // With 0 1 2 / 3 4 5 / 6 7 8, these eight triples are the lines.
    let lines = [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [0, 3, 6],
        [1, 4, 7],
        [2, 5, 8],
        [0, 4, 8],
        [2, 4, 6],
    ];
    for line in lines {
        let others: Vec<u8> = (0..9).filter(|p| !line.contains(p)).collect();
        let moves = [line[0], others[0], line[1], others[1], line[2]].map(|p| p.to_string());
        let position = game(1, &moves.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(position.status(), Status::Won(Seat::X), "line {line:?}");
    }
    // Triples that would be lines under another numbering are not.
    for triple in [[2, 3, 4], [5, 6, 7], [0, 1, 3], [0, 2, 6], [1, 3, 5]] {
        let others: Vec<u8> = (0..9).filter(|p| !triple.contains(p)).collect();
        let moves = [triple[0], others[0], triple[1], others[1], triple[2]].map(|p| p.to_string());
        let position = game(1, &moves.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(position.status(), Status::Ongoing, "triple {triple:?}");
    }
}

#[test]
fn the_deepest_positions_are_squares_and_those_above_are_child_boards() {
    // Depth 2: position 5 of board [3] is a square.
    let position = game(2, &["3.5"]);
    assert_eq!(position.board_status(&addr("3")), Some(BoardStatus::Open));
    assert_eq!(position.board_status(&addr("3.5")), None);
    assert_eq!(
        position.cell(Square::from_address(depth(2), &addr("3.5")).unwrap()),
        Some(Seat::X)
    );
    assert_eq!(Square::from_address(depth(2), &addr("3")), None);
    // Depth 3: position 5 of board [3] is the board [3, 5], whose positions are squares.
    let position = game(3, &["3.5.7"]);
    assert_eq!(position.board_status(&addr("3.5")), Some(BoardStatus::Open));
    assert_eq!(position.board_status(&addr("3.5.7")), None);
    assert_eq!(
        position.cell(Square::from_address(depth(3), &addr("3.5.7")).unwrap()),
        Some(Seat::X)
    );
}

#[test]
fn a_square_address_has_one_coordinate_per_level_from_the_root_down() {
    for levels in 1..=4u8 {
        let depth = depth(levels);
        let position = Position::new(depth);
        let coords: Vec<u8> = (0..levels).map(|i| 8 - i).collect();
        let address = Address::new(&coords).unwrap();
        let square = Square::from_address(depth, &address).unwrap();
        assert_eq!(square.to_address(depth), address);
        assert_eq!(position.check(&address), Ok(square));
        for len in 0..=4 {
            if len != usize::from(levels) {
                let other = Address::new(&[0, 0, 0, 0][..len]).unwrap();
                assert_eq!(Square::from_address(depth, &other), None);
                assert_eq!(
                    position.check(&other),
                    Err(IllegalMove::BadAddress),
                    "{other} at depth {levels}"
                );
            }
        }
    }
}

#[test]
fn a_coordinate_is_a_position_from_zero_to_eight() {
    assert_eq!(
        Address::new(&[9]),
        Err(AddressError::CoordinateOutOfRange(9))
    );
    assert_eq!(
        Address::new(&[0, 0, 0, 0, 0]),
        Err(AddressError::TooManyCoordinates(5))
    );
    assert_eq!(Address::new(&[]), Ok(Address::ROOT));
    assert_eq!(addr("").child(9), None);
    assert_eq!(addr("1.2.3.4").child(0), None);
    assert_eq!(
        "9".parse::<Address>(),
        Err(AddressError::CoordinateOutOfRange(9))
    );
    assert_eq!(
        "0.0.0.0.0".parse::<Address>(),
        Err(AddressError::TooManyCoordinates(5))
    );
    for malformed in ["10", "4..0", ".4", "4.", "a", "4,0", " 4", "-1"] {
        assert_eq!(
            malformed.parse::<Address>(),
            Err(AddressError::Malformed),
            "{malformed:?}"
        );
    }
}

#[test]
fn a_board_address_is_a_prefix_of_length_zero_to_d_minus_one_and_the_root_is_empty() {
    for levels in 1..=4u8 {
        let position = Position::new(depth(levels));
        for len in 0..=4 {
            let address = Address::new(&[4, 4, 4, 4][..len]).unwrap();
            let expected = (len < usize::from(levels)).then_some(BoardStatus::Open);
            assert_eq!(
                position.board_status(&address),
                expected,
                "{address} at depth {levels}"
            );
        }
    }
    assert_eq!(Address::ROOT.to_string(), "");
    assert_eq!(addr(""), Address::ROOT);
    assert!(Address::ROOT.is_empty());
    assert_eq!(Address::ROOT.parent(), None);
    assert_eq!(addr("4.0").parent(), Some(addr("4")));
    assert_eq!(addr("4").parent(), Some(Address::ROOT));
    assert_eq!(addr("4").child(0), Some(addr("4.0")));
    assert_eq!(addr("4.0.8").to_string(), "4.0.8");
    assert_eq!(addr("4.0.8").coords(), &[4, 0, 8]);
    assert!(addr("4").contains(&addr("4.0.8")) && !addr("4.0").contains(&addr("4.1")));
    assert!(Address::ROOT < addr("0") && addr("0") < addr("0.8") && addr("0.8") < addr("1"));
}

#[test]
fn the_flat_index_of_a_square_is_its_address_read_in_base_nine() {
    for (levels, text, index) in [
        (1, "5", 5),
        (2, "4.0", 36),
        (2, "8.8", 80),
        (3, "1.2.3", 81 + 18 + 3),
        (4, "8.8.8.8", 6_560),
        (4, "1.0.0.2", 729 + 2),
    ] {
        let depth = depth(levels);
        let square = Square::from_address(depth, &addr(text)).unwrap();
        assert_eq!(square.index(), index, "{text}");
        assert_eq!(Square::new(depth, index), Some(square));
        // The API's cells string puts the mark at that index.
        let position = game(levels, &[text]);
        let mut cells = String::new();
        position.write_cells(&mut cells);
        assert_eq!(cells.find('x'), Some(index), "{text}");
        assert_eq!(cells.chars().filter(|&c| c != '.').count(), 1);
    }
    for levels in 1..=4 {
        let depth = depth(levels);
        assert_eq!(Square::new(depth, depth.squares()), None);
        for index in [0, 1, 8, 9, depth.squares() / 2, depth.squares() - 1]
            .into_iter()
            .filter(|&i| i < depth.squares())
        {
            let square = Square::new(depth, index).unwrap();
            assert_eq!(
                Square::from_address(depth, &square.to_address(depth)),
                Some(square)
            );
        }
    }
}

#[test]
fn a_depth_two_tree_is_a_small_copy_value() {
    fn copy<T: Copy>(value: T) -> T {
        value
    }
    let tree = copy(uttt::rules::Tree2::new());
    assert!(
        std::mem::size_of_val(&tree) <= 72,
        "{} bytes",
        std::mem::size_of_val(&tree)
    );
    assert!(std::mem::size_of::<Position>() <= 80);
}
