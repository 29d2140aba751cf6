//! An arena entrant's running totals (the core's [`Tally`]) as stored on
//! their entry, and [`record_end`], which adds a game to them in the
//! transaction that ends the match. Apart from the arena's pass so that the
//! end of a match (`service::matches::play`) reaches it without importing
//! the pass, which creates matches.

use crate::rules::Seat;
use crate::service::{Error, Result};
use crate::store::DbConnection;
use crate::store::kinds::StoredSeat;
use crate::store::tournaments::{self as store, TallyRow};
use crate::time::Millis;
use crate::tournament::arena::{Ending, Tally};
use crate::tournament::{GameResult, SeatHistory};

/// Stored totals in the core's form (a negative count is a corrupt record).
pub(super) fn tally_of(row: &TallyRow) -> Result<Tally> {
    let n = |v: i32| u32::try_from(v).map_err(|_| Error::Internal("negative arena total".into()));
    Ok(Tally {
        points: n(row.points)?,
        games: n(row.games)?,
        wins: n(row.wins)?,
        draws: n(row.draws)?,
        losses: n(row.losses)?,
        berserks: n(row.berserks)?,
        streak: n(row.streak)?,
        performance_sum: row.performance_sum,
        seats: SeatHistory {
            x_games: n(row.x_games)?,
            o_games: n(row.o_games)?,
            last: row
                .last_seat
                .as_deref()
                .and_then(StoredSeat::parse)
                .map(|s| s.0),
        },
        last_opponent: row.last_opponent_id.clone(),
        last_end: row.last_end_at,
    })
}

/// The core's totals as stored.
pub(super) fn tally_row(t: &Tally) -> TallyRow {
    let n = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    TallyRow {
        points: n(t.points),
        games: n(t.games),
        wins: n(t.wins),
        draws: n(t.draws),
        losses: n(t.losses),
        berserks: n(t.berserks),
        streak: n(t.streak),
        performance_sum: t.performance_sum,
        x_games: n(t.seats.x_games),
        o_games: n(t.seats.o_games),
        last_seat: t.seats.last.map(|s| StoredSeat(s).as_str().to_owned()),
        last_opponent_id: t.last_opponent.clone(),
        last_end_at: t.last_end,
    }
}

/// Adds a game that just ended (`winner`, at `at`) to its players' arena
/// totals, if it is an arena game: called in the transaction that ends the
/// match, with the match locked. Entrants are locked in player order, so two
/// games ending at once never deadlock; a player sits in one of an arena's
/// games at a time, so nothing else waits on them but a withdrawal.
///
/// # Errors
/// Database errors; corrupt totals.
pub fn record_end(
    conn: &mut DbConnection,
    match_id: &str,
    winner: Option<Seat>,
    at: Millis,
) -> Result<()> {
    let Some((game, ends_at)) = store::arena_game(conn, match_id)? else {
        return Ok(());
    };
    let tid = &game.tournament_id;
    let rows = store::lock_entrants(conn, tid, &[&game.x_player_id, &game.o_player_id])?;
    let find = |id: &str| rows.iter().find(|e| e.player_id == id);
    // An entrant deleted with their account: nothing left to total.
    let (Some(x), Some(o)) = (find(&game.x_player_id), find(&game.o_player_id)) else {
        return Ok(());
    };
    for (me, them, seat, berserk) in [
        (x, o, Seat::X, game.x_berserk),
        (o, x, Seat::O, game.o_berserk),
    ] {
        let mut tally = tally_of(&me.tally)?;
        tally.record(&Ending {
            seat,
            opponent: &them.player_id,
            opponent_rating: them.rating,
            result: GameResult::from_winner(winner),
            berserk,
            at,
            ends_at: ends_at.unwrap_or(Millis::MAX),
        });
        store::save_tally(conn, tid, &me.player_id, &tally_row(&tally))?;
    }
    Ok(())
}
