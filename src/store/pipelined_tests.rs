//! The pipelined move (`store::pipelined`) writes the move with its row or
//! nothing, and only onto the row it was judged on. Runs when
//! `TEST_DATABASE_URL` is set (and fails loudly if it cannot connect).

// A failed unwrap in a test helper is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};

use super::kinds::{Controller, EndReason, MatchStatus, Mode, StoredSeat};
use super::matches::{self, MatchRow, MoveRow, Seating};
use super::pipelined::{Guard, Pipeline, move_write_sql, push_move_and_seating};
use super::schema::matches as matches_table;
use super::scratch_pg::{abandoned_and_others, migrated_with_one_match, with_scratch_url};
use super::{DbConnection, connect_pg};
use crate::rules::Seat;

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

/// Reads `m1` on a lease, lets `meanwhile` change it on `conn`, then
/// writes the next move judged on the read: the seating read with the
/// write when it was written.
async fn write_after(
    pipeline: &Pipeline,
    conn: &mut DbConnection,
    meanwhile: &str,
) -> (Option<Seating>, MatchRow) {
    let mut lease = pipeline.lease().await.unwrap();
    let read = lease.read("m1").await.unwrap().expect("m1");
    if !meanwhile.is_empty() {
        conn.batch_execute(meanwhile).unwrap();
    }
    let (stored, after) = next_move(&read);
    let written = lease.write(&stored, &after, &Guard::of(&read)).await;
    (written.unwrap(), read)
}

#[test]
fn a_move_is_written_with_its_row_only_onto_the_row_it_was_judged_on() {
    with_scratch_url("uttt_pipe", |url| {
        let mut conn = prepared(url);
        let pipeline = Pipeline::new(url, 1).unwrap();
        runtime().block_on(async {
            // Unchanged: the move and the row, both written, and the
            // seating read with them.
            let (written, read) = write_after(&pipeline, &mut conn, "").await;
            let seating = written.expect("written");
            assert_eq!(seating.names, [Some("ann".into()), Some("bob".into())]);
            assert_eq!((seating.bots, seating.tournament), ([false, false], None));
            assert_eq!(moves_of(&mut conn), 1);
            let row = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!((row.ply, row.version), (read.ply + 1, read.version + 1));

            // Changed in between, by a writer that raised the version, or
            // by one that did not (a deletion's emptied seat, a CPU
            // worker's claim): nothing written, not even the move.
            for meanwhile in [
                "UPDATE matches SET version = version + 1",
                "UPDATE matches SET x_player_id = NULL",
                "UPDATE matches SET o_player_id = NULL",
                "UPDATE matches SET cpu_claimed_until = 5",
            ] {
                let (written, read) = write_after(&pipeline, &mut conn, meanwhile).await;
                assert!(written.is_none(), "written over `{meanwhile}`");
                assert_eq!(moves_of(&mut conn), 1, "a move kept over `{meanwhile}`");
                let row = matches::get(&mut conn, "m1").unwrap().unwrap();
                assert_eq!(row.ply, read.ply, "the row written over `{meanwhile}`");
                conn.batch_execute(
                    "UPDATE matches SET x_player_id = 'p1', o_player_id = 'p2', cpu_claimed_until = NULL",
                )
                .unwrap();
            }

            // A move the database refuses (its ply is stored already): the
            // row's update, in the same statement, is undone with it.
            let mut lease = pipeline.lease().await.unwrap();
            let read = lease.read("m1").await.unwrap().expect("m1");
            let (mut stored, after) = next_move(&read);
            stored.ply = 0;
            let written = lease.write(&stored, &after, &Guard::of(&read)).await;
            assert!(written.unwrap().is_none(), "a refused move is to be played again");
            drop(lease);
            let unchanged = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!(unchanged.version, read.version, "the row's update undone");

            // The one connection, back after each of those, still plays;
            // the seating is read as it is when the move is written.
            let renamed = "UPDATE players SET username = 'cat', bot = true WHERE id = 'p2'";
            let (written, _) = write_after(&pipeline, &mut conn, renamed).await;
            let seating = written.expect("written");
            assert_eq!(seating.names, [Some("ann".into()), Some("cat".into())]);
            assert_eq!(seating.bots, [false, true]);
        });
        assert_eq!(moves_of(&mut conn), 2);
    });
}

/// Whether each of `m1`'s seats, then `m2`'s one, counts as unfinished.
fn seats_active(conn: &mut DbConnection) -> Vec<(String, bool)> {
    use super::schema::match_players::dsl as mp;
    let DbConnection::Pg(pg) = conn else {
        unreachable!("a PostgreSQL test")
    };
    mp::match_players
        .select((mp::match_id, mp::active))
        .order((mp::match_id, mp::seat))
        .load(pg)
        .unwrap()
}

/// `row` as a move that won the game for O leaves it: finished.
fn won_by_o(mut row: MatchRow) -> MatchRow {
    row.status = MatchStatus::Finished;
    row.winner = Some(StoredSeat(Seat::O));
    row.reason = Some(EndReason::ThreeInARow);
    row.to_move = None;
    row
}

#[test]
fn a_move_that_ends_the_game_marks_its_seats_finished_in_the_same_statement() {
    with_scratch_url("uttt_pipe", |url| {
        let mut conn = prepared(url);
        conn.batch_execute(
            "INSERT INTO matches (id, mode, depth, tc_kind, x_player_id, o_player_id,
                                  x_controller, o_controller, position, turn_started_at, status, created_at)
                 VALUES ('m2', 'casual', 2, 'none', 'p1', 'p2', 'human', 'human', '', 1, 'active', 1);
             INSERT INTO match_players (match_id, seat, player_id, created_at, mode, active)
                 VALUES ('m1', 'o', 'p2', 1, 'casual', true), ('m1', 'x', 'p1', 1, 'casual', true),
                        ('m2', 'x', 'p1', 1, 'casual', true);",
        )
        .unwrap();
        let all_active = vec![
            ("m1".to_owned(), true),
            ("m1".to_owned(), true),
            ("m2".to_owned(), true),
        ];
        let pipeline = Pipeline::new(url, 1).unwrap();
        runtime().block_on(async {
            // A move the game goes on after: the seats still count.
            let (written, _) = write_after(&pipeline, &mut conn, "").await;
            assert!(written.is_some());
            assert_eq!(seats_active(&mut conn), all_active);

            // Judged on a changed row, the ending write writes nothing, not even the flags.
            let mut lease = pipeline.lease().await.unwrap();
            let read = lease.read("m1").await.unwrap().expect("m1");
            let (stored, after) = next_move(&read);
            let after = won_by_o(after);
            conn.batch_execute("UPDATE matches SET version = version + 1")
                .unwrap();
            let written = lease.write(&stored, &after, &Guard::of(&read)).await;
            assert!(written.unwrap().is_none(), "written over a changed row");
            assert_eq!(seats_active(&mut conn), all_active);

            // On the row as judged: the row, the move and m1's two seats, not m2's.
            let read = lease.read("m1").await.unwrap().expect("m1");
            let (stored, after) = next_move(&read);
            let after = won_by_o(after);
            let seating = lease.write(&stored, &after, &Guard::of(&read)).await;
            assert_eq!(
                seating.unwrap().expect("written").names[1],
                Some("bob".into())
            );
            let row = matches::get(&mut conn, "m1").unwrap().unwrap();
            assert_eq!(
                (row.status, row.version),
                (MatchStatus::Finished, read.version + 1)
            );
            assert_eq!(moves_of(&mut conn), 2);
            assert_eq!(
                seats_active(&mut conn),
                vec![
                    ("m1".to_owned(), false),
                    ("m1".to_owned(), false),
                    ("m2".to_owned(), true),
                ]
            );
        });
    });
}

#[test]
fn the_read_leaves_the_row_unlocked_and_a_cancelled_one_spoils_nothing() {
    with_scratch_url("uttt_pipe", |url| {
        let mut conn = prepared(url);
        let pipeline = Pipeline::new(url, 1).unwrap();
        runtime().block_on(async {
            let mut lease = pipeline.lease().await.unwrap();
            assert!(lease.read("none").await.unwrap().is_none());
            // Another transaction holds the row's lock: the read does not wait for it.
            conn.batch_execute("BEGIN; SELECT id FROM matches WHERE id = 'm1' FOR UPDATE")
                .unwrap();
            let read = tokio::time::timeout(Duration::from_secs(5), lease.read("m1")).await;
            conn.batch_execute("ROLLBACK").unwrap();
            read.expect("the read waited for a lock")
                .unwrap()
                .expect("m1");
            drop(lease);

            // A request cancelled while its read is under way. (tokio-postgres
            // discards the answer of a dropped request, so this holds with or
            // without the lease's closing such a connection.)
            let mut lease = pipeline.lease().await.unwrap();
            // Polled once (the statement sent), then dropped unanswered.
            let cancelled = futures_util::FutureExt::now_or_never(lease.read("m1"));
            assert!(cancelled.is_none(), "the read was still under way");
            drop(lease);
            let (written, _) = write_after(&pipeline, &mut conn, "").await;
            assert!(written.is_some(), "the next move plays");
        });
        assert_eq!(moves_of(&mut conn), 1);
    });
}

#[test]
fn closing_says_goodbye_to_postgresql_and_refuses_leases_after() {
    with_scratch_url("uttt_pipe_close", |url| {
        let mut conn = prepared(url);
        let pipeline = Pipeline::new(url, 2).unwrap();
        runtime().block_on(async {
            let (abandoned, _) = abandoned_and_others(&mut conn);
            // Two connections opened, used and idle; a third leased.
            {
                let mut a = pipeline.lease().await.unwrap();
                let mut b = pipeline.lease().await.unwrap();
                a.read("m1").await.unwrap().expect("m1");
                b.read("m1").await.unwrap().expect("m1");
            }
            assert_eq!(abandoned_and_others(&mut conn).1, 2);
            let mut leased = pipeline.lease().await.unwrap();
            leased.read("m1").await.unwrap().expect("m1");
            // Closed while one is leased: that one closes when its lease ends.
            let closing = pipeline.close(Duration::from_secs(5));
            tokio::pin!(closing);
            assert!(
                tokio::time::timeout(Duration::from_millis(300), closing.as_mut())
                    .await
                    .is_err(),
                "close waits for the leased connection"
            );
            assert!(pipeline.is_closed());
            drop(leased);
            closing.await;
            assert!(pipeline.lease().await.is_err(), "no lease after close");
            // Every backend gone, and none counted as a lost client.
            let mut now = abandoned_and_others(&mut conn);
            for _ in 0..50 {
                if now.1 == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                now = abandoned_and_others(&mut conn);
            }
            assert_eq!(now.1, 0, "the pipelined backends ended");
            assert_eq!(now.0, abandoned, "sessions ended without a Terminate");
        });
    });
}

/// The move's write with its `UPDATE` built by diesel from the schema and
/// `MatchRow`'s changeset (the tail after it is written out in both): what
/// `pipelined::MoveWrite`, written out by hand, must send.
struct DieselMoveWrite<'a, U> {
    update: U,
    stored: &'a MoveRow,
    /// The row written is finished: its seats are marked finished too.
    ends: bool,
}

impl<U: QueryFragment<Pg>> QueryFragment<Pg> for DieselMoveWrite<'_, U> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH updated AS (");
        self.update.walk_ast(out.reborrow())?;
        push_move_and_seating(out, self.stored, self.ends)
    }
}

/// A row with every column set, each to a value of its own (so two binds
/// of one type swapped show; the two flags differ too), or with every
/// optional column empty.
fn full_row(filled: bool) -> MatchRow {
    let some = |v: i64| filled.then_some(v);
    MatchRow {
        id: "m7".into(),
        mode: Mode::Tournament,
        ladder: filled.then(|| "blitz".into()),
        rated: filled,
        depth: 3,
        tc_kind: "clock".into(),
        tc_initial_ms: some(600_001),
        tc_increment_ms: some(2_002),
        tc_turn_ms: some(30_003),
        x_player_id: filled.then(|| "px".into()),
        o_player_id: Some("po".into()),
        x_controller: Controller::Cpu,
        o_controller: Controller::Human,
        cpu_level: filled.then_some(4),
        position: vec![40, 41, 42],
        ply: 17,
        to_move: filled.then_some(StoredSeat(Seat::O)),
        x_bank_ms: some(500_004),
        o_bank_ms: some(400_005),
        turn_started_at: 1_000_006,
        deadline_at: some(1_000_007),
        awaiting_cpu: !filled,
        cpu_claimed_until: some(1_000_008),
        status: if filled {
            MatchStatus::Finished
        } else {
            MatchStatus::Active
        },
        winner: filled.then_some(StoredSeat(Seat::X)),
        reason: filled.then_some(EndReason::Timeout),
        room_code: filled.then(|| "ABCDEF".into()),
        version: 9,
        created_at: 1_000_009,
        finished_at: some(1_000_010),
        x_lag_quota_ms: some(1_011),
        o_lag_quota_ms: some(1_012),
    }
}

#[test]
fn the_hand_written_move_write_is_the_statement_diesel_builds() {
    for filled in [true, false] {
        let read = full_row(filled);
        let (mut stored, mut after) = next_move(&read);
        stored.clock_ms = filled.then_some(123_456);
        stored.by_cpu = filled;
        // The guard's seats and claim are the read's, not the written row's:
        // a move sets or clears the claim (and here the seats differ too).
        after.cpu_claimed_until = Some(2_000_001);
        after.x_player_id = Some("px2".into());
        after.o_player_id = Some("po2".into());
        let guard = Guard::of(&read);
        let update = diesel::update(
            matches_table::table
                .find(&read.id)
                .filter(matches_table::version.eq(read.version))
                .filter(matches_table::x_player_id.is_not_distinct_from(&read.x_player_id))
                .filter(matches_table::o_player_id.is_not_distinct_from(&read.o_player_id))
                .filter(
                    matches_table::cpu_claimed_until.is_not_distinct_from(read.cpu_claimed_until),
                ),
        )
        .set(&after)
        .returning((
            matches_table::id,
            matches_table::x_player_id,
            matches_table::o_player_id,
        ));
        // The filled row is finished, the other active.
        let ends = !after.is_active_status();
        assert_eq!(ends, filled);
        let diesel_built = diesel::debug_query::<Pg, _>(&DieselMoveWrite {
            update,
            stored: &stored,
            ends,
        })
        .to_string();
        let by_hand = move_write_sql(&after, &guard, &stored);
        assert_eq!(by_hand, diesel_built, "filled: {filled}");
        // A finished row's write marks its seats finished; an active one's does not.
        assert_eq!(
            by_hand.contains(r#"UPDATE "match_players" SET "active" = false"#),
            filled,
            "{by_hand}"
        );
        // The binds are in the text: the comparison saw the values, not only the SQL.
        assert!(diesel_built.contains("600001") == filled, "{diesel_built}");
    }
}
