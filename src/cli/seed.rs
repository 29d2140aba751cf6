//! `uttt admin seed --matches N`: fills the configured database with
//! synthetic finished matches (real random games, replayable), for measuring
//! the admin history queries at scale. Rows are written in large batches.
//! Once every match is written, the rated ones are applied to their
//! ladders' ratings in the order they ended, as the server would have
//! (deviations growing between games), so `uttt admin recompute-ratings`
//! finds a seeded database consistent.

use std::io::Write;
use std::time::Instant;

use diesel::{Connection, ExpressionMethods, RunQueryDsl};

use crate::cpu::Rng;
use crate::rating::Score;
use crate::rating::ledger::Ledger;
use crate::rules::{Depth, MoveList, Position, Seat, Status};
use crate::service::matches::create::{self, NewMatch, SeatSpec};
use crate::service::matches::record::{EndReason, MatchStatus, Mode, StoredSeat, seat_str};
use crate::store::matches::{MatchRow, MoveRow};
use crate::store::players::PlayerRow;
use crate::store::ratings::{RatingChangeRow, RatingRow};
use crate::store::schema::{match_players, matches, moves, players, rating_changes, ratings};
use crate::store::{Db, DbConnection};

/// Arguments of `uttt admin seed`.
#[derive(Debug, clap::Args)]
pub struct SeedArgs {
    /// Matches to add.
    #[arg(long)]
    pub matches: u64,
    /// Players to spread them over (default: one per 1,000 matches, at least 50).
    #[arg(long)]
    pub players: Option<u64>,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Matches per transaction.
    #[arg(long, default_value_t = 2000)]
    pub batch: usize,
}

const DAY_MS: i64 = 24 * 3600 * 1000;
/// Bound parameters per INSERT stay under PostgreSQL's limit of 65,535.
const MAX_PARAMS: usize = 60_000;

struct Batch {
    matches: Vec<MatchRow>,
    /// `(match, seat, player, created_at, mode)` of every seated player (all finished).
    seats: Vec<(String, &'static str, String, i64, String)>,
    moves: Vec<MoveRow>,
}

/// A rated result waiting for its ladder's replay: match, ladder, X, O, X's score, end.
type RatedResult = (String, String, String, String, Score, i64);

fn insert_chunked<T, F>(rows: &[T], columns: usize, mut insert: F) -> diesel::QueryResult<()>
where
    F: FnMut(&[T]) -> diesel::QueryResult<usize>,
{
    for chunk in rows.chunks((MAX_PARAMS / columns).max(1)) {
        insert(chunk)?;
    }
    Ok(())
}

fn write(conn: &mut DbConnection, batch: &Batch) -> anyhow::Result<()> {
    macro_rules! bulk {
        ($c:expr) => {
            $c.transaction(|c| {
                insert_chunked(&batch.matches, 30, |rows| {
                    diesel::insert_into(matches::table).values(rows).execute(c)
                })?;
                insert_chunked(&batch.seats, 5, |rows| {
                    let values: Vec<_> = rows
                        .iter()
                        .map(|(m, seat, p, at, mode)| {
                            (
                                match_players::match_id.eq(m),
                                match_players::seat.eq(*seat),
                                match_players::player_id.eq(p),
                                match_players::created_at.eq(*at),
                                match_players::mode.eq(mode),
                            )
                        })
                        .collect();
                    diesel::insert_into(match_players::table)
                        .values(&values)
                        .execute(c)
                })?;
                insert_chunked(&batch.moves, 7, |rows| {
                    diesel::insert_into(moves::table).values(rows).execute(c)
                })
            })
        };
    }
    match conn {
        DbConnection::Pg(pg) => bulk!(pg)?,
        DbConnection::Sqlite(lite) => bulk!(lite)?,
    }
    Ok(())
}

/// Applies the rated results to their ladders in the order they ended and
/// writes every rating change and the resulting rating rows.
fn write_ratings(
    conn: &mut DbConnection,
    mut results: Vec<RatedResult>,
    growth: crate::rating::Growth,
) -> anyhow::Result<usize> {
    results.sort_by(|a, b| (a.5, &a.0).cmp(&(b.5, &b.0)));
    let mut ledgers: std::collections::BTreeMap<String, Ledger> = Default::default();
    let mut changes = Vec::with_capacity(2 * results.len());
    for (id, ladder, x, o, x_score, at) in &results {
        let ledger = ledgers
            .entry(ladder.clone())
            .or_insert_with(|| Ledger::new(growth));
        let game = ledger.play(x, o, *x_score, *at);
        for (seat, player, score, before, after) in [
            ("x", x, *x_score, game.x_before, game.x_after),
            ("o", o, x_score.opposite(), game.o_before, game.o_after),
        ] {
            changes.push(RatingChangeRow {
                match_id: id.clone(),
                seat: seat.into(),
                player_id: player.clone(),
                ladder: ladder.clone(),
                score: score.value(),
                rating_before: before.rating,
                rating_after: after.rating,
                deviation_before: before.deviation,
                deviation_after: after.deviation,
                volatility_before: before.volatility,
                volatility_after: after.volatility,
                created_at: *at,
            });
        }
    }
    let mut rows = Vec::new();
    for (ladder, ledger) in &ledgers {
        for (player, entry) in ledger.entries() {
            let mut row = crate::service::ladders::initial_row(player, ladder, 0);
            crate::service::ladders::restate(
                &mut row,
                entry.standing.rating,
                entry.standing.rated_at.unwrap_or(0),
                growth,
            );
            let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
            (row.games, row.wins, row.losses, row.draws) = (
                count(entry.games),
                count(entry.wins),
                count(entry.losses),
                count(entry.draws),
            );
            rows.push(row);
        }
    }
    macro_rules! bulk {
        ($c:expr) => {
            $c.transaction(|c| {
                insert_chunked(&changes, 12, |chunk| {
                    diesel::insert_into(rating_changes::table)
                        .values(chunk)
                        .execute(c)
                })?;
                insert_chunked(&rows, 15, |chunk: &[RatingRow]| {
                    diesel::insert_into(ratings::table).values(chunk).execute(c)
                })
            })
        };
    }
    match conn {
        DbConnection::Pg(pg) => bulk!(pg)?,
        DbConnection::Sqlite(lite) => bulk!(lite)?,
    }
    Ok(rows.len())
}

/// Plays a random game; returns the moves and how it ended.
fn random_game(depth: Depth, rng: &mut Rng) -> (Vec<crate::rules::Square>, Status) {
    let mut position = Position::new(depth);
    let mut list = MoveList::new(depth);
    let mut played = Vec::new();
    while position.status() == Status::Ongoing {
        position.legal_moves(&mut list);
        let square = list.as_slice()[rng.below(list.len())];
        if position.play_square(square).is_err() {
            break;
        }
        played.push(square);
    }
    (played, position.status())
}

/// Runs the command.
///
/// # Errors
/// The database cannot be reached or written.
pub fn run(
    db: &Db,
    ladders: &[crate::config::LadderConfig],
    growth: crate::rating::Growth,
    args: &SeedArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut rng = Rng::new(args.seed);
    let player_count = args.players.unwrap_or((args.matches / 1000).max(50)) as usize;
    let mut conn = db.get()?;
    let now = chrono::Utc::now().timestamp_millis();
    let tag = crate::ids::record_id()[..6].to_lowercase();
    let player_ids: Vec<String> = (0..player_count).map(|_| crate::ids::player_id()).collect();
    let player_rows: Vec<PlayerRow> = player_ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let name = format!("seed_{tag}_{i}");
            PlayerRow {
                id: id.clone(),
                username_key: name.clone(),
                username: name,
                password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWQ$unusable".into(),
                role: "player".into(),
                bot: false,
                accept_bot_challenges: true,
                created_at: now - 400 * DAY_MS,
            }
        })
        .collect();
    match &mut *conn {
        DbConnection::Pg(pg) => insert_chunked(&player_rows, 8, |r| {
            diesel::insert_into(players::table).values(r).execute(pg)
        })?,
        DbConnection::Sqlite(lite) => insert_chunked(&player_rows, 8, |r| {
            diesel::insert_into(players::table).values(r).execute(lite)
        })?,
    }
    writeln!(out, "{player_count} players")?;
    let mut done: u64 = 0;
    let mut rated: Vec<RatedResult> = Vec::new();
    while done < args.matches {
        let n = (args.matches - done).min(args.batch as u64);
        let mut batch = Batch {
            matches: Vec::with_capacity(n as usize),
            seats: Vec::with_capacity(2 * n as usize),
            moves: Vec::new(),
        };
        for _ in 0..n {
            let kind = rng.below(100);
            let (mode, ladder) = if kind < 60 {
                (Mode::Ranked, Some(&ladders[rng.below(ladders.len())]))
            } else if kind < 85 {
                (Mode::Casual, None)
            } else {
                (Mode::Practice, None)
            };
            let depth =
                Depth::new(ladder.map_or(if rng.below(10) == 0 { 1 } else { 2 }, |l| l.depth))?;
            let tc = ladder.map_or(crate::clock::TimeControl::TOURNAMENT, |l| l.time_control);
            let xi = rng.below(player_count);
            let oi = (xi + 1 + rng.below(player_count - 1)) % player_count;
            let (x, o) = (player_ids[xi].clone(), player_ids[oi].clone());
            let practice = mode == Mode::Practice;
            let created_at = now - i64::try_from(rng.below(365 * DAY_MS as usize)).unwrap_or(0);
            let spec = NewMatch {
                mode,
                ladder: ladder.map(|l| l.id.clone()),
                rated: ladder.is_some_and(|l| l.rated),
                depth,
                time_control: tc,
                x: SeatSpec::player(&x),
                o: if practice {
                    SeatSpec::cpu()
                } else {
                    SeatSpec::player(&o)
                },
                cpu_level: practice.then_some(3),
                room_code: None,
            };
            let mut row = create::new_row(spec, created_at)?;
            let (mut played, status) = random_game(depth, &mut rng);
            let early = rng.below(100);
            // About 30% of matches end early, on time or by resignation.
            let (winner, reason) = if early < 30 && played.len() > 4 {
                let cut = 2 + rng.below(played.len() - 3);
                played.truncate(cut);
                let mover = Seat::to_move_at(u32::try_from(cut).unwrap_or(0));
                if early < 15 {
                    (Some(mover.other()), EndReason::Timeout)
                } else {
                    let quitter = if rng.below(2) == 0 { Seat::X } else { Seat::O };
                    (Some(quitter.other()), EndReason::Resignation)
                }
            } else {
                match status {
                    Status::Won(w) => (Some(w), EndReason::ThreeInARow),
                    _ => (None, EndReason::Draw),
                }
            };
            for (ply, square) in played.iter().enumerate() {
                let seat = Seat::to_move_at(u32::try_from(ply).unwrap_or(0));
                batch.moves.push(MoveRow {
                    match_id: row.id.to_string(),
                    ply: i32::try_from(ply).unwrap_or(0),
                    seat: seat_str(seat).to_owned(),
                    square: i32::try_from(square.index()).unwrap_or(0),
                    played_at: created_at + 5_000 * (ply as i64 + 1),
                    clock_ms: Some(600_000 - 2_500 * (ply as i64 + 1)),
                    by_cpu: practice && seat == Seat::O,
                });
            }
            row.position = crate::rules::encode(depth, &played);
            row.ply = i32::try_from(played.len()).unwrap_or(0);
            row.status = MatchStatus::Finished;
            row.to_move = None;
            row.deadline_at = None;
            row.awaiting_cpu = false;
            row.winner = winner.map(StoredSeat);
            row.reason = Some(reason);
            row.finished_at = Some(created_at + 5_000 * (played.len() as i64 + 1));
            row.version = row.ply + 2;
            if row.rated {
                let x_score = match winner {
                    Some(Seat::X) => Score::Win,
                    Some(Seat::O) => Score::Loss,
                    None => Score::Draw,
                };
                rated.push((
                    row.id.to_string(),
                    row.ladder.clone().unwrap_or_default(),
                    x.clone(),
                    o.clone(),
                    x_score,
                    row.finished_at.unwrap_or(created_at),
                ));
            }
            for (seat, player) in [("x", &row.x_player_id), ("o", &row.o_player_id)] {
                if let Some(player) = player {
                    batch.seats.push((
                        row.id.to_string(),
                        seat,
                        player.to_string(),
                        row.created_at,
                        row.mode.as_str().to_owned(),
                    ));
                }
            }
            batch.matches.push(row);
        }
        write(&mut conn, &batch)?;
        done += n;
        if done % 50_000 < n || done == args.matches {
            writeln!(
                out,
                "{done} matches ({:.0} s)",
                started.elapsed().as_secs_f64()
            )?;
        }
    }
    let rated_count = rated.len();
    let rating_rows = write_ratings(&mut conn, rated, growth)?;
    writeln!(
        out,
        "{rated_count} rated results applied: {rating_rows} ratings ({:.0} s)",
        started.elapsed().as_secs_f64()
    )?;
    writeln!(
        out,
        "seeded {} matches in {:.1} s",
        args.matches,
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}
