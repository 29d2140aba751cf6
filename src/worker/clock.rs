//! The clock sweeper: ends every match whose side to move ran out of time,
//! with no client calling.

use crate::service::matches::{self, play};
use crate::service::{Context, Result};

/// Matches ended per transaction.
const BATCH: i64 = 100;

/// Ends on time the matches that ran out of time by now, less the flag's
/// settling time (`Config::flag_settle`); returns how many.
///
/// # Errors
/// Store failures.
pub async fn tick(ctx: &Context) -> Result<usize> {
    let growth = ctx.config.rating_growth;
    // Moves that arrived in time but wait for the row are judged first.
    let settled = matches::settled_now(ctx);
    let ended = ctx
        .db
        .write(move |conn| play::sweep_lapsed(conn, settled, BATCH, growth))
        .await?;
    for snap in &ended {
        tracing::info!(match.id = %snap.row.id, "match ended on time");
        ctx.metrics.count("time_forfeits");
        matches::publish(ctx, snap).await?;
    }
    Ok(ended.len())
}
