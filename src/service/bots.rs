//! Bot accounts and the players' preferences about them. A player turns
//! their account into a bot for good; bots play through the same endpoints
//! as humans, only on ladders open to bots, and humans may refuse their
//! challenges.

use serde::Serialize;
use utoipa::ToSchema;

use crate::store::{matches as match_store, players, ratings, tickets};

use super::accounts::Player;
use super::tournaments::registration::rated_entry_closed_to_bots;
use super::{ConflictCode, Context, Error, Result};

/// A player's preferences.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct Preferences {
    /// Whether challenges from bot accounts reach you.
    pub accept_bot_challenges: bool,
}

/// Turns `player`'s account into a bot, for good. Asking again answers the same.
///
/// What the account committed to as a human and a bot may not do is
/// refused here rather than undone: a queued ticket (it may be paired on a
/// ladder closed to bots before the next look at the flag) and a place in a
/// tournament not over yet that is rated on such a ladder
/// ([`rated_entry_closed_to_bots`]). A pending rated challenge is checked
/// when it is accepted.
///
/// # Errors
/// `has_rated_games` when the account played rated games as a human;
/// `in_active_match` while it sits in an unfinished ranked match;
/// `already_queued` while it holds a queued ticket; `already_joined` while
/// it may still play in such a tournament.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn make_bot(ctx: &Context, player: &Player) -> Result<Player> {
    if player.bot {
        return Ok(player.clone());
    }
    let id = player.id.clone();
    let ladders = ctx.config.ladders.clone();
    ctx.db
        .write(move |conn| {
            players::lock(conn, &id)?;
            if let Some(ticket_id) = tickets::queued_for_player(conn, &id)? {
                return Err(Error::conflict(
                    ConflictCode::AlreadyQueued,
                    "cancel your queued ticket first: bots queue only on ladders open to bots",
                    Some(("ticket_id", ticket_id)),
                ));
            }
            if let Some(tournament) = rated_entry_closed_to_bots(conn, &id, &ladders)? {
                return Err(Error::conflict(
                    ConflictCode::AlreadyJoined,
                    "you may still play in a tournament rated on a ladder closed to bots: withdraw (from an arena, wait for its end) and finish your game in it first",
                    Some(("tournament_id", tournament)),
                ));
            }
            let rated = ratings::for_player(conn, &id)?
                .iter()
                .any(|r| r.games > 0);
            if rated {
                return Err(Error::conflict(
                    ConflictCode::HasRatedGames,
                    "this account has played rated games as a human; register a new account for your bot",
                    None,
                ));
            }
            if let Some(match_id) = match_store::active_ranked(conn, &id)? {
                return Err(Error::conflict(
                    ConflictCode::InActiveMatch,
                    "finish your ranked match first",
                    Some(("match_id", match_id)),
                ));
            }
            players::make_bot(conn, &id)?;
            Ok(())
        })
        .await?;
    tracing::info!("account turned into a bot");
    Ok(Player {
        bot: true,
        ..player.clone()
    })
}

/// The player's preferences.
pub fn preferences(player: &Player) -> Preferences {
    Preferences {
        accept_bot_challenges: player.accept_bot_challenges,
    }
}

/// Changes the player's preferences; fields left out stay as they are.
///
/// # Errors
/// Store failures.
pub async fn set_preferences(
    ctx: &Context,
    player: &Player,
    accept_bot_challenges: Option<bool>,
) -> Result<Preferences> {
    let mut prefs = preferences(player);
    if let Some(accept) = accept_bot_challenges {
        let id = player.id.clone();
        ctx.db
            .run(move |conn| players::set_accept_bot_challenges(conn, &id, accept))
            .await?;
        prefs.accept_bot_challenges = accept;
    }
    Ok(prefs)
}
