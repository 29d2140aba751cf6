//! The in-process broker of the embedded default: one instance, no Redis.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::hub::Hub;
use super::{BrokerResult, Health, Presence, PubSub, RateDecision, RateLimiter, Subscription};

/// Windows are swept once this many counters are held.
const SWEEP_AT: usize = 10_000;

/// Broker state held in this process.
#[derive(Debug, Default)]
pub struct MemoryBroker {
    hub: Arc<Hub>,
    windows: Mutex<HashMap<String, (u32, Instant)>>,
    presence: Mutex<HashMap<String, (i64, Instant)>>,
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
}

impl PubSub for MemoryBroker {
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, BrokerResult<()>> {
        self.hub
            .deliver(channel, super::Notice::Message(payload.into()));
        Box::pin(async { Ok(()) })
    }

    fn subscribe<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, BrokerResult<Subscription>> {
        let sub = self.hub.subscribe(channel);
        Box::pin(async move { Ok(sub) })
    }
}

impl Presence for MemoryBroker {
    fn seen<'a>(&'a self, key: &'a str, at: i64, ttl: Duration) -> BoxFuture<'a, BrokerResult<()>> {
        let now = Instant::now();
        let mut presence = self.presence.lock().unwrap_or_else(|p| p.into_inner());
        if presence.len() >= SWEEP_AT {
            presence.retain(|_, (_, expires)| *expires > now);
        }
        let entry = presence.entry(key.to_owned()).or_insert((at, now + ttl));
        // Never move backwards: a late, older report must not hide a newer one.
        entry.0 = entry.0.max(at);
        entry.1 = now + ttl;
        Box::pin(async { Ok(()) })
    }

    fn last_seen<'a>(
        &'a self,
        keys: &'a [String],
    ) -> BoxFuture<'a, BrokerResult<Vec<Option<i64>>>> {
        let now = Instant::now();
        let presence = self.presence.lock().unwrap_or_else(|p| p.into_inner());
        let seen = keys
            .iter()
            .map(|k| {
                presence
                    .get(k)
                    .filter(|(_, exp)| *exp > now)
                    .map(|(at, _)| *at)
            })
            .collect();
        Box::pin(async move { Ok(seen) })
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
