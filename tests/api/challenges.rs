//! Challenges: create, accept, decline, cancel, expiry, the pending cap, and
//! who may challenge whom; bot accounts and the preference to refuse them.

use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::support::{Backend, EventStream, Player, TestApp, TestConfig};

const WAIT: Duration = Duration::from_secs(10);

/// A server whose workers run only when the test says so.
async fn manual_app(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers = uttt::config::Workers::NONE;
    Some(TestApp::start(config).await)
}

/// The next event called `name` on `stream`, skipping others.
async fn next_named(stream: &mut EventStream, name: &str) -> Value {
    loop {
        let event = stream
            .next_event(WAIT)
            .await
            .unwrap_or_else(|| panic!("no `{name}` event"));
        if event.event == name {
            return serde_json::from_str(&event.data).unwrap();
        }
    }
}

async fn challenge(app: &TestApp, from: &Player, body: Value) -> crate::support::Reply {
    app.post("/api/v1/challenges", &body, Some(&from.token))
        .await
}

async fn act(app: &TestApp, who: &Player, id: &str, action: &str) -> crate::support::Reply {
    app.post(
        &format!("/api/v1/challenges/{id}/{action}"),
        &json!({}),
        Some(&who.token),
    )
    .await
}

async fn make_bot(app: &TestApp, who: &Player) {
    let reply = app
        .post("/api/v1/me/bot", &json!({}), Some(&who.token))
        .await;
    reply.expect(200);
    assert_eq!(reply.body["bot"], true);
}

both_backends! {
    async fn an_accepted_challenge_starts_the_match_for_both(app: TestApp) {
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let mut a_events = EventStream::open(&app, "/api/v1/me/events", &a.token, None).await;
        let mut b_events = EventStream::open(&app, "/api/v1/me/events", &b.token, None).await;

        let made = challenge(&app, &a, json!({"username": "BOB", "depth": 1,
            "time_control": {"kind": "clock", "initial_ms": 60000, "increment_ms": 0}, "seat": "x"})).await;
        made.expect(201);
        let id = made.body["id"].as_str().unwrap().to_owned();
        assert_eq!(made.body["status"], "pending");
        assert_eq!(made.body["rated"], false);
        assert_eq!(made.body["challenger"]["username"], "alice");
        assert_eq!(made.body["challenged"]["username"], "bob");
        assert_eq!(made.body["challenged"]["bot"], false);
        assert_eq!(made.body["depth"], 1);

        let seen = next_named(&mut b_events, "challenge").await;
        assert_eq!(seen["id"], id.as_str());
        let mine = app.get("/api/v1/me/challenges", Some(&b.token)).await;
        mine.expect(200);
        assert_eq!(mine.body["incoming"][0]["id"], id.as_str());
        assert_eq!(mine.body["outgoing"], json!([]));
        let theirs = app.get("/api/v1/me/challenges", Some(&a.token)).await;
        assert_eq!(theirs.body["outgoing"][0]["id"], id.as_str());

        // Only the challenged player accepts.
        act(&app, &a, &id, "accept").await.expect_problem(403, "forbidden");
        let outsider = app.quick_player("carol").await;
        act(&app, &outsider, &id, "accept").await.expect_problem(404, "not_found");

        let accepted = act(&app, &b, &id, "accept").await;
        accepted.expect(200);
        let match_id = accepted.body["match_id"].as_str().unwrap().to_owned();
        let told = next_named(&mut a_events, "challenge_accepted").await;
        assert_eq!(told["match_id"], match_id.as_str());
        let found = next_named(&mut b_events, "match_found").await;
        assert_eq!(found["match_id"], match_id.as_str());
        assert_eq!(found["seat"], "o");

        let state = app.state(&a, &match_id).await;
        assert_eq!(state["players"]["x"]["id"], a.id.as_str());
        assert_eq!(state["players"]["o"]["id"], b.id.as_str());
        assert_eq!(state["mode"], "casual");
        assert_eq!(state["rated"], false);
        assert_eq!(state["depth"], 1);
        assert_eq!(state["time_control"]["initial_ms"], 60000);

        let again = act(&app, &b, &id, "accept").await;
        again.expect_problem(409, "challenge_not_pending");
        assert_eq!(again.body["challenge_status"], "accepted");
        let shown = app.get(&format!("/api/v1/challenges/{id}"), Some(&a.token)).await;
        assert_eq!(shown.body["status"], "accepted");
        assert_eq!(shown.body["match_id"], match_id.as_str());
        assert_eq!(app.get("/api/v1/me/challenges", Some(&b.token)).await.body["incoming"], json!([]));
        app.assert_consistent(&match_id).await;
    }

    async fn a_challenge_on_a_ladder_is_rated_with_its_settings(app: TestApp) {
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        challenge(&app, &a, json!({"username": "bob", "ladder": "ultimate-10m", "depth": 3})).await
            .expect_problem(422, "validation_failed");
        challenge(&app, &a, json!({"username": "bob", "ladder": "nope"})).await
            .expect_problem(422, "validation_failed");
        let made = challenge(&app, &a, json!({"username": "bob", "ladder": "advanced-10m", "seat": "o"})).await;
        made.expect(201);
        assert_eq!(made.body["rated"], true);
        assert_eq!(made.body["depth"], 3);
        let id = made.body["id"].as_str().unwrap();
        let accepted = act(&app, &b, id, "accept").await;
        accepted.expect(200);
        let state = app.state(&b, accepted.body["match_id"].as_str().unwrap()).await;
        assert_eq!(state["mode"], "ranked");
        assert_eq!(state["ladder"], "advanced-10m");
        assert_eq!(state["rated"], true);
        assert_eq!(state["players"]["x"]["id"], b.id.as_str());
        assert_eq!(state["players"]["o"]["id"], a.id.as_str());

        // Both are now in a ranked match: a second rated challenge cannot start.
        let second = challenge(&app, &b, json!({"username": "alice", "ladder": "ultimate-10m"})).await;
        second.expect(201);
        act(&app, &a, second.body["id"].as_str().unwrap(), "accept").await
            .expect_problem(409, "in_active_match");
    }

    async fn a_declined_challenge_tells_the_challenger(app: TestApp) {
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let mut a_events = EventStream::open(&app, "/api/v1/me/events", &a.token, None).await;
        let made = challenge(&app, &a, json!({"username": "bob"})).await;
        made.expect(201);
        let id = made.body["id"].as_str().unwrap();
        act(&app, &a, id, "decline").await.expect_problem(403, "forbidden");
        let declined = app.post(&format!("/api/v1/challenges/{id}/decline"),
            &json!({"reason": "busy"}), Some(&b.token)).await;
        declined.expect(200);
        assert_eq!(declined.body["status"], "declined");
        let told = next_named(&mut a_events, "challenge_declined").await;
        assert_eq!(told["decline_reason"], "busy");
        act(&app, &b, id, "accept").await.expect_problem(409, "challenge_not_pending");
        act(&app, &a, id, "cancel").await.expect_problem(409, "challenge_not_pending");
    }

    async fn the_challenger_can_cancel(app: TestApp) {
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let mut b_events = EventStream::open(&app, "/api/v1/me/events", &b.token, None).await;
        let made = challenge(&app, &a, json!({"username": "bob"})).await;
        let id = made.body["id"].as_str().unwrap();
        next_named(&mut b_events, "challenge").await;
        act(&app, &b, id, "cancel").await.expect_problem(403, "forbidden");
        let cancelled = act(&app, &a, id, "cancel").await;
        cancelled.expect(200);
        assert_eq!(cancelled.body["status"], "cancelled");
        let told = next_named(&mut b_events, "challenge_cancelled").await;
        assert_eq!(told["id"], id);
        let late = act(&app, &b, id, "accept").await;
        late.expect_problem(409, "challenge_not_pending");
        assert_eq!(late.body["challenge_status"], "cancelled");
    }

    async fn who_may_be_challenged(app: TestApp) {
        let a = app.quick_player("alice").await;
        challenge(&app, &a, json!({"username": "alice"})).await
            .expect_problem(422, "validation_failed");
        challenge(&app, &a, json!({"username": "nobody_here"})).await
            .expect_problem(404, "not_found");
        challenge(&app, &a, json!({"username": "alice", "seat": "left"})).await
            .expect_problem(422, "validation_failed");

        // A human may refuse challenges from bots; bots may still challenge others.
        let shy = app.quick_player("shy").await;
        let prefs = app.post("/api/v1/me/preferences", &json!({"accept_bot_challenges": false}), Some(&shy.token)).await;
        prefs.expect(200);
        assert_eq!(prefs.body["accept_bot_challenges"], false);
        assert_eq!(app.get("/api/v1/me/preferences", Some(&shy.token)).await.body["accept_bot_challenges"], false);
        let bot = app.quick_player("robot").await;
        make_bot(&app, &bot).await;
        challenge(&app, &bot, json!({"username": "shy"})).await.expect_problem(403, "forbidden");
        let made = challenge(&app, &bot, json!({"username": "alice"})).await;
        made.expect(201);
        assert_eq!(made.body["challenger"]["bot"], true);
        // Humans still challenge the shy player, and the shy player challenges bots.
        challenge(&app, &a, json!({"username": "shy"})).await.expect(201);
        challenge(&app, &shy, json!({"username": "robot"})).await.expect(201);
        // A bot plays rated challenges only on ladders open to bots.
        challenge(&app, &a, json!({"username": "robot", "ladder": "ultimate-10m"})).await
            .expect_problem(403, "forbidden");
    }
}

async fn expiry(app: TestApp) {
    let a = app.quick_player("alice").await;
    let b = app.quick_player("bob").await;
    let mut a_events = EventStream::open(&app, "/api/v1/me/events", &a.token, None).await;
    let mut b_events = EventStream::open(&app, "/api/v1/me/events", &b.token, None).await;
    let first = challenge(&app, &a, json!({"username": "bob"})).await;
    let first = first.body["id"].as_str().unwrap().to_owned();
    let second = challenge(&app, &a, json!({"username": "bob"})).await;
    let second = second.body["id"].as_str().unwrap().to_owned();

    app.time.advance(59_000);
    assert_eq!(uttt::worker::challenges::tick(&app.ctx).await.unwrap(), 0);
    app.time.advance(1_000);
    // Past its time a challenge reads as expired even before the worker runs.
    let late = act(&app, &b, &second, "accept").await;
    late.expect_problem(409, "challenge_not_pending");
    assert_eq!(late.body["challenge_status"], "expired");
    // The worker marks both expired and tells both players.
    assert_eq!(uttt::worker::challenges::tick(&app.ctx).await.unwrap(), 2);
    let mut told = vec![
        next_named(&mut a_events, "challenge_expired").await["id"]
            .as_str()
            .unwrap()
            .to_owned(),
        next_named(&mut a_events, "challenge_expired").await["id"]
            .as_str()
            .unwrap()
            .to_owned(),
    ];
    told.sort();
    let mut made = vec![first.clone(), second.clone()];
    made.sort();
    assert_eq!(told, made);
    next_named(&mut b_events, "challenge_expired").await;
    let shown = app
        .get(&format!("/api/v1/challenges/{first}"), Some(&b.token))
        .await;
    assert_eq!(shown.body["status"], "expired");
    assert_eq!(
        app.get("/api/v1/me/challenges", Some(&b.token)).await.body["incoming"],
        json!([])
    );
    assert_eq!(uttt::worker::challenges::tick(&app.ctx).await.unwrap(), 0);
}

async fn pending_cap(app: TestApp) {
    let a = app.quick_player("alice").await;
    let b = app.quick_player("bob").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        let made = challenge(&app, &a, json!({"username": "bob"})).await;
        made.expect(201);
        ids.push(made.body["id"].as_str().unwrap().to_owned());
        app.time.advance(1_000);
    }
    let refused = challenge(&app, &a, json!({"username": "bob"})).await;
    refused.expect_problem(429, "rate_limited");
    // The oldest expires 60 s after it was made, 55 s from now.
    assert_eq!(refused.header("retry-after"), Some("56"));
    // Another challenger is not held up.
    challenge(&app, &b, json!({"username": "alice"}))
        .await
        .expect(201);
    // An answered challenge frees a place.
    act(&app, &b, &ids[0], "decline").await.expect(200);
    challenge(&app, &a, json!({"username": "bob"}))
        .await
        .expect(201);
    challenge(&app, &a, json!({"username": "bob"}))
        .await
        .expect_problem(429, "rate_limited");
    // So does an expired one.
    app.time.advance(56_000);
    challenge(&app, &a, json!({"username": "bob"}))
        .await
        .expect(201);
}

mod expiry_and_cap {
    use super::*;

    #[actix_web::test]
    async fn expiry_sqlite() {
        expiry(manual_app(Backend::Sqlite).await.unwrap()).await;
    }

    #[actix_web::test]
    async fn expiry_postgres() {
        if let Some(app) = manual_app(Backend::Postgres).await {
            expiry(app).await;
        }
    }

    #[actix_web::test]
    async fn cap_sqlite() {
        pending_cap(manual_app(Backend::Sqlite).await.unwrap()).await;
    }

    #[actix_web::test]
    async fn cap_postgres() {
        if let Some(app) = manual_app(Backend::Postgres).await {
            pending_cap(app).await;
        }
    }
}

both_backends! {
    async fn an_account_with_rated_games_cannot_become_a_bot(app: TestApp) {
        let human = app.quick_player("veteran").await;
        let (pid, now) = (human.id.clone(), chrono::Utc::now().timestamp_millis());
        app.ctx.db.run(move |conn| -> uttt::service::Result<()> {
            let mut row = uttt::service::ladders::ensure(conn, &pid, "ultimate-10m", now)?;
            row.games = 1;
            row.wins = 1;
            uttt::store::ratings::save(conn, &row)?;
            Ok(())
        }).await.unwrap();
        app.post("/api/v1/me/bot", &json!({}), Some(&human.token)).await
            .expect_problem(409, "has_rated_games");
        let me = app.get("/api/v1/me", Some(&human.token)).await;
        assert_eq!(me.body["bot"], false);

        let fresh = app.quick_player("newbot").await;
        make_bot(&app, &fresh).await;
        // For good, and asking again answers the same.
        make_bot(&app, &fresh).await;
        assert_eq!(app.get("/api/v1/me", Some(&fresh.token)).await.body["bot"], true);
    }
}

both_backends! {
    async fn an_account_turned_bot_plays_no_rated_game_on_a_ladder_closed_to_bots(app: TestApp) {
        let a = app.quick_player("turncoat").await;
        let b = app.quick_player("human").await;
        let made = challenge(&app, &a, json!({"username": "human", "depth": 2,
            "time_control": {"kind": "clock", "initial_ms": 600000, "increment_ms": 0},
            "ladder": "ultimate-10m"})).await;
        made.expect(201);
        let challenge_id = made.body["id"].as_str().unwrap().to_owned();

        // A queued ticket could be paired before anyone looks at the flag
        // again: turning into a bot waits until it is cancelled.
        let ticket = app.post("/api/v1/matchmaking/tickets", &json!({"ladder": "ultimate-10m"}), Some(&a.token)).await;
        ticket.expect(201);
        let ticket_id = ticket.body["id"].as_str().unwrap().to_owned();
        let refused = app.post("/api/v1/me/bot", &json!({}), Some(&a.token)).await;
        refused.expect_problem(409, "already_queued");
        assert_eq!(refused.body["ticket_id"], ticket_id.as_str());
        assert_eq!(app.get("/api/v1/me", Some(&a.token)).await.body["bot"], false);
        app.call("DELETE", &format!("/api/v1/matchmaking/tickets/{ticket_id}"), None, Some(&a.token)).await.expect(204);
        make_bot(&app, &a).await;

        // The rated challenge made as a human cannot start a rated game now.
        act(&app, &b, &challenge_id, "accept").await.expect_problem(403, "forbidden");
        let active = app.get("/api/v1/me/matches?status=active", Some(&b.token)).await;
        active.expect(200);
        assert_eq!(active.body["items"], json!([]), "no match was made");
        let mine = app.get("/api/v1/me/challenges", Some(&b.token)).await;
        assert_eq!(mine.body["incoming"][0]["id"], challenge_id.as_str(), "still pending, to decline");
        act(&app, &b, &challenge_id, "decline").await.expect(200);

        // The same when the challenged player is the one who became a bot.
        let c = app.quick_player("carol").await;
        let made = challenge(&app, &c, json!({"username": "human", "depth": 2,
            "time_control": {"kind": "clock", "initial_ms": 600000, "increment_ms": 0},
            "ladder": "ultimate-10m"})).await;
        made.expect(201);
        make_bot(&app, &b).await;
        let id = made.body["id"].as_str().unwrap();
        act(&app, &b, id, "accept").await.expect_problem(403, "forbidden");
    }
}

/// A server with a rated ladder open to bots (`bots-1m`, depth 1) and manual workers.
async fn bots_app(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers = uttt::config::Workers::NONE;
    config.config.matchmaking.window_start = 5000.0;
    config.config.ladders.push(uttt::config::LadderConfig {
        id: "bots-1m".into(),
        name: "Bots welcome".into(),
        depth: 1,
        time_control: uttt::clock::TimeControl::clock(60_000, 0).unwrap(),
        rated: true,
        bots: true,
    });
    Some(TestApp::start(config).await)
}

async fn played(app: &TestApp, who: &Player, ladder: &str, games: i32) {
    let (pid, lid, now) = (
        who.id.clone(),
        ladder.to_owned(),
        chrono::Utc::now().timestamp_millis(),
    );
    app.ctx
        .db
        .run(move |conn| -> uttt::service::Result<()> {
            let mut row = uttt::service::ladders::ensure(conn, &pid, &lid, now)?;
            row.games = games;
            row.wins = games;
            // Established, so the leaderboard (established players only) lists
            // them: a deviation of 60 takes about a year to grow back to 110.
            row.deviation = 60.0;
            row.established = true;
            row.rated_at = Some(now);
            row.established_until = Some(now + 30 * 86_400_000);
            uttt::store::ratings::save(conn, &row)?;
            Ok(())
        })
        .await
        .unwrap();
}

async fn bots_on_ladders(app: TestApp) {
    let bot = app.quick_player("robot").await;
    let human = app.quick_player("human").await;
    make_bot(&app, &bot).await;

    // A bot on a ladder closed to bots is refused; one open to bots takes it.
    app.post(
        "/api/v1/matchmaking/tickets",
        &json!({"ladder": "ultimate-10m"}),
        Some(&bot.token),
    )
    .await
    .expect_problem(403, "forbidden");
    let ladders = app.get("/api/v1/ladders", None).await;
    let open: Vec<&str> = ladders
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["bots"] == true)
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["bots-1m"]);
    let match_id = app.ranked_match(&bot, &human, "bots-1m").await;
    let state = app.state(&human, &match_id).await;
    assert_eq!(state["rated"], true);
    let seats = [&state["players"]["x"], &state["players"]["o"]];
    for seat in seats {
        let is_bot = seat["id"] == bot.id.as_str();
        assert_eq!(seat["bot"], is_bot, "{seat}");
    }

    // Profiles, /me and leaderboards say who is a bot; leaderboards filter.
    assert_eq!(
        app.get("/api/v1/players/robot", None).await.body["bot"],
        true
    );
    assert_eq!(
        app.get("/api/v1/players/human", None).await.body["bot"],
        false
    );
    played(&app, &bot, "ultimate-10m", 3).await;
    played(&app, &human, "ultimate-10m", 2).await;
    let all = app
        .get("/api/v1/ladders/ultimate-10m/leaderboard", None)
        .await;
    all.expect(200);
    let names = |reply: &crate::support::Reply| -> Vec<(String, bool)> {
        reply.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["player"]["username"].as_str().unwrap().to_owned(),
                    i["player"]["bot"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    let mut everyone = names(&all);
    everyone.sort();
    assert_eq!(
        everyone,
        [("human".to_owned(), false), ("robot".to_owned(), true)]
    );
    let bots = app
        .get(
            "/api/v1/ladders/ultimate-10m/leaderboard?players=bots",
            None,
        )
        .await;
    assert_eq!(names(&bots), [("robot".to_owned(), true)]);
    assert_eq!(bots.body["items"][0]["rank"], 1);
    let humans = app
        .get(
            "/api/v1/ladders/ultimate-10m/leaderboard?players=humans",
            None,
        )
        .await;
    assert_eq!(names(&humans), [("human".to_owned(), false)]);
    assert_eq!(humans.body["items"][0]["rank"], 1);
    app.get(
        "/api/v1/ladders/ultimate-10m/leaderboard?players=robots",
        None,
    )
    .await
    .expect_problem(422, "validation_failed");
}

mod bots {
    use super::*;

    #[actix_web::test]
    async fn bots_on_ladders_sqlite() {
        bots_on_ladders(bots_app(Backend::Sqlite).await.unwrap()).await;
    }

    #[actix_web::test]
    async fn bots_on_ladders_postgres() {
        if let Some(app) = bots_app(Backend::Postgres).await {
            bots_on_ladders(app).await;
        }
    }
}
