//! One connection type over both backends, so the crate has one set of queries.

use diesel::{PgConnection, SqliteConnection};

/// A connection to PostgreSQL (production) or SQLite (the embedded default).
#[derive(diesel::MultiConnection)]
pub enum DbConnection {
    /// PostgreSQL.
    Pg(PgConnection),
    /// SQLite.
    Sqlite(SqliteConnection),
}
