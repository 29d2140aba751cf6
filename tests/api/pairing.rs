//! Pairing rounds made in chunks (one broker claim, one transaction each): a
//! failure or a crash between the claim and the commit loses no ticket and
//! seats nobody twice (issue 9's rule, issue 18's batching).

use std::collections::{HashMap, HashSet};

use diesel::connection::SimpleConnection;
use uttt::broker::{PairClaim, TicketStatus};
use uttt::store::{DbConnection, StoreError};

use crate::ranked::{LADDER, manual_app, pair_now};
use crate::support::{Backend, EventStream, Player, TestApp};

/// Makes every update of a ticket record fail: the last statement of a
/// round's transaction, after its matches and seats are written.
async fn inject_failure(app: &TestApp) {
    inject_failure_where(app, "TRUE").await;
}

/// Makes the updates of the ticket records that pass `condition` (SQL over
/// `OLD`) fail.
async fn inject_failure_where(app: &TestApp, condition: &str) {
    let condition = condition.to_owned();
    app.ctx
        .db
        .run(move |conn| {
            let sql = match conn {
                DbConnection::Pg(_) => format!(
                    "CREATE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS
                       $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
                     CREATE TRIGGER injected_failure BEFORE UPDATE ON tickets
                       FOR EACH ROW WHEN ({condition}) EXECUTE FUNCTION injected_failure();"
                ),
                DbConnection::Sqlite(_) => format!(
                    "CREATE TRIGGER injected_update BEFORE UPDATE ON tickets WHEN {condition}
                       BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
                ),
            };
            conn.batch_execute(&sql).map_err(StoreError::from)
        })
        .await
        .expect("install the failure");
}

async fn remove_failure(app: &TestApp) {
    app.ctx
        .db
        .run(|conn| {
            let sql = match conn {
                DbConnection::Pg(_) => {
                    "DROP TRIGGER injected_failure ON tickets; DROP FUNCTION injected_failure();"
                }
                DbConnection::Sqlite(_) => "DROP TRIGGER injected_update;",
            };
            conn.batch_execute(sql).map_err(StoreError::from)
        })
        .await
        .expect("remove the failure");
}

/// Every ranked seat in the database: match → its two players.
async fn ranked_seats(app: &TestApp) -> HashMap<String, Vec<String>> {
    let rows = app
        .ctx
        .db
        .run(|conn| {
            use diesel::prelude::*;
            use uttt::store::schema::match_players;
            match_players::table
                .select((match_players::match_id, match_players::player_id))
                .load::<(String, String)>(conn)
                .map_err(StoreError::from)
        })
        .await
        .expect("seats");
    let mut seats: HashMap<String, Vec<String>> = HashMap::new();
    for (m, p) in rows {
        seats.entry(m).or_default().push(p);
    }
    seats
}

/// Each ticket's record: its status and match.
pub(crate) async fn ticket_row(app: &TestApp, id: &str) -> uttt::store::tickets::TicketRow {
    let tid = id.to_owned();
    app.ctx
        .db
        .run(move |conn| uttt::store::tickets::get(conn, &tid))
        .await
        .unwrap()
        .expect("the ticket's record")
}

/// The durable record and the broker's copy of a ticket agree on `status`.
async fn assert_ticket(app: &TestApp, id: &str, status: TicketStatus) {
    let row = ticket_row(app, id).await;
    let held = app
        .ctx
        .broker
        .ticket(id)
        .await
        .unwrap()
        .expect("the broker's ticket");
    assert_eq!(
        (row.status.as_str(), held.status),
        (status.as_str(), status),
        "ticket {id}"
    );
}

async fn a_failed_or_crashed_round_loses_no_ticket_and_seats_nobody_twice(backend: Backend) {
    let Some(app) = manual_app(backend, |_| {}).await else {
        return;
    };
    let mut queued: Vec<(Player, String)> = Vec::new();
    for i in 0..12 {
        let player = app.quick_player(&format!("batch_{i}")).await;
        let ticket = app.queue(&player, LADDER).await;
        queued.push((player, ticket));
    }

    // 1. The round's transaction fails after the broker claimed its pairs.
    inject_failure(&app).await;
    let failed = uttt::worker::pairing::tick(&app.ctx).await;
    assert!(
        failed.is_err(),
        "the injected failure ends the round: {failed:?}"
    );
    assert!(
        ranked_seats(&app).await.is_empty(),
        "nothing of the round was written"
    );
    for (_, ticket) in &queued {
        assert_ticket(&app, ticket, TicketStatus::Queued).await;
    }
    assert_eq!(
        app.ctx.broker.queue_size(LADDER).await.unwrap(),
        12,
        "all back in the queue"
    );
    remove_failure(&app).await;

    // 2. An instance that dies between the claim and the commit leaves two
    //    pairs claimed in the broker and no match: exactly this.
    let crashed = [
        PairClaim {
            a: queued[0].1.clone(),
            b: queued[1].1.clone(),
            match_id: "crashed1".into(),
        },
        PairClaim {
            a: queued[2].1.clone(),
            b: queued[3].1.clone(),
            match_id: "crashed2".into(),
        },
    ];
    assert_eq!(
        app.ctx.broker.claim_pairs(LADDER, &crashed).await.unwrap(),
        [true, true]
    );
    assert_eq!(
        pair_now(&app).await,
        4,
        "the eight unclaimed tickets are paired"
    );
    for (_, ticket) in &queued[..4] {
        let row = ticket_row(&app, ticket).await;
        assert_eq!(
            row.status, "queued",
            "a claim without a match is not a match"
        );
    }
    // Once the claims are stale, they go back to the queue and are paired.
    app.time.advance(31_000);
    assert_eq!(
        pair_now(&app).await,
        2,
        "the crashed claims are paired again"
    );

    // Every ticket is matched into a match that seats its player, and every
    // player sits in exactly one match.
    let seats = ranked_seats(&app).await;
    assert_eq!(seats.len(), 6);
    let mut seated = HashSet::new();
    for players in seats.values() {
        assert_eq!(players.len(), 2);
        for p in players {
            assert!(seated.insert(p.clone()), "{p} sits in two matches");
        }
    }
    for (player, ticket) in &queued {
        assert_ticket(&app, ticket, TicketStatus::Matched).await;
        let match_id = ticket_row(&app, ticket)
            .await
            .match_id
            .expect("matched into a match");
        assert!(seats[&match_id].contains(&player.id), "ticket {ticket}");
        let held = app.ctx.broker.ticket(ticket).await.unwrap().unwrap();
        assert_eq!(held.match_id.as_deref(), Some(match_id.as_str()));
    }
}

#[actix_web::test]
async fn a_failed_or_crashed_round_loses_no_ticket_and_seats_nobody_twice_on_sqlite() {
    a_failed_or_crashed_round_loses_no_ticket_and_seats_nobody_twice(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_failed_or_crashed_round_loses_no_ticket_and_seats_nobody_twice_on_postgres() {
    a_failed_or_crashed_round_loses_no_ticket_and_seats_nobody_twice(Backend::Postgres).await;
}

/// A round made in chunks of two pairs: one chunk's transaction fails, the
/// other chunks' matches stand, and the failed chunk's tickets, and only
/// they, are queued again and paired by the next round.
async fn a_failed_chunk_loses_only_its_own_pairs(backend: Backend) {
    let Some(app) = manual_app(backend, |c| c.matchmaking.chunk_pairs = 2).await else {
        return;
    };
    let mut queued: Vec<(Player, String)> = Vec::new();
    for i in 0..12 {
        let player = app.quick_player(&format!("chunk_{i}")).await;
        let ticket = app.queue(&player, LADDER).await;
        queued.push((player, ticket));
    }
    let doomed = queued[5].1.clone();
    inject_failure_where(&app, &format!("OLD.id = '{doomed}'")).await;
    let failed = uttt::worker::pairing::tick(&app.ctx).await;
    assert!(failed.is_err(), "the failed chunk is reported: {failed:?}");

    // Six pairs in three chunks: two chunks made their four matches.
    let seats = ranked_seats(&app).await;
    assert_eq!(seats.len(), 4, "{seats:?}");
    let seated: HashSet<&String> = seats.values().flatten().collect();
    assert_eq!(seated.len(), 8, "nobody sits twice");
    let mut requeued = Vec::new();
    for (player, ticket) in &queued {
        if seated.contains(&player.id) {
            assert_ticket(&app, ticket, TicketStatus::Matched).await;
            let match_id = ticket_row(&app, ticket).await.match_id.expect("its match");
            assert!(seats[&match_id].contains(&player.id), "ticket {ticket}");
        } else {
            assert_ticket(&app, ticket, TicketStatus::Queued).await;
            requeued.push(ticket.clone());
        }
    }
    assert_eq!(requeued.len(), 4, "the failed chunk's two pairs");
    assert!(requeued.contains(&doomed));
    assert_eq!(app.ctx.broker.queue_size(LADDER).await.unwrap(), 4);

    remove_failure(&app).await;
    assert_eq!(pair_now(&app).await, 2, "the next round pairs them");
    for (_, ticket) in &queued {
        assert_ticket(&app, ticket, TicketStatus::Matched).await;
    }
    let seats = ranked_seats(&app).await;
    assert_eq!(seats.len(), 6);
    assert_eq!(seats.values().flatten().collect::<HashSet<_>>().len(), 12);
}

#[actix_web::test]
async fn a_failed_chunk_loses_only_its_own_pairs_on_sqlite() {
    a_failed_chunk_loses_only_its_own_pairs(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_failed_chunk_loses_only_its_own_pairs_on_postgres() {
    a_failed_chunk_loses_only_its_own_pairs(Backend::Postgres).await;
}

/// A ticket's line in the queue can lag its record: an instance of an
/// earlier version, touching the ticket, writes only the record. The round
/// reads the line, but the record decides whether the ticket was abandoned.
/// A ticket cancelled after the round read the queue and before its chunk
/// claimed it: that pair is not made, and the other pairs of the chunk,
/// before and after it, are made as planned, each match seating the two
/// players its tickets name.
async fn a_pair_left_unclaimed_leaves_the_rest_of_its_chunk_as_planned(backend: Backend) {
    let Some(app) = manual_app(backend, |_| {}).await else {
        return;
    };
    let mut queued: Vec<(Player, uttt::broker::Ticket)> = Vec::new();
    for i in 0..6 {
        let player = app.quick_player(&format!("unclaimed_{i}")).await;
        let id = app.queue(&player, LADDER).await;
        let ticket = app.ctx.broker.ticket(&id).await.unwrap().expect("queued");
        queued.push((player, ticket));
    }
    // As the round read them; then the fourth player leaves the queue.
    let left = &queued[3];
    app.call(
        "DELETE",
        &format!("/api/v1/matchmaking/tickets/{}", left.1.id),
        None,
        Some(&left.0.token),
    )
    .await
    .expect(204);
    let ladder = app.ctx.config.ladder(LADDER).expect("ladder").clone();
    let pairs: Vec<(&uttt::broker::Ticket, &uttt::broker::Ticket)> =
        queued.chunks(2).map(|p| (&p[0].1, &p[1].1)).collect();
    let made = uttt::service::matchmaking::batch::make_matches(&app.ctx, &ladder, &pairs, None)
        .await
        .expect("the round");
    assert_eq!(made.len(), 2, "the first and third pairs: {made:?}");

    let seats = ranked_seats(&app).await;
    assert_eq!(seats.len(), 2, "{seats:?}");
    for (i, pair) in queued.chunks(2).enumerate() {
        if i == 1 {
            assert_ticket(&app, &pair[0].1.id, TicketStatus::Queued).await;
            assert_ticket(&app, &pair[1].1.id, TicketStatus::Cancelled).await;
            continue;
        }
        let match_id = ticket_row(&app, &pair[0].1.id)
            .await
            .match_id
            .expect("matched");
        assert_eq!(
            ticket_row(&app, &pair[1].1.id).await.match_id.as_deref(),
            Some(match_id.as_str()),
            "both tickets of pair {i} name one match"
        );
        let mut seated = seats[&match_id].clone();
        seated.sort();
        let mut expected = vec![pair[0].0.id.clone(), pair[1].0.id.clone()];
        expected.sort();
        assert_eq!(seated, expected, "pair {i}'s match seats its two players");
        for (_, ticket) in pair {
            assert_ticket(&app, &ticket.id, TicketStatus::Matched).await;
        }
    }
    assert_eq!(app.ctx.broker.queue_size(LADDER).await.unwrap(), 1);
}

#[actix_web::test]
async fn a_pair_left_unclaimed_leaves_the_rest_of_its_chunk_as_planned_on_sqlite() {
    a_pair_left_unclaimed_leaves_the_rest_of_its_chunk_as_planned(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_pair_left_unclaimed_leaves_the_rest_of_its_chunk_as_planned_on_postgres() {
    a_pair_left_unclaimed_leaves_the_rest_of_its_chunk_as_planned(Backend::Postgres).await;
}

/// An open `/me/events` stream keeps its player's ticket alive from the
/// moment it opens, not from its first keep-alive 15 s later.
async fn a_stream_keeps_a_ticket_alive_from_its_opening(backend: Backend) {
    let Some(app) = manual_app(backend, |_| {}).await else {
        return;
    };
    let a = app.quick_player("watcher").await;
    let t = app.queue(&a, LADDER).await;
    app.time.advance(50_000);
    let _stream = EventStream::open(&app, "/api/v1/me/events", &a.token, None).await;
    // 70 s after queueing, 20 s after the stream opened (past the abandon
    // time of 60 s counted from the queueing, within it from the opening).
    app.time.advance(20_000);
    let round = uttt::worker::pairing::tick(&app.ctx).await.unwrap();
    assert_eq!(round.abandoned, 0);
    assert_ticket(&app, &t, TicketStatus::Queued).await;
}

#[actix_web::test]
async fn a_stream_keeps_a_ticket_alive_from_its_opening_on_sqlite() {
    a_stream_keeps_a_ticket_alive_from_its_opening(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_stream_keeps_a_ticket_alive_from_its_opening_on_postgres() {
    a_stream_keeps_a_ticket_alive_from_its_opening(Backend::Postgres).await;
}

#[actix_web::test]
async fn a_ticket_touched_by_an_older_instance_is_not_abandoned() {
    let Some(app) = manual_app(Backend::Postgres, |_| {}).await else {
        return;
    };
    let Some(url) = app.ctx.config.redis_url.clone() else {
        eprintln!("TEST_REDIS_URL is not set: this Redis check does not run");
        return;
    };
    let a = app.quick_player("lagging").await;
    let t = app.queue(&a, LADDER).await;
    app.time.advance(61_000);
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let key = format!("{}{{mm}}:t:{t}", app.ctx.config.redis_prefix);
    let _: i64 = redis::cmd("HSET")
        .arg(&key)
        .arg("seen_at")
        .arg(app.ctx.time.now_ms())
        .query_async(&mut raw)
        .await
        .unwrap();
    let round = uttt::worker::pairing::tick(&app.ctx).await.unwrap();
    assert_eq!(round.abandoned, 0);
    assert_ticket(&app, &t, TicketStatus::Queued).await;
    // Left alone for another minute, it is abandoned after all.
    app.time.advance(61_000);
    let round = uttt::worker::pairing::tick(&app.ctx).await.unwrap();
    assert_eq!(round.abandoned, 1);
    assert_ticket(&app, &t, TicketStatus::Cancelled).await;
}

/// A round that outlives its ladder's lock, while another instance takes
/// the lock, claims no further chunk: the rest of its pairs stay queued for
/// the instance that pairs the ladder now.
#[actix_web::test]
async fn a_round_that_loses_its_lock_leaves_its_remaining_chunks_queued() {
    let Some(app) = manual_app(Backend::Postgres, |c| {
        c.matchmaking.chunk_pairs = 2;
        // A quarter of the pool: the chunks are written one at a time.
        c.db_pool_size = 4;
    })
    .await
    else {
        return;
    };
    let mut queued: Vec<(Player, String)> = Vec::new();
    for i in 0..12 {
        let player = app.quick_player(&format!("lapse_{i}")).await;
        let ticket = app.queue(&player, LADDER).await;
        queued.push((player, ticket));
    }
    // Every chunk's ticket update takes a second: time to take the lock.
    app.ctx
        .db
        .run(|conn| {
            conn.batch_execute(
                "CREATE FUNCTION slow_chunk() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
                 CREATE TRIGGER slow_chunk BEFORE UPDATE ON tickets
                   FOR EACH STATEMENT EXECUTE FUNCTION slow_chunk();",
            )
            .map_err(StoreError::from)
        })
        .await
        .unwrap();
    let ctx = app.ctx.clone();
    let round = actix_web::rt::spawn(async move { uttt::worker::pairing::tick(&ctx).await });
    actix_web::rt::time::sleep(std::time::Duration::from_millis(400)).await;
    let lock = format!("pairing:{LADDER}");
    let broker = &app.ctx.broker;
    broker.unlock(&lock, &app.ctx.instance).await.unwrap();
    let ttl = std::time::Duration::from_secs(60);
    assert!(
        broker
            .try_lock(&lock, "another-instance", ttl)
            .await
            .unwrap()
    );

    let round = round.await.unwrap().unwrap();
    assert_eq!(round.matched, 2, "the first chunk only");
    let seats = ranked_seats(&app).await;
    assert_eq!(seats.len(), 2, "{seats:?}");
    let seated: HashSet<&String> = seats.values().flatten().collect();
    assert_eq!(seated.len(), 4);
    for (player, ticket) in &queued {
        let status = if seated.contains(&player.id) {
            TicketStatus::Matched
        } else {
            TicketStatus::Queued
        };
        assert_ticket(&app, ticket, status).await;
    }
    assert_eq!(broker.queue_size(LADDER).await.unwrap(), 8, "unclaimed");
    assert_eq!(pair_now(&app).await, 0, "the other instance holds the lock");

    broker.unlock(&lock, "another-instance").await.unwrap();
    assert_eq!(pair_now(&app).await, 4, "the next round pairs them");
    for (_, ticket) in &queued {
        assert_ticket(&app, ticket, TicketStatus::Matched).await;
    }
}
