//! The tournament-mode migration on a database that already holds matches:
//! on SQLite it rebuilds `matches` and `match_players`, so check that their
//! rows, seats, indexes and foreign keys come through, and that existing
//! tournament games are relabelled. PostgreSQL runs the same checks when
//! `TEST_DATABASE_URL` is set (and fails loudly if it cannot connect); there
//! the ids' byte order (`ids_in_byte_order`) is checked too.

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::migration::MigrationVersion;
use diesel::query_builder::SqlQuery;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::{Connection, RunQueryDsl, SqliteConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use super::scratch_pg::with_scratch_database;
use super::{PG_MIGRATIONS, SQLITE_MIGRATIONS};

/// The migration under test.
const VERSION: &str = "20261224000001";

/// Two players, a casual match and a tournament game, each with both seats.
const FIXTURE: &str = "
    INSERT INTO players (id, username, username_key, password_hash, created_at)
        VALUES ('p1', 'ann', 'ann', 'h', 1), ('p2', 'bob', 'bob', 'h', 1);
    INSERT INTO matches (id, mode, depth, tc_kind, x_player_id, o_player_id,
                         x_controller, o_controller, position, turn_started_at, status, created_at)
        VALUES ('m1', 'casual', 2, 'none', 'p1', 'p2', 'human', 'human', '', 1, 'active', 1),
               ('m2', 'casual', 2, 'none', 'p2', 'p1', 'human', 'human', '', 1, 'active', 2);
    INSERT INTO match_players (match_id, seat, player_id, created_at, mode, active)
        VALUES ('m1', 'x', 'p1', 1, 'casual', TRUE), ('m1', 'o', 'p2', 1, 'casual', TRUE),
               ('m2', 'x', 'p2', 2, 'casual', TRUE), ('m2', 'o', 'p1', 2, 'casual', TRUE);
    INSERT INTO tournaments (id, name, kind, status, director_id, depth, tc_kind, rated,
                             round_pause_ms, sort_at, created_at)
        VALUES ('t1', 'Club night', 'swiss', 'running', 'p1', 2, 'none', FALSE, 0, 1, 1);
    INSERT INTO tournament_rounds (tournament_id, round, paired_at) VALUES ('t1', 1, 2);
    INSERT INTO tournament_games (match_id, tournament_id, round, board, x_player_id,
                                  o_player_id, created_at)
        VALUES ('m2', 't1', 1, 1, 'p2', 'p1', 2);
";

/// Rows `sql` touches (an `UPDATE … SET x = x` counts without changing).
fn count<C: Connection>(conn: &mut C, sql: &str) -> usize
where
    SqlQuery: ExecuteDsl<C>,
{
    diesel::sql_query(sql)
        .execute(conn)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Whether the database refuses `sql`.
fn refused<C: Connection>(conn: &mut C, sql: &str) -> bool
where
    SqlQuery: ExecuteDsl<C>,
{
    diesel::sql_query(sql).execute(conn).is_err()
}

/// Migrates to just before the tournament mode, loads the fixture, migrates
/// again and checks what a server relies on afterwards.
fn check<C>(conn: &mut C, migrations: fn() -> EmbeddedMigrations, seat_key_kept: bool)
where
    C: Connection + MigrationHarness<C::Backend>,
    SqlQuery: ExecuteDsl<C>,
{
    conn.run_pending_migrations(migrations())
        .expect("migrations apply");
    // Later migrations are reverted first, down to the one under test.
    loop {
        let reverted = conn
            .revert_last_migration(migrations())
            .expect("the last migration reverts");
        if reverted == MigrationVersion::from(VERSION) {
            break;
        }
    }
    conn.batch_execute(FIXTURE).expect("fixture");
    let tournament_row = "INSERT INTO matches (id, mode, depth, tc_kind, x_controller, \
         o_controller, position, turn_started_at, status, created_at) \
         VALUES ('m3', 'tournament', 2, 'none', 'human', 'human', '', 1, 'active', 3)";
    assert!(
        refused(conn, tournament_row),
        "before the migration the mode check refuses `tournament`"
    );

    // Only this migration: later ones change the keys checked below.
    let applied = conn
        .run_next_migration(migrations())
        .expect("the migration applies to a database with matches");
    assert_eq!(applied, MigrationVersion::from(VERSION));

    let touch = |mode: &str| format!("UPDATE matches SET mode = mode WHERE mode = '{mode}'");
    assert_eq!(count(conn, &touch("casual")), 1, "m1 stays casual");
    assert_eq!(
        count(conn, &touch("tournament")),
        1,
        "m2 is a tournament game"
    );
    let seats = |mode: &str| {
        format!("UPDATE match_players SET mode = mode WHERE mode = '{mode}' AND active")
    };
    assert_eq!(count(conn, &seats("casual")), 2, "m1's seats");
    assert_eq!(count(conn, &seats("tournament")), 2, "m2's seats follow");
    assert_eq!(count(conn, tournament_row), 1, "the new mode is accepted");

    // The unique index on unfinished ranked seats survived the rebuild.
    conn.batch_execute(
        "UPDATE matches SET mode = 'ranked' WHERE id = 'm1';
         UPDATE match_players SET mode = 'ranked' WHERE match_id = 'm1';",
    )
    .expect("m1 becomes ranked");
    assert!(
        refused(
            conn,
            "UPDATE match_players SET mode = 'ranked' WHERE match_id = 'm2'"
        ),
        "a second unfinished ranked seat is refused (match_players_one_ranked)"
    );
    // Foreign keys still hold and still cascade.
    assert!(
        refused(
            conn,
            "INSERT INTO match_players (match_id, seat, player_id, created_at) \
             VALUES ('nope', 'x', 'p1', 1)"
        ),
        "a seat of no match is refused"
    );
    assert_eq!(count(conn, "DELETE FROM matches WHERE id = 'm2'"), 1);
    assert_eq!(
        count(conn, "DELETE FROM match_players WHERE match_id = 'm2'"),
        0
    );
    assert_eq!(
        count(conn, "DELETE FROM tournament_games WHERE match_id = 'm2'"),
        0
    );

    // The migrations after it apply to the same rows. SQLite still refuses
    // a seat of no player by its key; PostgreSQL dropped the seats' keys
    // (`match_id` in issue 21, `player_id` in issue 18: store::seat_guard
    // checks the players instead, tested in seat_guard_tests).
    conn.run_pending_migrations(migrations())
        .expect("the later migrations apply");
    assert_eq!(
        count(
            conn,
            "DELETE FROM match_players WHERE match_id = 'm1' AND seat = 'x'"
        ),
        1
    );
    assert_eq!(
        refused(
            conn,
            "INSERT INTO match_players (match_id, seat, player_id, created_at) \
             VALUES ('m1', 'x', 'nobody', 1)"
        ),
        seat_key_kept,
        "a seat of no player is refused by a key on SQLite only"
    );
}

#[test]
fn tournament_mode_migration_keeps_sqlite_matches_and_relabels_tournament_games() {
    let dir = std::env::temp_dir().join(format!("uttt-migration-{}", crate::ids::record_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("uttt.db");
    #[allow(clippy::disallowed_methods)] // SQLite: no OpenSSL involved
    let mut conn = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    conn.batch_execute("PRAGMA foreign_keys = ON;").unwrap();
    check(&mut conn, || SQLITE_MIGRATIONS, true);
    drop(conn);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn tournament_mode_migration_keeps_postgres_matches_and_relabels_tournament_games() {
    with_scratch_database("uttt_mig", |mut conn| {
        check(&mut conn, || PG_MIGRATIONS, false)
    });
}

/// Every PostgreSQL column that holds an id compares as bytes (`COLLATE
/// "C"`, migration `ids_in_byte_order`): an index insert or key probe of an
/// id is then a `memcmp`, not a trip through the locale. A new id column of
/// the default collation would still work, but slowly, and this says so.
#[test]
fn postgres_ids_compare_as_bytes() {
    with_scratch_database("uttt_ids", |mut conn| {
        conn.run_pending_migrations(PG_MIGRATIONS)
            .expect("migrations apply");
        #[derive(diesel::QueryableByName)]
        struct Column {
            #[diesel(sql_type = diesel::sql_types::Text)]
            name: String,
        }
        let by_locale: Vec<String> = diesel::sql_query(
            "SELECT table_name || '.' || column_name AS name FROM information_schema.columns \
             WHERE table_schema = 'public' AND data_type = 'text' \
             AND (column_name ~ '(^id$|_id$)' OR column_name = 'requested_by') \
             AND collation_name IS DISTINCT FROM 'C' ORDER BY 1",
        )
        .load::<Column>(&mut conn)
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
        assert!(
            by_locale.is_empty(),
            "id columns of the locale's collation: {by_locale:?}"
        );
        let ids = count(
            &mut conn,
            "SELECT 1 FROM information_schema.columns WHERE table_schema = 'public' \
             AND collation_name = 'C'",
        );
        assert!(ids >= 36, "{ids} columns compare as bytes");
    });
}
