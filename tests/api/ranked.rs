//! Ranked play: ladders, tickets, pairing by rating, Glicko-2 results, leaderboards.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Value, json};
use uttt::rating::{self, Rating, Score};

use crate::both_backends;
use crate::support::{Backend, EventStream, Player, TestApp, TestConfig};

pub(crate) const LADDER: &str = "ultimate-10m";

/// Depth 2, seed 000's closed draw (see tests/api/matches.rs).
pub(crate) const CLOSED_DRAW: &[&str] = &[
    "2.3", "3.2", "2.4", "4.2", "2.5", "5.0", "0.5", "5.1", "1.5", "5.2", "0.2", "6.0", "0.8",
    "8.4", "4.6", "6.3", "3.4", "4.5", "3.0", "6.6", "3.8", "8.1", "1.4", "4.8", "8.0", "1.0",
    "8.2", "7.2", "8.3", "1.1", "1.6", "7.3", "7.0", "1.2", "8.7", "7.5", "7.4", "8.5", "7.8",
    "8.6", "8.8",
];

/// A server whose pairing runs only when the test says so.
pub(crate) async fn manual_app(
    backend: Backend,
    edit: impl FnOnce(&mut uttt::config::Config),
) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers = uttt::config::Workers::NONE;
    edit(&mut config.config);
    Some(TestApp::start(config).await)
}

pub(crate) async fn pair_now(app: &TestApp) -> usize {
    uttt::worker::pairing::tick(&app.ctx)
        .await
        .expect("pairing round")
        .matched
}

pub(crate) fn seats(state: &Value) -> (String, String) {
    (
        state["players"]["x"]["id"].as_str().unwrap().to_owned(),
        state["players"]["o"]["id"].as_str().unwrap().to_owned(),
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.006
}

both_backends! {
    async fn the_default_ladders_are_listed(app: TestApp) {
        let reply = app.get("/api/v1/ladders", None).await;
        reply.expect(200);
        let ids: Vec<&str> = reply.body.as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["ultimate-10m", "ultimate-turn30", "advanced-10m"]);
        assert_eq!(reply.body[0]["time_control"], json!({"kind": "clock", "initial_ms": 600000, "increment_ms": 0}));
        assert_eq!(reply.body[1]["time_control"], json!({"kind": "per_turn", "turn_ms": 30000}));
        assert_eq!(reply.body[2]["depth"], 3);
        assert_eq!(reply.body[0]["rated"], true);
    }

    async fn two_queued_players_are_paired_promptly_and_told(app: TestApp) {
        let (a, b) = (app.register("quinn").await, app.register("rory").await);
        let mut a_events = EventStream::open(&app, "/api/v1/me/events", &a.token, None).await;
        let mut b_events = EventStream::open(&app, "/api/v1/me/events", &b.token, None).await;
        let ticket = app.post("/api/v1/matchmaking/tickets", &json!({"ladder": LADDER}), Some(&a.token)).await;
        ticket.expect(201);
        assert_eq!(ticket.body["status"], "queued");
        assert_eq!(ticket.body["rating"], 1500.0);
        assert_eq!(ticket.body["window"], 100.0);
        assert_eq!(ticket.body["queue_size"], 1);
        let a_ticket = ticket.body["id"].as_str().unwrap().to_owned();
        let b_ticket = app.queue(&b, LADDER).await;
        let found_a = a_events.next_event(Duration::from_secs(10)).await.expect("match_found for a");
        let found_b = b_events.next_event(Duration::from_secs(10)).await.expect("match_found for b");
        assert_eq!(found_a.event, "match_found");
        let fa: Value = serde_json::from_str(&found_a.data).unwrap();
        let fb: Value = serde_json::from_str(&found_b.data).unwrap();
        assert_eq!(fa["match_id"], fb["match_id"]);
        assert_ne!(fa["seat"], fb["seat"]);
        let match_id = fa["match_id"].as_str().unwrap();
        for (p, t) in [(&a, &a_ticket), (&b, &b_ticket)] {
            let got = app.get(&format!("/api/v1/matchmaking/tickets/{t}"), Some(&p.token)).await;
            assert_eq!(got.body["status"], "matched");
            assert_eq!(got.body["match_id"], match_id);
            assert_eq!(got.body["window"], Value::Null);
        }
        let state = app.state(&a, match_id).await;
        assert_eq!(state["mode"], "ranked");
        assert_eq!(state["ladder"], LADDER);
        assert_eq!(state["rated"], true);
        assert_eq!(state["depth"], 2);
        assert_eq!(state["clocks"]["x_ms"], 600000);
        assert_eq!(state["clocks"]["running"], "x");
        let (x, o) = seats(&state);
        assert_eq!(HashSet::from([x, o]), HashSet::from([a.id.clone(), b.id.clone()]));
        // Someone else cannot read a ticket.
        let c = app.register("sage").await;
        app.get(&format!("/api/v1/matchmaking/tickets/{a_ticket}"), Some(&c.token)).await.expect_problem(404, "not_found");
    }

    async fn cancelling_a_ticket_and_the_409_rules(app: TestApp) {
        let (a, b) = (app.register("tess").await, app.register("uma").await);
        let t = app.queue(&a, LADDER).await;
        let again = app.post("/api/v1/matchmaking/tickets", &json!({"ladder": "advanced-10m"}), Some(&a.token)).await;
        again.expect_problem(409, "already_queued");
        assert_eq!(again.body["ticket_id"], t.as_str());
        app.call("DELETE", &format!("/api/v1/matchmaking/tickets/{t}"), None, Some(&a.token)).await.expect(204);
        let got = app.get(&format!("/api/v1/matchmaking/tickets/{t}"), Some(&a.token)).await;
        assert_eq!(got.body["status"], "cancelled");
        assert_eq!(got.body["reason"], "cancelled");
        app.call("DELETE", &format!("/api/v1/matchmaking/tickets/{t}"), None, Some(&a.token)).await.expect(204);
        app.call("DELETE", "/api/v1/matchmaking/tickets/nope", None, Some(&a.token)).await.expect_problem(404, "not_found");
        app.post("/api/v1/matchmaking/tickets", &json!({"ladder": "no-such"}), Some(&a.token)).await.expect_problem(422, "validation_failed");
        app.post("/api/v1/matchmaking/tickets", &json!({}), Some(&a.token)).await.expect_problem(422, "validation_failed");

        // Paired: cancelling is refused with the match, and queueing again is refused while it runs.
        let ta = app.queue(&a, LADDER).await;
        let tb = app.queue(&b, LADDER).await;
        let match_id = app.matched(&a, &ta).await;
        assert_eq!(app.matched(&b, &tb).await, match_id);
        let late = app.call("DELETE", &format!("/api/v1/matchmaking/tickets/{ta}"), None, Some(&a.token)).await;
        late.expect_problem(409, "already_matched");
        assert_eq!(late.body["match_id"], match_id.as_str());
        let busy = app.post("/api/v1/matchmaking/tickets", &json!({"ladder": LADDER}), Some(&a.token)).await;
        busy.expect_problem(409, "in_active_match");
        assert_eq!(busy.body["match_id"], match_id.as_str());
        // Once it is over, queueing works again.
        app.post(&format!("/api/v1/matches/{match_id}/resign"), &json!({}), Some(&b.token)).await.expect(200);
        app.queue(&a, LADDER).await;
    }
}

both_backends! {
    with |backend| manual_app(backend, |_| {});
    async fn far_apart_ratings_pair_only_after_the_window_widened(app: TestApp) {
        let (a, b) = (
            app.quick_player("far_a").await,
            app.quick_player("far_b").await,
        );
        app.set_rating(&a, LADDER, 1500.0, 60.0).await;
        app.set_rating(&b, LADDER, 1900.0, 60.0).await;
        let ta = app.queue(&a, LADDER).await;
        let tb = app.queue(&b, LADDER).await;
        assert_eq!(
            pair_now(&app).await,
            0,
            "a 400-point gap is outside both windows"
        );
        app.time.advance(29_000);
        let t = app
            .get(&format!("/api/v1/matchmaking/tickets/{ta}"), Some(&a.token))
            .await;
        assert_eq!(t.body["window"], 390.0);
        assert_eq!(t.body["waited_ms"], 29_000);
        assert_eq!(t.body["queue_size"], 2);
        app.get(&format!("/api/v1/matchmaking/tickets/{tb}"), Some(&b.token))
            .await
            .expect(200);
        assert_eq!(pair_now(&app).await, 0, "window 390 < gap 400");
        app.time.advance(1_000);
        assert_eq!(pair_now(&app).await, 1, "both windows reached 400");
    }
}

both_backends! {
    with |backend| manual_app(backend, |_| {});
    async fn an_unwatched_ticket_is_cancelled_as_abandoned(app: TestApp) {
        let a = app.quick_player("gone").await;
        let t = app.queue(&a, LADDER).await;
        app.time.advance(61_000);
        uttt::worker::pairing::tick(&app.ctx).await.unwrap();
        let got = app
            .get(&format!("/api/v1/matchmaking/tickets/{t}"), Some(&a.token))
            .await;
        assert_eq!(got.body["status"], "cancelled");
        assert_eq!(got.body["reason"], "abandoned");
    }
}

/// Pairs two players at once (windows wide open) and returns (match id, x, o).
pub(crate) async fn ranked_pair<'a>(
    app: &TestApp,
    a: &'a Player,
    b: &'a Player,
) -> (String, &'a Player, &'a Player) {
    let ta = app.queue(a, LADDER).await;
    app.queue(b, LADDER).await;
    assert_eq!(pair_now(app).await, 1);
    let match_id = app.matched(a, &ta).await;
    let (x, _) = seats(&app.state(a, &match_id).await);
    if x == a.id {
        (match_id, a, b)
    } else {
        (match_id, b, a)
    }
}

fn expected(
    x: &uttt::store::ratings::RatingRow,
    o: &uttt::store::ratings::RatingRow,
    x_score: Score,
) -> (Rating, Rating) {
    let r = |row: &uttt::store::ratings::RatingRow| Rating {
        rating: row.rating,
        deviation: row.deviation,
        volatility: row.volatility,
    };
    rating::after_game(r(x), r(o), x_score)
}

both_backends! {
    with |backend| manual_app(backend, |c| c.matchmaking.window_start = 5000.0);
    async fn a_drawn_ranked_match_scores_half_for_both(app: TestApp) {
        let (a, b) = (
            app.quick_player("dr_a").await,
            app.quick_player("dr_b").await,
        );
        app.set_rating(&a, LADDER, 1700.0, 80.0).await;
        app.set_rating(&b, LADDER, 1450.0, 200.0).await;
        let (match_id, x, o) = ranked_pair(&app, &a, &b).await;
        let (x_before, o_before) = (
            app.rating_row(x, LADDER).await,
            app.rating_row(o, LADDER).await,
        );
        let last = app.play_script(x, o, &match_id, CLOSED_DRAW).await;
        assert_eq!(last.body["result"]["reason"], "draw");
        let (x_exp, o_exp) = expected(&x_before, &o_before, Score::Draw);
        let (x_after, o_after) = (
            app.rating_row(x, LADDER).await,
            app.rating_row(o, LADDER).await,
        );
        assert!(
            (x_after.rating - x_exp.rating).abs() < 1e-9,
            "{x_after:?} vs {x_exp:?}"
        );
        assert!((o_after.rating - o_exp.rating).abs() < 1e-9);
        assert!((x_after.deviation - x_exp.deviation).abs() < 1e-9);
        assert!((o_after.volatility - o_exp.volatility).abs() < 1e-12);
        assert_eq!((x_after.draws, x_after.games, o_after.draws), (1, 1, 1));
        // Both ratings moved, in opposite directions (a draw is halfway between a win and a loss).
        assert_ne!(x_after.rating, x_before.rating);
        assert!(
            (x_after.rating - x_before.rating).signum() != (o_after.rating - o_before.rating).signum()
        );
        let changes = &last.body["result"]["rating_changes"];
        assert!(close(
            changes["x"]["before"].as_f64().unwrap(),
            x_before.rating
        ));
        assert!(close(changes["x"]["after"].as_f64().unwrap(), x_exp.rating));
        assert!(close(changes["o"]["after"].as_f64().unwrap(), o_exp.rating));
        app.assert_consistent(&match_id).await;
    }
}

both_backends! {
    with |backend| manual_app(backend, |c| c.matchmaking.window_start = 5000.0);
    async fn a_time_forfeit_counts_as_a_loss_and_colours_alternate(app: TestApp) {
        let (a, b) = (
            app.quick_player("tf_a").await,
            app.quick_player("tf_b").await,
        );
        // Established, so the leaderboard ranks them after the game.
        app.set_rating(&a, LADDER, 1500.0, 60.0).await;
        app.set_rating(&b, LADDER, 1500.0, 60.0).await;
        let (match_id, x, o) = ranked_pair(&app, &a, &b).await;
        let (x_before, o_before) = (
            app.rating_row(x, LADDER).await,
            app.rating_row(o, LADDER).await,
        );
        app.play(x, &match_id, 0, "4.4").await.expect(200);
        app.time.advance(600_001);
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 1);
        let s = app.state(x, &match_id).await;
        assert_eq!(s["result"]["reason"], "timeout");
        assert_eq!(s["result"]["winner"], "x", "O flagged");
        let (x_exp, o_exp) = expected(&x_before, &o_before, Score::Win);
        let (x_after, o_after) = (
            app.rating_row(x, LADDER).await,
            app.rating_row(o, LADDER).await,
        );
        assert!((x_after.rating - x_exp.rating).abs() < 1e-9);
        assert!((o_after.rating - o_exp.rating).abs() < 1e-9);
        assert_eq!((x_after.wins, o_after.losses), (1, 1));
        assert!(
            o_after.rating < o_before.rating,
            "a time forfeit counts as a loss"
        );
        // The sweeper finds nothing more; the result was applied once.
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 0);
        assert_eq!(app.rating_row(x, LADDER).await.games, 1);

        // The next pairing gives X to the player who was X less recently.
        let (match2, x2, _) = ranked_pair(&app, &a, &b).await;
        assert_eq!(x2.id, o.id, "the previous O is X now");
        assert_ne!(match2, match_id);

        // Profiles and the leaderboard show the result.
        let me = app.get("/api/v1/me", Some(&x.token)).await;
        let standing = me.body["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ladder"] == LADDER)
            .unwrap()
            .clone();
        assert_eq!(standing["wins"], 1);
        assert_eq!(standing["provisional"], false);
        assert_eq!(me.body["ratings"].as_array().unwrap().len(), 3);
        let profile = app
            .get(
                &format!("/api/v1/players/{}", o.username.to_uppercase()),
                None,
            )
            .await;
        profile.expect(200);
        assert_eq!(profile.body["username"], o.username.as_str());
        let board = app
            .get(
                &format!("/api/v1/ladders/{LADDER}/leaderboard?limit=1"),
                None,
            )
            .await;
        board.expect(200);
        assert_eq!(board.body["items"][0]["rank"], 1);
        assert_eq!(
            board.body["items"][0]["player"]["id"],
            x.id.as_str(),
            "the winner leads"
        );
        let cursor = board.body["next_cursor"].as_str().unwrap();
        let next = app
            .get(
                &format!("/api/v1/ladders/{LADDER}/leaderboard?limit=1&cursor={cursor}"),
                None,
            )
            .await;
        assert_eq!(next.body["items"][0]["rank"], 2);
        assert_eq!(next.body["items"][0]["player"]["id"], o.id.as_str());
        assert_eq!(next.body["next_cursor"], Value::Null);
        app.get("/api/v1/ladders/nope/leaderboard", None)
            .await
            .expect_problem(404, "not_found");
        app.get(
            &format!("/api/v1/ladders/{LADDER}/leaderboard?cursor=zz"),
            None,
        )
        .await
        .expect_problem(422, "validation_failed");
        // A cursor is only base64 text: one edited to carry a rank or a time
        // no page gives is bad input, not an overflow.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let text = String::from_utf8(b64.decode(cursor).unwrap()).unwrap();
        let parts: Vec<&str> = text.split('\n').collect();
        assert_eq!(parts.len(), 4, "{text}");
        let nan = f64::NAN.to_bits().to_string();
        let (max_rank, min_time) = (u32::MAX.to_string(), i64::MIN.to_string());
        for (i, value) in [(2, max_rank.as_str()), (3, min_time.as_str()), (0, nan.as_str())] {
            let mut edited = parts.clone();
            edited[i] = value;
            let forged = b64.encode(edited.join("\n"));
            let reply = app
                .get(
                    &format!("/api/v1/ladders/{LADDER}/leaderboard?cursor={forged}"),
                    None,
                )
                .await;
            reply.expect_problem(422, "validation_failed");
            assert_eq!(reply.body["errors"][0]["field"], "cursor", "part {i}");
        }
    }
}

#[actix_web::test]
async fn only_established_players_are_ranked() {
    let Some(app) = manual_app(Backend::Sqlite, |c| c.matchmaking.window_start = 5000.0).await
    else {
        return;
    };
    let players = [
        app.quick_player("est_a").await,
        app.quick_player("est_b").await,
        app.quick_player("prov").await,
    ];
    app.set_rating(&players[0], LADDER, 1600.0, 60.0).await;
    app.set_rating(&players[1], LADDER, 1590.0, 60.0).await;
    app.set_rating(&players[2], LADDER, 1580.0, 300.0).await;
    // One rated game each so they are listed.
    let (m1, x, _) = ranked_pair(&app, &players[0], &players[1]).await;
    app.post(
        &format!("/api/v1/matches/{m1}/resign"),
        &json!({}),
        Some(&x.token),
    )
    .await
    .expect(200);
    let other = app.quick_player("other").await;
    let (m2, x, _) = ranked_pair(&app, &players[2], &other).await;
    app.post(
        &format!("/api/v1/matches/{m2}/resign"),
        &json!({}),
        Some(&x.token),
    )
    .await
    .expect(200);
    let board = app
        .get(&format!("/api/v1/ladders/{LADDER}/leaderboard"), None)
        .await;
    let rows = board.body["items"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["player"]["username"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("est_")), "{names:?}");
    assert!(rows.iter().all(|r| r["provisional"] == false));
}

#[actix_web::test]
async fn two_instances_pairing_one_ladder_never_double_book_a_player() {
    let Some(mut config) = TestConfig::new(Backend::Postgres) else {
        return;
    };
    assert!(
        config.config.redis_url.is_some(),
        "set TEST_REDIS_URL with TEST_DATABASE_URL"
    );
    config.config.matchmaking.window_start = 10_000.0;
    config.config.matchmaking.round_every = Duration::from_millis(20);
    config.config.db_pool_size = 16;
    let app = TestApp::start(config).await;
    let (other, _ctx, _handle) = app.start_sibling().await;
    let mut players = Vec::new();
    for i in 0..200 {
        players.push(app.quick_player(&format!("mass{i:03}")).await);
    }
    // Queue everyone at once, half through each instance.
    let queued = futures_util::future::join_all(players.iter().enumerate().map(|(i, p)| {
        let base = if i % 2 == 0 {
            app.address.clone()
        } else {
            other.clone()
        };
        let client = app.client.clone();
        async move {
            let mut res = client
                .post(format!("{base}/api/v1/matchmaking/tickets"))
                .bearer_auth(&p.token)
                .send_json(&json!({"ladder": LADDER}))
                .await
                .expect("queue");
            assert_eq!(res.status().as_u16(), 201);
            let body: Value = res.json().await.expect("ticket");
            body["id"].as_str().unwrap().to_owned()
        }
    }))
    .await;
    let mut match_of: HashMap<String, String> = HashMap::new();
    for (p, t) in players.iter().zip(&queued) {
        match_of.insert(p.id.clone(), app.matched(p, t).await);
    }
    // Every player is in exactly one match, and every match has exactly two of them.
    let mut seats_of: HashMap<String, Vec<String>> = HashMap::new();
    for (player, m) in &match_of {
        seats_of.entry(m.clone()).or_default().push(player.clone());
    }
    assert_eq!(seats_of.len(), 100);
    for (m, ps) in &seats_of {
        assert_eq!(ps.len(), 2, "match {m}");
        let state = app.state(&players[0], m).await;
        let (x, o) = seats(&state);
        assert_eq!(
            HashSet::from([x, o]),
            ps.iter().cloned().collect::<HashSet<_>>()
        );
    }
    for p in &players {
        let active = app
            .get("/api/v1/me/matches?status=active", Some(&p.token))
            .await;
        assert_eq!(
            active.body["items"].as_array().unwrap().len(),
            1,
            "{} is in one match",
            p.username
        );
    }
}
