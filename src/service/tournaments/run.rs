//! Running a tournament: starting it, pairing each Swiss round (all its
//! matches in the transaction that records the pairing) or each arena pass
//! (see [`super::arena`]), recording results as matches end, and finishing
//! after the last round or at the arena's end time. The tournament
//! worker calls [`tick`]; the director's start calls [`start_locked`].
//!
//! Every step runs in one write transaction on the tournament row, claimed
//! with `FOR UPDATE SKIP LOCKED` on PostgreSQL (SQLite has one writer), and
//! re-checks the state it acts on; the primary key of `tournament_rounds`
//! refuses a second pairing of a round whatever happens. So any number of
//! instances may run the worker, and one killed mid-way leaves either the
//! whole step or none of it.

use std::time::{Duration, Instant};

use crate::config::LadderConfig;
use crate::rating::Growth;
use crate::rules::Seat;
use crate::store::DbConnection;
use crate::store::tournaments::{self as store, GameRow, RoundRow, TournamentRow};
use crate::time::Millis;
use crate::tournament::GameResult;
use crate::tournament::swiss::{self, Swiss};

use super::super::matches::create;
use super::super::matches::play::{self, Snapshot};
use super::super::matches::record::seat_str;
use super::super::{Context, Error, Result, ladders, matches};
use super::feed::{self, PairingEvent};
use super::{Kind, Status, TournamentView, arena, current_rating, game_spec, rating_ladder, view};

/// Tournaments handled per worker pass.
const BATCH: i64 = 50;

/// What a committed step changed, to publish after the commit.
#[derive(Default)]
pub struct Changed {
    /// The tournament after the step (`None`: nothing changed).
    pub view: Option<TournamentView>,
    /// New matches.
    pub matches: Vec<Snapshot>,
    /// Who was paired where.
    pub pairings: Vec<PairingEvent>,
    /// Where the step spent its time (the notify phase: [`run_step_timed`]).
    pub phases: arena::Phases,
}

impl Changed {
    /// Publishes the matches, the players' pairings and the tournament.
    pub async fn publish(self, ctx: &Context) -> Result<Option<TournamentView>> {
        for snap in &self.matches {
            matches::publish(ctx, snap).await?;
        }
        feed::notify_pairings(ctx, &self.pairings).await;
        if let Some(view) = &self.view {
            feed::publish(ctx, view).await;
        }
        Ok(self.view)
    }
}

/// A stored result as the pairing core reads it.
fn game_result(text: Option<&str>) -> Option<GameResult> {
    match text? {
        "x" => Some(GameResult::Win(Seat::X)),
        "o" => Some(GameResult::Win(Seat::O)),
        _ => Some(GameResult::Draw),
    }
}

/// The tournament as the pairing core sees it: entrants and rounds so far,
/// with the results recorded by the worker (the pairing's view), or with
/// `live` the results of every match that has ended (the standings' view).
///
/// # Errors
/// Database errors, or stored rounds the core refuses (a corrupt record).
pub fn load_swiss(conn: &mut DbConnection, tournament_id: &str, live: bool) -> Result<Swiss> {
    let entrants = store::entrants(conn, tournament_id)?
        .into_iter()
        .map(|(e, ..)| swiss::Entrant {
            id: e.player_id,
            rating: e.rating,
            withdrawn: e.withdrawn,
        })
        .collect();
    let games = if live {
        store::games_live(conn, tournament_id)?
            .into_iter()
            .map(|(mut g, outcome)| {
                if let Some(winner) = outcome {
                    g.result = Some(winner.map_or("draw", |w| w.as_str()).to_owned());
                }
                g
            })
            .collect()
    } else {
        store::games(conn, tournament_id)?
    };
    let rounds = rounds_of(&store::rounds(conn, tournament_id)?, &games);
    Swiss::new(entrants, rounds)
        .map_err(|e| Error::Internal(format!("tournament {tournament_id}: {e}")))
}

/// The rounds in the core's form.
fn rounds_of(rounds: &[RoundRow], games: &[GameRow]) -> Vec<swiss::Round> {
    rounds
        .iter()
        .map(|r| swiss::Round {
            games: games
                .iter()
                .filter(|g| g.round == r.round)
                .map(|g| swiss::Game {
                    x: g.x_player_id.clone(),
                    o: g.o_player_id.clone(),
                    result: game_result(g.result.as_deref()),
                })
                .collect(),
            bye: r.bye_player_id.clone(),
        })
        .collect()
}

/// What a step needs from the configuration.
#[derive(Clone)]
pub struct Settings {
    /// The configured ladders.
    pub ladders: Vec<LadderConfig>,
    /// How rating deviations grow.
    pub growth: Growth,
}

impl Settings {
    /// The settings of an instance.
    pub fn of(ctx: &Context) -> Settings {
        Settings {
            ladders: ctx.config.ladders.clone(),
            growth: ctx.config.rating_growth,
        }
    }
}

/// Pairs the next round of a locked, running tournament and makes its
/// matches: ordinary matches with the tournament's clock, rated on its
/// ladder when it is rated.
fn pair_next(
    conn: &mut DbConnection,
    row: &mut TournamentRow,
    now: Millis,
    changed: &mut Changed,
) -> Result<()> {
    let swiss = load_swiss(conn, &row.id, false)?;
    let pairing = swiss
        .pair_next_round()
        .map_err(|e| Error::Internal(format!("tournament {}: {e}", row.id)))?;
    let round = i32::try_from(pairing.round).map_err(|_| Error::Internal("round".into()))?;
    store::insert_round(
        conn,
        &RoundRow {
            tournament_id: row.id.clone(),
            round,
            bye_player_id: pairing.bye.clone(),
            paired_at: now,
        },
    )?;
    for board in &pairing.boards {
        let mut m = create::new_row(game_spec(row, &board.x, &board.o)?, now)?;
        create::insert_new(conn, &mut m)?;
        if let Some(ladder) = &row.ladder {
            for player in [&board.x, &board.o] {
                ladders::ensure(conn, player, ladder, now)?;
            }
        }
        store::insert_game(
            conn,
            &GameRow {
                match_id: m.id.to_string(),
                tournament_id: row.id.clone(),
                round,
                board: i32::try_from(board.number).unwrap_or(i32::MAX),
                x_player_id: board.x.clone(),
                o_player_id: board.o.clone(),
                result: None,
                created_at: now,
                x_berserk: false,
                o_berserk: false,
            },
        )?;
        for (player, seat) in [(&board.x, Seat::X), (&board.o, Seat::O)] {
            changed.pairings.push(PairingEvent {
                tournament_id: row.id.clone(),
                round: Some(pairing.round),
                match_id: m.id.to_string(),
                seat: seat_str(seat),
                player_id: player.clone(),
            });
        }
        changed.matches.push(play::snapshot(conn, m)?);
    }
    row.round = round;
    row.next_at = None;
    Ok(())
}

/// Whether a tournament is an arena (else a Swiss).
fn is_arena(row: &TournamentRow) -> bool {
    Kind::parse(&row.kind) == Some(Kind::Arena)
}

/// How many entrants are still playing.
fn active_players(swiss: &Swiss) -> usize {
    swiss.entrants().iter().filter(|e| !e.withdrawn).count()
}

/// Ends a tournament: final standings from here on (every game has ended).
fn finish(row: &mut TournamentRow, now: Millis) {
    row.status = Status::Finished.as_str().to_owned();
    row.finished_at = Some(now);
    row.ends_at = Some(now);
    row.next_at = None;
}

/// Starts a locked tournament that is registering: entrants' ratings are
/// taken again, and round 1 is paired with all its matches. The caller has
/// checked there are two players.
///
/// # Errors
/// Store failures.
pub fn start_locked(
    conn: &mut DbConnection,
    row: &mut TournamentRow,
    settings: &Settings,
    now: Millis,
) -> Result<Changed> {
    let ladder = rating_ladder(&settings.ladders, row).cloned();
    for (entrant, ..) in store::entrants(conn, &row.id)? {
        let rating = current_rating(
            conn,
            &entrant.player_id,
            ladder.as_ref(),
            settings.growth,
            now,
        )?;
        store::set_rating(conn, &row.id, &entrant.player_id, rating)?;
    }
    row.status = Status::Running.as_str().to_owned();
    row.starts_at = Some(now);
    row.sort_at = now;
    let mut changed = Changed::default();
    if is_arena(row) {
        arena::start(conn, row, now, &mut changed.pairings)?;
    } else {
        pair_next(conn, row, now, &mut changed)?;
    }
    row.version += 1;
    store::save(conn, row)?;
    changed.view = Some(view(conn, row)?);
    Ok(changed)
}

/// Records the results of a locked tournament's games whose matches ended;
/// when that completes the round, schedules the next pairing after the
/// pause, or finishes after the last round. Returns whether anything changed.
fn record_results(conn: &mut DbConnection, row: &mut TournamentRow, now: Millis) -> Result<bool> {
    let ended = store::ended_unrecorded(conn, &row.id)?;
    if ended.is_empty() {
        return Ok(false);
    }
    // One statement per result (an arena pass may find a thousand ended games).
    for result in ["x", "o", "draw"] {
        let ids: Vec<&str> = ended
            .iter()
            .filter(|(_, winner)| winner.map_or("draw", |w| w.as_str()) == result)
            .map(|(id, _)| id.as_str())
            .collect();
        store::record_results(conn, &ids, result)?;
    }
    // An arena's pool is paired by its passes, whatever ended.
    if Status::of(row) == Status::Running && row.next_at.is_none() && !is_arena(row) {
        let games = store::games(conn, &row.id)?;
        let round_over = games
            .iter()
            .filter(|g| g.round == row.round)
            .all(|g| g.result.is_some());
        if round_over {
            if row.round >= row.rounds.unwrap_or(0) {
                finish(row, now);
            } else {
                row.next_at = Some(now.saturating_add(row.round_pause_ms));
            }
        }
    }
    Ok(true)
}

/// Does what is due on one tournament (claimed, skipped when another
/// instance holds it): record results, then start it or pair its next
/// round when their time has come.
fn step(conn: &mut DbConnection, id: &str, settings: &Settings, now: Millis) -> Result<Changed> {
    let started = Instant::now();
    let Some(mut row) = store::claim(conn, id)? else {
        return Ok(Changed::default());
    };
    let claim = started.elapsed();
    let started = Instant::now();
    let mut dirty = record_results(conn, &mut row, now)?;
    let mut changed = Changed::default();
    changed.phases.claim = claim;
    changed.phases.record = started.elapsed();
    let due = row.next_at.is_some_and(|at| at <= now);
    match Status::of(&row) {
        Status::Registering if due => {
            if row.players < 2 {
                // Nobody to play: called off rather than left waiting forever.
                row.status = Status::Cancelled.as_str().to_owned();
                row.finished_at = Some(now);
                row.next_at = None;
                dirty = true;
            } else {
                return start_locked(conn, &mut row, settings, now);
            }
        }
        Status::Running if due && is_arena(&row) => {
            dirty |= arena::pass(
                conn,
                &mut row,
                now,
                &mut changed.pairings,
                &mut changed.phases,
            )?;
            if !dirty {
                // Only the next pass's time moved: no new event version.
                store::save(conn, &row)?;
            }
        }
        Status::Running if due => {
            let swiss = load_swiss(conn, &row.id, false)?;
            if active_players(&swiss) < 2 || row.round >= row.rounds.unwrap_or(0) {
                finish(&mut row, now);
            } else {
                pair_next(conn, &mut row, now, &mut changed)?;
            }
            dirty = true;
        }
        _ => {}
    }
    if dirty {
        row.version += 1;
        store::save(conn, &row)?;
        changed.view = Some(view(conn, &row)?);
    }
    Ok(changed)
}

/// One pass of the tournament worker: every tournament with an ended game
/// not yet recorded, or a start or pairing due; returns how many changed.
///
/// # Errors
/// Store or broker failures (the other tournaments still run).
pub async fn tick(ctx: &Context) -> Result<usize> {
    let now = ctx.time.now_ms();
    let mut ids = ctx
        .db
        .run(move |conn| -> Result<Vec<String>> {
            let mut ids = store::with_unrecorded_results(conn, BATCH)?;
            ids.extend(store::due(conn, now, BATCH)?);
            Ok(ids)
        })
        .await?;
    ids.sort();
    ids.dedup();
    let settings = Settings::of(ctx);
    let mut done = 0;
    let mut first_error = None;
    for id in ids {
        match run_step(ctx, id, settings.clone(), now).await {
            Ok(Some(_)) => done += 1,
            Ok(None) => {}
            Err(err) => {
                first_error.get_or_insert(err);
            }
        }
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(done),
    }
}

/// Does what is due on one tournament at `now` (see [`tick`]) in one write
/// transaction, then publishes what changed: the worker's unit of work.
/// Returns the tournament when it changed.
///
/// # Errors
/// Store or broker failures.
pub async fn run_step(
    ctx: &Context,
    id: String,
    settings: Settings,
    now: Millis,
) -> Result<Option<TournamentView>> {
    Ok(run_step_timed(ctx, id, settings, now).await?.0)
}

/// An arena pass slower than this is logged at `info` (the others at `debug`).
const SLOW_PASS: Duration = Duration::from_millis(100);

/// [`run_step`], with where the step spent its time (what `uttt bench
/// arena` prints); an arena pass's phases are logged.
///
/// # Errors
/// Store or broker failures.
pub async fn run_step_timed(
    ctx: &Context,
    id: String,
    settings: Settings,
    now: Millis,
) -> Result<(Option<TournamentView>, arena::Phases)> {
    let started = Instant::now();
    let step_id = id.clone();
    let mut changed = ctx
        .db
        .write(move |conn| step(conn, &step_id, &settings, now))
        .await?;
    let p = &mut changed.phases;
    p.commit = started
        .elapsed()
        .saturating_sub(p.claim + p.record + p.load + p.plan + p.write);
    let mut phases = *p;
    // Arena pairings are the ones without a round.
    let arena_games = changed
        .pairings
        .iter()
        .filter(|p| p.round.is_none())
        .count()
        / 2;
    let started = Instant::now();
    let view = changed.publish(ctx).await?;
    phases.notify = started.elapsed();
    if arena_games > 0 {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        macro_rules! log_pass {
            ($level:ident) => {
                tracing::$level!(
                    tournament.id = %id,
                    games = arena_games,
                    claim_ms = ms(phases.claim),
                    record_ms = ms(phases.record),
                    load_ms = ms(phases.load),
                    plan_ms = ms(phases.plan),
                    write_ms = ms(phases.write),
                    commit_ms = ms(phases.commit),
                    notify_ms = ms(phases.notify),
                    "arena pass"
                )
            };
        }
        if phases.total() > SLOW_PASS {
            log_pass!(info);
        } else {
            log_pass!(debug);
        }
    }
    Ok((view, phases))
}
