//! The in-process broker of the embedded default: one instance, no Redis.
//!
//! Over 400 lines: it implements every broker trait on one shared state, as
//! `redis.rs` and `redis_queue.rs` do on Redis.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::hub::Hub;
use super::{
    BrokerResult, Cancelled, Enqueued, FlaggedPublish, Health, Locks, MatchQueue, PairClaim,
    Presence, PresenceRecord, PubSub, RateDecision, RateLimiter, Slots, Subscription, Ticket,
    TicketStatus,
};

/// Windows are swept once this many counters are held.
const SWEEP_AT: usize = 10_000;

/// Broker state held in this process.
#[derive(Debug, Default)]
pub struct MemoryBroker {
    hub: Arc<Hub>,
    windows: Mutex<HashMap<String, (u32, Instant)>>,
    presence: Mutex<HashMap<String, (i64, Instant)>>,
    /// Per key: each holder's lease and when it lapses.
    leases: Mutex<HashMap<String, HashMap<String, Instant>>>,
    marks: Mutex<HashMap<String, (String, Instant)>>,
    queue: Mutex<QueueState>,
    locks: Mutex<HashMap<String, (String, Instant)>>,
    slots: Mutex<HashMap<String, HashMap<String, Instant>>>,
    restored: std::sync::atomic::AtomicBool,
}

/// The matchmaking queue held in memory.
#[derive(Debug, Default)]
struct QueueState {
    tickets: HashMap<String, (Ticket, Option<Instant>)>,
    queued: HashMap<String, HashSet<String>>,
    players: HashMap<String, String>,
}

/// How long finished tickets stay readable.
const FINISHED_TICKET_TTL: Duration = Duration::from_secs(24 * 3600);

impl QueueState {
    fn sweep(&mut self, now: Instant) {
        if self.tickets.len() >= SWEEP_AT {
            self.tickets
                .retain(|_, (_, expires)| expires.is_none_or(|e| e > now));
        }
    }

    fn finish(&mut self, id: &str, now: Instant) {
        if let Some((ticket, expires)) = self.tickets.get_mut(id) {
            if let Some(set) = self.queued.get_mut(&ticket.ladder) {
                set.remove(id);
            }
            *expires = Some(now + FINISHED_TICKET_TTL);
        }
    }
}

impl MemoryBroker {
    /// A new, empty broker.
    pub fn new() -> Arc<MemoryBroker> {
        Arc::new(MemoryBroker::default())
    }
}

impl RateLimiter for MemoryBroker {
    fn hit<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        window: Duration,
    ) -> BoxFuture<'a, BrokerResult<RateDecision>> {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, (_, ends)| *ends > now);
        }
        let entry = windows.entry(key.to_owned()).or_insert((0, now + window));
        if entry.1 <= now {
            *entry = (0, now + window);
        }
        entry.0 = entry.0.saturating_add(1);
        let decision = if entry.0 > limit {
            RateDecision::Limited {
                retry_after: entry.1 - now,
            }
        } else {
            RateDecision::Allowed
        };
        Box::pin(async move { Ok(decision) })
    }

    fn peek<'a>(&'a self, key: &'a str) -> BoxFuture<'a, BrokerResult<Option<(u32, Duration)>>> {
        let now = Instant::now();
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let found = windows
            .get(key)
            .filter(|(_, ends)| *ends > now)
            .map(|(count, ends)| (*count, *ends - now));
        Box::pin(async move { Ok(found) })
    }
}

impl PubSub for MemoryBroker {
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, BrokerResult<()>> {
        if self
            .hub
            .deliver(channel, super::Notice::Message(payload.into()))
        {
            self.hub.note_received();
        }
        Box::pin(async { Ok(()) })
    }

    fn received(&self) -> u64 {
        self.hub.received()
    }

    fn subscribe<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, BrokerResult<Subscription>> {
        let sub = self.hub.subscribe(channel);
        Box::pin(async move { Ok(sub) })
    }
}

impl Presence for MemoryBroker {
    fn marks<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, BrokerResult<Vec<Option<String>>>> {
        let now = Instant::now();
        let marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        let found = keys
            .iter()
            .map(|k| {
                marks
                    .get(k)
                    .filter(|(_, exp)| *exp > now)
                    .map(|(v, _)| v.clone())
            })
            .collect();
        Box::pin(async move { Ok(found) })
    }

    fn seen<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<i64>>> {
        let now = Instant::now();
        let mut presence = self.presence.lock().unwrap_or_else(|p| p.into_inner());
        if presence.len() >= SWEEP_AT {
            presence.retain(|_, (_, expires)| *expires > now);
        }
        let previous = presence
            .get(key)
            .filter(|(_, exp)| *exp > now)
            .map(|(at, _)| *at);
        // Never move backwards: a late, older report must not hide a newer one.
        presence.insert(key.to_owned(), (previous.unwrap_or(at).max(at), now + ttl));
        Box::pin(async move { Ok(previous) })
    }

    fn mark<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>> {
        let now = Instant::now();
        let mut marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        if marks.len() >= SWEEP_AT {
            marks.retain(|_, (_, expires)| *expires > now);
        }
        let previous = marks
            .insert(key.to_owned(), (value.to_owned(), now + ttl))
            .filter(|(_, exp)| *exp > now)
            .map(|(v, _)| v);
        Box::pin(async move { Ok(previous) })
    }

    fn hold<'a>(
        &'a self,
        leases: &'a [(String, String)],
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<()>> {
        let now = Instant::now();
        let mut held = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        if held.len() >= SWEEP_AT {
            held.retain(|_, holders| {
                holders.retain(|_, lapses| *lapses > now);
                !holders.is_empty()
            });
        }
        for (key, holder) in leases {
            held.entry(key.clone())
                .or_default()
                .insert(holder.clone(), now + ttl);
        }
        Box::pin(async { Ok(()) })
    }

    fn release<'a>(&'a self, key: &'a str, holder: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        let mut held = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(holders) = held.get_mut(key) {
            holders.remove(holder);
            if holders.is_empty() {
                held.remove(key);
            }
        }
        Box::pin(async { Ok(()) })
    }

    fn presence<'a>(
        &'a self,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<Vec<PresenceRecord>>> {
        let now = Instant::now();
        let found = {
            let presence = self.presence.lock().unwrap_or_else(|p| p.into_inner());
            let held = self.leases.lock().unwrap_or_else(|p| p.into_inner());
            keys.iter()
                .map(|k| PresenceRecord {
                    leased: held
                        .get(k)
                        .is_some_and(|holders| holders.values().any(|lapses| *lapses > now)),
                    last_seen: presence
                        .get(k)
                        .filter(|(_, exp)| *exp > now)
                        .map(|(at, _)| *at),
                })
                .collect()
        };
        Box::pin(async move { Ok(found) })
    }

    fn seen_then_publish<'a>(
        &'a self,
        key: &'a str,
        at: i64,
        ttl: Duration,
        keys: &'a [String; 2],
        out: &'a FlaggedPublish<'a>,
    ) -> BoxFuture<'a, BrokerResult<(Option<i64>, Vec<PresenceRecord>)>> {
        Box::pin(super::seen_then_publish_in_steps(
            self, key, at, ttl, keys, out,
        ))
    }
}

impl MatchQueue for MemoryBroker {
    fn is_restored(&self) -> BoxFuture<'_, BrokerResult<bool>> {
        let restored = self.restored.load(std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { Ok(restored) })
    }

    fn mark_restored(&self) -> BoxFuture<'_, BrokerResult<()>> {
        self.restored
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }

    fn enqueue<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, BrokerResult<Enqueued>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.sweep(Instant::now());
        let live = q
            .players
            .get(&ticket.player_id)
            .and_then(|id| q.tickets.get(id))
            .filter(|(t, _)| t.status == TicketStatus::Queued)
            .map(|(t, _)| t.id.clone());
        let outcome = match live {
            Some(id) => Enqueued::AlreadyQueued(id),
            None => {
                q.tickets.insert(ticket.id.clone(), (ticket.clone(), None));
                q.queued
                    .entry(ticket.ladder.clone())
                    .or_default()
                    .insert(ticket.id.clone());
                q.players
                    .insert(ticket.player_id.clone(), ticket.id.clone());
                Enqueued::Queued
            }
        };
        Box::pin(async move { Ok(outcome) })
    }

    fn ticket<'a>(&'a self, id: &'a str) -> BoxFuture<'a, BrokerResult<Option<Ticket>>> {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let found = q.tickets.get(id).map(|(t, _)| t.clone());
        Box::pin(async move { Ok(found) })
    }

    fn touch_ticket<'a>(&'a self, id: &'a str, at: i64) -> BoxFuture<'a, BrokerResult<()>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((t, _)) = q.tickets.get_mut(id) {
            t.seen_at = t.seen_at.max(at);
        }
        Box::pin(async { Ok(()) })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        reason: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Cancelled>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let outcome = match q.tickets.get_mut(id) {
            None => Cancelled::Missing,
            Some((t, _)) => match t.status {
                TicketStatus::Matched => {
                    Cancelled::AlreadyMatched(t.match_id.clone().unwrap_or_default())
                }
                TicketStatus::Cancelled => Cancelled::AlreadyCancelled,
                TicketStatus::Queued => {
                    t.status = TicketStatus::Cancelled;
                    t.reason = Some(reason.to_owned());
                    let player = t.player_id.clone();
                    q.finish(id, Instant::now());
                    if q.players.get(&player).is_some_and(|p| p == id) {
                        q.players.remove(&player);
                    }
                    Cancelled::Cancelled
                }
            },
        };
        Box::pin(async move { Ok(outcome) })
    }

    fn queued<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<Vec<Ticket>>> {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let mut list: Vec<Ticket> = q
            .queued
            .get(ladder)
            .into_iter()
            .flatten()
            .filter_map(|id| q.tickets.get(id).map(|(t, _)| t.clone()))
            .collect();
        list.sort_by(|a, b| a.rating.total_cmp(&b.rating).then_with(|| a.id.cmp(&b.id)));
        Box::pin(async move { Ok(list) })
    }

    fn queue_size<'a>(&'a self, ladder: &'a str) -> BoxFuture<'a, BrokerResult<u64>> {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let n = q.queued.get(ladder).map_or(0, |s| s.len() as u64);
        Box::pin(async move { Ok(n) })
    }

    fn claim_pairs<'a>(
        &'a self,
        _ladder: &'a str,
        pairs: &'a [PairClaim],
    ) -> BoxFuture<'a, BrokerResult<Vec<bool>>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let claimed = pairs
            .iter()
            .map(|pair| {
                let queued = |q: &QueueState, id: &str| {
                    q.tickets
                        .get(id)
                        .is_some_and(|(t, _)| t.status == TicketStatus::Queued)
                };
                let ok = pair.a != pair.b && queued(&q, &pair.a) && queued(&q, &pair.b);
                if ok {
                    for id in [&pair.a, &pair.b] {
                        if let Some((t, _)) = q.tickets.get_mut(id.as_str()) {
                            t.status = TicketStatus::Matched;
                            t.match_id = Some(pair.match_id.clone());
                        }
                        q.finish(id, now);
                    }
                }
                ok
            })
            .collect();
        Box::pin(async move { Ok(claimed) })
    }

    fn release_tickets<'a>(
        &'a self,
        _ladder: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<()>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        for id in ids {
            let Some((t, expires)) = q.tickets.get_mut(id.as_str()) else {
                continue;
            };
            if t.status != TicketStatus::Matched {
                continue;
            }
            t.status = TicketStatus::Queued;
            t.match_id = None;
            *expires = None;
            let ladder = t.ladder.clone();
            q.queued.entry(ladder).or_default().insert(id.clone());
        }
        Box::pin(async { Ok(()) })
    }

    fn player_ticket<'a>(
        &'a self,
        player_id: &'a str,
    ) -> BoxFuture<'a, BrokerResult<Option<String>>> {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let id = q.players.get(player_id).cloned();
        Box::pin(async move { Ok(id) })
    }
}

impl Locks for MemoryBroker {
    fn try_lock<'a>(
        &'a self,
        name: &'a str,
        token: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>> {
        let now = Instant::now();
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        let free = locks
            .get(name)
            .is_none_or(|(holder, expires)| holder == token || *expires <= now);
        if free {
            locks.insert(name.to_owned(), (token.to_owned(), now + ttl));
        }
        Box::pin(async move { Ok(free) })
    }

    fn unlock<'a>(&'a self, name: &'a str, token: &'a str) -> BoxFuture<'a, BrokerResult<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        if locks.get(name).is_some_and(|(holder, _)| holder == token) {
            locks.remove(name);
        }
        Box::pin(async { Ok(()) })
    }
}

impl Slots for MemoryBroker {
    fn acquire<'a>(
        &'a self,
        key: &'a str,
        member: &'a str,
        cap: u32,
        ttl: Duration,
    ) -> BoxFuture<'a, BrokerResult<bool>> {
        let now = Instant::now();
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.len() >= SWEEP_AT {
            slots.retain(|_, set| set.values().any(|ends| *ends > now));
        }
        let set = slots.entry(key.to_owned()).or_default();
        set.retain(|_, ends| *ends > now);
        let held = set.contains_key(member) || set.len() < cap as usize;
        if held {
            set.insert(member.to_owned(), now + ttl);
        }
        Box::pin(async move { Ok(held) })
    }

    fn release_slot<'a>(
        &'a self,
        key: &'a str,
        member: &'a str,
    ) -> BoxFuture<'a, BrokerResult<()>> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(set) = slots.get_mut(key) {
            set.remove(member);
            if set.is_empty() {
                slots.remove(key);
            }
        }
        Box::pin(async { Ok(()) })
    }
}

impl Health for MemoryBroker {
    fn ping(&self) -> BoxFuture<'_, BrokerResult<()>> {
        Box::pin(async { Ok(()) })
    }

    fn kind(&self) -> &'static str {
        "in-process"
    }
}
