//! The matchmaking queue and locks on Redis. Keys, under the broker prefix:
//! `mm:t:<ticket>` (a hash per ticket), `mm:q:<ladder>` (a sorted set of the
//! queued tickets by rating), `mm:p:<player>` (the player's latest ticket),
//! `lock:<name>`. Every change that must be atomic is one Lua script.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::{AsyncCommands, Script};

use super::redis::RedisBroker;
use super::{
    BrokerError, BrokerResult, Cancelled, Enqueued, Locks, MatchQueue, Ticket, TicketStatus,
};

/// The queue's and locks' Lua scripts, hashed once when the broker connects
/// (`Script::new` computes the SHA1 that `EVALSHA` sends).
pub struct QueueScripts {
    enqueue: Script,
    touch: Script,
    cancel: Script,
    claim: Script,
    release: Script,
    lock: Script,
    unlock: Script,
}

impl QueueScripts {
    /// Builds every script.
    pub fn new() -> QueueScripts {
        QueueScripts {
            enqueue: Script::new(ENQUEUE),
            touch: Script::new(TOUCH),
            cancel: Script::new(CANCEL),
            claim: Script::new(CLAIM),
            release: Script::new(RELEASE),
            lock: Script::new(LOCK),
            unlock: Script::new(UNLOCK),
        }
    }
}

impl Default for QueueScripts {
    fn default() -> Self {
        QueueScripts::new()
    }
}

/// How long a finished ticket stays readable.
const FINISHED_TICKET_TTL_MS: u64 = 24 * 3600 * 1000;

/// ARGV: prefix, id, player, ladder, rating, created_at, seen_at, last_x_at, last_opponent.
const ENQUEUE: &str = r"
local p = ARGV[1]
local current = redis.call('GET', p .. 'mm:p:' .. ARGV[3])
if current and redis.call('HGET', p .. 'mm:t:' .. current, 'status') == 'queued' then
  return current
end
local t = p .. 'mm:t:' .. ARGV[2]
redis.call('HSET', t, 'id', ARGV[2], 'player', ARGV[3], 'ladder', ARGV[4], 'rating', ARGV[5],
  'created_at', ARGV[6], 'seen_at', ARGV[7], 'status', 'queued', 'last_x_at', ARGV[8], 'last_opp', ARGV[9])
redis.call('ZADD', p .. 'mm:q:' .. ARGV[4], ARGV[5], ARGV[2])
redis.call('SET', p .. 'mm:p:' .. ARGV[3], ARGV[2])
return false
";

/// ARGV: prefix, id, reason, ttl.
const CANCEL: &str = r"
local p = ARGV[1]
local t = p .. 'mm:t:' .. ARGV[2]
local status = redis.call('HGET', t, 'status')
if not status then return {'missing'} end
if status == 'matched' then return {'matched', redis.call('HGET', t, 'match_id')} end
if status == 'cancelled' then return {'cancelled'} end
local ladder = redis.call('HGET', t, 'ladder')
local player = redis.call('HGET', t, 'player')
redis.call('ZREM', p .. 'mm:q:' .. ladder, ARGV[2])
redis.call('HSET', t, 'status', 'cancelled', 'reason', ARGV[3])
redis.call('PEXPIRE', t, ARGV[4])
if redis.call('GET', p .. 'mm:p:' .. player) == ARGV[2] then
  redis.call('DEL', p .. 'mm:p:' .. player)
end
return {'ok'}
";

/// ARGV: prefix, a, b, match id, ttl. Both or neither.
const CLAIM: &str = r"
local p = ARGV[1]
if ARGV[2] == ARGV[3] then return 0 end
local ta = p .. 'mm:t:' .. ARGV[2]
local tb = p .. 'mm:t:' .. ARGV[3]
if redis.call('HGET', ta, 'status') ~= 'queued' or redis.call('HGET', tb, 'status') ~= 'queued' then
  return 0
end
for _, t in ipairs({ta, tb}) do
  redis.call('ZREM', p .. 'mm:q:' .. redis.call('HGET', t, 'ladder'), redis.call('HGET', t, 'id'))
  redis.call('HSET', t, 'status', 'matched', 'match_id', ARGV[4])
  redis.call('PEXPIRE', t, ARGV[5])
end
return 1
";

/// ARGV: prefix, a, b.
const RELEASE: &str = r"
local p = ARGV[1]
for i = 2, 3 do
  local t = p .. 'mm:t:' .. ARGV[i]
  if redis.call('HGET', t, 'status') == 'matched' then
    redis.call('HSET', t, 'status', 'queued')
    redis.call('HDEL', t, 'match_id')
    redis.call('PERSIST', t)
    redis.call('ZADD', p .. 'mm:q:' .. redis.call('HGET', t, 'ladder'), redis.call('HGET', t, 'rating'), ARGV[i])
  end
end
return 1
";

/// KEYS: ticket. ARGV: at.
const TOUCH: &str = r"
local old = tonumber(redis.call('HGET', KEYS[1], 'seen_at') or '-1')
if old and old >= 0 and tonumber(ARGV[1]) > old then
  redis.call('HSET', KEYS[1], 'seen_at', ARGV[1])
end
return 1
";

/// KEYS: lock. ARGV: token, ttl.
const LOCK: &str = r"
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// KEYS: lock. ARGV: token.
const UNLOCK: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
";

fn opt_i64(text: Option<&String>) -> Option<i64> {
    text.filter(|s| !s.is_empty()).and_then(|s| s.parse().ok())
}

fn ticket_from(fields: &HashMap<String, String>) -> Option<Ticket> {
    Some(Ticket {
        id: fields.get("id")?.clone(),
        player_id: fields.get("player")?.clone(),
        ladder: fields.get("ladder")?.clone(),
        rating: fields.get("rating")?.parse().ok()?,
        created_at: fields.get("created_at")?.parse().ok()?,
        seen_at: fields.get("seen_at")?.parse().ok()?,
        status: TicketStatus::parse(fields.get("status")?)?,
        match_id: fields.get("match_id").cloned().filter(|s| !s.is_empty()),
        reason: fields.get("reason").cloned().filter(|s| !s.is_empty()),
        last_x_at: opt_i64(fields.get("last_x_at")),
        last_opponent: fields.get("last_opp").cloned().filter(|s| !s.is_empty()),
    })
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl MatchQueue for RedisBroker {
    fn is_restored(&self) -> BoxFuture<'_, BrokerResult<bool>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.exists(self.key("mm:restored")).await?)
        })
    }

    fn mark_restored(&self) -> BoxFuture<'_, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: () = conn.set(self.key("mm:restored"), 1).await?;
            Ok(())
        })
    }

    fn enqueue<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, BrokerResult<Enqueued>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let existing: Option<String> = self
                .queue_scripts()
                .enqueue
                .arg(self.key(""))
                .arg(&ticket.id)
                .arg(&ticket.player_id)
                .arg(&ticket.ladder)
                .arg(ticket.rating)
                .arg(ticket.created_at)
                .arg(ticket.seen_at)
                .arg(ticket.last_x_at.map(|v| v.to_string()).unwrap_or_default())
                .arg(ticket.last_opponent.clone().unwrap_or_default())
                .invoke_async(&mut conn)
                .await?;
            Ok(match existing {
                Some(id) => Enqueued::AlreadyQueued(id),
                None => Enqueued::Queued,
            })
        })
    }

    fn ticket<'a>(&'a self, id: &'a str) -> BoxFuture<'a, BrokerResult<Option<Ticket>>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let fields: HashMap<String, String> =
                conn.hgetall(self.key(&format!("mm:t:{id}"))).await?;
            Ok(ticket_from(&fields))
        })
    }

    fn touch_ticket<'a>(&'a self, id: &'a str, at: i64) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: i64 = self
                .queue_scripts()
                .touch
                .key(self.key(&format!("mm:t:{id}")))
                .arg(at)
                .invoke_async(&mut conn)
                .await?;
            Ok(())
        })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        reason: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Cancelled>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let answer: Vec<String> = self
                .queue_scripts()
                .cancel
                .arg(self.key(""))
                .arg(id)
                .arg(reason)
                .arg(FINISHED_TICKET_TTL_MS)
                .invoke_async(&mut conn)
                .await?;
            Ok(match answer.first().map(String::as_str) {
                Some("ok") => Cancelled::Cancelled,
                Some("cancelled") => Cancelled::AlreadyCancelled,
                Some("matched") => {
                    Cancelled::AlreadyMatched(answer.get(1).cloned().unwrap_or_default())
                }
                Some("missing") => Cancelled::Missing,
                _ => return Err(BrokerError::Unavailable("unexpected cancel answer".into())),
            })
        })
    }

    fn queued<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<Vec<Ticket>>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let ids: Vec<String> = conn
                .zrange(self.key(&format!("mm:q:{ladder}")), 0, -1)
                .await?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.hgetall(self.key(&format!("mm:t:{id}")));
            }
            let all: Vec<HashMap<String, String>> = pipe.query_async(&mut conn).await?;
            Ok(all
                .iter()
                .filter_map(ticket_from)
                .filter(|t| t.status == TicketStatus::Queued)
                .collect())
        })
    }

    fn queue_size<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<u64>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.zcard(self.key(&format!("mm:q:{ladder}"))).await?)
        })
    }

    fn claim_pair<'a>(
        &'a self,
        a: &'a str,
        b: &'a str,
        match_id: &'a str,
    ) -> BoxFuture<'a, BrokerResult<bool>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let claimed: i64 = self
                .queue_scripts()
                .claim
                .arg(self.key(""))
                .arg(a)
                .arg(b)
                .arg(match_id)
                .arg(FINISHED_TICKET_TTL_MS)
                .invoke_async(&mut conn)
                .await?;
            Ok(claimed == 1)
        })
    }

    fn release_pair<'a>(&'a self, a: &'a str, b: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: i64 = self
                .queue_scripts()
                .release
                .arg(self.key(""))
                .arg(a)
                .arg(b)
                .invoke_async(&mut conn)
                .await?;
            Ok(())
        })
    }

    fn player_ticket<'a>(
        &'a self,
        player_id: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.get(self.key(&format!("mm:p:{player_id}"))).await?)
        })
    }
}

impl Locks for RedisBroker {
    fn try_lock<'a>(
        &'a self,
        name: &'a str,
        token: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let got: i64 = self
                .queue_scripts()
                .lock
                .key(self.key(&format!("lock:{name}")))
                .arg(token)
                .arg(ms(ttl))
                .invoke_async(&mut conn)
                .await?;
            Ok(got == 1)
        })
    }

    fn unlock<'a>(&'a self, name: &'a str, token: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: i64 = self
                .queue_scripts()
                .unlock
                .key(self.key(&format!("lock:{name}")))
                .arg(token)
                .invoke_async(&mut conn)
                .await?;
            Ok(())
        })
    }
}
