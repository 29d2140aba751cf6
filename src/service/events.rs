//! A player's own event stream (`/api/v1/me/events`): `match_found` and the like.

use serde::Serialize;

use crate::broker::Subscription;

use super::{Context, Result};

/// The channel of a player's own events.
pub fn channel(player_id: &str) -> String {
    format!("player:{player_id}")
}

/// Sends `event` with `data` to every open stream of the player. Best effort:
/// the same facts are always readable from the API (tickets, match lists).
pub async fn notify_player(ctx: &Context, player_id: &str, event: &str, data: &impl Serialize) {
    if let Some(message) = player_message(player_id, event, data) {
        notify_players(ctx, std::slice::from_ref(&message)).await;
    }
}

/// The `(channel, payload)` of a player event, for [`notify_players`].
pub fn player_message(
    player_id: &str,
    event: &str,
    data: &impl Serialize,
) -> Option<(String, String)> {
    match serde_json::to_string(data) {
        Ok(json) => Some((channel(player_id), format!("{event}\n{json}"))),
        Err(err) => {
            tracing::error!(error = %err, "could not serialise a player event");
            None
        }
    }
}

/// Sends player events made by [`player_message`], pipelined. Best effort,
/// as [`notify_player`].
pub async fn notify_players(ctx: &Context, messages: &[(String, String)]) {
    if messages.is_empty() {
        return;
    }
    if let Err(err) = ctx.broker.publish_many(messages).await {
        tracing::warn!(events = messages.len(), error = %err, "could not publish player events");
    }
}

/// Subscribes to a player's events.
///
/// # Errors
/// Broker failures.
pub async fn subscribe(ctx: &Context, player_id: &str) -> Result<Subscription> {
    Ok(ctx.broker.subscribe(&channel(player_id)).await?)
}

/// Splits a published payload into event name and JSON data.
pub fn parse_payload(payload: &str) -> Option<(&str, &str)> {
    payload.split_once('\n')
}
