//! A player's move on PostgreSQL in three round trips instead of five:
//! `BEGIN` with the locked read, then the move's `INSERT` with the match's
//! `UPDATE`, then `COMMIT`. The statements are the synchronous path's
//! (`matches::locked_seated`, the move row, the whole match row), built by
//! diesel and sent over tokio-postgres (diesel-async), prepared once per
//! connection.
//!
//! Why: libpq, under diesel's synchronous connection, sends a statement and
//! waits for its answer before sending the next. Each round trip costs
//! PostgreSQL a wake-up and a read and a write on its socket (a TLS record
//! each way), and costs the server a blocking thread's sleep and wake-up.
//! pgbench measured PostgreSQL's CPU for the move transaction at 0.53–0.65
//! ms sent statement by statement, against less in three round trips
//! (`scripts/pgbench/move-pipelined.sql`; README, "Moves against the
//! database's limit").
//!
//! Safety of the order: `COMMIT` is sent only once both writes have
//! answered, so it never overtakes them. `BEGIN` goes before the read
//! because `join` polls it first and tokio-postgres queues a request on its
//! first poll, in order. Should that ever change, the read's lock would end
//! with it; so the `UPDATE` also requires the version and the seats the
//! read saw (every other writer of a match row raises its version, but for
//! a player's deletion, which empties seats, and a CPU worker's claim, which
//! a move clears anyway), and a write refused or failed is rolled back and
//! the move played again on the synchronous path. A lease dropped inside a transaction (its request was
//! cancelled) closes its connection, which rolls the transaction back.

use std::sync::{Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use diesel::OptionalExtension;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::future::join;
use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
use postgres_openssl::MakeTlsConnector;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::StoreError;
use super::cached::Cached;
use super::matches::{MatchRow, MoveRow, Seating, SeatingValues, locked_seated, seating_columns};
use super::schema::{matches, moves};

/// How long opening a pipelined connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a move waits for a free pipelined connection before it takes
/// the pool's instead.
const LEASE_WAIT: Duration = Duration::from_secs(1);

/// After a failed connect, moves take the pool's connections this long.
const REST_AFTER_FAILED_CONNECT: Duration = Duration::from_secs(30);

/// Where libpq would take more of the connection's settings than the URL
/// and `PGSSLMODE` (environment variables, a password file, a root
/// certificate it would verify the server against): tokio-postgres reads
/// none of them, so its connections would differ from the pool's.
fn libpq_would_read_more(config: &tokio_postgres::Config) -> Result<(), String> {
    if let Some(name) = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .find(|k| k.starts_with("PG") && k != "PGSSLMODE" && k != "PGAPPNAME")
    {
        return Err(format!(
            "{name} is set, which libpq reads and tokio-postgres does not"
        ));
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if home
        .as_ref()
        .is_some_and(|h| h.join(".postgresql/root.crt").exists())
    {
        return Err("~/.postgresql/root.crt exists: libpq would verify the server with it".into());
    }
    if config.get_password().is_none() && home.is_some_and(|h| h.join(".pgpass").exists()) {
        return Err("~/.pgpass exists and the URL has no password".into());
    }
    Ok(())
}

/// A small pool of pipelined PostgreSQL connections for moves.
pub struct Pipeline {
    config: tokio_postgres::Config,
    tls: MakeTlsConnector,
    /// Idle connections, each with the thread that opened it: its socket's
    /// task runs on that thread's runtime (an HTTP worker's), so a move
    /// served there uses it without waking another thread.
    idle: Mutex<Vec<(ThreadId, AsyncPgConnection)>>,
    permits: Semaphore,
    /// Set by a failed connect: until then, moves take the pool's connections.
    resting_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("size", &self.permits.available_permits())
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A pool of at most `size` pipelined connections to `url`, or why the
    /// URL cannot be followed as libpq follows it (then moves stay on the
    /// synchronous connections).
    ///
    /// # Errors
    /// A URL tokio-postgres reads differently from libpq: an option it does
    /// not know (certificates, service files), or a `PGSSLMODE` beyond
    /// `disable`, `prefer` and `require`.
    pub fn new(url: &str, size: usize) -> Result<Pipeline, String> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| format!("the database URL: {e}"))?;
        libpq_would_read_more(&config)?;
        // libpq reads PGSSLMODE when the URL names no mode; tokio-postgres does not.
        if !url.replace(' ', "").contains("sslmode=")
            && let Ok(mode) = std::env::var("PGSSLMODE")
        {
            config.ssl_mode(match mode.as_str() {
                "disable" => tokio_postgres::config::SslMode::Disable,
                "prefer" => tokio_postgres::config::SslMode::Prefer,
                "require" => tokio_postgres::config::SslMode::Require,
                other => return Err(format!("PGSSLMODE={other} is not followed")),
            });
        }
        // As in `connect_pg`: no OpenSSL clean-up at exit.
        openssl_sys::init();
        let mut builder = SslConnector::builder(SslMethod::tls()).map_err(|e| e.to_string())?;
        // libpq's `prefer` and `require` without a root certificate:
        // encrypted, the server's certificate not checked.
        builder.set_verify(SslVerifyMode::NONE);
        let mut tls = MakeTlsConnector::new(builder.build());
        tls.set_callback(|connect, _| {
            connect.set_verify_hostname(false);
            Ok(())
        });
        Ok(Pipeline {
            config,
            tls,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(size),
            resting_until: Mutex::new(None),
        })
    }

    /// A connection for one move, opened if none is idle.
    ///
    /// # Errors
    /// `Unavailable` when no connection can be opened.
    pub async fn lease(&self) -> Result<Lease<'_>, StoreError> {
        let resting = *self
            .resting_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if resting.is_some_and(|until| Instant::now() < until) {
            return Err(StoreError::Unavailable(
                "pipelined connections rest after a failed connect".into(),
            ));
        }
        let permit = tokio::time::timeout(LEASE_WAIT, self.permits.acquire())
            .await
            .map_err(|_| StoreError::Unavailable("every pipelined connection is busy".into()))?
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let here = std::thread::current().id();
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            let at = idle.iter().rposition(|(home, _)| *home == here);
            at.or(idle.len().checked_sub(1))
                .map(|at| idle.swap_remove(at))
        };
        let (home, conn) = match idle {
            Some(found) => found,
            None => match self.connect().await {
                Ok(conn) => (here, conn),
                Err(e) => {
                    // Moves take the pool's connections meanwhile, without
                    // each of them paying for a connect that fails.
                    *self
                        .resting_until
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) =
                        Some(Instant::now() + REST_AFTER_FAILED_CONNECT);
                    return Err(e);
                }
            },
        };
        Ok(Lease {
            home,
            conn: Some(conn),
            in_transaction: false,
            pipeline: self,
            _permit: permit,
        })
    }

    async fn connect(&self) -> Result<AsyncPgConnection, StoreError> {
        let unavailable = |e: String| StoreError::Unavailable(format!("pipelined connection: {e}"));
        let (client, connection) =
            tokio::time::timeout(CONNECT_TIMEOUT, self.config.connect(self.tls.clone()))
                .await
                .map_err(|_| unavailable("timed out".into()))?
                .map_err(|e| unavailable(e.to_string()))?;
        AsyncPgConnection::try_from_client_and_connection(client, connection)
            .await
            .map_err(|e| unavailable(e.to_string()))
    }
}

/// A pipelined connection leased for one move; it goes back to the pool
/// when dropped, unless it was lost or left inside a transaction.
pub struct Lease<'a> {
    /// The thread whose runtime runs the connection's socket.
    home: ThreadId,
    conn: Option<AsyncPgConnection>,
    in_transaction: bool,
    pipeline: &'a Pipeline,
    _permit: SemaphorePermit<'a>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take().filter(|_| !self.in_transaction) {
            self.pipeline
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((self.home, conn));
        }
    }
}

impl Lease<'_> {
    fn conn(&self) -> Result<&AsyncPgConnection, StoreError> {
        self.conn
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("pipelined connection closed".into()))
    }

    /// Drops the connection: it is not to be used again.
    fn close(&mut self) {
        self.conn = None;
    }

    /// `BEGIN` and the locked read of match `id` with its seating, in one
    /// round trip. A failure closes the connection (nothing was written).
    ///
    /// # Errors
    /// Database errors.
    pub async fn begin_locked(
        &mut self,
        id: &str,
    ) -> Result<Option<(MatchRow, Seating)>, StoreError> {
        self.in_transaction = true;
        let conn = self.conn()?;
        let (mut begin_on, mut read_on) = (conn, conn);
        // `join` polls the `BEGIN` first, and each future sends on its first poll.
        let (begun, found) = join(begin_on.batch_execute("BEGIN"), async {
            locked_seated!(id)
                .get_result::<(MatchRow, SeatingValues)>(&mut read_on)
                .await
                .optional()
        })
        .await;
        match begun.and(found) {
            Ok(found) => Ok(found.map(|(row, seating)| (row, seating.into()))),
            Err(e) => {
                self.close();
                Err(e.into())
            }
        }
    }

    /// Writes the move `stored` and the whole `row`, provided the row still
    /// has version `read` and the same seats, in one round trip, then
    /// commits in another. `Ok(false)`: nothing was written (the row had
    /// changed, or a write failed and was rolled back), so the move may be
    /// played again.
    ///
    /// # Errors
    /// A failed `COMMIT`: whether it committed is unknown, and the
    /// connection is closed.
    pub async fn write_and_commit(
        &mut self,
        stored: &MoveRow,
        row: &MatchRow,
        read: i32,
    ) -> Result<bool, StoreError> {
        let conn = self.conn()?;
        let (mut insert_on, mut update_on) = (conn, conn);
        let (inserted, updated) = join(
            Cached(
                diesel::insert_into(moves::table)
                    .values(stored)
                    .returning(moves::ply),
            )
            .get_result::<i32>(&mut insert_on),
            Cached(
                diesel::update(
                    matches::table
                        .find(&row.id)
                        .filter(matches::version.eq(read))
                        .filter(matches::x_player_id.is_not_distinct_from(&row.x_player_id))
                        .filter(matches::o_player_id.is_not_distinct_from(&row.o_player_id)),
                )
                .set(row)
                .returning(matches::version),
            )
            .get_results::<i32>(&mut update_on),
        )
        .await;
        let written = match inserted.and(updated) {
            Ok(versions) => !versions.is_empty(),
            Err(e) => {
                // Nothing is committed: the move may be played again.
                tracing::warn!(error = %e, "a pipelined move's write failed; rolled back");
                false
            }
        };
        if !written {
            if let Err(e) = self.rollback().await {
                tracing::warn!(error = %e, "a pipelined rollback failed");
            }
            return Ok(false);
        }
        let mut commit_on = self.conn()?;
        match commit_on.batch_execute("COMMIT").await {
            Ok(()) => {
                self.in_transaction = false;
                Ok(true)
            }
            Err(e) => {
                self.close();
                Err(e.into())
            }
        }
    }

    /// Ends the transaction without writing.
    ///
    /// # Errors
    /// The connection failed (it is closed).
    pub async fn rollback(&mut self) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        match conn.batch_execute("ROLLBACK").await {
            Ok(()) => {
                self.in_transaction = false;
                Ok(())
            }
            Err(e) => {
                self.close();
                Err(e.into())
            }
        }
    }
}
