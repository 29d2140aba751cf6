//! The pipelined move's transaction (`store::pipelined`) writes all or
//! nothing, and never hands a connection on inside a transaction. Runs when
//! `TEST_DATABASE_URL` is set (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;

use super::matches::{self, MatchRow, MoveRow};
use super::pipelined::Pipeline;
use super::scratch_pg::{migrated_with_one_match, with_scratch_url};
use super::{DbConnection, connect_pg};

/// A connection to `url`'s database, migrated, with one active match `m1`.
fn prepared(url: &str) -> DbConnection {
    let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
    migrated_with_one_match(&mut conn, "m1");
    conn
}

/// The move at `ply` of `m1` by its side to move, and the row after it.
fn next_move(row: &MatchRow) -> (MoveRow, MatchRow) {
    let stored = MoveRow {
        match_id: row.id.to_string(),
        ply: row.ply,
        seat: if row.ply % 2 == 0 { "x" } else { "o" }.into(),
        square: row.ply,
        played_at: 100 + i64::from(row.ply),
        clock_ms: None,
        by_cpu: false,
    };
    let mut after = row.clone();
    after.ply += 1;
    after.version += 1;
    (stored, after)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn moves_of(conn: &mut DbConnection) -> usize {
    matches::moves(conn, "m1").unwrap().len()
}

#[test]
fn a_move_is_written_whole_and_a_stale_or_failed_one_not_at_all() {
    with_scratch_url("uttt_pipe", |url| {
        let mut conn = prepared(url);
        let pipeline = Pipeline::new(url, 1).unwrap();
        runtime().block_on(async {
            // Applied: both writes committed.
            let mut lease = pipeline.lease().await.unwrap();
            let (row, _) = lease.begin_locked("m1").await.unwrap().expect("m1");
            let probe =
                conn.batch_execute("SELECT id FROM matches WHERE id = 'm1' FOR UPDATE NOWAIT");
            assert!(
                probe.is_err(),
                "the read holds the row's lock until the commit"
            );
            let (stored, after) = next_move(&row);
            assert!(
                lease
                    .write_and_commit(&stored, &after, row.version)
                    .await
                    .unwrap()
            );
            drop(lease);
            assert_eq!(moves_of(&mut conn), 1);
            let row = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!((row.ply, row.version), (after.ply, after.version));

            // A read older than the row: the move's insert is rolled back too.
            let mut lease = pipeline.lease().await.unwrap();
            let (read, _) = lease.begin_locked("m1").await.unwrap().expect("m1");
            let (stored, after) = next_move(&read);
            let written = lease
                .write_and_commit(&stored, &after, read.version - 1)
                .await
                .unwrap();
            assert!(!written, "a changed row is not written");
            drop(lease);
            assert_eq!(
                moves_of(&mut conn),
                1,
                "the move of a refused write is not kept"
            );
            let unchanged = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!(unchanged.version, read.version);

            // A write the database refuses (a ply already stored): the row's update goes too.
            let mut lease = pipeline.lease().await.unwrap();
            let (read, _) = lease.begin_locked("m1").await.unwrap().expect("m1");
            let (mut stored, after) = next_move(&read);
            stored.ply = 0;
            let written = lease.write_and_commit(&stored, &after, read.version).await;
            assert!(
                !written.unwrap(),
                "a refused write is rolled back, to be played again"
            );
            drop(lease);
            let unchanged = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!(
                unchanged.version, read.version,
                "the row's update was rolled back"
            );

            // The one connection, back after each of those, still plays.
            let mut lease = pipeline.lease().await.unwrap();
            let (read, _) = lease.begin_locked("m1").await.unwrap().expect("m1");
            let (stored, after) = next_move(&read);
            assert!(
                lease
                    .write_and_commit(&stored, &after, read.version)
                    .await
                    .unwrap()
            );
        });
        assert_eq!(moves_of(&mut conn), 2);
    });
}

#[test]
fn a_lease_dropped_inside_its_transaction_releases_the_row() {
    with_scratch_url("uttt_pipe", |url| {
        let mut conn = prepared(url);
        let pipeline = Pipeline::new(url, 1).unwrap();
        let rt = runtime();
        rt.block_on(async {
            let mut lease = pipeline.lease().await.unwrap();
            lease.begin_locked("m1").await.unwrap().expect("m1");
            // As when the request is cancelled between the read and the writes.
            drop(lease);
            // Time for a closed connection's task to end it.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        });
        // The runtime lives on, and with it any connection the pool kept:
        // one kept inside its transaction would still hold the lock.
        conn.batch_execute("SET lock_timeout = '5s'").unwrap();
        let locked = diesel::Connection::transaction(&mut conn, |c| matches::lock(c, "m1"));
        assert!(locked.unwrap().is_some(), "the row is free to lock");
        rt.block_on(async {
            // A missing match: the read's transaction is ended by the caller.
            let mut lease = pipeline.lease().await.unwrap();
            assert!(lease.begin_locked("none").await.unwrap().is_none());
            lease.rollback().await.unwrap();
        });
    });
}
