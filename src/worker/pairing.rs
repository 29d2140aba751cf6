//! The pairing worker: a round per ladder, run by whichever instance holds
//! the ladder's broker lock.

use std::sync::atomic::Ordering;

use crate::service::matchmaking::{self, Round};

/// How often pairs claimed without a committed match are looked for.
const RECONCILE_EVERY_MS: i64 = 30_000;
use crate::service::{Context, Result};

/// One round on every ladder.
///
/// # Errors
/// Broker or store failures (the remaining ladders still run).
pub async fn tick(ctx: &Context) -> Result<Round> {
    // A broker that lost its queue (Redis restarted) gets it back first.
    matchmaking::restore_queue(ctx).await?;
    let now = ctx.time.now_ms();
    let last_run = &ctx.signals.last_reconcile;
    let last = last_run.load(Ordering::Relaxed);
    if now - last >= RECONCILE_EVERY_MS
        && last_run
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        matchmaking::reconcile_claims(ctx).await?;
    }
    let mut total = Round::default();
    let mut first_error = None;
    for ladder in &ctx.config.ladders {
        match matchmaking::round(ctx, ladder).await {
            Ok(r) => {
                total.queued += r.queued;
                total.matched += r.matched;
                total.abandoned += r.abandoned;
            }
            Err(err) => {
                first_error.get_or_insert(err);
            }
        }
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(total),
    }
}
