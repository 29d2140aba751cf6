//! Seats name existing players, without a per-row foreign key.
//!
//! On PostgreSQL `match_players.player_id` has no key to `players` (issue
//! 18: a pairing round of 10,000 seats paid a trigger query and a row lock
//! per seat for it). In its place every transaction that writes seats
//! through `store::matches` (the server's only seat writers; `uttt admin
//! seed` writes finished matches of players it has just made) takes a
//! shared advisory lock and then checks, in one statement, that all its
//! players exist; deleting a player takes the same lock exclusively first.
//! So a deletion waits for seat writers under way (and then empties the
//! seats they wrote), and a seat writer that waited for a deletion sees the
//! player gone, since each statement of a `READ COMMITTED` transaction reads
//! what committed before it began. The lock lasts until the transaction
//! ends, so it guards nothing outside one. SQLite keeps its key (one writer
//! at a time there), and gets the same check.
//!
//! A pairing round's seats skip the check (`store::paired`): after the lock,
//! the round marks the queued tickets it seats, by ticket and player, and a
//! ticket's row goes with its player, so every ticket marked proves its
//! player as the check would.

use std::collections::BTreeSet;

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

use super::schema::players;
use super::{DbConnection, StoreError};

/// Key of the PostgreSQL advisory lock between seat writers (shared) and a
/// player's deletion (exclusive).
const SEATS_LOCK: i64 = 0x7574_7474_7365_6174;

/// Players checked per statement (SQLite binds each one).
const CHECK_CHUNK: usize = 10_000;

/// Before seats of `players` are written in the current transaction: waits
/// for any deletion of a player under way, then refuses the write (as a
/// foreign-key violation) if one of them does not exist.
///
/// # Errors
/// A `ForeignKeyViolation` query error naming the missing players; database
/// errors.
pub(crate) fn check_players(conn: &mut DbConnection, ids: &[&str]) -> Result<(), StoreError> {
    let wanted: BTreeSet<&str> = ids.iter().copied().collect();
    if wanted.is_empty() {
        return Ok(());
    }
    // Its own statement: the check below must read after the lock is held.
    hold_for_seats(conn)?;
    let wanted: Vec<&str> = wanted.into_iter().collect();
    let mut found = 0;
    for chunk in wanted.chunks(CHECK_CHUNK) {
        let n: i64 = players::table
            .filter(players::id.eq_any(chunk))
            .count()
            .get_result(conn)?;
        found += usize::try_from(n).unwrap_or(0);
    }
    if found == wanted.len() {
        return Ok(());
    }
    Err(missing_players(format!(
        "{} of {} seated players do not exist",
        wanted.len() - found,
        wanted.len()
    )))
}

/// The error of a seat write whose players are not all known to exist: a
/// foreign-key violation, as SQLite's key reports it.
pub(super) fn missing_players(message: String) -> StoreError {
    StoreError::Query(DieselError::DatabaseError(
        DatabaseErrorKind::ForeignKeyViolation,
        Box::new(message),
    ))
}

/// Before seats are written in the current transaction: waits for any
/// deletion of a player under way, and holds new ones off until the
/// transaction ends (nothing on SQLite, which has one writer and its key).
/// Every deletion has then either committed, and a statement that begins
/// afterwards sees it, or waits for this transaction and then empties the
/// seats written here: the caller's proof that the seated players exist
/// must be a statement that begins after this returns.
///
/// # Errors
/// Database errors.
pub(crate) fn hold_for_seats(conn: &mut DbConnection) -> Result<(), StoreError> {
    if let DbConnection::Pg(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock_shared($1)")
            .bind::<diesel::sql_types::BigInt, _>(SEATS_LOCK)
            .execute(pg)?;
    }
    Ok(())
}

/// Before a player is deleted in the current transaction: waits for the
/// seat writers under way, and holds new ones off until it commits.
///
/// # Errors
/// Database errors.
pub(crate) fn lock_for_deletion(conn: &mut DbConnection) -> Result<(), StoreError> {
    if let DbConnection::Pg(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<diesel::sql_types::BigInt, _>(SEATS_LOCK)
            .execute(pg)?;
    }
    Ok(())
}
