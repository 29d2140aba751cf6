//! Players' moves on PostgreSQL take the pipelined connections
//! (`store::pipelined`) when the row is all they need, and `play::play`
//! otherwise, and a refused move gets `play`'s answer and leaves the
//! pipeline's one connection free.

use std::time::Duration;

use serde_json::json;

use crate::both_backends;
use crate::common::http::{self, Player, Reply};

use crate::support::{Backend, TestApp, TestConfig, addr};

/// One pipelined connection, so a refusal that spoiled it or kept it
/// would be seen by the next move.
async fn one_connection(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.db_pipeline_size = 1;
    Some(TestApp::start(config).await)
}

/// Depth 1: X takes the top row.
const X_TOP_ROW: &[&str] = &["0", "3", "1", "4", "2"];

both_backends! {
    with one_connection;

    async fn moves_needing_only_the_row_are_pipelined_and_the_rest_played_in_full(app: TestApp) {
        let (x, o) = (app.register("pipex").await, app.register("pipeo").await);
        let id = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        let pipelined = || app.ctx.metrics.counter("moves_pipelined");
        app.play(&x, &id, 0, X_TOP_ROW[0]).await.expect(200);
        // A resend of the move accepted at ply 0 is answered as it was, not applied again.
        let resent = app.play(&x, &id, 0, X_TOP_ROW[0]).await;
        resent.expect(200);
        assert_eq!(resent.body["ply"], 1);
        for (ply, square) in X_TOP_ROW.iter().enumerate().skip(1) {
            let mover = if ply % 2 == 0 { &x } else { &o };
            app.play(mover, &id, ply as u64, square).await.expect(200);
        }
        let state = app.state(&x, &id).await;
        assert_eq!(state["status"], "finished");
        assert_eq!(state["result"]["winner"], "x");
        assert_eq!(state["result"]["reason"], "three_in_a_row");
        // The five moves, the winning one of this unrated game included,
        // needed no more than the row; the resend did.
        // Not behind PgBouncer (`TEST_DB_PREPARED_STATEMENTS=false`), where the pipeline is off.
        let expected = match app.backend {
            Backend::Postgres if app.ctx.config.db_prepared_statements => 5,
            Backend::Postgres | Backend::Sqlite => 0,
        };
        assert_eq!(pipelined(), expected);
        // Of those, four were judged on a remembered row, without reading
        // it: the first on the row the room's start wrote, the third,
        // fourth and fifth on the row the move before wrote. The second
        // read the row: the resend had taken the remembered one (and
        // needed more).
        let remembered = if expected > 0 { 4 } else { 0 };
        assert_eq!(app.ctx.metrics.counter("moves_remembered"), remembered);
        // The game's end marked both seats finished, on either path.
        assert_eq!(unfinished_seats(&app, &id).await, 0);
        app.assert_consistent(&id).await;
    }

    async fn refused_moves_get_their_problem_and_free_the_connection(app: TestApp) {
        let (x, o) = (app.register("pipry").await, app.register("piprn").await);
        let stranger = app.register("pipstr").await;
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        app.play(&o, &id, 0, "4.0").await.expect_problem(409, "stale_ply");
        app.play(&x, &id, 1, "4.0").await.expect_problem(409, "not_your_turn");
        app.play(&o, &id, 1, "0.0").await.expect_problem(422, "illegal_move");
        app.play(&stranger, &id, 1, "4.0").await.expect_problem(403, "forbidden");
        app.play(&o, &uttt::ids::match_id(), 1, "4.0").await.expect_problem(404, "not_found");
        // The one connection still plays: both applied moves went through it.
        app.play(&o, &id, 1, "4.0").await.expect(200);
        let expected = match app.backend {
            Backend::Postgres if app.ctx.config.db_prepared_statements => 2,
            Backend::Postgres | Backend::Sqlite => 0,
        };
        assert_eq!(app.ctx.metrics.counter("moves_pipelined"), expected);
        // Resigning locks the row on the pool's connections: it would wait
        // for ever behind a refused move's lock, were one held.
        let (path, body) = (format!("/api/v1/matches/{id}/resign"), json!({}));
        let resigned = tokio::time::timeout(Duration::from_secs(20), app.post(&path, &body, Some(&o.token)))
            .await
            .expect("the resignation is not kept waiting by a refused move");
        resigned.expect(200);
        assert_eq!(resigned.body["result"]["winner"], "x");
        app.assert_consistent(&id).await;
    }
}

/// As [`one_connection`], with the workers still (the test pairs its own round).
async fn one_connection_paired_by_hand(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.db_pipeline_size = 1;
    config.config.workers = uttt::config::Workers::NONE;
    Some(TestApp::start(config).await)
}

both_backends! {
    with one_connection_paired_by_hand;

    async fn a_rated_game_ends_under_the_lock_with_its_ratings(app: TestApp) {
        let (a, b) = (app.register("piprata").await, app.register("pipratb").await);
        let id = app.ranked_match(&a, &b, crate::ranked::LADDER).await;
        let state = app.state(&a, &id).await;
        let (x_id, _) = crate::ranked::seats(&state);
        let (x, o) = if x_id == a.id { (&a, &b) } else { (&b, &a) };
        // Depth 2: O wins with its 18th move.
        let last = app.play_script(x, o, &id, crate::matches::DOUBLE_WIN).await;
        assert_eq!(last.body["status"], "finished");
        assert_eq!(last.body["result"]["winner"], "o");
        assert!(
            last.body["result"]["rating_changes"]["o"]["after"].is_number(),
            "{}",
            last.body
        );
        // Every move but the last needed only the row; the last wrote the ratings.
        let expected = match app.backend {
            Backend::Postgres if app.ctx.config.db_prepared_statements => {
                crate::matches::DOUBLE_WIN.len() as u64 - 1
            }
            Backend::Postgres | Backend::Sqlite => 0,
        };
        assert_eq!(app.ctx.metrics.counter("moves_pipelined"), expected);
        assert_eq!(unfinished_seats(&app, &id).await, 0);
        app.assert_consistent(&id).await;
    }
}

/// The seats of match `id` still counted as unfinished (`match_players.active`).
async fn unfinished_seats(app: &TestApp, id: &str) -> i64 {
    use diesel::prelude::*;
    use uttt::store::schema::match_players::dsl as mp;
    let id = id.to_owned();
    app.ctx
        .db
        .run(move |conn| {
            Ok::<i64, uttt::store::StoreError>(
                mp::match_players
                    .filter(mp::match_id.eq(&id))
                    .filter(mp::active)
                    .count()
                    .get_result::<i64>(conn)?,
            )
        })
        .await
        .expect("count the unfinished seats")
}

/// `player`'s move at `ply` on `address` (the base URL of an instance).
async fn play_on(
    app: &TestApp,
    address: &str,
    player: &Player,
    id: &str,
    ply: u64,
    square: &str,
) -> Reply {
    let body = json!({"ply": ply, "address": addr(square)});
    let url = format!("{address}/api/v1/matches/{id}/moves");
    http::send(
        &app.client,
        "POST",
        &url,
        Some(body.to_string()),
        Some(&player.token),
        &[],
    )
    .await
    .unwrap()
}

/// Two instances play one match in turn, each remembering the rows it
/// wrote: a remembered row the other instance has moved on from is only a
/// guess, so a move it would refuse is accepted when the match allows it,
/// and a move it would accept is refused when the match does not.
#[actix_web::test]
async fn a_remembered_row_another_instance_moved_on_is_not_trusted() {
    let Some(app) = TestApp::spawn_postgres().await else {
        return;
    };
    if !app.ctx.config.db_prepared_statements {
        return; // behind PgBouncer the pipeline is off
    }
    let (x, o) = (app.register("remx").await, app.register("remo").await);
    let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
    let (b, b_ctx, _handle) = app.start_sibling().await;
    let a = app.address.clone();
    let remembered = |ctx: &uttt::service::Context| ctx.metrics.counter("moves_remembered");

    // A started the match and remembers its row: the first move is judged on it.
    play_on(&app, &a, &x, &id, 0, "4.4").await.expect(200);
    // B plays the next two: the second on the row B wrote for the first.
    play_on(&app, &b, &o, &id, 1, "4.0").await.expect(200);
    play_on(&app, &b, &x, &id, 2, "0.4").await.expect(200);
    assert_eq!((remembered(&app.ctx), remembered(&b_ctx)), (1, 1));

    // A remembers the match at ply 1, where O's move at ply 3 is stale:
    // it is judged on the match as it is, and played.
    let played = play_on(&app, &a, &o, &id, 3, "4.8").await;
    played.expect(200);
    assert_eq!(played.body["ply"], 4);

    // B remembers ply 3, where X's move at ply 4 is stale: played as well.
    play_on(&app, &b, &x, &id, 4, "8.0").await.expect(200);

    // A remembers ply 4, where X's move is legal; the match is at ply 5
    // (the move would be refused by its ply's key, whatever the guard;
    // judged on the read, an earlier ply is a possible resend, answered
    // on the locked path).
    let refused = play_on(&app, &a, &x, &id, 4, "8.4").await;
    refused.expect_problem(409, "stale_ply");
    assert_eq!(refused.body["current_ply"], 5);
    assert_eq!((remembered(&app.ctx), remembered(&b_ctx)), (1, 1));
    let state = app.state(&x, &id).await;
    assert_eq!(state["ply"], 5);
    assert_eq!(
        state["board"]["cells"].as_str().unwrap().chars().nth(76),
        Some('.'),
        "8.4 not played"
    );

    // A refused move's read is remembered: X out of turn, then O's move
    // on A is one statement.
    play_on(&app, &a, &x, &id, 5, "0.0")
        .await
        .expect_problem(409, "not_your_turn");
    play_on(&app, &a, &o, &id, 5, "0.0").await.expect(200);
    assert_eq!(remembered(&app.ctx), 2);

    // O resigns on B, at the same ply: A's remembered row, where X's move
    // at ply 6 is legal and its ply free, differs from the match in its
    // version and status alone. The move is refused as the match stands.
    let resign = format!("{b}/api/v1/matches/{id}/resign");
    http::send(
        &app.client,
        "POST",
        &resign,
        Some("{}".into()),
        Some(&o.token),
        &[],
    )
    .await
    .unwrap()
    .expect(200);
    play_on(&app, &a, &x, &id, 6, "0.8")
        .await
        .expect_problem(409, "match_over");
    let state = app.state(&x, &id).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["ply"], 6);
    assert_eq!(state["result"]["winner"], "x");
    assert_eq!(remembered(&app.ctx), 2);
    app.assert_consistent(&id).await;
}
