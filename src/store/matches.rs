//! Queries on `matches` and `moves`.
//!
//! Over 400 lines: every query on the match and move tables, each short, so a
//! use case finds them in one place.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel::sql_types::Bool;

use super::cached::Cached;
use super::connection::execute_on_backend;
use super::kinds::{Controller, EndReason, MatchId, MatchStatus, Mode, PlayerId, StoredSeat};
use super::schema::{match_players, matches, moves, players};
use super::{DbConnection, StoreError};

/// A stored match, read and written whole: a use case loads it under a lock,
/// changes it in memory and saves it back in the same transaction.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset, PartialEq, Eq)]
#[diesel(table_name = matches, treat_none_as_null = true, treat_none_as_default_value = false)]
pub struct MatchRow {
    /// Short URL-safe id.
    pub id: MatchId,
    /// How it was made.
    pub mode: Mode,
    /// Ladder of a ranked match.
    pub ladder: Option<String>,
    /// Whether the result changes ratings.
    pub rated: bool,
    /// 1..=4.
    pub depth: i16,
    /// `clock`, `per_turn` or `none`.
    pub tc_kind: String,
    /// Clock: initial bank.
    pub tc_initial_ms: Option<i64>,
    /// Clock: increment.
    pub tc_increment_ms: Option<i64>,
    /// Per turn: the limit.
    pub tc_turn_ms: Option<i64>,
    /// Player in seat X (`None`: the CPU of a practice match).
    pub x_player_id: Option<PlayerId>,
    /// Player in seat O.
    pub o_player_id: Option<PlayerId>,
    /// Who plays seat X now.
    pub x_controller: Controller,
    /// Who plays seat O now.
    pub o_controller: Controller,
    /// Level of the practice CPU.
    pub cpu_level: Option<i16>,
    /// The encoded move record.
    pub position: Vec<u8>,
    /// Moves played.
    pub ply: i32,
    /// The side to move, while active.
    pub to_move: Option<StoredSeat>,
    /// X's bank at the start of the current turn.
    pub x_bank_ms: Option<i64>,
    /// O's bank at the start of the current turn.
    pub o_bank_ms: Option<i64>,
    /// When the current turn began.
    pub turn_started_at: i64,
    /// When the side to move loses on time.
    pub deadline_at: Option<i64>,
    /// Active with a CPU-controlled side to move.
    pub awaiting_cpu: bool,
    /// No CPU worker takes this turn until then: one is thinking on it, or
    /// (for a substitute) the turn is younger than the substitute's pace.
    pub cpu_claimed_until: Option<i64>,
    /// Being played or decided.
    pub status: MatchStatus,
    /// The winning seat; `None` for a draw or an unfinished match.
    pub winner: Option<StoredSeat>,
    /// Why it ended.
    pub reason: Option<EndReason>,
    /// The room it was played in.
    pub room_code: Option<String>,
    /// Bumped by every change; the event id.
    pub version: i32,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub finished_at: Option<i64>,
    /// X's lag-compensation quota (`None`: the control's starting quota).
    pub x_lag_quota_ms: Option<i64>,
    /// O's lag-compensation quota.
    pub o_lag_quota_ms: Option<i64>,
}

/// A stored move.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, PartialEq, Eq)]
#[diesel(table_name = moves)]
pub struct MoveRow {
    /// The match.
    pub match_id: String,
    /// Moves before this one.
    pub ply: i32,
    /// `x` or `o`.
    pub seat: String,
    /// Flat square index.
    pub square: i32,
    /// Epoch ms.
    pub played_at: i64,
    /// The mover's bank after the move.
    pub clock_ms: Option<i64>,
    /// Whether the CPU made it (practice opponent or substitute).
    pub by_cpu: bool,
}

/// Inserts a new match and its seats.
///
/// # Errors
/// Database errors; a foreign-key violation when a seated player does not
/// exist (`store::seat_guard`).
pub fn insert(conn: &mut DbConnection, row: &MatchRow) -> Result<(), StoreError> {
    let seated: Vec<&str> = row.seated_players().collect();
    super::seat_guard::check_players(conn, &seated)?;
    diesel::insert_into(matches::table)
        .values(row)
        .execute(conn)?;
    // Both seats in one statement: one round trip fewer for every new match.
    let seats = seat_rows(std::slice::from_ref(row));
    if !seats.is_empty() {
        execute_on_backend!(
            conn,
            diesel::insert_into(match_players::table).values(&seats)
        )?;
    }
    Ok(())
}

/// One seat of a match, as `match_players` indexes it (owned: `COPY` writes
/// owned values).
#[derive(Insertable)]
#[diesel(table_name = match_players, treat_none_as_default_value = false)]
struct SeatRow {
    match_id: MatchId,
    seat: String,
    player_id: PlayerId,
    created_at: i64,
    mode: Mode,
    active: bool,
}

/// Rows a multi-row statement carries at most: its bind parameters stay
/// under SQLite's 32,766 (`matches` has 32 columns).
const MATCHES_PER_INSERT: usize = 900;

/// The `match_players` rows of `rows`.
fn seat_rows(rows: &[MatchRow]) -> Vec<SeatRow> {
    rows.iter()
        .flat_map(|row| {
            [("x", &row.x_player_id), ("o", &row.o_player_id)]
                .into_iter()
                .filter_map(move |(seat, player)| {
                    player.as_ref().map(|player_id| SeatRow {
                        match_id: row.id.clone(),
                        seat: seat.to_owned(),
                        player_id: player_id.clone(),
                        created_at: row.created_at,
                        mode: row.mode,
                        active: row.is_active_status(),
                    })
                })
        })
        .collect()
}

/// Inserts new matches in bulk (a pairing round's, in its one transaction):
/// on PostgreSQL with `COPY` (binary: no bind-parameter limit, no statement
/// to plan), on SQLite with multi-row statements — a few statements for
/// thousands of matches instead of three each.
///
/// # Errors
/// Database errors; a unique violation when a player already sits in an
/// unfinished ranked match (`match_players_one_ranked`); a foreign-key
/// violation when a seated player does not exist (`store::seat_guard`).
pub fn insert_many(conn: &mut DbConnection, rows: &[MatchRow]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let seated: Vec<&str> = rows.iter().flat_map(MatchRow::seated_players).collect();
    super::seat_guard::check_players(conn, &seated)?;
    write_many(conn, rows)
}

/// The writes of [`insert_many`], without its check that the seated players
/// exist: for a caller that proves it otherwise in the same transaction
/// (`store::paired`).
pub(super) fn write_many(conn: &mut DbConnection, rows: &[MatchRow]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    if let DbConnection::Pg(pg) = &mut *conn {
        diesel::copy_from(matches::table)
            .from_insertable(rows)
            .execute(pg)?;
        diesel::copy_from(match_players::table)
            .from_insertable(&seat_rows(rows))
            .execute(pg)?;
        return Ok(());
    }
    for chunk in rows.chunks(MATCHES_PER_INSERT) {
        execute_on_backend!(conn, diesel::insert_into(matches::table).values(chunk))?;
        let seats = seat_rows(chunk);
        execute_on_backend!(
            conn,
            diesel::insert_into(match_players::table).values(&seats)
        )?;
    }
    Ok(())
}

/// Which of `players` sit in an unfinished ranked match.
///
/// # Errors
/// Database errors.
pub fn active_ranked_among(
    conn: &mut DbConnection,
    players: &[&str],
) -> Result<Vec<String>, StoreError> {
    let mut busy = Vec::new();
    for chunk in players.chunks(10_000) {
        busy.extend(
            match_players::table
                .filter(match_players::player_id.eq_any(chunk))
                .filter(unfinished_seats_of(Mode::Ranked))
                .select(match_players::player_id)
                .load::<String>(conn)?,
        );
    }
    Ok(busy)
}

/// What pairing needs of a player's ranked history on `ladder`: when they
/// last sat X (`None`: never) and whom they last played. Read from the seats
/// (`match_players_newest`, newest first) when the player queues, so a
/// pairing round writes no rating rows.
///
/// # Errors
/// Database errors.
pub fn last_ranked(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: &str,
) -> Result<(Option<i64>, Option<String>), StoreError> {
    let seats = || {
        match_players::table
            .inner_join(matches::table)
            .filter(match_players::player_id.eq(player_id.to_owned()))
            .filter(match_players::mode.eq(Mode::Ranked))
            .filter(matches::ladder.eq(ladder.to_owned()))
            .order((
                match_players::created_at.desc(),
                match_players::match_id.desc(),
            ))
            .into_boxed()
    };
    let last_x_at = seats()
        .filter(match_players::seat.eq("x"))
        .select(match_players::created_at)
        .first::<i64>(conn)
        .optional()?;
    let opponent = seats()
        .select((matches::x_player_id, matches::o_player_id))
        .first::<(Option<String>, Option<String>)>(conn)
        .optional()?
        .and_then(|(x, o)| {
            if x.as_deref() == Some(player_id) {
                o
            } else {
                x
            }
        });
    Ok((last_x_at, opponent))
}

impl MatchRow {
    /// The players seated at it (none for a seat the CPU plays).
    pub(super) fn seated_players(&self) -> impl Iterator<Item = &str> {
        [&self.x_player_id, &self.o_player_id]
            .into_iter()
            .flatten()
            .map(|p| p.as_str())
    }

    /// Whether the row is of a match still being played; a finished one's
    /// seats are marked finished when it is written.
    pub(super) fn is_active_status(&self) -> bool {
        self.status == MatchStatus::Active
    }
}

/// The unfinished seats of `mode`, as the partial indexes over them state
/// it: `active` as a bare column and the mode written out as text, not bound.
/// A prepared statement's generic plan (PostgreSQL's choice after a few runs
/// of a [`Cached`] statement) uses a partial index only when the query
/// itself implies the index's predicate; with `mode = $2` it would fall back
/// to `match_players_newest` and walk every seat the player ever had.
/// `mode` is one of [`Mode`]'s fixed texts, so nothing from outside enters
/// the SQL.
fn unfinished_seats_of(mode: Mode) -> diesel::expression::SqlLiteral<Bool> {
    diesel::dsl::sql::<Bool>(&format!(
        "match_players.active AND match_players.mode = '{}'",
        mode.as_str()
    ))
}

/// The player's unfinished ranked match, if any: one probe of
/// `match_players_one_ranked`, the unique index that makes a second one
/// impossible whichever instance writes it.
///
/// # Errors
/// Database errors.
pub fn active_ranked(
    conn: &mut DbConnection,
    player_id: &str,
) -> Result<Option<String>, StoreError> {
    Ok(Cached(
        match_players::table
            .filter(match_players::player_id.eq(player_id))
            .filter(unfinished_seats_of(Mode::Ranked))
            .select(match_players::match_id)
            .limit(1),
    )
    .get_result(conn)
    .optional()?)
}

/// How many unfinished matches of `mode` the player is seated in. On
/// PostgreSQL practice and ranked seats have partial indexes
/// (`match_players_practice`, `match_players_one_ranked`); for another mode
/// this walks every seat the player ever had (`match_players_newest`), so
/// give that mode an index of its own before calling it on a request path.
///
/// # Errors
/// Database errors.
pub fn count_active(
    conn: &mut DbConnection,
    player_id: &str,
    mode: Mode,
) -> Result<i64, StoreError> {
    Ok(Cached(
        match_players::table
            .filter(match_players::player_id.eq(player_id))
            .filter(unfinished_seats_of(mode))
            .count(),
    )
    .get_result(conn)?)
}

/// Reads a match without locking it.
///
/// # Errors
/// Database errors.
pub fn get(conn: &mut DbConnection, id: &str) -> Result<Option<MatchRow>, StoreError> {
    Ok(matches::table
        .find(id)
        .select(MatchRow::as_select())
        .first(conn)
        .optional()?)
}

/// Who sits at a match and what it belongs to, read in the same statement
/// as its row so that a move or a read of a match needs no further queries:
/// the seated players' names and bot flags, and its tournament game.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seating {
    /// The usernames of X's and O's players (`None`: no player, the CPU).
    pub names: [Option<String>; 2],
    /// Whether X's and O's players are bot accounts.
    pub bots: [bool; 2],
    /// The tournament and round the match was paired in, if any.
    pub tournament: Option<(String, i32)>,
}

pub(super) type SeatingColumns = (
    diesel::sql_types::Nullable<diesel::sql_types::Text>,
    diesel::sql_types::Nullable<diesel::sql_types::Text>,
    diesel::sql_types::Nullable<diesel::sql_types::Bool>,
    diesel::sql_types::Nullable<diesel::sql_types::Bool>,
    diesel::sql_types::Nullable<diesel::sql_types::Text>,
    diesel::sql_types::Nullable<diesel::sql_types::Integer>,
);

pub(super) type SeatingValues = (
    Option<String>,
    Option<String>,
    Option<bool>,
    Option<bool>,
    Option<String>,
    Option<i32>,
);

/// The [`Seating`] of the match row being selected, as scalar subqueries:
/// on PostgreSQL `FOR UPDATE` then still locks only the match row (a join
/// would have to lock the players' rows too, or could not: `FOR UPDATE`
/// refuses the nullable side of an outer join).
pub(super) fn seating_columns() -> diesel::expression::SqlLiteral<SeatingColumns> {
    diesel::dsl::sql::<SeatingColumns>(SEATING_SQL)
}

/// The SQL of [`seating_columns`], of a row named `matches`.
pub(super) const SEATING_SQL: &str = "(SELECT username FROM players WHERE players.id = matches.x_player_id), \
     (SELECT username FROM players WHERE players.id = matches.o_player_id), \
     (SELECT bot FROM players WHERE players.id = matches.x_player_id), \
     (SELECT bot FROM players WHERE players.id = matches.o_player_id), \
     (SELECT tournament_id FROM tournament_games WHERE tournament_games.match_id = matches.id), \
     (SELECT round FROM tournament_games WHERE tournament_games.match_id = matches.id)";

impl From<SeatingValues> for Seating {
    fn from((x, o, x_bot, o_bot, tournament, round): SeatingValues) -> Self {
        Seating {
            names: [x, o],
            bots: [x_bot.unwrap_or(false), o_bot.unwrap_or(false)],
            tournament: tournament.zip(round),
        }
    }
}

/// The [`Seating`] of match `id` (the default for a missing match).
///
/// # Errors
/// Database errors.
pub fn seating(conn: &mut DbConnection, id: &str) -> Result<Seating, StoreError> {
    // The SQL literal would keep diesel from preparing the statement once;
    // each arm names its backend so that `Cached` reaches diesel's cache.
    let query = matches::table.find(id).select(seating_columns()).limit(1);
    let found: Option<SeatingValues> = match conn {
        DbConnection::Pg(pg) => Cached(query).get_result(pg).optional()?,
        DbConnection::Sqlite(lite) => Cached(query).get_result(lite).optional()?,
    };
    Ok(found.map(Seating::from).unwrap_or_default())
}

/// The read of match `$id` with its [`Seating`], one statement, for the
/// synchronous and the pipelined connections alike (a macro: `as_select`
/// fixes the backend, so each use builds its own query).
macro_rules! seated {
    ($id:expr) => {
        matches::table
            .find($id)
            .select((MatchRow::as_select(), seating_columns()))
            .limit(1)
    };
}

/// Reads a match with its [`Seating`], without locking it.
///
/// # Errors
/// Database errors.
pub fn get_seated(
    conn: &mut DbConnection,
    id: &str,
) -> Result<Option<(MatchRow, Seating)>, StoreError> {
    // `as_select` fixes the backend, so each arm builds its own query.
    let found: Option<(MatchRow, SeatingValues)> = match conn {
        DbConnection::Pg(pg) => Cached(seated!(id)).get_result(pg).optional()?,
        DbConnection::Sqlite(lite) => Cached(seated!(id)).get_result(lite).optional()?,
    };
    Ok(found.map(|(row, seating)| (row, seating.into())))
}

/// As [`lock`], with the match's [`Seating`] read in the same statement.
///
/// # Errors
/// Database errors.
pub fn lock_seated(
    conn: &mut DbConnection,
    id: &str,
) -> Result<Option<(MatchRow, Seating)>, StoreError> {
    let found: Option<(MatchRow, SeatingValues)> = match conn {
        DbConnection::Pg(pg) => Cached(seated!(id).for_update()).get_result(pg).optional()?,
        DbConnection::Sqlite(lite) => Cached(seated!(id)).get_result(lite).optional()?,
    };
    Ok(found.map(|(row, seating)| (row, seating.into())))
}

/// Reads a match and locks its row until the transaction ends: `SELECT … FOR
/// UPDATE` on PostgreSQL; on SQLite the surrounding immediate transaction
/// already holds the database's write lock.
///
/// # Errors
/// Database errors.
pub fn lock(conn: &mut DbConnection, id: &str) -> Result<Option<MatchRow>, StoreError> {
    // `as_select` fixes the backend, so each arm builds its own query.
    Ok(match conn {
        DbConnection::Pg(pg) => matches::table
            .find(id)
            .select(MatchRow::as_select())
            .for_update()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(lite) => matches::table
            .find(id)
            .select(MatchRow::as_select())
            .first(lite)
            .optional()?,
    })
}

/// Writes every column of a match back; a finished match's seats stop
/// counting as unfinished.
///
/// # Errors
/// Database errors.
pub fn save(conn: &mut DbConnection, row: &MatchRow) -> Result<(), StoreError> {
    // Every column is set (`treat_none_as_null`): the SQL has one shape.
    // `RETURNING` puts it on diesel's load path, where it is prepared once
    // per connection (see `store::cached`).
    let update = Cached(
        diesel::update(matches::table.find(&row.id))
            .set(row)
            .returning(matches::version),
    );
    match conn {
        DbConnection::Pg(pg) => update.load::<i32>(pg)?,
        DbConnection::Sqlite(lite) => update.load::<i32>(lite)?,
    };
    if !row.is_active_status() {
        diesel::update(
            match_players::table
                .filter(match_players::match_id.eq(&row.id))
                .filter(match_players::active),
        )
        .set(match_players::active.eq(false))
        .execute(conn)?;
    }
    Ok(())
}

/// Ids of active matches whose side to move has run out of time by `now`,
/// locked for this transaction; rows another instance holds are skipped.
///
/// # Errors
/// Database errors.
pub fn claim_due(conn: &mut DbConnection, now: i64, limit: i64) -> Result<Vec<String>, StoreError> {
    let query = matches::table
        .filter(matches::status.eq(MatchStatus::Active))
        .filter(matches::deadline_at.le(now))
        .order(matches::deadline_at.asc())
        .select(matches::id)
        .limit(limit);
    Ok(match conn {
        DbConnection::Pg(pg) => query.for_update().skip_locked().load(pg)?,
        DbConnection::Sqlite(lite) => query.load(lite)?,
    })
}

/// A match waiting for a CPU move, with what the CPU mover ranks it by.
#[derive(Debug, Clone, Queryable, Selectable, PartialEq, Eq)]
#[diesel(table_name = matches)]
pub struct CpuTurn {
    /// The match.
    pub id: MatchId,
    /// How it was made.
    pub mode: Mode,
    /// Seat X's player (`None`: the practice CPU).
    pub x_player_id: Option<PlayerId>,
    /// Seat O's player.
    pub o_player_id: Option<PlayerId>,
    /// The seat to move.
    pub to_move: Option<StoredSeat>,
    /// When the side to move loses on time.
    pub deadline_at: Option<i64>,
    /// When the turn began.
    pub turn_started_at: i64,
}

/// Which waiting CPU turns [`cpu_turns`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuTurnKind {
    /// The CPU covers a player's seat (ranked, casual, tournament).
    Substitute,
    /// A practice match whose clock or turn limit runs.
    ClockedPractice,
    /// A practice match without a time limit.
    UntimedPractice,
}

/// Up to `limit` unclaimed matches of `kind` waiting for a CPU move at
/// `now`, oldest turn first, locked for this transaction on PostgreSQL (rows
/// another instance holds are skipped).
///
/// # Errors
/// Database errors.
pub fn cpu_turns(
    conn: &mut DbConnection,
    now: i64,
    kind: CpuTurnKind,
    limit: i64,
) -> Result<Vec<CpuTurn>, StoreError> {
    // Each kind is its own statically typed query (boxed ones cannot lock),
    // built per backend (`as_select` fixes the backend).
    macro_rules! load {
        ($kind:expr) => {{
            macro_rules! query {
                () => {
                    matches::table
                        .filter(matches::awaiting_cpu.eq(true))
                        .filter(matches::status.eq(MatchStatus::Active))
                        .filter(
                            matches::cpu_claimed_until
                                .is_null()
                                .or(matches::cpu_claimed_until.lt(now)),
                        )
                        .filter($kind)
                        .order(matches::turn_started_at.asc())
                        .select(CpuTurn::as_select())
                        .limit(limit)
                };
            }
            match conn {
                DbConnection::Pg(pg) => query!().for_update().skip_locked().load(pg)?,
                DbConnection::Sqlite(lite) => query!().load(lite)?,
            }
        }};
    }
    Ok(match kind {
        CpuTurnKind::Substitute => load!(matches::mode.ne(Mode::Practice)),
        CpuTurnKind::ClockedPractice => load!(
            matches::mode
                .eq(Mode::Practice)
                .and(matches::deadline_at.is_not_null())
        ),
        CpuTurnKind::UntimedPractice => load!(
            matches::mode
                .eq(Mode::Practice)
                .and(matches::deadline_at.is_null())
        ),
    })
}

/// Marks the matches `ids` claimed by a CPU worker until `until`.
///
/// # Errors
/// Database errors.
pub fn mark_cpu_claimed(
    conn: &mut DbConnection,
    ids: &[String],
    until: i64,
) -> Result<(), StoreError> {
    if !ids.is_empty() {
        diesel::update(matches::table.filter(matches::id.eq_any(ids)))
            .set(matches::cpu_claimed_until.eq(until))
            .execute(conn)?;
    }
    Ok(())
}

/// Active matches, oldest turn first.
///
/// # Errors
/// Database errors.
pub fn active(conn: &mut DbConnection, limit: i64) -> Result<Vec<MatchRow>, StoreError> {
    Ok(matches::table
        .filter(matches::status.eq(MatchStatus::Active))
        .order(matches::turn_started_at.asc())
        .select(MatchRow::as_select())
        .limit(limit)
        .load(conn)?)
}

/// Active matches whose side to move is played by its human and whose turn
/// began at or before `started_before` (the presence worker's candidates),
/// oldest turn first, after the keyset `(turn_started_at, id)` of `after`.
///
/// # Errors
/// Database errors.
pub fn human_turns(
    conn: &mut DbConnection,
    started_before: i64,
    after: Option<(i64, &str)>,
    limit: i64,
) -> Result<Vec<MatchRow>, StoreError> {
    let mut query = matches::table
        .filter(matches::status.eq(MatchStatus::Active))
        .filter(matches::turn_started_at.le(started_before))
        .filter(matches::awaiting_cpu.eq(false))
        .into_boxed();
    if let Some((at, id)) = after {
        // `>=` first, so the index on the turn's start bounds the scan.
        query = query.filter(matches::turn_started_at.ge(at)).filter(
            matches::turn_started_at
                .gt(at)
                .or(matches::id.gt(id.to_owned())),
        );
    }
    Ok(query
        .order((matches::turn_started_at.asc(), matches::id.asc()))
        .select(MatchRow::as_select())
        .limit(limit)
        .load(conn)?)
}

/// A player's matches, newest first, after the keyset `(created_at, id)`.
///
/// # Errors
/// Database errors.
pub fn for_player(
    conn: &mut DbConnection,
    player_id: &str,
    status: Option<MatchStatus>,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<MatchRow>, StoreError> {
    let mut query = match_players::table
        .inner_join(matches::table)
        .filter(match_players::player_id.eq(player_id.to_owned()))
        .select(MatchRow::as_select())
        .order((
            match_players::created_at.desc(),
            match_players::match_id.desc(),
        ))
        .limit(limit)
        .into_boxed();
    if let Some(status) = status {
        query = query.filter(matches::status.eq(status));
    }
    if let Some((created_at, id)) = after {
        query = query.filter(
            match_players::created_at
                .lt(created_at)
                .or(match_players::created_at
                    .eq(created_at)
                    .and(match_players::match_id.lt(id))),
        );
    }
    Ok(query.load(conn)?)
}

/// Inserts a move.
///
/// # Errors
/// A unique violation when that ply already has a move.
pub fn insert_move(conn: &mut DbConnection, row: &MoveRow) -> Result<(), StoreError> {
    // Two shapes: with a clock, and with `DEFAULT` for none. `RETURNING`
    // puts it on diesel's load path, where it is prepared once per
    // connection (see `store::cached`).
    let insert = Cached(
        diesel::insert_into(moves::table)
            .values(row)
            .returning(moves::ply),
    );
    match conn {
        DbConnection::Pg(pg) => insert.load::<i32>(pg)?,
        DbConnection::Sqlite(lite) => insert.load::<i32>(lite)?,
    };
    Ok(())
}

/// The moves of a match in order.
///
/// # Errors
/// Database errors.
pub fn moves(conn: &mut DbConnection, match_id: &str) -> Result<Vec<MoveRow>, StoreError> {
    Ok(moves::table
        .filter(moves::match_id.eq(match_id))
        .order(moves::ply.asc())
        .select(MoveRow::as_select())
        .load(conn)?)
}

/// The move played at `ply`, if any.
///
/// # Errors
/// Database errors.
pub fn move_at(
    conn: &mut DbConnection,
    match_id: &str,
    ply: i32,
) -> Result<Option<MoveRow>, StoreError> {
    Ok(moves::table
        .find((match_id, ply))
        .select(MoveRow::as_select())
        .first(conn)
        .optional()?)
}

/// Usernames and bot flags of every player seated in `rows`, by id, in one
/// statement (see [`names_and_bots`]).
///
/// # Errors
/// Database errors.
pub fn names_of_rows(
    conn: &mut DbConnection,
    rows: &[MatchRow],
) -> Result<HashMap<String, (String, bool)>, StoreError> {
    let ids: Vec<&str> = rows
        .iter()
        .flat_map(|r| [r.x_player_id.as_deref(), r.o_player_id.as_deref()])
        .flatten()
        .collect();
    names_and_bots(conn, &ids)
}

/// Usernames and bot flags of the given players, by id (a missing player
/// is left out).
///
/// # Errors
/// Database errors.
pub fn names_and_bots(
    conn: &mut DbConnection,
    ids: &[&str],
) -> Result<HashMap<String, (String, bool)>, StoreError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let found: Vec<(String, String, bool)> = players::table
        .filter(players::id.eq_any(ids))
        .select((players::id, players::username, players::bot))
        .load(conn)?;
    Ok(found
        .into_iter()
        .map(|(id, name, bot)| (id, (name, bot)))
        .collect())
}
