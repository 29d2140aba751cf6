//! The presence worker: announces seats whose presence changed, and hands
//! the seat of a player who dropped out to the CPU (see
//! `service::matches::dropout`); and the renewal of this instance's event
//! streams' presence leases (`service::matches::presence`).

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

/// Renews the presence leases of the event streams open on this instance;
/// returns how many. Every instance runs it every third of a lease's lifetime.
///
/// # Errors
/// Broker failures (the leases then lapse unless a later renewal succeeds).
pub async fn renew(ctx: &Context) -> Result<usize> {
    matches::presence::renew_leases(ctx).await
}
