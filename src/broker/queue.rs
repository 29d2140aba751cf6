//! The matchmaking queue and broker locks: the types both brokers share.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::BrokerResult;

/// Where a ticket stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketStatus {
    /// Waiting to be paired.
    Queued,
    /// Paired; `match_id` is set.
    Matched,
    /// Withdrawn by the player or by the server (`reason` says why).
    Cancelled,
}

impl TicketStatus {
    /// The stored and API form.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketStatus::Queued => "queued",
            TicketStatus::Matched => "matched",
            TicketStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<TicketStatus> {
        match text {
            "queued" => Some(TicketStatus::Queued),
            "matched" => Some(TicketStatus::Matched),
            "cancelled" => Some(TicketStatus::Cancelled),
            _ => None,
        }
    }
}

/// A matchmaking ticket.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticket {
    /// Opaque id.
    pub id: String,
    /// Who is queueing.
    pub player_id: String,
    /// On which ladder.
    pub ladder: String,
    /// The player's rating there when they queued.
    pub rating: f64,
    /// When the ticket was made (game time, ms).
    pub created_at: i64,
    /// When the player last showed interest (reading the ticket, or an open event stream).
    pub seen_at: i64,
    /// Where it stands.
    pub status: TicketStatus,
    /// The match it was paired into.
    pub match_id: Option<String>,
    /// Why it was cancelled.
    pub reason: Option<String>,
    /// When the player last started a match as X on this ladder.
    pub last_x_at: Option<i64>,
    /// The player's last opponent on this ladder.
    pub last_opponent: Option<String>,
}

/// What enqueueing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// The ticket is in the queue.
    Queued,
    /// The player already holds this live ticket; nothing was added.
    AlreadyQueued(String),
}

/// What cancelling did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cancelled {
    /// The ticket left the queue.
    Cancelled,
    /// It had been cancelled before.
    AlreadyCancelled,
    /// It was already paired into this match.
    AlreadyMatched(String),
    /// No such ticket.
    Missing,
}

/// Two tickets to claim for one match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairClaim {
    /// One ticket.
    pub a: String,
    /// The other.
    pub b: String,
    /// The match both go into.
    pub match_id: String,
}

/// The matchmaking queue: a set per ladder ordered by rating, a record per
/// ticket, one live ticket per player. Pairing claims a round's pairs atomically.
pub trait MatchQueue: Send + Sync {
    /// Whether the queue still holds what was put in it since it was last
    /// marked restored (a Redis restart without persistence empties it).
    fn is_restored(&self) -> BoxFuture<'_, BrokerResult<bool>>;
    /// Marks the queue as holding every queued ticket.
    fn mark_restored(&self) -> BoxFuture<'_, BrokerResult<()>>;
    /// Adds a ticket unless the player already holds a queued one.
    fn enqueue<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, BrokerResult<Enqueued>>;
    /// Reads a ticket.
    fn ticket<'a>(&'a self, id: &'a str) -> BoxFuture<'a, BrokerResult<Option<Ticket>>>;
    /// Notes that the ticket's player is still interested at `at`.
    fn touch_ticket<'a>(&'a self, id: &'a str, at: i64) -> BoxFuture<'a, BrokerResult<()>>;
    /// Withdraws a queued ticket.
    fn cancel<'a>(&'a self, id: &'a str, reason: &'a str)
    -> BoxFuture<'a, BrokerResult<Cancelled>>;
    /// Every queued ticket of a ladder, by rating.
    fn queued<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<Vec<Ticket>>>;
    /// How many tickets a ladder's queue holds.
    fn queue_size<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<u64>>;
    /// Claims, in one atomic step, each pair of `ladder`'s tickets whose two
    /// tickets are both still queued: both leave the queue, matched into the
    /// pair's match. A pair is claimed whole or not at all, and a ticket in
    /// two pairs of the batch is claimed by the first only. Returns, per
    /// pair, whether it was claimed.
    fn claim_pairs<'a>(
        &'a self,
        ladder: &'a str,
        pairs: &'a [PairClaim],
    ) -> BoxFuture<'a, BrokerResult<Vec<bool>>>;
    /// Puts claimed tickets of `ladder` back in its queue (their match could
    /// not be made); tickets that are not matched are left as they are.
    fn release_tickets<'a>(
        &'a self,
        ladder: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<()>>;
    /// The player's most recent ticket, if any.
    fn player_ticket<'a>(
        &'a self,
        player_id: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>>;
}

/// Locks that span instances, held for a time-to-live so a crashed holder frees them.
pub trait Locks: Send + Sync {
    /// Takes (or, when `token` already holds it, extends) the lock `name` for `ttl`.
    fn try_lock<'a>(
        &'a self,
        name: &'a str,
        token: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>>;
    /// Releases the lock if `token` holds it.
    fn unlock<'a>(&'a self, name: &'a str, token: &'a str) -> BoxFuture<'a, BrokerResult<()>>;
}
