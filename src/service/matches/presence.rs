//! Presence: whether each seated player is here.
//!
//! - An open event stream of a seated player holds a lease on their seat in
//!   the broker for as long as it is open, on any instance: the instance
//!   renews the leases of all its open streams every third of their lifetime
//!   (`UTTT_PRESENCE_LEASE_MS`, real time), so the leases of an instance that
//!   dies lapse on their own within that lifetime.
//! - Any request of a seated player on the match (and a heartbeat) records
//!   when they were last seen, in game time.
//! - A seat is present while a lease on it is live, or while it was seen
//!   within the grace period of its turn (`dropout::grace_for`). When a stream
//!   closes, its seat counts as seen `UTTT_PRESENCE_LINGER_MS` after the close,
//!   so a reconnect (to any instance) keeps the seat; the grace runs after that.
//!
//! These are the facts; `announce` publishes a new state when they change.

use std::time::Duration;

use crate::broker::{PresenceRecord, PresentIf};
use crate::clock::TimeControl;
use crate::rules::Seat;
use crate::store::matches::MatchRow;
use crate::time::Millis;

use super::super::{Context, Result};
use super::grace::grace_for;
use super::record::{MatchRecord, Mode, seat_str};

/// The broker key of a seat's presence.
pub fn presence_key(match_id: &str, seat: Seat) -> String {
    format!("presence:{match_id}:{}", seat_str(seat))
}

/// How long a seen record is kept: well past any grace period and linger.
pub(crate) fn presence_ttl(ctx: &Context) -> Duration {
    (ctx.config.drop_grace * 3 + ctx.config.presence.linger).max(Duration::from_secs(60))
}

fn millis(d: Duration) -> Millis {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// How long the seen time of a seat of `row` is kept: [`presence_ttl`],
/// and in a tournament game longer by the time a first turn may take, so
/// that a seat with no seen time there was never seen, rather than seen
/// long ago (`dropout`'s no-show, a loss on time, against a player who came
/// and went, whom the CPU covers).
pub(crate) fn seen_ttl(ctx: &Context, row: &MatchRow) -> Duration {
    let base = presence_ttl(ctx);
    if row.mode != Mode::Tournament {
        return base;
    }
    let first_turn = match row.time_control() {
        Ok(TimeControl::Clock { initial_ms, .. }) => initial_ms,
        Ok(TimeControl::PerTurn { turn_ms }) => turn_ms,
        _ => 0,
    };
    base + Duration::from_millis(u64::try_from(first_turn).unwrap_or(0))
}

/// The configured grace period, in ms.
pub(crate) fn configured_grace(ctx: &Context) -> Millis {
    millis(ctx.config.drop_grace)
}

/// Whether `seat` of `row` is present at `now`, given what the broker holds.
pub(crate) fn is_present(
    ctx: &Context,
    row: &MatchRow,
    seat: Seat,
    record: PresenceRecord,
    now: Millis,
) -> Result<bool> {
    Ok(seen_rule(ctx, row, seat, now)?.holds(record))
}

/// When `seat` of `row` counts as present at `now`: a live lease, or seen
/// within the grace of its turn (after `now` less the grace).
pub(crate) fn seen_rule(
    ctx: &Context,
    row: &MatchRow,
    seat: Seat,
    now: Millis,
) -> Result<PresentIf> {
    let grace = grace_for(configured_grace(ctx), row.time_control()?, row.bank(seat));
    Ok(PresentIf::SeenAfter(now.saturating_sub(grace)))
}

/// The lease an open event stream holds on its player's seat; dropping it
/// (the stream closed) releases it and starts the linger.
#[derive(Debug)]
pub struct Lease {
    ctx: Context,
    key: String,
    holder: String,
    /// How long the seen time it leaves when it closes is kept.
    seen_ttl: Duration,
}

/// Takes a lease on `seat` of `row` for an event stream that opens now.
///
/// # Errors
/// Broker failures.
pub async fn lease(ctx: &Context, row: &MatchRow, seat: Seat) -> Result<Lease> {
    let key = presence_key(&row.id, seat);
    let holder = ctx.streams.add(&ctx.instance, &key);
    // Made before the first await, so a failure below still releases it.
    let lease = Lease {
        ctx: ctx.clone(),
        key,
        holder,
        seen_ttl: seen_ttl(ctx, row),
    };
    ctx.broker
        .hold(
            &[(lease.key.clone(), lease.holder.clone())],
            ctx.config.presence.lease_ttl,
        )
        .await?;
    Ok(lease)
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.ctx.streams.forget(&self.holder);
        let (ctx, key, holder, ttl) = (
            self.ctx.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.holder),
            self.seen_ttl,
        );
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime: the process is ending, and the lease lapses by itself
        };
        runtime.spawn(async move {
            if let Err(err) = closed(&ctx, &key, &holder, ttl).await {
                tracing::warn!(error = %err, "could not release a presence lease; it lapses by itself");
            }
        });
    }
}

/// A stream closed: the seat counts as seen a linger from now, then the lease goes.
async fn closed(ctx: &Context, key: &str, holder: &str, ttl: Duration) -> Result<()> {
    let until = ctx
        .time
        .now_ms()
        .saturating_add(millis(ctx.config.presence.linger));
    // Seen first: between the two calls the seat must never look empty.
    ctx.broker.seen(key, until, ttl).await?;
    ctx.broker.release(key, holder).await?;
    Ok(())
}

/// Renews the leases of every stream this instance holds open; returns how many.
///
/// # Errors
/// Broker failures.
pub async fn renew_leases(ctx: &Context) -> Result<usize> {
    let leases = ctx.streams.all();
    if leases.is_empty() {
        return Ok(0);
    }
    ctx.broker
        .hold(&leases, ctx.config.presence.lease_ttl)
        .await?;
    // A stream that closed while this renewal was under way may have had its
    // release overtaken by the renewal: release it again.
    for (key, holder) in &leases {
        if !ctx.streams.is_open(holder) {
            ctx.broker.release(key, holder).await?;
        }
    }
    Ok(leases.len())
}

/// Whether each seat's player is present: an open event stream, or seen
/// within the grace period of their turn.
///
/// # Errors
/// Broker failures, or a corrupt row.
pub async fn connected(ctx: &Context, row: &MatchRow) -> Result<[bool; 2]> {
    let records = ctx.broker.presence(&seat_keys(&row.id)).await?;
    connected_from(ctx, row, &records)
}

/// The key the `connected` flags last shown of a match are marked under.
pub(crate) fn shown_key(match_id: &str) -> String {
    format!("presence:{match_id}:shown")
}

/// The broker keys of both seats' presence, X first.
pub fn seat_keys(match_id: &str) -> [String; 2] {
    [
        presence_key(match_id, Seat::X),
        presence_key(match_id, Seat::O),
    ]
}

/// [`connected`] from both seats' presence records, read already (X first).
///
/// # Errors
/// A corrupt row.
pub fn connected_from(
    ctx: &Context,
    row: &MatchRow,
    records: &[PresenceRecord],
) -> Result<[bool; 2]> {
    let now = ctx.time.now_ms();
    let record = |i: usize| records.get(i).copied().unwrap_or_default();
    Ok([
        is_present(ctx, row, Seat::X, record(0), now)?,
        is_present(ctx, row, Seat::O, record(1), now)?,
    ])
}
