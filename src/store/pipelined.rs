//! A player's move on PostgreSQL in two round trips and two statements,
//! instead of five of each: the read of the match row, then one statement
//! that writes the row and the move together, provided the row is as it was
//! read, and reads the seating the answer shows. When this instance
//! remembers the row (the match's previous move wrote or read it here:
//! `store::remembered`), the read is skipped: one statement, one round trip. The read is
//! built by diesel, the write written out by hand (`MoveWrite`'s comment
//! says why); both go over tokio-postgres (diesel-async), prepared once per
//! connection.
//!
//! Why: libpq, under diesel's synchronous connection, sends a statement and
//! waits for its answer before sending the next. Each round trip costs
//! PostgreSQL a wake-up and a read and a write on its socket (a TLS record
//! each way), and costs the server a blocking thread's sleep and wake-up;
//! `BEGIN`, `COMMIT` and the row lock of `SELECT … FOR UPDATE` (a tuple
//! lock, written to the heap and the WAL) cost PostgreSQL too. pgbench
//! measured PostgreSQL's CPU for the move at 0.53–0.65 ms in five round
//! trips against less in fewer (the eleventh and twelfth sessions in
//! docs/PERFORMANCE-LOG.md; `scripts/pgbench/`).
//!
//! Why it is safe without the lock: the write is one statement, so one
//! transaction, all or nothing. Its `UPDATE` requires the row to be as the
//! move was judged on ([`Guard`]: the version, which every change of a
//! match raises, and the columns two writers change without raising it),
//! and its `INSERT` writes the move only with the row. A row changed in
//! between writes nothing, and the move is judged again on the locked
//! synchronous path. A move's judgement thus rests on the row as it is when
//! the move is written, as under the lock.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use diesel::OptionalExtension;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::DatabaseErrorKind;
use diesel::sql_types::{BigInt, Binary, Bool, Integer, Nullable, SmallInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
use postgres_openssl::MakeTlsConnector;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::StoreError;
use super::kinds::PlayerId;
use super::matches::{MatchRow, MoveRow, SEATING_SQL, Seating, SeatingColumns, SeatingValues};
use super::remembered::Remembered;
use super::schema::matches;

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
    /// Rows as last written or read here, for the next move's judgement.
    remembered: Remembered,
    /// The connections whose sockets are still open.
    open: Arc<Open>,
    /// Set by [`Pipeline::close`]: no connection is leased or kept idle.
    closed: AtomicBool,
}

/// A count of the pipelined connections whose socket tasks still run, and
/// a wake-up for [`Pipeline::close`] when the last one ends.
#[derive(Debug, Default)]
struct Open {
    count: AtomicUsize,
    ended: tokio::sync::Notify,
}

impl Open {
    fn count(&self) -> usize {
        // Named in full: diesel-async's `RunQueryDsl::load` is in scope.
        AtomicUsize::load(&self.count, Ordering::SeqCst)
    }
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
            remembered: Remembered::default(),
            open: Arc::default(),
            closed: AtomicBool::new(false),
        })
    }

    /// Whether [`Pipeline::close`] was called: moves take the pool's connections.
    pub fn is_closed(&self) -> bool {
        AtomicBool::load(&self.closed, Ordering::SeqCst)
    }

    /// Closes every pipelined connection, each with PostgreSQL's `Terminate`
    /// (the server is stopping): the idle ones now, a leased one when its
    /// move is done; leases are refused from now on. Waits until their
    /// sockets are closed, at most `wait`.
    pub async fn close(&self, wait: Duration) {
        self.closed.store(true, Ordering::SeqCst);
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(PoisonError::into_inner));
        drop(idle);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let ended = self.open.ended.notified();
            tokio::pin!(ended);
            // Registered before the count is read, so the last end is not missed.
            ended.as_mut().enable();
            if self.open.count() == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                tracing::warn!(
                    open = self.open.count(),
                    "pipelined connections still open when the server stopped"
                );
                return;
            }
        }
    }

    /// A connection for one move, opened if none is idle.
    ///
    /// # Errors
    /// `Unavailable` when no connection can be opened.
    pub async fn lease(&self) -> Result<Lease<'_>, StoreError> {
        if self.is_closed() {
            return Err(StoreError::Unavailable(
                "pipelined connections closed: the server is stopping".into(),
            ));
        }
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
            in_flight: false,
            pipeline: self,
            _permit: permit,
        })
    }

    /// The row of match `id` as this pipeline last wrote it, if it is
    /// remembered (taken: see `store::remembered`). Only a guess at the
    /// stored row: [`Lease::write`]'s guard tells whether it was right.
    pub fn recall(&self, id: &str) -> Option<MatchRow> {
        self.remembered.take(id)
    }

    /// Remembers `row`, as committed (written by [`Lease::write`], or read
    /// or written just now by another path), for the next move.
    pub fn remember(&self, row: MatchRow) {
        self.remembered.put(row);
    }

    async fn connect(&self) -> Result<AsyncPgConnection, StoreError> {
        let unavailable = |e: String| StoreError::Unavailable(format!("pipelined connection: {e}"));
        let (client, connection) =
            tokio::time::timeout(CONNECT_TIMEOUT, self.config.connect(self.tls.clone()))
                .await
                .map_err(|_| unavailable("timed out".into()))?
                .map_err(|e| unavailable(e.to_string()))?;
        // The socket is driven here rather than by diesel-async, whose task
        // stops the moment its connection is dropped, before the client's
        // `Terminate` goes out: PostgreSQL then counts a lost client
        // (`pg_stat_database.sessions_abandoned`). Driven to its end, a
        // dropped client's connection says goodbye first.
        let open = Arc::clone(&self.open);
        open.count.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a pipelined connection ended with an error");
            }
            if open.count.fetch_sub(1, Ordering::SeqCst) == 1 {
                open.ended.notify_waiters();
            }
        });
        AsyncPgConnection::try_from(client)
            .await
            .map_err(|e| unavailable(e.to_string()))
    }
}

/// What another writer may have changed in a match row since a move was
/// judged on it: the version, which every change of a match raises, and the
/// columns two writers change without raising it (a player's deletion
/// empties their seats; a CPU worker's claim marks the turn).
///
/// The rule it rests on, for every writer of `matches` (a migration or a
/// hand-written `UPDATE` on a live database included): a change raises the
/// version, or is to the columns here. A row judged on may be old (a
/// remembered one, `store::remembered`), and the full-row write of a move
/// judged on it would undo a change that did neither. `tests/structure.rs`
/// lists the code's writers and fails on a new one, and on a migration's
/// `UPDATE` of `matches` that does not raise the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    version: i32,
    x_player_id: Option<PlayerId>,
    o_player_id: Option<PlayerId>,
    cpu_claimed_until: Option<i64>,
}

impl Guard {
    /// The guard of `row` as read.
    #[must_use]
    pub fn of(row: &MatchRow) -> Guard {
        Guard {
            version: row.version,
            x_player_id: row.x_player_id.clone(),
            o_player_id: row.o_player_id.clone(),
            cpu_claimed_until: row.cpu_claimed_until,
        }
    }
}

/// A pipelined connection leased for one move; it goes back to the pool
/// when dropped, unless it was lost, or dropped while a statement was under
/// way (its request was cancelled) or after a refused write not followed by
/// a statement that succeeded, or the pipeline was closed meanwhile. tokio-postgres discards a dropped
/// request's answer, but what diesel-async's state is after a call dropped
/// half way is not part of its contract, so such a connection is closed.
pub struct Lease<'a> {
    /// The thread whose runtime runs the connection's socket.
    home: ThreadId,
    conn: Option<AsyncPgConnection>,
    /// Not known to be at rest: a statement is under way, or the last one
    /// failed with an error that may have ended the connection.
    in_flight: bool,
    pipeline: &'a Pipeline,
    _permit: SemaphorePermit<'a>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let reusable = !self.in_flight && !self.pipeline.is_closed();
        if let Some(conn) = self.conn.take().filter(|_| reusable) {
            self.pipeline
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((self.home, conn));
        }
    }
}

impl Lease<'_> {
    fn conn(&mut self) -> Result<&mut AsyncPgConnection, StoreError> {
        self.conn
            .as_mut()
            .ok_or_else(|| StoreError::Unavailable("pipelined connection closed".into()))
    }

    /// The read of match `id`, unlocked, in one round trip (its seating
    /// comes with the write). A failure closes the connection.
    ///
    /// # Errors
    /// Database errors.
    pub async fn read(&mut self, id: &str) -> Result<Option<MatchRow>, StoreError> {
        self.in_flight = true;
        let found = matches::table
            .find(id)
            .select(MatchRow::as_select())
            .get_result::<MatchRow>(self.conn()?)
            .await
            .optional();
        match found {
            Ok(found) => {
                self.in_flight = false;
                Ok(found)
            }
            Err(e) => {
                self.conn = None;
                Err(e.into())
            }
        }
    }

    /// Writes the move `stored` and the whole `row` in one statement, in one
    /// round trip, provided the stored row still matches `guard`, and reads
    /// the match's [`Seating`] as written. A finished `row` (a move that
    /// ended an unrated game) marks its seats finished in the same
    /// statement, as `matches::save` does. `Ok(None)`: nothing was written
    /// (the row had changed, or the database refused the statement), so the
    /// move may be judged again.
    ///
    /// # Errors
    /// The connection failed or was lost (it is closed): whether the
    /// statement committed is unknown.
    pub async fn write(
        &mut self,
        stored: &MoveRow,
        row: &MatchRow,
        guard: &Guard,
    ) -> Result<Option<Seating>, StoreError> {
        self.in_flight = true;
        let conn = self.conn()?;
        let written = match MoveWrites::of(row, guard, stored) {
            MoveWrites::GoesOn(write) => write.get_results::<SeatingValues>(conn).await,
            MoveWrites::Ends(write) => write.get_results::<SeatingValues>(conn).await,
        };
        match written {
            Ok(seatings) => {
                self.in_flight = false;
                Ok(seatings.into_iter().next().map(Seating::from))
            }
            // Refused by the database: the statement wrote nothing. (diesel-async
            // reports a lost connection as a database error of these two
            // kinds.) An error that ends the connection (PostgreSQL's FATAL,
            // when its backend is ended by an administrator or a shutdown)
            // comes here too, of an unknown kind, and diesel's error tells
            // neither its SQLSTATE nor its severity. So the connection stays
            // `in_flight`, not known to be at rest: a next statement on this
            // lease (the remembered row's fresh read) fails on it if it is
            // gone, sending the move to the pool, where a move already
            // written is a safe retry (tests/reliability.rs ends a backend
            // mid-write), or succeeds and clears the flag; otherwise the
            // lease closes it instead of handing it to the next move.
            Err(e @ diesel::result::Error::DatabaseError(kind, _))
                if !matches!(
                    kind,
                    DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection
                ) =>
            {
                tracing::warn!(error = %e, "a pipelined move's write was refused");
                Ok(None)
            }
            Err(e) => {
                self.conn = None;
                Err(e.into())
            }
        }
    }
}

/// Pushes `, "<column>" = <bind>`: one more column of the row's `SET`.
macro_rules! assign {
    ($out:ident, $column:literal, $ty:ty, $value:expr) => {
        $out.push_sql(concat!(", \"", $column, "\" = "));
        $out.push_bind_param::<$ty, _>($value)?;
    };
}

/// `WITH updated AS (UPDATE matches SET <every column but the id> WHERE
/// <the row as judged> RETURNING …), inserted AS (INSERT INTO moves …
/// SELECT <the move> FROM updated) SELECT <the seating> FROM updated AS
/// matches`: the move is written with the row, or neither (the `UPDATE`
/// returns one row or none), and the seating is read as the row was
/// written. With `ENDS` (the row is finished), a third part, `finished AS
/// (UPDATE match_players SET active = false FROM updated …)`, marks the
/// match's seats finished with them.
///
/// Written out by hand, the SQL as static pieces between the binds, where
/// diesel would walk its query tree on every move: diesel-async renders a
/// statement's text on every call even when its prepared statement is
/// cached, and diesel's renderer quotes each identifier into a new
/// `String`. Built by diesel, the statement took 7.9 % of the server's CPU
/// samples under load; written out, 4.5 %, nearly all of it the binds'
/// serialisation. Its `UPDATE` is the one diesel's
/// `update(matches).set(row)` would send, text and binds:
/// `store::pipelined_tests` compares the two, so a field added to
/// `MatchRow` fails there until it is added here.
struct MoveWrite<'a, const ENDS: bool> {
    row: &'a MatchRow,
    guard: &'a Guard,
    stored: &'a MoveRow,
}

/// The write of a move, by whether it leaves the game going on: two
/// statements, each prepared once per connection.
enum MoveWrites<'a> {
    /// The row is active.
    GoesOn(MoveWrite<'a, false>),
    /// The row is finished: its seats are marked finished too.
    Ends(MoveWrite<'a, true>),
}

impl<'a> MoveWrites<'a> {
    /// The write of the move `stored` and the whole `row`, judged on the row `guard` saw.
    fn of(row: &'a MatchRow, guard: &'a Guard, stored: &'a MoveRow) -> Self {
        if row.is_active_status() {
            MoveWrites::GoesOn(MoveWrite { row, guard, stored })
        } else {
            MoveWrites::Ends(MoveWrite { row, guard, stored })
        }
    }
}

impl<const ENDS: bool> QueryFragment<Pg> for MoveWrite<'_, ENDS> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH updated AS (");
        push_guarded_update(out.reborrow(), self.row, self.guard)?;
        push_move_and_seating(out, self.stored, ENDS)
    }
}

/// The `UPDATE` of `matches` setting every column of `r` but the id, where
/// the row is as `g` saw it, returning the id and the seats. The same text
/// whatever the values (a `None` is a NULL bind, not a `DEFAULT`), as
/// `MoveWrite`'s static query id requires.
fn push_guarded_update<'b>(
    mut out: AstPass<'_, 'b, Pg>,
    r: &'b MatchRow,
    g: &'b Guard,
) -> QueryResult<()> {
    out.push_sql(r#"UPDATE "matches" SET "mode" = "#);
    out.push_bind_param::<Text, _>(&r.mode)?;
    assign!(out, "ladder", Nullable<Text>, &r.ladder);
    assign!(out, "rated", Bool, &r.rated);
    assign!(out, "depth", SmallInt, &r.depth);
    assign!(out, "tc_kind", Text, &r.tc_kind);
    assign!(out, "tc_initial_ms", Nullable<BigInt>, &r.tc_initial_ms);
    assign!(out, "tc_increment_ms", Nullable<BigInt>, &r.tc_increment_ms);
    assign!(out, "tc_turn_ms", Nullable<BigInt>, &r.tc_turn_ms);
    assign!(out, "x_player_id", Nullable<Text>, &r.x_player_id);
    assign!(out, "o_player_id", Nullable<Text>, &r.o_player_id);
    assign!(out, "x_controller", Text, &r.x_controller);
    assign!(out, "o_controller", Text, &r.o_controller);
    assign!(out, "cpu_level", Nullable<SmallInt>, &r.cpu_level);
    assign!(out, "position", Binary, &r.position);
    assign!(out, "ply", Integer, &r.ply);
    assign!(out, "to_move", Nullable<Text>, &r.to_move);
    assign!(out, "x_bank_ms", Nullable<BigInt>, &r.x_bank_ms);
    assign!(out, "o_bank_ms", Nullable<BigInt>, &r.o_bank_ms);
    assign!(out, "turn_started_at", BigInt, &r.turn_started_at);
    assign!(out, "deadline_at", Nullable<BigInt>, &r.deadline_at);
    assign!(out, "awaiting_cpu", Bool, &r.awaiting_cpu);
    assign!(
        out,
        "cpu_claimed_until",
        Nullable<BigInt>,
        &r.cpu_claimed_until
    );
    assign!(out, "status", Text, &r.status);
    assign!(out, "winner", Nullable<Text>, &r.winner);
    assign!(out, "reason", Nullable<Text>, &r.reason);
    assign!(out, "room_code", Nullable<Text>, &r.room_code);
    assign!(out, "version", Integer, &r.version);
    assign!(out, "created_at", BigInt, &r.created_at);
    assign!(out, "finished_at", Nullable<BigInt>, &r.finished_at);
    assign!(out, "x_lag_quota_ms", Nullable<BigInt>, &r.x_lag_quota_ms);
    assign!(out, "o_lag_quota_ms", Nullable<BigInt>, &r.o_lag_quota_ms);
    out.push_sql(" WHERE (((((\"matches\".\"id\" = ");
    out.push_bind_param::<Text, _>(&r.id)?;
    out.push_sql(") AND (\"matches\".\"version\" = ");
    out.push_bind_param::<Integer, _>(&g.version)?;
    out.push_sql(")) AND (\"matches\".\"x_player_id\" IS NOT DISTINCT FROM ");
    out.push_bind_param::<Nullable<Text>, _>(&g.x_player_id)?;
    out.push_sql(")) AND (\"matches\".\"o_player_id\" IS NOT DISTINCT FROM ");
    out.push_bind_param::<Nullable<Text>, _>(&g.o_player_id)?;
    out.push_sql(")) AND (\"matches\".\"cpu_claimed_until\" IS NOT DISTINCT FROM ");
    out.push_bind_param::<Nullable<BigInt>, _>(&g.cpu_claimed_until)?;
    out.push_sql(
        ")) RETURNING \"matches\".\"id\", \"matches\".\"x_player_id\", \"matches\".\"o_player_id\"",
    );
    Ok(())
}

/// The statement's tail after its `UPDATE`: `), inserted AS (INSERT INTO
/// moves … SELECT <the move> FROM updated)`, with `ends` `, finished AS
/// (UPDATE match_players … FROM updated)`, then `SELECT <the seating> FROM
/// updated AS matches`. Diesel has no data-modifying `WITH`, so this part
/// is written out whoever builds the `UPDATE` (the tests build it with
/// diesel).
pub(super) fn push_move_and_seating<'b>(
    mut out: AstPass<'_, 'b, Pg>,
    m: &'b MoveRow,
    ends: bool,
) -> QueryResult<()> {
    // Every field named: a new one fails to compile until it is written here.
    let MoveRow {
        match_id,
        ply,
        seat,
        square,
        played_at,
        clock_ms,
        by_cpu,
    } = m;
    out.push_sql(
        "), inserted AS (INSERT INTO \"moves\" (\"match_id\", \"ply\", \"seat\", \"square\", \
         \"played_at\", \"clock_ms\", \"by_cpu\") SELECT ",
    );
    out.push_bind_param::<Text, _>(match_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Integer, _>(ply)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, _>(seat)?;
    out.push_sql(", ");
    out.push_bind_param::<Integer, _>(square)?;
    out.push_sql(", ");
    out.push_bind_param::<BigInt, _>(played_at)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<BigInt>, _>(clock_ms)?;
    out.push_sql(", ");
    out.push_bind_param::<Bool, _>(by_cpu)?;
    out.push_sql(" FROM updated)");
    if ends {
        // `matches::save`'s second statement; a data-modifying `WITH` runs
        // to its end whether or not the final `SELECT` reads it.
        out.push_sql(
            ", finished AS (UPDATE \"match_players\" SET \"active\" = false FROM updated \
             WHERE \"match_players\".\"match_id\" = updated.\"id\" AND \"match_players\".\"active\")",
        );
    }
    // The seating's subqueries name `matches`: the updated row here.
    out.push_sql(" SELECT ");
    out.push_sql(SEATING_SQL);
    out.push_sql(" FROM updated AS \"matches\"");
    Ok(())
}

/// One shape whatever the values (two: `ENDS` is part of the type), so one
/// prepared statement per connection for each, found in diesel-async's
/// cache by this type instead of by hashing the statement's text (about
/// 1.6 KB, 1.8 with `ENDS`) on every move. The text must stay the same for
/// every value: a piece that depended on one would be sent with the
/// statement prepared first.
impl<const ENDS: bool> QueryId for MoveWrite<'_, ENDS> {
    type QueryId = MoveWrite<'static, ENDS>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<const ENDS: bool> Query for MoveWrite<'_, ENDS> {
    type SqlType = SeatingColumns;
}

/// The write's SQL with its binds, as `diesel::debug_query` shows it: the
/// statement [`Lease::write`] sends for `row`.
#[cfg(test)]
pub(super) fn move_write_sql(row: &MatchRow, guard: &Guard, stored: &MoveRow) -> String {
    match MoveWrites::of(row, guard, stored) {
        MoveWrites::GoesOn(write) => diesel::debug_query::<Pg, _>(&write).to_string(),
        MoveWrites::Ends(write) => diesel::debug_query::<Pg, _>(&write).to_string(),
    }
}
