//! Closing the connection pool (`Db::close`): every connection closes the
//! way its database expects, the one in use when it comes back, and none is
//! handed out after. The PostgreSQL test runs when `TEST_DATABASE_URL` is
//! set (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, RunQueryDsl, SqliteConnection};

use super::scratch_pg::{abandoned_and_others, with_scratch_url};
use super::{Checkout, Db, DbConnection, StoreError, connect_pg};
use crate::config::DatabaseConfig;

/// Opens three connections of `db` and returns one still in use, the other
/// two back in the pool.
fn three_open_one_in_use(db: &Db) -> Checkout {
    let mut conns = [db.get().unwrap(), db.get().unwrap(), db.get().unwrap()];
    for conn in &mut conns {
        conn.batch_execute("SELECT 1").unwrap();
    }
    let [a, b, in_use] = conns;
    drop((a, b));
    in_use
}

/// Closes `db` on another thread; checks that it waits for `in_use` and
/// refuses check-outs meanwhile, then returns it and waits for the close.
fn close_around(db: &Db, in_use: Checkout) {
    let closing = {
        let db = db.clone();
        std::thread::spawn(move || db.close(Duration::from_secs(10)))
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !closing.is_finished(),
        "close waits for the connection in use"
    );
    assert!(
        matches!(db.get(), Err(StoreError::Unavailable(_))),
        "no check-out from a closing pool"
    );
    drop(in_use);
    assert!(closing.join().unwrap(), "every connection closed");
    assert!(
        matches!(db.get(), Err(StoreError::Unavailable(_))),
        "no check-out after close"
    );
}

#[test]
fn closing_the_pool_ends_its_postgresql_backends_and_refuses_checkouts_after() {
    with_scratch_url("uttt_pool_close", |url| {
        let mut watcher = DbConnection::Pg(connect_pg(url).unwrap());
        let db = Db::new(&DatabaseConfig::Postgres(url.to_owned()), 4).unwrap();
        let in_use = three_open_one_in_use(&db);
        assert!(abandoned_and_others(&mut watcher).1 >= 3);
        close_around(&db, in_use);
        // Every backend gone. (That none counts as abandoned is checked
        // across a process's exit, in tests/reliability.rs: within one
        // process a dropped connection always says goodbye.)
        let mut now = abandoned_and_others(&mut watcher);
        for _ in 0..50 {
            if now.1 == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            now = abandoned_and_others(&mut watcher);
        }
        assert_eq!(now.1, 0, "the pool's backends ended");
    });
}

#[test]
fn closing_the_pool_folds_sqlite_s_log_into_its_file_and_refuses_checkouts_after() {
    let dir = std::env::temp_dir().join(format!("uttt-pool-close-{}", crate::ids::record_id()));
    let path = dir.join("uttt.db");
    let db = Db::new(&DatabaseConfig::Sqlite(path.clone()), 4).unwrap();
    let in_use = three_open_one_in_use(&db);
    db.get()
        .unwrap()
        .batch_execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let log = dir.join("uttt.db-wal");
    assert!(log.exists(), "a write goes to the write-ahead log first");
    close_around(&db, in_use);
    assert!(
        !log.exists(),
        "the last connection folded the log into the file"
    );
    // The row is in the database file alone.
    #[allow(clippy::disallowed_methods)] // SQLite: no OpenSSL involved
    let mut lite = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    let rows: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT count(*) FROM t)",
    ))
    .get_result(&mut lite)
    .unwrap();
    assert_eq!(rows, 1);
    drop(lite);
    let _ = std::fs::remove_dir_all(dir);
}
