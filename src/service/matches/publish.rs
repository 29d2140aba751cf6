//! The events every committed change of a match publishes: its state,
//! rendered with live presence, on the match's channel.

use crate::broker::{FlaggedPayload, FlaggedPublish, PresenceRecord, PresentIf};
use crate::rules::Seat;
use crate::time::Millis;

use super::super::{Context, Result};
use super::grace::heartbeat_ms;
use super::play::Snapshot;
use super::presence::{
    configured_grace, connected, connected_from, presence_key, presence_ttl, seat_keys, seen_rule,
    seen_ttl, shown_key,
};
use super::record::MatchRecord;
use super::state::{self, MatchState};

/// The event channel of a match.
pub fn channel(match_id: &str) -> String {
    format!("match:{match_id}")
}

/// Renders a snapshot at the current time with live presence.
///
/// # Errors
/// Broker failures or a corrupt row.
pub async fn render(ctx: &Context, snap: &Snapshot) -> Result<MatchState> {
    let connected = connected(ctx, &snap.row).await?;
    render_connected(ctx, snap, connected)
}

/// [`render`] from both seats' presence records read already (X first),
/// as [`super::announce::touch_reading`] returns them.
///
/// # Errors
/// A corrupt row.
pub fn render_read(
    ctx: &Context,
    snap: &Snapshot,
    records: &[PresenceRecord],
) -> Result<MatchState> {
    render_connected(ctx, snap, connected_from(ctx, &snap.row, records)?)
}

/// [`render`] with the seats' `connected` flags known already.
fn render_connected(ctx: &Context, snap: &Snapshot, connected: [bool; 2]) -> Result<MatchState> {
    render_at(ctx, snap, connected, ctx.time.now_ms())
}

/// [`render_connected`] at `now`.
fn render_at(
    ctx: &Context,
    snap: &Snapshot,
    connected: [bool; 2],
    now: Millis,
) -> Result<MatchState> {
    let heartbeat_ms = heartbeat_ms(configured_grace(ctx), snap.row.time_control()?);
    state::render(
        &snap.row,
        &snap.position,
        &snap.names,
        snap.rating_changes.clone(),
        snap.tournament.clone(),
        state::Presence {
            connected,
            heartbeat_ms,
        },
        now,
    )
}

/// Renders a committed change and publishes it to the match's channel.
/// Publishing is best effort: the change is committed, and a stream that
/// misses it resynchronises from the database.
///
/// # Errors
/// Broker failures while rendering presence.
pub async fn publish(ctx: &Context, snap: &Snapshot) -> Result<MatchState> {
    Ok(publish_rendered(ctx, snap).await?.state)
}

/// A state as it was published, with the JSON text it went out as (`None`
/// if it could not be serialised): a move's answer is that same text, so
/// the state is serialised once a move instead of twice.
#[derive(Debug)]
pub struct Published {
    /// The state.
    pub state: MatchState,
    /// Its JSON, as published.
    pub json: Option<String>,
}

/// [`publish`], keeping the JSON the state was published as.
///
/// # Errors
/// Broker failures while rendering presence.
pub async fn publish_rendered(ctx: &Context, snap: &Snapshot) -> Result<Published> {
    let state = render(ctx, snap).await?;
    Ok(send(ctx, snap, state).await)
}

/// [`publish_rendered`] with both seats' presence records read already (X
/// first), as [`super::announce::touch_reading`] returns them.
///
/// # Errors
/// A corrupt row.
pub async fn publish_read(
    ctx: &Context,
    snap: &Snapshot,
    records: &[PresenceRecord],
) -> Result<Published> {
    let state = render_read(ctx, snap, records)?;
    Ok(send(ctx, snap, state).await)
}

/// Records `seat` of `snap`'s match as seen and publishes the snapshot
/// rendered with both seats' presence as it stands after that, in one
/// broker call (a move's, by a seated player): the state is rendered once,
/// its two `connected` flags left for the broker to fill in from the
/// records it reads. The flags are marked as shown, as an announcement
/// marks them: this state announces whatever changed, the mover's return
/// included (but see `announce::after_seen_published`). Returns what
/// [`Seen`] holds; `None` when the state's text does not hold exactly the
/// two flags (it always does; the caller then takes the calls one by one).
///
/// # Errors
/// Broker failures (the state may not have been published), or a corrupt row.
pub async fn publish_seen(ctx: &Context, snap: &Snapshot, seat: Seat) -> Result<Option<Seen>> {
    let now = ctx.time.now_ms();
    let row = &snap.row;
    let mut state = render_at(ctx, snap, [true, true], now)?;
    let Ok(json) = serde_json::to_string(&state) else {
        return Ok(None);
    };
    let Some([before, between, after]) = split_at_flags(&json) else {
        return Ok(None);
    };
    // The payload's head: the version, which a stream reads before the state.
    let prefix = format!("{}\n", state.version);
    let rule = |seat: Seat| -> Result<PresentIf> {
        match row.player(seat) {
            // The CPU's seat shows present whatever the broker holds.
            None => Ok(PresentIf::Always),
            Some(_) => seen_rule(ctx, row, seat, now),
        }
    };
    let (channel, shown) = (channel(&row.id), shown_key(&row.id));
    let out = FlaggedPublish {
        rules: [rule(Seat::X)?, rule(Seat::O)?],
        channel: &channel,
        payload: FlaggedPayload {
            parts: [
                format!("{prefix}{before}"),
                between.to_owned(),
                after.to_owned(),
            ],
        },
        mark: (&shown, presence_ttl(ctx)),
    };
    let (previous, records) = ctx
        .broker
        .seen_then_publish(
            &presence_key(&row.id, seat),
            now,
            seen_ttl(ctx, row),
            &seat_keys(&row.id),
            &out,
        )
        .await?;
    let flags = out.flags(&records);
    state.players.x.connected = flags[0];
    state.players.o.connected = flags[1];
    // The state's text is the payload's without its head.
    let mut json = out.payload.fill(flags);
    json.drain(..prefix.len());
    wake_workers(ctx, snap);
    Ok(Some(Seen {
        published: Published {
            state,
            json: Some(json),
        },
        previous,
        at: now,
    }))
}

/// What [`publish_seen`] did.
#[derive(Debug)]
pub struct Seen {
    /// The state as published.
    pub published: Published,
    /// When the seat was seen before, if it was.
    pub previous: Option<Millis>,
    /// The time it was recorded as seen at.
    pub at: Millis,
}

/// The text of a state with both seats shown `connected` (and nothing else
/// can read as that field: a string's quotes are escaped), around its two
/// flags: before X's, between, after O's. `None` unless there are exactly two.
fn split_at_flags(json: &str) -> Option<[&str; 3]> {
    const KEY: &str = "\"connected\":";
    const FLAG: &str = "\"connected\":true";
    let mut at = json.match_indices(FLAG).map(|(i, _)| i);
    let (x, o) = (at.next()?, at.next()?);
    if at.next().is_some() {
        return None;
    }
    Some([
        &json[..x + KEY.len()],
        &json[x + FLAG.len()..o + KEY.len()],
        &json[o + FLAG.len()..],
    ])
}

/// Publishes a rendered state and wakes the workers it concerns.
async fn send(ctx: &Context, snap: &Snapshot, state: MatchState) -> Published {
    let json = match serde_json::to_string(&state) {
        Ok(json) => {
            let payload = format!("{}\n{json}", state.version);
            if let Err(err) = ctx.broker.publish(&channel(&state.id), payload).await {
                tracing::warn!(match.id = %state.id, error = %err, "could not publish match state");
            }
            Some(json)
        }
        Err(err) => {
            tracing::error!(match.id = %state.id, error = %err, "could not serialise match state");
            None
        }
    };
    wake_workers(ctx, snap);
    Published { state, json }
}

/// Wakes the workers a published state concerns.
fn wake_workers(ctx: &Context, snap: &Snapshot) {
    if snap.row.awaiting_cpu {
        ctx.signals.cpu.notify_one();
    }
    if snap.tournament.is_some() && !snap.row.is_active() {
        // The tournament worker records the result (and may pair the next round).
        ctx.signals.tournaments.notify_one();
    }
}

/// Splits a published payload into its version and JSON.
pub fn parse_payload(payload: &str) -> Option<(i32, &str)> {
    let (version, json) = payload.split_once('\n')?;
    Some((version.parse().ok()?, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_splits_at_its_two_flags_only() {
        // A name that spells the field out is escaped, so it is not a flag.
        let json = r#"{"players":{"x":{"username":"\"connected\":true","connected":true,"bot":false},"o":{"username":"b","connected":true}},"v":1}"#;
        let [before, between, after] = split_at_flags(json).unwrap();
        assert!(before.ends_with(r#""username":"\"connected\":true","connected":"#));
        assert_eq!(between, r#","bot":false},"o":{"username":"b","connected":"#);
        assert_eq!(after, "}},\"v\":1}");
        let payload = FlaggedPayload {
            parts: [before.into(), between.into(), after.into()],
        };
        assert_eq!(payload.fill([true, true]), json);
        assert_eq!(
            payload.fill([false, true]),
            json.replacen(
                r#","connected":true,"bot""#,
                r#","connected":false,"bot""#,
                1
            )
        );
        // One flag, three, or a flag shown false: not a state to fill in.
        assert_eq!(split_at_flags(r#"{"connected":true}"#), None);
        assert_eq!(
            split_at_flags(r#"{"connected":true,"a":{"connected":true},"connected":true}"#),
            None
        );
        assert_eq!(
            split_at_flags(r#"{"connected":false,"o":{"connected":true}}"#),
            None
        );
    }
}
