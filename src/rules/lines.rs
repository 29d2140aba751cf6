//! The eight lines of a board, and a 512-entry table of the masks that hold one.
//!
//! A board's nine positions are bits 0..=8 of a `u16`, numbered row by row
//! (`0 1 2 / 3 4 5 / 6 7 8`).

/// Every position of a board: bits 0..=8.
pub const FULL: u16 = 0x1ff;

/// The eight lines: three rows, three columns, two diagonals.
pub const LINES: [u16; 8] = [
    0b000_000_111, // row 0 1 2
    0b000_111_000, // row 3 4 5
    0b111_000_000, // row 6 7 8
    0b001_001_001, // column 0 3 6
    0b010_010_010, // column 1 4 7
    0b100_100_100, // column 2 5 8
    0b100_010_001, // diagonal 0 4 8
    0b001_010_100, // diagonal 2 4 6
];

/// Bit `m` is set when mask `m` (0..512) contains a line: 512 entries in 64 bytes.
const WINNING: [u64; 8] = winning_table();

const fn winning_table() -> [u64; 8] {
    let mut table = [0u64; 8];
    let mut mask = 0;
    while mask < 512 {
        let mut line = 0;
        while line < LINES.len() {
            if mask & LINES[line] == LINES[line] {
                table[(mask >> 6) as usize] |= 1 << (mask & 63);
            }
            line += 1;
        }
        mask += 1;
    }
    table
}

/// Whether `mask` holds three positions in a line. Bits above 8 are ignored.
#[inline]
#[must_use]
pub const fn has_line(mask: u16) -> bool {
    let mask = mask & FULL;
    (WINNING[(mask >> 6) as usize] >> (mask & 63)) & 1 != 0
}

/// For each mask (0..512), its set positions in increasing order, padded with
/// zeros to nine: lets a board's open squares be written nine at a time.
pub(crate) const POSITIONS: [[u8; 9]; 512] = positions_table();

/// For each mask (0..512), the number of set positions.
pub(crate) const COUNT: [u8; 512] = count_table();

const fn positions_table() -> [[u8; 9]; 512] {
    let mut table = [[0u8; 9]; 512];
    let mut mask = 0;
    while mask < 512 {
        let mut position = 0;
        let mut filled = 0;
        while position < 9 {
            if mask & (1 << position) != 0 {
                table[mask][filled] = position as u8;
                filled += 1;
            }
            position += 1;
        }
        mask += 1;
    }
    table
}

const fn count_table() -> [u8; 512] {
    let mut table = [0u8; 512];
    let mut mask = 0;
    while mask < 512 {
        table[mask] = (mask as u32).count_ones() as u8;
        mask += 1;
    }
    table
}

/// For each mask of held positions (0..512), the positions that would
/// complete a line of the holder: one more mark there wins the board.
pub(crate) const COMPLETING: [u16; 512] = completing_table();

const fn completing_table() -> [u16; 512] {
    let mut table = [0u16; 512];
    let mut mask: usize = 0;
    while mask < 512 {
        let mut position = 0;
        while position < 9 {
            let bit: u16 = 1 << position;
            if (mask as u16) & bit == 0 && has_line(mask as u16 | bit) {
                table[mask] |= bit;
            }
            position += 1;
        }
        mask += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::{COMPLETING, FULL, has_line};

    #[test]
    fn completing_names_exactly_the_squares_that_make_a_line() {
        for mask in 0..512u16 {
            for position in 0..9 {
                let bit = 1 << position;
                let completes = mask & bit == 0 && has_line(mask | bit);
                assert_eq!(COMPLETING[usize::from(mask)] & bit != 0, completes);
            }
        }
        // x x . / . . . / . . .: 2 completes the top row.
        assert_eq!(COMPLETING[0b011], 0b100);
        assert_eq!(COMPLETING[0] | COMPLETING[usize::from(FULL)], 0);
    }
}
