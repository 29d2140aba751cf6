//! Queries on `tournaments`, `tournament_players`, `tournament_rounds` and
//! `tournament_games`. A tournament's games are rows of `matches`; these
//! tables only say which round and board each one is, who entered, and who
//! had a bye.
//!
//! Over 400 lines: every query on the four tournament tables, each short, so
//! a use case finds them in one place (as `matches.rs` does for matches).

use diesel::prelude::*;

use super::kinds::{MatchStatus, StoredSeat};
use super::schema::{
    matches, players, tournament_games, tournament_players, tournament_rounds, tournaments,
};
use super::{DbConnection, StoreError};

/// A stored tournament (read and written whole under a lock).
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq)]
#[diesel(table_name = tournaments, treat_none_as_null = true)]
pub struct TournamentRow {
    /// Opaque id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// `swiss` or `arena`.
    pub kind: String,
    /// `registering`, `running`, `finished` or `cancelled`.
    pub status: String,
    /// The player who created it and directs it.
    pub director_id: String,
    /// Board depth of the games.
    pub depth: i16,
    /// Time control kind of the games.
    pub tc_kind: String,
    /// Clock: initial bank.
    pub tc_initial_ms: Option<i64>,
    /// Clock: increment.
    pub tc_increment_ms: Option<i64>,
    /// Per turn: the limit.
    pub tc_turn_ms: Option<i64>,
    /// The ladder of a rated tournament.
    pub ladder: Option<String>,
    /// Whether the games change ratings.
    pub rated: bool,
    /// Swiss: the number of rounds.
    pub rounds: Option<i32>,
    /// Swiss: the current round (0 before the start).
    pub round: i32,
    /// Swiss: the pause between a round's last result and the next pairing.
    pub round_pause_ms: i64,
    /// Arena: how long it runs.
    pub duration_ms: Option<i64>,
    /// When it starts (`None`: the director starts it); the start time once started.
    pub starts_at: Option<i64>,
    /// When it ended (or, for an arena, ends).
    pub ends_at: Option<i64>,
    /// When the worker acts on it next.
    pub next_at: Option<i64>,
    /// Most entrants allowed.
    pub max_players: Option<i32>,
    /// The code joining needs, if any.
    pub entry_code: Option<String>,
    /// The lowest rating that may join.
    pub min_rating: Option<f64>,
    /// Entrants (withdrawn ones included once play started).
    pub players: i32,
    /// Bumped by every change: the event id.
    pub version: i32,
    /// The list order.
    pub sort_at: i64,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub finished_at: Option<i64>,
    /// Arena: the entrants' totals are complete (false only for arenas that
    /// had games before the totals were kept; see [`save_tally`]).
    pub tallied: bool,
}

/// An entrant.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq)]
#[diesel(table_name = tournament_players)]
pub struct EntrantRow {
    /// The tournament.
    pub tournament_id: String,
    /// The player.
    pub player_id: String,
    /// The rating pairings and standings use.
    pub rating: f64,
    /// Withdrew or was removed.
    pub withdrawn: bool,
    /// Epoch ms.
    pub joined_at: i64,
    /// Arena: when the player last came back after withdrawing (epoch ms).
    pub back_at: Option<i64>,
    /// Removed by the director: may not come back.
    pub removed: bool,
    /// Arena: the running totals.
    #[diesel(embed)]
    pub tally: TallyRow,
}

/// An arena entrant's running totals, updated as each of their games ends
/// (the service's `Tally`), so a pairing pass and the standings read them
/// instead of replaying the games.
#[derive(Debug, Clone, Default, Queryable, Selectable, Insertable, AsChangeset, PartialEq)]
#[diesel(table_name = tournament_players, treat_none_as_null = true)]
pub struct TallyRow {
    /// Tournament points.
    pub points: i32,
    /// Games that count.
    pub games: i32,
    /// Counted wins.
    pub wins: i32,
    /// Counted draws.
    pub draws: i32,
    /// Counted losses.
    pub losses: i32,
    /// Counted berserk games.
    pub berserks: i32,
    /// Wins in a row.
    pub streak: i32,
    /// Sum of the opponents' ratings ± 500 over the counted games.
    pub performance_sum: f64,
    /// Finished games as X.
    pub x_games: i32,
    /// Finished games as O.
    pub o_games: i32,
    /// `x` or `o`: the seat of the latest finished game.
    pub last_seat: Option<String>,
    /// The opponent of the latest finished game.
    pub last_opponent_id: Option<String>,
    /// When the latest finished game ended (epoch ms).
    pub last_end_at: Option<i64>,
}

/// A paired round.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq, Eq)]
#[diesel(table_name = tournament_rounds)]
pub struct RoundRow {
    /// The tournament.
    pub tournament_id: String,
    /// The round, from 1.
    pub round: i32,
    /// Who had the bye.
    pub bye_player_id: Option<String>,
    /// Epoch ms.
    pub paired_at: i64,
}

/// One game of a tournament.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq, Eq)]
#[diesel(table_name = tournament_games, treat_none_as_default_value = false)]
pub struct GameRow {
    /// The match.
    pub match_id: String,
    /// The tournament.
    pub tournament_id: String,
    /// The round (swiss), from 1.
    pub round: i32,
    /// The board, from 1.
    pub board: i32,
    /// The player seated X.
    pub x_player_id: String,
    /// The player seated O.
    pub o_player_id: String,
    /// `x`, `o` or `draw` once recorded.
    pub result: Option<String>,
    /// Epoch ms.
    pub created_at: i64,
    /// Arena: X went berserk.
    pub x_berserk: bool,
    /// Arena: O went berserk.
    pub o_berserk: bool,
}

/// Inserts a tournament.
///
/// # Errors
/// Database errors.
pub fn insert(conn: &mut DbConnection, row: &TournamentRow) -> Result<(), StoreError> {
    diesel::insert_into(tournaments::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Reads a tournament.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, id: &str) -> Result<Option<TournamentRow>, StoreError> {
    Ok(tournaments::table
        .find(id)
        .select(TournamentRow::as_select())
        .first(conn)
        .optional()?)
}

/// Reads a tournament and locks it for this transaction (see [`super::matches::lock`]).
///
/// # Errors
/// Database errors.
pub fn lock(conn: &mut DbConnection, id: &str) -> Result<Option<TournamentRow>, StoreError> {
    Ok(match conn {
        DbConnection::Pg(pg) => tournaments::table
            .find(id)
            .select(TournamentRow::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => tournaments::table
            .find(id)
            .select(TournamentRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Locks a tournament unless another transaction holds it (`SKIP LOCKED` on
/// PostgreSQL; SQLite's immediate transaction is already the only writer):
/// the worker's claim, so two instances never work on one tournament at once.
///
/// # Errors
/// Database errors.
pub fn claim(conn: &mut DbConnection, id: &str) -> Result<Option<TournamentRow>, StoreError> {
    Ok(match conn {
        DbConnection::Pg(pg) => tournaments::table
            .find(id)
            .select(TournamentRow::as_select())
            .for_update()
            .skip_locked()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => tournaments::table
            .find(id)
            .select(TournamentRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Writes a tournament back.
///
/// # Errors
/// Database errors.
pub fn save(conn: &mut DbConnection, row: &TournamentRow) -> Result<(), StoreError> {
    diesel::update(tournaments::table.find(&row.id))
        .set(row)
        .execute(conn)?;
    Ok(())
}

/// A page of tournaments in list order (`sort_at`, then id), after the keyset `after`.
///
/// # Errors
/// Database errors.
pub fn list(
    conn: &mut DbConnection,
    status: Option<&str>,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<TournamentRow>, StoreError> {
    let mut query = tournaments::table
        .select(TournamentRow::as_select())
        .order((tournaments::sort_at.asc(), tournaments::id.asc()))
        .limit(limit)
        .into_boxed();
    if let Some(status) = status {
        query = query.filter(tournaments::status.eq(status.to_owned()));
    }
    if let Some((at, id)) = after {
        query = query.filter(
            tournaments::sort_at
                .gt(at)
                .or(tournaments::sort_at.eq(at).and(tournaments::id.gt(id))),
        );
    }
    Ok(query.load(conn)?)
}

/// Ids of tournaments the worker should act on at `now` (a start or a
/// pairing is due), soonest first.
///
/// # Errors
/// Database errors.
pub fn due(conn: &mut DbConnection, now: i64, limit: i64) -> Result<Vec<String>, StoreError> {
    Ok(tournaments::table
        .filter(tournaments::next_at.le(now))
        .filter(tournaments::status.eq_any(["registering", "running"]))
        .order(tournaments::next_at.asc())
        .select(tournaments::id)
        .limit(limit)
        .load(conn)?)
}

/// Ids of tournaments with a game whose match ended but whose result is not recorded yet.
///
/// # Errors
/// Database errors.
pub fn with_unrecorded_results(
    conn: &mut DbConnection,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(tournament_games::table
        .inner_join(matches::table)
        .filter(tournament_games::result.is_null())
        .filter(matches::status.eq(MatchStatus::Finished))
        .select(tournament_games::tournament_id)
        .distinct()
        .limit(limit)
        .load(conn)?)
}

/// An entrant with their name.
pub type NamedEntrant = (EntrantRow, String, bool);

/// The entrants with their usernames and bot flags, in joining order.
///
/// # Errors
/// Database errors.
pub fn entrants(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<NamedEntrant>, StoreError> {
    Ok(tournament_players::table
        .inner_join(players::table)
        .filter(tournament_players::tournament_id.eq(tournament_id))
        .order((
            tournament_players::joined_at.asc(),
            tournament_players::player_id.asc(),
        ))
        .select((EntrantRow::as_select(), players::username, players::bot))
        .load(conn)?)
}

/// The tournaments not over yet (registering or running) that `player_id`
/// is entered in, each with the entry (withdrawn or not).
///
/// # Errors
/// Database errors.
pub fn unfinished_of(
    conn: &mut DbConnection,
    player_id: &str,
) -> Result<Vec<(TournamentRow, EntrantRow)>, StoreError> {
    Ok(tournaments::table
        .inner_join(
            tournament_players::table.on(tournament_players::tournament_id.eq(tournaments::id)),
        )
        .filter(tournament_players::player_id.eq(player_id))
        .filter(tournaments::status.eq_any(["registering", "running"]))
        .select((TournamentRow::as_select(), EntrantRow::as_select()))
        .load(conn)?)
}

/// One entrant.
///
/// # Errors
/// Database errors.
pub fn entrant(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
) -> Result<Option<EntrantRow>, StoreError> {
    Ok(tournament_players::table
        .find((tournament_id, player_id))
        .select(EntrantRow::as_select())
        .first(conn)
        .optional()?)
}

/// Adds an entrant.
///
/// # Errors
/// Database errors (a unique violation when already entered).
pub fn add_entrant(conn: &mut DbConnection, row: &EntrantRow) -> Result<(), StoreError> {
    diesel::insert_into(tournament_players::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Removes an entrant (before the start).
///
/// # Errors
/// Database errors.
pub fn delete_entrant(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
) -> Result<(), StoreError> {
    diesel::delete(tournament_players::table.find((tournament_id, player_id))).execute(conn)?;
    Ok(())
}

/// Marks an entrant withdrawn.
///
/// # Errors
/// Database errors.
pub fn withdraw_entrant(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
) -> Result<(), StoreError> {
    diesel::update(tournament_players::table.find((tournament_id, player_id)))
        .set(tournament_players::withdrawn.eq(true))
        .execute(conn)?;
    Ok(())
}

/// Sets an entrant's rating (taken again at the start).
///
/// # Errors
/// Database errors.
pub fn set_rating(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
    rating: f64,
) -> Result<(), StoreError> {
    diesel::update(tournament_players::table.find((tournament_id, player_id)))
        .set(tournament_players::rating.eq(rating))
        .execute(conn)?;
    Ok(())
}

/// Records a paired round.
///
/// # Errors
/// Database errors (a unique violation when the round was paired already).
pub fn insert_round(conn: &mut DbConnection, row: &RoundRow) -> Result<(), StoreError> {
    diesel::insert_into(tournament_rounds::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Every paired round, oldest first.
///
/// # Errors
/// Database errors.
pub fn rounds(conn: &mut DbConnection, tournament_id: &str) -> Result<Vec<RoundRow>, StoreError> {
    Ok(tournament_rounds::table
        .filter(tournament_rounds::tournament_id.eq(tournament_id))
        .order(tournament_rounds::round.asc())
        .select(RoundRow::as_select())
        .load(conn)?)
}

/// Records a game.
///
/// # Errors
/// Database errors.
pub fn insert_game(conn: &mut DbConnection, row: &GameRow) -> Result<(), StoreError> {
    diesel::insert_into(tournament_games::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// Every game, by round and board.
///
/// # Errors
/// Database errors.
pub fn games(conn: &mut DbConnection, tournament_id: &str) -> Result<Vec<GameRow>, StoreError> {
    Ok(tournament_games::table
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .order((tournament_games::round.asc(), tournament_games::board.asc()))
        .select(GameRow::as_select())
        .load(conn)?)
}

/// A game with its match's live outcome: `None` while the match is being
/// played, else the winner (`Some(None)`: a draw).
pub type LiveGame = (GameRow, Option<Option<StoredSeat>>);

/// Every game with its match's live outcome.
///
/// # Errors
/// Database errors.
pub fn games_live(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<LiveGame>, StoreError> {
    let rows: Vec<(GameRow, MatchStatus, Option<StoredSeat>)> = tournament_games::table
        .inner_join(matches::table)
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .order((tournament_games::round.asc(), tournament_games::board.asc()))
        .select((GameRow::as_select(), matches::status, matches::winner))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(g, status, winner)| {
            let outcome = (status == MatchStatus::Finished).then_some(winner);
            (g, outcome)
        })
        .collect())
}

/// A tournament's games whose match ended but whose result is not recorded,
/// with the match's winner (`None`: a draw).
///
/// # Errors
/// Database errors.
pub fn ended_unrecorded(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<(String, Option<StoredSeat>)>, StoreError> {
    Ok(tournament_games::table
        .inner_join(matches::table)
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .filter(tournament_games::result.is_null())
        .filter(matches::status.eq(MatchStatus::Finished))
        .select((tournament_games::match_id, matches::winner))
        .load(conn)?)
}

/// Records the same result for several games.
///
/// # Errors
/// Database errors.
pub fn record_results(
    conn: &mut DbConnection,
    match_ids: &[&str],
    result: &str,
) -> Result<(), StoreError> {
    // Chunks keep the bind parameters under SQLite's limit.
    for chunk in match_ids.chunks(10_000) {
        diesel::update(tournament_games::table.filter(tournament_games::match_id.eq_any(chunk)))
            .set(tournament_games::result.eq(result))
            .execute(conn)?;
    }
    Ok(())
}

/// Rows a multi-row `tournament_games` statement carries at most (10
/// columns each: under SQLite's 32,766 bind parameters).
const GAMES_PER_INSERT: usize = 3_000;

/// Records many games at once (an arena pass's): `COPY` on PostgreSQL,
/// multi-row statements on SQLite.
///
/// # Errors
/// Database errors.
pub fn insert_games(conn: &mut DbConnection, rows: &[GameRow]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    if let DbConnection::Pg(pg) = &mut *conn {
        diesel::copy_from(tournament_games::table)
            .from_insertable(rows)
            .execute(pg)?;
        return Ok(());
    }
    for chunk in rows.chunks(GAMES_PER_INSERT) {
        super::connection::execute_on_backend!(
            conn,
            diesel::insert_into(tournament_games::table).values(chunk)
        )?;
    }
    Ok(())
}

/// A game with its match's end: `None` while it is being played, else the
/// winner (`None`: a draw) and when it ended.
pub type TimedGame = (GameRow, Option<(Option<StoredSeat>, i64)>);

fn timed(rows: Vec<(GameRow, MatchStatus, Option<StoredSeat>, Option<i64>)>) -> Vec<TimedGame> {
    rows.into_iter()
        .map(|(g, status, winner, finished_at)| {
            let end = (status == MatchStatus::Finished)
                .then(|| (winner, finished_at.unwrap_or(g.created_at)));
            (g, end)
        })
        .collect()
}

/// Every game of a tournament with its match's end, oldest first: by
/// round and board (a Swiss round's games after the round before; an
/// arena's boards number its games in the order they were paired), the
/// order of the `(tournament_id, round, board)` unique index.
///
/// # Errors
/// Database errors.
pub fn games_timed(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<TimedGame>, StoreError> {
    let rows = tournament_games::table
        .inner_join(matches::table)
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .order((tournament_games::round.asc(), tournament_games::board.asc()))
        .select((
            GameRow::as_select(),
            matches::status,
            matches::winner,
            matches::finished_at,
        ))
        .load(conn)?;
    Ok(timed(rows))
}

/// One game.
///
/// # Errors
/// Database errors.
pub fn game(conn: &mut DbConnection, match_id: &str) -> Result<Option<GameRow>, StoreError> {
    Ok(tournament_games::table
        .find(match_id)
        .select(GameRow::as_select())
        .first(conn)
        .optional()?)
}

/// Which of `match_ids` are games of an arena (one statement).
///
/// # Errors
/// Database errors.
pub fn arena_games_among(
    conn: &mut DbConnection,
    match_ids: &[String],
) -> Result<Vec<String>, StoreError> {
    Ok(tournament_games::table
        .inner_join(tournaments::table)
        .filter(tournament_games::match_id.eq_any(match_ids))
        .filter(tournaments::kind.eq("arena"))
        .select(tournament_games::match_id)
        .load(conn)?)
}

/// An arena game with its arena's end time (`None`: the match is not an
/// arena game), read when the game ends.
///
/// # Errors
/// Database errors.
pub fn arena_game(
    conn: &mut DbConnection,
    match_id: &str,
) -> Result<Option<(GameRow, Option<i64>)>, StoreError> {
    Ok(tournament_games::table
        .inner_join(tournaments::table)
        .filter(tournament_games::match_id.eq(match_id))
        .filter(tournaments::kind.eq("arena"))
        .select((GameRow::as_select(), tournaments::ends_at))
        .first(conn)
        .optional()?)
}

/// Marks the player in `seat` of a game berserk.
///
/// # Errors
/// Database errors.
pub fn set_berserk(conn: &mut DbConnection, match_id: &str, x: bool) -> Result<(), StoreError> {
    let target = tournament_games::table.find(match_id);
    if x {
        diesel::update(target)
            .set(tournament_games::x_berserk.eq(true))
            .execute(conn)?;
    } else {
        diesel::update(target)
            .set(tournament_games::o_berserk.eq(true))
            .execute(conn)?;
    }
    Ok(())
}

/// An arena player who withdrew comes back at `now`.
///
/// # Errors
/// Database errors.
pub fn come_back(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
    now: i64,
) -> Result<(), StoreError> {
    diesel::update(tournament_players::table.find((tournament_id, player_id)))
        .set((
            tournament_players::withdrawn.eq(false),
            tournament_players::back_at.eq(Some(now)),
        ))
        .execute(conn)?;
    Ok(())
}

/// The director removes an entrant for good (withdrawn, and may not come back).
///
/// # Errors
/// Database errors.
pub fn remove_entrant(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
) -> Result<(), StoreError> {
    diesel::update(tournament_players::table.find((tournament_id, player_id)))
        .set((
            tournament_players::withdrawn.eq(true),
            tournament_players::removed.eq(true),
        ))
        .execute(conn)?;
    Ok(())
}

/// The entrants without their names, in joining order (an arena pass's read).
///
/// # Errors
/// Database errors.
pub fn entrant_rows(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<EntrantRow>, StoreError> {
    let mut rows = tournament_players::table
        .filter(tournament_players::tournament_id.eq(tournament_id))
        .select(EntrantRow::as_select())
        .load::<EntrantRow>(conn)?;
    // Sorted here, by bytes: PostgreSQL compares the ids through the
    // database's collation, a third of this read for 2,000 entrants.
    rows.sort_unstable_by(|a, b| (a.joined_at, &a.player_id).cmp(&(b.joined_at, &b.player_id)));
    Ok(rows)
}

/// Locks some entrants for this transaction (`FOR UPDATE` on PostgreSQL;
/// SQLite has one writer), in one order for every transaction.
///
/// # Errors
/// Database errors.
pub fn lock_entrants(
    conn: &mut DbConnection,
    tournament_id: &str,
    players: &[&str],
) -> Result<Vec<EntrantRow>, StoreError> {
    macro_rules! query {
        () => {
            tournament_players::table
                .filter(tournament_players::tournament_id.eq(tournament_id))
                .filter(tournament_players::player_id.eq_any(players))
                .order(tournament_players::player_id.asc())
                .select(EntrantRow::as_select())
        };
    }
    Ok(match conn {
        DbConnection::Pg(pg) => query!().for_update().load(pg)?,
        DbConnection::Sqlite(lite) => query!().load(lite)?,
    })
}

/// Locks every entrant of a tournament for this transaction (PostgreSQL;
/// SQLite has one writer), in the order [`lock_entrants`] uses.
///
/// # Errors
/// Database errors.
pub fn lock_all_entrants(conn: &mut DbConnection, tournament_id: &str) -> Result<(), StoreError> {
    if let DbConnection::Pg(pg) = conn {
        tournament_players::table
            .filter(tournament_players::tournament_id.eq(tournament_id))
            .order(tournament_players::player_id.asc())
            .select(tournament_players::player_id)
            .for_update()
            .load::<String>(pg)?;
    }
    Ok(())
}

/// Writes an entrant's running arena totals.
///
/// # Errors
/// Database errors.
pub fn save_tally(
    conn: &mut DbConnection,
    tournament_id: &str,
    player_id: &str,
    tally: &TallyRow,
) -> Result<(), StoreError> {
    diesel::update(tournament_players::table.find((tournament_id, player_id)))
        .set(tally)
        .execute(conn)?;
    Ok(())
}

/// The players of a tournament's games being played: `(x, o)` of every game
/// with no recorded result whose match has not finished.
///
/// # Errors
/// Database errors.
pub fn open_games(
    conn: &mut DbConnection,
    tournament_id: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    Ok(tournament_games::table
        .inner_join(matches::table)
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .filter(tournament_games::result.is_null())
        .filter(matches::status.ne(MatchStatus::Finished))
        .select((tournament_games::x_player_id, tournament_games::o_player_id))
        .load(conn)?)
}

/// The highest board number of a tournament's round (an arena's games are
/// all round 0, numbered in pairing order).
///
/// # Errors
/// Database errors.
pub fn last_board(
    conn: &mut DbConnection,
    tournament_id: &str,
    round: i32,
) -> Result<Option<i32>, StoreError> {
    Ok(tournament_games::table
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .filter(tournament_games::round.eq(round))
        .select(diesel::dsl::max(tournament_games::board))
        .first(conn)?)
}
