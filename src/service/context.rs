//! What every use case runs with: the shared [`Context`] of an instance, its
//! shutdown signal and its workers' wake-ups.

use std::sync::Arc;

use crate::broker::SharedBroker;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::store::Db;
use crate::time::TimeSource;

use super::streams::OpenStreams;
use super::{passwords, tokens};

/// Everything a use case needs, shared by all requests and workers of an instance.
#[derive(Clone)]
pub struct Context {
    /// The configuration.
    pub config: Arc<Config>,
    /// The database pool.
    pub db: Db,
    /// The broker (Redis or in-process).
    pub broker: SharedBroker,
    /// Game time: clocks, deadlines, presence. Injected so tests can advance it.
    pub time: Arc<dyn TimeSource>,
    /// Access-token signing.
    pub tokens: tokens::Tokens,
    /// Password hashing.
    pub passwords: passwords::Passwords,
    /// This instance's metrics registry.
    pub metrics: Arc<Metrics>,
    /// Wake-ups for this instance's workers.
    pub signals: Arc<Signals>,
    /// The event streams this instance holds open for seated players (their presence leases).
    pub streams: Arc<OpenStreams>,
    /// This process's identity in broker locks.
    pub instance: Arc<str>,
    /// Where the presence worker's next drop-out sweep goes on from (the
    /// keyset of the last turn it looked at; `None`: the oldest).
    pub sweep_from: Arc<std::sync::Mutex<Option<(crate::time::Millis, String)>>>,
    /// Tells streams and workers that the instance is shutting down.
    pub shutdown: Shutdown,
}

/// The instance's shutdown signal: once triggered, event streams close with a
/// retry hint and workers stop after their current tick.
#[derive(Debug, Clone)]
pub struct Shutdown {
    sender: Arc<tokio::sync::watch::Sender<bool>>,
    /// How many worker loops are still running (see [`Shutdown::worker`]).
    workers: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            sender: Arc::new(tokio::sync::watch::channel(false).0),
            workers: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

/// Held by a running worker loop; dropping it tells the shutdown the loop ended.
#[derive(Debug)]
pub struct WorkerGuard {
    workers: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        self.workers.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Shutdown {
    /// Starts the shutdown.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    /// Whether the shutdown has started.
    pub fn is_triggered(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once the shutdown has started.
    pub async fn wait(&self) {
        let mut rx = self.sender.subscribe();
        // An error means the sender is gone, which only happens at exit.
        let _ = rx.wait_for(|down| *down).await;
    }

    /// Registers a worker loop: the process waits for it (and so for the
    /// broker locks it releases at the end of its tick) before exiting.
    pub fn worker(&self) -> WorkerGuard {
        self.workers.send_modify(|n| *n += 1);
        WorkerGuard {
            workers: self.workers.clone(),
        }
    }

    /// Resolves once every registered worker loop has ended.
    pub async fn workers_stopped(&self) {
        let mut rx = self.workers.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

/// Lets a use case wake a local worker at once instead of at its next poll.
#[derive(Debug, Default)]
pub struct Signals {
    /// A match now waits for a CPU move.
    pub cpu: tokio::sync::Notify,
    /// A ticket joined a queue.
    pub pairing: tokio::sync::Notify,
    /// A tournament game ended, or a tournament was started.
    pub tournaments: tokio::sync::Notify,
    /// An analysis was queued.
    pub analysis: tokio::sync::Notify,
    /// Searches for live CPU moves running on this instance now: the
    /// analysis worker waits while there are any, and cuts its own search
    /// short when one starts, so live moves come first.
    pub cpu_searches: std::sync::atomic::AtomicUsize,
    /// When the pairing worker last reconciled broker claims with the database (game time).
    pub last_reconcile: std::sync::atomic::AtomicI64,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("db", &self.db)
            .field("broker", &self.broker.kind())
            .finish_non_exhaustive()
    }
}
