//! Challenges: a player invites a named player to a match. The challenged
//! player accepts (the match is made in the same transaction) or declines; the
//! challenger may cancel; a challenge nobody answers expires after
//! [`TTL_MS`]. A challenger holds at most `UTTT_PENDING_CHALLENGES_PER_PLAYER`
//! pending challenges at once, so nobody can be flooded.

use crate::clock::TimeControl;
use crate::config::LadderConfig;
use crate::ids;
use crate::rules::Depth;
use crate::store::challenges::{self as store, ChallengeRow};
use crate::store::players;

use super::accounts::Player;
use super::matches::record::time_control_columns;
use super::{Context, Error, FieldError, Result, events};

mod answer;
mod rated;
mod view;

use answer::lock_for;
pub use answer::{accept, cancel, decline, expire_due};
use rated::check_ladder;
use view::view;
pub use view::{
    Accepted, ChallengePlayer, ChallengeView, MAX_REASON_CHARS, MyChallenges, NewChallenge,
    SeatChoice, Status, TTL_MS,
};

/// The depth and time control of the match, from the request and the ladder.
fn settings(spec: &NewChallenge, ladder: Option<&LadderConfig>) -> Result<(Depth, TimeControl)> {
    let Some(ladder) = ladder else {
        return Ok((
            spec.depth.unwrap_or(Depth::TWO),
            spec.time_control.unwrap_or(TimeControl::TOURNAMENT),
        ));
    };
    let depth = Depth::new(ladder.depth).map_err(|_| Error::Internal("ladder depth".into()))?;
    let mut errors = Vec::new();
    if spec.depth.is_some_and(|d| d != depth) {
        errors.push(FieldError::new(
            "depth",
            format!("the ladder `{}` plays depth {}", ladder.id, ladder.depth),
        ));
    }
    if spec
        .time_control
        .is_some_and(|tc| tc != ladder.time_control)
    {
        errors.push(FieldError::new(
            "time_control",
            format!("the ladder `{}` has its own time control", ladder.id),
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    Ok((depth, ladder.time_control))
}

/// Challenges a player.
///
/// # Errors
/// `NotFound` for an unknown player; `validation_failed` for a challenge to
/// oneself, an unknown or unrated ladder, or settings that differ from the ladder's; `forbidden` when the challenged
/// player refuses challenges from bots or a bot would play on a ladder closed
/// to bots; `rate_limited` past the pending cap.
#[tracing::instrument(skip(ctx, player, spec), fields(player.id = %player.id))]
pub async fn create(ctx: &Context, player: &Player, spec: NewChallenge) -> Result<ChallengeView> {
    let ladder =
        match spec.ladder.as_deref() {
            None => None,
            Some(id) => Some(ctx.config.ladder(id).cloned().ok_or_else(|| {
                Error::Validation(vec![FieldError::new("ladder", "no such ladder")])
            })?),
        };
    let (depth, tc) = settings(&spec, ladder.as_ref())?;
    let now = ctx.time.now_ms();
    let cap = ctx.config.caps.pending_challenges;
    let me = player.clone();
    let view = ctx
        .db
        .write(move |conn| {
            let them =
                players::by_username(conn, &spec.username)?.ok_or(Error::NotFound("player"))?;
            if them.id == me.id {
                return Err(Error::Validation(vec![FieldError::new(
                    "username",
                    "you cannot challenge yourself",
                )]));
            }
            // The flag as it is now, under the lock `POST /me/bot` takes.
            let me_bot = players::lock_bot(conn, &me.id)?.unwrap_or(me.bot);
            if me_bot && !them.accept_bot_challenges {
                return Err(Error::Forbidden(
                    "this player does not accept challenges from bots",
                ));
            }
            if let Some(ladder) = &ladder {
                check_ladder(ladder, me_bot || them.bot)?;
            }
            let pending = store::pending_from(conn, &me.id, now)?;
            if pending.len() >= usize::try_from(cap).unwrap_or(usize::MAX) {
                let first_free = pending.first().map_or(now, |c| c.expires_at);
                let secs = first_free.saturating_sub(now).max(0) / 1000 + 1;
                return Err(Error::RateLimited {
                    retry_after_secs: u64::try_from(secs).unwrap_or(1),
                });
            }
            let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) = time_control_columns(tc);
            let row = ChallengeRow {
                id: ids::record_id(),
                challenger_id: me.id.clone(),
                challenged_id: them.id,
                depth: i16::from(depth.get()),
                tc_kind,
                tc_initial_ms,
                tc_increment_ms,
                tc_turn_ms,
                seat: spec.seat.as_str().to_owned(),
                ladder: ladder.map(|l| l.id),
                status: Status::Pending.as_str().to_owned(),
                decline_reason: None,
                match_id: None,
                created_at: now,
                expires_at: now.saturating_add(TTL_MS),
                updated_at: now,
            };
            store::insert(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    tracing::info!(challenge.id = %view.id, "challenge made");
    events::notify_player(ctx, &view.challenged.id, "challenge", &view).await;
    Ok(view)
}

/// A challenge `player` made or received.
///
/// # Errors
/// `NotFound` (also for other players' challenges).
pub async fn get(ctx: &Context, player: &Player, id: &str) -> Result<ChallengeView> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    ctx.db
        .write(move |conn| {
            let row = lock_for(conn, &cid, &me, now)?;
            view(conn, &row)
        })
        .await
}

/// The player's pending challenges, incoming and outgoing.
///
/// # Errors
/// Store failures.
pub async fn mine(ctx: &Context, player: &Player) -> Result<MyChallenges> {
    let now = ctx.time.now_ms();
    let me = player.id.clone();
    ctx.db
        .run(move |conn| {
            let incoming = store::pending_to(conn, &me, now)?;
            let outgoing = store::pending_from(conn, &me, now)?;
            Ok(MyChallenges {
                incoming: incoming
                    .iter()
                    .map(|r| view(conn, r))
                    .collect::<Result<_>>()?,
                outgoing: outgoing
                    .iter()
                    .map(|r| view(conn, r))
                    .collect::<Result<_>>()?,
            })
        })
        .await
}
