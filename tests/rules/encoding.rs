//! The compact encoding: the move record, bit-packed; decoding replays it.

use proptest::collection::vec;
use proptest::prelude::*;

use uttt::rules::{DecodeError, Depth, IllegalMove, MoveList, Position, Square, decode, encode};

use super::support::{DOUBLE_WIN, Rng, addr, closed_draw, depth};

fn squares(levels: u8, moves: &[&str]) -> Vec<Square> {
    moves
        .iter()
        .map(|m| Square::from_address(depth(levels), &addr(m)).unwrap())
        .collect()
}

#[test]
fn the_empty_record_is_a_header_and_a_zero_count() {
    for levels in 1..=4 {
        assert_eq!(encode(depth(levels), &[]), [0x10 | levels, 0, 0]);
        let (position, moves) = decode(&[0x10 | levels, 0, 0]).unwrap();
        assert_eq!(position, Position::new(depth(levels)));
        assert!(moves.is_empty());
    }
}

#[test]
fn moves_are_packed_at_four_seven_ten_and_thirteen_bits() {
    for (levels, bits) in [(1, 4), (2, 7), (3, 10), (4, 13)] {
        assert_eq!(depth(levels).square_bits(), bits);
        let record = random_record(levels, 1);
        for n in 0..=record.len().min(7) {
            let bytes = encode(depth(levels), &record[..n]);
            assert_eq!(
                bytes.len(),
                3 + (n * bits as usize).div_ceil(8),
                "depth {levels}, {n} moves"
            );
        }
    }
    // Depth 2, [4, 0] then [0, 4]: flat 36 and 4, seven bits each, least significant first.
    let bytes = encode(depth(2), &squares(2, &["4.0", "0.4"]));
    assert_eq!(bytes, [0x12, 2, 0, 36 | (4 << 7) as u8, 4 >> 1]);
}

#[test]
fn the_worked_examples_round_trip() {
    for moves in [DOUBLE_WIN.to_vec(), closed_draw()] {
        let record = squares(2, &moves);
        let bytes = encode(depth(2), &record);
        let (position, decoded) = decode(&bytes).unwrap();
        assert_eq!(decoded, record);
        assert_eq!(position, Position::replay(depth(2), &record).unwrap());
        assert!(position.status().is_over());
    }
}

#[test]
fn decoding_refuses_a_bad_header() {
    assert_eq!(decode(&[0x15, 0, 0]), Err(DecodeError::BadHeader(0x15)));
    assert_eq!(decode(&[0x10, 0, 0]), Err(DecodeError::BadHeader(0x10)));
    assert_eq!(decode(&[0x22, 0, 0]), Err(DecodeError::BadHeader(0x22)));
    assert_eq!(decode(&[0x02, 0, 0]), Err(DecodeError::BadHeader(0x02)));
}

#[test]
fn decoding_refuses_truncated_bytes_and_trailing_garbage() {
    let bytes = encode(depth(2), &squares(2, &["4.0", "0.4", "4.4"]));
    for len in 0..bytes.len() {
        assert!(
            matches!(decode(&bytes[..len]), Err(DecodeError::Truncated { .. })),
            "{len} bytes"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        decode(&longer),
        Err(DecodeError::TrailingBytes { .. })
    ));
    let mut padded = bytes.clone();
    *padded.last_mut().unwrap() |= 0x80;
    assert_eq!(decode(&padded), Err(DecodeError::NonZeroPadding));
}

#[test]
fn decoding_refuses_an_illegal_move_with_its_ply_and_reason() {
    // [0, 4] sends O to board 4; [0, 0] is outside it.
    let bytes = encode(depth(2), &squares(2, &["0.4", "0.0"]));
    assert_eq!(
        decode(&bytes),
        Err(DecodeError::IllegalMove {
            ply: 1,
            reason: IllegalMove::WrongBoard
        })
    );
    let bytes = encode(depth(2), &squares(2, &["0.4", "4.0", "0.4"]));
    assert_eq!(
        decode(&bytes),
        Err(DecodeError::IllegalMove {
            ply: 2,
            reason: IllegalMove::CellOccupied
        })
    );
    // Four bits hold 0..=15, but depth 1 has nine squares.
    assert_eq!(
        decode(&[0x11, 1, 0, 12]),
        Err(DecodeError::IllegalMove {
            ply: 0,
            reason: IllegalMove::BadAddress
        })
    );
    // A square of another depth is written as no square at all.
    let deep = Square::new(Depth::FOUR, 100).unwrap();
    let bytes = encode(depth(2), &[deep]);
    assert_eq!(
        decode(&bytes),
        Err(DecodeError::IllegalMove {
            ply: 0,
            reason: IllegalMove::BadAddress
        })
    );
}

#[test]
fn decoding_refuses_a_move_after_the_end_of_the_match() {
    // Depth 1: X wins with 0 1 2 on move 5; a sixth move follows.
    let bytes = encode(depth(1), &squares(1, &["0", "3", "1", "4", "2", "5"]));
    assert_eq!(decode(&bytes), Err(DecodeError::MoveAfterEnd { ply: 5 }));
}

fn random_record(levels: u8, seed: u64) -> Vec<Square> {
    let mut position = Position::new(depth(levels));
    let mut moves = MoveList::new(depth(levels));
    let mut rng = Rng(seed);
    let mut record = Vec::new();
    loop {
        position.legal_moves(&mut moves);
        if moves.is_empty() || record.len() > 400 {
            return record;
        }
        let square = moves.as_slice()[rng.below(moves.len())];
        position.play_square(square).unwrap();
        record.push(square);
    }
}

/// A successful decode must describe a reachable position, encoded canonically.
fn assert_consistent(bytes: &[u8]) {
    if let Ok((position, moves)) = decode(bytes) {
        assert_eq!(encode(position.depth(), &moves), bytes);
        assert_eq!(
            Position::replay(position.depth(), &moves).unwrap(),
            position
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in vec(any::<u8>(), 0..48)) {
        assert_consistent(&bytes);
    }

    #[test]
    fn decoding_well_framed_random_moves_never_panics(levels in 1u8..=4, count in 0u16..40, seed in any::<u64>()) {
        let depth = depth(levels);
        let mut rng = Rng(seed);
        let len = (usize::from(count) * depth.square_bits() as usize).div_ceil(8);
        let mut bytes = vec![0x10 | levels];
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend((0..len).map(|_| rng.next() as u8));
        assert_consistent(&bytes);
    }

    #[test]
    fn decoding_a_corrupted_encoding_never_panics(levels in 1u8..=4, seed in any::<u64>(), flip in any::<usize>(), cut in any::<usize>()) {
        let bytes = encode(depth(levels), &random_record(levels, seed));
        let mut flipped = bytes.clone();
        let bit = flip % (flipped.len() * 8);
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert_consistent(&flipped);
        assert_consistent(&bytes[..cut % (bytes.len() + 1)]);
        let mut longer = bytes.clone();
        longer.push(flip as u8);
        assert_consistent(&longer);
    }

    #[test]
    fn encoding_then_decoding_gives_the_game_back(levels in 1u8..=4, seed in any::<u64>()) {
        let record = random_record(levels, seed);
        let (position, moves) = decode(&encode(depth(levels), &record)).unwrap();
        prop_assert_eq!(&moves, &record);
        prop_assert_eq!(position, Position::replay(depth(levels), &record).unwrap());
    }
}
