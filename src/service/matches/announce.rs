//! Telling everyone when presence changes: a seated player's request or
//! heartbeat records them as seen, and a state with new `connected` flags is
//! published whenever the flags differ from the last ones announced.

use crate::broker::PresenceRecord;
use crate::rules::Seat;
use crate::store::matches::{self as store, MatchRow};
use crate::time::Millis;

use super::super::{Context, Result};
use super::grace::MIN_GRACE_MS;
use super::play::{self, Snapshot};
use super::presence::{
    configured_grace, connected, connected_from, is_present, presence_key, presence_ttl, seat_keys,
    seen_ttl, shown_key,
};
use super::publish::publish;
use super::record::MatchRecord;

/// Records that the seated player `seat` of `row` is present now.
///
/// # Errors
/// Broker failures.
pub async fn touch(ctx: &Context, row: &MatchRow, seat: Seat) -> Result<bool> {
    let now = ctx.time.now_ms();
    let previous = ctx
        .broker
        .seen(&presence_key(&row.id, seat), now, seen_ttl(ctx, row))
        .await?;
    after_seen(ctx, &row.id, previous, now).await
}

/// [`touch`], reading in the same broker call both seats' presence records
/// as they stand after it (X first), for a state rendered next.
///
/// # Errors
/// Broker failures.
pub async fn touch_reading(
    ctx: &Context,
    row: &MatchRow,
    seat: Seat,
) -> Result<(bool, Vec<PresenceRecord>)> {
    let now = ctx.time.now_ms();
    let (previous, records) = seen_reading(ctx, row, seat, now).await?;
    Ok((after_seen(ctx, &row.id, previous, now).await?, records))
}

/// Records `seat` of `row` as seen at `now` and reads both seats' presence
/// records as they stand after it (X first), in one broker call; answers the
/// seat's seen time before, too.
async fn seen_reading(
    ctx: &Context,
    row: &MatchRow,
    seat: Seat,
    now: Millis,
) -> Result<(Option<Millis>, Vec<PresenceRecord>)> {
    Ok(ctx
        .broker
        .seen_then_presence(
            &presence_key(&row.id, seat),
            now,
            seen_ttl(ctx, row),
            &seat_keys(&row.id),
        )
        .await?)
}

/// After a move's state went out with the mover's presence, and its flags
/// were marked as shown (`publish::publish_seen`): if the mover was last
/// seen at `previous` (before `now`) long enough ago that they may have
/// counted as gone, and the match moved past `version` (the move's) in the
/// meantime, a newer state may have gone out between the move's commit and
/// its publication showing them absent (the presence worker of another
/// instance, say). Streams keep that newer one, and the mark no longer tells
/// the worker it is stale, so the presence is published once more. Returns
/// whether it was.
///
/// # Errors
/// Store or broker failures.
pub(super) async fn after_seen_published(
    ctx: &Context,
    match_id: &str,
    version: i32,
    previous: Option<Millis>,
    now: Millis,
) -> Result<bool> {
    if !may_have_been_absent(ctx, previous, now) {
        return Ok(false);
    }
    let id = match_id.to_owned();
    let Some(row) = ctx.db.run(move |conn| store::get(conn, &id)).await? else {
        return Ok(false);
    };
    if !row.is_active() || row.version == version {
        return Ok(false);
    }
    publish_presence(ctx, match_id).await
}

/// Whether a seat last seen at `previous` (before `now`) may have counted
/// as gone: not seen within the shortest grace there is.
fn may_have_been_absent(ctx: &Context, previous: Option<Millis>, now: Millis) -> bool {
    let shortest = configured_grace(ctx).min(MIN_GRACE_MS);
    previous.is_none_or(|seen| now - seen >= shortest)
}

/// Announces the seat's presence if it was last seen at `previous` (before
/// `now`) long enough ago that it may have counted as gone; returns whether
/// a new state was published.
async fn after_seen(
    ctx: &Context,
    match_id: &str,
    previous: Option<Millis>,
    now: Millis,
) -> Result<bool> {
    // Seen within the shortest grace there is: the seat was present already.
    if may_have_been_absent(ctx, previous, now) {
        // Perhaps back after an absence: the `connected` flag may flip, and everyone is told.
        return announce_presence(ctx, match_id).await;
    }
    Ok(false)
}

/// The `connected` flags a state shows, as `"10"` (X present, O absent); the CPU opponent is always present.
fn flags_text(row: &MatchRow, raw: [bool; 2]) -> String {
    let [x, o] = raw;
    crate::broker::flags_text([
        x || row.player(Seat::X).is_none(),
        o || row.player(Seat::O).is_none(),
    ])
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
    publish_presence(ctx, match_id).await
}

/// Publishes the match's state as it stands, with a new version, for new
/// `connected` flags. Returns whether it did (the match is still active).
async fn publish_presence(ctx: &Context, match_id: &str) -> Result<bool> {
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
            // A player's first move announces them, after its write: the
            // row remembered for the next move is this one now.
            if let Some(pipeline) = ctx.db.pipeline() {
                super::pipelined::remember(pipeline, &snap.row);
            }
            publish(ctx, &snap).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Counts the seat of `maker`, the player whose request made `row`, a new
/// match, as present from its first state, which is shown after this: their
/// request is one on the match, and they are here (a maker not seated at it
/// is left out). Their first request on it then
/// has nothing new to announce; before, it wrote and published a second
/// state of every such match for their `connected` flag alone. The other
/// seat is shown as it stands (absent until its player comes).
///
/// Best effort: the match is committed, so a failure here is logged and
/// costs only that second state, made by the maker's first request as before.
pub async fn present_at_start(ctx: &Context, row: &MatchRow, maker: &str) {
    let Some(seat) = row.seat_of(maker) else {
        return;
    };
    if let Err(err) = mark_present_at_start(ctx, row, seat).await {
        tracing::warn!(match.id = %row.id, error = %err, "could not record a new match's maker as present");
    }
}

async fn mark_present_at_start(ctx: &Context, row: &MatchRow, seat: Seat) -> Result<()> {
    let (_, records) = seen_reading(ctx, row, seat, ctx.time.now_ms()).await?;
    // Should the other player's first request announce them between this
    // read and the mark below, the mark may lag the flags published; the
    // presence worker then finds them differ and publishes once more.
    let flags = flags_text(row, connected_from(ctx, row, &records)?);
    let previous = ctx
        .broker
        .mark(&shown_key(&row.id), &flags, presence_ttl(ctx))
        .await?;
    // The other player came first (between the match's commit and this), and
    // a state showing this seat absent went out: tell everyone it is here.
    if previous.is_some_and(|shown| shown != flags) {
        publish_presence(ctx, &row.id).await?;
    }
    Ok(())
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
