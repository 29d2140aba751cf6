//! The Redis broker: state shared by any number of instances, on one Redis
//! node or a Redis Cluster (`redis_conn.rs` says how each is talked to).
//!
//! Events arrive on one subscription connection per instance, subscribed to
//! the channels (`<prefix>ev:<channel>`) of this instance's local
//! subscribers only — subscribed on a channel's first local subscriber,
//! unsubscribed after its last — so an instance receives the events of the
//! matches it streams and no others. The hub fans them out locally; after
//! the subscription connection is lost and re-made, every local subscriber
//! is told to resynchronise, because messages published in the gap are gone.
//!
//! Over 400 lines: one trait implementation per broker concern on one
//! connection, and its Lua scripts (the queue's are in `redis_queue.rs`).

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use redis::aio::PubSubStream;
use redis::cluster::ClusterClientBuilder;
use redis::{AsyncCommands, PushInfo, PushKind, Script};

use super::hub::Hub;
use super::redis_conn::{Commands, Subscriber};
use super::redis_local::Connections;
use super::{
    BrokerError, BrokerResult, FlaggedPublish, Health, Notice, Presence, PresenceRecord, PresentIf,
    PubSub, RateDecision, RateLimiter, Slots, Subscription,
};

/// Counts a hit and starts the window on the first one, atomically.
const RATE_SCRIPT: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
";

/// Lua that keeps the newest of the stored (`KEYS[1]`) and the reported
/// (`ARGV[1]`) time for `ARGV[2]` ms, leaving the stored one in `previous`.
macro_rules! seen_lua {
    () => {
        r"
local previous = redis.call('GET', KEYS[1])
local old = tonumber(previous or '0')
local at = tonumber(ARGV[1])
if at < old then at = old end
redis.call('SET', KEYS[1], at, 'PX', ARGV[2])
"
    };
}

/// Lua that appends to `out`, for each pair of keys from `KEYS[first]` on
/// (a seen time, a lease set), the seen time and the number of live leases.
macro_rules! presence_lua {
    ($first:literal) => {
        concat!(
            r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = ",
            $first,
            r", #KEYS, 2 do
  out[#out + 1] = redis.call('GET', KEYS[i]) or false
  out[#out + 1] = redis.call('ZCOUNT', KEYS[i + 1], '(' .. now, '+inf')
end
"
        )
    };
}

/// Keeps the newest of the stored and the reported time.
const SEEN_SCRIPT: &str = concat!(seen_lua!(), "return previous\n");

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
const PRESENCE_SCRIPT: &str = concat!("local out = {}\n", presence_lua!(1), "return out\n");

/// [`SEEN_SCRIPT`] on `KEYS[1]`, then [`PRESENCE_SCRIPT`] on the pairs from
/// `KEYS[2]` on: the previous seen time first, then the pairs' answers. For
/// one node only: on a cluster the seats' keys sit in different slots.
const SEEN_PRESENCE_SCRIPT: &str = concat!(
    seen_lua!(),
    "local out = {previous or false}\n",
    presence_lua!(2),
    "return out\n"
);

/// [`SEEN_PRESENCE_SCRIPT`] on `KEYS[1]` and the two seats' pairs (X's
/// from `KEYS[3]`, O's from `KEYS[5]`), then publishes on `ARGV[5]` the text
/// `ARGV[6]`, X's flag, `ARGV[7]`, O's flag, `ARGV[8]`, and marks the flags
/// (`"10"`: X present, O absent) under `KEYS[2]` for `ARGV[9]` ms. A seat's
/// flag is `true` when its rule (`ARGV[3]` for X, `ARGV[4]` for O) is `*`
/// (always), or it has a live lease, or it was seen after the rule's time:
/// `PresentIf::holds`, which the service applies to the same records for
/// its own answer. For one node only, as that script is.
const SEEN_PUBLISH_SCRIPT: &str = concat!(
    seen_lua!(),
    "local out = {previous or false}\n",
    presence_lua!(3),
    r"
local function present(seen, leases, rule)
  if rule == '*' or leases > 0 then return true end
  return seen ~= false and tonumber(seen) > tonumber(rule)
end
local x = present(out[2], out[3], ARGV[3])
local o = present(out[4], out[5], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[6] .. tostring(x) .. ARGV[7] .. tostring(o) .. ARGV[8])
redis.call('SET', KEYS[2], (x and '1' or '0') .. (o and '1' or '0'), 'PX', ARGV[9])
return out
"
);

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
    conn: Connections,
    prefix: String,
    hub: Arc<Hub>,
    remote: Arc<tokio::sync::Mutex<Remote>>,
    rate_script: Arc<Script>,
    seen_script: Arc<Script>,
    hold_script: Arc<Script>,
    presence_script: Arc<Script>,
    seen_presence_script: Arc<Script>,
    seen_publish_script: Arc<Script>,
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
        let conn = Connections::single(client.clone(), client.get_connection_manager().await?);
        let (idle_tx, idle_rx) = tokio::sync::mpsc::unbounded_channel();
        let hub = Arc::new(Hub::with_idle(idle_tx));
        let (sink, stream) = client.get_async_pubsub().await?.split();
        let remote = Arc::new(tokio::sync::Mutex::new(Remote {
            sink: Subscriber::Single(sink),
            subscribed: HashSet::new(),
        }));
        tokio::spawn(listen(
            client,
            stream,
            Arc::clone(&hub),
            Arc::clone(&remote),
            prefix.to_owned(),
        ));
        Ok(RedisBroker::assemble(conn, hub, remote, idle_rx, prefix))
    }

    /// Connects to a Redis Cluster through any of its `nodes` (the others
    /// are discovered) and starts the event subscription task; otherwise as
    /// [`RedisBroker::connect`].
    ///
    /// # Errors
    /// No node can be reached, or the cluster does not serve every slot.
    pub async fn connect_cluster(nodes: &[&str], prefix: &str) -> BrokerResult<Arc<RedisBroker>> {
        let commands = ClusterClientBuilder::new(nodes.to_vec()).build()?;
        let conn = Connections::cluster(Commands::Cluster(commands.get_async_connection().await?));
        let (push_tx, push_rx) = tokio::sync::mpsc::unbounded_channel();
        let subscriptions = ClusterClientBuilder::new(nodes.to_vec())
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(push_tx)
            .build()?;
        let sink = subscriptions.get_async_connection().await?;
        let (idle_tx, idle_rx) = tokio::sync::mpsc::unbounded_channel();
        let hub = Arc::new(Hub::with_idle(idle_tx));
        let remote = Arc::new(tokio::sync::Mutex::new(Remote {
            sink: Subscriber::Cluster(sink),
            subscribed: HashSet::new(),
        }));
        tokio::spawn(listen_pushes(
            push_rx,
            Arc::downgrade(&hub),
            prefix.to_owned(),
        ));
        Ok(RedisBroker::assemble(conn, hub, remote, idle_rx, prefix))
    }

    /// The broker around its connections; starts the task that unsubscribes
    /// channels whose last local subscriber left.
    fn assemble(
        conn: Connections,
        hub: Arc<Hub>,
        remote: Arc<tokio::sync::Mutex<Remote>>,
        idle_rx: tokio::sync::mpsc::UnboundedReceiver<String>,
        prefix: &str,
    ) -> Arc<RedisBroker> {
        tokio::spawn(unsubscribe_idle(
            idle_rx,
            Arc::downgrade(&hub),
            Arc::clone(&remote),
            prefix.to_owned(),
        ));
        Arc::new(RedisBroker {
            conn,
            prefix: prefix.to_owned(),
            hub,
            remote,
            rate_script: Arc::new(Script::new(RATE_SCRIPT)),
            seen_script: Arc::new(Script::new(SEEN_SCRIPT)),
            hold_script: Arc::new(Script::new(HOLD_SCRIPT)),
            presence_script: Arc::new(Script::new(PRESENCE_SCRIPT)),
            seen_presence_script: Arc::new(Script::new(SEEN_PRESENCE_SCRIPT)),
            seen_publish_script: Arc::new(Script::new(SEEN_PUBLISH_SCRIPT)),
            slot_script: Arc::new(Script::new(SLOT_SCRIPT)),
            queue_scripts: Arc::new(super::redis_queue::QueueScripts::new()),
        })
    }

    /// The full Redis key for a broker-local name.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The matchmaking queue's and locks' scripts.
    pub(super) fn queue_scripts(&self) -> &super::redis_queue::QueueScripts {
        &self.queue_scripts
    }

    /// A connection for commands from the current runtime (see `redis_local`).
    pub fn connection(&self) -> Commands {
        self.conn.get()
    }

    /// How many runtimes' own command connections are kept (tests).
    #[doc(hidden)]
    pub fn own_connections(&self) -> usize {
        self.conn.own_count()
    }

    /// Whether the current runtime has its own command connection open (tests).
    #[doc(hidden)]
    pub fn runtime_has_own_connection(&self) -> bool {
        self.conn.has_own()
    }

    /// Deletes every key under this broker's prefix (tests use a prefix each).
    ///
    /// # Errors
    /// Redis errors.
    pub async fn delete_all_keys(&self) -> BrokerResult<()> {
        let keys = self
            .conn
            .get()
            .keys_matching(&format!("{}*", self.prefix))
            .await?;
        // One UNLINK per key (keys of one call must share a slot on a cluster).
        for chunk in keys.chunks(500) {
            let unlinks: Vec<redis::Cmd> = chunk.iter().map(redis::Cmd::unlink).collect();
            let _: Vec<i64> = self.conn.get().each(&unlinks).await?;
        }
        Ok(())
    }
}

/// The instance's subscription connection: the Redis channels it is
/// subscribed to, which are the hub's watched channels (changed under this
/// lock only, so a channel's SUBSCRIBE and UNSUBSCRIBE never cross).
struct Remote {
    sink: Subscriber,
    subscribed: HashSet<String>,
}

/// The Redis channel of a broker-local channel.
fn event_channel(prefix: &str, channel: &str) -> String {
    format!("{prefix}ev:{channel}")
}

/// Hands each message of the subscription connection to the hub; when the
/// connection is lost, makes a new one, subscribes it to every watched
/// channel again and tells every local subscriber to resynchronise
/// (messages published in the gap are gone).
async fn listen(
    client: redis::Client,
    first: PubSubStream,
    hub: Arc<Hub>,
    remote: Arc<tokio::sync::Mutex<Remote>>,
    prefix: String,
) {
    let channel_start = prefix.len() + 3;
    let mut stream = first;
    let mut backoff = Duration::from_millis(100);
    loop {
        while let Some(msg) = stream.next().await {
            hub.note_received();
            let channel = msg.get_channel_name();
            let Some(local) = channel.get(channel_start..) else {
                continue;
            };
            if let Ok(payload) = msg.get_payload::<String>() {
                hub.deliver(local, Notice::Message(payload.into()));
            }
        }
        tracing::warn!("event subscription lost");
        if Arc::strong_count(&hub) == 1 {
            return; // the broker is gone
        }
        loop {
            match resubscribe(&client, &hub, &remote, &prefix).await {
                Ok(next) => {
                    tracing::info!("event subscription re-established");
                    hub.resync_all();
                    stream = next;
                    backoff = Duration::from_millis(100);
                    break;
                }
                Err(err) => {
                    tracing::warn!(error = %err, "event subscription failed, retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

/// A new subscription connection, subscribed to every watched channel.
async fn resubscribe(
    client: &redis::Client,
    hub: &Hub,
    remote: &tokio::sync::Mutex<Remote>,
    prefix: &str,
) -> BrokerResult<PubSubStream> {
    let (mut sink, stream) = client.get_async_pubsub().await?.split();
    let mut remote = remote.lock().await;
    let watched = hub.watched();
    for batch in watched.chunks(500) {
        let names: Vec<String> = batch.iter().map(|c| event_channel(prefix, c)).collect();
        sink.subscribe(&names).await?;
    }
    remote.sink = Subscriber::Single(sink);
    remote.subscribed = watched.into_iter().collect();
    Ok(stream)
}

/// Hands each sharded message a cluster connection pushes to the hub. After
/// a node's connection is lost, the crate reconnects and subscribes again by
/// itself, so every local subscriber is told to resynchronise when the loss
/// is reported and again once a channel is subscribed again (messages
/// published in the gap are gone; the second resync covers a reload that
/// raced the resubscription). Ends with the broker.
async fn listen_pushes(
    mut pushes: tokio::sync::mpsc::UnboundedReceiver<PushInfo>,
    hub: Weak<Hub>,
    prefix: String,
) {
    let channel_start = prefix.len() + 3;
    let mut reconnecting = false;
    while let Some(push) = pushes.recv().await {
        let Some(hub) = hub.upgrade() else { return };
        match push.kind {
            PushKind::SMessage | PushKind::Message => {
                hub.note_received();
                let mut data = push.data.into_iter();
                let (Some(channel), Some(payload)) = (data.next(), data.next()) else {
                    continue;
                };
                let (Ok(channel), Ok(payload)) = (
                    redis::from_redis_value::<String>(channel),
                    redis::from_redis_value::<String>(payload),
                ) else {
                    continue;
                };
                if let Some(local) = channel.get(channel_start..) {
                    hub.deliver(local, Notice::Message(payload.into()));
                }
            }
            PushKind::Disconnection => {
                tracing::warn!("event subscription lost on a cluster node");
                reconnecting = true;
                hub.resync_all();
            }
            PushKind::SSubscribe if reconnecting => {
                tracing::info!("event subscription re-established");
                reconnecting = false;
                hub.resync_all();
            }
            _ => {}
        }
    }
}

/// Unsubscribes from each channel whose last local subscriber left, unless
/// one came back meanwhile; ends with the broker.
async fn unsubscribe_idle(
    mut idle: tokio::sync::mpsc::UnboundedReceiver<String>,
    hub: Weak<Hub>,
    remote: Arc<tokio::sync::Mutex<Remote>>,
    prefix: String,
) {
    while let Some(channel) = idle.recv().await {
        let Some(hub) = hub.upgrade() else { return };
        let mut remote = remote.lock().await;
        if hub.is_watched(&channel) || !remote.subscribed.remove(&channel) {
            continue;
        }
        if let Err(err) = remote
            .sink
            .unsubscribe(&event_channel(&prefix, &channel))
            .await
        {
            // A lost connection drops its subscriptions anyway.
            tracing::warn!(error = %err, channel = %channel, "could not unsubscribe");
        }
    }
}

impl RateLimiter for RedisBroker {
    fn hit<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        window: Duration,
    ) -> BoxFuture<'a, BrokerResult<RateDecision>> {
        Box::pin(async move {
            let mut conn = self.conn.get();
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
            let mut conn = self.conn.get();
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
            let mut conn = self.conn.get();
            let _: i64 = conn
                .publish_cmd(&self.key(&format!("ev:{channel}")), &payload)
                .query_async(&mut conn)
                .await?;
            Ok(())
        })
    }

    fn publish_many<'a>(
        &'a self,
        messages: &'a [(String, String)],
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            // Bounded batches: one round trip per ten thousand messages on
            // one node.
            let conn = self.conn.get();
            for batch in messages.chunks(10_000) {
                let cmds: Vec<redis::Cmd> = batch
                    .iter()
                    .map(|(channel, payload)| {
                        conn.publish_cmd(&self.key(&format!("ev:{channel}")), payload)
                    })
                    .collect();
                let _: Vec<i64> = conn.each(&cmds).await?;
            }
            Ok(())
        })
    }

    fn subscribe<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, BrokerResult<Subscription>> {
        let sub = self.hub.subscribe(channel);
        Box::pin(async move {
            // The first local subscriber subscribes the instance; SUBSCRIBE
            // returns once Redis confirmed it, so later messages arrive.
            let mut remote = self.remote.lock().await;
            if !remote.subscribed.contains(channel) {
                let name = event_channel(&self.prefix, channel);
                match remote.sink.subscribe(&name).await {
                    Ok(()) => {
                        remote.subscribed.insert(channel.to_owned());
                    }
                    // The connection is down: the listener subscribes every
                    // watched channel again when it is back, and tells this
                    // subscriber to resynchronise.
                    Err(err) => {
                        tracing::warn!(error = %err, channel = %name, "could not subscribe")
                    }
                }
            }
            Ok(sub)
        })
    }

    fn received(&self) -> u64 {
        self.hub.received()
    }
}

impl Presence for RedisBroker {
    fn marks<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, BrokerResult<Vec<Option<String>>>> {
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            // One GET per key rather than one MGET, whose keys would span
            // slots on a cluster.
            let gets: Vec<redis::Cmd> = keys
                .iter()
                .map(|k| redis::Cmd::get(self.key(&format!("mark:{k}"))))
                .collect();
            Ok(self.conn.get().each(&gets).await?)
        })
    }

    fn seen<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<i64>>> {
        Box::pin(async move {
            let mut conn = self.conn.get();
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let previous: Option<i64> = self
                .seen_script
                .key(self.key(&format!("seen:{{{key}}}")))
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
            let mut conn = self.conn.get();
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
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            // One script call per lease (each key is a slot of its own on a
            // cluster), in bounded batches.
            for chunk in leases.chunks(256) {
                let calls: Vec<_> = chunk
                    .iter()
                    .map(|(key, holder)| {
                        let mut call = self.hold_script.prepare_invoke();
                        call.key(self.key(&format!("lease:{{{key}}}")))
                            .arg(ttl_ms)
                            .arg(holder);
                        call
                    })
                    .collect();
                let _: Vec<i64> = self
                    .conn
                    .get()
                    .invoke_each(&self.hold_script, &calls)
                    .await?;
            }
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str, holder: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.get();
            let _: i64 = conn
                .zrem(self.key(&format!("lease:{{{key}}}")), holder)
                .await?;
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
            // One script call per key: its seen time and its leases share the
            // key's hash tag, so each call stays in one slot on a cluster.
            let calls: Vec<_> = keys
                .iter()
                .map(|key| {
                    let mut call = self.presence_script.prepare_invoke();
                    call.key(self.key(&format!("seen:{{{key}}}")))
                        .key(self.key(&format!("lease:{{{key}}}")));
                    call
                })
                .collect();
            let pairs: Vec<(Option<i64>, Option<i64>)> = self
                .conn
                .get()
                .invoke_each(&self.presence_script, &calls)
                .await?;
            Ok(pairs.into_iter().map(presence_record).collect())
        })
    }

    fn seen_then_presence<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<(Option<i64>, Vec<PresenceRecord>)>> {
        Box::pin(async move {
            if self.conn.is_cluster() {
                // Each seat's keys have a slot of their own: two calls.
                let previous = self.seen(key, at, ttl).await?;
                return Ok((previous, self.presence(keys).await?));
            }
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut call = self.seen_presence_script.prepare_invoke();
            call.key(self.key(&format!("seen:{{{key}}}")));
            for key in keys {
                call.key(self.key(&format!("seen:{{{key}}}")))
                    .key(self.key(&format!("lease:{{{key}}}")));
            }
            call.arg(at).arg(ttl_ms);
            let mut conn = self.conn.get();
            let answers: Vec<Option<i64>> = call.invoke_async(&mut conn).await?;
            seen_and_records(&answers)
        })
    }

    fn seen_then_publish<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
        keys: &'a [String; 2],
        out: &'a FlaggedPublish<'a>,
    ) -> BoxFuture<'a, BrokerResult<(Option<i64>, Vec<PresenceRecord>)>> {
        Box::pin(async move {
            if self.conn.is_cluster() {
                // The seats' keys, the mark and the channel have slots of their own.
                return super::seen_then_publish_in_steps(self, key, at, ttl, keys, out).await;
            }
            let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut call = self.seen_publish_script.prepare_invoke();
            call.key(self.key(&format!("seen:{{{key}}}")))
                .key(self.key(&format!("mark:{}", out.mark.0)));
            for key in keys {
                call.key(self.key(&format!("seen:{{{key}}}")))
                    .key(self.key(&format!("lease:{{{key}}}")));
            }
            call.arg(at).arg(millis(ttl));
            for rule in out.rules {
                match rule {
                    PresentIf::Always => call.arg("*"),
                    PresentIf::SeenAfter(after) => call.arg(after),
                };
            }
            call.arg(self.key(&format!("ev:{}", out.channel)));
            for part in &out.payload.parts {
                call.arg(part.as_str());
            }
            call.arg(millis(out.mark.1));
            let mut conn = self.conn.get();
            let answers: Vec<Option<i64>> = call.invoke_async(&mut conn).await?;
            seen_and_records(&answers)
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
            let mut conn = self.conn.get();
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
            let mut conn = self.conn.get();
            let _: i64 = conn.zrem(self.key(&format!("slots:{key}")), member).await?;
            Ok(())
        })
    }
}

impl Health for RedisBroker {
    fn ping(&self) -> BoxFuture<'_, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.conn.get();
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

/// A presence script's answer for one key: its seen time and live leases.
/// The answer of a script that ends as [`SEEN_PRESENCE_SCRIPT`] does: the
/// previous seen time, then a seen time and a lease count per key pair.
fn seen_and_records(answers: &[Option<i64>]) -> BrokerResult<(Option<i64>, Vec<PresenceRecord>)> {
    let (previous, pairs) = answers
        .split_first()
        .ok_or_else(|| BrokerError::Unavailable("an empty answer to a presence call".into()))?;
    Ok((
        *previous,
        pairs
            .chunks_exact(2)
            .map(|pair| presence_record((pair[0], pair[1])))
            .collect(),
    ))
}

fn presence_record((seen, leases): (Option<i64>, Option<i64>)) -> PresenceRecord {
    PresenceRecord {
        last_seen: seen,
        leased: leases.unwrap_or(0) > 0,
    }
}
