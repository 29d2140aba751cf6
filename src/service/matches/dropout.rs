//! Drop-outs: a seated player who is absent past the grace period is not
//! forfeited; the CPU plays their seat, on their clock, until they come back,
//! and any request of theirs on the match gives the seat back at once.
//!
//! The grace period and the substitute's pace are in `grace`: a dropped
//! player is covered, a connected player who lets the time run out loses on
//! time, and so does a Swiss player who never showed up for the game
//! (RULES.md: "a forfeit by no-show is a loss on time like any other").
//! Presence itself (event-stream leases, last-seen times) is in `presence`.

use std::collections::HashSet;

use crate::broker::PresenceRecord;
use crate::rules::Seat;
use crate::store::matches::{self as store, MatchRow};
use crate::store::tournaments as tournament_store;
use crate::time::Millis;

use super::super::{Context, Error, Result};
use super::grace::{MIN_GRACE_MS, grace_for};
use super::play::{self, Snapshot};
use super::presence::{configured_grace, presence_key};
use super::publish::publish;
use super::record::{Controller, MatchRecord, Mode};

pub use super::grace::SUBSTITUTE_PACE_MS;

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
    let grace = grace_for(configured_grace(ctx), row.time_control()?, row.bank(seat));
    // Someone who has not opened the match yet counts as seen when it began.
    let seen = record
        .last_seen
        .unwrap_or(row.created_at)
        .max(row.created_at);
    Ok(now - seen >= grace)
}

/// Whether `seat` of a tournament game may be a no-show: its player has
/// neither been seen on the match nor moved in it. (A tournament game keeps
/// a seat's seen time past its first turn, `presence::seen_ttl`, so none
/// means never seen.) In a Swiss game their clock runs and they lose on
/// time, as RULES.md has it; the CPU covers only a player who came and went.
/// An arena's absent player is covered as before: it pairs them game after
/// game, and each opponent would wait out their whole clock.
fn may_be_no_show(row: &MatchRow, seat: Seat, record: PresenceRecord) -> bool {
    // X moves at plies 0, 2, …; O at 1, 3, …
    let has_moved = row.ply > i32::from(seat == Seat::O);
    row.mode == Mode::Tournament && !record.leased && record.last_seen.is_none() && !has_moved
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

/// Hands the dropped sides to move among the next `limit` candidates to
/// the CPU; returns how many seats were taken over.
///
/// Candidates are the players' turns old enough to have outlasted a grace,
/// oldest first. Each pass goes on from where the last one stopped
/// (`Context::sweep_from`) and starts over after the youngest: turns that
/// stay old without a take-over (players thinking long while present, a Swiss
/// no-show's first turn) would otherwise fill every pass, and a dropped
/// player in a younger turn would wait until they ended.
///
/// # Errors
/// Store or broker failures.
pub async fn sweep(ctx: &Context, limit: i64) -> Result<usize> {
    let now = ctx.time.now_ms();
    // No grace is shorter than this, so younger turns need no look yet.
    let youngest = now - configured_grace(ctx).min(MIN_GRACE_MS);
    let from = ctx
        .sweep_from
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let rows = ctx
        .db
        .run(move |conn| {
            let after = from.as_ref().map(|(at, id)| (*at, id.as_str()));
            store::human_turns(conn, youngest, after, limit)
        })
        .await?;
    let next = if usize::try_from(limit).is_ok_and(|l| rows.len() < l) {
        None
    } else {
        rows.last().map(|r| (r.turn_started_at, r.id.to_string()))
    };
    *ctx.sweep_from
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = next;
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
    let maybe: Vec<String> = to_move
        .iter()
        .zip(&records)
        .filter(|((row, seat), record)| may_be_no_show(row, *seat, **record))
        .map(|((row, _), _)| row.id.to_string())
        .collect();
    let arena: HashSet<String> = if maybe.is_empty() {
        HashSet::new()
    } else {
        let in_arenas = ctx
            .db
            .run(move |conn| tournament_store::arena_games_among(conn, &maybe))
            .await?;
        in_arenas.into_iter().collect()
    };
    let mut taken = 0;
    for ((row, seat), record) in to_move.into_iter().zip(records) {
        let no_show = may_be_no_show(&row, seat, record) && !arena.contains(row.id.as_str());
        if no_show || !is_dropped(ctx, &row, seat, record, now)? {
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
