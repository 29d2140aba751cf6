//! The events every committed change of a match publishes: its state,
//! rendered with live presence, on the match's channel.

use crate::broker::PresenceRecord;

use super::super::{Context, Result};
use super::grace::heartbeat_ms;
use super::play::Snapshot;
use super::presence::{configured_grace, connected, connected_from};
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
        ctx.time.now_ms(),
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
    if snap.row.awaiting_cpu {
        ctx.signals.cpu.notify_one();
    }
    if snap.tournament.is_some() && !snap.row.is_active() {
        // The tournament worker records the result (and may pair the next round).
        ctx.signals.tournaments.notify_one();
    }
    Published { state, json }
}

/// Splits a published payload into its version and JSON.
pub fn parse_payload(payload: &str) -> Option<(i32, &str)> {
    let (version, json) = payload.split_once('\n')?;
    Some((version.parse().ok()?, json))
}
