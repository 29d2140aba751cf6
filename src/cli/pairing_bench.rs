//! `uttt bench pairing --tickets N`: queues N tickets of spread ratings on
//! the configured broker (Redis in production) and times the pairing rounds
//! until the queue is empty, each from reading the queue to every
//! `match_found` published (the round logs its phases at `info`). Uses
//! `DATABASE_URL` for the players it makes and the matches it pairs.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use futures_util::{StreamExt, TryStreamExt};

use super::on_cpu;
use crate::broker::{Ticket, TicketStatus};
use crate::config::Config;
use crate::cpu::Rng;
use crate::service::matchmaking;
use crate::store::players::NewPlayer;
use crate::store::tickets;
use crate::time::SystemTime;

/// Arguments of `uttt bench pairing`.
#[derive(Debug, clap::Args)]
pub struct PairingBenchArgs {
    /// Tickets to queue.
    #[arg(long, default_value_t = 10_000)]
    pub tickets: usize,
    /// Ladder to queue on.
    #[arg(long, default_value = "ultimate-10m")]
    pub ladder: String,
}

/// Runs the benchmark.
///
/// # Errors
/// The database or broker cannot be reached.
pub async fn run(
    config: Config,
    args: &PairingBenchArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let ctx = crate::server::context(config, Arc::new(SystemTime)).await?;
    let ladder = ctx
        .config
        .ladder(&args.ladder)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no ladder {}", args.ladder))?;
    let tag = crate::ids::record_id()[..6].to_lowercase();
    let names: Vec<String> = (0..args.tickets).map(|i| format!("pb_{tag}_{i}")).collect();
    let now = ctx.time.now_ms();
    let mut rng = Rng::new(7);
    let tickets: Vec<Ticket> = (0..args.tickets)
        .map(|_| Ticket {
            id: crate::ids::record_id(),
            player_id: crate::ids::player_id(),
            ladder: ladder.id.clone(),
            rating: 800.0 + rng.below(1400) as f64 + rng.below(100) as f64 / 100.0,
            created_at: now,
            seen_at: now,
            status: TicketStatus::Queued,
            match_id: None,
            reason: None,
            last_x_at: None,
            last_opponent: None,
        })
        .collect();
    // Players, their rating rows and their tickets' durable records, as
    // queueing through the API leaves them, in multi-row statements (100,000
    // players one insert each took minutes).
    let setup = Instant::now();
    let (rows, pnames) = (tickets.clone(), names.clone());
    ctx.db
        .write(move |conn| -> Result<(), crate::store::StoreError> {
            let players: Vec<NewPlayer<'_>> = rows
                .iter()
                .zip(&pnames)
                .map(|(t, name)| super::bench_player(&t.player_id, name, now))
                .collect();
            crate::store::players::insert_many(conn, &players)?;
            let ratings: Vec<_> = rows
                .iter()
                .map(|t| crate::service::ladders::initial_row(&t.player_id, &t.ladder, now))
                .collect();
            crate::store::ratings::insert_missing(conn, &ratings)?;
            let records: Vec<_> = rows
                .iter()
                .map(|t| {
                    matchmaking::queued_record(
                        t.id.clone(),
                        t.player_id.clone(),
                        t.ladder.clone(),
                        t.rating,
                        now,
                    )
                })
                .collect();
            tickets::insert_many(conn, &records)
        })
        .await?;
    writeln!(
        out,
        "made {} players, rating rows and ticket records in {:.2} s",
        args.tickets,
        setup.elapsed().as_secs_f64()
    )?;
    let queue_started = Instant::now();
    // Seen when queued: creating the players may take longer than the
    // minute after which an unseen ticket counts as abandoned.
    let seen_at = ctx.time.now_ms();
    let broker = &ctx.broker;
    futures_util::stream::iter(&tickets)
        .map(|ticket| async move {
            let ticket = Ticket {
                seen_at,
                ..ticket.clone()
            };
            broker.enqueue(&ticket).await
        })
        .buffer_unordered(256)
        .try_collect::<Vec<_>>()
        .await?;
    writeln!(
        out,
        "queued {} tickets on {} ({}) in {:.2} s",
        args.tickets,
        ladder.id,
        ctx.broker.kind(),
        queue_started.elapsed().as_secs_f64()
    )?;
    let all_started = Instant::now();
    let mut round_no = 0;
    loop {
        round_no += 1;
        let cpu = on_cpu::Split::now();
        let t = Instant::now();
        let made = matchmaking::round(&ctx, &ladder).await?;
        let elapsed = t.elapsed();
        writeln!(
            out,
            "round {round_no}: {} queued, {} matches, {:.0} ms from reading the queue to every match_found published; CPU: {}",
            made.queued,
            made.matched,
            elapsed.as_secs_f64() * 1000.0,
            on_cpu::Split::now().since(&cpu),
        )?;
        if ctx.broker.queue_size(&ladder.id).await? < 2 {
            break;
        }
        if made.matched == 0 {
            tokio::time::sleep(ctx.config.matchmaking.round_every).await;
        }
    }
    writeln!(
        out,
        "all paired in {:.2} s",
        all_started.elapsed().as_secs_f64()
    )?;
    Ok(())
}
