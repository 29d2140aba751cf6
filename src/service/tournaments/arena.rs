//! Running an arena (RULES.md "Tournaments", Arena): free players wait in
//! the pool and a pairing pass, about once a second per running arena,
//! pairs them with the pure core ([`crate::tournament::arena`]) and makes
//! all their matches in the pass's transaction; at the end time no game
//! starts and the arena finishes (games still running are played out and
//! rated, but score nothing). Berserk halves a player's own clock.
//!
//! A pass runs inside the tournament worker's step, on the tournament row
//! claimed with `FOR UPDATE SKIP LOCKED` (SQLite has one writer): one pass
//! per arena at a time whichever instance runs it, and a player is free
//! only when none of the arena's games they sit in is unfinished, read
//! under that lock, so nobody is ever seated in two of its games at once.
//!
//! Each entrant's running totals (points, streak, performance, seats, last
//! opponent: the core's [`Tally`](core::Tally)) are kept on their entry and
//! updated by [`record_end`](super::tally::record_end) in the transaction
//! that ends each game, so a pass and the standings read the entrants and
//! never replay the games (a pass would
//! otherwise grow with the arena's history). The games stay the record:
//! the games list scores each one by replaying them, and the tests check
//! that the standings' totals equal those sums.
//!
//! Over 400 lines: the pass, the totals, berserk and the games list share
//! the arena's loading (entrants, games, who is free); split it if a second
//! pool rule comes.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::Serialize;
use utoipa::ToSchema;

use crate::rules::Seat;
use crate::store::DbConnection;
use crate::store::matches as match_store;
use crate::store::ratings;
use crate::store::tournaments::{self as store, EntrantRow, GameRow, TimedGame, TournamentRow};
use crate::time::{Millis, rfc3339};
use crate::tournament::GameResult;
use crate::tournament::arena::{self as core, Arena, PoolPass, Standing, Waiting};

use super::super::accounts::Player;
use super::super::matches::create;
use super::super::matches::play;
use super::super::matches::record::{MatchRecord, seat_str};
use super::super::matches::state::MatchState;
use super::super::{ConflictCode, Context, Error, Result, ladders, matches};
use super::feed::PairingEvent;
use super::tally::{tally_of, tally_row};
use super::{Kind, PlayerRef, Roster, Status, game_spec};

/// How often a running arena's pool is paired.
pub const PASS_EVERY_MS: Millis = 1_000;
/// Durations allowed (API.md: 10 minutes to a day; the operator may lower
/// the shortest, `Config::arena_min_duration_ms`).
pub const DURATION_MS: (i64, i64) = (crate::config::API_MIN_ARENA_MS, 86_400_000);

/// An arena replayed from its games (the games list, and the standings of
/// an arena whose totals are incomplete).
pub struct Loaded {
    /// Entrants and games.
    pub arena: Arena,
    /// The stored games with their matches' ends, oldest first (the core's
    /// game `i` is `games[i]`).
    pub games: Vec<TimedGame>,
}

/// Loads an arena: its entrants, its games and their matches' results.
/// Performance uses the entrants' tournament ratings (taken at joining and
/// again at the start), the only ratings stored per entrant.
///
/// # Errors
/// Database errors, or a stored arena the core refuses (a corrupt record).
pub fn load(conn: &mut DbConnection, row: &TournamentRow) -> Result<Loaded> {
    let entrants = store::entrant_rows(conn, &row.id)?;
    let games = store::games_timed(conn, &row.id)?;
    let rating: HashMap<&str, f64> = entrants
        .iter()
        .map(|e| (e.player_id.as_str(), e.rating))
        .collect();
    let rating_of = |id: &str| {
        rating
            .get(id)
            .copied()
            .unwrap_or(crate::rating::INITIAL.rating)
    };
    let core_games = games
        .iter()
        .map(|(g, end)| core::Game {
            x: g.x_player_id.clone(),
            o: g.o_player_id.clone(),
            x_rating: rating_of(&g.x_player_id),
            o_rating: rating_of(&g.o_player_id),
            x_berserk: g.x_berserk,
            o_berserk: g.o_berserk,
            finished: end.map(|(winner, at)| core::Finished {
                result: GameResult::from_winner(winner.map(|w| w.0)),
                at,
            }),
        })
        .collect();
    let arena = Arena::new(
        entrants.iter().map(core_entrant).collect(),
        core_games,
        row.ends_at.unwrap_or(Millis::MAX),
    )
    .map_err(|e| Error::Internal(format!("arena {}: {e}", row.id)))?;
    Ok(Loaded { arena, games })
}

/// Where a worker step on an arena spent its time (logged by the worker,
/// printed by `uttt bench arena`); phases a step did not run stay zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phases {
    /// Claiming the tournament row.
    pub claim: Duration,
    /// Recording the results of games that ended.
    pub record: Duration,
    /// Reading who is playing and the entrants' totals.
    pub load: Duration,
    /// Ranking, building the pool and pairing it (no I/O).
    pub plan: Duration,
    /// Writing the matches, their seats and the games.
    pub write: Duration,
    /// Everything else in the transaction: saving the row, the event view,
    /// the commit, and waiting for a connection.
    pub commit: Duration,
    /// Publishing the pairings and the tournament event after the commit.
    pub notify: Duration,
}

impl Phases {
    /// The sum of the phases.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.claim + self.record + self.load + self.plan + self.write + self.commit + self.notify
    }
}

/// Starts a locked arena: it runs until `now + duration_ms`, and the first
/// pass pairs the entrants at once.
///
/// # Errors
/// Store failures.
pub fn start(
    conn: &mut DbConnection,
    row: &mut TournamentRow,
    now: Millis,
    pairings: &mut Vec<PairingEvent>,
) -> Result<()> {
    let duration = row.duration_ms.unwrap_or(DURATION_MS.0);
    row.ends_at = Some(now.saturating_add(duration));
    pass(conn, row, now, pairings, &mut Phases::default())?;
    Ok(())
}

/// Ends a locked arena at its end time: no game starts from now on, and the
/// standings are final (games still running do not count).
fn finish(row: &mut TournamentRow, now: Millis) {
    row.status = Status::Finished.as_str().to_owned();
    row.finished_at = Some(now);
    row.next_at = None;
}

/// An entrant as the core sees it.
fn core_entrant(e: &EntrantRow) -> core::Entrant {
    core::Entrant {
        id: e.player_id.clone(),
        rating: e.rating,
        withdrawn: e.withdrawn,
    }
}

/// Rebuilds every entrant's totals of a locked arena from its games (an
/// arena that had games before the totals were kept). The entrants are
/// locked before the games are read: a game ending meanwhile either
/// committed before (and is read) or waits and adds itself after.
///
/// # Errors
/// Store failures; a corrupt record.
fn rebuild(conn: &mut DbConnection, row: &TournamentRow) -> Result<()> {
    store::lock_all_entrants(conn, &row.id)?;
    let loaded = load(conn, row)?;
    for (e, tally) in loaded.arena.entrants().iter().zip(loaded.arena.tallies()) {
        store::save_tally(conn, &row.id, &e.id, &tally_row(&tally))?;
    }
    Ok(())
}

/// An arena's standings now: from the entrants' totals, or replayed from
/// the games while those are incomplete.
///
/// # Errors
/// Store failures; a corrupt record.
pub fn standings(conn: &mut DbConnection, row: &TournamentRow) -> Result<Vec<Standing>> {
    if !row.tallied {
        return Ok(load(conn, row)?.arena.standings());
    }
    let lines = store::entrant_rows(conn, &row.id)?
        .iter()
        .map(|e| Ok((core_entrant(e), tally_of(&e.tally)?)))
        .collect::<Result<Vec<_>>>()?;
    core::standings_of(lines).map_err(|e| Error::Internal(format!("arena {}: {e}", row.id)))
}

/// One pairing pass on a locked, running arena at `now`: pairs the players
/// waiting in the pool and makes their matches, or finishes the arena at its
/// end time. Schedules the next pass. Returns whether the arena changed (a
/// new event version); the caller saves the row either way. Reads only the
/// arena's open games and its entrants' totals, never its finished games.
///
/// # Errors
/// Store failures.
pub fn pass(
    conn: &mut DbConnection,
    row: &mut TournamentRow,
    now: Millis,
    pairings: &mut Vec<PairingEvent>,
    phases: &mut Phases,
) -> Result<bool> {
    let ends_at = row.ends_at.unwrap_or(now);
    if now >= ends_at {
        finish(row, now);
        return Ok(true);
    }
    let started = Instant::now();
    if !row.tallied {
        rebuild(conn, row)?;
        row.tallied = true;
    }
    // Who is playing is read before the totals: a game that ends in between
    // keeps its players out of this pass instead of pairing them on totals
    // read without that game.
    let playing: HashSet<String> = store::open_games(conn, &row.id)?
        .into_iter()
        .flat_map(|(x, o)| [x, o])
        .collect();
    let entrants = store::entrant_rows(conn, &row.id)?;
    phases.load = started.elapsed();
    let started = Instant::now();
    // The pass happens after every result it read: a game that ended (and
    // committed) after the worker read the clock must not seem to overlap
    // the next game of its players.
    let now = entrants
        .iter()
        .filter_map(|e| e.tally.last_end_at)
        .fold(now, Millis::max);
    if now >= ends_at {
        finish(row, now);
        return Ok(true);
    }
    row.next_at = Some(now.saturating_add(PASS_EVERY_MS).min(ends_at));
    let mut waiting = Vec::new();
    let mut lines = Vec::with_capacity(entrants.len());
    for e in &entrants {
        if !e.withdrawn && !playing.contains(&e.player_id) {
            let since = [e.back_at, e.tally.last_end_at]
                .into_iter()
                .flatten()
                .fold(e.joined_at, Millis::max);
            waiting.push(Waiting {
                id: e.player_id.clone(),
                since,
            });
        }
        lines.push((core_entrant(e), tally_of(&e.tally)?));
    }
    if waiting.len() < 2 {
        return Ok(false);
    }
    let active_players = entrants.iter().filter(|e| !e.withdrawn).count();
    let refused = |e: core::ArenaError| Error::Internal(format!("arena {}: {e}", row.id));
    let standings = core::standings_of(lines).map_err(refused)?;
    let pool = core::pool_of(&standings, &waiting).map_err(refused)?;
    let pass = PoolPass {
        now,
        ends_at,
        active_players,
    };
    let pairs = core::pair_pool(&pool, &pass).map_err(refused)?;
    phases.plan = started.elapsed();
    if pairs.is_empty() {
        return Ok(false);
    }
    let started = Instant::now();
    let first_board = store::last_board(conn, &row.id, 0)?
        .unwrap_or(0)
        .saturating_add(1);
    let mut rows = Vec::with_capacity(pairs.len());
    let mut games = Vec::with_capacity(pairs.len());
    for (k, pair) in pairs.iter().enumerate() {
        let m = create::new_row(game_spec(row, &pair.x, &pair.o)?, now)?;
        let match_id = m.id.to_string();
        games.push(GameRow {
            match_id: match_id.clone(),
            tournament_id: row.id.clone(),
            // Arena games have no rounds; the board is the game's number.
            round: 0,
            board: first_board.saturating_add(i32::try_from(k).unwrap_or(i32::MAX)),
            x_player_id: pair.x.clone(),
            o_player_id: pair.o.clone(),
            result: None,
            created_at: now,
            x_berserk: false,
            o_berserk: false,
        });
        for (player, seat) in [(&pair.x, Seat::X), (&pair.o, Seat::O)] {
            pairings.push(PairingEvent {
                tournament_id: row.id.clone(),
                round: None,
                match_id: match_id.clone(),
                seat: seat_str(seat),
                player_id: player.clone(),
            });
        }
        rows.push(m);
    }
    let copying = Instant::now();
    match_store::insert_many(conn, &rows)?;
    let matches_done = copying.elapsed();
    store::insert_games(conn, &games)?;
    tracing::debug!(
        tournament.id = %row.id,
        matches_and_seats_ms = matches_done.as_secs_f64() * 1000.0,
        games_ms = (copying.elapsed() - matches_done).as_secs_f64() * 1000.0,
        "arena pass writes"
    );
    if let Some(ladder) = &row.ladder {
        let rating_rows: Vec<_> = pairs
            .iter()
            .flat_map(|p| [&p.x, &p.o])
            .map(|player| ladders::initial_row(player, ladder, now))
            .collect();
        ratings::insert_missing(conn, &rating_rows)?;
    }
    phases.write = started.elapsed();
    Ok(true)
}

/// Goes berserk in an arena game (API.md `POST /tournaments/{id}/berserk`):
/// halves the player's own clock before their first move; a berserk win
/// scores a point more.
///
/// # Errors
/// `not_found` (no such tournament, or the match is not one of its games);
/// `forbidden` (not seated in it); `match_over`; `berserk_not_allowed` (not
/// an arena, not running, no clock, already moved or already berserk).
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn berserk(
    ctx: &Context,
    player: &Player,
    tournament_id: &str,
    match_id: &str,
) -> Result<MatchState> {
    let (tid, mid, me) = (
        tournament_id.to_owned(),
        match_id.to_owned(),
        player.id.clone(),
    );
    let now = ctx.time.now_ms();
    let snap = ctx
        .db
        .write(move |conn| {
            let t = store::get(conn, &tid)?.ok_or(Error::NotFound("tournament"))?;
            let game = store::game(conn, &mid)?
                .filter(|g| g.tournament_id == t.id)
                .ok_or(Error::NotFound("match"))?;
            let mut m = match_store::lock(conn, &mid)?.ok_or(Error::NotFound("match"))?;
            let seat = m
                .seat_of(&me)
                .ok_or(Error::Forbidden("you are not seated in this match"))?;
            if Kind::parse(&t.kind) != Some(Kind::Arena) {
                return Err(not_allowed("berserk is for arena tournaments"));
            }
            if !m.is_active() {
                return Err(Error::MatchOver("the match is over"));
            }
            if Status::of(&t) != Status::Running {
                return Err(not_allowed("the arena is not running"));
            }
            // X moves at plies 0, 2, …; O at 1, 3, …
            let has_moved = m.ply > i32::from(seat == Seat::O);
            let already = match seat {
                Seat::X => game.x_berserk,
                Seat::O => game.o_berserk,
            };
            // The clock as it shows now: running if it is their turn (whose
            // start, a move committed since `now` was read, may be later).
            let tc = m.time_control()?;
            let running = m.to_move_seat() == Some(seat);
            let now = now.max(m.turn_started_at);
            let left = if running {
                tc.left_to_move(m.turn_started_at, m.bank(seat), now)
            } else {
                tc.left_waiting(m.bank(seat))
            };
            if running && left == Some(0) {
                // The clock worker ends the match on time.
                return Err(Error::MatchOver("your time ran out"));
            }
            let left = core::berserk_left(&tc, left, has_moved, already)
                .map_err(|e| not_allowed(&e.to_string()))?;
            // A running clock's bank counts from its turn's start.
            let bank = if running {
                left + (now - m.turn_started_at).max(0)
            } else {
                left
            };
            match seat {
                Seat::X => m.x_bank_ms = Some(bank),
                Seat::O => m.o_bank_ms = Some(bank),
            }
            m.refresh_derived()?;
            m.version += 1;
            match_store::save(conn, &m)?;
            store::set_berserk(conn, &mid, seat == Seat::X)?;
            play::snapshot(conn, m)
        })
        .await?;
    let state = matches::publish(ctx, &snap).await?;
    tracing::info!(match.id = %match_id, tournament.id = %tournament_id, "berserk");
    Ok(state)
}

/// The 409 `berserk_not_allowed`.
fn not_allowed(detail: &str) -> Error {
    Error::conflict(ConflictCode::BerserkNotAllowed, detail.to_owned(), None)
}

/// Both seats' share of something in one game.
#[derive(Debug, Clone, Copy, Serialize, ToSchema, PartialEq, Eq)]
pub struct BySeat<T> {
    /// X's.
    pub x: T,
    /// O's.
    pub o: T,
}

/// One arena game (API.md `GET /tournaments/{id}/games`).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct GameView {
    /// The match.
    pub match_id: String,
    /// The player seated X.
    pub x: PlayerRef,
    /// The player seated O.
    pub o: PlayerRef,
    /// `x`, `o`, `draw`, or `null` while being played.
    pub result: Option<String>,
    /// When it was paired.
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Who went berserk.
    #[schema(value_type = BySeat<bool>)]
    pub berserk: BySeat<bool>,
    /// Arena points the game scored each player (`null`: being played, ended
    /// after the arena's end, or a Swiss game).
    #[schema(value_type = BySeat<Option<u32>>)]
    pub points: BySeat<Option<u32>>,
}

/// Every game of a tournament, oldest first, with what each scored.
///
/// # Errors
/// Store failures; a corrupt record.
pub fn games_of(conn: &mut DbConnection, row: &TournamentRow) -> Result<Vec<GameView>> {
    let names = Roster::of(conn, &row.id)?;
    let (games, points) = if Kind::parse(&row.kind) == Some(Kind::Arena) {
        let loaded = load(conn, row)?;
        let mut points = vec![BySeat { x: None, o: None }; loaded.games.len()];
        for gp in loaded.arena.game_points() {
            points[gp.game] = BySeat { x: gp.x, o: gp.o };
        }
        (loaded.games, points)
    } else {
        let games = store::games_timed(conn, &row.id)?;
        let n = games.len();
        (games, vec![BySeat { x: None, o: None }; n])
    };
    Ok(games
        .into_iter()
        .zip(points)
        .map(|((g, end), points)| GameView {
            match_id: g.match_id.clone(),
            x: names.named(&g.x_player_id),
            o: names.named(&g.o_player_id),
            result: end.map(|(w, _)| w.map_or("draw", |s| s.as_str()).to_owned()),
            started_at: rfc3339(g.created_at),
            ended_at: end.map(|(_, at)| rfc3339(at)),
            berserk: BySeat {
                x: g.x_berserk,
                o: g.o_berserk,
            },
            points,
        })
        .collect())
}
