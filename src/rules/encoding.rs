//! The compact binary form of a match: its move record, bit-packed.
//!
//! We store the moves, not the cells: the moves are what the match is. The
//! cells, the board statuses, the target and the last move all follow from
//! them, but not the other way round (cells alone lose the order of play and
//! the target). And decoding replays them through the rules, so whatever bytes
//! come in, a decoded position is one that a game reaches: corrupt bytes give
//! a [`DecodeError`], never a panic and never an impossible position. The
//! price is size, a few bytes per move (a depth-2 game of 60 moves takes 56
//! bytes, where two bits a cell would take 21), and decoding costs one
//! replay, a few microseconds at depth 2.
//!
//! Layout, version 1:
//! - byte 0: the version in the high nibble, the depth in the low one
//!   (`0x11` … `0x14`);
//! - bytes 1–2: the number of moves `n`, little-endian (a game has at most
//!   9^d ≤ 6,561 moves);
//! - then the `n` flat square indices, `ceil(log2(9^d))` bits each (4, 7, 10
//!   or 13), packed least significant bit first; the last byte is padded
//!   with zero bits.
//!
//! Every legal record has exactly one encoding: length, padding and header
//! are all checked.

use super::{Depth, IllegalMove, Position, Square};

/// The format version written in the high nibble of the first byte.
pub const VERSION: u8 = 1;

const HEADER_LEN: usize = 3;

/// Why bytes are not the encoding of a legal move record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The first byte is not version 1 with a depth 1..=4.
    #[error("bad header byte {0:#04x}")]
    BadHeader(u8),
    /// Fewer bytes than the header and move count require.
    #[error("truncated: {needed} bytes needed, {found} found")]
    Truncated {
        /// The bytes the header and move count call for.
        needed: usize,
        /// The bytes given.
        found: usize,
    },
    /// More bytes than the move count calls for.
    #[error("trailing garbage: {needed} bytes needed, {found} found")]
    TrailingBytes {
        /// The bytes the header and move count call for.
        needed: usize,
        /// The bytes given.
        found: usize,
    },
    /// The padding bits after the last move are not zero.
    #[error("non-zero padding after the last move")]
    NonZeroPadding,
    /// The move at this ply is refused by the rules.
    #[error("illegal move at ply {ply}: {reason}")]
    IllegalMove {
        /// The index of the move in the record.
        ply: u32,
        /// Why the rules refuse it.
        reason: IllegalMove,
    },
    /// A move follows the end of the match.
    #[error("move at ply {ply} after the end of the match")]
    MoveAfterEnd {
        /// The index of the move in the record.
        ply: u32,
    },
}

/// Encodes the move record `moves` of a match of `depth`.
///
/// Meant for legal records (what [`decode`] gives back). Anything else still
/// encodes, to bytes that `decode` refuses: a square outside the depth is
/// written as an index no square has, and a record longer than 65,535 moves
/// (no game lasts past 9^d) is cut there.
#[must_use]
pub fn encode(depth: Depth, moves: &[Square]) -> Vec<u8> {
    let bits = depth.square_bits();
    let moves = &moves[..moves.len().min(usize::from(u16::MAX))];
    let count = u16::try_from(moves.len()).unwrap_or(u16::MAX);
    let mut bytes = Vec::with_capacity(encoded_len(depth, moves.len()));
    bytes.push(VERSION << 4 | depth.get());
    bytes.extend_from_slice(&count.to_le_bytes());
    let no_square = (1u32 << bits) - 1;
    let mut pending = 0u32;
    let mut pending_bits = 0;
    for square in moves {
        let index = u32::try_from(square.index())
            .ok()
            .filter(|&index| (index as usize) < depth.squares())
            .unwrap_or(no_square);
        pending |= index << pending_bits;
        pending_bits += bits;
        while pending_bits >= 8 {
            bytes.push(pending as u8);
            pending >>= 8;
            pending_bits -= 8;
        }
    }
    if pending_bits > 0 {
        bytes.push(pending as u8);
    }
    bytes
}

/// The encoded length of a record of `moves` moves.
fn encoded_len(depth: Depth, moves: usize) -> usize {
    HEADER_LEN + (moves * depth.square_bits() as usize).div_ceil(8)
}

/// Decodes bytes written by [`encode`]: the position they lead to, and the
/// move record.
///
/// # Errors
/// [`DecodeError`] for a bad header, a length that does not match the move
/// count, non-zero padding, a move the rules refuse or a move after the end.
pub fn decode(bytes: &[u8]) -> Result<(Position, Vec<Square>), DecodeError> {
    let Some((&header, rest)) = bytes.split_first() else {
        return Err(DecodeError::Truncated {
            needed: HEADER_LEN,
            found: 0,
        });
    };
    let depth = (header >> 4 == VERSION)
        .then(|| Depth::new(header & 0x0f).ok())
        .flatten()
        .ok_or(DecodeError::BadHeader(header))?;
    let Some((count, packed)) = rest.split_first_chunk::<2>() else {
        return Err(DecodeError::Truncated {
            needed: HEADER_LEN,
            found: bytes.len(),
        });
    };
    let count = usize::from(u16::from_le_bytes(*count));
    let needed = encoded_len(depth, count);
    if bytes.len() < needed {
        return Err(DecodeError::Truncated {
            needed,
            found: bytes.len(),
        });
    }
    if bytes.len() > needed {
        return Err(DecodeError::TrailingBytes {
            needed,
            found: bytes.len(),
        });
    }

    let bits = depth.square_bits();
    let mask = (1u32 << bits) - 1;
    let mut position = Position::new(depth);
    let mut moves = Vec::with_capacity(count);
    let mut packed = packed.iter();
    let mut pending = 0u32;
    let mut pending_bits = 0;
    for ply in (0u32..).take(count) {
        while pending_bits < bits {
            // The length check above guarantees the bytes are there.
            let byte = packed.next().copied().unwrap_or(0);
            pending |= u32::from(byte) << pending_bits;
            pending_bits += 8;
        }
        let index = (pending & mask) as usize;
        pending >>= bits;
        pending_bits -= bits;
        if position.status().is_over() {
            return Err(DecodeError::MoveAfterEnd { ply });
        }
        let square = Square::new(depth, index).ok_or(DecodeError::IllegalMove {
            ply,
            reason: IllegalMove::BadAddress,
        })?;
        position
            .play_square(square)
            .map_err(|reason| DecodeError::IllegalMove { ply, reason })?;
        moves.push(square);
    }
    if pending != 0 {
        return Err(DecodeError::NonZeroPadding);
    }
    Ok((position, moves))
}
