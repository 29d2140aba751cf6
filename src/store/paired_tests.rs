//! A pairing round's matches are written with the tickets they were made
//! from (`store::paired`), and those tickets stand in for the check that the
//! seated players exist: on both backends a seat is refused unless a queued
//! ticket of its player is marked with it, and on PostgreSQL a player's
//! deletion racing such a write leaves no seat of the deleted player,
//! whichever starts first. PostgreSQL runs when `TEST_DATABASE_URL` is set
//! (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::{Connection, QueryDsl, RunQueryDsl};

use super::matches::{self, MatchRow};
use super::paired::insert_with_tickets;
use super::schema::tickets;
use super::scratch_pg::{with_scratch_sqlite, with_scratch_url};
use super::seat_guard_tests::{delete_p1_during, held_open, seating, seats_of};
use super::tickets::Seated;
use super::{DbConnection, StoreError, connect_pg, migrate, players};

/// Players `p1`..`p4`, a queued ticket `t<n>` for each, and a template
/// ranked match `m0` (written by hand, without seats).
fn setup(conn: &mut DbConnection) -> MatchRow {
    migrate(conn).unwrap();
    conn.batch_execute(
        "INSERT INTO players (id, username, username_key, password_hash, created_at)
             VALUES ('p1', 'ann', 'ann', 'h', 1), ('p2', 'bob', 'bob', 'h', 1),
                    ('p3', 'cy', 'cy', 'h', 1), ('p4', 'di', 'di', 'h', 1);
         INSERT INTO tickets (id, player_id, ladder, rating, status, created_at, updated_at)
             VALUES ('t1', 'p1', 'l', 1500, 'queued', 1, 1), ('t2', 'p2', 'l', 1500, 'queued', 1, 1),
                    ('t3', 'p3', 'l', 1500, 'queued', 1, 1), ('t4', 'p4', 'l', 1500, 'queued', 1, 1);
         INSERT INTO matches (id, mode, depth, tc_kind, x_player_id, o_player_id,
                              x_controller, o_controller, position, turn_started_at, status, created_at)
             VALUES ('m0', 'ranked', 2, 'none', 'p1', 'p2', 'human', 'human', '', 1, 'active', 1);",
    )
    .unwrap();
    matches::get(conn, "m0")
        .unwrap()
        .expect("the template match")
}

/// The two tickets `(ticket, player)` of a match.
fn seated<'a>(match_id: &'a str, x: (&'a str, &'a str), o: (&'a str, &'a str)) -> [Seated<'a>; 2] {
    [x, o].map(|(ticket, player)| Seated {
        ticket,
        player,
        match_id,
    })
}

/// Writes in a transaction of its own, rolled back on an error, as a round does.
fn write(
    conn: &mut DbConnection,
    rows: &[MatchRow],
    seats: &[Seated<'_>],
) -> Result<(), StoreError> {
    conn.transaction(|conn| insert_with_tickets(conn, rows, seats, 7))
}

fn status_of(conn: &mut DbConnection, ticket: &str) -> Option<String> {
    tickets::table
        .find(ticket)
        .select(tickets::status)
        .first(conn)
        .ok()
}

fn writes_only_what_its_tickets_vouch_for(conn: &mut DbConnection) {
    let template = setup(conn);
    // A seat whose player has no ticket in the write.
    let unvouched = write(
        conn,
        &[seating(&template, "m1", "p1", "p3")],
        &seated("m1", ("t1", "p1"), ("t2", "p2")),
    )
    .unwrap_err();
    assert!(unvouched.is_foreign_key_violation(), "{unvouched}");
    // A ticket that names another player than the seat it is given for.
    let mismatched = write(
        conn,
        &[seating(&template, "m1", "p1", "p2")],
        &[
            seated("m1", ("t1", "p1"), ("t2", "p2"))[0],
            Seated {
                ticket: "t3",
                player: "p2",
                match_id: "m1",
            },
        ],
    )
    .unwrap_err();
    assert!(mismatched.is_foreign_key_violation(), "{mismatched}");
    // A ticket no longer queued refuses its whole write.
    conn.batch_execute("UPDATE tickets SET status = 'cancelled' WHERE id = 't4'")
        .unwrap();
    let rows = [
        seating(&template, "m1", "p1", "p2"),
        seating(&template, "m2", "p3", "p4"),
    ];
    let [a, b] = seated("m1", ("t1", "p1"), ("t2", "p2"));
    let [c, d] = seated("m2", ("t3", "p3"), ("t4", "p4"));
    let gone = write(conn, &rows, &[a, b, c, d]).unwrap_err();
    assert!(gone.is_foreign_key_violation(), "{gone}");
    for (player, ticket) in [("p1", "t1"), ("p2", "t2"), ("p3", "t3")] {
        assert_eq!(seats_of(conn, player), 0, "{player}: nothing was written");
        assert_eq!(status_of(conn, ticket).as_deref(), Some("queued"));
    }
    assert!(matches::get(conn, "m1").unwrap().is_none());
    // Queued tickets of the seated players: written, and marked.
    write(conn, &rows[..1], &[a, b]).unwrap();
    assert!(matches::get(conn, "m1").unwrap().is_some());
    for (player, ticket) in [("p1", "t1"), ("p2", "t2")] {
        assert_eq!(seats_of(conn, player), 1, "{player}");
        assert_eq!(status_of(conn, ticket).as_deref(), Some("matched"));
    }
}

#[test]
fn a_rounds_seats_need_their_players_queued_tickets_on_sqlite() {
    with_scratch_sqlite(writes_only_what_its_tickets_vouch_for);
}

#[test]
fn a_rounds_seats_need_their_players_queued_tickets_on_postgres() {
    with_scratch_url("paired", |url| {
        writes_only_what_its_tickets_vouch_for(&mut DbConnection::Pg(connect_pg(url).unwrap()));
    });
}

#[test]
fn a_deletion_waits_for_a_rounds_write_and_empties_its_seats() {
    with_scratch_url("paired_writer_first", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        let template = setup(&mut conn);
        let writer = held_open(url, move |conn| {
            insert_with_tickets(
                conn,
                &[seating(&template, "m1", "p1", "p2")],
                &seated("m1", ("t1", "p1"), ("t2", "p2")),
                7,
            )?;
            Ok(())
        });
        // Written, not committed: the deletion waits for it.
        delete_p1_during(&mut conn, writer);
    });
}

#[test]
fn a_rounds_write_during_a_deletion_of_its_player_is_refused() {
    with_scratch_url("paired_deletion_first", |url| {
        let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
        let template = setup(&mut conn);
        let deleter = held_open(url, move |conn| {
            assert!(players::delete(conn, "p1")?);
            Ok(())
        });
        // Not committed yet: the write waits for it, then finds p1's ticket gone.
        let refused = write(
            &mut conn,
            &[seating(&template, "m1", "p1", "p2")],
            &seated("m1", ("t1", "p1"), ("t2", "p2")),
        )
        .unwrap_err();
        deleter.join().unwrap();
        assert!(refused.is_foreign_key_violation(), "{refused}");
        assert!(matches::get(&mut conn, "m1").unwrap().is_none());
        assert_eq!(seats_of(&mut conn, "p1"), 0);
        assert_eq!(status_of(&mut conn, "t2").as_deref(), Some("queued"));
    });
}
