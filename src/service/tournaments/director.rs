//! The director's controls: start now, or call the tournament off.

use crate::store::tournaments as store;

use super::super::accounts::Player;
use super::super::{ConflictCode, Context, Error, Result};
use super::run::{Changed, Settings, start_locked};
use super::{Status, TournamentView, closed, feed, lock, view};

fn not_director() -> Error {
    Error::Forbidden("only the tournament's director may do this")
}

/// Starts a registering tournament now: round 1 is paired and its matches
/// made in the same transaction.
///
/// # Errors
/// `not_found`; `forbidden` for anyone but the director;
/// `tournament_closed` once started; `not_enough_players` below two.
#[tracing::instrument(skip(ctx, director), fields(player.id = %director.id))]
pub async fn start(ctx: &Context, director: &Player, id: &str) -> Result<TournamentView> {
    let now = ctx.time.now_ms();
    let settings = Settings::of(ctx);
    let (id, me) = (id.to_owned(), director.id.clone());
    let changed: Changed = ctx
        .db
        .write(move |conn| {
            let mut row = lock(conn, &id)?;
            if row.director_id != me {
                return Err(not_director());
            }
            if Status::of(&row) != Status::Registering {
                return Err(closed(&row));
            }
            if row.players < 2 {
                return Err(Error::conflict(
                    ConflictCode::NotEnoughPlayers,
                    "a tournament needs two players to start",
                    None,
                ));
            }
            start_locked(conn, &mut row, &settings, now)
        })
        .await?;
    let view = changed
        .publish(ctx)
        .await?
        .ok_or_else(|| Error::Internal("a started tournament has no view".into()))?;
    tracing::info!(tournament.id = %view.id, "tournament started");
    Ok(view)
}

/// Calls a tournament off. Games being played are played out (and rated,
/// when the tournament is), but no round is paired any more.
///
/// # Errors
/// `not_found`; `forbidden` for anyone but the director;
/// `tournament_closed` once finished or cancelled.
#[tracing::instrument(skip(ctx, director), fields(player.id = %director.id))]
pub async fn cancel(ctx: &Context, director: &Player, id: &str) -> Result<TournamentView> {
    let now = ctx.time.now_ms();
    let (id, me) = (id.to_owned(), director.id.clone());
    let view = ctx
        .db
        .write(move |conn| {
            let mut row = lock(conn, &id)?;
            if row.director_id != me {
                return Err(not_director());
            }
            if matches!(Status::of(&row), Status::Finished | Status::Cancelled) {
                return Err(closed(&row));
            }
            row.status = Status::Cancelled.as_str().to_owned();
            row.finished_at = Some(now);
            row.ends_at = Some(now);
            row.next_at = None;
            row.version += 1;
            store::save(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    feed::publish(ctx, &view).await;
    Ok(view)
}
