//! Helpers shared by the rules tests.

use uttt::rules::{Address, Depth, MoveList, Outcome, Position, Square};

pub fn depth(levels: u8) -> Depth {
    Depth::new(levels).unwrap()
}

pub fn addr(text: &str) -> Address {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} is not an address: {e}"))
}

/// Plays the dotted addresses in order, failing the test on the first refusal;
/// returns the outcome of the last move.
pub fn play(position: &mut Position, moves: &[&str]) -> Outcome {
    let mut last = None;
    for (i, text) in moves.iter().enumerate() {
        let outcome = position.play(&addr(text)).unwrap_or_else(|e| {
            panic!(
                "move {} ({text}) at ply {} refused: {e}",
                i + 1,
                position.ply()
            )
        });
        last = Some(outcome);
    }
    last.expect("at least one move")
}

/// A position of `levels` depth after the dotted moves.
pub fn game(levels: u8, moves: &[&str]) -> Position {
    let mut position = Position::new(depth(levels));
    if !moves.is_empty() {
        play(&mut position, moves);
    }
    position
}

pub fn legal(position: &Position) -> Vec<Square> {
    let mut moves = MoveList::new(position.depth());
    position.legal_moves(&mut moves);
    moves.as_slice().to_vec()
}

/// The legal moves as dotted addresses.
pub fn legal_addresses(position: &Position) -> Vec<String> {
    legal(position)
        .into_iter()
        .map(|s| s.to_address(position.depth()).to_string())
        .collect()
}

/// Every square of a depth.
pub fn all_squares(depth: Depth) -> impl Iterator<Item = Square> {
    (0..depth.squares()).map(move |i| Square::new(depth, i).unwrap())
}

/// SplitMix64: a small deterministic generator, so random games are reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One step of a random game: the position before, the move and what it did.
pub struct Step<'a> {
    pub before: &'a Position,
    pub square: Square,
    pub outcome: &'a Outcome,
    pub after: &'a Position,
}

/// Plays random games of `levels` depth from seeds 0, 1, … and returns the
/// moves up to and including the first move for which `wanted` holds.
pub fn find_in_random_games(levels: u8, wanted: impl Fn(&Step<'_>) -> bool) -> Vec<Square> {
    let depth = depth(levels);
    let mut moves = MoveList::new(depth);
    for seed in 0..2_000 {
        let mut rng = Rng(seed);
        let mut position = Position::new(depth);
        let mut record = Vec::new();
        loop {
            position.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            let square = moves.as_slice()[rng.below(moves.len())];
            let before = position.clone();
            let outcome = position.play_square(square).unwrap();
            record.push(square);
            let step = Step {
                before: &before,
                square,
                outcome: &outcome,
                after: &position,
            };
            if wanted(&step) {
                return record;
            }
        }
    }
    panic!("no random game of depth {levels} has the wanted move");
}

/// Depth 2: X wins board 2 with cells 3, 4, 5; O answers in boards 3 and 4 at
/// cell 2, which sends X back to board 2. O is then sent to board 5.
pub const X_WINS_BOARD_TWO: &[&str] = &["2.3", "3.2", "2.4", "4.2", "2.5"];

/// Depth 2, seed 000's "double win": O wins boards 6 (cells 0 1 2) and 7
/// (cells 3 4 5), then completes the diagonal 0 4 8 of board 8 on the last
/// move, which is O's third board in the bottom row. X's answers (always at
/// cell 6, 7 or 8 of the board O's cell names) send O back each time.
pub const DOUBLE_WIN: &[&str] = &[
    "5.6", "6.0", "0.6", "6.1", "1.6", "6.2", // O wins board 6
    "2.7", "7.3", "3.7", "7.4", "4.7", "7.5", // O wins board 7
    "5.8", "8.0", "0.8", "8.4", "4.8", "8.8", // O wins board 8, and the match
];

/// Depth 2: X wins board 0 (cells 3 4 5) and board 1 (0 4 8), board 2 fills
/// without a line (x o x / x o o / o x x) on the last move. Once board 0 is
/// won, any move at cell 0 gives the opponent a free move.
pub const DRAWN_BOARD_BESIDE_TWO_WINS: &[&str] = &[
    "0.3", "3.0", "0.4", "4.0", "0.5", // X wins board 0
    "5.0", "2.0", "2.1", "1.0", "2.4", "4.2", "2.5", "5.2", "2.6", "6.0", "6.1", //
    "1.4", "4.1", "1.8", // X wins board 1
    "8.0", "2.3", "3.1", "2.7", "7.0", "2.8", "8.1", //
    "2.2", // board 2 is full: drawn
];

/// Depth 2: the first 24 moves of the two full games below. X holds boards
/// 0, 2 and 3, O holds 4, 5 and 6; boards 1, 7 and 8 are open, X to move in
/// board 8.
const SIX_BOARDS: [&str; 24] = [
    "2.3", "3.2", "2.4", "4.2", "2.5", // X wins board 2
    "5.0", "0.5", "5.1", "1.5", "5.2", // O wins board 5
    "0.2", "6.0", "0.8", // X wins board 0
    "8.4", "4.6", "6.3", "3.4", "4.5", "3.0", "6.6", // O wins board 6
    "3.8", // X wins board 3
    "8.1", "1.4", "4.8", // O wins board 4
];

/// Depth 2, seed 000's "closed draw": after `SIX_BOARDS`, O wins board 1 and X
/// board 7 (X 0 2 3 7, O 1 4 5 6: no line), and the last open board, 8, fills
/// without a line on the last move (x o x / x o o / o x x).
pub fn closed_draw() -> Vec<&'static str> {
    let mut moves = SIX_BOARDS.to_vec();
    moves.extend([
        "8.0", "1.0", "8.2", "7.2", "8.3", "1.1", "1.6", "7.3", "7.0", //
        "1.2", // O wins board 1
        "8.7", "7.5", "7.4", "8.5", //
        "7.8", // X wins board 7
        "8.6", //
        "8.8", // board 8 is full: drawn, and so is the root
    ]);
    moves
}

/// Depth 2: after `SIX_BOARDS`, O wins board 1, X boards 7 and 8: X holds five
/// boards (0 2 3 7 8), O four (1 4 5 6), no line, every board decided.
pub fn five_boards_to_four() -> Vec<&'static str> {
    let mut moves = SIX_BOARDS.to_vec();
    moves.extend([
        "8.0", "1.0", "8.3", "7.2", "7.0", "1.1", "1.6", "7.3", "7.4", //
        "1.2", // O wins board 1
        "7.8", // X wins board 7
        "8.5", //
        "8.6", // X wins board 8 (0 3 6)
    ]);
    moves
}
