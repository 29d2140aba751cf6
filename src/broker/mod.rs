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

/// When a seat counts as present in a state published by
/// [`Presence::seen_then_publish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresentIf {
    /// Always: the CPU's seat.
    Always,
    /// With a live lease, or when last seen after this time (game time, ms).
    SeenAfter(i64),
}

impl PresentIf {
    /// Whether `record` counts as present.
    #[must_use]
    pub fn holds(self, record: PresenceRecord) -> bool {
        match self {
            PresentIf::Always => true,
            PresentIf::SeenAfter(after) => {
                record.leased || record.last_seen.is_some_and(|seen| seen > after)
            }
        }
    }
}

/// A payload whose two presence flags, X's and O's, are left to be filled
/// in: `parts[0]`, X's flag, `parts[1]`, O's flag, `parts[2]`, each flag
/// `true` or `false`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlaggedPayload {
    /// The text around the two flags.
    pub parts: [String; 3],
}

impl FlaggedPayload {
    /// The payload with `flags` (X's, O's) filled in.
    #[must_use]
    pub fn fill(&self, flags: [bool; 2]) -> String {
        let [a, b, c] = &self.parts;
        let text = |flag: bool| if flag { "true" } else { "false" };
        let mut out = String::with_capacity(a.len() + b.len() + c.len() + 10);
        for piece in [a, text(flags[0]), b, text(flags[1]), c] {
            out.push_str(piece);
        }
        out
    }
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
    /// [`Presence::seen_then_presence`] of `key` and of the two seats'
    /// `keys` (X's, O's), then the publication `out`, each seat's flag filled
    /// in by its rule from the record just read: one round trip where the
    /// broker can make it one, as a move's request needs all of it. Returns
    /// as `seen_then_presence`; the flags published (and marked) are the
    /// rules' answers on the records returned.
    fn seen_then_publish<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
        keys: &'a [String; 2],
        out: &'a FlaggedPublish<'a>,
    ) -> BoxFuture<'a, BrokerResult<(Option<i64>, Vec<PresenceRecord>)>>;
}

/// A publication whose two presence flags the broker fills in (see
/// [`Presence::seen_then_publish`]).
#[derive(Debug, Clone)]
pub struct FlaggedPublish<'a> {
    /// When X's and O's seats count as present.
    pub rules: [PresentIf; 2],
    /// The channel, as [`PubSub::publish`] names it.
    pub channel: &'a str,
    /// The text, its flags left open.
    pub payload: FlaggedPayload,
    /// The marker the flags are stored under, as [`Presence::mark`] stores
    /// one, as `"10"` (X present, O absent), and for how long.
    pub mark: (&'a str, Duration),
}

impl FlaggedPublish<'_> {
    /// The flags the rules give on `records` (X's, O's; a missing record is an empty one).
    #[must_use]
    pub fn flags(&self, records: &[PresenceRecord]) -> [bool; 2] {
        let record = |i: usize| records.get(i).copied().unwrap_or_default();
        [
            self.rules[0].holds(record(0)),
            self.rules[1].holds(record(1)),
        ]
    }
}

/// Flags as a marker's text: `"10"` for X present, O absent.
#[must_use]
pub fn flags_text(flags: [bool; 2]) -> String {
    flags.iter().map(|&f| if f { '1' } else { '0' }).collect()
}

/// [`Presence::seen_then_publish`] in steps, for a broker that has no
/// one-call form: `seen_then_presence`, then the publication and the mark
/// together. Those two are best effort, as a publication always is (the
/// change is committed; a stream that misses it resynchronises, and a mark
/// left stale makes the presence worker announce once more): their
/// failures are logged.
///
/// # Errors
/// The broker's, from `seen_then_presence`.
pub async fn seen_then_publish_in_steps<B: Presence + PubSub + ?Sized>(
    broker: &B,
    key: &str,
    at: i64,
    ttl: Duration,
    keys: &[String; 2],
    out: &FlaggedPublish<'_>,
) -> BrokerResult<(Option<i64>, Vec<PresenceRecord>)> {
    let (previous, records) = broker.seen_then_presence(key, at, ttl, keys).await?;
    let flags = out.flags(&records);
    let text = flags_text(flags);
    let (published, marked) = futures_util::future::join(
        broker.publish(out.channel, out.payload.fill(flags)),
        broker.mark(out.mark.0, &text, out.mark.1),
    )
    .await;
    if let Err(err) = published {
        tracing::warn!(channel = out.channel, error = %err, "could not publish a state");
    }
    if let Err(err) = marked {
        tracing::warn!(key = out.mark.0, error = %err, "could not mark the presence shown");
    }
    Ok((previous, records))
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
