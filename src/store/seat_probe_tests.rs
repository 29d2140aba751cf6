//! The probes of unfinished seats (`matches::active_ranked`,
//! `active_ranked_among`, `count_active`) find them through the partial
//! indexes made for them on PostgreSQL, also in the generic plan a prepared
//! statement switches to after a few runs: a plan that took
//! `match_players_newest` instead would walk every seat the player ever had.
//! Runs when `TEST_DATABASE_URL` is set (and fails loudly if it cannot
//! connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, RunQueryDsl};

use super::kinds::Mode;
use super::matches;
use super::scratch_pg::{with_scratch_url, xact_scans as scans};
use super::{DbConnection, connect_pg, migrate};

/// Generic plans made for the prepared statements whose text holds `needle`.
fn generic_plans(conn: &mut DbConnection, needle: &str) -> i64 {
    diesel::select(diesel::dsl::sql::<BigInt>(&format!(
        "(SELECT COALESCE(sum(generic_plans), 0)::bigint FROM pg_prepared_statements
          WHERE strpos(statement, '{}') > 0)",
        needle.replace('\'', "''")
    )))
    .get_result(conn)
    .unwrap()
}

/// Runs `probe` and says whether it scanned `index`.
fn scanned<T>(
    conn: &mut DbConnection,
    index: &str,
    probe: impl FnOnce(&mut DbConnection) -> T,
) -> (T, bool) {
    let before = scans(conn, index);
    let found = probe(conn);
    (found, scans(conn, index) > before)
}

#[test]
fn unfinished_seats_are_probed_through_their_partial_indexes_in_generic_plans() {
    with_scratch_url("seat_probes", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        migrate(&mut conn).unwrap();
        // p1 plays a ranked match and a practice match, both unfinished, and
        // has finished one of each; p2 sits only in the ranked one.
        conn.batch_execute(
            "INSERT INTO players (id, username, username_key, password_hash, created_at)
                 VALUES ('p1', 'ann', 'ann', 'h', 1), ('p2', 'bob', 'bob', 'h', 1),
                        ('p3', 'cy', 'cy', 'h', 1);
             INSERT INTO match_players (match_id, seat, player_id, created_at, mode, active)
                 VALUES ('r1', 'x', 'p1', 1, 'ranked', true), ('r1', 'o', 'p2', 1, 'ranked', true),
                        ('r0', 'x', 'p1', 0, 'ranked', false), ('c1', 'x', 'p1', 1, 'practice', true),
                        ('c0', 'x', 'p1', 0, 'practice', false);
             ANALYZE match_players;
             SET plan_cache_mode = force_generic_plan;
             SET enable_seqscan = off;",
        )
        .unwrap();
        conn.transaction(|conn| {
            let (found, by_index) = scanned(conn, "match_players_one_ranked", |c| {
                matches::active_ranked(c, "p1").unwrap()
            });
            assert_eq!(found.as_deref(), Some("r1"));
            assert!(by_index, "active_ranked took another index");
            assert!(
                generic_plans(conn, "'ranked'") > 0,
                "active_ranked is a prepared statement with a generic plan"
            );
            let (none, _) = scanned(conn, "match_players_one_ranked", |c| {
                matches::active_ranked(c, "p3").unwrap()
            });
            assert_eq!(none, None);

            let (mut busy, by_index) = scanned(conn, "match_players_one_ranked", |c| {
                matches::active_ranked_among(c, &["p1", "p2", "p3"]).unwrap()
            });
            busy.sort();
            assert_eq!(busy, ["p1", "p2"]);
            assert!(by_index, "active_ranked_among took another index");

            let (open, by_index) = scanned(conn, "match_players_practice", |c| {
                matches::count_active(c, "p1", Mode::Practice).unwrap()
            });
            assert_eq!(open, 1, "only the unfinished practice match counts");
            assert!(by_index, "count_active took another index");
            assert!(
                generic_plans(conn, "'practice'") > 0,
                "count_active is a prepared statement with a generic plan"
            );
            diesel::QueryResult::Ok(())
        })
        .unwrap();
    });
}
