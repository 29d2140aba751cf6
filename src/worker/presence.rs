//! The presence worker: announces seats whose presence changed, and hands
//! the seat of a player who dropped out to the CPU (see
//! `service::matches::dropout`).

use crate::service::matches::{self, dropout};
use crate::service::{Context, Result};
use crate::store::matches as store;

/// Matches examined per tick.
const BATCH: i64 = 500;

/// Takes over the dropped sides to move and announces presence changes;
/// returns how many seats were taken over.
///
/// # Errors
/// Store or broker failures.
pub async fn tick(ctx: &Context) -> Result<usize> {
    let taken = dropout::sweep(ctx, BATCH).await?;
    let rows = ctx.db.run(|conn| store::active(conn, BATCH * 4)).await?;
    matches::announce_absences(ctx, &rows).await?;
    Ok(taken)
}
