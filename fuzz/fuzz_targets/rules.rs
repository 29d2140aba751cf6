//! Fuzzes the rules core with arbitrary bytes: the binary decoder, and play
//! by flat square and by address, checking the invariants the server relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/rules/mod.rs"]
#[allow(dead_code, unused_imports)]
mod rules;

use rules::{Address, Depth, MoveList, Position, Square, decode, encode};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    match first % 3 {
        0 => decode_case(rest),
        1 => play_squares(first, rest),
        _ => play_addresses(first, rest),
    }
});

/// Corrupt records decode to an error or to a position that is the replay
/// of the decoded moves, and that encodes back to an equal record.
fn decode_case(bytes: &[u8]) {
    if let Ok((position, moves)) = decode(bytes) {
        let replayed = Position::replay(position.depth(), &moves).expect("decoded moves replay");
        assert_eq!(replayed, position);
        let again = decode(&encode(position.depth(), &moves)).expect("re-encoded record decodes");
        assert_eq!(again.0, position);
        assert_eq!(again.1, moves);
    }
}

fn depth_of(first: u8) -> Depth {
    Depth::new(first / 3 % 4 + 1).expect("1..=4")
}

/// Two bytes a square index; every accepted move is one `legal_moves` lists,
/// every refused one is not, and a refused move changes nothing.
fn play_squares(first: u8, bytes: &[u8]) {
    let depth = depth_of(first);
    let mut position = Position::new(depth);
    let mut legal = MoveList::new(depth);
    let mut played = Vec::new();
    for pair in bytes.chunks_exact(2) {
        let index = usize::from(u16::from_le_bytes([pair[0], pair[1]])) % (depth.squares() + 8);
        position.legal_moves(&mut legal);
        let Some(square) = Square::new(depth, index) else {
            continue;
        };
        let before = position.clone();
        match position.play_square(square) {
            Ok(_) => {
                assert!(
                    legal.contains(square),
                    "accepted a move legal_moves does not list"
                );
                played.push(square);
            }
            Err(_) => {
                assert!(!legal.contains(square), "refused a listed move");
                assert_eq!(position, before, "a refused move changed the position");
            }
        }
        if !position.status().is_over() {
            assert!(
                position.count_legal_moves() > 0,
                "an open match without a legal move"
            );
        }
    }
    assert_eq!(
        Position::replay(depth, &played).expect("played moves replay"),
        position
    );
}

/// Bytes as coordinates of addresses of any length, valid or not.
fn play_addresses(first: u8, bytes: &[u8]) {
    let depth = depth_of(first);
    let mut position = Position::new(depth);
    let mut rest = bytes;
    while let Some((&len, tail)) = rest.split_first() {
        let len = usize::from(len % 6).min(tail.len());
        let (coords, tail) = tail.split_at(len);
        rest = tail;
        let Ok(address) = Address::new(coords) else {
            continue;
        };
        let before = position.clone();
        if position.play(&address).is_err() {
            assert_eq!(position, before, "a refused move changed the position");
        }
    }
}
