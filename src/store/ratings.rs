//! Queries on `ratings` and `rating_changes`.

use diesel::prelude::*;

use super::connection::execute_on_backend;
use super::kinds::{MatchId, MatchStatus, StoredSeat};
use super::schema::{matches, players, rating_changes, ratings};
use super::{DbConnection, StoreError};

/// A player's rating on one ladder.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq)]
#[diesel(table_name = ratings, treat_none_as_null = true, treat_none_as_default_value = false)]
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
    /// When the player's last rated game here ended (epoch ms); the deviation grows from then.
    pub rated_at: Option<i64>,
    /// The last instant at which the grown deviation is at most 110 (`None`:
    /// provisional, or never played); the leaderboard's membership test.
    pub established_until: Option<i64>,
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

/// Rows a multi-row rating statement carries at most (15 columns each).
const RATINGS_PER_UPSERT: usize = 2_000;

/// Inserts the rating rows that do not exist yet, in multi-row statements
/// (an arena pass's players, made on first use).
///
/// # Errors
/// Database errors.
pub fn insert_missing(conn: &mut DbConnection, rows: &[RatingRow]) -> Result<(), StoreError> {
    for chunk in rows.chunks(RATINGS_PER_UPSERT) {
        execute_on_backend!(
            conn,
            diesel::insert_into(ratings::table)
                .values(chunk)
                .on_conflict((ratings::player_id, ratings::ladder))
                .do_nothing()
        )?;
    }
    Ok(())
}

/// Records a pairing round's colours and opponents on the players' rating
/// rows, making the rows (as `rows` has them) where missing: each row of
/// `rows` brings its `last_opponent_id`, and, when `as_x`, its `last_x_at`;
/// the other columns of an existing row stay as they are.
///
/// # Errors
/// Database errors.
pub fn record_pairings(
    conn: &mut DbConnection,
    rows: &[RatingRow],
    as_x: bool,
) -> Result<(), StoreError> {
    use diesel::upsert::excluded;
    for chunk in rows.chunks(RATINGS_PER_UPSERT) {
        let insert = diesel::insert_into(ratings::table)
            .values(chunk)
            .on_conflict((ratings::player_id, ratings::ladder))
            .do_update();
        if as_x {
            execute_on_backend!(
                conn,
                insert.set((
                    ratings::last_x_at.eq(excluded(ratings::last_x_at)),
                    ratings::last_opponent_id.eq(excluded(ratings::last_opponent_id)),
                ))
            )?;
        } else {
            execute_on_backend!(
                conn,
                insert.set(ratings::last_opponent_id.eq(excluded(ratings::last_opponent_id)))
            )?;
        }
    }
    Ok(())
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

/// A page of a ladder's leaderboard: players established at `as_of` (their
/// `established_until` not before it), by rating (highest first), after the
/// keyset `(rating, player id)`. The index `ratings_leaderboard` walks the
/// rating order and tests `established_until` on the index entry itself.
/// Only bots or only humans when `bots` says so.
///
/// # Errors
/// Database errors.
pub fn leaderboard(
    conn: &mut DbConnection,
    ladder: &str,
    as_of: i64,
    after: Option<(f64, String)>,
    bots: Option<bool>,
    limit: i64,
) -> Result<Vec<LeaderRow>, StoreError> {
    let mut query = ratings::table
        .inner_join(players::table)
        .filter(ratings::ladder.eq(ladder.to_owned()))
        .filter(ratings::games.gt(0))
        .filter(ratings::established_until.ge(as_of))
        .order((ratings::rating.desc(), ratings::player_id.asc()))
        .select((RatingRow::as_select(), players::username, players::bot))
        .limit(limit)
        .into_boxed();
    if let Some(bots) = bots {
        query = query.filter(players::bot.eq(bots));
    }
    if let Some((rating, player)) = after {
        // `rating <= r` is the index range that starts the walk at the
        // cursor (the OR alone would be a filter over every earlier entry).
        query = query.filter(ratings::rating.le(rating)).filter(
            ratings::rating.lt(rating).or(ratings::rating
                .eq(rating)
                .and(ratings::player_id.gt(player))),
        );
    }
    Ok(query.load(conn)?)
}

/// Every rating change of a player on a ladder, oldest first.
///
/// # Errors
/// Database errors.
pub fn history(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: &str,
) -> Result<Vec<RatingChangeRow>, StoreError> {
    Ok(rating_changes::table
        .filter(rating_changes::player_id.eq(player_id))
        .filter(rating_changes::ladder.eq(ladder))
        .order((
            rating_changes::created_at.asc(),
            rating_changes::match_id.asc(),
        ))
        .select(RatingChangeRow::as_select())
        .load(conn)?)
}

/// Every rating row of a ladder.
///
/// # Errors
/// Database errors.
pub fn ladder_rows(conn: &mut DbConnection, ladder: &str) -> Result<Vec<RatingRow>, StoreError> {
    Ok(ratings::table
        .filter(ratings::ladder.eq(ladder))
        .select(RatingRow::as_select())
        .load(conn)?)
}

/// A finished rated match as a ratings replay needs it.
pub type RatedResult = (
    MatchId,
    Option<String>,
    Option<String>,
    Option<StoredSeat>,
    Option<i64>,
);

/// Finished rated matches of a ladder in the order their results were
/// applied (end time, then id), strictly after the keyset `after`:
/// `(id, x player, o player, winner, finished_at)`.
///
/// # Errors
/// Database errors.
pub fn rated_results(
    conn: &mut DbConnection,
    ladder: &str,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<RatedResult>, StoreError> {
    let mut query = matches::table
        .filter(matches::ladder.eq(ladder.to_owned()))
        .filter(matches::rated.eq(true))
        .filter(matches::status.eq(MatchStatus::Finished))
        .order((matches::finished_at.asc(), matches::id.asc()))
        .select((
            matches::id,
            matches::x_player_id,
            matches::o_player_id,
            matches::winner,
            matches::finished_at,
        ))
        .limit(limit)
        .into_boxed();
    if let Some((at, id)) = after {
        query = query.filter(
            matches::finished_at
                .gt(at)
                .or(matches::finished_at.eq(at).and(matches::id.gt(id))),
        );
    }
    Ok(query.load(conn)?)
}

/// The rating changes of several matches.
///
/// # Errors
/// Database errors.
pub fn changes_of_matches(
    conn: &mut DbConnection,
    match_ids: &[String],
) -> Result<Vec<RatingChangeRow>, StoreError> {
    if match_ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(rating_changes::table
        .filter(rating_changes::match_id.eq_any(match_ids))
        .select(RatingChangeRow::as_select())
        .load(conn)?)
}
