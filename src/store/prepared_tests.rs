//! The move's two writes are prepared once per PostgreSQL connection, not
//! parsed and planned on every move (see `store::cached`). Runs when
//! `TEST_DATABASE_URL` is set (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::RunQueryDsl;

use super::DbConnection;
use super::matches::{self, MoveRow};
use super::scratch_pg::{migrated_with_one_match, with_scratch_database};

#[derive(diesel::QueryableByName)]
struct Prepared {
    #[diesel(sql_type = diesel::sql_types::Text)]
    statement: String,
}

/// The statements this connection has prepared.
fn prepared(conn: &mut DbConnection) -> Vec<String> {
    let DbConnection::Pg(pg) = conn else {
        unreachable!("a PostgreSQL connection")
    };
    diesel::sql_query("SELECT statement FROM pg_prepared_statements")
        .load::<Prepared>(pg)
        .unwrap()
        .into_iter()
        .map(|p| p.statement)
        .collect()
}

/// Saves a match and writes two moves (one with a clock, one without) on
/// one connection, then reads which statements it prepared.
fn check(conn: &mut DbConnection) {
    migrated_with_one_match(conn, "m1");
    let mut row = matches::get(conn, "m1").unwrap().expect("the match");
    for (ply, clock_ms) in [(0, Some(1_000)), (1, None), (2, Some(900)), (3, None)] {
        matches::insert_move(
            conn,
            &MoveRow {
                match_id: "m1".into(),
                ply,
                seat: if ply % 2 == 0 { "x" } else { "o" }.into(),
                square: ply,
                played_at: 10 + i64::from(ply),
                clock_ms,
                by_cpu: false,
            },
        )
        .unwrap();
        row.ply = ply + 1;
        row.version += 1;
        matches::save(conn, &row).unwrap();
    }
    let saved = matches::get(conn, "m1").unwrap().expect("the match");
    assert_eq!((saved.ply, saved.version), (row.ply, row.version));
    let statements = prepared(conn);
    let count = |prefix: &str| statements.iter().filter(|s| s.starts_with(prefix)).count();
    assert_eq!(count("UPDATE \"matches\""), 1, "{statements:#?}");
    // One per shape: with a clock, and with `DEFAULT` for none.
    assert_eq!(count("INSERT INTO \"moves\""), 2, "{statements:#?}");
}

#[test]
fn a_moves_writes_are_prepared_once_per_postgres_connection() {
    with_scratch_database("uttt_prep", |conn| check(&mut DbConnection::Pg(conn)));
}
