//! A tournament's event stream: event `tournament` with the whole tournament
//! after every change (entry, start, pairing, result, end), its version as
//! the event id; and `tournament_pairing` on the paired players' own streams.

use serde::Serialize;
use utoipa::ToSchema;

use crate::broker::Subscription;

use super::super::{Context, Result, events};
use super::{TournamentView, get};

/// The event channel of a tournament.
pub fn channel(tournament_id: &str) -> String {
    format!("tournament:{tournament_id}")
}

/// Publishes a committed change. Best effort: a stream that misses it
/// resynchronises from the database.
pub async fn publish(ctx: &Context, view: &TournamentView) {
    match serde_json::to_string(view) {
        Ok(json) => {
            let payload = format!("{}\n{json}", view.version);
            if let Err(err) = ctx.broker.publish(&channel(&view.id), payload).await {
                tracing::warn!(tournament.id = %view.id, error = %err, "could not publish a tournament event");
            }
        }
        Err(err) => tracing::error!(error = %err, "could not serialise a tournament"),
    }
}

/// What `tournament_pairing` on `/me/events` says to a paired player.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct PairingEvent {
    /// The tournament.
    pub tournament_id: String,
    /// The Swiss round; `null` in an arena.
    pub round: Option<u32>,
    /// The player's game.
    pub match_id: String,
    /// The player's seat: `x` or `o`.
    pub seat: &'static str,
    /// The player to notify (not sent).
    #[serde(skip)]
    pub player_id: String,
}

/// Tells each paired player their game, in one pipeline.
pub async fn notify_pairings(ctx: &Context, pairings: &[PairingEvent]) {
    let messages: Vec<(String, String)> = pairings
        .iter()
        .filter_map(|p| events::player_message(&p.player_id, "tournament_pairing", p))
        .collect();
    events::notify_players(ctx, &messages).await;
}

/// An open tournament stream: the subscription made before the first read,
/// so no change falls between the two.
pub struct Feed {
    /// Messages published after subscribing.
    pub subscription: Subscription,
    /// The tournament when the stream opened.
    pub initial: TournamentView,
}

/// Opens the event feed of a tournament.
///
/// # Errors
/// `not_found`; store or broker failures.
pub async fn open(ctx: &Context, id: &str) -> Result<Feed> {
    let subscription = ctx.broker.subscribe(&channel(id)).await?;
    let initial = get(ctx, id).await?;
    Ok(Feed {
        subscription,
        initial,
    })
}
