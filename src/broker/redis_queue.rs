//! The matchmaking queue and locks on Redis. Keys, under the broker prefix:
//! `{mm}:t:<ticket>` (a hash per ticket), `{mm}:q:<ladder>` (a sorted set of
//! the queued tickets by rating), `{mm}:ql:<ladder>` (each queued ticket's
//! fields as one line, for the pairing round's read), `{mm}:p:<player>`
//! (the player's latest ticket), `lock:<name>`. Every change that must be atomic is one Lua
//! script. On a Redis Cluster every key of the queue shares the hash tag
//! `{mm}`, so each script's keys sit in one slot (one node): a player holds
//! one live ticket across ladders, which one script checks atomically, so
//! the ladders' queues cannot be spread over slots. Every script names at
//! least one of its keys in `KEYS`, which routes it to that slot's node.
//!
//! Over 400 lines: the queue's Lua scripts and the Rust that calls them are
//! kept side by side, since each call must pass exactly the keys and
//! arguments its script reads.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::{AsyncCommands, Script};

use super::redis::RedisBroker;
use super::{
    BrokerError, BrokerResult, Cancelled, Enqueued, Locks, MatchQueue, PairClaim, Ticket,
    TicketStatus,
};

/// The queue's and locks' Lua scripts, hashed once when the broker connects
/// (`Script::new` computes the SHA1 that `EVALSHA` sends).
pub struct QueueScripts {
    enqueue: Script,
    lines: Script,
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
            lines: Script::new(LINES),
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

/// How long a ticket's hash lives after it was last queued, touched, cancelled
/// or put back in the queue. A queued ticket is touched while its player
/// waits (and cancelled after a minute unseen), so its hash always has most of
/// a day left, and a claim need not set a ticket's expiry: a matched or
/// cancelled ticket stays readable for about a day. (A claim once set it per
/// ticket: a quarter of the claim script's time.)
const TICKET_TTL_MS: u64 = 24 * 3600 * 1000;

/// Lua for the scripts that build a ticket's line from its hash:
/// `line_of(key)` returns the line (player, rating, created_at, seen_at,
/// status, last_x_at, last_opp, tab-separated, a missing field empty) and
/// the fields. One text, so the scripts cannot disagree on the fields'
/// order.
macro_rules! line_of {
    () => {
        r"
local function line_of(t)
  local f = redis.call('HMGET', t, 'player', 'rating', 'created_at', 'seen_at',
    'status', 'last_x_at', 'last_opp')
  for n = 1, 7 do f[n] = f[n] or '' end
  return table.concat(f, '\t'), f
end
"
    };
}

/// KEYS: the player's key (routing). ARGV: prefix, id, player, ladder, rating,
/// created_at, seen_at, last_x_at, last_opponent, ttl.
const ENQUEUE: &str = r"
local p = ARGV[1]
local current = redis.call('GET', p .. '{mm}:p:' .. ARGV[3])
if current and redis.call('HGET', p .. '{mm}:t:' .. current, 'status') == 'queued' then
  return current
end
local t = p .. '{mm}:t:' .. ARGV[2]
redis.call('HSET', t, 'id', ARGV[2], 'player', ARGV[3], 'ladder', ARGV[4], 'rating', ARGV[5],
  'created_at', ARGV[6], 'seen_at', ARGV[7], 'status', 'queued', 'last_x_at', ARGV[8], 'last_opp', ARGV[9])
redis.call('PEXPIRE', t, ARGV[10])
redis.call('ZADD', p .. '{mm}:q:' .. ARGV[4], ARGV[5], ARGV[2])
redis.call('HSET', p .. '{mm}:ql:' .. ARGV[4], ARGV[2],
  table.concat({ARGV[3], ARGV[5], ARGV[6], ARGV[7], 'queued', ARGV[8], ARGV[9]}, '\t'))
redis.call('SET', p .. '{mm}:p:' .. ARGV[3], ARGV[2])
return false
";

/// KEYS: the ladder's lines hash, its queue, then the hashes of tickets
/// whose line the lines hash lacks. ARGV: those tickets' ids. Each ticket's
/// line built from its hash (see `line_of!`), kept in the lines hash if the
/// ticket is queued.
///
/// A round reads each queued ticket's line with a plain `ZRANGE` and `HMGET`
/// (`RedisBroker::line_key`); this script builds only the missing ones: a
/// ticket queued before the lines existed (an upgrade with a live queue)
/// gets its line here, once. A ticket that left the queue between the two
/// reads has no line either, and its hash says so. A queue entry whose
/// ticket hash is gone (it expired, unseen for a day while no instance ran)
/// could never be read, planned or claimed: it leaves the queue.
const LINES: &str = concat!(
    line_of!(),
    r"
local out = {}
for i = 3, #KEYS do
  local line, f = line_of(KEYS[i])
  if f[5] == 'queued' then
    redis.call('HSET', KEYS[1], ARGV[i - 2], line)
  elseif f[5] == '' then
    redis.call('ZREM', KEYS[2], ARGV[i - 2])
  end
  out[i - 2] = line
end
return out
"
);

/// KEYS: the ticket (routing). ARGV: prefix, id, reason, ttl.
const CANCEL: &str = r"
local p = ARGV[1]
local t = p .. '{mm}:t:' .. ARGV[2]
local status = redis.call('HGET', t, 'status')
if not status then return {'missing'} end
if status == 'matched' then return {'matched', redis.call('HGET', t, 'match_id')} end
if status == 'cancelled' then return {'cancelled'} end
local ladder = redis.call('HGET', t, 'ladder')
local player = redis.call('HGET', t, 'player')
redis.call('ZREM', p .. '{mm}:q:' .. ladder, ARGV[2])
redis.call('HDEL', p .. '{mm}:ql:' .. ladder, ARGV[2])
redis.call('HSET', t, 'status', 'cancelled', 'reason', ARGV[3])
redis.call('PEXPIRE', t, ARGV[4])
if redis.call('GET', p .. '{mm}:p:' .. player) == ARGV[2] then
  redis.call('DEL', p .. '{mm}:p:' .. player)
end
return {'ok'}
";

/// KEYS: the ladder's queue, its lines, then the two tickets of each pair.
/// ARGV: per pair its match id and the two ticket ids.
/// Each pair both or neither; the queue and its lines lose the claimed
/// tickets at the end, in bounded `ZREM`s and `HDEL`s (Lua's `unpack` has a
/// stack limit). The tickets keep the expiry they were queued or touched
/// with ([`TICKET_TTL_MS`]). Runs once per 1,250 pairs of a round, so no
/// table is made per pair.
const CLAIM: &str = r"
local claimed, out = {}, {}
local q, lines = KEYS[1], KEYS[2]
for i = 1, (#KEYS - 2) / 2 do
  local ka, kb = KEYS[2 * i + 1], KEYS[2 * i + 2]
  local a, b = ARGV[3 * i - 1], ARGV[3 * i]
  local sa, sb = redis.call('HGET', ka, 'status'), redis.call('HGET', kb, 'status')
  -- A queue entry whose ticket is gone (evicted, deleted) would be planned
  -- and refused every round: it leaves the queue.
  if not sa then redis.call('ZREM', q, a); redis.call('HDEL', lines, a) end
  if not sb then redis.call('ZREM', q, b); redis.call('HDEL', lines, b) end
  if a ~= b and sa == 'queued' and sb == 'queued' then
    local m = ARGV[3 * i - 2]
    redis.call('HSET', ka, 'status', 'matched', 'match_id', m)
    redis.call('HSET', kb, 'status', 'matched', 'match_id', m)
    claimed[#claimed + 1] = a
    claimed[#claimed + 1] = b
    out[i] = 1
  else
    out[i] = 0
  end
end
for j = 1, #claimed, 1000 do
  redis.call('ZREM', q, unpack(claimed, j, math.min(j + 999, #claimed)))
  redis.call('HDEL', lines, unpack(claimed, j, math.min(j + 999, #claimed)))
end
return out
";

/// KEYS: the ladder's queue, its lines, then tickets. ARGV: ttl, then the
/// tickets' ids.
const RELEASE: &str = concat!(
    line_of!(),
    r"
for i = 3, #KEYS do
  local t = KEYS[i]
  if redis.call('HGET', t, 'status') == 'matched' then
    redis.call('HSET', t, 'status', 'queued')
    redis.call('HDEL', t, 'match_id')
    redis.call('PEXPIRE', t, ARGV[1])
    local line, f = line_of(t)
    redis.call('ZADD', KEYS[1], f[2], ARGV[i - 1])
    redis.call('HSET', KEYS[2], ARGV[i - 1], line)
  end
end
return 1
"
);

/// Tickets read by one `ZRANGE` and `HMGET` of a round's read: one call
/// over 100,000 tickets took 0.8 s (when it read each ticket's hash), past
/// the connection's response timeout (500 ms), and blocks Redis for
/// everyone meanwhile.
const QUEUED_BATCH: usize = 10_000;

/// Pairs claimed by one script call: bounded so that one call never blocks
/// Redis for long (a 10,000-ticket round is one call; 100,000 tickets, ten).
const CLAIM_BATCH: usize = 5_000;

/// KEYS: ticket. ARGV: at, the key prefix, ttl. A queued ticket's line in its
/// ladder's lines hash changes with it, and its expiry starts again.
const TOUCH: &str = concat!(
    line_of!(),
    r"
local old = tonumber(redis.call('HGET', KEYS[1], 'seen_at') or '-1')
if old and old >= 0 and tonumber(ARGV[1]) > old then
  redis.call('HSET', KEYS[1], 'seen_at', ARGV[1])
  local line, f = line_of(KEYS[1])
  if f[5] == 'queued' then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    local at = redis.call('HMGET', KEYS[1], 'ladder', 'id')
    redis.call('HSET', ARGV[2] .. '{mm}:ql:' .. at[1], at[2], line)
  end
end
return 1
"
);

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

impl RedisBroker {
    fn ticket_key(&self, id: &str) -> String {
        self.key(&format!("{{mm}}:t:{id}"))
    }

    fn player_key(&self, player: &str) -> String {
        self.key(&format!("{{mm}}:p:{player}"))
    }

    fn queue_key(&self, ladder: &str) -> String {
        self.key(&format!("{{mm}}:q:{ladder}"))
    }

    /// The ladder's lines hash: each queued ticket's line (see `line_of!`),
    /// ready for a round's read.
    fn line_key(&self, ladder: &str) -> String {
        self.key(&format!("{{mm}}:ql:{ladder}"))
    }
}

/// A ticket from its stored fields, as `field(name)` reads them.
fn ticket_from<'f>(field: impl Fn(&str) -> Option<&'f str>) -> Option<Ticket> {
    let text = |name: &str| field(name).filter(|s| !s.is_empty()).map(str::to_owned);
    Some(Ticket {
        id: field("id")?.to_owned(),
        player_id: field("player")?.to_owned(),
        ladder: field("ladder")?.to_owned(),
        rating: field("rating")?.parse().ok()?,
        created_at: field("created_at")?.parse().ok()?,
        seen_at: field("seen_at")?.parse().ok()?,
        status: TicketStatus::parse(field("status")?)?,
        match_id: text("match_id"),
        reason: text("reason"),
        last_x_at: field("last_x_at").and_then(|s| s.parse().ok()),
        last_opponent: text("last_opp"),
    })
}

/// A queued ticket `id` of `ladder` from its line: the fields of `line_of!`
/// in their order, tab-separated, an absent value empty. Read as
/// [`ticket_from`] reads a hash, but without a lookup per field: a round
/// reads 100,000 lines.
fn line_ticket(id: &str, line: &str, ladder: &str) -> Option<Ticket> {
    let mut f = line.split('\t');
    let mut next = || f.next();
    let (player, rating, created_at, seen_at, status, last_x_at, last_opp) = (
        next()?,
        next()?,
        next()?,
        next()?,
        next()?,
        next().unwrap_or(""),
        next().unwrap_or(""),
    );
    Some(Ticket {
        id: id.to_owned(),
        player_id: player.to_owned(),
        ladder: ladder.to_owned(),
        rating: rating.parse().ok()?,
        created_at: created_at.parse().ok()?,
        seen_at: seen_at.parse().ok()?,
        status: TicketStatus::parse(status)?,
        match_id: None,
        reason: None,
        last_x_at: last_x_at.parse().ok(),
        last_opponent: (!last_opp.is_empty()).then(|| last_opp.to_owned()),
    })
}

/// Adds the queued tickets among `ids` and their `lines` (see
/// [`line_ticket`]) to `tickets`.
fn parse_lines(tickets: &mut Vec<Ticket>, ids: &[String], lines: &[String], ladder: &str) {
    tickets.reserve(lines.len());
    tickets.extend(
        ids.iter()
            .zip(lines)
            .filter_map(|(id, line)| line_ticket(id, line, ladder))
            .filter(|t| t.status == TicketStatus::Queued),
    );
}

/// The rank `n` as `ZRANGE` takes it.
fn rank(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

/// The last rank of a round's read batch that starts at rank `first`.
fn last_rank(first: usize) -> isize {
    rank(first + QUEUED_BATCH - 1)
}

impl RedisBroker {
    /// `lines` as `HMGET` read them for `ids`, with each missing line built
    /// from its ticket's hash by [`LINES`] (one call for all of them; none
    /// when every line was there).
    async fn fill_lines(
        &self,
        conn: &mut super::redis_conn::Commands,
        (line_key, queue): (&str, &str),
        ids: &[String],
        lines: Vec<Option<String>>,
    ) -> BrokerResult<Vec<String>> {
        let mut call = self.queue_scripts().lines.prepare_invoke();
        call.key(line_key).key(queue);
        let mut missing = 0;
        for (id, _) in ids.iter().zip(&lines).filter(|(_, line)| line.is_none()) {
            call.key(self.ticket_key(id)).arg(id);
            missing += 1;
        }
        let built: Vec<String> = if missing == 0 {
            Vec::new()
        } else {
            call.invoke_async(conn).await?
        };
        let mut built = built.into_iter();
        Ok(lines
            .into_iter()
            .map(|line| line.or_else(|| built.next()).unwrap_or_default())
            .collect())
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl MatchQueue for RedisBroker {
    fn is_restored(&self) -> BoxFuture<'_, BrokerResult<bool>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.exists(self.key("{mm}:restored")).await?)
        })
    }

    fn mark_restored(&self) -> BoxFuture<'_, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: () = conn.set(self.key("{mm}:restored"), 1).await?;
            Ok(())
        })
    }

    fn enqueue<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, BrokerResult<Enqueued>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let existing: Option<String> = self
                .queue_scripts()
                .enqueue
                .key(self.player_key(&ticket.player_id))
                .arg(self.key(""))
                .arg(&ticket.id)
                .arg(&ticket.player_id)
                .arg(&ticket.ladder)
                .arg(ticket.rating)
                .arg(ticket.created_at)
                .arg(ticket.seen_at)
                .arg(ticket.last_x_at.map(|v| v.to_string()).unwrap_or_default())
                .arg(ticket.last_opponent.clone().unwrap_or_default())
                .arg(TICKET_TTL_MS)
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
            let fields: HashMap<String, String> = conn.hgetall(self.ticket_key(id)).await?;
            Ok(ticket_from(|name| fields.get(name).map(String::as_str)))
        })
    }

    fn touch_ticket<'a>(&'a self, id: &'a str, at: i64) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let _: i64 = self
                .queue_scripts()
                .touch
                .key(self.ticket_key(id))
                .arg(at)
                .arg(self.key(""))
                .arg(TICKET_TTL_MS)
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
                .key(self.ticket_key(id))
                .arg(self.key(""))
                .arg(id)
                .arg(reason)
                .arg(TICKET_TTL_MS)
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
            let (queue, line_key) = (self.queue_key(ladder), self.line_key(ladder));
            let mut tickets: Vec<Ticket> = Vec::new();
            let mut ids: Vec<String> = conn.zrange(&queue, 0, last_rank(0)).await?;
            let mut read_so_far = 0;
            // A batch read and not yet parsed: its ids and lines.
            let mut unparsed: Option<(Vec<String>, Vec<Option<String>>)> = None;
            while !ids.is_empty() || unparsed.is_some() {
                // A batch's lines come with the next batch's ids (one round
                // trip a batch), and the batch before is parsed meanwhile.
                let next_first = read_so_far + ids.len();
                let read = async {
                    if ids.is_empty() {
                        return Ok((Vec::new(), Vec::new()));
                    }
                    redis::pipe()
                        .cmd("HMGET")
                        .arg(&line_key)
                        .arg(&ids)
                        .zrange(&queue, rank(next_first), last_rank(next_first))
                        .query_async(&mut conn.clone())
                        .await
                };
                let parse = async {
                    if let Some((ids, lines)) = unparsed.take() {
                        let lines = self
                            .fill_lines(&mut conn.clone(), (&line_key, &queue), &ids, lines)
                            .await?;
                        parse_lines(&mut tickets, &ids, &lines, ladder);
                    }
                    BrokerResult::Ok(())
                };
                let (read, parsed) = tokio::join!(read, parse);
                parsed?;
                let (lines, next): (Vec<Option<String>>, Vec<String>) = read?;
                read_so_far = next_first;
                let full = ids.len() == QUEUED_BATCH;
                if !ids.is_empty() {
                    unparsed = Some((std::mem::take(&mut ids), lines));
                }
                if full {
                    ids = next;
                }
            }
            // Ranks shift when tickets join or leave between two calls: a
            // ticket read twice is kept once (one missed waits a round). The
            // queue comes in rating order and, for equal ratings, id order
            // (as `ZRANGE` orders members of equal score), so sorting by both
            // puts a ticket read twice next to itself.
            tickets.sort_by(|a, b| a.rating.total_cmp(&b.rating).then_with(|| a.id.cmp(&b.id)));
            tickets.dedup_by(|a, b| a.id == b.id);
            Ok(tickets)
        })
    }

    fn queue_size<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<u64>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.zcard(self.queue_key(ladder)).await?)
        })
    }

    fn claim_pairs<'a>(
        &'a self,
        ladder: &'a str,
        pairs: &'a [PairClaim],
    ) -> BoxFuture<'a, BrokerResult<Vec<bool>>> {
        Box::pin(async move {
            let mut conn = self.connection();
            let mut claimed = Vec::with_capacity(pairs.len());
            for batch in pairs.chunks(CLAIM_BATCH) {
                let mut call = self.queue_scripts().claim.prepare_invoke();
                call.key(self.queue_key(ladder)).key(self.line_key(ladder));
                for pair in batch {
                    call.key(self.ticket_key(&pair.a))
                        .key(self.ticket_key(&pair.b))
                        .arg(&pair.match_id)
                        .arg(&pair.a)
                        .arg(&pair.b);
                }
                let flags: Vec<i64> = call.invoke_async(&mut conn).await?;
                if flags.len() != batch.len() {
                    return Err(BrokerError::Unavailable("unexpected claim answer".into()));
                }
                claimed.extend(flags.into_iter().map(|f| f == 1));
            }
            Ok(claimed)
        })
    }

    fn release_tickets<'a>(
        &'a self,
        ladder: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<()>> {
        Box::pin(async move {
            let mut conn = self.connection();
            for batch in ids.chunks(2 * CLAIM_BATCH) {
                let mut call = self.queue_scripts().release.prepare_invoke();
                call.key(self.queue_key(ladder))
                    .key(self.line_key(ladder))
                    .arg(TICKET_TTL_MS);
                for id in batch {
                    call.key(self.ticket_key(id)).arg(id);
                }
                let _: i64 = call.invoke_async(&mut conn).await?;
            }
            Ok(())
        })
    }

    fn player_ticket<'a>(
        &'a self,
        player_id: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>> {
        Box::pin(async move {
            let mut conn = self.connection();
            Ok(conn.get(self.player_key(player_id)).await?)
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
