//! Queries on `tickets`, the durable record behind the broker's queue.

use diesel::prelude::*;

use super::connection::execute_on_backend;
use super::schema::tickets;
use super::{DbConnection, StoreError};

/// A stored ticket.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq)]
#[diesel(table_name = tickets)]
pub struct TicketRow {
    /// Opaque id (the broker's ticket id).
    pub id: String,
    /// Who queued.
    pub player_id: String,
    /// On which ladder.
    pub ladder: String,
    /// Rating when queued.
    pub rating: f64,
    /// `queued`, `matched` or `cancelled`.
    pub status: String,
    /// The match, once paired.
    pub match_id: Option<String>,
    /// Why it was cancelled.
    pub reason: Option<String>,
    /// Epoch ms (game time).
    pub created_at: i64,
    /// Epoch ms.
    pub updated_at: i64,
}

/// Inserts a ticket.
///
/// # Errors
/// Database errors.
pub fn insert(conn: &mut DbConnection, row: &TicketRow) -> Result<(), StoreError> {
    diesel::insert_into(tickets::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Tickets a multi-row insert carries at most (9 columns each: the bind
/// parameters stay under SQLite's 32,766).
const TICKETS_PER_INSERT: usize = 3_000;

/// Inserts tickets in multi-row statements (benchmarks queue thousands).
///
/// # Errors
/// Database errors.
pub fn insert_many(conn: &mut DbConnection, rows: &[TicketRow]) -> Result<(), StoreError> {
    for chunk in rows.chunks(TICKETS_PER_INSERT) {
        execute_on_backend!(conn, diesel::insert_into(tickets::table).values(chunk))?;
    }
    Ok(())
}

/// Reads a ticket.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, id: &str) -> Result<Option<TicketRow>, StoreError> {
    Ok(tickets::table
        .find(id)
        .select(TicketRow::as_select())
        .first(conn)
        .optional()?)
}

/// Deletes a ticket that never made it into the queue.
///
/// # Errors
/// Database errors.
pub fn delete(conn: &mut DbConnection, id: &str) -> Result<(), StoreError> {
    diesel::delete(tickets::table.find(id)).execute(conn)?;
    Ok(())
}

/// Which of `ids` are queued, each with the player it queues.
///
/// # Errors
/// Database errors.
pub fn queued_among(
    conn: &mut DbConnection,
    ids: &[&str],
) -> Result<Vec<(String, String)>, StoreError> {
    let mut queued = Vec::new();
    for chunk in ids.chunks(10_000) {
        queued.extend(
            tickets::table
                .filter(tickets::id.eq_any(chunk))
                .filter(tickets::status.eq("queued"))
                .select((tickets::id, tickets::player_id))
                .load::<(String, String)>(conn)?,
        );
    }
    Ok(queued)
}

/// A queued ticket a new match seats: the ticket, its player, the match.
#[derive(Debug, Clone, Copy)]
pub struct Seated<'a> {
    /// The ticket's id.
    pub ticket: &'a str,
    /// Its player, as the match seats them.
    pub player: &'a str,
    /// The match made of it.
    pub match_id: &'a str,
}

/// Marks queued tickets matched, each into the match beside it, where the
/// ticket still names the player the match seats; returns how many it
/// marked (those still queued). On PostgreSQL one statement joins them as
/// three arrays, so no ticket looks its match up; SQLite, in-process, takes
/// one `UPDATE` a ticket.
///
/// # Errors
/// Database errors.
pub fn mark_matched_many(
    conn: &mut DbConnection,
    seated: &[Seated<'_>],
    now: i64,
) -> Result<usize, StoreError> {
    if seated.is_empty() {
        return Ok(0);
    }
    match conn {
        DbConnection::Pg(pg) => {
            use diesel::sql_types::{Array, BigInt, Text};
            let ids: Vec<&str> = seated.iter().map(|s| s.ticket).collect();
            let players: Vec<&str> = seated.iter().map(|s| s.player).collect();
            let matches: Vec<&str> = seated.iter().map(|s| s.match_id).collect();
            Ok(diesel::sql_query(
                "UPDATE tickets SET status = 'matched', match_id = paired.match_id, \
                 updated_at = $4 \
                 FROM unnest($1::text[], $2::text[], $3::text[]) AS paired (id, player_id, match_id) \
                 WHERE tickets.id = paired.id AND tickets.player_id = paired.player_id \
                 AND tickets.status = 'queued'",
            )
            .bind::<Array<Text>, _>(ids)
            .bind::<Array<Text>, _>(players)
            .bind::<Array<Text>, _>(matches)
            .bind::<BigInt, _>(now)
            .execute(pg)?)
        }
        DbConnection::Sqlite(_) => {
            let mut marked = 0;
            for s in seated {
                marked += diesel::update(
                    tickets::table
                        .find(s.ticket)
                        .filter(tickets::player_id.eq(s.player))
                        .filter(tickets::status.eq("queued")),
                )
                .set((
                    tickets::status.eq("matched"),
                    tickets::match_id.eq(s.match_id),
                    tickets::updated_at.eq(now),
                ))
                .execute(conn)?;
            }
            Ok(marked)
        }
    }
}

/// Marks a queued ticket cancelled with `reason`.
///
/// # Errors
/// Database errors.
pub fn mark_cancelled(
    conn: &mut DbConnection,
    id: &str,
    reason: &str,
    now: i64,
) -> Result<bool, StoreError> {
    Ok(
        diesel::update(tickets::table.find(id).filter(tickets::status.eq("queued")))
            .set((
                tickets::status.eq("cancelled"),
                tickets::reason.eq(reason),
                tickets::updated_at.eq(now),
            ))
            .execute(conn)?
            == 1,
    )
}

/// Every queued ticket (to put back into a broker that lost its queue, or
/// to find claims without a match). On PostgreSQL no index lists the queued
/// tickets, so that a pairing round's update of a ticket is a HOT update
/// (see the migration `tickets_updated_in_place`): this walks
/// `tickets_created`, over the tickets of the last day
/// ([`delete_finished_before`] keeps no more) and any older still queued.
///
/// # Errors
/// Database errors.
pub fn queued(conn: &mut DbConnection, limit: i64) -> Result<Vec<TicketRow>, StoreError> {
    Ok(tickets::table
        .filter(tickets::status.eq("queued"))
        .order(tickets::created_at.asc())
        .select(TicketRow::as_select())
        .limit(limit)
        .load(conn)?)
}

/// The player's queued ticket, if any.
///
/// # Errors
/// Database errors.
pub fn queued_for_player(
    conn: &mut DbConnection,
    player_id: &str,
) -> Result<Option<String>, StoreError> {
    Ok(tickets::table
        .filter(tickets::player_id.eq(player_id))
        .filter(tickets::status.eq("queued"))
        .select(tickets::id)
        .first(conn)
        .optional()?)
}

/// Deletes up to `limit` tickets that are no longer queued (matched or
/// cancelled: the match and the rating changes are the record of what came
/// of them) and were created and last changed before `cutoff`; returns how
/// many.
///
/// # Errors
/// Database errors.
pub fn delete_finished_before(
    conn: &mut DbConnection,
    cutoff: i64,
    limit: i64,
) -> Result<usize, StoreError> {
    let ids: Vec<String> = tickets::table
        .filter(tickets::created_at.lt(cutoff))
        .filter(tickets::updated_at.lt(cutoff))
        .filter(tickets::status.ne("queued"))
        .order(tickets::created_at.asc())
        .select(tickets::id)
        .limit(limit)
        .load(conn)?;
    if ids.is_empty() {
        return Ok(0);
    }
    Ok(diesel::delete(tickets::table.filter(tickets::id.eq_any(&ids))).execute(conn)?)
}
