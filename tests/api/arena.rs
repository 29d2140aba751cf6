//! Arena tournaments over HTTP: settings, scripted games scoring points,
//! fire and berserk, games after the end scoring nothing, paused players
//! left out of the pool and coming back, two instances pairing one arena
//! at once, and the per-entrant totals equal to the games' points (and
//! rebuilt from the games when incomplete). The tournament worker is off: each test runs the passes
//! itself (the worker's own step) at times it chooses.
//!
//! Over 400 lines: one scenario per rule of the arena, each a scripted
//! sequence of games that only reads well whole.

use std::collections::HashMap;

use serde_json::{Value, json};
use uttt::service::tournaments::run::{self, Settings};
use uttt::store::StoreError;
use uttt::store::tournaments::{self as store, TallyRow};
use uttt::time::TimeSource;

use crate::both_backends;
use crate::support::{Backend, EventStream, Player, TestApp, TestConfig};
use crate::tournaments::{act, create};

/// A test server whose tournament worker does not run.
async fn without_worker(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers.tournaments = false;
    Some(TestApp::start(config).await)
}

/// Like [`without_worker`], on a server whose operator allows arenas of
/// 5 minutes (`UTTT_ARENA_MIN_DURATION_MS`).
async fn five_minute_arenas(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers.tournaments = false;
    config.config.arena_min_duration_ms = 300_000;
    Some(TestApp::start(config).await)
}

/// Depth 1, 10 minutes, a one-hour clock (time only moves when a test says).
fn arena_settings(name: &str) -> Value {
    json!({"name": name, "kind": "arena", "depth": 1, "duration_ms": 600000,
           "time_control": {"kind": "clock", "initial_ms": 3600000, "increment_ms": 0}})
}

/// Runs a pass (the worker's step) on `ctx` after moving the clock on by `ms`.
async fn pass_after(app: &TestApp, id: &str, ms: i64) {
    app.time.advance(ms);
    step(app, &app.ctx, id).await;
}

async fn step(app: &TestApp, ctx: &uttt::service::Context, id: &str) {
    let now = app.time.now_ms();
    run::run_step(ctx, id.to_owned(), Settings::of(ctx), now)
        .await
        .unwrap();
}

/// Every game of the arena, oldest first (all pages).
async fn games(app: &TestApp, id: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/tournaments/{id}/games?limit=3&cursor={c}"),
            None => format!("/api/v1/tournaments/{id}/games?limit=3"),
        };
        let page = app.get(&path, None).await;
        page.expect(200);
        all.extend(page.body["items"].as_array().unwrap().iter().cloned());
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return all,
        }
    }
}

async fn standings(app: &TestApp, id: &str) -> HashMap<String, Value> {
    let page = app
        .get(
            &format!("/api/v1/tournaments/{id}/standings?limit=100"),
            None,
        )
        .await;
    page.expect(200);
    page.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["player"]["username"].as_str().unwrap().to_owned(),
                s.clone(),
            )
        })
        .collect()
}

/// The one game being played, and its X and O among `players`.
async fn current<'a>(
    app: &TestApp,
    id: &str,
    players: &'a [Player],
) -> (String, &'a Player, &'a Player) {
    let open: Vec<Value> = games(app, id)
        .await
        .into_iter()
        .filter(|g| g["result"].is_null())
        .collect();
    assert_eq!(open.len(), 1, "one game being played: {open:?}");
    let find = |seat: &str| {
        players
            .iter()
            .find(|p| p.id == open[0][seat]["id"].as_str().unwrap())
            .unwrap()
    };
    (
        open[0]["match_id"].as_str().unwrap().to_owned(),
        find("x"),
        find("o"),
    )
}

async fn resign(app: &TestApp, who: &Player, match_id: &str) -> crate::support::Reply {
    let reply = app
        .post(
            &format!("/api/v1/matches/{match_id}/resign"),
            &json!({}),
            Some(&who.token),
        )
        .await;
    reply.expect(200);
    reply
}

async fn berserk(app: &TestApp, who: &Player, id: &str, match_id: &str) -> crate::support::Reply {
    app.post(
        &format!("/api/v1/tournaments/{id}/berserk"),
        &json!({"match_id": match_id}),
        Some(&who.token),
    )
    .await
}

/// An arena of ann and bob, 60-minute clocks, started by its director.
async fn started_arena(app: &TestApp, name: &str) -> (String, [Player; 2]) {
    let dir = app.quick_player("director").await;
    let players = [app.quick_player("ann").await, app.quick_player("bob").await];
    let id = create(app, &dir, arena_settings(name)).await;
    for p in &players {
        act(app, p, &id, "join").await.expect(200);
    }
    act(app, &dir, &id, "start").await.expect(200);
    (id, players)
}

/// The other player of a two-player game.
fn other<'a>(me: &Player, x: &'a Player, o: &'a Player) -> &'a Player {
    if me.id == x.id { o } else { x }
}

both_backends! {
    with without_worker;

    async fn arena_settings_are_checked_as_api_md_says(app: TestApp) {
        let dir = app.quick_player("director").await;
        let problem_fields = |body: &Value| -> Vec<String> {
            body["errors"].as_array().unwrap().iter()
                .map(|e| e["field"].as_str().unwrap().to_owned()).collect()
        };
        for (body, field) in [
            (json!({"name": "A", "kind": "arena"}), "duration_ms"),
            (json!({"name": "A", "kind": "arena", "duration_ms": 599999}), "duration_ms"),
            (json!({"name": "A", "kind": "arena", "duration_ms": 86400001}), "duration_ms"),
            (json!({"name": "A", "kind": "arena", "duration_ms": 600000, "rounds": 3}), "rounds"),
            (json!({"name": "A", "kind": "arena", "duration_ms": 600000, "round_pause_ms": 0}), "round_pause_ms"),
            (json!({"name": "A", "kind": "swiss", "rounds": 3, "duration_ms": 600000}), "duration_ms"),
            (json!({"name": "A", "kind": "knockout"}), "kind"),
        ] {
            let bad = app.post("/api/v1/tournaments", &body, Some(&dir.token)).await;
            bad.expect_problem(422, "validation_failed");
            assert!(problem_fields(&bad.body).contains(&field.to_owned()), "{field} in {:?}", bad.body);
        }
        let made = app.post("/api/v1/tournaments", &arena_settings("Blitz"), Some(&dir.token)).await;
        made.expect(201);
        assert_eq!(made.body["kind"], "arena");
        assert_eq!(made.body["duration_ms"], 600000);
        assert_eq!(made.body["rounds"], Value::Null);
        assert_eq!(made.body["status"], "registering");
        let id = made.body["id"].as_str().unwrap();
        let shown = app.get(&format!("/api/v1/tournaments/{id}"), None).await;
        assert_eq!(shown.body["kind"], "arena");
        let listed = app.get("/api/v1/tournaments?status=registering", None).await;
        assert!(listed.body["items"].as_array().unwrap().iter().any(|t| t["id"] == id && t["kind"] == "arena"));
    }

    async fn points_fire_and_berserk_score_as_rules_md_says(app: TestApp) {
        let dir = app.quick_player("director").await;
        let players = [app.quick_player("ann").await, app.quick_player("bob").await];
        let (ann, bob) = (&players[0], &players[1]);
        let id = create(&app, &dir, arena_settings("Fire")).await;
        act(&app, ann, &id, "join").await.expect(200);
        act(&app, bob, &id, "join").await.expect(200);
        let mut ann_events = EventStream::open(&app, "/api/v1/me/events", &ann.token, None).await;
        let started = act(&app, &dir, &id, "start").await;
        started.expect(200);
        assert_eq!(started.body["status"], "running");
        let start = uttt::time::parse_rfc3339(started.body["starts_at"].as_str().unwrap()).unwrap();
        let end = uttt::time::parse_rfc3339(started.body["ends_at"].as_str().unwrap()).unwrap();
        assert_eq!(end - start, 600000);

        // Game 1, paired at the start: told on /me/events; a tournament match.
        let (g1, x, o) = current(&app, &id, &players).await;
        let told = loop {
            let e = ann_events.next_event(std::time::Duration::from_secs(10)).await.expect("an event");
            if e.event == "tournament_pairing" {
                break serde_json::from_str::<Value>(&e.data).unwrap();
            }
        };
        assert_eq!(told["match_id"], g1.as_str());
        assert_eq!(told["round"], Value::Null);
        assert_eq!(told["seat"], if x.id == ann.id { "x" } else { "o" });
        let state = app.state(ann, &g1).await;
        assert_eq!(state["mode"], "tournament");
        assert_eq!(state["tournament"], json!({"id": id, "round": null}));
        resign(&app, other(ann, x, o), &g1).await; // ann 2

        // Game 2 (two players: they meet again): ann 2, now on fire.
        pass_after(&app, &id, 1000).await;
        let (g2, x, o) = current(&app, &id, &players).await;
        assert_ne!(g1, g2);
        resign(&app, other(ann, x, o), &g2).await;
        let s = standings(&app, &id).await;
        assert_eq!(s["ann"]["tiebreaks"]["fire"], true);
        assert_eq!(s["ann"]["score"], 4.0);

        // Game 3: ann goes berserk (her clock halves) and wins on fire: 4 + 1.
        pass_after(&app, &id, 1000).await;
        let (g3, x, o) = current(&app, &id, &players).await;
        let ann_seat = if x.id == ann.id { "x" } else { "o" };
        let halved = berserk(&app, ann, &id, &g3).await;
        halved.expect(200);
        assert_eq!(halved.body["clocks"][format!("{ann_seat}_ms")], 1800000);
        berserk(&app, ann, &id, &g3).await.expect_problem(409, "berserk_not_allowed");
        berserk(&app, &dir, &id, &g3).await.expect_problem(403, "forbidden");
        berserk(&app, ann, &id, "nosuchmatch").await.expect_problem(404, "not_found");
        // Bob moves first (or after ann's first move), then may not go berserk.
        app.play(x, &g3, 0, "4").await.expect(200);
        if x.id == ann.id {
            app.play(o, &g3, 1, "0").await.expect(200);
        }
        berserk(&app, bob, &id, &g3).await.expect_problem(409, "berserk_not_allowed");
        resign(&app, bob, &g3).await; // ann 5

        // Game 4: a drawn game on fire scores 2 and puts the fire out.
        pass_after(&app, &id, 1000).await;
        let (g4, x, o) = current(&app, &id, &players).await;
        let drawn = app.play_script(x, o, &g4, &["0", "4", "8", "1", "7", "6", "2", "5", "3"]).await;
        assert_eq!(drawn.body["status"], "finished");
        assert_eq!(drawn.body["result"]["winner"], Value::Null);

        // Game 5: a win off fire scores 2.
        pass_after(&app, &id, 1000).await;
        let (g5, x, o) = current(&app, &id, &players).await;
        resign(&app, other(ann, x, o), &g5).await;
        step(&app, &app.ctx, &id).await;

        let s = standings(&app, &id).await;
        assert_eq!(s["ann"]["score"], 13.0, "2 + 2 + (4 + 1) + 2 + 2");
        assert_eq!(s["bob"]["score"], 1.0, "only the draw");
        assert_eq!(s["ann"]["rank"], 1);
        assert_eq!((s["ann"]["games"].clone(), s["ann"]["wins"].clone(), s["ann"]["draws"].clone()), (json!(5), json!(4), json!(1)));
        assert_eq!(s["ann"]["tiebreaks"]["fire"], false);
        assert_eq!(s["ann"]["tiebreaks"]["streak"], 1);
        assert_eq!(s["ann"]["tiebreaks"]["berserks"], 1);
        assert!(s["ann"]["tiebreaks"]["performance"].as_f64().unwrap() > s["bob"]["tiebreaks"]["performance"].as_f64().unwrap());

        // The games list says what each game scored, oldest first.
        let all = games(&app, &id).await;
        assert_eq!(all.len(), 5);
        let ann_points: Vec<u64> = all.iter().map(|g| {
            let seat = if g["x"]["id"] == ann.id.as_str() { "x" } else { "o" };
            g["points"][seat].as_u64().unwrap()
        }).collect();
        assert_eq!(ann_points, [2, 2, 5, 2, 2]);
        assert_eq!(all.iter().map(|g| g["match_id"].as_str().unwrap()).collect::<Vec<_>>(), [&g1, &g2, &g3, &g4, &g5]);
        let g3_row = &all[2];
        assert_eq!(g3_row["berserk"][ann_seat], true);
        assert_eq!(g3_row["result"], ann_seat);
        assert_eq!(all[3]["result"], "draw");

        // The export lists the same games.
        let export = app.get(&format!("/api/v1/tournaments/{id}/export?format=ndjson"), None).await;
        export.expect(200);
        let lines: Vec<Value> = export.text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.iter().filter(|l| l["type"] == "game").count(), 5);
        assert_eq!(lines.iter().filter(|l| l["type"] == "standing").count(), 2);
    }

    async fn berserk_halves_a_running_clock_as_it_shows(app: TestApp) {
        let (id, players) = started_arena(&app, "Think").await;
        let (g, x, o) = current(&app, &id, &players).await;
        // X thinks five minutes of sixty on the first move, then goes berserk:
        // the 55 minutes the clock shows become 27.5, not 30 less the five.
        app.time.advance(300_000);
        let halved = berserk(&app, x, &id, &g).await;
        halved.expect(200);
        assert_eq!(halved.body["clocks"]["x_ms"], 1_650_000);
        assert_eq!(halved.body["clocks"]["running"], "x");
        // O, whose clock waits, keeps half of the hour.
        let waiting = berserk(&app, o, &id, &g).await;
        waiting.expect(200);
        assert_eq!(waiting.body["clocks"]["o_ms"], 1_800_000);
        assert_eq!(waiting.body["clocks"]["x_ms"], 1_650_000);
        // X's time runs on from there: a second later, a second less.
        app.time.advance(1_000);
        let moved = app.play(x, &g, 0, "4").await;
        moved.expect(200);
        assert_eq!(moved.body["clocks"]["x_ms"], 1_649_000);
    }

    async fn berserk_on_a_clock_that_ran_out_is_refused(app: TestApp) {
        let (id, players) = started_arena(&app, "Late").await;
        let (g, x, _) = current(&app, &id, &players).await;
        app.time.advance(3_600_000);
        berserk(&app, x, &id, &g).await.expect_problem(409, "match_over");
    }

    async fn an_arena_player_who_never_comes_is_covered_by_the_cpu(app: TestApp) {
        // Unlike a Swiss no-show (a loss on time), an absent arena player is
        // covered: the arena pairs them again and again, and each opponent
        // would otherwise wait out their whole clock.
        let (id, players) = started_arena(&app, "Absent").await;
        let (g, _, o) = current(&app, &id, &players).await;
        let beat = format!("/api/v1/matches/{g}/heartbeat");
        for _ in 0..15 {
            app.post(&beat, &json!({}), Some(&o.token)).await.expect(204);
            app.time.advance(2_000);
        }
        uttt::worker::presence::tick(&app.ctx).await.unwrap();
        let covered = app.state(o, &g).await;
        assert_eq!(covered["players"]["x"]["controller"], "cpu", "{covered}");
        assert_eq!(covered["status"], "active");
    }

    async fn berserk_needs_a_clock(app: TestApp) {
        let dir = app.quick_player("director").await;
        let players = [app.quick_player("ann").await, app.quick_player("bob").await];
        let mut body = arena_settings("Turns");
        body["time_control"] = json!({"kind": "per_turn", "turn_ms": 30000});
        let id = create(&app, &dir, body).await;
        for p in &players {
            act(&app, p, &id, "join").await.expect(200);
        }
        act(&app, &dir, &id, "start").await.expect(200);
        let (g, x, _) = current(&app, &id, &players).await;
        berserk(&app, x, &id, &g).await.expect_problem(409, "berserk_not_allowed");
    }

    async fn games_after_the_end_count_for_ratings_but_not_for_points(app: TestApp) {
        let dir = app.quick_player("director").await;
        let players = [app.quick_player("ann").await, app.quick_player("bob").await];
        let (ann, bob) = (&players[0], &players[1]);
        let id = create(&app, &dir, json!({"name": "Rated", "kind": "arena", "duration_ms": 600000,
            "ladder": "ultimate-10m"})).await;
        act(&app, ann, &id, "join").await.expect(200);
        act(&app, bob, &id, "join").await.expect(200);
        act(&app, &dir, &id, "start").await.expect(200);
        let (g1, x, o) = current(&app, &id, &players).await;
        resign(&app, other(ann, x, o), &g1).await;
        pass_after(&app, &id, 1000).await;
        let (g2, _, _) = current(&app, &id, &players).await;

        // The end time passes: the arena finishes, the game being played goes on.
        pass_after(&app, &id, 599_500).await;
        let t = app.get(&format!("/api/v1/tournaments/{id}"), None).await;
        assert_eq!(t.body["status"], "finished");
        let late = resign(&app, ann, &g2).await;
        assert!(late.body["result"]["rating_changes"].is_object(), "rated all the same");
        step(&app, &app.ctx, &id).await;
        pass_after(&app, &id, 1000).await;

        let all = games(&app, &id).await;
        assert_eq!(all.len(), 2, "no game starts after the end");
        assert_eq!(all[1]["result"].as_str().unwrap(), if all[1]["x"]["id"] == bob.id.as_str() { "x" } else { "o" });
        assert_eq!(all[1]["points"], json!({"x": null, "o": null}));
        let s = standings(&app, &id).await;
        assert_eq!(s["ann"]["score"], 2.0);
        assert_eq!(s["bob"]["score"], 0.0);
        assert_eq!(s["bob"]["games"], 1, "the late game is not in the standings");
        act(&app, &dir, &id, "join").await.expect_problem(409, "tournament_closed");
        berserk(&app, ann, &id, &g2).await.expect_problem(409, "match_over");
    }

    async fn paused_players_wait_outside_the_pool_and_come_back(app: TestApp) {
        let dir = app.quick_player("director").await;
        let players = [
            app.quick_player("ann").await,
            app.quick_player("bob").await,
            app.quick_player("cat").await,
            app.quick_player("dan").await,
        ];
        let by_id: HashMap<&str, &Player> = players.iter().map(|p| (p.id.as_str(), p)).collect();
        let id = create(&app, &dir, arena_settings("Pause")).await;
        for p in &players {
            act(&app, p, &id, "join").await.expect(200);
        }
        act(&app, &dir, &id, "start").await.expect(200);
        let first = games(&app, &id).await;
        assert_eq!(first.len(), 2, "four players: two games");
        let seat = |g: &Value, s: &str| by_id[g[s]["id"].as_str().unwrap()];
        // The X of the second game pauses while playing; the games end.
        let paused = seat(&first[1], "x");
        let partner = seat(&first[1], "o");
        act(&app, paused, &id, "withdraw").await.expect(200);
        for g in &first {
            resign(&app, seat(g, "x"), g["match_id"].as_str().unwrap()).await;
        }
        pass_after(&app, &id, 1000).await;
        let now = games(&app, &id).await;
        assert_eq!(now.len(), 3, "three free players, one pair that is not a rematch");
        let third = &now[2];
        let in_third = [seat(third, "x").id.as_str(), seat(third, "o").id.as_str()];
        assert!(!in_third.contains(&paused.id.as_str()), "a paused player is not paired");
        assert!(in_third.contains(&partner.id.as_str()), "the one without a rematch is");
        assert_eq!(standings(&app, &id).await[&paused.username]["withdrawn"], true);
        pass_after(&app, &id, 1000).await;
        assert_eq!(games(&app, &id).await.len(), 3, "the one left waits alone");

        // Back: joining again puts them in the pool.
        let back = act(&app, paused, &id, "join").await;
        back.expect(200);
        pass_after(&app, &id, 1000).await;
        let now = games(&app, &id).await;
        assert_eq!(now.len(), 4);
        let fourth = &now[3];
        assert!([fourth["x"]["id"].as_str().unwrap(), fourth["o"]["id"].as_str().unwrap()].contains(&paused.id.as_str()));
        assert_eq!(standings(&app, &id).await[&paused.username]["withdrawn"], false);
        act(&app, paused, &id, "join").await.expect_problem(409, "already_joined");

        // Removed by the director: no coming back.
        app.post(&format!("/api/v1/tournaments/{id}/players/{}/remove", paused.id), &json!({}), Some(&dir.token)).await
            .expect(200);
        act(&app, paused, &id, "join").await.expect_problem(409, "already_joined");
    }

    async fn two_instances_pairing_one_arena_never_seat_a_player_twice(app: TestApp) {
        let (_, sibling, handle) = app.start_sibling().await;
        let dir = app.quick_player("director").await;
        let mut players = Vec::new();
        for i in 0..14 {
            players.push(app.quick_player(&format!("p{i}")).await);
        }
        let by_id: HashMap<String, &Player> = players.iter().map(|p| (p.id.clone(), p)).collect();
        let id = create(&app, &dir, arena_settings("Race")).await;
        for p in &players {
            act(&app, p, &id, "join").await.expect(200);
        }
        act(&app, &dir, &id, "start").await.expect(200);
        let mut total = 0;
        for round in 0..8 {
            // End some games (every other one), then both instances pass at once.
            let open: Vec<Value> = games(&app, &id).await.into_iter().filter(|g| g["result"].is_null()).collect();
            for (k, g) in open.iter().enumerate() {
                if (k + round) % 2 == 0 {
                    let loser = by_id[g["o"]["id"].as_str().unwrap()];
                    resign(&app, loser, g["match_id"].as_str().unwrap()).await;
                }
            }
            app.time.advance(1000);
            tokio::join!(step(&app, &app.ctx, &id), step(&app, &sibling, &id));
            let all = games(&app, &id).await;
            let mut seated: HashMap<&str, u32> = HashMap::new();
            for g in all.iter().filter(|g| g["result"].is_null()) {
                for s in ["x", "o"] {
                    *seated.entry(g[s]["id"].as_str().unwrap()).or_default() += 1;
                }
            }
            assert!(seated.values().all(|&n| n == 1), "a player in two games at once: {seated:?}");
            assert!(all.len() >= total);
            total = all.len();
        }
        assert!(total > players.len(), "the passes paired the players again and again: {total} games");
        handle.stop(false).await;

        // The standings' totals, kept per entrant as each game ends, equal
        // the sums of the points the games list gives (replayed from the games).
        let mut sums: HashMap<String, u64> = HashMap::new();
        for g in games(&app, &id).await {
            for s in ["x", "o"] {
                if let Some(p) = g["points"][s].as_u64() {
                    *sums.entry(g[s]["username"].as_str().unwrap().to_owned()).or_default() += p;
                }
            }
        }
        let before = standings(&app, &id).await;
        assert!(sums.values().sum::<u64>() > 0);
        for (name, line) in &before {
            assert_eq!(line["score"], json!(sums.get(name).copied().unwrap_or(0) as f64), "{name}");
        }
        // An arena whose totals are incomplete (one that had games before
        // they were kept) shows standings replayed from its games, and its
        // next pass rebuilds the totals.
        let tid = id.clone();
        app.ctx.db.write(move |conn| -> Result<(), StoreError> {
            let mut row = store::get(conn, &tid)?.unwrap();
            row.tallied = false;
            store::save(conn, &row)?;
            for e in store::entrant_rows(conn, &tid)? {
                store::save_tally(conn, &tid, &e.player_id, &TallyRow::default())?;
            }
            Ok(())
        }).await.unwrap();
        assert_eq!(standings(&app, &id).await, before);
        pass_after(&app, &id, 1000).await;
        let tid = id.clone();
        let tallied = app.ctx.db.run(move |conn| -> Result<bool, StoreError> {
            Ok(store::get(conn, &tid)?.unwrap().tallied)
        }).await.unwrap();
        assert!(tallied, "the pass rebuilt the totals");
        assert_eq!(standings(&app, &id).await, before);
    }
}

both_backends! {
    with five_minute_arenas;

    async fn an_operator_may_allow_shorter_arenas(app: TestApp) {
        let dir = app.quick_player("director").await;
        let mut short = arena_settings("Five");
        short["duration_ms"] = json!(299_999);
        let bad = app.post("/api/v1/tournaments", &short, Some(&dir.token)).await;
        bad.expect_problem(422, "validation_failed");
        assert!(bad.body["errors"][0]["message"].as_str().unwrap_or_default().contains("300000"), "{:?}", bad.body);
        short["duration_ms"] = json!(300_000);
        let made = app.post("/api/v1/tournaments", &short, Some(&dir.token)).await;
        made.expect(201);
        assert_eq!(made.body["duration_ms"], 300000);
    }
}
