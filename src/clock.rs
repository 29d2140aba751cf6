//! Time-control arithmetic (pure: times are passed in, in epoch milliseconds).
//!
//! - `clock`: each player has a bank (600,000 ms by default) that runs while it
//!   is their turn and gains the increment when they complete a move; reaching
//!   zero loses on time.
//! - `per_turn`: each turn must be completed within `turn_ms`.
//! - `none`: no limit.
//!
//! Lag compensation (after Lichess's `LagTracker`): a move's network time is
//! not its player's thinking time. Each player has a quota; a move's credit
//! is the lag its client reports, at most the quota and at most the time the
//! turn really used; the quota then loses the credit and gains a fixed
//! amount, never past its cap ([`LagQuota`]). Under `clock` the credit goes
//! back to the mover's bank; under `per_turn` it lengthens the mover's next
//! turn (its "bank" there is that turn's allowance).
//!
//! Over 400 lines: half of the file is its unit and property tests.

use crate::time::Millis;

/// Smallest and largest clock bank a match may start with.
pub const CLOCK_INITIAL_RANGE: (Millis, Millis) = (10_000, 3 * 3_600_000);
/// Largest increment.
pub const CLOCK_INCREMENT_MAX: Millis = 60_000;
/// Smallest and largest per-turn limit.
pub const TURN_RANGE: (Millis, Millis) = (5_000, 600_000);

/// Largest lag a client may report with a move (ms); more is refused as absurd.
pub const MAX_REPORTED_LAG_MS: Millis = 60_000;

/// The lag-compensation quota of one player under a time control: it starts
/// at `start`, each move's credit comes out of it, and each move adds `gain`,
/// never past `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LagQuota {
    /// Added after every move of the player.
    pub gain: Millis,
    /// The quota at the start of a match.
    pub start: Millis,
    /// The cap: also the most one move can ever be credited.
    pub max: Millis,
}

/// What lag compensation gave one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LagCredit {
    /// Time given back to the mover (ms).
    pub credit: Millis,
    /// The mover's quota after the move.
    pub quota: Millis,
}

impl LagQuota {
    /// The credit of a move whose client reports `reported` ms of lag, from a
    /// player holding `quota`, on a turn that really used `used` ms: never
    /// more than the quota, nor than the time used (a move can't gain time).
    pub fn credit(&self, quota: Millis, reported: Millis, used: Millis) -> LagCredit {
        let quota = quota.clamp(0, self.max);
        let credit = reported.max(0).min(quota).min(used.max(0));
        LagCredit {
            credit,
            quota: quota
                .saturating_sub(credit)
                .saturating_add(self.gain)
                .min(self.max),
        }
    }
}

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
    /// `turn_started` with `bank` left (per turn: the turn's allowance, when
    /// lag credit lengthened it); `None` without a limit.
    pub fn deadline(&self, turn_started: Millis, bank: Option<Millis>) -> Option<Millis> {
        self.left_waiting(bank)
            .map(|left| turn_started.saturating_add(left))
    }

    /// Settles the mover's time for a move arriving at `now`.
    pub fn settle(&self, turn_started: Millis, bank: Option<Millis>, now: Millis) -> Settled {
        self.settle_credited(turn_started, bank, now, 0)
    }

    /// Settles the mover's time for a move arriving at `now`, `credit` ms of
    /// which were network time (see [`LagQuota::credit`]). The server's
    /// deadline stands: a move after it is flagged whatever its credit. The
    /// credit, never more than the turn used, goes back to a clock's bank; per
    /// turn it lengthens the mover's next turn (their bank becomes that turn's
    /// allowance).
    pub fn settle_credited(
        &self,
        turn_started: Millis,
        bank: Option<Millis>,
        now: Millis,
        credit: Millis,
    ) -> Settled {
        let Some(deadline) = self.deadline(turn_started, bank) else {
            return Settled::InTime(None);
        };
        if now >= deadline {
            return Settled::Flagged;
        }
        let credit = credit.clamp(0, (now - turn_started).max(0));
        match self {
            TimeControl::Clock { increment_ms, .. } => Settled::InTime(Some(
                (deadline - now)
                    .saturating_add(credit)
                    .saturating_add(*increment_ms),
            )),
            TimeControl::PerTurn { turn_ms } => {
                Settled::InTime((credit > 0).then(|| turn_ms.saturating_add(credit)))
            }
            TimeControl::None => Settled::InTime(None),
        }
    }

    /// The lag quota of each player under this control; `None` without a limit.
    /// Lichess's figures: a game of `base + 40 × increment` (per turn: 40
    /// turns) gains `estimate / 250 + 150` ms a move, at most 1 s; the quota
    /// starts at 3 gains and holds at most 7.
    pub fn lag_quota(&self) -> Option<LagQuota> {
        let estimate = match self {
            TimeControl::Clock {
                initial_ms,
                increment_ms,
            } => initial_ms.saturating_add(increment_ms.saturating_mul(40)),
            TimeControl::PerTurn { turn_ms } => turn_ms.saturating_mul(40),
            TimeControl::None => return None,
        };
        let gain = (estimate / 250 + 150).min(1_000);
        Some(LagQuota {
            gain,
            start: 3 * gain,
            max: 7 * gain,
        })
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

    /// Time shown for the side not to move: its bank, or its next turn's allowance.
    pub fn left_waiting(&self, bank: Option<Millis>) -> Option<Millis> {
        match self {
            TimeControl::Clock { initial_ms, .. } => Some(bank.unwrap_or(*initial_ms)),
            TimeControl::PerTurn { turn_ms } => Some(bank.unwrap_or(*turn_ms)),
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

    #[test]
    fn the_lag_quota_follows_lichess_figures() {
        let ten_minutes = TimeControl::TOURNAMENT.lag_quota().unwrap();
        assert_eq!(
            ten_minutes,
            LagQuota {
                gain: 1_000,
                start: 3_000,
                max: 7_000
            }
        );
        let ten_seconds = TimeControl::clock(10_000, 0).unwrap().lag_quota().unwrap();
        assert_eq!(ten_seconds.gain, 190);
        let blitz = TimeControl::clock(60_000, 1_000)
            .unwrap()
            .lag_quota()
            .unwrap();
        assert_eq!(blitz.gain, (60_000 + 40_000) / 250 + 150);
        let five_second_turns = TimeControl::per_turn(5_000).unwrap().lag_quota().unwrap();
        assert_eq!(five_second_turns.gain, 950);
        assert_eq!(TimeControl::None.lag_quota(), None);
    }

    #[test]
    fn a_credit_is_the_reported_lag_within_the_quota_and_the_time_used() {
        let q = TimeControl::TOURNAMENT.lag_quota().unwrap();
        assert_eq!(
            q.credit(3_000, 200, 5_000),
            LagCredit {
                credit: 200,
                quota: 3_800
            }
        );
        // A lie is cut to the quota…
        assert_eq!(
            q.credit(3_000, 60_000, 50_000),
            LagCredit {
                credit: 3_000,
                quota: 1_000
            }
        );
        // …and to the time the turn really used.
        assert_eq!(q.credit(3_000, 2_000, 150).credit, 150);
        // The quota never passes its cap; a negative report is none.
        assert_eq!(q.credit(6_900, 0, 1_000).quota, 7_000);
        assert_eq!(q.credit(3_000, -5, 1_000).credit, 0);
    }

    #[test]
    fn a_clock_credit_goes_back_to_the_bank_and_a_turn_credit_to_the_next_turn() {
        let tc = TimeControl::clock(60_000, 2_000).unwrap();
        assert_eq!(
            tc.settle_credited(0, Some(10_000), 4_000, 300),
            Settled::InTime(Some(8_300))
        );
        // Never more than the turn used: the bank cannot grow past start + increment.
        assert_eq!(
            tc.settle_credited(0, Some(10_000), 100, 5_000),
            Settled::InTime(Some(12_000))
        );
        // The server's deadline stands.
        assert_eq!(
            tc.settle_credited(0, Some(10_000), 10_000, 3_000),
            Settled::Flagged
        );
        let turns = TimeControl::per_turn(5_000).unwrap();
        assert_eq!(
            turns.settle_credited(0, None, 4_000, 250),
            Settled::InTime(Some(5_250))
        );
        assert_eq!(
            turns.settle_credited(0, None, 4_000, 0),
            Settled::InTime(None)
        );
        // A lengthened turn's deadline and the time shown while waiting.
        assert_eq!(turns.deadline(100, Some(5_250)), Some(5_350));
        assert_eq!(turns.left_waiting(Some(5_250)), Some(5_250));
    }

    mod lag {
        use super::*;
        use proptest::prelude::*;

        fn controls() -> impl Strategy<Value = TimeControl> {
            prop_oneof![
                (10_000i64..=3 * 3_600_000, 0i64..=60_000)
                    .prop_map(|(i, inc)| TimeControl::clock(i, inc).unwrap()),
                (5_000i64..=600_000).prop_map(|t| TimeControl::per_turn(t).unwrap()),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Whatever a client claims, one move gets back at most the quota
            /// it holds (never past `max`) and never more than the turn used;
            /// n moves get back at most `start + (n - 1) × gain` in all.
            #[test]
            fn a_lying_client_gains_nothing_beyond_the_quota(
                tc in controls(),
                moves in proptest::collection::vec((0i64..=MAX_REPORTED_LAG_MS, 0i64..=120_000), 1..80),
            ) {
                let q = tc.lag_quota().unwrap();
                let mut quota = q.start;
                let mut total = 0;
                for (n, (claimed, used)) in moves.iter().enumerate() {
                    let given = q.credit(quota, *claimed, *used);
                    prop_assert!(given.credit <= quota && given.credit <= q.max);
                    prop_assert!(given.credit <= *used && given.credit >= 0);
                    prop_assert!(given.quota >= q.gain.min(q.max) && given.quota <= q.max);
                    total += given.credit;
                    let n = n as i64 + 1;
                    prop_assert!(total <= q.start + (n - 1) * q.gain, "{total} after {n} moves");
                    quota = given.quota;
                }
            }

            /// An honest link with `lag` ms a move loses nothing while the lag
            /// is within the gain, and at most `lag - gain` a move beyond it.
            #[test]
            fn an_honest_slow_link_loses_at_most_the_lag_beyond_the_gain(
                tc in controls(),
                lag in 0i64..=5_000,
                thinks in proptest::collection::vec(0i64..=60_000, 1..80),
            ) {
                let q = tc.lag_quota().unwrap();
                let mut quota = q.start;
                for think in thinks {
                    // The turn used the thinking time plus the network time.
                    let given = q.credit(quota, lag, think + lag);
                    prop_assert!(lag - given.credit <= (lag - q.gain).max(0));
                    quota = given.quota;
                }
            }

            /// A clock credit never leaves the bank above its value at the
            /// turn start plus the increment, nor below the real use.
            #[test]
            fn a_clock_credit_never_gains_time(
                initial in 10_000i64..=600_000,
                increment in 0i64..=60_000,
                bank in 1i64..=600_000,
                used in 0i64..=600_000,
                credit in 0i64..=10_000,
            ) {
                let tc = TimeControl::clock(initial, increment).unwrap();
                match tc.settle_credited(0, Some(bank), used, credit) {
                    Settled::InTime(Some(after)) => {
                        prop_assert!(used < bank);
                        prop_assert!(after <= bank + increment);
                        prop_assert!(after >= bank - used + increment);
                    }
                    Settled::Flagged => prop_assert!(used >= bank),
                    Settled::InTime(None) => prop_assert!(false, "a clock always has a bank"),
                }
            }
        }
    }
}
