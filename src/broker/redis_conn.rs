//! The broker's Redis connections, for one Redis node or a Redis Cluster.
//!
//! Commands go through [`Commands`]: on one node a [`ConnectionManager`]
//! (it reconnects by itself); on a cluster the redis crate's
//! [`ClusterConnection`], which routes each command or script call to the
//! node serving its first key's hash slot and follows MOVED/ASK redirections.
//! A cluster pipeline must stay within one slot, so the calls the broker
//! batches over many keys (presence, leases, marks, publishing a round's
//! events) go through [`Commands::each`] and [`Commands::invoke_each`]: one
//! pipeline on one node, one concurrent call per key on a cluster (the
//! connection multiplexes them, so they still share round trips per node).
//!
//! Events: on one node classic `PUBLISH`/`SUBSCRIBE` on a dedicated
//! subscription connection; on a cluster sharded pub/sub (`SPUBLISH` /
//! `SSUBSCRIBE`, Redis 7), where a channel lives on the node of its hash slot
//! and a message travels only to that shard, instead of every message being
//! broadcast over the cluster bus to every node as classic `PUBLISH` is.
//! The crate delivers sharded messages as RESP3 pushes and subscribes again
//! by itself after a reconnection or a slot move, so the subscription
//! connection of a cluster speaks RESP3; the command connection keeps RESP2,
//! so every reply (and every Lua `false`) reads the same on both.

use futures_util::future::try_join_all;
use redis::aio::{ConnectionLike, ConnectionManager, PubSubSink};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, Script, ScriptInvocation};

/// Largest number of calls in flight at once from one [`Commands::each`] on
/// a cluster.
const CLUSTER_FAN_OUT: usize = 512;

/// The command connection: one node or a cluster.
#[derive(Clone)]
pub enum Commands {
    /// One Redis node.
    Single(ConnectionManager),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Commands {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, redis::Value> {
        match self {
            Commands::Single(c) => c.req_packed_command(cmd),
            Commands::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Commands::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Commands::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Commands::Single(c) => c.get_db(),
            Commands::Cluster(c) => c.get_db(),
        }
    }
}

impl Commands {
    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Commands::Cluster(_))
    }

    /// The command that publishes `payload` on `channel`: `SPUBLISH` on a
    /// cluster (sharded), `PUBLISH` on one node.
    pub fn publish_cmd(&self, channel: &str, payload: &str) -> Cmd {
        let mut cmd = redis::cmd(if self.is_cluster() {
            "SPUBLISH"
        } else {
            "PUBLISH"
        });
        cmd.arg(channel).arg(payload);
        cmd
    }

    /// Runs each of `cmds` (each within one hash slot) and returns their
    /// answers in order: one pipeline on one node; on a cluster, concurrent
    /// single calls, each routed to its slot's node.
    ///
    /// # Errors
    /// The first Redis error.
    pub async fn each<T: FromRedisValue>(&self, cmds: &[Cmd]) -> RedisResult<Vec<T>> {
        match self {
            Commands::Single(conn) => {
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.query_async(&mut conn.clone()).await
            }
            Commands::Cluster(conn) => {
                let mut out = Vec::with_capacity(cmds.len());
                for batch in cmds.chunks(CLUSTER_FAN_OUT) {
                    out.extend(
                        try_join_all(batch.iter().map(|cmd| {
                            let mut conn = conn.clone();
                            async move { cmd.query_async::<T>(&mut conn).await }
                        }))
                        .await?,
                    );
                }
                Ok(out)
            }
        }
    }

    /// Runs each call of `script` and returns their answers in order: on one
    /// node one pipeline that loads the script first; on a cluster concurrent
    /// calls, each routed by its first key (loading the script on that node
    /// when it answers NOSCRIPT).
    ///
    /// # Errors
    /// The first Redis error.
    pub async fn invoke_each<T: FromRedisValue>(
        &self,
        script: &Script,
        calls: &[ScriptInvocation<'_>],
    ) -> RedisResult<Vec<T>> {
        match self {
            Commands::Single(conn) => {
                let mut pipe = redis::pipe();
                pipe.load_script(script).ignore();
                for call in calls {
                    pipe.invoke_script(call);
                }
                pipe.query_async(&mut conn.clone()).await
            }
            Commands::Cluster(conn) => {
                let mut out = Vec::with_capacity(calls.len());
                for batch in calls.chunks(CLUSTER_FAN_OUT) {
                    out.extend(
                        try_join_all(batch.iter().map(|call| {
                            let mut conn = conn.clone();
                            async move { call.invoke_async::<T>(&mut conn).await }
                        }))
                        .await?,
                    );
                }
                Ok(out)
            }
        }
    }

    /// Every key matching `pattern`, on every node.
    ///
    /// # Errors
    /// Redis errors.
    pub async fn keys_matching(&self, pattern: &str) -> RedisResult<Vec<String>> {
        match self {
            Commands::Single(conn) => {
                let mut conn = conn.clone();
                let mut iter: redis::AsyncIter<'_, String> =
                    redis::AsyncCommands::scan_match(&mut conn, pattern).await?;
                let mut keys = Vec::new();
                while let Some(key) = iter.next_item().await {
                    keys.push(key?);
                }
                Ok(keys)
            }
            // The crate cannot follow a SCAN cursor across nodes; KEYS goes
            // to every primary and their answers are combined. Only the
            // tests' clean-up uses this, on small prefixes.
            Commands::Cluster(conn) => {
                redis::cmd("KEYS")
                    .arg(pattern)
                    .query_async(&mut conn.clone())
                    .await
            }
        }
    }
}

/// The subscription side: which connection SUBSCRIBE goes to.
pub enum Subscriber {
    /// The dedicated subscription connection of one node.
    Single(PubSubSink),
    /// The RESP3 cluster connection whose pushes carry the messages.
    Cluster(ClusterConnection),
}

impl Subscriber {
    /// Subscribes to `channel` (sharded on a cluster); returns once Redis
    /// confirmed it.
    ///
    /// # Errors
    /// Redis errors, or a lost connection.
    pub async fn subscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Subscriber::Single(sink) => sink.subscribe(channel).await,
            Subscriber::Cluster(conn) => conn.ssubscribe(channel).await,
        }
    }

    /// Unsubscribes from `channel`.
    ///
    /// # Errors
    /// Redis errors, or a lost connection.
    pub async fn unsubscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Subscriber::Single(sink) => sink.unsubscribe(channel).await,
            Subscriber::Cluster(conn) => conn.sunsubscribe(channel).await,
        }
    }
}
