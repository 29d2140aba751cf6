//! How long the CPU may think: a level's allowance, capped by the clock.
//!
//! The CPU reads no clock itself: the caller hands in a [`Stopwatch`] and
//! the time left on the CPU side's clock.

use std::time::Duration;

use crate::rules::Depth;

use super::Level;

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

/// What one search may spend: it stops at whichever bound it reaches first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The most iterations (descent, playout, update) to run.
    pub iterations: u32,
    /// The most time to think, as the stopwatch measures it.
    pub time: Duration,
}

/// Kept back from the clock for the round trip and the move's own transaction.
pub const CLOCK_MARGIN: Duration = Duration::from_millis(300);
/// The share of what is left (after the margin) that one move may use.
pub const CLOCK_SHARE: u32 = 20;
/// The least time a move may think while the clock has twice that left.
pub const MIN_THINK: Duration = Duration::from_millis(5);

/// The allowance of each level, weakest first: iterations at depth 1,
/// iterations at depths 2–4, and time at every depth.
///
/// At depth 2 levels 1–4 are bound by iterations (so their games replay
/// exactly) and level 5 by time, about one second. Deeper playouts are far
/// longer, so there the time bound takes over for the higher levels.
/// Tic-tac-toe needs little: level 5 there solves it with room to spare.
const LEVELS: [(u32, u32, Duration); 5] = [
    (10, 50, Duration::from_millis(50)),
    (60, 400, Duration::from_millis(100)),
    (300, 3_000, Duration::from_millis(250)),
    (3_000, 50_000, Duration::from_millis(500)),
    (50_000, u32::MAX, Duration::from_millis(1_000)),
];

impl Budget {
    /// A budget bound by iterations only.
    #[must_use]
    pub const fn iterations(iterations: u32) -> Budget {
        Budget {
            iterations,
            time: Duration::MAX,
        }
    }

    /// The budget of `level` at `depth`, never more than [`clock_cap`] of
    /// `clock_left` (the time left on the CPU side's clock, when it has one).
    #[must_use]
    pub fn for_level(level: Level, depth: Depth, clock_left: Option<Duration>) -> Budget {
        let (shallow, deep, time) = LEVELS[usize::from(level.get() - 1)];
        let iterations = if depth == Depth::ONE { shallow } else { deep };
        let time = clock_left.map_or(time, |left| time.min(clock_cap(left)));
        Budget { iterations, time }
    }
}

/// The most one move may think with `left` on the clock: a twentieth of what
/// is left after a 300 ms margin, at least 5 ms, but never more than half
/// of what is left (a search stopped at once still returns a legal move).
#[must_use]
pub fn clock_cap(left: Duration) -> Duration {
    (left.saturating_sub(CLOCK_MARGIN) / CLOCK_SHARE)
        .max(MIN_THINK)
        .min(left / 2)
}
