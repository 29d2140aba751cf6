//! The Redis broker: state shared by any number of instances.
//!
//! Commands go through a [`ConnectionManager`] (it reconnects by itself).
//! Events arrive on one pattern subscription per instance (`<prefix>ev:*`)
//! and are fanned out locally by the hub; after the subscription connection
//! is lost and re-made, every local subscriber is told to resynchronise,
//! because messages published in the gap are gone.
//!
//! Over 400 lines: one trait implementation per broker concern on one
//! connection, and its Lua scripts (the queue's are in `redis_queue.rs`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use super::hub::Hub;
use super::{
    BrokerError, BrokerResult, Health, Notice, Presence, PresenceRecord, PubSub, RateDecision,
    RateLimiter, Slots, Subscription,
};

/// Counts a hit and starts the window on the first one, atomically.
const RATE_SCRIPT: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
";

/// Keeps the newest of the stored and the reported time.
const SEEN_SCRIPT: &str = r"
local previous = redis.call('GET', KEYS[1])
local old = tonumber(previous or '0')
local at = tonumber(ARGV[1])
if at < old then at = old end
redis.call('SET', KEYS[1], at, 'PX', ARGV[2])
return previous
";

/// Takes or renews leases (one holder per key) until `ARGV[1]` ms from now
/// on Redis's own clock, so every instance measures leases alike; drops
/// lapsed holders, and lets the key itself lapse with its last lease.
const HOLD_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + ttl, ARGV[i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
return #KEYS
";

/// For each pair of keys (seen, leases): the seen time, and how many leases
/// are live on Redis's clock.
const PRESENCE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS, 2 do
  out[#out + 1] = redis.call('GET', KEYS[i]) or false
  out[#out + 1] = redis.call('ZCOUNT', KEYS[i + 1], '(' .. now, '+inf')
end
return out
";

/// Takes or renews a slot of a bounded set (a sorted set scored by lease
/// end, on the server's clock), dropping ended leases first.
const SLOT_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// A broker on Redis.
#[derive(Clone)]
pub struct RedisBroker {
    conn: ConnectionManager,
    prefix: String,
    hub: Arc<Hub>,
    rate_script: Arc<Script>,
    seen_script: Arc<Script>,
    hold_script: Arc<Script>,
    presence_script: Arc<Script>,
    slot_script: Arc<Script>,
    queue_scripts: Arc<super::redis_queue::QueueScripts>,
}

impl std::fmt::Debug for RedisBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBroker")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisBroker {
    /// Connects to Redis and starts the event subscription task. Keys and
    /// channels are prefixed with `prefix`, so several deployments (or tests)
    /// can share one Redis.
    ///
    /// # Errors
    /// Redis cannot be reached.
    pub async fn connect(url: &str, prefix: &str) -> BrokerResult<Arc<RedisBroker>> {
        let client = redis::Client::open(url)?;
        let conn = client.get_connection_manager().await?;
        let hub = Arc::new(Hub::default());
        let pattern = format!("{prefix}ev:*");
        let channel_start = prefix.len() + 3;
        let mut first = Some(subscribe_pattern(&client, &pattern).await?);
        let task_hub = Arc::clone(&hub);
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            loop {
                let stream = match first.take() {
                    Some(stream) => stream,
                    None => match subscribe_pattern(&client, &pattern).await {
                        Ok(stream) => {
                            tracing::info!("event subscription re-established");
                            // Anything published while we were away is lost.
                            task_hub.resync_all();
                            backoff = Duration::from_millis(100);
                            stream
                        }
                        Err(err) => {
                            tracing::warn!(error = %err, "event subscription failed, retrying");
                            tokio::time::sleep(backoff).await;
                            backoff = (backoff * 2).min(Duration::from_secs(5));
                            continue;
                        }
                    },
                };
                let mut stream = stream;
                while let Some(msg) = stream.next().await {
                    let channel = msg.get_channel_name();
                    let Some(local) = channel.get(channel_start..) else {
                        continue;
                    };
                    if let Ok(payload) = msg.get_payload::<String>() {
                        task_hub.deliver(local, Notice::Message(payload.into()));
                    }
                }
                tracing::warn!("event subscription lost");
                if Arc::strong_count(&task_hub) == 1 {
                    return; // the broker is gone
                }
            }
        });
        Ok(Arc::new(RedisBroker {
            conn,
            prefix: prefix.to_owned(),
            hub,
            rate_script: Arc::new(Script::new(RATE_SCRIPT)),
            seen_script: Arc::new(Script::new(SEEN_SCRIPT)),
            hold_script: Arc::new(Script::new(HOLD_SCRIPT)),
            presence_script: Arc::new(Script::new(PRESENCE_SCRIPT)),
            slot_script: Arc::new(Script::new(SLOT_SCRIPT)),
            queue_scripts: Arc::new(super::redis_queue::QueueScripts::new()),
        }))
    }

    /// The full Redis key for a broker-local name.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The matchmaking queue's and locks' scripts.
    pub(super) fn queue_scripts(&self) -> &super::redis_queue::QueueScripts {
        &self.queue_scripts
    }

    /// A connection for commands.
    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// Deletes every key under this broker's prefix (tests use a prefix each).
    ///
    /// # Errors
    /// Redis errors.
    pub async fn delete_all_keys(&self) -> BrokerResult<()> {
        let mut conn = self.conn.clone();
        let keys: Vec<String> = {
            let mut iter: redis::AsyncIter<'_, String> =
                conn.scan_match(format!("{}*", self.prefix)).await?;
            let mut keys = Vec::new();
            while let Some(key) = iter.next_item().await {
                keys.push(key?);
            }
            keys
        };
        for chunk in keys.chunks(500) {
            let _: () = conn.del(chunk).await?;
        }
        Ok(())
    }
}

async fn subscribe_pattern(
    client: &redis::Client,
    pattern: &str,
) -> BrokerResult<redis::aio::PubSubStream> {
    let (mut sink, stream) = client.get_async_pubsub().await?.split();
    sink.psubscribe(pattern).await?;
    Ok(stream)
}

impl RateLimiter for RedisBroker {
    fn hit<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        window: Duration,
    ) -> BoxFuture<'a, BrokerResult<RateDecision>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
            let (count, ttl): (u64, i64) = self
                .rate_script
                .key(self.key(&format!("rl:{key}")))
                .arg(window_ms)
                .invoke_async(&mut conn)
                .await?;
            Ok(if count > u64::from(limit) {
                RateDecision::Limited {
                    retry_after: Duration::from_millis(u64::try_from(ttl.max(1)).unwrap_or(1)),
                }
            } else {
                RateDecision::Allowed
            })
        })
    }

    fn peek<'a>(&'a self, key: &'a str) -> BoxFuture<'a, BrokerResult<Option<(u32, Duration)>>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let full = self.key(&format!("rl:{key}"));
            let (count, ttl): (Option<u64>, i64) = redis::pipe()
                .atomic()
                .get(&full)
                .pttl(&full)
                .query_async(&mut conn)
                .await?;
            Ok(match (count, u64::try_from(ttl)) {
                (Some(n), Ok(ms)) if ms > 0 => Some((
                    u32::try_from(n).unwrap_or(u32::MAX),
                    Duration::from_millis(ms),
                )),
                _ => None,
            })
        })
    }
}

impl PubSub for RedisBroker {
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _: i64 = conn
                .publish(self.key(&format!("ev:{channel}")), payload)
                .await?;
            Ok(())
        })
    }

    fn publish_many<'a>(
        &'a self,
        messages: &'a [(String, String)],
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            // Bounded pipelines: one round trip per ten thousand messages.
            for batch in messages.chunks(10_000) {
                let mut pipe = redis::pipe();
                for (channel, payload) in batch {
                    pipe.publish(self.key(&format!("ev:{channel}")), payload)
                        .ignore();
                }
                let _: () = pipe.query_async(&mut conn).await?;
            }
            Ok(())
        })
    }

    fn subscribe<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, BrokerResult<Subscription>> {
        // The pattern subscription is already in place: registering locally is enough.
        let sub = self.hub.subscribe(channel);
        Box::pin(async move { Ok(sub) })
    }
}

impl Presence for RedisBroker {
    fn marks<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, BrokerResult<Vec<Option<String>>>> {
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let mut conn = self.conn.clone();
            let full: Vec<String> = keys
                .iter()
                .map(|k| self.key(&format!("mark:{k}")))
                .collect();
            Ok(redis::cmd("MGET").arg(&full).query_async(&mut conn).await?)
        })
    }

    fn seen<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<i64>>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let previous: Option<i64> = self
                .seen_script
                .key(self.key(&format!("seen:{key}")))
                .arg(at)
                .arg(ttl_ms)
                .invoke_async(&mut conn)
                .await?;
            Ok(previous)
        })
    }

    fn mark<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let previous: Option<String> = redis::cmd("SET")
                .arg(self.key(&format!("mark:{key}")))
                .arg(value)
                .arg("PX")
                .arg(ttl_ms)
                .arg("GET")
                .query_async(&mut conn)
                .await?;
            Ok(previous)
        })
    }

    fn hold<'a>(
        &'a self,
        leases: &'a [(String, String)],
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            // Bounded batches keep each script call short.
            for chunk in leases.chunks(256) {
                let mut call = self.hold_script.prepare_invoke();
                call.arg(ttl_ms);
                for (key, holder) in chunk {
                    call.key(self.key(&format!("lease:{key}"))).arg(holder);
                }
                let _: i64 = call.invoke_async(&mut conn).await?;
            }
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str, holder: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _: i64 = conn.zrem(self.key(&format!("lease:{key}")), holder).await?;
            Ok(())
        })
    }

    fn presence<'a>(
        &'a self,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<Vec<PresenceRecord>>> {
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let mut conn = self.conn.clone();
            let mut call = self.presence_script.prepare_invoke();
            for key in keys {
                call.key(self.key(&format!("seen:{key}")))
                    .key(self.key(&format!("lease:{key}")));
            }
            let flat: Vec<Option<i64>> = call.invoke_async(&mut conn).await?;
            Ok(flat
                .chunks(2)
                .map(|pair| PresenceRecord {
                    last_seen: pair.first().copied().flatten(),
                    leased: pair.get(1).copied().flatten().unwrap_or(0) > 0,
                })
                .collect())
        })
    }
}

impl Slots for RedisBroker {
    fn acquire<'a>(
        &'a self,
        key: &'a str,
        member: &'a str,
        cap: u32,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let held: i64 = self
                .slot_script
                .key(self.key(&format!("slots:{key}")))
                .arg(member)
                .arg(cap)
                .arg(ttl_ms)
                .invoke_async(&mut conn)
                .await?;
            Ok(held == 1)
        })
    }

    fn release_slot<'a>(
        &'a self,
        key: &'a str,
        member: &'a str,
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _: i64 = conn.zrem(self.key(&format!("slots:{key}")), member).await?;
            Ok(())
        })
    }
}

impl Health for RedisBroker {
    fn ping(&self) -> BoxFuture<'_, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let pong: String = redis::cmd("PING").query_async(&mut conn).await?;
            if pong == "PONG" {
                Ok(())
            } else {
                Err(BrokerError::Unavailable(format!(
                    "unexpected PING answer {pong}"
                )))
            }
        })
    }

    fn kind(&self) -> &'static str {
        "redis"
    }
}
