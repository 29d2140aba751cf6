//! One connection type over both backends, so the crate has one set of queries.

// The derived `establish` picks the backend by URL and so calls both
// backends' own; the pool opens PostgreSQL through `connect_pg` instead.
#![allow(clippy::disallowed_methods)]

use diesel::{PgConnection, SqliteConnection};

/// A connection to PostgreSQL (production) or SQLite (the embedded default).
#[derive(diesel::MultiConnection)]
pub enum DbConnection {
    /// PostgreSQL.
    Pg(PgConnection),
    /// SQLite.
    Sqlite(SqliteConnection),
}

/// Executes `query` on the concrete connection behind `conn`: for the
/// statements the multi-backend connection cannot run (multi-row inserts of
/// nullable columns, `ON CONFLICT`); both backends run the same SQL.
macro_rules! execute_on_backend {
    ($conn:expr, $query:expr) => {
        match &mut *$conn {
            $crate::store::DbConnection::Pg(pg) => $query.execute(pg),
            $crate::store::DbConnection::Sqlite(lite) => $query.execute(lite),
        }
    };
}
pub(crate) use execute_on_backend;
