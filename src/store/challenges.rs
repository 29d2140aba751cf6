//! Queries on `challenges`.

use diesel::prelude::*;

use super::schema::challenges;
use super::{DbConnection, StoreError};

/// A stored challenge.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq, Eq)]
#[diesel(table_name = challenges, treat_none_as_null = true)]
pub struct ChallengeRow {
    /// Opaque id.
    pub id: String,
    /// Who challenged.
    pub challenger_id: String,
    /// Who is challenged.
    pub challenged_id: String,
    /// Board depth of the match.
    pub depth: i16,
    /// Time control kind.
    pub tc_kind: String,
    /// Clock: initial bank.
    pub tc_initial_ms: Option<i64>,
    /// Clock: increment.
    pub tc_increment_ms: Option<i64>,
    /// Per turn: the limit.
    pub tc_turn_ms: Option<i64>,
    /// The challenger's seat: `x`, `o` or `random`.
    pub seat: String,
    /// The ladder a rated challenge is played on.
    pub ladder: Option<String>,
    /// `pending`, `accepted`, `declined`, `cancelled` or `expired`.
    pub status: String,
    /// What the challenged player said when declining.
    pub decline_reason: Option<String>,
    /// The match, once accepted.
    pub match_id: Option<String>,
    /// Epoch ms (game time).
    pub created_at: i64,
    /// When a pending challenge expires (game time).
    pub expires_at: i64,
    /// Epoch ms of the last change.
    pub updated_at: i64,
}

/// Inserts a challenge.
///
/// # Errors
/// Database errors.
pub fn insert(conn: &mut DbConnection, row: &ChallengeRow) -> Result<(), StoreError> {
    diesel::insert_into(challenges::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Reads a challenge.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, id: &str) -> Result<Option<ChallengeRow>, StoreError> {
    Ok(challenges::table
        .find(id)
        .select(ChallengeRow::as_select())
        .first(conn)
        .optional()?)
}

/// Reads a challenge and locks it for this transaction (see [`super::matches::lock`]).
///
/// # Errors
/// Database errors.
pub fn lock(conn: &mut DbConnection, id: &str) -> Result<Option<ChallengeRow>, StoreError> {
    Ok(match conn {
        DbConnection::Pg(pg) => challenges::table
            .find(id)
            .select(ChallengeRow::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => challenges::table
            .find(id)
            .select(ChallengeRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Writes a challenge back.
///
/// # Errors
/// Database errors.
pub fn save(conn: &mut DbConnection, row: &ChallengeRow) -> Result<(), StoreError> {
    diesel::update(challenges::table.find(&row.id))
        .set(row)
        .execute(conn)?;
    Ok(())
}

/// The pending challenges `challenger` made that are still unexpired at
/// `now`, oldest first.
///
/// # Errors
/// Database errors.
pub fn pending_from(
    conn: &mut DbConnection,
    challenger: &str,
    now: i64,
) -> Result<Vec<ChallengeRow>, StoreError> {
    Ok(challenges::table
        .filter(challenges::challenger_id.eq(challenger))
        .filter(challenges::status.eq("pending"))
        .filter(challenges::expires_at.gt(now))
        .order(challenges::created_at.asc())
        .select(ChallengeRow::as_select())
        .load(conn)?)
}

/// The pending challenges to `challenged` still unexpired at `now`, oldest first.
///
/// # Errors
/// Database errors.
pub fn pending_to(
    conn: &mut DbConnection,
    challenged: &str,
    now: i64,
) -> Result<Vec<ChallengeRow>, StoreError> {
    Ok(challenges::table
        .filter(challenges::challenged_id.eq(challenged))
        .filter(challenges::status.eq("pending"))
        .filter(challenges::expires_at.gt(now))
        .order(challenges::created_at.asc())
        .select(ChallengeRow::as_select())
        .load(conn)?)
}

/// Ids of up to `limit` pending challenges whose time ran out at `now`.
///
/// # Errors
/// Database errors.
pub fn due(conn: &mut DbConnection, now: i64, limit: i64) -> Result<Vec<String>, StoreError> {
    Ok(challenges::table
        .filter(challenges::status.eq("pending"))
        .filter(challenges::expires_at.le(now))
        .order(challenges::expires_at.asc())
        .select(challenges::id)
        .limit(limit)
        .load(conn)?)
}
