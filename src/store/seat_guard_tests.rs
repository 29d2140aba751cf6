//! Seats name existing players without a foreign key (`store::seat_guard`):
//! a seat of a missing player is refused on both backends, and on
//! PostgreSQL a player's deletion and a match being written for them, run
//! at the same time, never leave a seat of a deleted player behind,
//! whichever starts first. Runs on PostgreSQL when `TEST_DATABASE_URL` is
//! set (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use diesel::{Connection, ExpressionMethods, QueryDsl, RunQueryDsl};

use super::kinds::{MatchId, PlayerId};
use super::matches::{self, MatchRow};
use super::schema::match_players;
use super::scratch_pg::{migrated_with_one_match, with_scratch_sqlite, with_scratch_url};
use super::{DbConnection, StoreError, connect_pg, players};

/// How long the first transaction of a race stays open after its write.
pub(super) const HELD: Duration = Duration::from_millis(400);

/// Two players, `p1` and `p2`, and a template match `m0` between them.
fn setup(conn: &mut DbConnection) -> MatchRow {
    migrated_with_one_match(conn, "m0");
    matches::get(conn, "m0")
        .unwrap()
        .expect("the template match")
}

/// The template with a new id and players.
pub(super) fn seating(template: &MatchRow, id: &str, x: &str, o: &str) -> MatchRow {
    let mut row = template.clone();
    row.id = MatchId::from(id);
    row.x_player_id = Some(PlayerId::from(x));
    row.o_player_id = Some(PlayerId::from(o));
    row
}

fn is_missing_player(err: &StoreError) -> bool {
    err.is_foreign_key_violation()
}

/// The seats that name `player`.
pub(super) fn seats_of(conn: &mut DbConnection, player: &str) -> i64 {
    match_players::table
        .filter(match_players::player_id.eq(player))
        .count()
        .get_result(conn)
        .unwrap()
}

fn refuses_missing_players(conn: &mut DbConnection) {
    let template = setup(conn);
    let ghost = matches::insert(conn, &seating(&template, "m1", "p1", "ghost")).unwrap_err();
    assert!(is_missing_player(&ghost), "{ghost}");
    assert!(
        matches::get(conn, "m1").unwrap().is_none(),
        "no match row was written"
    );
    // In bulk: one missing player refuses the batch, and its transaction leaves nothing.
    let batch = [
        seating(&template, "m2", "p1", "p2"),
        seating(&template, "m3", "p2", "ghost"),
    ];
    let refused = conn
        .transaction::<(), StoreError, _>(|conn| matches::insert_many(conn, &batch))
        .unwrap_err();
    assert!(is_missing_player(&refused), "{refused}");
    assert!(matches::get(conn, "m2").unwrap().is_none());
    assert_eq!(seats_of(conn, "ghost"), 0);
    // Existing players are seated as before.
    matches::insert(conn, &seating(&template, "m4", "p2", "p1")).unwrap();
    assert_eq!(
        seats_of(conn, "p1"),
        1,
        "m4's (m0 was written by hand, without seats)"
    );
}

/// Runs `work` in a transaction on a connection of its own to `url` and
/// returns once it has run, with the transaction left open for [`HELD`]:
/// the other side of a race. Join the handle for its commit.
pub(super) fn held_open(
    url: &str,
    work: impl FnOnce(&mut DbConnection) -> Result<(), StoreError> + Send + 'static,
) -> thread::JoinHandle<()> {
    let (done, wait_done) = mpsc::channel();
    let url = url.to_owned();
    let handle = thread::spawn(move || {
        let mut conn = DbConnection::Pg(connect_pg(&url).unwrap());
        conn.transaction::<(), StoreError, _>(|conn| {
            work(conn)?;
            done.send(()).unwrap();
            thread::sleep(HELD);
            Ok(())
        })
        .unwrap();
    });
    wait_done.recv().unwrap();
    handle
}

/// Deletes `p1` while `writer` (from [`held_open`]) has written the match
/// `m1` seating them and not committed: the deletion waits for it, then
/// leaves no seat of `p1` and empties `m1`'s X seat. Returns `m1`.
pub(super) fn delete_p1_during(
    conn: &mut DbConnection,
    writer: thread::JoinHandle<()>,
) -> MatchRow {
    assert!(players::delete(conn, "p1").unwrap());
    writer.join().unwrap();
    assert_eq!(
        seats_of(conn, "p1"),
        0,
        "no seat of the deleted player is left"
    );
    let row = matches::get(conn, "m1").unwrap().expect("the match stays");
    assert_eq!(
        row.x_player_id, None,
        "the deleted player's seat is emptied"
    );
    row
}

#[test]
fn a_seat_of_a_missing_player_is_refused_on_sqlite() {
    with_scratch_sqlite(refuses_missing_players);
}

#[test]
fn a_seat_of_a_missing_player_is_refused_on_postgres() {
    with_scratch_url("seat_guard", |url| {
        refuses_missing_players(&mut DbConnection::Pg(connect_pg(url).unwrap()));
    });
}

#[test]
fn a_deletion_waits_for_a_match_being_written_and_empties_its_seats() {
    with_scratch_url("seat_guard_writer_first", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        let template = setup(&mut conn);
        let writer = held_open(url, move |conn| {
            matches::insert(conn, &seating(&template, "m1", "p1", "p2"))?;
            Ok(())
        });
        let row = delete_p1_during(&mut conn, writer);
        assert_eq!(row.o_player_id.map(|p| p.to_string()), Some("p2".into()));
    });
}

#[test]
fn a_match_written_during_a_deletion_of_its_player_is_refused() {
    with_scratch_url("seat_guard_deletion_first", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        let template = setup(&mut conn);
        let deleter = held_open(url, move |conn| {
            assert!(players::delete(conn, "p1")?);
            Ok(())
        });
        // The deletion is not committed yet: the write waits for it, then finds p1 gone.
        let refused = conn
            .transaction::<(), StoreError, _>(|conn| {
                matches::insert(conn, &seating(&template, "m1", "p1", "p2"))
            })
            .unwrap_err();
        deleter.join().unwrap();
        assert!(is_missing_player(&refused), "{refused}");
        assert!(matches::get(&mut conn, "m1").unwrap().is_none());
        assert_eq!(seats_of(&mut conn, "p1"), 0);
    });
}
