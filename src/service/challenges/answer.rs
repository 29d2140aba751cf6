//! Answering a challenge: accept (the match is made in the same
//! transaction), decline, cancel, and the expiry of unanswered ones.

use crate::config::LadderConfig;
use crate::rules::{Depth, Seat};
use crate::store::challenges::{self as store, ChallengeRow};
use crate::store::{DbConnection, matches as match_store, players};
use crate::time::Millis;

use super::super::accounts::Player;
use super::super::matches::create::{self, NewMatch, SeatSpec};
use super::super::matches::play::{self, Snapshot};
use super::super::matches::record::{MatchRecord, Mode, seat_str, time_control};
use super::super::{ConflictCode, Context, Error, FieldError, Result, events, ladders, matches};
use super::rated::check_bots;
use super::view::{Accepted, ChallengeView, MAX_REASON_CHARS, SeatChoice, Status, view};

/// Locks the challenge for `player`, who must be one of its two players;
/// a pending challenge past its time is expired on the spot.
pub(super) fn lock_for(
    conn: &mut DbConnection,
    id: &str,
    player: &str,
    now: Millis,
) -> Result<ChallengeRow> {
    let mut row = store::lock(conn, id)?
        .filter(|c| c.challenger_id == player || c.challenged_id == player)
        .ok_or(Error::NotFound("challenge"))?;
    if row.status == Status::Pending.as_str() && row.expires_at <= now {
        row.status = Status::Expired.as_str().to_owned();
        row.updated_at = now;
        store::save(conn, &row)?;
    }
    Ok(row)
}

fn not_pending(row: &ChallengeRow) -> Error {
    Error::conflict(
        ConflictCode::ChallengeNotPending,
        format!("the challenge is {}", row.status),
        Some(("challenge_status", row.status.clone())),
    )
}

/// Makes the challenge's match, X and O as the challenger chose.
fn start_match(
    conn: &mut DbConnection,
    row: &ChallengeRow,
    ctx_ladders: &[LadderConfig],
    now: Millis,
) -> Result<Snapshot> {
    let challenger_x = match SeatChoice::parse(&row.seat) {
        Some(SeatChoice::X) => true,
        Some(SeatChoice::O) => false,
        _ => rand::random::<bool>(),
    };
    let (x, o) = if challenger_x {
        (&row.challenger_id, &row.challenged_id)
    } else {
        (&row.challenged_id, &row.challenger_id)
    };
    let depth = u8::try_from(row.depth)
        .ok()
        .and_then(|d| Depth::new(d).ok())
        .ok_or(Error::Internal("challenge depth".into()))?;
    let tc = time_control(
        &row.tc_kind,
        row.tc_initial_ms,
        row.tc_increment_ms,
        row.tc_turn_ms,
    )?;
    let ladder = row
        .ladder
        .as_deref()
        .map(|id| {
            ctx_ladders.iter().find(|l| l.id == id).ok_or_else(|| {
                Error::Validation(vec![FieldError::new(
                    "ladder",
                    "the ladder is no longer configured",
                )])
            })
        })
        .transpose()?;
    if let Some(ladder) = ladder {
        // Either player may have become a bot since the challenge was made:
        // the flags as they are now, under the lock `POST /me/bot` takes.
        // In id order, so two accepts between the same players cannot deadlock.
        let mut both = [x, o];
        both.sort();
        let mut bots = false;
        for player in both {
            bots |= players::lock_bot(conn, player)?.unwrap_or(false);
        }
        check_bots(ladder, bots)?;
        for player in [x, o] {
            if let Some(match_id) = match_store::active_ranked(conn, player)? {
                return Err(Error::conflict(
                    ConflictCode::InActiveMatch,
                    "a player of this challenge is in an unfinished ranked match",
                    Some(("match_id", match_id)),
                ));
            }
        }
    }
    let spec = NewMatch {
        mode: if ladder.is_some() {
            Mode::Ranked
        } else {
            Mode::Casual
        },
        ladder: ladder.map(|l| l.id.clone()),
        rated: ladder.is_some_and(|l| l.rated),
        depth,
        time_control: tc,
        x: SeatSpec::player(x),
        o: SeatSpec::player(o),
        cpu_level: None,
        room_code: None,
    };
    let mut m = create::new_row(spec, now)?;
    if ladder.is_some() {
        // A ranked match made at the same moment elsewhere (matchmaking on
        // another instance) trips the one-ranked-match index: that is the
        // same conflict as the check above, not a server error.
        match_store::insert(conn, &m).map_err(|e| {
            if e.is_unique_violation() {
                Error::conflict(
                    ConflictCode::InActiveMatch,
                    "a player of this challenge is in an unfinished ranked match",
                    None,
                )
            } else {
                e.into()
            }
        })?;
    } else {
        create::insert_new(conn, &mut m)?;
    }
    if let Some(ladder) = ladder {
        for player in [x, o] {
            ladders::ensure(conn, player, &ladder.id, now)?;
        }
    }
    play::snapshot(conn, m)
}

/// Accepts a challenge made to `player`: the match is made in the same
/// transaction, and both players are told (`challenge_accepted` to the
/// challenger, `match_found` to both).
///
/// # Errors
/// `NotFound`; `forbidden` for the challenger; `challenge_not_pending`;
/// `in_active_match` for a rated challenge while either player has an
/// unfinished ranked match.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn accept(ctx: &Context, player: &Player, id: &str) -> Result<Accepted> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    let ladders_config = ctx.config.ladders.clone();
    let (row, snap) = ctx
        .db
        .write(move |conn| {
            let mut row = lock_for(conn, &cid, &me, now)?;
            if row.challenged_id != me {
                return Err(Error::Forbidden("only the challenged player may accept"));
            }
            if row.status != Status::Pending.as_str() {
                return Err(not_pending(&row));
            }
            let snap = start_match(conn, &row, &ladders_config, now)?;
            row.status = Status::Accepted.as_str().to_owned();
            row.match_id = Some(snap.row.id.to_string());
            row.updated_at = now;
            store::save(conn, &row)?;
            Ok((row, snap))
        })
        .await?;
    let match_id = snap.row.id.to_string();
    tracing::info!(challenge.id = %row.id, match.id = %match_id, "challenge accepted");
    // Before the notices: a challenger told at once opens the match at once.
    matches::present_at_start(ctx, &snap.row, &player.id).await;
    events::notify_player(
        ctx,
        &row.challenger_id,
        "challenge_accepted",
        &serde_json::json!({"id": row.id, "challenge_id": row.id, "match_id": match_id}),
    )
    .await;
    for seat in [Seat::X, Seat::O] {
        if let Some(p) = snap.row.player(seat) {
            events::notify_player(
                ctx,
                p,
                "match_found",
                &serde_json::json!({
                    "match_id": match_id,
                    "ladder": snap.row.ladder,
                    "seat": seat_str(seat),
                    "challenge_id": row.id,
                }),
            )
            .await;
        }
    }
    matches::publish(ctx, &snap).await?;
    Ok(Accepted { match_id })
}

/// Ends a pending challenge as `status` by `player` (declined by the
/// challenged player, cancelled by the challenger), and tells the other one.
async fn close(
    ctx: &Context,
    player: &Player,
    id: &str,
    status: Status,
    reason: Option<String>,
) -> Result<ChallengeView> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    let view = ctx
        .db
        .write(move |conn| {
            let mut row = lock_for(conn, &cid, &me, now)?;
            let allowed = match status {
                Status::Declined => row.challenged_id == me,
                _ => row.challenger_id == me,
            };
            if !allowed {
                return Err(Error::Forbidden(match status {
                    Status::Declined => "only the challenged player may decline",
                    _ => "only the challenger may cancel",
                }));
            }
            if row.status != Status::Pending.as_str() {
                return Err(not_pending(&row));
            }
            row.status = status.as_str().to_owned();
            row.decline_reason = reason;
            row.updated_at = now;
            store::save(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    let (other, event) = match status {
        Status::Declined => (&view.challenger.id, "challenge_declined"),
        _ => (&view.challenged.id, "challenge_cancelled"),
    };
    events::notify_player(ctx, other, event, &view).await;
    Ok(view)
}

/// Declines a challenge made to `player`.
///
/// # Errors
/// `NotFound`; `forbidden` for the challenger; `challenge_not_pending`.
pub async fn decline(
    ctx: &Context,
    player: &Player,
    id: &str,
    reason: Option<String>,
) -> Result<ChallengeView> {
    let reason = reason.map(|r| r.chars().take(MAX_REASON_CHARS).collect());
    close(ctx, player, id, Status::Declined, reason).await
}

/// Withdraws a challenge `player` made.
///
/// # Errors
/// `NotFound`; `forbidden` for the challenged player; `challenge_not_pending`.
pub async fn cancel(ctx: &Context, player: &Player, id: &str) -> Result<ChallengeView> {
    close(ctx, player, id, Status::Cancelled, None).await
}

/// Expires up to `limit` pending challenges whose time ran out and tells
/// both players (`challenge_expired`); returns how many (the expiry worker).
///
/// # Errors
/// Store failures.
pub async fn expire_due(ctx: &Context, limit: i64) -> Result<usize> {
    let now = ctx.time.now_ms();
    let expired = ctx
        .db
        .write(move |conn| {
            let mut done = Vec::new();
            for id in store::due(conn, now, limit)? {
                let Some(mut row) = store::lock(conn, &id)? else {
                    continue;
                };
                // Answered meanwhile.
                if row.status != Status::Pending.as_str() {
                    continue;
                }
                row.status = Status::Expired.as_str().to_owned();
                row.updated_at = now;
                store::save(conn, &row)?;
                done.push(view(conn, &row)?);
            }
            Ok::<_, Error>(done)
        })
        .await?;
    for view in &expired {
        for player in [&view.challenger.id, &view.challenged.id] {
            events::notify_player(ctx, player, "challenge_expired", view).await;
        }
    }
    Ok(expired.len())
}
