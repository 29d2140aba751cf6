//! The broker's command connections, one per thread that uses it on one
//! Redis node.
//!
//! Why: a connection's socket is driven by a task on the runtime that
//! opened it. With one shared connection, opened on the main thread, every
//! command an HTTP worker sent went to the main thread and its answer came
//! back: two thread wake-ups a call, two calls a move (a profile of the load
//! run put a seventh of the server's CPU on the main thread, most of it
//! driving Redis). A connection opened on the worker's own runtime is
//! driven where the request runs.
//!
//! A thread without one is given the shared connection while its own opens
//! (in the background, on its runtime). A runtime that ended takes its
//! connections' tasks with it: each thread's connection holds a sentinel
//! task on its runtime, and a connection whose sentinel is gone is dropped
//! and opened again on the thread's current runtime, so a thread that
//! outlives a runtime (a test's, a CLI command's) never sends on a dead one.
//! On a Redis Cluster the one cluster connection is used everywhere: it
//! keeps a connection per node already.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use tokio::sync::oneshot;

use super::redis_conn::Commands;

/// After a thread's connection failed to open, its calls take the shared
/// connection this long before it is tried again.
const REST_AFTER_FAILED_OPEN: Duration = Duration::from_secs(30);

/// A thread's own connection, or where it stands.
enum Local {
    /// Being opened on the thread's runtime; `alive` as below.
    Opening(oneshot::Sender<()>),
    /// Open; `alive` is closed once the runtime that drives it has ended
    /// (its other end is held by a task on that runtime).
    Open {
        conn: ConnectionManager,
        alive: oneshot::Sender<()>,
    },
    /// Failed to open at this time.
    Failed(Instant),
}

type Locals = Mutex<HashMap<ThreadId, Local>>;

/// The command connections of a broker (clones share them).
#[derive(Clone)]
pub struct Connections {
    shared: Commands,
    /// Where the threads' own connections are opened (one node only).
    client: Option<redis::Client>,
    locals: Arc<Locals>,
}

impl Connections {
    /// The connections of one Redis node: `shared`, opened from `client`,
    /// and one per thread opened from it on first use.
    pub fn single(client: redis::Client, shared: ConnectionManager) -> Connections {
        Connections {
            shared: Commands::Single(shared),
            client: Some(client),
            locals: Arc::default(),
        }
    }

    /// The one connection of a Redis Cluster.
    pub fn cluster(shared: Commands) -> Connections {
        Connections {
            shared,
            client: None,
            locals: Arc::default(),
        }
    }

    /// Whether these are a cluster's.
    pub fn is_cluster(&self) -> bool {
        self.shared.is_cluster()
    }

    /// The connection for a call from this thread: its own when open, the
    /// shared one otherwise (its own then starts opening).
    pub fn get(&self) -> Commands {
        let Some(client) = &self.client else {
            return self.shared.clone();
        };
        // Off a runtime nothing could drive a connection of this thread's.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self.shared.clone();
        };
        let here = std::thread::current().id();
        let mut locals = self.locals.lock().unwrap_or_else(PoisonError::into_inner);
        // None yet, or its runtime ended: open one on this runtime.
        match locals.get(&here) {
            Some(Local::Open { conn, alive }) if !alive.is_closed() => {
                return Commands::Single(conn.clone());
            }
            Some(Local::Opening(alive)) if !alive.is_closed() => return self.shared.clone(),
            Some(Local::Failed(at)) if at.elapsed() < REST_AFTER_FAILED_OPEN => {
                return self.shared.clone();
            }
            _ => {}
        }
        let (alive, sentinel) = oneshot::channel();
        locals.insert(here, Local::Opening(alive));
        drop(locals);
        runtime.spawn(open(
            client.clone(),
            here,
            Arc::downgrade(&self.locals),
            sentinel,
        ));
        self.shared.clone()
    }

    /// Whether this thread's own connection is open (tests).
    #[doc(hidden)]
    pub fn has_own(&self) -> bool {
        let here = std::thread::current().id();
        let locals = self.locals.lock().unwrap_or_else(PoisonError::into_inner);
        matches!(locals.get(&here), Some(Local::Open { alive, .. }) if !alive.is_closed())
    }
}

/// Opens thread `home`'s connection (this task runs on its runtime, so the
/// connection's driver does too), then holds `sentinel` until the
/// connection's entry is dropped or the runtime ends.
async fn open(
    client: redis::Client,
    home: ThreadId,
    locals: Weak<Locals>,
    sentinel: oneshot::Receiver<()>,
) {
    let opened = client.get_connection_manager().await;
    let Some(locals) = locals.upgrade() else {
        return;
    };
    {
        let mut map = locals.lock().unwrap_or_else(PoisonError::into_inner);
        // The entry this task was spawned for holds the other end.
        if !matches!(map.get(&home), Some(Local::Opening(_))) {
            return;
        }
        let Some(Local::Opening(alive)) = map.remove(&home) else {
            return;
        };
        let local = match opened {
            Ok(conn) => Local::Open { conn, alive },
            Err(e) => {
                tracing::warn!(error = %e, "a thread's own Redis connection did not open; it uses the shared one");
                Local::Failed(Instant::now())
            }
        };
        map.insert(home, local);
    }
    drop(locals);
    // Ends when the entry is dropped (replaced, failed, or the broker
    // gone), or with the runtime: what `alive` tells.
    let _ = sentinel.await;
}
