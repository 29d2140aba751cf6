//! The broker: everything instances share outside the database — rate limits,
//! publish/subscribe of events, and (later) the matchmaking queue, presence
//! and locks. One trait set, two implementations: Redis for production and an
//! in-process one for the embedded single-instance default.

mod hub;
pub mod memory;
pub mod queue;
pub mod redis;
pub mod redis_conn;
pub mod redis_local;
mod redis_queue;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use hub::{Notice, Subscription};
pub use queue::{Cancelled, Enqueued, Locks, MatchQueue, PairClaim, Ticket, TicketStatus};

/// What can go wrong talking to the broker.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// Redis cannot be reached or answered with an error.
    #[error("broker unavailable: {0}")]
    Unavailable(String),
}

impl From<::redis::RedisError> for BrokerError {
    fn from(err: ::redis::RedisError) -> Self {
        BrokerError::Unavailable(err.to_string())
    }
}

/// Result of a broker call.
pub type BrokerResult<T> = Result<T, BrokerError>;

/// The answer of a rate limiter to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// Within the limit.
    Allowed,
    /// Over the limit; try again after this long.
    Limited {
        /// Time until the window ends.
        retry_after: Duration,
    },
}

/// Fixed-window rate limiting, counted across all instances.
pub trait RateLimiter: Send + Sync {
    /// Counts one request under `key` and says whether it is within `limit` per `window`.
    fn hit<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        window: Duration,
    ) -> BoxFuture<'a, BrokerResult<RateDecision>>;

    /// What `key` counts in its current window and how long the window has
    /// left, without counting anything; `None` when no window is open.
    fn peek<'a>(&'a self, key: &'a str) -> BoxFuture<'a, BrokerResult<Option<(u32, Duration)>>>;
}

/// Publish/subscribe of events to every instance.
pub trait PubSub: Send + Sync {
    /// Sends `payload` to every current subscriber of `channel`, on any instance.
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, BrokerResult<()>>;

    /// Sends each `(channel, payload)` in order, in as few round trips as the
    /// broker allows (Redis pipelines them).
    fn publish_many<'a>(
        &'a self,
        messages: &'a [(String, String)],
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            for (channel, payload) in messages {
                self.publish(channel, payload.clone()).await?;
            }
            Ok(())
        })
    }

    /// Subscribes to `channel`; messages published after this returns are delivered.
    fn subscribe<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, BrokerResult<Subscription>>;

    /// Messages that reached this instance so far: on Redis, every message its
    /// subscription connection took in (only the channels it has local
    /// subscribers on); in process, every message delivered to a subscriber.
    fn received(&self) -> u64;
}

/// What the broker knows of one key's presence (a seat of a match).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresenceRecord {
    /// A live lease is held on it: an event stream is open, on some instance.
    pub leased: bool,
    /// When it was last seen (game time), if it was.
    pub last_seen: Option<i64>,
}

/// Presence: when each key (a seat of a match) was last seen, and the leases
/// of open connections on it. Seen times are the server's game time, so tests
/// can advance them; leases live in real time (the broker's clock), so an
/// instance that dies leaves leases that lapse on their own.
pub trait Presence: Send + Sync {
    /// Records that `key` was seen at `at`; the record lives for `ttl`.
    /// Returns when it was seen before, if it was.
    fn seen<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<i64>>>;
    /// Stores a small marker under `key` for `ttl`; returns the marker it replaced.
    fn mark<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>>;
    /// The markers stored under `keys`.
    fn marks<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, BrokerResult<Vec<Option<String>>>>;
    /// Takes or renews each lease `(key, holder)` until `ttl` from now (real time).
    fn hold<'a>(
        &'a self,
        leases: &'a [(String, String)],
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<()>>;
    /// Gives up the lease of `holder` on `key`.
    fn release<'a>(&'a self, key: &'a str, holder: &'a str) -> BoxFuture<'a, BrokerResult<()>>;
    /// The presence of each of `keys`: a live lease, and when it was last seen.
    fn presence<'a>(
        &'a self,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<Vec<PresenceRecord>>>;
    /// [`Presence::seen`] of `key`, then [`Presence::presence`] of `keys`
    /// (which may include `key`, read as just seen): one round trip where
    /// the broker can make it one, as a move's request needs both.
    fn seen_then_presence<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<(Option<i64>, Vec<PresenceRecord>)>> {
        Box::pin(async move {
            let previous = self.seen(key, at, ttl).await?;
            Ok((previous, self.presence(keys).await?))
        })
    }
}

/// Bounded sets of leased slots, shared by all instances: an event stream
/// holds a slot of its player's set while it is open, renewing the lease as
/// it goes, so a crashed instance's slots free themselves when their leases end.
pub trait Slots: Send + Sync {
    /// Takes (or renews) the slot `member` of set `key` for `ttl`, unless the
    /// set already holds `cap` live slots; returns whether it holds it now.
    fn acquire<'a>(
        &'a self,
        key: &'a str,
        member: &'a str,
        cap: u32,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>>;
    /// Gives the slot `member` of set `key` back.
    fn release_slot<'a>(&'a self, key: &'a str, member: &'a str)
    -> BoxFuture<'a, BrokerResult<()>>;
}

/// Liveness of the broker itself.
pub trait Health: Send + Sync {
    /// Checks that the broker answers.
    fn ping(&self) -> BoxFuture<'_, BrokerResult<()>>;
    /// A short name for logs: `redis` or `in-process`.
    fn kind(&self) -> &'static str;
}

/// The whole broker trait set, as one object.
pub trait Broker: RateLimiter + PubSub + Presence + MatchQueue + Locks + Slots + Health {}

impl<T: RateLimiter + PubSub + Presence + MatchQueue + Locks + Slots + Health> Broker for T {}

/// A shared broker.
pub type SharedBroker = Arc<dyn Broker>;
