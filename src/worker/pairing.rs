//! The pairing worker: a round per ladder, run by whichever instance holds
//! the ladder's broker lock.

use crate::service::matchmaking::{self, Round};
use crate::service::{Context, Result};

/// One round on every ladder.
///
/// # Errors
/// Broker or store failures (the remaining ladders still run).
pub async fn tick(ctx: &Context) -> Result<Round> {
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
