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

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::broker::PresenceRecord;
use crate::rules::Seat;
use crate::store::matches::{self as store, MatchRow};
use crate::time::Millis;

use super::super::{Context, Result};
use super::dropout::{self, MIN_GRACE_MS};
use super::play::{self, Snapshot};
use super::publish;
use super::record::{MatchRecord, seat_str};

/// The broker key of a seat's presence.
pub fn presence_key(match_id: &str, seat: Seat) -> String {
    format!("presence:{match_id}:{}", seat_str(seat))
}

/// How long a seen record is kept: well past any grace period and linger.
fn presence_ttl(ctx: &Context) -> Duration {
    (ctx.config.drop_grace * 3 + ctx.config.presence.linger).max(Duration::from_secs(60))
}

fn millis(d: Duration) -> Millis {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
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
    if record.leased {
        return Ok(true);
    }
    let grace = dropout::grace_for(configured_grace(ctx), row.time_control()?, row, seat);
    Ok(record.last_seen.is_some_and(|t| now - t < grace))
}

/// The event streams this instance holds open for seated players: lease
/// holder → seat key. The instance renews their leases.
#[derive(Debug, Default)]
pub struct OpenStreams {
    next: AtomicU64,
    open: Mutex<HashMap<String, String>>,
}

impl OpenStreams {
    fn add(&self, instance: &str, key: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let holder = format!("{instance}:{n}");
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(holder.clone(), key.to_owned());
        holder
    }

    fn forget(&self, holder: &str) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(holder);
    }

    fn all(&self) -> Vec<(String, String)> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(holder, key)| (key.clone(), holder.clone()))
            .collect()
    }

    fn is_open(&self, holder: &str) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(holder)
    }
}

/// The lease an open event stream holds on its player's seat; dropping it
/// (the stream closed) releases it and starts the linger.
#[derive(Debug)]
pub struct Lease {
    ctx: Context,
    key: String,
    holder: String,
}

/// Takes a lease on `seat` of `match_id` for an event stream that opens now.
///
/// # Errors
/// Broker failures.
pub async fn lease(ctx: &Context, match_id: &str, seat: Seat) -> Result<Lease> {
    let key = presence_key(match_id, seat);
    let holder = ctx.streams.add(&ctx.instance, &key);
    // Made before the first await, so a failure below still releases it.
    let lease = Lease {
        ctx: ctx.clone(),
        key,
        holder,
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
        let (ctx, key, holder) = (
            self.ctx.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.holder),
        );
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime: the process is ending, and the lease lapses by itself
        };
        runtime.spawn(async move {
            if let Err(err) = closed(&ctx, &key, &holder).await {
                tracing::warn!(error = %err, "could not release a presence lease; it lapses by itself");
            }
        });
    }
}

/// A stream closed: the seat counts as seen a linger from now, then the lease goes.
async fn closed(ctx: &Context, key: &str, holder: &str) -> Result<()> {
    let until = ctx
        .time
        .now_ms()
        .saturating_add(millis(ctx.config.presence.linger));
    // Seen first: between the two calls the seat must never look empty.
    ctx.broker.seen(key, until, presence_ttl(ctx)).await?;
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

/// Records that the seated player `seat` of `match_id` is present now.
///
/// # Errors
/// Broker failures.
pub async fn touch(ctx: &Context, match_id: &str, seat: Seat) -> Result<bool> {
    let now = ctx.time.now_ms();
    let previous = ctx
        .broker
        .seen(&presence_key(match_id, seat), now, presence_ttl(ctx))
        .await?;
    // Seen within the shortest grace there is: the seat was present already.
    let shortest = configured_grace(ctx).min(MIN_GRACE_MS);
    if previous.is_none_or(|seen| now - seen >= shortest) {
        // Perhaps back after an absence: the `connected` flag may flip, and everyone is told.
        return announce_presence(ctx, match_id).await;
    }
    Ok(false)
}

fn shown_key(match_id: &str) -> String {
    format!("presence:{match_id}:shown")
}

/// The `connected` flags a state shows, as `"10"` (X present, O absent); the CPU opponent is always present.
fn flags_text(row: &MatchRow, raw: [bool; 2]) -> String {
    [Seat::X, Seat::O]
        .iter()
        .zip(raw)
        .map(|(&seat, live)| {
            if row.player(seat).is_none() || live {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

/// Publishes a new state of an active match (with a new version, so streams
/// forward it) when its `connected` flags differ from the last announced.
/// Returns whether it did.
///
/// # Errors
/// Store or broker failures.
pub async fn announce_presence(ctx: &Context, match_id: &str) -> Result<bool> {
    let id = match_id.to_owned();
    let Some(row) = ctx.db.run(move |conn| store::get(conn, &id)).await? else {
        return Ok(false);
    };
    if !row.is_active() {
        return Ok(false);
    }
    let flags = flags_text(&row, connected(ctx, &row).await?);
    let previous = ctx
        .broker
        .mark(&shown_key(match_id), &flags, presence_ttl(ctx))
        .await?;
    if previous.as_deref() == Some(flags.as_str()) {
        return Ok(false);
    }
    let id = match_id.to_owned();
    let snap = ctx
        .db
        .write(move |conn| -> Result<Option<Snapshot>> {
            let Some(mut row) = store::lock(conn, &id)? else {
                return Ok(None);
            };
            if !row.is_active() {
                return Ok(None);
            }
            row.version += 1;
            store::save(conn, &row)?;
            Ok(Some(play::snapshot(conn, row)?))
        })
        .await?;
    match snap {
        Some(snap) => {
            publish(ctx, &snap).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Announces the seats whose presence changed among `rows` (active matches);
/// returns how many matches got a new state.
///
/// # Errors
/// Store or broker failures.
pub async fn announce_absences(ctx: &Context, rows: &[MatchRow]) -> Result<usize> {
    let keys: Vec<String> = rows
        .iter()
        .flat_map(|r| [presence_key(&r.id, Seat::X), presence_key(&r.id, Seat::O)])
        .collect();
    let records = ctx.broker.presence(&keys).await?;
    let shown_keys: Vec<String> = rows.iter().map(|r| shown_key(&r.id)).collect();
    let shown = ctx.broker.marks(&shown_keys).await?;
    let now = ctx.time.now_ms();
    let record = |i: usize| records.get(i).copied().unwrap_or_default();
    let mut announced = 0;
    for (i, row) in rows.iter().enumerate() {
        let raw = [
            is_present(ctx, row, Seat::X, record(2 * i), now)?,
            is_present(ctx, row, Seat::O, record(2 * i + 1), now)?,
        ];
        let flags = flags_text(row, raw);
        let unchanged = shown.get(i).and_then(Option::as_deref) == Some(flags.as_str());
        // A match nobody announced yet only needs one when someone is missing.
        let first_and_full = shown.get(i).is_none_or(Option::is_none) && !flags.contains('0');
        if !unchanged && !first_and_full && announce_presence(ctx, &row.id).await? {
            announced += 1;
        }
    }
    Ok(announced)
}

/// Whether each seat's player is present: an open event stream, or seen
/// within the grace period of their turn.
///
/// # Errors
/// Broker failures, or a corrupt row.
pub async fn connected(ctx: &Context, row: &MatchRow) -> Result<[bool; 2]> {
    let keys = [
        presence_key(&row.id, Seat::X),
        presence_key(&row.id, Seat::O),
    ];
    let records = ctx.broker.presence(&keys).await?;
    let now = ctx.time.now_ms();
    let record = |i: usize| records.get(i).copied().unwrap_or_default();
    Ok([
        is_present(ctx, row, Seat::X, record(0), now)?,
        is_present(ctx, row, Seat::O, record(1), now)?,
    ])
}
