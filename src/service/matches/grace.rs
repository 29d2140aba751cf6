//! How long a seat may be absent, and how fast its substitute plays: pure
//! arithmetic on the time control and the seat's bank, shared by presence,
//! drop-outs and the row's derived columns.
//!
//! The grace period of a turn is the configured one (`UTTT_DROP_GRACE_MS`),
//! but never more than half the time the player had when the turn began (and
//! never under [`MIN_GRACE_MS`]), so that under a short clock or a per-turn
//! limit the substitute still has time to move. The substitute plays at a
//! human pace: each of its moves comes at least [`SUBSTITUTE_PACE_MS`] (or its
//! level's thinking time, if longer) after the turn began, but never later
//! than half the time the turn had.

use crate::clock::TimeControl;
use crate::cpu::{Budget, Level};
use crate::rules::Depth;
use crate::time::Millis;

/// The shortest grace period, whatever the clock.
pub const MIN_GRACE_MS: Millis = 3_000;

/// The least time a substitute's move takes from the start of its turn.
pub const SUBSTITUTE_PACE_MS: Millis = 1_000;

/// The grace period of the current turn of a seat whose bank at the turn's start is `bank`.
pub fn grace_for(configured: Millis, tc: TimeControl, bank: Option<Millis>) -> Millis {
    match tc.left_waiting(bank) {
        Some(left) => configured.min((left / 2).max(MIN_GRACE_MS)),
        None => configured,
    }
}

/// The shortest grace period the server may apply to a match under `tc`:
/// a clock can run down to nothing, a per-turn limit gives every turn at least `turn_ms`.
pub fn shortest_grace(configured: Millis, tc: TimeControl) -> Millis {
    match tc {
        TimeControl::Clock { .. } => configured.min(MIN_GRACE_MS),
        TimeControl::PerTurn { turn_ms } => configured.min((turn_ms / 2).max(MIN_GRACE_MS)),
        TimeControl::None => configured,
    }
}

/// How often a client without an open event stream should heartbeat: a third
/// of the shortest grace period, so two lost heartbeats still leave it present.
pub fn heartbeat_ms(configured: Millis, tc: TimeControl) -> Millis {
    (shortest_grace(configured, tc) / 3).max(1)
}

/// How long after its turn began the substitute of a seat whose bank is
/// `bank` may move: at least [`SUBSTITUTE_PACE_MS`] or its level's thinking
/// time, whichever is longer, but at most half the time the turn had.
pub fn substitute_pace(tc: TimeControl, bank: Option<Millis>) -> Millis {
    let think = Budget::for_level(Level::SUBSTITUTE, Depth::TWO, None).time;
    let think = i64::try_from(think.as_millis()).unwrap_or(i64::MAX);
    let pace = SUBSTITUTE_PACE_MS.max(think);
    match tc.left_waiting(bank) {
        Some(left) => pace.min(left / 2),
        None => pace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_is_at_most_half_the_time_left_at_the_turn_start() {
        let long = Some(600_000);
        assert_eq!(grace_for(20_000, TimeControl::TOURNAMENT, long), 20_000);
        let short = Some(10_000);
        assert_eq!(grace_for(20_000, TimeControl::TOURNAMENT, short), 5_000);
        let turn = TimeControl::PerTurn { turn_ms: 30_000 };
        assert_eq!(grace_for(20_000, turn, None), 15_000);
        let tiny = Some(1_000);
        assert_eq!(
            grace_for(20_000, TimeControl::TOURNAMENT, tiny),
            MIN_GRACE_MS
        );
        assert_eq!(grace_for(20_000, TimeControl::None, None), 20_000);
        assert_eq!(grace_for(500, TimeControl::TOURNAMENT, long), 500);
    }

    #[test]
    fn the_heartbeat_is_a_third_of_the_shortest_grace_a_match_may_have() {
        // A clock can run down: its shortest grace is the 3 s floor.
        assert_eq!(
            shortest_grace(20_000, TimeControl::TOURNAMENT),
            MIN_GRACE_MS
        );
        assert_eq!(heartbeat_ms(20_000, TimeControl::TOURNAMENT), 1_000);
        let turn = TimeControl::PerTurn { turn_ms: 30_000 };
        assert_eq!(heartbeat_ms(20_000, turn), 5_000);
        let short = TimeControl::PerTurn { turn_ms: 5_000 };
        assert_eq!(heartbeat_ms(20_000, short), 1_000);
        assert_eq!(heartbeat_ms(20_000, TimeControl::None), 6_666);
        assert_eq!(heartbeat_ms(1_000, TimeControl::TOURNAMENT), 333);
        // Every grace the match can get is at least three heartbeats.
        for bank in [600_000, 10_000, 4_000, 1_000, 0] {
            let grace = grace_for(20_000, TimeControl::TOURNAMENT, Some(bank));
            assert!(grace >= 3 * heartbeat_ms(20_000, TimeControl::TOURNAMENT));
        }
    }

    #[test]
    fn the_substitute_takes_a_second_but_never_more_than_half_the_turn() {
        assert_eq!(
            substitute_pace(TimeControl::TOURNAMENT, Some(600_000)),
            SUBSTITUTE_PACE_MS
        );
        assert_eq!(substitute_pace(TimeControl::TOURNAMENT, Some(1_200)), 600);
        assert_eq!(substitute_pace(TimeControl::None, None), SUBSTITUTE_PACE_MS);
    }
}
