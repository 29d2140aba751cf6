//! `uttt bench pairing --tickets N`: queues N tickets of spread ratings on
//! the configured broker (Redis in production) and times the pairing rounds
//! until the queue is empty. Uses `DATABASE_URL` for the matches it makes.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use crate::broker::{Ticket, TicketStatus};
use crate::config::Config;
use crate::cpu::Rng;
use crate::service::matchmaking::{self, pairing};
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
    // queueing through the API leaves them: pairing marks the records
    // matched and notes colours and opponents on the rating rows.
    let (rows, pnames) = (tickets.clone(), names.clone());
    ctx.db
        .write(move |conn| -> Result<(), crate::store::StoreError> {
            for (ticket, name) in rows.iter().zip(&pnames) {
                super::insert_bench_player(conn, &ticket.player_id, name, now)?;
                crate::store::ratings::insert_if_missing(
                    conn,
                    &crate::service::ladders::initial_row(&ticket.player_id, &ticket.ladder, now),
                )?;
                tickets::insert(
                    conn,
                    &matchmaking::queued_record(
                        ticket.id.clone(),
                        ticket.player_id.clone(),
                        ticket.ladder.clone(),
                        ticket.rating,
                        now,
                    ),
                )?;
            }
            Ok(())
        })
        .await?;
    let queue_started = Instant::now();
    // Seen when queued: creating the players may take longer than the
    // minute after which an unseen ticket counts as abandoned.
    let seen_at = ctx.time.now_ms();
    for ticket in &tickets {
        ctx.broker
            .enqueue(&Ticket {
                seen_at,
                ..ticket.clone()
            })
            .await?;
    }
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
        let t = Instant::now();
        let queued = ctx.broker.queued(&ladder.id).await?;
        let fetched = t.elapsed();
        let plan = pairing::plan(&queued, ctx.time.now_ms(), &ctx.config.matchmaking);
        let planned = t.elapsed();
        let made = matchmaking::round(&ctx, &ladder).await?;
        writeln!(
            out,
            "round {round_no}: {} queued, fetch {:.1} ms, plan {:.1} ms ({} pairs), round with match creation {:.0} ms ({} matches)",
            queued.len(),
            fetched.as_secs_f64() * 1000.0,
            (planned - fetched).as_secs_f64() * 1000.0,
            plan.len(),
            (t.elapsed() - planned).as_secs_f64() * 1000.0,
            made.matched
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
