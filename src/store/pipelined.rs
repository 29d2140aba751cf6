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
//! answered, so it never overtakes them. The `UPDATE` also requires the
//! version the locked read saw: should the read ever reach the database
//! before `BEGIN` (it is sent after it, on the same connection), its lock
//! would have ended with it, and the version check still refuses a row that
//! changed meanwhile; the move is then rolled back and played again on the
//! synchronous path. A lease dropped inside a transaction (its request was
//! cancelled) closes its connection, which rolls the transaction back.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

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

/// How long a move waits for a pipelined connection (a free one, or a new
/// one opened) before it goes the synchronous way instead.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A small pool of pipelined PostgreSQL connections for moves.
pub struct Pipeline {
    config: tokio_postgres::Config,
    tls: MakeTlsConnector,
    idle: Mutex<Vec<AsyncPgConnection>>,
    permits: Semaphore,
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
        // libpq reads PGSSLMODE when the URL names no mode; tokio-postgres does not.
        if !url.contains("sslmode=")
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
        })
    }

    /// A connection for one move, opened if none is idle.
    ///
    /// # Errors
    /// `Unavailable` when no connection can be opened.
    pub async fn lease(&self) -> Result<Lease<'_>, StoreError> {
        let permit = tokio::time::timeout(CONNECT_TIMEOUT, self.permits.acquire())
            .await
            .map_err(|_| StoreError::Unavailable("every pipelined connection is busy".into()))?
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        Ok(Lease {
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
                .push(conn);
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
    /// has version `read`, in one round trip, then commits in another.
    /// `Ok(false)`: the row had changed, and nothing was written.
    ///
    /// # Errors
    /// Database errors. A failed write is rolled back; a failed `COMMIT`
    /// closes the connection (whether it committed is unknown).
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
                        .filter(matches::version.eq(read)),
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
                self.rollback().await?;
                return Err(e.into());
            }
        };
        if !written {
            self.rollback().await?;
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
