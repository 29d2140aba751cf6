//! The pruning worker: deletes what can never be used again, so tables do
//! not grow without bound — refresh tokens past their expiry (wall clock, as
//! tokens are), rooms nobody joined within their time to live (game time)
//! and matchmaking tickets finished more than a day ago (game time: the
//! broker forgets a matched ticket after a day too). Rate-limit counters need no pruning: they live in the broker with
//! a time to live (Redis) or are swept when many are held (in-process).

use crate::service::{Context, Result, rooms};
use crate::store::{refresh_tokens, tickets};

/// How long a matched or cancelled ticket's record is kept (ms).
pub const TICKETS_KEPT_MS: i64 = 24 * 60 * 60 * 1000;
/// Tickets deleted per statement, and statements in one tick: up to a
/// million tickets every tick, so that a busy ladder's table keeps to about
/// a day of tickets (the search for queued ones walks it).
const TICKET_CHUNK: i64 = 5_000;
const TICKET_ROUNDS: usize = 200;

/// Rows deleted per statement, so no transaction holds locks for long.
const CHUNK: i64 = 1_000;
/// Statements per kind in one tick; the next tick carries on.
const ROUNDS: usize = 20;

/// What one tick deleted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Expired refresh tokens.
    pub refresh_tokens: usize,
    /// Rooms nobody joined in time.
    pub rooms: usize,
    /// Tickets matched or cancelled more than a day ago.
    pub tickets: usize,
}

/// Deletes expired refresh tokens, expired unjoined rooms and old finished tickets.
///
/// # Errors
/// Store failures.
pub async fn tick(ctx: &Context) -> Result<Pruned> {
    let mut pruned = Pruned::default();
    let now = chrono::Utc::now().timestamp_millis();
    pruned.refresh_tokens = in_chunks(ROUNDS, CHUNK, |chunk| {
        ctx.db
            .write(move |conn| refresh_tokens::delete_expired(conn, now, chunk))
    })
    .await?;
    pruned.rooms = in_chunks(ROUNDS, CHUNK, |chunk| rooms::prune_expired(ctx, chunk)).await?;
    let cutoff = ctx.time.now_ms() - TICKETS_KEPT_MS;
    pruned.tickets = in_chunks(TICKET_ROUNDS, TICKET_CHUNK, |chunk| {
        ctx.db
            .write(move |conn| tickets::delete_finished_before(conn, cutoff, chunk))
    })
    .await?;
    if pruned != Pruned::default() {
        tracing::info!(
            refresh_tokens = pruned.refresh_tokens,
            rooms = pruned.rooms,
            tickets = pruned.tickets,
            "pruned expired rows"
        );
    }
    Ok(pruned)
}

/// Runs `delete` (which deletes up to `chunk` rows and says how many) until
/// it deletes fewer than `chunk` or has run `rounds` times; returns the total.
async fn in_chunks<F, Fut, E>(rounds: usize, chunk: i64, mut delete: F) -> Result<usize>
where
    F: FnMut(i64) -> Fut,
    Fut: std::future::Future<Output = std::result::Result<usize, E>>,
    crate::service::Error: From<E>,
{
    let mut total = 0;
    for _ in 0..rounds {
        let n = delete(chunk).await?;
        total += n;
        if n < usize::try_from(chunk).unwrap_or(usize::MAX) {
            break;
        }
    }
    Ok(total)
}
