//! Rate limits, counted in the broker so that all instances share them.

use crate::broker::RateDecision;
use crate::config::RateLimit;

use super::{Context, Error, Result};

/// Counts one request under `key` against `limit`.
///
/// # Errors
/// `RateLimited` over the limit; `Unavailable` when the broker is down.
pub async fn check(ctx: &Context, key: &str, limit: RateLimit) -> Result<()> {
    match ctx.broker.hit(key, limit.limit, limit.window).await? {
        RateDecision::Allowed => Ok(()),
        RateDecision::Limited { retry_after } => Err(Error::RateLimited {
            retry_after_secs: retry_after.as_millis().div_ceil(1000).max(1) as u64,
        }),
    }
}
