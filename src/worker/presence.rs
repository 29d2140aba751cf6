//! The presence worker: hands the seat of a player who dropped out to the
//! CPU (see `service::matches::dropout`).

use crate::service::matches::dropout;
use crate::service::{Context, Result};

/// Matches examined per tick.
const BATCH: i64 = 500;

/// Takes over the dropped sides to move; returns how many seats.
///
/// # Errors
/// Store or broker failures.
pub async fn tick(ctx: &Context) -> Result<usize> {
    dropout::sweep(ctx, BATCH).await
}
