//! A pairing chunk's statements probe `players` and `tickets` by key on
//! PostgreSQL, where the planner's default costs read both whole for a
//! chunk of 500 in tables of 5,000. Runs when `TEST_DATABASE_URL` is set
//! (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, RunQueryDsl};

use super::scratch_pg::{with_scratch_url, xact_scans};
use super::{DbConnection, connect_pg, key_probes, migrate, seat_guard, tickets};

/// Sequential scans of `table` so far in the current transaction (see
/// [`xact_scans`]).
fn seq_scans(conn: &mut DbConnection, table: &str) -> i64 {
    diesel::select(diesel::dsl::sql::<BigInt>(&format!(
        "(SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = '{table}')"
    )))
    .get_result(conn)
    .unwrap()
}

#[test]
fn a_chunks_checks_and_ticket_marks_probe_by_key_in_large_tables() {
    with_scratch_url("key_probes", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        migrate(&mut conn).unwrap();
        conn.batch_execute(
            "INSERT INTO players (id, username, username_key, password_hash, created_at)
                 SELECT 'p' || g, 'u' || g, 'u' || g, 'h', 1 FROM generate_series(1, 5000) g;
             INSERT INTO tickets (id, player_id, ladder, rating, status, created_at, updated_at)
                 SELECT 't' || g, 'p' || g, 'l', 1500, 'queued', 1, 1 FROM generate_series(1, 5000) g;
             ANALYZE players; ANALYZE tickets;",
        )
        .unwrap();
        let players: Vec<String> = (1..=500).map(|i| format!("p{}", i * 10)).collect();
        let players: Vec<&str> = players.iter().map(String::as_str).collect();
        let marks: Vec<(String, String)> = (1..=500)
            .map(|i| (format!("t{}", i * 10), format!("m{i}")))
            .collect();
        let marks: Vec<(&str, &str)> = marks
            .iter()
            .map(|(t, m)| (t.as_str(), m.as_str()))
            .collect();
        conn.transaction(|conn| {
            key_probes::key_probes_only(conn).unwrap();
            let (seq, by_key) = (seq_scans(conn, "players"), xact_scans(conn, "players_pkey"));
            seat_guard::check_players(conn, &players).unwrap();
            assert_eq!(
                seq_scans(conn, "players"),
                seq,
                "the players were read whole"
            );
            assert!(xact_scans(conn, "players_pkey") > by_key);
            let (seq, by_key) = (seq_scans(conn, "tickets"), xact_scans(conn, "tickets_pkey"));
            assert_eq!(tickets::mark_matched_many(conn, &marks, 2).unwrap(), 500);
            assert_eq!(
                seq_scans(conn, "tickets"),
                seq,
                "the tickets were read whole"
            );
            assert!(xact_scans(conn, "tickets_pkey") > by_key);
            diesel::QueryResult::Ok(())
        })
        .unwrap();
        // The settings ended with the transaction.
        let seqscan: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
            "current_setting('enable_seqscan')",
        ))
        .get_result(&mut conn)
        .unwrap();
        assert_eq!(seqscan, "on");
    });
}
