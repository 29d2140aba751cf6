//! Queries on `players`.

use diesel::prelude::*;

use super::connection::execute_on_backend;
use super::schema::{match_players, matches, players};
use super::{DbConnection, StoreError};

/// A stored player.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq, Eq)]
#[diesel(table_name = players)]
pub struct PlayerRow {
    /// Opaque id.
    pub id: String,
    /// The name as the player typed it.
    pub username: String,
    /// The name lower-cased; unique.
    pub username_key: String,
    /// Argon2id PHC string.
    pub password_hash: String,
    /// `player` or `admin`.
    pub role: String,
    /// Epoch ms.
    pub created_at: i64,
    /// A bot account (for good).
    pub bot: bool,
    /// Whether challenges from bots reach this player.
    pub accept_bot_challenges: bool,
}

/// A player to insert.
#[derive(Debug, Insertable)]
#[diesel(table_name = players)]
pub struct NewPlayer<'a> {
    /// Opaque id.
    pub id: &'a str,
    /// Display name.
    pub username: &'a str,
    /// Lower-cased name.
    pub username_key: &'a str,
    /// Argon2id PHC string.
    pub password_hash: &'a str,
    /// Role.
    pub role: &'a str,
    /// Epoch ms.
    pub created_at: i64,
}

/// Players a multi-row insert carries at most (6 columns each: the bind
/// parameters stay under SQLite's 32,766).
const PLAYERS_PER_INSERT: usize = 5_000;

/// Inserts players in multi-row statements (benchmarks set up thousands).
///
/// # Errors
/// Database errors; a unique violation when a name is taken.
pub fn insert_many(conn: &mut DbConnection, rows: &[NewPlayer<'_>]) -> Result<(), StoreError> {
    for chunk in rows.chunks(PLAYERS_PER_INSERT) {
        execute_on_backend!(conn, diesel::insert_into(players::table).values(chunk))?;
    }
    Ok(())
}

/// Inserts a player.
///
/// # Errors
/// A unique violation when the name is taken (ignoring case).
pub fn insert(conn: &mut DbConnection, player: &NewPlayer<'_>) -> Result<(), StoreError> {
    diesel::insert_into(players::table)
        .values(player)
        .execute(conn)?;
    Ok(())
}

/// The player with this id.
///
/// # Errors
/// Database errors.
pub fn by_id(conn: &mut DbConnection, id: &str) -> Result<Option<PlayerRow>, StoreError> {
    Ok(players::table
        .find(id)
        .select(PlayerRow::as_select())
        .first(conn)
        .optional()?)
}

/// Whether a player with this id exists.
///
/// # Errors
/// Database errors.
pub fn exists(conn: &mut DbConnection, id: &str) -> Result<bool, StoreError> {
    let found: Option<String> = players::table
        .find(id)
        .select(players::id)
        .first(conn)
        .optional()?;
    Ok(found.is_some())
}

/// The player with this name, ignoring case.
///
/// # Errors
/// Database errors.
pub fn by_username(
    conn: &mut DbConnection,
    username: &str,
) -> Result<Option<PlayerRow>, StoreError> {
    Ok(players::table
        .filter(players::username_key.eq(username.to_ascii_lowercase()))
        .select(PlayerRow::as_select())
        .first(conn)
        .optional()?)
}

/// Locks the player's row until the transaction ends, so that per-player
/// caps (count, then insert) hold under concurrent requests: `SELECT … FOR
/// NO KEY UPDATE` on PostgreSQL (which does not hold up inserts that merely
/// reference the player); on SQLite the immediate transaction already holds
/// the database's write lock.
///
/// # Errors
/// Database errors.
pub fn lock(conn: &mut DbConnection, id: &str) -> Result<(), StoreError> {
    if let DbConnection::Pg(pg) = conn {
        players::table
            .find(id)
            .select(players::id)
            .for_no_key_update()
            .first::<String>(pg)
            .optional()?;
    }
    Ok(())
}

/// Locks the player's row as [`lock`] does and reads whether the account is
/// a bot. What bots may not do (queue on a ladder closed to them, enter a
/// tournament rated on one, start a rated match there) is decided on this
/// flag, read under the lock that turning an account into a bot takes, so
/// the two cannot cross. `None`: no such player.
///
/// # Errors
/// Database errors.
pub fn lock_bot(conn: &mut DbConnection, id: &str) -> Result<Option<bool>, StoreError> {
    let query = players::table.find(id).select(players::bot);
    Ok(match conn {
        DbConnection::Pg(pg) => query.for_no_key_update().first(pg).optional()?,
        DbConnection::Sqlite(lite) => query.first(lite).optional()?,
    })
}

/// Sets the role of the named player; returns whether such a player exists.
///
/// # Errors
/// Database errors.
pub fn set_role(conn: &mut DbConnection, username: &str, role: &str) -> Result<bool, StoreError> {
    let updated = diesel::update(
        players::table.filter(players::username_key.eq(username.to_ascii_lowercase())),
    )
    .set(players::role.eq(role))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Deletes a player (and, by cascade, their refresh tokens, ratings and
/// entries) and their seats. Their matches stay, the other player's record,
/// with the deleted player's seat emptied (`x_player_id`/`o_player_id`
/// NULL): on PostgreSQL neither `matches` nor `match_players` has a key to
/// `players` that would do it (issues 21 and 18; `store::seat_guard` checks
/// a new match's players instead), so it is done here, in one transaction,
/// through the player's `match_players` rows, which are then deleted.
///
/// # Errors
/// Database errors.
pub fn delete(conn: &mut DbConnection, id: &str) -> Result<bool, StoreError> {
    conn.transaction::<_, StoreError, _>(|conn| {
        // The seat writers' lock first (PostgreSQL): a match being created
        // for them has either committed, and its seats are emptied below,
        // or waits for this transaction and then finds the player gone.
        // SQLite runs one writer at a time.
        super::seat_guard::lock_for_deletion(conn)?;
        if let DbConnection::Pg(pg) = conn {
            let found = players::table
                .find(id)
                .select(players::id)
                .for_update()
                .first::<String>(pg)
                .optional()?;
            if found.is_none() {
                return Ok(false);
            }
        }
        // Empties one seat column of the matches where the player sits in it.
        macro_rules! empty_seat {
            ($column:expr) => {
                execute_on_backend!(
                    conn,
                    diesel::update(
                        matches::table
                            .filter(
                                matches::id.eq_any(
                                    match_players::table
                                        .filter(match_players::player_id.eq(id))
                                        .select(match_players::match_id),
                                ),
                            )
                            .filter($column.eq(id)),
                    )
                    .set($column.eq(None::<String>))
                )?
            };
        }
        empty_seat!(matches::x_player_id);
        empty_seat!(matches::o_player_id);
        execute_on_backend!(
            conn,
            diesel::delete(match_players::table.filter(match_players::player_id.eq(id)))
        )?;
        Ok(execute_on_backend!(conn, diesel::delete(players::table.find(id)))? == 1)
    })
}

/// Players whose lower-cased name starts with `prefix` (lower case), by name,
/// after the name `after`.
///
/// # Errors
/// Database errors.
pub fn by_prefix(
    conn: &mut DbConnection,
    prefix: &str,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<PlayerRow>, StoreError> {
    let after = after.unwrap_or("").to_owned();
    Ok(match conn {
        // LIKE with the pattern-ops index; `_` and `%` are escaped.
        DbConnection::Pg(pg) => {
            let escaped: String = prefix
                .chars()
                .flat_map(|c| match c {
                    '_' | '%' | '\\' => vec!['\\', c],
                    c => vec![c],
                })
                .collect();
            players::table
                .filter(
                    players::username_key
                        .like(format!("{escaped}%"))
                        .escape('\\'),
                )
                .filter(players::username_key.gt(after))
                .order(players::username_key.asc())
                .select(PlayerRow::as_select())
                .limit(limit)
                .load(pg)?
        }
        // A range on the binary-collated unique index.
        DbConnection::Sqlite(lite) => {
            let start = if after.as_str() > prefix {
                after.clone()
            } else {
                prefix.to_owned()
            };
            let mut query = players::table
                .filter(players::username_key.ge(start))
                .filter(players::username_key.gt(after))
                .order(players::username_key.asc())
                .select(PlayerRow::as_select())
                .limit(limit)
                .into_boxed();
            if let Some(end) = prefix_end(prefix) {
                query = query.filter(players::username_key.lt(end));
            }
            query.load(lite)?
        }
    })
}

/// The smallest string greater than every string starting with `prefix`.
fn prefix_end(prefix: &str) -> Option<String> {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0x7f {
            bytes.push(last + 1);
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// Turns the player into a bot account.
///
/// # Errors
/// Database errors.
pub fn make_bot(conn: &mut DbConnection, id: &str) -> Result<(), StoreError> {
    diesel::update(players::table.find(id))
        .set(players::bot.eq(true))
        .execute(conn)?;
    Ok(())
}

/// Sets whether challenges from bots reach the player.
///
/// # Errors
/// Database errors.
pub fn set_accept_bot_challenges(
    conn: &mut DbConnection,
    id: &str,
    accept: bool,
) -> Result<(), StoreError> {
    diesel::update(players::table.find(id))
        .set(players::accept_bot_challenges.eq(accept))
        .execute(conn)?;
    Ok(())
}
