//! The CPU player. Pure: the position, a seed and a stopwatch come in, a move
//! goes out.
//!
//! (Interim: takes an immediate win, blocks an immediate loss, otherwise
//! plays at random. The Monte-Carlo tree search of issue 4 replaces the body
//! of [`choose_move`] behind the same signature.)

use std::time::Duration;

use crate::rules::{MoveList, Position, Seat, Square, Status};

/// A CPU strength, 1 (a beginner can beat it) to 5 (the strongest the budget allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Level(u8);

impl Level {
    /// The strongest level.
    pub const MAX: Level = Level(5);

    /// A level in 1..=5.
    pub fn new(level: u8) -> Option<Level> {
        (1..=5).contains(&level).then_some(Level(level))
    }

    /// The number, 1..=5.
    pub fn get(self) -> u8 {
        self.0
    }
}

/// Time spent thinking so far, supplied by the caller (the CPU reads no clock itself).
pub trait Stopwatch {
    /// Time since thinking began.
    fn elapsed(&self) -> Duration;
}

impl Stopwatch for std::time::Instant {
    fn elapsed(&self) -> Duration {
        std::time::Instant::elapsed(self)
    }
}

/// A small, fast, seedable generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

fn wins_now(position: &Position, square: Square, seat: Seat) -> bool {
    let mut next = position.clone();
    matches!(next.play_square(square).map(|o| o.status), Ok(Status::Won(s)) if s == seat)
}

/// Picks a move for the side to move of `position`, within `clock_left` when
/// given; `None` only when the match is over.
pub fn choose_move(
    position: &Position,
    _level: Level,
    _clock_left: Option<Duration>,
    seed: u64,
    _watch: &dyn Stopwatch,
) -> Option<Square> {
    let mut moves = MoveList::new(position.depth());
    position.legal_moves(&mut moves);
    if moves.is_empty() {
        return None;
    }
    let me = position.turn();
    if let Some(win) = moves.iter().find(|&sq| wins_now(position, sq, me)) {
        return Some(win);
    }
    let mut rng = Rng::new(seed);
    Some(moves.as_slice()[rng.below(moves.len())])
}
