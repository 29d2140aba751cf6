//! Background loops that every instance runs. Each `tick` is safe to run on
//! many instances at once and twice in a row: work is claimed in the database
//! (`FOR UPDATE SKIP LOCKED`, or a claim column) and every write goes through
//! the same transactional use cases as requests.

pub mod analysis;
pub mod challenges;
pub mod clock;
pub mod cpu;
pub mod cpu_order;
pub mod pairing;
pub mod presence;
pub mod prune;
pub mod tournaments;

use std::future::Future;
use std::time::Duration;

use crate::service::Context;

/// How often the clock sweeper looks for matches out of time.
pub const SWEEP_EVERY: Duration = Duration::from_millis(250);
/// How often the presence worker looks for dropped players.
pub const PRESENCE_EVERY: Duration = Duration::from_millis(500);
/// How often the pruning worker deletes expired rows.
pub const PRUNE_EVERY: Duration = Duration::from_secs(600);
/// How often the challenge worker looks for challenges nobody answered in time.
pub const CHALLENGES_EVERY: Duration = Duration::from_secs(1);
/// How often the tournament worker looks for ended games and due rounds when nothing woke it.
pub const TOURNAMENTS_POLL_EVERY: Duration = Duration::from_millis(500);
/// How often the CPU mover looks for work when nothing woke it.
pub const CPU_POLL_EVERY: Duration = Duration::from_millis(250);

/// Starts the worker loops this instance is configured to run, on the current
/// runtime, and the renewal of its event streams' presence leases (always: it
/// belongs to serving streams, not to a shareable worker).
pub fn start(ctx: &Context) {
    spawn_loop(
        "presence leases",
        ctx.clone(),
        ctx.config.presence.renew_every(),
        |ctx| async move { presence::renew(&ctx).await.map(|_| ()) },
    );
    let enabled = ctx.config.workers;
    if enabled.clock {
        spawn_loop(
            "clock sweeper",
            ctx.clone(),
            SWEEP_EVERY,
            |ctx| async move { clock::tick(&ctx).await.map(|_| ()) },
        );
    }
    if enabled.presence {
        spawn_loop("presence", ctx.clone(), PRESENCE_EVERY, |ctx| async move {
            presence::tick(&ctx).await.map(|_| ())
        });
    }
    if enabled.prune {
        spawn_loop("prune", ctx.clone(), PRUNE_EVERY, |ctx| async move {
            prune::tick(&ctx).await.map(|_| ())
        });
    }
    if enabled.challenges {
        spawn_loop(
            "challenge expiry",
            ctx.clone(),
            CHALLENGES_EVERY,
            |ctx| async move { challenges::tick(&ctx).await.map(|_| ()) },
        );
    }
    if enabled.pairing {
        let ctx = ctx.clone();
        let guard = ctx.shutdown.worker();
        tokio::spawn(async move {
            let _guard = guard;
            let every = ctx.config.matchmaking.round_every;
            while !ctx.shutdown.is_triggered() {
                if let Err(err) = pairing::tick(&ctx).await {
                    tracing::warn!(worker = "pairing", error = %err, "round failed");
                }
                let signals = ctx.signals.clone();
                tokio::select! {
                    _ = tokio::time::timeout(every, signals.pairing.notified()) => {}
                    () = ctx.shutdown.wait() => {}
                }
            }
        });
    }
    if enabled.tournaments {
        let ctx = ctx.clone();
        let guard = ctx.shutdown.worker();
        tokio::spawn(async move {
            let _guard = guard;
            while !ctx.shutdown.is_triggered() {
                if let Err(err) = tournaments::tick(&ctx).await {
                    tracing::warn!(worker = "tournaments", error = %err, "tick failed");
                }
                let signals = ctx.signals.clone();
                tokio::select! {
                    _ = tokio::time::timeout(TOURNAMENTS_POLL_EVERY, signals.tournaments.notified()) => {}
                    () = ctx.shutdown.wait() => {}
                }
            }
        });
    }
    if enabled.analysis {
        let ctx = ctx.clone();
        let guard = ctx.shutdown.worker();
        tokio::spawn(async move {
            let _guard = guard;
            while !ctx.shutdown.is_triggered() {
                // One analysis at a time; straight on to the next one if any.
                match analysis::tick(&ctx).await {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(err) => tracing::warn!(worker = "analysis", error = %err, "tick failed"),
                }
                let signals = ctx.signals.clone();
                tokio::select! {
                    _ = tokio::time::timeout(analysis::POLL_EVERY, signals.analysis.notified()) => {}
                    () = ctx.shutdown.wait() => {}
                }
            }
        });
    }
    if enabled.cpu {
        let ctx = ctx.clone();
        let guard = ctx.shutdown.worker();
        tokio::spawn(async move {
            let _guard = guard;
            while !ctx.shutdown.is_triggered() {
                if let Err(err) = cpu::tick(&ctx).await {
                    tracing::warn!(worker = "cpu mover", error = %err, "tick failed");
                }
                let signals = ctx.signals.clone();
                tokio::select! {
                    _ = tokio::time::timeout(CPU_POLL_EVERY, signals.cpu.notified()) => {}
                    () = ctx.shutdown.wait() => {}
                }
            }
        });
    }
}

fn spawn_loop<F, Fut>(name: &'static str, ctx: Context, every: Duration, tick: F)
where
    F: Fn(Context) -> Fut + Send + 'static,
    Fut: Future<Output = crate::service::Result<()>> + Send,
{
    let guard = ctx.shutdown.worker();
    tokio::spawn(async move {
        let _guard = guard;
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = interval.tick() => {}
                () = ctx.shutdown.wait() => return,
            }
            if let Err(err) = tick(ctx.clone()).await {
                tracing::warn!(worker = name, error = %err, "tick failed");
            }
        }
    });
}
