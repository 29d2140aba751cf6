//! A pairing round's matches, written with the queued tickets they were
//! made from.
//!
//! Seats name existing players (`store::seat_guard`), which a seat writer
//! checks with one statement that probes every player it seats. Here the
//! tickets vouch for them instead: a ticket's row goes with its player
//! (`ON DELETE CASCADE`), and once the seat lock is held, the tickets are
//! marked matched by ticket and player in one statement. If it marks them
//! all, every seated player existed when it began, and no deletion can have
//! committed since (a deletion waits for the lock). So this holds only while
//! `tickets.player_id` keeps its `ON DELETE CASCADE` key
//! (`paired_tests` deletes a player during a write). The players check was a
//! tenth of the database's time in a round of 100,000 tickets.

use std::collections::HashSet;

use super::matches::{self, MatchRow};
use super::tickets::{self, Seated};
use super::{DbConnection, StoreError, seat_guard};

/// Writes `rows`, new matches whose seated players are players of
/// `seated`, with their seats, and marks the tickets of `seated` matched.
///
/// Nothing checks the players apart: the caller must roll the transaction
/// back on any error, since the seats may then name a missing player.
///
/// # Errors
/// A unique violation when a player already sits in an unfinished ranked
/// match (`match_players_one_ranked`); a foreign-key violation when a ticket
/// is no longer queued for its player (it left the queue, or its player was
/// deleted), or a seat has no ticket of its player among `seated`; database
/// errors.
pub fn insert_with_tickets(
    conn: &mut DbConnection,
    rows: &[MatchRow],
    seated: &[Seated<'_>],
    now: i64,
) -> Result<(), StoreError> {
    if rows.is_empty() && seated.is_empty() {
        // Every pair of the chunk was left out: no seat, no lock to wait for.
        return Ok(());
    }
    let vouched: HashSet<&str> = seated.iter().map(|s| s.player).collect();
    if let Some(player) = rows
        .iter()
        .flat_map(MatchRow::seated_players)
        .find(|p| !vouched.contains(p))
    {
        return Err(seat_guard::missing_players(format!(
            "seat of {player} without a ticket"
        )));
    }
    if matches!(conn, DbConnection::Pg(_)) {
        seat_guard::hold_for_seats(conn)?;
        matches::write_many(conn, rows)?;
    } else {
        // SQLite checks every seat against its key in any case.
        matches::insert_many(conn, rows)?;
    }
    let marked = tickets::mark_matched_many(conn, seated, now)?;
    if marked == seated.len() {
        return Ok(());
    }
    Err(seat_guard::missing_players(format!(
        "{} of {} tickets are no longer queued for their players",
        seated.len() - marked,
        seated.len()
    )))
}
