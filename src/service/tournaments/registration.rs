//! Entering and leaving a tournament: join (entry code, capacity, minimum
//! rating), withdraw, and the director's removal of a player.

use crate::config::LadderConfig;
use crate::store::tournaments::{self as store, EntrantRow, TallyRow, TournamentRow};
use crate::store::{DbConnection, players};

use super::super::accounts::Player;
use super::super::{ConflictCode, Context, Error, Result};
use super::run::Settings;
use super::{
    Kind, Status, TournamentView, closed, current_rating, feed, lock, rating_ladder, view,
};

/// Whether a tournament still takes entries: a Swiss until round 1 is paired.
fn open_for_entries(row: &TournamentRow) -> bool {
    match Status::of(row) {
        Status::Registering => true,
        Status::Running => Kind::parse(&row.kind) == Some(Kind::Arena),
        Status::Finished | Status::Cancelled => false,
    }
}

/// A tournament not over yet, rated on a ladder closed to bots, that
/// `player_id` may still play in: entered and not withdrawn, paused in an
/// arena (joining again brings them back), or with a game of it still being
/// played out. Turning the account into a bot waits for it (`POST /me/bot`).
///
/// # Errors
/// Store failures.
pub fn rated_entry_closed_to_bots(
    conn: &mut DbConnection,
    player_id: &str,
    ladders: &[LadderConfig],
) -> Result<Option<String>> {
    for (row, entry) in store::unfinished_of(conn, player_id)? {
        if !row.rated || rating_ladder(ladders, &row).is_none_or(|l| l.bots) {
            continue;
        }
        let may_come_back = Kind::parse(&row.kind) == Some(Kind::Arena) && !entry.removed;
        // The games are read only for an entrant who can play no new one.
        if !entry.withdrawn
            || may_come_back
            || store::open_games(conn, &row.id)?
                .iter()
                .any(|(x, o)| x == player_id || o == player_id)
        {
            return Ok(Some(row.id));
        }
    }
    Ok(None)
}

/// Whether an entrant's join is a comeback: an arena that is running, a
/// player who withdrew (paused) and was not removed by the director.
fn comes_back(row: &TournamentRow, entry: &EntrantRow) -> bool {
    Kind::parse(&row.kind) == Some(Kind::Arena)
        && Status::of(row) == Status::Running
        && entry.withdrawn
        && !entry.removed
}

/// Joins `player` to a tournament; in a running arena, a player who
/// withdrew comes back into the pool.
///
/// # Errors
/// `not_found`; `tournament_closed`; `already_joined`; `forbidden` for a
/// wrong or missing entry code, a rating below `min_rating`, or a bot on a
/// ladder closed to bots; `tournament_full`.
#[tracing::instrument(skip(ctx, player, entry_code), fields(player.id = %player.id))]
pub async fn join(
    ctx: &Context,
    player: &Player,
    id: &str,
    entry_code: Option<String>,
) -> Result<TournamentView> {
    let now = ctx.time.now_ms();
    let settings = Settings::of(ctx);
    let (id, me) = (id.to_owned(), player.clone());
    let view = ctx
        .db
        .write(move |conn| {
            let mut row = lock(conn, &id)?;
            if !open_for_entries(&row) {
                return Err(closed(&row));
            }
            if let Some(entry) = store::entrant(conn, &row.id, &me.id)? {
                if comes_back(&row, &entry) {
                    store::come_back(conn, &row.id, &me.id, now)?;
                    row.version += 1;
                    store::save(conn, &row)?;
                    return view(conn, &row);
                }
                return Err(Error::conflict(
                    ConflictCode::AlreadyJoined,
                    "you already entered this tournament",
                    None,
                ));
            }
            if let Some(code) = &row.entry_code
                && entry_code.as_deref().map(str::trim) != Some(code.as_str())
            {
                return Err(Error::Forbidden(
                    "this tournament needs its entry code (the one given is missing or wrong)",
                ));
            }
            let ladder = rating_ladder(&settings.ladders, &row);
            // The flag as it is now, under the lock `POST /me/bot` takes.
            let bot = players::lock_bot(conn, &me.id)?.unwrap_or(me.bot);
            if bot && row.rated && ladder.is_some_and(|l| !l.bots) {
                return Err(Error::Forbidden(
                    "bot accounts may only play on ladders open to bots",
                ));
            }
            let rating = current_rating(conn, &me.id, ladder, settings.growth, now)?;
            if row.min_rating.is_some_and(|min| rating < min) {
                return Err(Error::Forbidden(
                    "your rating is below this tournament's minimum",
                ));
            }
            if row.max_players.is_some_and(|max| row.players >= max) {
                return Err(Error::conflict(
                    ConflictCode::TournamentFull,
                    "the tournament has all the players it takes",
                    None,
                ));
            }
            store::add_entrant(
                conn,
                &EntrantRow {
                    tournament_id: row.id.clone(),
                    player_id: me.id.clone(),
                    rating,
                    withdrawn: false,
                    joined_at: now,
                    back_at: None,
                    removed: false,
                    tally: TallyRow::default(),
                },
            )?;
            row.players += 1;
            row.version += 1;
            store::save(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    feed::publish(ctx, &view).await;
    Ok(view)
}

/// Takes `player_id` out of a locked tournament: before the start the entry
/// is deleted; once running the player is withdrawn (no further pairings;
/// games played count, a game in progress is played out).
fn leave(
    conn: &mut DbConnection,
    row: &mut TournamentRow,
    player_id: &str,
    removed: bool,
) -> Result<()> {
    let entry = store::entrant(conn, &row.id, player_id)?.ok_or(Error::NotFound("entrant"))?;
    match Status::of(row) {
        Status::Registering => {
            store::delete_entrant(conn, &row.id, player_id)?;
            row.players -= 1;
        }
        Status::Running => {
            if removed {
                store::remove_entrant(conn, &row.id, player_id)?;
            } else if !entry.withdrawn {
                store::withdraw_entrant(conn, &row.id, player_id)?;
            }
        }
        Status::Finished | Status::Cancelled => return Err(closed(row)),
    }
    row.version += 1;
    store::save(conn, row)?;
    Ok(())
}

async fn leave_as(
    ctx: &Context,
    id: &str,
    actor: &Player,
    player_id: &str,
    director_only: bool,
) -> Result<TournamentView> {
    let (id, actor_id, player_id) = (id.to_owned(), actor.id.clone(), player_id.to_owned());
    let view = ctx
        .db
        .write(move |conn| {
            let mut row = lock(conn, &id)?;
            if director_only && row.director_id != actor_id {
                return Err(Error::Forbidden(
                    "only the tournament's director may do this",
                ));
            }
            leave(conn, &mut row, &player_id, director_only)?;
            view(conn, &row)
        })
        .await?;
    feed::publish(ctx, &view).await;
    Ok(view)
}

/// Withdraws `player` from a tournament.
///
/// # Errors
/// `not_found` (also when not entered); `tournament_closed` once it is over.
pub async fn withdraw(ctx: &Context, player: &Player, id: &str) -> Result<TournamentView> {
    leave_as(ctx, id, player, &player.id, false).await
}

/// The director removes `player_id` (as a withdrawal).
///
/// # Errors
/// `not_found`; `forbidden` for anyone but the director; `tournament_closed`.
pub async fn remove(
    ctx: &Context,
    director: &Player,
    id: &str,
    player_id: &str,
) -> Result<TournamentView> {
    leave_as(ctx, id, director, player_id, true).await
}
