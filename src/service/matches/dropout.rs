//! Drop-outs: a seated player who is absent past the grace period is not
//! forfeited; the CPU plays their seat, on their clock, until they come back,
//! and any request of theirs on the match gives the seat back at once.
//!
//! The grace period of a turn is the configured one (`UTTT_DROP_GRACE_MS`),
//! but never more than half the time the player had when the turn began (and
//! never under [`MIN_GRACE_MS`]), so that under a short clock or a per-turn
//! limit the substitute still has time to move: a dropped player is covered,
//! a connected player who lets the time run out loses on time.
//!
//! Presence itself (event-stream leases, last-seen times) is in `presence`.
//! The substitute plays at a human pace: each of its moves comes at least
//! [`SUBSTITUTE_PACE_MS`] (or its level's thinking time, if longer) after the
//! turn began, but never later than half the time the turn had.

use crate::broker::PresenceRecord;
use crate::clock::TimeControl;
use crate::cpu::{Budget, Level};
use crate::rules::{Depth, Seat};
use crate::store::matches::{self as store, MatchRow};
use crate::time::Millis;

use super::super::{Context, Error, Result};
use super::play::{self, Snapshot};
use super::presence::{configured_grace, presence_key};
use super::publish;
use super::record::{Controller, MatchRecord};

/// The level of the CPU that plays for a dropped player.
pub const SUBSTITUTE_LEVEL: u8 = 3;

/// The shortest grace period, whatever the clock.
pub const MIN_GRACE_MS: Millis = 3_000;

/// The least time a substitute's move takes from the start of its turn.
pub const SUBSTITUTE_PACE_MS: Millis = 1_000;

/// The grace period of the current turn of `seat`.
pub fn grace_for(configured: Millis, tc: TimeControl, row: &MatchRow, seat: Seat) -> Millis {
    match tc.left_waiting(row.bank(seat)) {
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

/// How long after its turn began the substitute of `seat` may move: at least
/// [`SUBSTITUTE_PACE_MS`] or its level's thinking time, whichever is longer,
/// but at most half the time the turn had.
pub fn substitute_pace(tc: TimeControl, row: &MatchRow, seat: Seat) -> Millis {
    let think = Level::new(SUBSTITUTE_LEVEL)
        .map(|level| Budget::for_level(level, Depth::TWO, None).time)
        .map_or(0, |t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX));
    let pace = SUBSTITUTE_PACE_MS.max(think);
    match tc.left_waiting(row.bank(seat)) {
        Some(left) => pace.min(left / 2),
        None => pace,
    }
}

/// Whether the side to move of `row` has been absent past its grace period at `now`.
fn is_dropped(
    ctx: &Context,
    row: &MatchRow,
    seat: Seat,
    record: PresenceRecord,
    now: Millis,
) -> Result<bool> {
    if row.player(seat).is_none() || row.controller(seat) != Controller::Human {
        return Ok(false);
    }
    // An open event stream, on any instance, keeps the seat whatever the grace.
    if record.leased {
        return Ok(false);
    }
    let grace = grace_for(configured_grace(ctx), row.time_control()?, row, seat);
    // Someone who has not opened the match yet counts as seen when it began.
    let seen = record
        .last_seen
        .unwrap_or(row.created_at)
        .max(row.created_at);
    Ok(now - seen >= grace)
}

/// Hands the seat to move of match `id` to the CPU if, under the lock, it is
/// still the same turn and still played by its human.
fn take_over(
    conn: &mut crate::store::DbConnection,
    id: &str,
    seat: Seat,
    ply: i32,
) -> Result<Option<Snapshot>> {
    let Some(mut row) = store::lock(conn, id)? else {
        return Ok(None);
    };
    let same_turn = row.is_active() && row.ply == ply && row.to_move_seat() == Some(seat);
    if !same_turn || row.controller(seat) != Controller::Human {
        return Ok(None);
    }
    row.set_controller(seat, Controller::Cpu);
    row.cpu_claimed_until = None;
    row.refresh_derived()?;
    row.version += 1;
    store::save(conn, &row)?;
    Ok(Some(play::snapshot(conn, row)?))
}

/// Gives a returning player their seat back (the CPU was playing it).
///
/// # Errors
/// Store or broker failures.
pub async fn reclaim(ctx: &Context, id: &str, seat: Seat) -> Result<()> {
    let match_id = id.to_owned();
    let snap = ctx
        .db
        .write(move |conn| -> Result<Option<Snapshot>> {
            let Some(mut row) = store::lock(conn, &match_id)? else {
                return Ok(None);
            };
            if !row.is_active()
                || row.player(seat).is_none()
                || row.controller(seat) != Controller::Cpu
            {
                return Ok(None);
            }
            row.set_controller(seat, Controller::Human);
            row.refresh_derived()?;
            row.version += 1;
            store::save(conn, &row)?;
            Ok(Some(play::snapshot(conn, row)?))
        })
        .await?;
    if let Some(snap) = snap {
        tracing::info!(match.id = %id, "player back in their seat");
        publish(ctx, &snap).await?;
    }
    Ok(())
}

/// Hands every dropped side to move to the CPU; returns how many seats were taken over.
///
/// # Errors
/// Store or broker failures.
pub async fn sweep(ctx: &Context, limit: i64) -> Result<usize> {
    let now = ctx.time.now_ms();
    // No grace is shorter than this, so younger turns need no look yet.
    let youngest = now - configured_grace(ctx).min(MIN_GRACE_MS);
    let rows = ctx
        .db
        .run(move |conn| store::human_turns(conn, youngest, limit))
        .await?;
    let to_move: Vec<(MatchRow, Seat)> = rows
        .into_iter()
        .filter_map(|row| row.to_move_seat().map(|seat| (row, seat)))
        .collect();
    if to_move.is_empty() {
        return Ok(0);
    }
    let keys: Vec<String> = to_move
        .iter()
        .map(|(row, seat)| presence_key(&row.id, *seat))
        .collect();
    let records = ctx.broker.presence(&keys).await?;
    let mut taken = 0;
    for ((row, seat), record) in to_move.into_iter().zip(records) {
        if !is_dropped(ctx, &row, seat, record, now)? {
            continue;
        }
        let (id, ply) = (row.id.clone(), row.ply);
        let snap = ctx
            .db
            .write(move |conn| take_over(conn, &id, seat, ply))
            .await;
        match snap {
            Ok(Some(snap)) => {
                tracing::info!(match.id = %snap.row.id, "player dropped; the CPU plays their seat");
                ctx.metrics.count("substitutions");
                publish(ctx, &snap).await?;
                taken += 1;
            }
            Ok(None) => {}
            Err(Error::NotFound(_)) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tc: TimeControl, bank: Option<i64>) -> MatchRow {
        let spec = super::super::create::NewMatch {
            mode: super::super::record::Mode::Casual,
            ladder: None,
            rated: false,
            depth: crate::rules::Depth::new(2).unwrap(),
            time_control: tc,
            x: super::super::create::SeatSpec::player("a"),
            o: super::super::create::SeatSpec::player("b"),
            cpu_level: None,
            room_code: None,
        };
        let mut row = super::super::create::new_row(spec, 0).unwrap();
        row.x_bank_ms = bank;
        row
    }

    #[test]
    fn the_grace_is_at_most_half_the_time_left_at_the_turn_start() {
        let long = row(TimeControl::TOURNAMENT, Some(600_000));
        assert_eq!(
            grace_for(20_000, TimeControl::TOURNAMENT, &long, Seat::X),
            20_000
        );
        let short = row(TimeControl::TOURNAMENT, Some(10_000));
        assert_eq!(
            grace_for(20_000, TimeControl::TOURNAMENT, &short, Seat::X),
            5_000
        );
        let turn = TimeControl::PerTurn { turn_ms: 30_000 };
        assert_eq!(grace_for(20_000, turn, &row(turn, None), Seat::X), 15_000);
        let tiny = row(TimeControl::TOURNAMENT, Some(1_000));
        assert_eq!(
            grace_for(20_000, TimeControl::TOURNAMENT, &tiny, Seat::X),
            MIN_GRACE_MS
        );
        assert_eq!(
            grace_for(
                20_000,
                TimeControl::None,
                &row(TimeControl::None, None),
                Seat::X
            ),
            20_000
        );
        assert_eq!(grace_for(500, TimeControl::TOURNAMENT, &long, Seat::X), 500);
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
            let r = row(TimeControl::TOURNAMENT, Some(bank));
            let grace = grace_for(20_000, TimeControl::TOURNAMENT, &r, Seat::X);
            assert!(grace >= 3 * heartbeat_ms(20_000, TimeControl::TOURNAMENT));
        }
    }

    #[test]
    fn the_substitute_takes_a_second_but_never_more_than_half_the_turn() {
        let long = row(TimeControl::TOURNAMENT, Some(600_000));
        assert_eq!(
            substitute_pace(TimeControl::TOURNAMENT, &long, Seat::X),
            SUBSTITUTE_PACE_MS
        );
        let short = row(TimeControl::TOURNAMENT, Some(1_200));
        assert_eq!(
            substitute_pace(TimeControl::TOURNAMENT, &short, Seat::X),
            600
        );
        let none = row(TimeControl::None, None);
        assert_eq!(
            substitute_pace(TimeControl::None, &none, Seat::X),
            SUBSTITUTE_PACE_MS
        );
    }
}
