//! `uttt bench arena --players N`: an arena of N players, all waiting in its
//! pool, and the time of one pairing pass as the tournament worker runs it
//! (claim the arena, record the results of the games that ended, read who
//! is playing and the entrants' totals, pair the pool, write every match and
//! game, commit, tell every player), phase by phase. Between passes every game
//! just made is ended with a random result, so later passes pair a pool with
//! history (ranks, streaks, the no-rematch rule), and their results are
//! recorded by a worker step before the next pass is due, as the worker
//! does when woken by each game's end (timed apart). Uses `DATABASE_URL` and
//! `REDIS_URL` as the server does.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use crate::clock::TimeControl;
use crate::config::Config;
use crate::cpu::Rng;
use crate::rules::Seat;
use crate::service::matches::play;
use crate::service::matches::record::{EndReason, time_control_columns};
use crate::service::tournaments::arena;
use crate::service::tournaments::run::{self, Settings};
use crate::store::tournaments::{self as store, EntrantRow, TallyRow, TournamentRow};
use crate::time::SystemTime;

/// Arguments of `uttt bench arena`.
#[derive(Debug, clap::Args)]
pub struct ArenaBenchArgs {
    /// Players in the arena (all waiting in the pool at the first pass).
    #[arg(long, default_value_t = 2_000)]
    pub players: usize,
    /// Passes to time (each after the previous pass's games ended).
    #[arg(long, default_value_t = 5)]
    pub passes: usize,
}

/// Runs the benchmark.
///
/// # Errors
/// The database or broker cannot be reached.
pub async fn run(
    config: Config,
    args: &ArenaBenchArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let ctx = crate::server::context(config, Arc::new(SystemTime)).await?;
    let tag = crate::ids::record_id()[..6].to_lowercase();
    let now = ctx.time.now_ms();
    let mut rng = Rng::new(21);
    let players: Vec<(String, String, f64)> = (0..args.players)
        .map(|i| {
            (
                crate::ids::player_id(),
                format!("ab_{tag}_{i}"),
                800.0 + rng.below(1400) as f64,
            )
        })
        .collect();
    let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) =
        time_control_columns(TimeControl::TOURNAMENT);
    let tournament = TournamentRow {
        id: crate::ids::record_id(),
        name: format!("bench arena {tag}"),
        kind: "arena".into(),
        status: "running".into(),
        director_id: players
            .first()
            .map(|p| p.0.clone())
            .ok_or_else(|| anyhow::anyhow!("--players must be at least 1"))?,
        depth: 2,
        tc_kind,
        tc_initial_ms,
        tc_increment_ms,
        tc_turn_ms,
        ladder: None,
        rated: false,
        rounds: None,
        round: 0,
        round_pause_ms: 0,
        duration_ms: Some(86_400_000),
        starts_at: Some(now),
        ends_at: Some(now + 86_400_000),
        next_at: Some(now),
        max_players: None,
        entry_code: None,
        min_rating: None,
        players: i32::try_from(args.players)?,
        version: 1,
        sort_at: now,
        created_at: now,
        finished_at: None,
        tallied: true,
    };
    let id = tournament.id.clone();
    let setup = Instant::now();
    let all = players.clone();
    ctx.db
        .write(move |conn| -> Result<(), crate::store::StoreError> {
            for (pid, name, _) in &all {
                super::insert_bench_player(conn, pid, name, now)?;
            }
            store::insert(conn, &tournament)?;
            for (pid, _, rating) in &all {
                store::add_entrant(
                    conn,
                    &EntrantRow {
                        tournament_id: tournament.id.clone(),
                        player_id: pid.clone(),
                        rating: *rating,
                        withdrawn: false,
                        joined_at: now,
                        back_at: None,
                        removed: false,
                        tally: TallyRow::default(),
                    },
                )?;
            }
            Ok(())
        })
        .await?;
    writeln!(
        out,
        "arena {id} with {} players on {} + {} (set up in {:.1} s)",
        args.players,
        match ctx.db.backend() {
            crate::store::Backend::Postgres => "PostgreSQL",
            crate::store::Backend::Sqlite => "SQLite",
        },
        ctx.broker.kind(),
        setup.elapsed().as_secs_f64()
    )?;
    let settings = Settings::of(&ctx);
    let mut times = Vec::with_capacity(args.passes);
    for pass in 1..=args.passes {
        if pass > 1 {
            // The arena takes its next pass a second after the last one (and
            // after every result it read): wait for it, outside the timing,
            // or the pass finds it is not due and makes nothing.
            let wait = u64::try_from(arena::PASS_EVERY_MS).unwrap_or(1_000) + 50;
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        }
        let started = Instant::now();
        let now = ctx.time.now_ms();
        let (_, p) = run::run_step_timed(&ctx, id.clone(), settings.clone(), now).await?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let made = end_games(&ctx, &id, &mut rng).await?;
        // The worker records results as games end (woken by each end), not
        // in the next pass: a step before the pass is due does only that.
        let recording = Instant::now();
        // At the pass's time: ending a thousand games one by one may take
        // longer than the second to the next pass, which this step must not run.
        let (_, r) = run::run_step_timed(&ctx, id.clone(), settings.clone(), now).await?;
        let recorded_ms = recording.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        let f = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        writeln!(
            out,
            "pass {pass}: {made} games made for {} waiting players in {ms:.1} ms \
             (claim {:.1}, record {:.1}, load {:.1}, plan {:.1}, write {:.1}, commit {:.1}, notify {:.1}); \
             their results then recorded in {recorded_ms:.1} ms (record {:.1})",
            args.players,
            f(p.claim),
            f(p.record),
            f(p.load),
            f(p.plan),
            f(p.write),
            f(p.commit),
            f(p.notify),
            f(r.record),
        )?;
    }
    times.sort_by(f64::total_cmp);
    if let (Some(first), Some(median)) = (times.first(), times.get(times.len() / 2)) {
        writeln!(
            out,
            "fastest {first:.1} ms, median {median:.1} ms, slowest {:.1} ms",
            times.last().copied().unwrap_or(*first)
        )?;
    }
    Ok(())
}

/// Ends every unfinished game of the arena with a random result (after the
/// timing); returns how many there were.
async fn end_games(
    ctx: &crate::service::Context,
    id: &str,
    rng: &mut Rng,
) -> anyhow::Result<usize> {
    let id = id.to_owned();
    let seed = rng.below(1 << 30);
    let growth = ctx.config.rating_growth;
    let now = ctx.time.now_ms();
    let ended = ctx
        .db
        .write(move |conn| -> crate::service::Result<usize> {
            let mut rng = Rng::new(seed as u64);
            let open: Vec<String> = store::games_timed(conn, &id)?
                .into_iter()
                .filter(|(_, end)| end.is_none())
                .map(|(g, _)| g.match_id)
                .collect();
            for match_id in &open {
                let Some(mut row) = crate::store::matches::lock(conn, match_id)? else {
                    continue;
                };
                let winner = match rng.below(5) {
                    0 | 1 => Some(Seat::X),
                    2 | 3 => Some(Seat::O),
                    _ => None,
                };
                let reason = if winner.is_some() {
                    EndReason::Resignation
                } else {
                    EndReason::Draw
                };
                play::finish(conn, &mut row, winner, reason, now, growth)?;
                row.version += 1;
                crate::store::matches::save(conn, &row)?;
            }
            Ok(open.len())
        })
        .await?;
    Ok(ended)
}
