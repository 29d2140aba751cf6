//! Pairing rounds made in one batch (one broker claim, one transaction): a
//! failure or a crash between the claim and the commit loses no ticket and
//! seats nobody twice (issue 9's rule, issue 18's batching).

use std::collections::{HashMap, HashSet};

use diesel::connection::SimpleConnection;
use uttt::broker::{PairClaim, TicketStatus};
use uttt::store::{DbConnection, StoreError};

use crate::ranked::{LADDER, manual_app, pair_now};
use crate::support::{Backend, Player, TestApp};

/// Makes every update of a ticket record fail: the last statement of a
/// round's transaction, after its matches and seats are written.
async fn inject_failure(app: &TestApp) {
    app.ctx
        .db
        .run(|conn| {
            let sql = match conn {
                DbConnection::Pg(_) => {
                    "CREATE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS
                       $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
                     CREATE TRIGGER injected_failure BEFORE UPDATE ON tickets
                       FOR EACH ROW EXECUTE FUNCTION injected_failure();"
                }
                DbConnection::Sqlite(_) => {
                    "CREATE TRIGGER injected_update BEFORE UPDATE ON tickets
                       BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
                }
            };
            conn.batch_execute(sql).map_err(StoreError::from)
        })
        .await
        .expect("install the failure");
}

async fn remove_failure(app: &TestApp) {
    app.ctx
        .db
        .run(|conn| {
            let sql = match conn {
                DbConnection::Pg(_) => "DROP TRIGGER injected_failure ON tickets;",
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

/// The durable record and the broker's copy of a ticket agree on `status`.
async fn assert_ticket(app: &TestApp, id: &str, status: TicketStatus) {
    let tid = id.to_owned();
    let row = app
        .ctx
        .db
        .run(move |conn| uttt::store::tickets::get(conn, &tid))
        .await
        .unwrap()
        .expect("the ticket's record");
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
        let tid = ticket.clone();
        let row = app
            .ctx
            .db
            .run(move |conn| uttt::store::tickets::get(conn, &tid))
            .await
            .unwrap()
            .unwrap();
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
        let tid = ticket.clone();
        let row = app
            .ctx
            .db
            .run(move |conn| uttt::store::tickets::get(conn, &tid))
            .await
            .unwrap()
            .unwrap();
        let match_id = row.match_id.expect("matched into a match");
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
