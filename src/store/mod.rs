//! Persistence: the diesel schema, the connection pool, migrations and the
//! query functions. Queries take `&mut DbConnection` so that a use case can
//! compose several of them inside one transaction.

pub mod analyses;
mod cached;
pub mod challenges;
mod connection;
pub mod history;
pub mod key_probes;
pub mod kinds;
pub mod matches;
pub mod paired;
mod pg_connect;
pub mod pipelined;
pub mod players;
pub mod ratings;
pub mod refresh_tokens;
pub mod remembered;
pub mod rooms;
pub mod schema;
mod seat_guard;
pub mod tickets;
pub mod tournaments;
pub mod versus;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use diesel::connection::{AnsiTransactionManager, CacheSize, SimpleConnection, TransactionManager};
use diesel::r2d2::R2D2Connection;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::{Connection, SqliteConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

pub use connection::DbConnection;
pub use pg_connect::connect_pg;

use crate::config::DatabaseConfig;
use crate::time::ms_of;

const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
/// Key of the PostgreSQL advisory lock that serialises migrations of instances starting together.
const MIGRATION_LOCK: i64 = 0x7574_7474_6d69_6772;

/// What can go wrong talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached (pool exhausted, connection refused or lost).
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// A query failed.
    #[error("database query failed: {0}")]
    Query(DieselError),
    /// Migrations could not be applied.
    #[error("migration failed: {0}")]
    Migration(String),
}

impl From<DieselError> for StoreError {
    fn from(err: DieselError) -> Self {
        match &err {
            DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _)
            | DieselError::DatabaseError(DatabaseErrorKind::UnableToSendCommand, _)
            | DieselError::BrokenTransactionManager => StoreError::Unavailable(err.to_string()),
            _ => StoreError::Query(err),
        }
    }
}

impl StoreError {
    /// Whether the error is a violation of a unique constraint.
    pub fn is_unique_violation(&self) -> bool {
        matches!(
            self,
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                _
            ))
        )
    }

    /// Whether the error is a violation of a foreign key, or of the check
    /// that stands for one (`seat_guard`: a seat of a missing player).
    pub fn is_foreign_key_violation(&self) -> bool {
        matches!(
            self,
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::ForeignKeyViolation,
                _
            ))
        )
    }
}

/// Which database engine a pool talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL.
    Postgres,
    /// SQLite.
    Sqlite,
}

/// Opens connections of the configured backend only: diesel's generic
/// `establish` would try every backend in turn, and SQLite happily opens a
/// file named after a PostgreSQL URL when PostgreSQL is down.
#[derive(Debug)]
pub struct Manager {
    database: DatabaseConfig,
    /// Whether PostgreSQL connections keep named prepared statements (see
    /// [`Db::with_options`]).
    prepared_statements: bool,
    /// How many connections were found lost so far (see [`TEST_AFTER_IDLE`]).
    losses: Arc<AtomicU64>,
    /// Set by [`Db::close`]: no connection is opened or handed out after,
    /// and one that comes back is closed.
    closed: Arc<AtomicBool>,
    /// The pool's connections, open or opening (see [`Live`]).
    live: Arc<AtomicUsize>,
}

/// The pool's connection errors (a database down, a refused login), logged
/// as r2d2's own handler logs them, except those of a closed pool: it keeps
/// trying to open its one idle connection, and is refused each time.
#[derive(Debug)]
struct PoolErrors {
    closed: Arc<AtomicBool>,
}

impl diesel::r2d2::HandleError<diesel::r2d2::Error> for PoolErrors {
    fn handle_error(&self, error: diesel::r2d2::Error) {
        if !self.closed.load(Ordering::Relaxed) {
            tracing::error!(%error, "database connection failed");
        }
    }
}

/// The error of a closed pool.
fn pool_closed() -> diesel::r2d2::Error {
    diesel::r2d2::Error::ConnectionError(diesel::ConnectionError::BadConnection(
        "the database pool is closed".into(),
    ))
}

/// A connection checked out of the pool this long after its last use is
/// tested first (a round trip). One used more recently is trusted, unless a
/// connection was found lost since: under load connections are reused within
/// milliseconds, so the test query stops costing the database a statement
/// per checkout, while one that sat idle through a database restart is
/// still found out before a request uses it.
pub const TEST_AFTER_IDLE: Duration = Duration::from_secs(1);

/// A database call this slow is logged with where its time went.
pub const SLOW_CALL: Duration = Duration::from_millis(50);

/// A connection in the pool with what the pool needs to decide whether to
/// test it on checkout.
pub struct Pooled {
    conn: DbConnection,
    /// When its last use ended.
    released: Instant,
    /// The pool's count of lost connections when this one last answered.
    seen_losses: u64,
    /// Found lost: the pool drops it when it comes back.
    lost: bool,
    /// Last, so that it is dropped after `conn` has closed.
    _live: Live,
}

/// One of the pool's connections, counted from before it opens until after
/// it has closed, so that [`Db::close`] can wait for every one (r2d2's own
/// count drops a connection before closing it, and does not count one
/// still opening).
struct Live(Arc<AtomicUsize>);

impl Live {
    fn new(count: &Arc<AtomicUsize>) -> Live {
        count.fetch_add(1, Ordering::SeqCst);
        Live(count.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection checked out of the pool; it dereferences to the
/// [`DbConnection`] and records when it goes back.
pub struct Checkout {
    conn: diesel::r2d2::PooledConnection<Manager>,
    losses: Arc<AtomicU64>,
}

impl Checkout {
    /// After a use that failed: whether the connection itself was lost (a
    /// restarted or unreachable database) rather than the statement
    /// refused. A lost one is dropped, and every other pooled connection is
    /// tested before its next use, since they most likely went the same way.
    /// Returns whether it was lost.
    fn check_after_failure(&mut self) -> bool {
        if self.conn.conn.ping().is_ok() {
            return false;
        }
        self.conn.lost = true;
        self.losses.fetch_add(1, Ordering::Relaxed);
        true
    }
}

impl std::ops::Deref for Checkout {
    type Target = DbConnection;
    fn deref(&self) -> &DbConnection {
        &self.conn.conn
    }
}

impl std::ops::DerefMut for Checkout {
    fn deref_mut(&mut self) -> &mut DbConnection {
        &mut self.conn.conn
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        self.conn.released = Instant::now();
    }
}

impl diesel::r2d2::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<Pooled, Self::Error> {
        // Read before connecting: a loss counted meanwhile gets it tested.
        let seen_losses = self.losses.load(Ordering::Relaxed);
        // Counted before the flag is read (both `SeqCst`, as in `Db::close`):
        // a close that counts no connection is seen by every open after.
        let live = Live::new(&self.live);
        if self.closed.load(Ordering::SeqCst) {
            return Err(pool_closed());
        }
        let conn = self.open()?;
        // Closed while it opened: closed here, then uncounted.
        if self.closed.load(Ordering::SeqCst) {
            drop(conn);
            return Err(pool_closed());
        }
        Ok(Pooled {
            conn,
            released: Instant::now(),
            seen_losses,
            lost: false,
            _live: live,
        })
    }

    fn is_valid(&self, pooled: &mut Pooled) -> Result<(), Self::Error> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(pool_closed());
        }
        let losses = self.losses.load(Ordering::Relaxed);
        if pooled.seen_losses == losses && pooled.released.elapsed() < TEST_AFTER_IDLE {
            return Ok(());
        }
        pooled
            .conn
            .ping()
            .map_err(diesel::r2d2::Error::QueryError)?;
        pooled.seen_losses = losses;
        Ok(())
    }

    fn has_broken(&self, pooled: &mut Pooled) -> bool {
        pooled.lost || self.closed.load(Ordering::Relaxed) || pooled.conn.is_broken()
    }
}

impl Manager {
    /// A new connection of the configured backend.
    fn open(&self) -> Result<DbConnection, diesel::r2d2::Error> {
        match &self.database {
            DatabaseConfig::Postgres(url) => {
                let mut conn = connect_pg(url).map_err(diesel::r2d2::Error::ConnectionError)?;
                if !self.prepared_statements {
                    // Unnamed statements: parse, bind and execute go in one
                    // message sequence, so PgBouncer in transaction pooling
                    // may hand each statement to any server connection.
                    conn.set_prepared_statement_cache_size(CacheSize::Disabled);
                }
                Ok(DbConnection::Pg(conn))
            }
            DatabaseConfig::Sqlite(path) => {
                #[allow(clippy::disallowed_methods)] // SQLite: no OpenSSL involved
                let mut conn = SqliteConnection::establish(&path.to_string_lossy())
                    .map_err(diesel::r2d2::Error::ConnectionError)?;
                // busy_timeout first: switching to WAL itself needs the lock.
                conn.batch_execute(
                    "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; \
                     PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
                )
                .map_err(diesel::r2d2::Error::QueryError)?;
                Ok(DbConnection::Sqlite(conn))
            }
        }
    }
}

/// Makes the SQLite file (and a missing folder for it) private before it is
/// opened: the file is created 0600, so its `-wal` and `-shm` files are too,
/// and existing ones with wider modes are narrowed with a warning. An existing
/// folder is left as it is here (the data folder is the server's to fix).
fn private_sqlite_files(path: &std::path::Path) -> Result<(), StoreError> {
    let failed = |e: std::io::Error, what: &std::path::Path| {
        StoreError::Unavailable(format!("cannot prepare {}: {e}", what.display()))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        crate::data_dir::ensure_private_dir(dir).map_err(|e| failed(e, dir))?;
    }
    // `:memory:` and URI forms are not files of ours.
    let name = path.to_string_lossy();
    if name.starts_with(':') || name.starts_with("file:") {
        return Ok(());
    }
    crate::data_dir::ensure_private_file(path).map_err(|e| failed(e, path))?;
    for suffix in ["-wal", "-shm"] {
        let extra = std::path::PathBuf::from(format!("{name}{suffix}"));
        if extra.exists() {
            crate::data_dir::ensure_private_file(&extra).map_err(|e| failed(e, &extra))?;
        }
    }
    Ok(())
}

/// The connection pool, shared by all requests and workers.
#[derive(Clone)]
pub struct Db {
    pool: diesel::r2d2::Pool<Manager>,
    backend: Backend,
    /// The pool manager's count of lost connections.
    losses: Arc<AtomicU64>,
    /// Whether [`Db::close`] was called (shared with the pool's manager).
    closed: Arc<AtomicBool>,
    /// The pool's connections, open or opening (shared with its manager).
    live: Arc<AtomicUsize>,
    /// PostgreSQL connections for pipelined moves (see [`Db::with_pipeline`]).
    pipeline: Option<Arc<pipelined::Pipeline>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Builds the pool. It connects lazily, so a database that is down at
    /// start shows as `/readyz` 503 rather than a crash loop.
    ///
    /// # Errors
    /// The SQLite data folder cannot be created.
    pub fn new(database: &DatabaseConfig, max_size: u32) -> Result<Db, StoreError> {
        Db::with_options(database, max_size, true)
    }

    /// As [`Db::new`]; `prepared_statements: false` makes PostgreSQL
    /// connections send every statement unnamed instead of keeping diesel's
    /// named prepared statements, as PgBouncer in transaction pooling needs
    /// (before 1.21 it cannot follow a named statement from the server
    /// connection that prepared it to the next one it hands out).
    ///
    /// # Errors
    /// The SQLite data folder cannot be created.
    pub fn with_options(
        database: &DatabaseConfig,
        max_size: u32,
        prepared_statements: bool,
    ) -> Result<Db, StoreError> {
        let backend = match database {
            DatabaseConfig::Postgres(_) => Backend::Postgres,
            DatabaseConfig::Sqlite(path) => {
                private_sqlite_files(path)?;
                Backend::Sqlite
            }
        };
        let losses = Arc::new(AtomicU64::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        let live = Arc::new(AtomicUsize::new(0));
        // r2d2 calls `is_valid` on every checkout; it tests only the
        // connections that need it (see `TEST_AFTER_IDLE`).
        let pool = diesel::r2d2::Pool::builder()
            .max_size(max_size)
            .min_idle(Some(1))
            .connection_timeout(Duration::from_secs(5))
            .test_on_check_out(true)
            .error_handler(Box::new(PoolErrors {
                closed: closed.clone(),
            }))
            .build_unchecked(Manager {
                database: database.clone(),
                prepared_statements,
                losses: losses.clone(),
                closed: closed.clone(),
                live: live.clone(),
            });
        Ok(Db {
            pool,
            backend,
            losses,
            closed,
            live,
            pipeline: None,
        })
    }

    /// Gives a PostgreSQL pool `size` connections of its own for players'
    /// moves in two statements (see [`pipelined`]). Not on SQLite, not without
    /// prepared statements (PgBouncer in transaction pooling), not for
    /// `size` 0, and not for a URL that tokio-postgres would read otherwise
    /// than libpq (logged): moves then take the pool's connections.
    #[must_use]
    pub fn with_pipeline(
        mut self,
        database: &DatabaseConfig,
        size: u32,
        prepared_statements: bool,
    ) -> Db {
        let DatabaseConfig::Postgres(url) = database else {
            return self;
        };
        if size == 0 || !prepared_statements {
            return self;
        }
        match pipelined::Pipeline::new(url, size as usize) {
            Ok(pipeline) => self.pipeline = Some(Arc::new(pipeline)),
            Err(why) => tracing::warn!(%why, "moves are not pipelined"),
        }
        self
    }

    /// The pipelined connections for moves, if this pool has them.
    pub fn pipeline(&self) -> Option<&pipelined::Pipeline> {
        self.pipeline.as_deref()
    }

    /// Closes the pool for good (blocking): its idle connections at once,
    /// each one in use when it comes back, waiting at most `wait` for those;
    /// none is opened or handed out after. Returns whether every connection
    /// was closed. A closed PostgreSQL connection says goodbye (libpq's
    /// `Terminate`), and the last SQLite connection folds the write-ahead log
    /// back into the database file. Without this the connections close when
    /// the last copy of the pool is dropped, and at shutdown that is an HTTP
    /// worker's thread tearing down its services after the server stopped,
    /// racing the process's exit: PostgreSQL then logged "connection reset
    /// by peer" for each connection. Pipelined connections close apart
    /// ([`pipelined::Pipeline::close`]).
    pub fn close(&self, wait: Duration) -> bool {
        self.closed.store(true, Ordering::SeqCst);
        let until = Instant::now() + wait;
        loop {
            // A closed pool's check-out test fails, so r2d2 closes every idle
            // connection it meets; one handed out anyway is marked lost.
            while let Some(mut conn) = self.pool.try_get() {
                conn.lost = true;
            }
            // Not r2d2's count: it lets a connection go before closing it.
            if self.live.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The backend this pool talks to.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A pooled connection, waiting at most the pool's timeout.
    ///
    /// # Errors
    /// `Unavailable` when no connection can be had.
    pub fn get(&self) -> Result<Checkout, StoreError> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(StoreError::Unavailable(pool_closed().to_string()));
        }
        self.pool
            .get()
            .map(|conn| Checkout {
                conn,
                losses: self.losses.clone(),
            })
            .map_err(|e| StoreError::Unavailable(e.to_string()))
    }

    /// Runs `f` with a pooled connection on the blocking thread pool (diesel is synchronous).
    ///
    /// # Errors
    /// Whatever `f` returns, or `Unavailable` when no connection can be had.
    pub async fn run<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConnection) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let db = self.clone();
        let asked = Instant::now();
        tokio::task::spawn_blocking(move || db.call(asked, f).0)
            .await
            .map_err(|e| StoreError::Unavailable(format!("database task failed: {e}")))?
    }

    /// As [`Db::run`], for `f` that only reads: when its connection turns
    /// out lost (its backend ended, as by a database restart), `f` runs
    /// once more on another, and the first error is logged. A pooled
    /// connection is trusted without a test for a moment after its last use
    /// (see [`TEST_AFTER_IDLE`]), so requests that check out several such
    /// connections at once would each meet a lost one; a read can simply be
    /// asked again, where a write could have committed. While the database
    /// is still down the second try fails too, after the pool's check-out
    /// timeout.
    ///
    /// # Errors
    /// Whatever `f` returns, or `Unavailable` when no connection can be had.
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: Fn(&mut DbConnection) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let db = self.clone();
        let asked = Instant::now();
        tokio::task::spawn_blocking(move || match db.call(asked, &f) {
            (Err(_), true) => {
                tracing::warn!("a read met a lost database connection; asking again on another");
                db.call(Instant::now(), &f).0
            }
            (result, _) => result,
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("database task failed: {e}")))?
    }

    /// One blocking call of `f` with a pooled connection; also says whether
    /// `f` failed because the connection was lost.
    fn call<T, E, F>(&self, asked: Instant, f: F) -> (Result<T, E>, bool)
    where
        F: FnOnce(&mut DbConnection) -> Result<T, E>,
        E: From<StoreError>,
    {
        let thread = asked.elapsed();
        let mut conn = match self.get() {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(
                    thread_ms = ms_of(thread),
                    checkout_ms = ms_of(asked.elapsed().saturating_sub(thread)),
                    error = %e,
                    "no database connection"
                );
                return (Err(e.into()), false);
            }
        };
        let checkout = asked.elapsed().saturating_sub(thread);
        let result = f(&mut conn);
        let lost = result.is_err() && conn.check_after_failure();
        let total = asked.elapsed();
        if total >= SLOW_CALL {
            // Where a slow call waited: for a blocking thread, for a
            // pooled connection, or in its own statements.
            tracing::warn!(
                thread_ms = ms_of(thread),
                checkout_ms = ms_of(checkout),
                work_ms = ms_of(total.saturating_sub(thread + checkout)),
                "slow database call"
            );
        }
        (result, lost)
    }

    /// Runs `f` inside one write transaction (see [`write_transaction`]) on the blocking pool.
    ///
    /// # Errors
    /// Whatever `f` returns (the transaction is rolled back), or a store error.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConnection) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        self.run(move |conn| write_transaction(conn, f)).await
    }

    /// Applies pending migrations of this backend.
    ///
    /// # Errors
    /// The database cannot be reached or a migration fails.
    pub fn migrate(&self) -> Result<usize, StoreError> {
        let mut conn = self.get()?;
        migrate(&mut conn)
    }

    /// Checks that the database answers.
    ///
    /// # Errors
    /// `Unavailable` when it does not.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.read(|conn| {
            conn.batch_execute("SELECT 1")
                .map_err(|e| StoreError::Unavailable(e.to_string()))
        })
        .await
    }
}

/// Applies pending migrations on `conn`; several instances starting at once
/// take turns under an advisory lock on PostgreSQL. The lock and the
/// migrations share one transaction (a transaction-level lock, each migration
/// a savepoint), so it holds through PgBouncer in transaction pooling, where a
/// session-level lock could be taken on one server connection and released
/// on another.
///
/// # Errors
/// A migration fails.
pub fn migrate(conn: &mut DbConnection) -> Result<usize, StoreError> {
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| StoreError::Migration(e.to_string());
    match conn {
        DbConnection::Pg(pg) => pg.transaction(|tx| {
            tx.batch_execute(&format!("SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))
                .map_err(StoreError::from)?;
            tx.run_pending_migrations(PG_MIGRATIONS)
                .map(|v| v.len())
                .map_err(failed)
        }),
        DbConnection::Sqlite(lite) => lite
            .run_pending_migrations(SQLITE_MIGRATIONS)
            .map(|v| v.len())
            .map_err(failed),
    }
}

/// Runs `f` in one transaction that holds the write lock from its first
/// statement: a plain transaction on PostgreSQL (rows are locked with
/// `SELECT … FOR UPDATE` where needed), `BEGIN IMMEDIATE` on SQLite, so that a
/// read-then-write never fails half way on a lock upgrade.
///
/// # Errors
/// Whatever `f` returns, after rolling back; or the error of begin/commit.
pub fn write_transaction<T, E, F>(conn: &mut DbConnection, f: F) -> Result<T, E>
where
    F: FnOnce(&mut DbConnection) -> Result<T, E>,
    E: From<StoreError>,
{
    if matches!(conn, DbConnection::Pg(_)) {
        return conn
            .transaction(|c| f(c).map_err(TxError::App))
            .map_err(TxError::into_app);
    }
    begin_immediate(conn).map_err(StoreError::from)?;
    match f(conn) {
        Ok(value) => match DbConnection::commit_transaction(conn) {
            Ok(()) => Ok(value),
            Err(err) => {
                let _ = DbConnection::rollback_transaction(conn);
                Err(StoreError::from(err).into())
            }
        },
        Err(err) => {
            DbConnection::rollback_transaction(conn).map_err(StoreError::from)?;
            Err(err)
        }
    }
}

fn begin_immediate(conn: &mut DbConnection) -> Result<(), DieselError> {
    match conn {
        DbConnection::Sqlite(lite) => {
            AnsiTransactionManager::begin_transaction_sql(lite, "BEGIN IMMEDIATE")
        }
        DbConnection::Pg(_) => DbConnection::begin_transaction(conn),
    }
}

/// Carries either the caller's error or diesel's through `Connection::transaction`.
enum TxError<E> {
    App(E),
    Db(DieselError),
}

impl<E> From<DieselError> for TxError<E> {
    fn from(err: DieselError) -> Self {
        TxError::Db(err)
    }
}

impl<E: From<StoreError>> TxError<E> {
    fn into_app(self) -> E {
        match self {
            TxError::App(e) => e,
            TxError::Db(e) => StoreError::from(e).into(),
        }
    }
}

#[cfg(test)]
mod migration_tests;
#[cfg(test)]
mod paired_tests;
#[cfg(test)]
mod pipelined_tests;
#[cfg(test)]
mod pool_tests;
#[cfg(test)]
mod prepared_tests;
#[cfg(test)]
pub(crate) mod scratch_pg;
#[cfg(test)]
mod seat_guard_tests;
#[cfg(test)]
mod seat_probe_tests;
