//! Drop-outs: presence, the CPU substitute, rejoining.

use crate::both_backends;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Backend, EventStream, Player, TestApp, TestConfig, legal_of};

const GRACE_MS: i64 = 1_000;

/// A server with a 1 s grace period whose workers run only when the test ticks them.
async fn app(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.drop_grace = Duration::from_millis(GRACE_MS as u64);
    config.config.workers = uttt::config::Workers::NONE;
    config.config.matchmaking.window_start = 5000.0;
    config.config.ladders.push(uttt::config::LadderConfig {
        id: "tiny".into(),
        name: "Tic-tac-toe".into(),
        depth: 1,
        time_control: uttt::clock::TimeControl::clock(60_000, 0).unwrap(),
        rated: true,
        bots: false,
    });
    Some(TestApp::start(config).await)
}

async fn presence_tick(app: &TestApp) -> usize {
    uttt::worker::presence::tick(&app.ctx)
        .await
        .expect("presence tick")
}

async fn cpu_tick(app: &TestApp) -> usize {
    uttt::worker::cpu::tick(&app.ctx).await.expect("cpu tick")
}

async fn heartbeat(app: &TestApp, p: &Player, id: &str) {
    app.post(
        &format!("/api/v1/matches/{id}/heartbeat"),
        &json!({}),
        Some(&p.token),
    )
    .await
    .expect(204);
}

async fn moves_of(app: &TestApp, p: &Player, id: &str) -> Vec<Value> {
    app.get(&format!("/api/v1/matches/{id}/moves"), Some(&p.token))
        .await
        .body
        .as_array()
        .unwrap()
        .clone()
}

both_backends! {
    with app;
    async fn a_dropped_player_is_covered_by_the_cpu_until_they_return(app: TestApp) {
        let (x, o) = (app.register("dropx").await, app.register("dropo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        heartbeat(&app, &o, &id).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        let mut stream = EventStream::open(
            &app,
            &format!("/api/v1/matches/{id}/events"),
            &x.token,
            None,
        )
        .await;
        stream.state_where(Duration::from_secs(5), |_| true).await;

        // O is present: nothing happens.
        assert_eq!(presence_tick(&app).await, 0);
        // O goes away past the grace period (X stays).
        app.time.advance(GRACE_MS + 10);
        heartbeat(&app, &x, &id).await;
        assert_eq!(
            presence_tick(&app).await,
            1,
            "O's seat is handed to the CPU"
        );
        assert_eq!(presence_tick(&app).await, 0, "once");
        let taken = stream
            .state_where(Duration::from_secs(5), |s| {
                s["players"]["o"]["controller"] == "cpu"
            })
            .await;
        assert_eq!(taken["players"]["o"]["connected"], false);
        assert_eq!(taken["players"]["x"]["connected"], true);
        assert_eq!(taken["ply"], 1);

        // The CPU moves for O, on O's clock, through the normal move path.
        app.time.advance(2_000);
        assert_eq!(cpu_tick(&app).await, 1);
        let moved = stream
            .state_where(Duration::from_secs(5), |s| s["ply"] == 2)
            .await;
        assert_eq!(moved["turn"], "x");
        assert_eq!(
            moved["players"]["o"]["controller"], "cpu",
            "until O comes back"
        );
        assert_eq!(moved["clocks"]["o_ms"], 600_000 - GRACE_MS - 10 - 2_000);
        let moves = moves_of(&app, &x, &id).await;
        assert_eq!(moves[1]["seat"], "o");
        let address = moves[1]["address"].as_array().unwrap();
        assert_eq!(address[0], 4, "the substitute obeys the send rule");

        // X moves; O's turn again is played by the CPU while O is away…
        let cell = format!("{}.0", address[1]);
        app.play(&x, &id, 2, &cell).await.expect(200);
        heartbeat(&app, &x, &id).await;
        // (The substitute keeps a human pace: its move comes a second into its turn.)
        app.time
            .advance(uttt::service::matches::dropout::SUBSTITUTE_PACE_MS);
        assert_eq!(cpu_tick(&app).await, 1);
        assert_eq!(app.state(&x, &id).await["ply"], 4);

        // …and O's first request gives the seat back at once, before the next CPU move.
        // (Any legal square: the CPU's replies are seeded by the match id, so
        // a fixed square could already be taken.)
        let next = legal_of(&app.state(&x, &id).await)[0].clone();
        app.play(&x, &id, 4, &next).await.expect(200);
        let back = app.state(&o, &id).await;
        assert_eq!(back["players"]["o"]["controller"], "human");
        assert_eq!(back["players"]["o"]["connected"], true);
        assert_eq!(cpu_tick(&app).await, 0, "no CPU move once O is back");
        assert_eq!(app.state(&o, &id).await["ply"], 5);
        let listed = app
            .get("/api/v1/me/matches?status=active", Some(&o.token))
            .await;
        assert_eq!(
            listed.body["items"][0]["id"],
            id.as_str(),
            "the match to rejoin is listed"
        );
        app.assert_consistent(&id).await;
    }
}

both_backends! {
    with app;
    async fn a_returning_players_refused_or_repeated_move_gives_the_seat_back(app: TestApp) {
        let (x, o) = (app.register("backx").await, app.register("backo").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        let o_move = legal_of(&app.state(&x, &id).await)[0].clone();
        app.play(&o, &id, 1, &o_move).await.expect(200);
        let s = app.state(&x, &id).await;
        app.play(&x, &id, 2, &legal_of(&s)[0]).await.expect(200);
        // O drops on their turn: the CPU takes the seat (X stays).
        let drop_o = || async {
            app.time.advance(GRACE_MS + 10);
            heartbeat(&app, &x, &id).await;
            assert_eq!(presence_tick(&app).await, 1);
            assert_eq!(app.state(&x, &id).await["players"]["o"]["controller"], "cpu");
        };
        drop_o().await;

        // Back, O's client sends a move the rules refuse (a stale ply): the
        // request is still O's, on the match, so the seat is O's again.
        let other = legal_of(&app.state(&x, &id).await)[1].clone();
        app.play(&o, &id, 1, &other).await.expect_problem(409, "stale_ply");
        let s = app.state(&x, &id).await;
        assert_eq!(s["players"]["o"]["controller"], "human", "{s}");
        assert_eq!(cpu_tick(&app).await, 0, "no CPU move once O is back");

        // Gone again; back with a resend of the move already accepted: the
        // answer shows the seat given back, at the current version.
        drop_o().await;
        let again = app.play(&o, &id, 1, &o_move).await;
        again.expect(200);
        assert_eq!(again.body["players"]["o"]["controller"], "human", "{}", again.text);
        let now = app.state(&x, &id).await;
        assert_eq!(again.body["version"], now["version"]);
        assert_eq!(now["players"]["o"]["controller"], "human");
        app.assert_consistent(&id).await;
    }

    async fn a_return_racing_a_cpu_move_gives_exactly_one_move_for_the_ply(app: TestApp) {
        let (x, o) = (app.register("racex").await, app.register("raceo").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        for round in 0..6 {
            // O drops and the CPU takes the seat…
            app.time.advance(GRACE_MS + 10);
            heartbeat(&app, &x, &id).await;
            assert_eq!(presence_tick(&app).await, 1, "round {round}");
            let ply = app.state(&x, &id).await["ply"].as_u64().unwrap();
            // …then O's return races the CPU's move.
            let path = format!("/api/v1/matches/{id}");
            let (cpu, back) = tokio::join!(cpu_tick(&app), app.get(&path, Some(&o.token)));
            back.expect(200);
            let now = app.state(&o, &id).await;
            assert_eq!(now["players"]["o"]["controller"], "human");
            let after = now["ply"].as_u64().unwrap();
            assert_eq!(
                after,
                ply + cpu as u64,
                "exactly one move for that ply, or none"
            );
            if after == ply {
                // O plays the ply themself.
                app.play(&o, &id, ply, &legal_of(&now)[0]).await.expect(200);
            }
            let s = app.state(&x, &id).await;
            if s["status"] != "active" {
                break;
            }
            app.play(&x, &id, s["ply"].as_u64().unwrap(), &legal_of(&s)[0])
                .await
                .expect(200);
        }
        app.assert_consistent(&id).await;
    }
}

both_backends! {
    with app;
    async fn a_cpu_move_computed_before_the_return_is_discarded(app: TestApp) {
        let (x, o) = (app.register("compx").await, app.register("compo").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        app.time.advance(GRACE_MS + 10);
        assert_eq!(presence_tick(&app).await, 1);
        // O returns while a CPU move for ply 1 has been computed but not committed.
        app.state(&o, &id).await;
        let late = uttt::service::matches::play_cpu_move(
            &app.ctx,
            id.clone(),
            uttt::rules::Seat::O,
            1,
            uttt::rules::Square::from_address(
                uttt::rules::Depth::new(2).unwrap(),
                &"4.0".parse().unwrap(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
        assert!(late.is_none(), "the CPU's move is discarded");
        let s = app.state(&o, &id).await;
        assert_eq!(s["ply"], 1);
        assert_eq!(s["turn"], "o");
        app.play(&o, &id, 1, "4.8").await.expect(200);
        app.assert_consistent(&id).await;
    }
}

/// Drives a match in which nobody is present until it ends.
async fn play_out_unattended(app: &TestApp, viewer: &Player, id: &str) -> Value {
    for _ in 0..200 {
        app.time.advance(GRACE_MS + 10);
        presence_tick(app).await;
        cpu_tick(app).await;
        let finished = app.match_row(id).await;
        if finished.status.as_str() == "finished" {
            // Reading as a seated player would count as a return; look as an outsider.
            return app
                .get(&format!("/api/v1/matches/{id}"), Some(&viewer.token))
                .await
                .body;
        }
    }
    panic!("the unattended match did not finish");
}

both_backends! {
    with app;
    async fn when_both_players_are_gone_the_cpu_finishes_the_ranked_match_and_it_counts(app: TestApp) {
        let (a, b, watcher) = (
            app.register("gonea").await,
            app.register("goneb").await,
            app.register("gonew").await,
        );
        let id = app.ranked_match(&a, &b, "tiny").await;
        let end = play_out_unattended(&app, &watcher, &id).await;
        assert_eq!(end["status"], "finished");
        assert!(
            ["three_in_a_row", "draw"].contains(&end["result"]["reason"].as_str().unwrap()),
            "{end}"
        );
        assert_eq!(end["players"]["x"]["controller"], "cpu");
        assert_eq!(end["players"]["o"]["controller"], "cpu");
        assert!(
            end["result"]["rating_changes"]["x"]["after"].is_number(),
            "the result counts for the seated players"
        );
        for p in [&a, &b] {
            let row = app.rating_row(p, "tiny").await;
            assert_eq!(row.games, 1);
        }
        let moves = moves_of(&app, &watcher, &id).await;
        assert!(moves.len() >= 5);
        app.assert_consistent(&id).await;
    }
}

both_backends! {
    with app;
    async fn a_connected_player_who_lets_the_clock_run_out_loses_on_time(app: TestApp) {
        let (x, o) = (app.register("connx").await, app.register("conno").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 10000}))
            .await;
        // X stays connected but does not move: X loses on time, no substitute.
        for _ in 0..6 {
            heartbeat(&app, &x, &id).await;
            heartbeat(&app, &o, &id).await;
            assert_eq!(presence_tick(&app).await, 0);
            app.time.advance(1_900);
            heartbeat(&app, &x, &id).await;
        }
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 1);
        let s = app.state(&o, &id).await;
        assert_eq!(s["result"]["reason"], "timeout");
        assert_eq!(s["result"]["winner"], "o");
        assert_eq!(s["players"]["x"]["controller"], "human");
    }
}

both_backends! {
    with app;
    async fn presence_changes_are_announced(app: TestApp) {
        let (x, o) = (app.register("presx").await, app.register("preso").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        // O, who joined (and so started the match), has not been seen since,
        // past the grace.
        app.time.advance(GRACE_MS + 10);
        let mut stream = EventStream::open(
            &app,
            &format!("/api/v1/matches/{id}/events"),
            &x.token,
            None,
        )
        .await;
        let first = stream.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!(
            first["players"]["x"]["connected"], true,
            "the stream itself counts"
        );
        assert_eq!(
            first["players"]["o"]["connected"], false,
            "O has not been seen since the join"
        );
        // O arrives: everyone is told, with a new version.
        heartbeat(&app, &o, &id).await;
        let arrived = stream
            .state_where(Duration::from_secs(5), |s| {
                s["players"]["o"]["connected"] == true
            })
            .await;
        assert!(arrived["version"].as_i64() > first["version"].as_i64());
        // O goes away while X is to move: no takeover, but the flag flips when the worker notices.
        app.time.advance(GRACE_MS + 10);
        heartbeat(&app, &x, &id).await;
        presence_tick(&app).await;
        let gone = stream
            .state_where(Duration::from_secs(5), |s| {
                s["players"]["o"]["connected"] == false
            })
            .await;
        assert_eq!(gone["players"]["o"]["controller"], "human");
        assert_eq!(gone["ply"], 0);
        // Nothing new to tell: no new state.
        let version = gone["version"].as_i64().unwrap();
        presence_tick(&app).await;
        let s = app.state(&x, &id).await;
        assert_eq!(s["version"].as_i64().unwrap(), version);
    }
}

#[actix_web::test]
async fn a_cpu_seat_shows_its_level() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let p = app.register("lvlshow").await;
    let created = app
        .post(
            "/api/v1/matches",
            &json!({"opponent": "cpu", "depth": 1, "cpu_level": 4}),
            Some(&p.token),
        )
        .await;
    assert_eq!(created.body["players"]["o"]["cpu_level"], 4);
    assert_eq!(created.body["players"]["x"]["cpu_level"], Value::Null);
}

/// The version and `connected` flags of a match as `p` reads it.
async fn shown(app: &TestApp, p: &Player, id: &str) -> (i64, Value, Value) {
    let s = app.state(p, id).await;
    (
        s["version"].as_i64().unwrap(),
        s["players"]["x"]["connected"].clone(),
        s["players"]["o"]["connected"].clone(),
    )
}

both_backends! {
    with app;
    async fn the_player_who_starts_a_match_is_present_in_its_first_state(app: TestApp) {
        let (host, guest) = (app.register("starth").await, app.register("startg").await);
        let room = app
            .post("/api/v1/rooms", &json!({"depth": 1, "time_control": {"kind": "none"}}), Some(&host.token))
            .await;
        room.expect(201);
        let code = room.body["code"].as_str().unwrap().to_owned();
        let joined = app
            .post(&format!("/api/v1/rooms/{code}/join"), &json!({}), Some(&guest.token))
            .await;
        joined.expect(200);
        let first = joined.body["match_id"].as_str().unwrap().to_owned();
        // The guest's join started the match: the guest (O) is here from its
        // first state, the host (X) not until they come. The guest's
        // requests, and the presence worker, have nothing new to tell.
        assert_eq!(shown(&app, &guest, &first).await, (1, json!(false), json!(true)));
        presence_tick(&app).await;
        assert_eq!(shown(&app, &guest, &first).await, (1, json!(false), json!(true)));
        // The host arrives: a new state says so.
        assert_eq!(shown(&app, &host, &first).await, (2, json!(true), json!(true)));

        // The host asks for the rematch (seats swap: the host is O).
        app.post(&format!("/api/v1/matches/{first}/resign"), &json!({}), Some(&host.token))
            .await
            .expect(200);
        let again = app
            .post(&format!("/api/v1/rooms/{code}/rematch"), &json!({"after_match_id": first}), Some(&host.token))
            .await;
        again.expect(200);
        let second = again.body["match_id"].as_str().unwrap().to_owned();
        assert_ne!(second, first);
        assert_eq!(shown(&app, &host, &second).await, (1, json!(false), json!(true)));
        assert_eq!(shown(&app, &guest, &second).await, (2, json!(true), json!(true)));

        // A practice match: its player is here, and the CPU always is.
        let practice = app
            .post("/api/v1/matches", &json!({"opponent": "cpu", "depth": 1, "cpu_level": 1}), Some(&host.token))
            .await;
        practice.expect(201);
        assert_eq!(practice.body["version"], 1);
        let id = practice.body["id"].as_str().unwrap().to_owned();
        assert_eq!(shown(&app, &host, &id).await, (1, json!(true), json!(true)));

        // An accepted challenge: the accepting player (O) is here.
        let made = app
            .post("/api/v1/challenges", &json!({"username": "startg", "depth": 1, "seat": "x"}), Some(&host.token))
            .await;
        made.expect(201);
        let challenge = made.body["id"].as_str().unwrap().to_owned();
        let accepted = app
            .post(&format!("/api/v1/challenges/{challenge}/accept"), &json!({}), Some(&guest.token))
            .await;
        accepted.expect(200);
        let id = accepted.body["match_id"].as_str().unwrap().to_owned();
        assert_eq!(shown(&app, &guest, &id).await, (1, json!(false), json!(true)));
    }

    async fn a_players_first_move_announces_them_in_its_own_state(app: TestApp) {
        let (host, guest) = (app.register("firstmh").await, app.register("firstmg").await);
        // The guest's join starts the match: X, the host, is not here yet.
        let id = app.room_match(&host, &guest, 1, json!({"kind": "none"})).await;
        let mut stream = EventStream::open(
            &app,
            &format!("/api/v1/matches/{id}/events"),
            &guest.token,
            None,
        )
        .await;
        let first = stream.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!(first["players"]["x"]["connected"], false);
        // X's first request on the match is a move: its state is the one
        // that says X is here; no second state follows to announce them.
        let moved = app.play(&host, &id, 0, "4").await;
        moved.expect(200);
        assert_eq!(moved.body["players"]["x"]["connected"], true);
        assert_eq!(moved.body["players"]["o"]["connected"], true, "the guest's stream is open");
        let version = moved.body["version"].as_i64().unwrap();
        assert_eq!(version, first["version"].as_i64().unwrap() + 1);
        let seen = stream.state_where(Duration::from_secs(5), |s| s["ply"] == 1).await;
        assert_eq!(seen, moved.body, "the stream has the move's answer as it was published");
        assert!(stream.next_event(Duration::from_millis(300)).await.is_none());
        presence_tick(&app).await;
        assert_eq!(shown(&app, &guest, &id).await, (version, json!(true), json!(true)));
    }
}

both_backends! {
    with app;
    async fn a_start_whose_other_player_came_first_is_announced_again(app: TestApp) {
        let (host, guest) = (app.register("raceh").await, app.register("raceg").await);
        let id = app.room_match(&host, &guest, 1, json!({"kind": "none"})).await;
        // As if a request of the host's (X) had come between the match's
        // commit and the guest's presence at its start, and a state showing
        // the host here and the guest absent had gone out.
        app.ctx
            .broker
            .seen(
                &uttt::service::matches::presence::presence_key(&id, uttt::rules::Seat::X),
                uttt::time::TimeSource::now_ms(&*app.time),
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        app.ctx
            .broker
            .mark(&format!("presence:{id}:shown"), "10", Duration::from_secs(60))
            .await
            .unwrap();
        let mid = id.clone();
        let row = app
            .ctx
            .db
            .run(move |conn| uttt::store::matches::get(conn, &mid))
            .await
            .unwrap()
            .unwrap();
        uttt::service::matches::present_at_start(&app.ctx, &row, &guest.id).await;
        // A new state tells everyone the guest is here.
        assert_eq!(shown(&app, &guest, &id).await, (2, json!(true), json!(true)));
    }
}

/// Starts a one-round Swiss of `a` and `b`, 30 s a turn, directed by
/// `dir`; answers its game: match id, X, O.
async fn swiss_game<'a>(
    app: &TestApp,
    dir: &Player,
    a: &'a Player,
    b: &'a Player,
) -> (String, &'a Player, &'a Player) {
    let made = app
        .post(
            "/api/v1/tournaments",
            &json!({"name": "Club night", "kind": "swiss", "depth": 1, "rounds": 1,
            "time_control": {"kind": "per_turn", "turn_ms": 30000}, "round_pause_ms": 0}),
            Some(&dir.token),
        )
        .await;
    made.expect(201);
    let tid = made.body["id"].as_str().unwrap().to_owned();
    for p in [a, b] {
        app.post(
            &format!("/api/v1/tournaments/{tid}/join"),
            &json!({}),
            Some(&p.token),
        )
        .await
        .expect(200);
    }
    app.post(
        &format!("/api/v1/tournaments/{tid}/start"),
        &json!({}),
        Some(&dir.token),
    )
    .await
    .expect(200);
    let round = app
        .get(
            &format!("/api/v1/tournaments/{tid}/rounds/1"),
            Some(&dir.token),
        )
        .await;
    round.expect(200);
    let board = &round.body["pairings"][0];
    let x = if board["x"]["id"] == a.id.as_str() {
        a
    } else {
        b
    };
    let o = if x.id == a.id { b } else { a };
    (board["match_id"].as_str().unwrap().to_owned(), x, o)
}

both_backends! {
    with app;
    async fn a_tournament_no_show_loses_on_time_and_is_not_covered_by_the_cpu(app: TestApp) {
        let dir = app.register("tdir").await;
        let (a, b) = (app.register("showa").await, app.register("showb").await);
        let (id, x, o) = swiss_game(&app, &dir, &a, &b).await;
        // O is here; X never opens the game. Past any grace, X's seat stays
        // X's, and X's turn runs out.
        for _ in 0..14 {
            heartbeat(&app, o, &id).await;
            presence_tick(&app).await;
            app.time.advance(2_000);
        }
        presence_tick(&app).await;
        let waiting = app.state(o, &id).await;
        assert_eq!(waiting["status"], "active", "{waiting}");
        assert_eq!(waiting["players"]["x"]["controller"], "human", "{waiting}");
        assert_eq!(cpu_tick(&app).await, 0, "the CPU plays for nobody");
        app.time.advance(3_000);
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 1);
        let s = app.state(o, &id).await;
        assert_eq!(s["result"]["winner"], "o", "{s}");
        assert_eq!(s["result"]["reason"], "timeout");
        assert_eq!(s["players"]["x"]["controller"], "human");
        assert_eq!(s["players"]["x"]["id"], x.id.as_str());
    }

    async fn a_tournament_player_who_came_and_went_is_covered_by_the_cpu(app: TestApp) {
        let dir = app.register("tdir").await;
        let (a, b) = (app.register("gonea").await, app.register("goneb").await);
        let (id, x, o) = swiss_game(&app, &dir, &a, &b).await;
        // X opens the game, then drops out: a dropped player, not a no-show.
        app.state(x, &id).await;
        for _ in 0..3 {
            heartbeat(&app, o, &id).await;
            app.time.advance(2_000);
        }
        presence_tick(&app).await;
        let s = app.state(o, &id).await;
        assert_eq!(s["players"]["x"]["controller"], "cpu", "{s}");
        assert_eq!(s["status"], "active");
    }
}

both_backends! {
    with app;
    async fn a_dropped_player_behind_older_turns_is_still_covered(app: TestApp) {
        // A's X thinks long and stays; B's X, whose turn began later, is gone.
        let (ax, ao) = (app.register("longa").await, app.register("longb").await);
        let a = app.room_match(&ax, &ao, 1, json!({"kind": "none"})).await;
        app.time.advance(10);
        let (bx, bo) = (app.register("goner").await, app.register("stayer").await);
        let b = app.room_match(&bx, &bo, 1, json!({"kind": "none"})).await;
        app.time.advance(3_000);
        heartbeat(&app, &ax, &a).await;
        // A pass of one candidate looks at A's turn, the oldest; the next goes
        // on to B's, rather than at A's again.
        let sweep = || async { uttt::service::matches::dropout::sweep(&app.ctx, 1).await.unwrap() };
        assert_eq!(sweep().await, 0);
        assert_eq!(sweep().await, 1);
        assert_eq!(app.state(&bo, &b).await["players"]["x"]["controller"], "cpu");
        assert_eq!(app.state(&ao, &a).await["players"]["x"]["controller"], "human");
        // After the youngest, the passes start over from the oldest.
        assert_eq!(sweep().await, 0);
        assert_eq!(sweep().await, 0);
    }
}
