//! The broker's command connections, one per runtime that uses it on one
//! Redis node.
//!
//! Why: a connection's socket is driven by a task on the runtime that
//! opened it. With one shared connection, opened on the main thread, every
//! command an HTTP worker sent went to the main thread and its answer came
//! back: two thread wake-ups a call, two calls a move (a profile of the load
//! run put a seventh of the server's CPU on the main thread, most of it
//! driving Redis). Each HTTP worker runs a runtime of its own, on its own
//! thread: a connection opened on it is driven where the request runs.
//!
//! Connections are kept per runtime, not per thread, so a thread that runs
//! one runtime after another (a test's, a CLI command's) uses the one it is
//! on, and the blocking pool's threads share their runtime's. A runtime
//! without one is given the shared connection while its own opens (in the
//! background, on it). A runtime that ended takes its connection's tasks
//! with it, and its id may be given to a new one: each connection has a
//! sentinel task on its runtime, and one whose sentinel is gone is never
//! used again. (The shared connection, like any, reconnects on the runtime
//! of the call that finds it lost.)
//!
//! On a Redis Cluster the one cluster connection is used everywhere, from
//! every runtime, as before: not changed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use tokio::runtime::Id as RuntimeId;
use tokio::sync::oneshot;

use super::redis_conn::Commands;

/// After a runtime's connection failed to open, its calls take the shared
/// connection this long before it is tried again.
const REST_AFTER_FAILED_OPEN: Duration = Duration::from_secs(30);

/// A runtime's own connection, or where it stands.
enum Local {
    /// Being opened on the runtime; `alive` as below.
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

impl Local {
    /// Whether the runtime it was opened on still runs (a failed open is
    /// kept for its rest either way).
    fn runtime_lives(&self) -> bool {
        match self {
            Local::Opening(alive) | Local::Open { alive, .. } => !alive.is_closed(),
            Local::Failed(_) => true,
        }
    }
}

type Locals = Mutex<HashMap<RuntimeId, Local>>;

/// The command connections of a broker (clones share them).
#[derive(Clone)]
pub struct Connections {
    shared: Commands,
    /// Where the runtimes' own connections are opened (one node only).
    client: Option<redis::Client>,
    locals: Arc<Locals>,
}

impl Connections {
    /// The connections of one Redis node: `shared`, opened from `client`,
    /// and one per runtime opened from it on first use.
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

    /// The connection for a call from the current runtime: its own when
    /// open, the shared one otherwise (its own then starts opening).
    pub fn get(&self) -> Commands {
        let Some(client) = &self.client else {
            return self.shared.clone();
        };
        // Off a runtime nothing could drive a connection of its own.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self.shared.clone();
        };
        let here = runtime.id();
        let mut locals = self.locals.lock().unwrap_or_else(PoisonError::into_inner);
        match locals.get(&here).filter(|local| local.runtime_lives()) {
            Some(Local::Open { conn, .. }) => return Commands::Single(conn.clone()),
            Some(Local::Opening(_)) => return self.shared.clone(),
            Some(Local::Failed(at)) if at.elapsed() < REST_AFTER_FAILED_OPEN => {
                return self.shared.clone();
            }
            // None yet, or one of an ended runtime that had this id.
            _ => {}
        }
        // Entries of ended runtimes go (memory only: their sockets closed
        // with their runtimes).
        locals.retain(|_, local| local.runtime_lives());
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

    /// How many runtimes' own connections are kept, open or opening (tests).
    #[doc(hidden)]
    pub fn own_count(&self) -> usize {
        self.locals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|local| !matches!(local, Local::Failed(_)))
            .count()
    }

    /// Whether the current runtime's own connection is open (tests).
    #[doc(hidden)]
    pub fn has_own(&self) -> bool {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let here = runtime.id();
        let locals = self.locals.lock().unwrap_or_else(PoisonError::into_inner);
        matches!(
            locals.get(&here).filter(|local| local.runtime_lives()),
            Some(Local::Open { .. })
        )
    }
}

/// Opens runtime `home`'s connection (this task runs on it, so the
/// connection's driver does too), then holds `sentinel` until the
/// connection's entry is dropped or the runtime ends.
async fn open(
    client: redis::Client,
    home: RuntimeId,
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
                tracing::warn!(error = %e, "a runtime's own Redis connection did not open; it uses the shared one");
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
