//! Queries on `ratings` and `rating_changes`.

use diesel::prelude::*;

use super::schema::{players, rating_changes, ratings};
use super::{DbConnection, StoreError};

/// A player's rating on one ladder.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq)]
#[diesel(table_name = ratings, treat_none_as_null = true)]
pub struct RatingRow {
    /// The player.
    pub player_id: String,
    /// The ladder.
    pub ladder: String,
    /// Glicko-2 rating.
    pub rating: f64,
    /// Rating deviation.
    pub deviation: f64,
    /// Volatility.
    pub volatility: f64,
    /// Deviation at most 110.
    pub established: bool,
    /// Rated games played.
    pub games: i32,
    /// Won.
    pub wins: i32,
    /// Lost.
    pub losses: i32,
    /// Drawn.
    pub draws: i32,
    /// When the player last started as X here.
    pub last_x_at: Option<i64>,
    /// The last opponent paired with the player here.
    pub last_opponent_id: Option<String>,
    /// Epoch ms.
    pub updated_at: i64,
}

/// One player's part of a rated result.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq)]
#[diesel(table_name = rating_changes)]
pub struct RatingChangeRow {
    /// The match.
    pub match_id: String,
    /// `x` or `o`.
    pub seat: String,
    /// The player.
    pub player_id: String,
    /// The ladder.
    pub ladder: String,
    /// 1, 0.5 or 0.
    pub score: f64,
    /// Before.
    pub rating_before: f64,
    /// After.
    pub rating_after: f64,
    /// Before.
    pub deviation_before: f64,
    /// After.
    pub deviation_after: f64,
    /// Before.
    pub volatility_before: f64,
    /// After.
    pub volatility_after: f64,
    /// Epoch ms.
    pub created_at: i64,
}

/// A player's rating on a ladder.
///
/// # Errors
/// Database errors.
pub fn get(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: &str,
) -> Result<Option<RatingRow>, StoreError> {
    Ok(ratings::table
        .find((player_id, ladder))
        .select(RatingRow::as_select())
        .first(conn)
        .optional()?)
}

/// A player's rating rows on every ladder played.
///
/// # Errors
/// Database errors.
pub fn for_player(conn: &mut DbConnection, player_id: &str) -> Result<Vec<RatingRow>, StoreError> {
    Ok(ratings::table
        .filter(ratings::player_id.eq(player_id))
        .select(RatingRow::as_select())
        .load(conn)?)
}

/// Reads a rating row and locks it for this transaction (see [`super::matches::lock`]).
///
/// # Errors
/// Database errors.
pub fn lock(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: &str,
) -> Result<Option<RatingRow>, StoreError> {
    Ok(match conn {
        DbConnection::Pg(pg) => ratings::table
            .find((player_id, ladder))
            .select(RatingRow::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => ratings::table
            .find((player_id, ladder))
            .select(RatingRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Inserts a rating row unless one exists (two first-time requests may race; either row is the same).
///
/// # Errors
/// Database errors.
pub fn insert_if_missing(conn: &mut DbConnection, row: &RatingRow) -> Result<(), StoreError> {
    if get(conn, &row.player_id, &row.ladder)?.is_some() {
        return Ok(());
    }
    match diesel::insert_into(ratings::table)
        .values(row)
        .execute(conn)
    {
        Ok(_) => Ok(()),
        Err(e) => {
            let err = StoreError::from(e);
            if err.is_unique_violation() {
                Ok(())
            } else {
                Err(err)
            }
        }
    }
}

/// Writes a rating row back.
///
/// # Errors
/// Database errors.
pub fn save(conn: &mut DbConnection, row: &RatingRow) -> Result<(), StoreError> {
    diesel::update(ratings::table.find((&row.player_id, &row.ladder)))
        .set(row)
        .execute(conn)?;
    Ok(())
}

/// Records one player's rating change.
///
/// # Errors
/// A unique violation when this match's result was already applied.
pub fn insert_change(conn: &mut DbConnection, row: &RatingChangeRow) -> Result<(), StoreError> {
    diesel::insert_into(rating_changes::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// The rating changes of a match.
///
/// # Errors
/// Database errors.
pub fn changes(
    conn: &mut DbConnection,
    match_id: &str,
) -> Result<Vec<RatingChangeRow>, StoreError> {
    Ok(rating_changes::table
        .filter(rating_changes::match_id.eq(match_id))
        .select(RatingChangeRow::as_select())
        .load(conn)?)
}

/// A leaderboard row: the rating, the player's name and whether they are a bot.
pub type LeaderRow = (RatingRow, String, bool);

/// A page of a ladder's leaderboard: established players first, then
/// provisional ones, each by rating (highest first), after the keyset `after`;
/// only bots or only humans when `bots` says so.
///
/// # Errors
/// Database errors.
pub fn leaderboard(
    conn: &mut DbConnection,
    ladder: &str,
    after: Option<(bool, f64, String)>,
    bots: Option<bool>,
    limit: i64,
) -> Result<Vec<LeaderRow>, StoreError> {
    let mut query = ratings::table
        .inner_join(players::table)
        .filter(ratings::ladder.eq(ladder.to_owned()))
        .filter(ratings::games.gt(0))
        .order((
            ratings::established.desc(),
            ratings::rating.desc(),
            ratings::player_id.asc(),
        ))
        .select((RatingRow::as_select(), players::username, players::bot))
        .limit(limit)
        .into_boxed();
    if let Some(bots) = bots {
        query = query.filter(players::bot.eq(bots));
    }
    if let Some((established, rating, player)) = after {
        query = query.filter(
            ratings::established
                .lt(established)
                .or(ratings::established.eq(established).and(
                    ratings::rating.lt(rating).or(ratings::rating
                        .eq(rating)
                        .and(ratings::player_id.gt(player))),
                )),
        );
    }
    Ok(query.load(conn)?)
}
