//! Time-control arithmetic (pure: times are passed in, in epoch milliseconds).
//!
//! - `clock`: each player has a bank (600,000 ms by default) that runs while it
//!   is their turn and gains the increment when they complete a move; reaching
//!   zero loses on time.
//! - `per_turn`: each turn must be completed within `turn_ms`.
//! - `none`: no limit.

use crate::time::Millis;

/// Smallest and largest clock bank a match may start with.
pub const CLOCK_INITIAL_RANGE: (Millis, Millis) = (10_000, 3 * 3_600_000);
/// Largest increment.
pub const CLOCK_INCREMENT_MAX: Millis = 60_000;
/// Smallest and largest per-turn limit.
pub const TURN_RANGE: (Millis, Millis) = (5_000, 600_000);

/// A match's time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeControl {
    /// A countdown per player, with an optional increment per move.
    Clock {
        /// The bank each player starts with.
        initial_ms: Millis,
        /// Added to the mover's bank after each completed move.
        increment_ms: Millis,
    },
    /// Each turn must be completed within `turn_ms`.
    PerTurn {
        /// The limit of one turn.
        turn_ms: Millis,
    },
    /// No limit.
    None,
}

/// Why a time control was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct TimeControlError {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// What happened to the mover's time when a move arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// In time; the mover's bank after the move (increment added), if the control has banks.
    InTime(Option<Millis>),
    /// The mover's time ran out before the move arrived.
    Flagged,
}

impl TimeControl {
    /// The tournament default: 10 minutes a player, no increment.
    pub const TOURNAMENT: TimeControl = TimeControl::Clock {
        initial_ms: 600_000,
        increment_ms: 0,
    };

    /// A clock control, checked against the allowed ranges.
    ///
    /// # Errors
    /// A value outside its range.
    pub fn clock(
        initial_ms: Millis,
        increment_ms: Millis,
    ) -> Result<TimeControl, TimeControlError> {
        let (lo, hi) = CLOCK_INITIAL_RANGE;
        if !(lo..=hi).contains(&initial_ms) {
            return Err(TimeControlError {
                field: "initial_ms",
                message: format!("must be between {lo} and {hi}"),
            });
        }
        if !(0..=CLOCK_INCREMENT_MAX).contains(&increment_ms) {
            return Err(TimeControlError {
                field: "increment_ms",
                message: format!("must be between 0 and {CLOCK_INCREMENT_MAX}"),
            });
        }
        Ok(TimeControl::Clock {
            initial_ms,
            increment_ms,
        })
    }

    /// A per-turn control, checked against the allowed range.
    ///
    /// # Errors
    /// A limit outside its range.
    pub fn per_turn(turn_ms: Millis) -> Result<TimeControl, TimeControlError> {
        let (lo, hi) = TURN_RANGE;
        if !(lo..=hi).contains(&turn_ms) {
            return Err(TimeControlError {
                field: "turn_ms",
                message: format!("must be between {lo} and {hi}"),
            });
        }
        Ok(TimeControl::PerTurn { turn_ms })
    }

    /// The stored kind: `clock`, `per_turn` or `none`.
    pub fn kind(&self) -> &'static str {
        match self {
            TimeControl::Clock { .. } => "clock",
            TimeControl::PerTurn { .. } => "per_turn",
            TimeControl::None => "none",
        }
    }

    /// The bank each player starts with (`None` when the control has no banks).
    pub fn initial_bank(&self) -> Option<Millis> {
        match self {
            TimeControl::Clock { initial_ms, .. } => Some(*initial_ms),
            _ => None,
        }
    }

    /// When the side to move loses on time, for a turn that began at
    /// `turn_started` with `bank` left; `None` without a limit.
    pub fn deadline(&self, turn_started: Millis, bank: Option<Millis>) -> Option<Millis> {
        match self {
            TimeControl::Clock { initial_ms, .. } => {
                Some(turn_started.saturating_add(bank.unwrap_or(*initial_ms)))
            }
            TimeControl::PerTurn { turn_ms } => Some(turn_started.saturating_add(*turn_ms)),
            TimeControl::None => None,
        }
    }

    /// Settles the mover's time for a move arriving at `now`.
    pub fn settle(&self, turn_started: Millis, bank: Option<Millis>, now: Millis) -> Settled {
        if let Some(deadline) = self.deadline(turn_started, bank)
            && now >= deadline
        {
            return Settled::Flagged;
        }
        match self {
            TimeControl::Clock { increment_ms, .. } => {
                let left = self.deadline(turn_started, bank).unwrap_or(now) - now;
                Settled::InTime(Some(left.saturating_add(*increment_ms)))
            }
            _ => Settled::InTime(None),
        }
    }

    /// Time left to the side to move at `now` (never negative); `None` without a limit.
    pub fn left_to_move(
        &self,
        turn_started: Millis,
        bank: Option<Millis>,
        now: Millis,
    ) -> Option<Millis> {
        self.deadline(turn_started, bank).map(|d| (d - now).max(0))
    }

    /// Time shown for the side not to move: its bank, or a full turn.
    pub fn left_waiting(&self, bank: Option<Millis>) -> Option<Millis> {
        match self {
            TimeControl::Clock { initial_ms, .. } => Some(bank.unwrap_or(*initial_ms)),
            TimeControl::PerTurn { turn_ms } => Some(*turn_ms),
            TimeControl::None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_movers_clock_runs_from_the_turn_start_and_stops_at_the_move() {
        let tc = TimeControl::TOURNAMENT;
        assert_eq!(
            tc.settle(1_000, Some(600_000), 31_000),
            Settled::InTime(Some(570_000))
        );
        assert_eq!(tc.left_to_move(1_000, Some(600_000), 31_000), Some(570_000));
    }

    #[test]
    fn the_increment_is_added_after_a_move_in_time() {
        let tc = TimeControl::clock(60_000, 2_000).unwrap();
        assert_eq!(
            tc.settle(0, Some(10_000), 4_000),
            Settled::InTime(Some(8_000))
        );
    }

    #[test]
    fn a_clock_that_reaches_zero_flags_always() {
        let tc = TimeControl::TOURNAMENT;
        assert_eq!(tc.settle(0, Some(5_000), 5_000), Settled::Flagged);
        assert_eq!(tc.settle(0, Some(5_000), 9_000), Settled::Flagged);
        assert_eq!(tc.settle(0, Some(5_000), 4_999), Settled::InTime(Some(1)));
        assert_eq!(tc.left_to_move(0, Some(5_000), 9_000), Some(0));
        assert_eq!(tc.deadline(100, Some(5_000)), Some(5_100));
    }

    #[test]
    fn a_per_turn_limit_resets_every_turn() {
        let tc = TimeControl::per_turn(30_000).unwrap();
        assert_eq!(tc.settle(0, None, 29_999), Settled::InTime(None));
        assert_eq!(tc.settle(0, None, 30_000), Settled::Flagged);
        assert_eq!(tc.deadline(50_000, None), Some(80_000));
        assert_eq!(tc.left_waiting(None), Some(30_000));
    }

    #[test]
    fn no_limit_never_flags() {
        let tc = TimeControl::None;
        assert_eq!(tc.settle(0, None, i64::MAX / 2), Settled::InTime(None));
        assert_eq!(tc.deadline(0, None), None);
        assert_eq!(tc.left_to_move(0, None, 5), None);
    }

    #[test]
    fn out_of_range_controls_name_their_field() {
        assert_eq!(TimeControl::clock(5, 0).unwrap_err().field, "initial_ms");
        assert_eq!(
            TimeControl::clock(600_000, -1).unwrap_err().field,
            "increment_ms"
        );
        assert_eq!(TimeControl::per_turn(1).unwrap_err().field, "turn_ms");
        assert!(TimeControl::per_turn(60_000).is_ok());
    }
}
