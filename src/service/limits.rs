//! Rate limits, counted in the broker so that all instances share them.

use crate::broker::RateDecision;
use crate::config::RateLimit;

use super::{Context, Error, Result};

use std::time::Duration;

/// The 429 for a window that ends in `retry_after`.
pub fn limited(retry_after: Duration) -> Error {
    Error::RateLimited {
        retry_after_secs: u64::try_from(retry_after.as_millis().div_ceil(1000))
            .unwrap_or(u64::MAX)
            .max(1),
    }
}

/// Counts one request under `key` against `limit`.
///
/// # Errors
/// `RateLimited` over the limit; `Unavailable` when the broker is down.
pub async fn check(ctx: &Context, key: &str, limit: RateLimit) -> Result<()> {
    match ctx.broker.hit(key, limit.limit, limit.window).await? {
        RateDecision::Allowed => Ok(()),
        RateDecision::Limited { retry_after } => Err(limited(retry_after)),
    }
}

/// What `key` has counted in its window (0 when none is open), and when the window ends.
///
/// # Errors
/// `Unavailable` when the broker is down.
pub async fn count(ctx: &Context, key: &str) -> Result<(u32, Duration)> {
    Ok(ctx.broker.peek(key).await?.unwrap_or((0, Duration::ZERO)))
}

/// Counts one event under `key` (a failure, say) in windows of `limit`,
/// whatever the count already is.
///
/// # Errors
/// `Unavailable` when the broker is down.
pub async fn record(ctx: &Context, key: &str, limit: RateLimit) -> Result<()> {
    ctx.broker.hit(key, limit.limit, limit.window).await?;
    Ok(())
}
