//! The tournament worker: starts tournaments at `starts_at`, records the
//! results of their games as the matches end, pairs each next round after
//! the pause, and finishes them after the last round. Woken at once when a
//! tournament game ends on this instance; otherwise it polls, so games
//! ended on other instances are seen too.

use crate::service::{Context, Result, tournaments};

/// Runs one pass; returns how many tournaments changed.
///
/// # Errors
/// Store or broker failures.
pub async fn tick(ctx: &Context) -> Result<usize> {
    tournaments::run::tick(ctx).await
}
