//! The event streams this instance holds open for seated players: each holds
//! a presence lease on its seat, which the instance renews while it is open.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The event streams this instance holds open for seated players: lease
/// holder → seat key. The instance renews their leases.
#[derive(Debug, Default)]
pub struct OpenStreams {
    next: AtomicU64,
    open: Mutex<HashMap<String, String>>,
}

impl OpenStreams {
    /// Registers a stream of `instance` on the seat `key`; returns its lease holder.
    pub fn add(&self, instance: &str, key: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let holder = format!("{instance}:{n}");
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(holder.clone(), key.to_owned());
        holder
    }

    /// Forgets a closed stream.
    pub fn forget(&self, holder: &str) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(holder);
    }

    /// Every open stream, as (seat key, lease holder).
    pub fn all(&self) -> Vec<(String, String)> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(holder, key)| (key.clone(), holder.clone()))
            .collect()
    }

    /// Whether the stream of `holder` is still open.
    pub fn is_open(&self, holder: &str) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(holder)
    }
}
