//! A database of its own for a store test: a PostgreSQL database made on
//! the server `TEST_DATABASE_URL` names and dropped afterwards, or a SQLite
//! file removed afterwards.

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, SqliteConnection};

use super::DbConnection;

/// Runs `test` with a connection to a fresh database named after `prefix`,
/// then drops the database, passing a failure of `test` on. Without
/// `TEST_DATABASE_URL` it says so and returns; with it set but PostgreSQL
/// unreachable it fails.
pub fn with_scratch_database(prefix: &str, test: impl FnOnce(PgConnection)) {
    with_scratch_url(prefix, |url| {
        test(crate::store::connect_pg(url).unwrap());
    });
}

/// Runs `test` with the URL of a fresh database named after `prefix` (for a
/// test that opens several connections), then drops the database, as
/// [`with_scratch_database`] does.
pub fn with_scratch_url(prefix: &str, test: impl FnOnce(&str)) {
    let Ok(admin_url) = std::env::var("TEST_DATABASE_URL") else {
        eprintln!("NOTICE: PostgreSQL test skipped: TEST_DATABASE_URL is not set");
        return;
    };
    let name = format!("{prefix}_{}", crate::ids::record_id().to_lowercase());
    let mut admin = crate::store::connect_pg(&admin_url).unwrap_or_else(|e| {
        panic!("TEST_DATABASE_URL is set to {admin_url} but PostgreSQL cannot be reached: {e}")
    });
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let base = admin_url.split('?').next().unwrap_or(&admin_url);
    let url = format!("{}/{name}", &base[..base.rfind('/').unwrap()]);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        test(&url);
    }));
    let dropped = admin.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"));
    match (result, dropped) {
        // The test's own failure first; a database left behind is only said.
        (Err(panic), dropped) => {
            if let Err(e) = dropped {
                eprintln!("dropping {name} failed too: {e}");
            }
            std::panic::resume_unwind(panic)
        }
        (Ok(()), dropped) => dropped.unwrap(),
    }
}

/// Scans of `relation` (a table's sequential scans, an index's scans)
/// counted so far in the current transaction. The count may include earlier
/// statements of this connection not yet flushed to the statistics, so a
/// check compares it before and after.
pub fn xact_scans(conn: &mut crate::store::DbConnection, relation: &str) -> i64 {
    use diesel::RunQueryDsl;
    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(&format!(
        "pg_stat_get_xact_numscans('{relation}'::regclass)"
    )))
    .get_result(conn)
    .unwrap()
}

/// Sequential scans of `table` counted so far in the current transaction
/// (compare before and after, as for [`xact_scans`]).
pub fn xact_seq_scans(conn: &mut crate::store::DbConnection, table: &str) -> i64 {
    use diesel::RunQueryDsl;
    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(&format!(
        "(SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = '{table}')"
    )))
    .get_result(conn)
    .unwrap()
}

/// Runs `test` on a fresh SQLite file with its keys enforced, as the server
/// opens it, then removes the file.
pub fn with_scratch_sqlite(test: impl FnOnce(&mut DbConnection)) {
    let dir = std::env::temp_dir().join(format!("uttt-scratch-{}", crate::ids::record_id()));
    std::fs::create_dir_all(&dir).unwrap();
    #[allow(clippy::disallowed_methods)] // SQLite: no OpenSSL involved
    let lite = SqliteConnection::establish(&dir.join("uttt.db").to_string_lossy()).unwrap();
    let mut conn = DbConnection::Sqlite(lite);
    conn.batch_execute("PRAGMA foreign_keys = ON;").unwrap();
    test(&mut conn);
    drop(conn);
    let _ = std::fs::remove_dir_all(dir);
}

/// Migrates `conn`'s database and stores one active casual match `id`
/// between players `p1` (X) and `p2` (O), no moves yet.
pub fn migrated_with_one_match(conn: &mut DbConnection, id: &str) {
    super::migrate(conn).unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO players (id, username, username_key, password_hash, created_at)
             VALUES ('p1', 'ann', 'ann', 'h', 1), ('p2', 'bob', 'bob', 'h', 1);
         INSERT INTO matches (id, mode, depth, tc_kind, x_player_id, o_player_id,
                              x_controller, o_controller, position, turn_started_at, status, created_at)
             VALUES ('{id}', 'casual', 2, 'none', 'p1', 'p2', 'human', 'human', '', 1, 'active', 1);"
    ))
    .unwrap();
}

/// This database's sessions that ended with their client lost (no
/// `Terminate`), and its backends other than `conn`'s.
pub fn abandoned_and_others(conn: &mut DbConnection) -> (i64, i64) {
    use diesel::RunQueryDsl;
    use diesel::sql_types::BigInt;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = BigInt)]
        abandoned: i64,
        #[diesel(sql_type = BigInt)]
        others: i64,
    }
    let DbConnection::Pg(pg) = conn else {
        unreachable!("a PostgreSQL test")
    };
    // Statistics are read as a snapshot per transaction: cleared first.
    diesel::sql_query("SELECT pg_stat_clear_snapshot()")
        .execute(pg)
        .unwrap();
    let row: Row = diesel::sql_query(
        "SELECT (SELECT sessions_abandoned FROM pg_stat_database \
           WHERE datname = current_database()) AS abandoned, \
         (SELECT count(*) FROM pg_stat_activity \
           WHERE datname = current_database() AND pid <> pg_backend_pid()) AS others",
    )
    .get_result(pg)
    .unwrap();
    (row.abandoned, row.others)
}
