//! Queries on `rooms`.

use diesel::prelude::*;

use super::schema::rooms;
use super::{DbConnection, StoreError};

/// A stored room: a host, perhaps a guest, the settings of its games and its current game.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq, Eq)]
#[diesel(table_name = rooms, treat_none_as_null = true)]
pub struct RoomRow {
    /// Six characters, upper case.
    pub code: String,
    /// Who made it.
    pub host_id: String,
    /// Who joined it.
    pub guest_id: Option<String>,
    /// Depth of its games.
    pub depth: i16,
    /// Time control kind of its games.
    pub tc_kind: String,
    /// Clock: initial bank.
    pub tc_initial_ms: Option<i64>,
    /// Clock: increment.
    pub tc_increment_ms: Option<i64>,
    /// Per turn: the limit.
    pub tc_turn_ms: Option<i64>,
    /// The current (latest) game.
    pub match_id: Option<String>,
    /// Games started so far.
    pub games: i32,
    /// Epoch ms.
    pub created_at: i64,
}

/// Inserts a room.
///
/// # Errors
/// A unique violation when the code is taken.
pub fn insert(conn: &mut DbConnection, row: &RoomRow) -> Result<(), StoreError> {
    diesel::insert_into(rooms::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Reads a room and locks it for this transaction (see [`super::matches::lock`]).
///
/// # Errors
/// Database errors.
pub fn lock(conn: &mut DbConnection, code: &str) -> Result<Option<RoomRow>, StoreError> {
    Ok(match conn {
        DbConnection::Pg(pg) => rooms::table
            .find(code)
            .select(RoomRow::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => rooms::table
            .find(code)
            .select(RoomRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Reads a room.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, code: &str) -> Result<Option<RoomRow>, StoreError> {
    Ok(rooms::table
        .find(code)
        .select(RoomRow::as_select())
        .first(conn)
        .optional()?)
}

/// Writes a room back.
///
/// # Errors
/// Database errors.
pub fn save(conn: &mut DbConnection, row: &RoomRow) -> Result<(), StoreError> {
    diesel::update(rooms::table.find(&row.code))
        .set(row)
        .execute(conn)?;
    Ok(())
}

/// How many rooms `host` opened at or after `since` that nobody has joined.
///
/// # Errors
/// Database errors.
pub fn count_open(conn: &mut DbConnection, host: &str, since: i64) -> Result<i64, StoreError> {
    Ok(rooms::table
        .filter(rooms::host_id.eq(host))
        .filter(rooms::guest_id.is_null())
        .filter(rooms::created_at.ge(since))
        .count()
        .get_result(conn)?)
}

/// Deletes up to `limit` rooms opened before `before` that nobody joined;
/// returns how many.
///
/// # Errors
/// Database errors.
pub fn delete_unjoined(
    conn: &mut DbConnection,
    before: i64,
    limit: i64,
) -> Result<usize, StoreError> {
    let codes: Vec<String> = rooms::table
        .filter(rooms::guest_id.is_null())
        .filter(rooms::created_at.lt(before))
        .select(rooms::code)
        .limit(limit)
        .load(conn)?;
    if codes.is_empty() {
        return Ok(0);
    }
    // The guest check again: a room joined meanwhile stays.
    Ok(diesel::delete(
        rooms::table
            .filter(rooms::code.eq_any(&codes))
            .filter(rooms::guest_id.is_null()),
    )
    .execute(conn)?)
}
