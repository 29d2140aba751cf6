//! Queries on `analyses`: engine analyses of finished matches, a queue
//! shared by every instance. A worker claims one row at a time with a lease
//! (`claimed_by`, `claimed_at`), renews it with each position it stores, and
//! another instance takes over a row whose lease lapsed.

use diesel::prelude::*;

use super::schema::analyses;
use super::{DbConnection, StoreError};

/// Waiting for a worker.
pub const QUEUED: &str = "queued";
/// A worker holds it (or held it until its lease lapses).
pub const RUNNING: &str = "running";
/// Every position evaluated; never computed again.
pub const DONE: &str = "done";

/// A stored analysis.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq, Eq)]
#[diesel(table_name = analyses)]
pub struct AnalysisRow {
    /// The match analysed.
    pub match_id: String,
    /// [`QUEUED`], [`RUNNING`] or [`DONE`].
    pub status: String,
    /// Moves judged so far.
    pub plies_done: i32,
    /// Moves of the match.
    pub plies_total: i32,
    /// The evaluations of the positions done so far, as JSON text.
    pub result: String,
    /// Who asked for it.
    pub requested_by: Option<String>,
    /// The instance whose worker holds it.
    pub claimed_by: Option<String>,
    /// When that worker last renewed its lease (epoch ms, game time).
    pub claimed_at: Option<i64>,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub updated_at: i64,
}

/// Reads the analysis of a match.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, match_id: &str) -> Result<Option<AnalysisRow>, StoreError> {
    Ok(analyses::table
        .find(match_id)
        .select(AnalysisRow::as_select())
        .first(conn)
        .optional()?)
}

/// Inserts a new analysis (a unique violation when the match has one).
///
/// # Errors
/// Database errors.
pub fn insert(conn: &mut DbConnection, row: &AnalysisRow) -> Result<(), StoreError> {
    diesel::insert_into(analyses::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// How many analyses are not done yet (queued or running), on all instances.
///
/// # Errors
/// Database errors.
pub fn count_waiting(conn: &mut DbConnection) -> Result<i64, StoreError> {
    Ok(analyses::table
        .filter(analyses::status.ne(DONE))
        .count()
        .get_result(conn)?)
}

/// How many queued analyses a worker takes before `row` (claims go oldest first).
///
/// # Errors
/// Database errors.
pub fn queued_before(conn: &mut DbConnection, row: &AnalysisRow) -> Result<i64, StoreError> {
    Ok(analyses::table
        .filter(analyses::status.eq(QUEUED))
        .filter(
            analyses::created_at
                .lt(row.created_at)
                .or(analyses::created_at
                    .eq(row.created_at)
                    .and(analyses::match_id.lt(&row.match_id))),
        )
        .count()
        .get_result(conn)?)
}

/// Claims the oldest analysis that is queued, or running under a lease last
/// renewed before `now - lease_ms` (its instance stopped), for `instance`.
/// The claim is a conditional update, so of two instances claiming the same
/// row at once only one gets it; the other gets `None` and tries again later.
///
/// # Errors
/// Database errors.
pub fn claim(
    conn: &mut DbConnection,
    instance: &str,
    now: i64,
    lease_ms: i64,
) -> Result<Option<AnalysisRow>, StoreError> {
    let lapsed = now - lease_ms;
    macro_rules! claimable {
        () => {
            analyses::status.eq(QUEUED).or(analyses::status
                .eq(RUNNING)
                .and(analyses::claimed_at.lt(lapsed)))
        };
    }
    let candidate: Option<String> = analyses::table
        .filter(claimable!())
        .order((analyses::created_at.asc(), analyses::match_id.asc()))
        .select(analyses::match_id)
        .first(conn)
        .optional()?;
    let Some(id) = candidate else {
        return Ok(None);
    };
    let claimed = diesel::update(analyses::table.find(&id).filter(claimable!()))
        .set((
            analyses::status.eq(RUNNING),
            analyses::claimed_by.eq(instance),
            analyses::claimed_at.eq(now),
            analyses::updated_at.eq(now),
        ))
        .execute(conn)?;
    if claimed == 0 {
        return Ok(None);
    }
    get(conn, &id)
}

/// Stores the progress of an analysis `instance` holds and renews its lease;
/// `done` marks it finished. False when the instance no longer holds it
/// (its lease lapsed and another instance took it over).
///
/// # Errors
/// Database errors.
pub fn save_progress(
    conn: &mut DbConnection,
    match_id: &str,
    instance: &str,
    plies_done: i32,
    result: &str,
    done: bool,
    now: i64,
) -> Result<bool, StoreError> {
    let held = analyses::table
        .find(match_id)
        .filter(analyses::status.eq(RUNNING))
        .filter(analyses::claimed_by.eq(instance));
    let status = if done { DONE } else { RUNNING };
    let claimed_at = (!done).then_some(now);
    let claimed_by = (!done).then_some(instance);
    Ok(diesel::update(held)
        .set((
            analyses::status.eq(status),
            analyses::plies_done.eq(plies_done),
            analyses::result.eq(result),
            analyses::claimed_by.eq(claimed_by),
            analyses::claimed_at.eq(claimed_at),
            analyses::updated_at.eq(now),
        ))
        .execute(conn)?
        == 1)
}
