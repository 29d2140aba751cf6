//! Ranked matchmaking: tickets in the broker's queue, pairing rounds, and the
//! ranked match a pair becomes.
//!
//! Over 400 lines: tickets, a pairing round and the reconciliation of broker
//! claims with the database are one lifecycle; the pure pairing is in
//! `pairing.rs`, and making a round's matches in one batch is in `batch.rs`.

pub mod batch;
pub mod pairing;

use serde::Serialize;
use utoipa::ToSchema;

use crate::broker::{Cancelled, Enqueued, Ticket, TicketStatus};
use crate::config::LadderConfig;
use crate::ids;
use crate::store::matches as match_store;
use crate::store::players;
use crate::store::tickets::{self, TicketRow};
use crate::time::{Millis, rfc3339};

use super::accounts::Player;
use super::{ConflictCode, Context, Error, Result, ladders};

/// A ticket as its player sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TicketView {
    /// Opaque id.
    pub id: String,
    /// The ladder.
    pub ladder: String,
    /// `queued`, `matched` or `cancelled`.
    pub status: &'static str,
    /// The player's rating on the ladder when they queued.
    pub rating: f64,
    /// When the ticket was made.
    pub created_at: String,
    /// The match, once paired.
    pub match_id: Option<String>,
    /// Why it was cancelled: `cancelled` (by the player), `abandoned` (not looked at for a minute), `in_active_match` (the player was already in a ranked match when it was paired), …
    pub reason: Option<String>,
    /// While queued: the rating gap accepted now; `null` when anyone on the ladder will do.
    pub window: Option<f64>,
    /// How long it has waited, ms.
    pub waited_ms: i64,
    /// Tickets now in the ladder's queue.
    pub queue_size: u64,
}

async fn view(ctx: &Context, ticket: &Ticket) -> Result<TicketView> {
    let now = ctx.time.now_ms();
    let queued = ticket.status == TicketStatus::Queued;
    let waited = now - ticket.created_at;
    Ok(TicketView {
        id: ticket.id.clone(),
        ladder: ticket.ladder.clone(),
        status: ticket.status.as_str(),
        rating: (ticket.rating * 100.0).round() / 100.0,
        created_at: rfc3339(ticket.created_at),
        match_id: ticket.match_id.clone(),
        reason: ticket.reason.clone(),
        window: if queued {
            pairing::window(&ctx.config.matchmaking, waited)
        } else {
            None
        },
        waited_ms: waited.max(0),
        queue_size: ctx.broker.queue_size(&ticket.ladder).await?,
    })
}

/// The durable record of a ticket just queued.
#[must_use]
pub fn queued_record(
    id: String,
    player_id: String,
    ladder: String,
    rating: f64,
    now: Millis,
) -> TicketRow {
    TicketRow {
        id,
        player_id,
        ladder,
        rating,
        status: TicketStatus::Queued.as_str().into(),
        match_id: None,
        reason: None,
        created_at: now,
        updated_at: now,
    }
}

/// Queues `player` on `ladder`. The ticket is recorded in the database
/// first, then put in the broker's queue.
///
/// # Errors
/// `forbidden` for a bot on a ladder closed to bots; `in_active_match`; `already_queued`.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn create_ticket(
    ctx: &Context,
    player: &Player,
    ladder: &LadderConfig,
) -> Result<TicketView> {
    let now = ctx.time.now_ms();
    let id = ids::record_id();
    let (pid, lid, tid) = (player.id.clone(), ladder.id.clone(), id.clone());
    let open_to_bots = ladder.bots;
    let (active, waiting, rating, (last_x_at, last_opponent)) = ctx
        .db
        .write(move |conn| -> Result<_> {
            // The flag as it is now, under the lock `POST /me/bot` takes.
            if players::lock_bot(conn, &pid)?.unwrap_or(false) && !open_to_bots {
                return Err(Error::Forbidden(
                    "bot accounts may only queue on ladders open to bots (`bots: true`)",
                ));
            }
            // The ticket is read before the match, and pairing commits the
            // match and its tickets together: so a pairing that commits in
            // between (on PostgreSQL each statement sees the latest commit)
            // shows either as the queued ticket or as the active match.
            let waiting = tickets::queued_for_player(conn, &pid)?;
            let active = match_store::active_ranked(conn, &pid)?;
            let rating = ladders::ensure(conn, &pid, &lid, now)?;
            let mut last = (None, None);
            if active.is_none() && waiting.is_none() {
                last = match_store::last_ranked(conn, &pid, &lid)?;
                tickets::insert(conn, &queued_record(tid, pid, lid, rating.rating, now))?;
            }
            Ok((active, waiting, rating, last))
        })
        .await?;
    if let Some(match_id) = active {
        return Err(Error::conflict(
            ConflictCode::InActiveMatch,
            "finish your ranked match before queueing again",
            Some(("match_id", match_id)),
        ));
    }
    if let Some(ticket_id) = waiting {
        return Err(Error::conflict(
            ConflictCode::AlreadyQueued,
            "you already hold a queued ticket; cancel it first",
            Some(("ticket_id", ticket_id)),
        ));
    }
    let ticket = Ticket {
        id,
        player_id: player.id.clone(),
        ladder: ladder.id.clone(),
        rating: rating.rating,
        created_at: now,
        seen_at: now,
        status: TicketStatus::Queued,
        match_id: None,
        reason: None,
        last_x_at,
        last_opponent,
    };
    let enqueued = ctx.broker.enqueue(&ticket).await;
    if !matches!(enqueued, Ok(Enqueued::Queued)) {
        // The ticket never reached the queue: forget it.
        let tid = ticket.id.clone();
        ctx.db.run(move |conn| tickets::delete(conn, &tid)).await?;
    }
    match enqueued? {
        Enqueued::Queued => {
            ctx.signals.pairing.notify_one();
            tracing::info!(ticket.id = %ticket.id, ladder = %ladder.id, "queued");
            view(ctx, &ticket).await
        }
        Enqueued::AlreadyQueued(id) => Err(Error::conflict(
            ConflictCode::AlreadyQueued,
            "you already hold a queued ticket; cancel it first",
            Some(("ticket_id", id)),
        )),
    }
}

/// The ticket's durable record, if it is the player's.
async fn owned_row(ctx: &Context, player: &Player, id: &str) -> Result<TicketRow> {
    let tid = id.to_owned();
    ctx.db
        .run(move |conn| tickets::get(conn, &tid))
        .await?
        .filter(|t| t.player_id == player.id)
        .ok_or(Error::NotFound("ticket"))
}

/// A ticket as the broker should hold it, rebuilt from its record.
async fn from_row(ctx: &Context, row: &TicketRow) -> Result<Ticket> {
    let (pid, lid) = (row.player_id.clone(), row.ladder.clone());
    let (last_x_at, last_opponent) = ctx
        .db
        .run(move |conn| match_store::last_ranked(conn, &pid, &lid))
        .await?;
    Ok(Ticket {
        id: row.id.clone(),
        player_id: row.player_id.clone(),
        ladder: row.ladder.clone(),
        rating: row.rating,
        created_at: row.created_at,
        seen_at: ctx.time.now_ms(),
        status: TicketStatus::parse(&row.status).unwrap_or(TicketStatus::Cancelled),
        match_id: row.match_id.clone(),
        reason: row.reason.clone(),
        last_x_at,
        last_opponent,
    })
}

/// The player's ticket; reading it shows the player is still waiting.
/// A queued ticket the broker lost (a Redis restart) goes back in the queue.
///
/// # Errors
/// `NotFound` (also for someone else's ticket).
pub async fn get_ticket(ctx: &Context, player: &Player, id: &str) -> Result<TicketView> {
    let row = owned_row(ctx, player, id).await?;
    let queued_in_db = row.status == TicketStatus::Queued.as_str();
    let ticket = match ctx.broker.ticket(id).await? {
        // Claimed but not yet committed: it is matched once its match exists.
        Some(t) if t.status == TicketStatus::Matched && queued_in_db => Ticket {
            status: TicketStatus::Queued,
            match_id: None,
            ..t
        },
        Some(t) => t,
        None if queued_in_db => {
            let ticket = from_row(ctx, &row).await?;
            ctx.broker.enqueue(&ticket).await?;
            tracing::info!(ticket.id = %id, "ticket put back in the queue");
            ticket
        }
        None => from_row(ctx, &row).await?,
    };
    ctx.broker.touch_ticket(id, ctx.time.now_ms()).await?;
    view(ctx, &ticket).await
}

/// Withdraws the player's ticket.
///
/// # Errors
/// `NotFound`; `already_matched` (with the match) when pairing came first.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn cancel_ticket(ctx: &Context, player: &Player, id: &str) -> Result<()> {
    let row = owned_row(ctx, player, id).await?;
    let outcome = ctx.broker.cancel(id, "cancelled").await?;
    let matched = match (&outcome, row.match_id.clone()) {
        (Cancelled::AlreadyMatched(match_id), _) => Some(match_id.clone()),
        (Cancelled::Missing, Some(match_id)) => Some(match_id),
        _ => None,
    };
    if let Some(match_id) = matched {
        return Err(Error::conflict(
            ConflictCode::AlreadyMatched,
            "the ticket was already paired into a match",
            Some(("match_id", match_id)),
        ));
    }
    let (tid, now) = (id.to_owned(), ctx.time.now_ms());
    ctx.db
        .run(move |conn| tickets::mark_cancelled(conn, &tid, "cancelled", now))
        .await?;
    Ok(())
}

/// Notes that a player with an open event stream is still waiting.
///
/// # Errors
/// Broker failures.
pub async fn keep_waiting(ctx: &Context, player_id: &str) -> Result<()> {
    if let Some(id) = ctx.broker.player_ticket(player_id).await? {
        ctx.broker.touch_ticket(&id, ctx.time.now_ms()).await?;
    }
    Ok(())
}

/// Turns one planned pair into a ranked match, as a round does (see
/// [`batch::make_matches`]); `None` when it could not be made.
///
/// # Errors
/// Broker or store failures.
pub async fn make_match(
    ctx: &Context,
    ladder: &LadderConfig,
    a: &Ticket,
    b: &Ticket,
) -> Result<Option<String>> {
    Ok(batch::make_matches(ctx, ladder, &[(a, b)], None)
        .await?
        .into_iter()
        .next())
}

/// What one pairing round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// Tickets queued when it started.
    pub queued: usize,
    /// Matches made.
    pub matched: usize,
    /// Tickets cancelled as abandoned.
    pub abandoned: usize,
}

/// One pairing round of `ladder`, if this instance holds the ladder's lock.
///
/// # Errors
/// Broker or store failures.
pub async fn round(ctx: &Context, ladder: &LadderConfig) -> Result<Round> {
    let lock = format!("pairing:{}", ladder.id);
    let ttl = (ctx.config.matchmaking.round_every * 20).max(std::time::Duration::from_secs(5));
    if !ctx.broker.try_lock(&lock, &ctx.instance, ttl).await? {
        return Ok(Round::default());
    }
    let held = batch::HeldLock { name: &lock, ttl };
    let result = round_locked(ctx, ladder, held).await;
    ctx.broker.unlock(&lock, &ctx.instance).await?;
    result
}

/// Puts every ticket the database holds as queued back into a broker that
/// lost its queue (a Redis restart without persistence, or a restart of the
/// in-process broker's server).
///
/// # Errors
/// Store or broker failures.
pub async fn restore_queue(ctx: &Context) -> Result<usize> {
    if ctx.broker.is_restored().await? {
        return Ok(0);
    }
    let rows = ctx.db.run(|conn| tickets::queued(conn, 1_000_000)).await?;
    let mut restored = 0;
    for row in &rows {
        let ticket = from_row(ctx, row).await?;
        if ctx.broker.ticket(&ticket.id).await?.is_none()
            && ctx.broker.enqueue(&ticket).await? == Enqueued::Queued
        {
            restored += 1;
        }
    }
    ctx.broker.mark_restored().await?;
    if restored > 0 {
        tracing::warn!(
            tickets = restored,
            "matchmaking queue restored from the database"
        );
    }
    Ok(restored)
}

/// How old a claim must be before a missing match counts as a crash.
const STALE_CLAIM_MS: Millis = 30_000;

/// Repairs the one gap between the broker and the database: a pair claimed
/// in the broker whose match was never committed (the instance died in
/// between). Such tickets, still queued in the database after
/// [`STALE_CLAIM_MS`], go back in the queue.
///
/// # Errors
/// Store or broker failures.
pub async fn reconcile_claims(ctx: &Context) -> Result<usize> {
    let now = ctx.time.now_ms();
    let rows = ctx.db.run(|conn| tickets::queued(conn, 10_000)).await?;
    let mut released = 0;
    for row in rows.iter().filter(|r| now - r.created_at > STALE_CLAIM_MS) {
        let Some(ticket) = ctx.broker.ticket(&row.id).await? else {
            continue;
        };
        let Some(match_id) = ticket
            .match_id
            .filter(|_| ticket.status == TicketStatus::Matched)
        else {
            continue;
        };
        let mid = match_id.clone();
        if ctx
            .db
            .run(move |conn| match_store::get(conn, &mid))
            .await?
            .is_none()
        {
            ctx.broker
                .release_tickets(&row.ladder, std::slice::from_ref(&row.id))
                .await?;
            tracing::warn!(ticket.id = %row.id, match.id = %match_id, "claim without a match released");
            released += 1;
        }
    }
    Ok(released)
}

async fn round_locked(
    ctx: &Context,
    ladder: &LadderConfig,
    lock: batch::HeldLock<'_>,
) -> Result<Round> {
    let now = ctx.time.now_ms();
    let abandon =
        i64::try_from(ctx.config.matchmaking.abandon_after.as_millis()).unwrap_or(i64::MAX);
    let mut live = Vec::new();
    let mut round = Round::default();
    let started = std::time::Instant::now();
    let queue = ctx.broker.queued(&ladder.id).await?;
    let read_ms = started.elapsed().as_secs_f64() * 1000.0;
    for mut ticket in queue {
        if now - ticket.seen_at > abandon {
            // The queue's read may lag the ticket's own record (a line
            // written by an older instance's touch): the record decides.
            if let Some(held) = ctx.broker.ticket(&ticket.id).await?
                && now - held.seen_at <= abandon
            {
                ticket.seen_at = held.seen_at;
                live.push(ticket);
                continue;
            }
            if ctx.broker.cancel(&ticket.id, "abandoned").await? == Cancelled::Cancelled {
                let tid = ticket.id.clone();
                ctx.db
                    .run(move |conn| tickets::mark_cancelled(conn, &tid, "abandoned", now))
                    .await?;
                round.abandoned += 1;
            }
        } else {
            live.push(ticket);
        }
    }
    round.queued = live.len();
    let planning = std::time::Instant::now();
    let pairs: Vec<(&Ticket, &Ticket)> = pairing::plan(&live, now, &ctx.config.matchmaking)
        .into_iter()
        .map(|(a, b)| (&live[a], &live[b]))
        .collect();
    let plan_ms = planning.elapsed().as_secs_f64() * 1000.0;
    round.matched = batch::make_matches(ctx, ladder, &pairs, Some(lock))
        .await?
        .len();
    if !pairs.is_empty() {
        tracing::info!(
            ladder = %ladder.id,
            queued = round.queued,
            read_ms,
            plan_ms,
            total_ms = started.elapsed().as_secs_f64() * 1000.0,
            "pairing round"
        );
    }
    Ok(round)
}
