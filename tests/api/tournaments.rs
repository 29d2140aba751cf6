//! Swiss tournaments over HTTP: creating, joining and its refusals, the
//! director's controls, a whole small tournament played to the end (with a
//! bye), its standings and export, the events, and rated tournaments.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::support::{Backend, EventStream, Player, TestApp, TestConfig, eventually};

const WAIT: Duration = Duration::from_secs(20);
/// Depth 1, 30 s a turn: games that end by resignation in a few requests.
fn quick_settings(name: &str, rounds: u32) -> Value {
    json!({"name": name, "kind": "swiss", "depth": 1, "rounds": rounds,
           "time_control": {"kind": "per_turn", "turn_ms": 30000}, "round_pause_ms": 0})
}

/// Creates a tournament as `director`; answers its id.
pub(crate) async fn create(app: &TestApp, director: &Player, body: Value) -> String {
    let made = app
        .post("/api/v1/tournaments", &body, Some(&director.token))
        .await;
    made.expect(201);
    made.body["id"].as_str().unwrap().to_owned()
}

/// `POST /tournaments/{id}/{action}` with an empty body as `who`.
pub(crate) async fn act(
    app: &TestApp,
    who: &Player,
    id: &str,
    action: &str,
) -> crate::support::Reply {
    app.post(
        &format!("/api/v1/tournaments/{id}/{action}"),
        &json!({}),
        Some(&who.token),
    )
    .await
}

async fn tournament(app: &TestApp, id: &str) -> Value {
    let t = app.get(&format!("/api/v1/tournaments/{id}"), None).await;
    t.expect(200);
    t.body
}

/// Waits until the tournament reaches `round` (or, with `finished`, ends).
async fn wait_for(app: &TestApp, id: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    eventually(WAIT, what, || async {
        let t = tournament(app, id).await;
        ok(&t).then_some(t)
    })
    .await
}

async fn round(app: &TestApp, id: &str, n: u32) -> Value {
    let r = app
        .get(&format!("/api/v1/tournaments/{id}/rounds/{n}"), None)
        .await;
    r.expect(200);
    r.body
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

both_backends! {
    async fn tournament_views_say_which_players_are_bots(app: TestApp) {
        let dir = app.quick_player("director").await;
        let human = app.quick_player("human").await;
        let bot = app.quick_player("botty").await;
        app.post("/api/v1/me/bot", &json!({}), Some(&bot.token)).await.expect(200);
        let id = create(&app, &dir, quick_settings("Bots welcome", 1)).await;
        for p in [&human, &bot] {
            act(&app, p, &id, "join").await.expect(200);
        }
        let shown = app.get(&format!("/api/v1/tournaments/{id}"), None).await;
        assert_eq!(shown.body["director"], json!({"id": dir.id, "username": dir.username, "bot": false}));
        act(&app, &dir, &id, "start").await.expect(200);
        let is_bot = |p: &Value| p["bot"] == (p["id"] == bot.id.as_str());
        let standings = app.get(&format!("/api/v1/tournaments/{id}/standings"), Some(&dir.token)).await;
        let items = standings.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(|s| is_bot(&s["player"])), "{items:?}");
        assert!(items.iter().any(|s| s["player"]["bot"] == true));
        let round = app.get(&format!("/api/v1/tournaments/{id}/rounds/1"), Some(&dir.token)).await;
        let board = &round.body["pairings"][0];
        assert!(is_bot(&board["x"]) && is_bot(&board["o"]), "{board}");
    }

    async fn an_entrant_of_a_tournament_rated_on_a_ladder_closed_to_bots_stays_human(app: TestApp) {
        let dir = app.quick_player("director").await;
        let a = app.quick_player("alice").await;
        let rated = create(&app, &dir, json!({"name": "Rated", "kind": "swiss", "rounds": 1,
            "ladder": "ultimate-10m", "round_pause_ms": 0})).await;
        let casual = create(&app, &dir, quick_settings("Casual", 1)).await;
        for id in [&rated, &casual] {
            act(&app, &a, id, "join").await.expect(200);
        }
        let refused = app.post("/api/v1/me/bot", &json!({}), Some(&a.token)).await;
        refused.expect_problem(409, "already_joined");
        assert_eq!(refused.body["tournament_id"], rated.as_str());
        assert_eq!(app.get("/api/v1/me", Some(&a.token)).await.body["bot"], false);
        // Withdrawn before the start, the entry is gone, and a casual
        // tournament never stood in the way.
        act(&app, &a, &rated, "withdraw").await.expect(200);
        app.post("/api/v1/me/bot", &json!({}), Some(&a.token)).await.expect(200);
        act(&app, &a, &rated, "join").await.expect_problem(403, "forbidden");
    }

    async fn a_place_in_a_running_rated_tournament_holds_until_the_player_can_no_longer_play(app: TestApp) {
        let dir = app.quick_player("director").await;
        let (a, b) = (app.quick_player("alice").await, app.quick_player("bob").await);
        let swiss = create(&app, &dir, json!({"name": "Rated swiss", "kind": "swiss", "rounds": 2,
            "ladder": "ultimate-10m", "round_pause_ms": 600000})).await;
        for p in [&a, &b] {
            act(&app, p, &swiss, "join").await.expect(200);
        }
        act(&app, &dir, &swiss, "start").await.expect(200);
        let round = app.get(&format!("/api/v1/tournaments/{swiss}/rounds/1"), Some(&dir.token)).await;
        let game = round.body["pairings"][0]["match_id"].as_str().unwrap().to_owned();
        // Withdrawn from a Swiss, Alice is paired no more, but her game is
        // played out: it is rated on a ladder closed to bots.
        act(&app, &a, &swiss, "withdraw").await.expect(200);
        let refused = app.post("/api/v1/me/bot", &json!({}), Some(&a.token)).await;
        refused.expect_problem(409, "already_joined");
        assert_eq!(refused.body["tournament_id"], swiss.as_str());
        app.post(&format!("/api/v1/matches/{game}/resign"), &json!({}), Some(&a.token)).await.expect(200);
        // Her game over, the tournament no longer holds her; the rated game
        // she played as a human does.
        app.post("/api/v1/me/bot", &json!({}), Some(&a.token)).await
            .expect_problem(409, "has_rated_games");
        // A paused arena player may come back while it runs: the place holds.
        let arena = create(&app, &dir, json!({"name": "Rated arena", "kind": "arena",
            "ladder": "ultimate-10m", "duration_ms": 600000})).await;
        let c = app.quick_player("carol").await;
        for p in [&b, &c] {
            act(&app, p, &arena, "join").await.expect(200);
        }
        act(&app, &dir, &arena, "start").await.expect(200);
        act(&app, &c, &arena, "withdraw").await.expect(200);
        let paused = app.post("/api/v1/me/bot", &json!({}), Some(&c.token)).await;
        paused.expect_problem(409, "already_joined");
        assert_eq!(paused.body["tournament_id"], arena.as_str());
    }

    async fn creating_and_joining_refuse_what_api_md_refuses(app: TestApp) {
        let dir = app.quick_player("director").await;
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let c = app.quick_player("carol").await;

        // Bad settings are 422 with the fields named.
        let bad = app.post("/api/v1/tournaments", &json!({"name": "", "kind": "swiss",
            "time_control": {"kind": "none"}}), Some(&dir.token)).await;
        bad.expect_problem(422, "validation_failed");
        let fields: Vec<&str> = bad.body["errors"].as_array().unwrap().iter()
            .map(|e| e["field"].as_str().unwrap()).collect();
        for f in ["name", "time_control", "rounds"] {
            assert!(fields.contains(&f), "{f} in {fields:?}");
        }
        app.post("/api/v1/tournaments", &json!({"name": "A", "kind": "arena", "duration_ms": 1000}),
            Some(&dir.token)).await.expect_problem(422, "validation_failed");
        app.post("/api/v1/tournaments", &json!({"name": "A", "kind": "swiss", "rounds": 3,
            "ladder": "no-such-ladder"}), Some(&dir.token)).await.expect_problem(422, "validation_failed");
        app.post("/api/v1/tournaments", &quick_settings("anon", 1), None).await
            .expect_problem(401, "unauthorized");

        let mut body = quick_settings("Club night", 3);
        body["entry_code"] = json!("knight");
        body["max_players"] = json!(2);
        let made = app.post("/api/v1/tournaments", &body, Some(&dir.token)).await;
        made.expect(201);
        let id = made.body["id"].as_str().unwrap().to_owned();
        assert_eq!(made.body["status"], "registering");
        assert_eq!(made.body["director"]["username"], "director");
        assert_eq!(made.body["private"], true);
        assert_eq!(made.body["round"], 0);
        assert_eq!(made.body["rounds"], 3);
        assert_eq!(made.body["players"], 0);
        assert!(made.body.get("entry_code").is_none(), "the code is not shown");

        // The entry code.
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({}), Some(&a.token)).await
            .expect_problem(403, "forbidden");
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "rook"}), Some(&a.token)).await
            .expect_problem(403, "forbidden");
        let joined = app.post(&format!("/api/v1/tournaments/{id}/join"),
            &json!({"entry_code": "knight"}), Some(&a.token)).await;
        joined.expect(200);
        assert_eq!(joined.body["players"], 1);
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "knight"}), Some(&a.token)).await
            .expect_problem(409, "already_joined");

        // Only the director starts, and not alone.
        act(&app, &a, &id, "start").await.expect_problem(403, "forbidden");
        act(&app, &dir, &id, "start").await.expect_problem(409, "not_enough_players");

        // Capacity.
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "knight"}), Some(&b.token)).await
            .expect(200);
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "knight"}), Some(&c.token)).await
            .expect_problem(409, "tournament_full");

        // Withdrawing before the start frees the place.
        let left = act(&app, &b, &id, "withdraw").await;
        left.expect(200);
        assert_eq!(left.body["players"], 1);
        act(&app, &b, &id, "withdraw").await.expect_problem(404, "not_found");
        app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "knight"}), Some(&c.token)).await
            .expect(200);

        // Listed while registering, soonest first.
        let list = app.get("/api/v1/tournaments?status=registering", None).await;
        list.expect(200);
        assert!(list.body["items"].as_array().unwrap().iter().any(|t| t["id"] == id.as_str()));
        app.get("/api/v1/tournaments?status=later", None).await.expect_problem(422, "validation_failed");
        assert_eq!(app.get("/api/v1/tournaments?status=finished", None).await.body["items"], json!([]));

        // Started: round 1 is paired; joining is closed.
        let started = act(&app, &dir, &id, "start").await;
        started.expect(200);
        assert_eq!(started.body["status"], "running");
        assert_eq!(started.body["round"], 1);
        let d = app.quick_player("dave").await;
        let late = app.post(&format!("/api/v1/tournaments/{id}/join"), &json!({"entry_code": "knight"}), Some(&d.token)).await;
        late.expect_problem(409, "tournament_closed");
        assert_eq!(late.body["tournament_status"], "running");
        act(&app, &dir, &id, "start").await.expect_problem(409, "tournament_closed");

        // The director removes a player; then cancels.
        app.post(&format!("/api/v1/tournaments/{id}/players/{}/remove", c.id), &json!({}), Some(&a.token)).await
            .expect_problem(403, "forbidden");
        app.post(&format!("/api/v1/tournaments/{id}/players/{}/remove", c.id), &json!({}), Some(&dir.token)).await
            .expect(200);
        let standings = app.get(&format!("/api/v1/tournaments/{id}/standings"), Some(&dir.token)).await;
        standings.expect(200);
        let carol = standings.body["items"].as_array().unwrap().iter()
            .find(|s| s["player"]["username"] == "carol").unwrap().clone();
        assert_eq!(carol["withdrawn"], true);
        act(&app, &a, &id, "cancel").await.expect_problem(403, "forbidden");
        let cancelled = act(&app, &dir, &id, "cancel").await;
        cancelled.expect(200);
        assert_eq!(cancelled.body["status"], "cancelled");
        act(&app, &dir, &id, "cancel").await.expect_problem(409, "tournament_closed");

        app.get("/api/v1/tournaments/nope", None).await.expect_problem(404, "not_found");
        app.get(&format!("/api/v1/tournaments/{id}/rounds/9"), None).await.expect_problem(404, "not_found");
        app.get(&format!("/api/v1/tournaments/{id}/rounds/x"), None).await.expect_problem(422, "validation_failed");
        app.get(&format!("/api/v1/tournaments/{id}/export?format=pdf"), None).await.expect_problem(422, "validation_failed");
    }

    async fn a_minimum_rating_keeps_lower_rated_players_out(app: TestApp) {
        let dir = app.quick_player("director").await;
        let low = app.quick_player("low").await;
        let high = app.quick_player("high").await;
        app.set_rating(&high, "ultimate-10m", 1800.0, 60.0).await;
        let id = create(&app, &dir, json!({"name": "Masters", "kind": "swiss", "rounds": 1,
            "ladder": "ultimate-10m", "min_rating": 1700})).await;
        let t = tournament(&app, &id).await;
        assert_eq!(t["rated"], true);
        assert_eq!(t["depth"], 2);
        act(&app, &low, &id, "join").await.expect_problem(403, "forbidden");
        act(&app, &high, &id, "join").await.expect(200);
    }

    async fn a_three_player_swiss_is_played_to_the_end_with_a_bye_each_round(app: TestApp) {
        let dir = app.quick_player("director").await;
        let players = [
            app.quick_player("ann").await,
            app.quick_player("ben").await,
            app.quick_player("cat").await,
        ];
        let by_id: HashMap<String, &Player> = players.iter().map(|p| (p.id.clone(), p)).collect();
        let id = create(&app, &dir, quick_settings("Three", 2)).await;
        for p in &players {
            act(&app, p, &id, "join").await.expect(200);
        }
        let mut ann_events = EventStream::open(&app, "/api/v1/me/events", &players[0].token, None).await;
        let mut ben_events = EventStream::open(&app, "/api/v1/me/events", &players[1].token, None).await;
        let mut cat_events = EventStream::open(&app, "/api/v1/me/events", &players[2].token, None).await;
        let mut feed = EventStream::open(&app, &format!("/api/v1/tournaments/{id}/events"), &dir.token, None).await;
        let first = next_named(&mut feed, "tournament").await;
        assert_eq!(first["status"], "registering");
        assert_eq!(first["players"], 3);

        act(&app, &dir, &id, "start").await.expect(200);
        let started = next_named(&mut feed, "tournament").await;
        assert_eq!(started["status"], "running");
        assert_eq!(started["round"], 1);

        let mut byes = Vec::new();
        let mut pairs = Vec::new();
        let mut match_ids = Vec::new();
        for n in 1..=2u32 {
            wait_for(&app, &id, "the round to be paired", |t| t["round"] == n).await;
            let r = round(&app, &id, n).await;
            assert_eq!(r["round"], n);
            let pairings = r["pairings"].as_array().unwrap();
            assert_eq!(pairings.len(), 1, "three players: one game and a bye");
            let game = &pairings[0];
            assert_eq!(game["board"], 1);
            assert_eq!(game["result"], Value::Null);
            let bye = r["bye"]["id"].as_str().unwrap().to_owned();
            let (x, o) = (game["x"]["id"].as_str().unwrap(), game["o"]["id"].as_str().unwrap());
            assert!(bye != x && bye != o);
            byes.push(bye);
            let mut pair = [x.to_owned(), o.to_owned()];
            pair.sort();
            pairs.push(pair);
            let match_id = game["match_id"].as_str().unwrap().to_owned();

            // Both paired players are told, with their seat.
            for (pid, seat) in [(x, "x"), (o, "o")] {
                let stream = match by_id[pid].username.as_str() {
                    "ann" => &mut ann_events,
                    "ben" => &mut ben_events,
                    _ => &mut cat_events,
                };
                let told = next_named(stream, "tournament_pairing").await;
                assert_eq!(told["tournament_id"], id.as_str());
                assert_eq!(told["round"], n);
                assert_eq!(told["match_id"], match_id.as_str());
                assert_eq!(told["seat"], seat);
            }

            // An ordinary match that says which tournament round it is.
            let state = app.state(by_id[x], &match_id).await;
            assert_eq!(state["mode"], "tournament");
            assert_eq!(state["tournament"], json!({"id": id, "round": n}));
            assert_eq!(state["rated"], false);
            assert_eq!(state["time_control"]["kind"], "per_turn");
            // Stored with its own mode, so a player's list says so too.
            let mine = app.get("/api/v1/me/matches?status=active", Some(&by_id[x].token)).await;
            let listed = mine.body["items"].as_array().unwrap();
            let entry = listed.iter().find(|m| m["id"] == match_id.as_str()).expect("listed");
            assert_eq!(entry["mode"], "tournament");
            match_ids.push(match_id.clone());
            // Round 1: X resigns; round 2: O resigns.
            let loser = if n == 1 { by_id[x] } else { by_id[o] };
            let resigned = app.post(&format!("/api/v1/matches/{match_id}/resign"), &json!({}), Some(&loser.token)).await;
            resigned.expect(200);
        }
        assert_ne!(byes[0], byes[1], "byes go to distinct players");
        assert_ne!(pairs[0], pairs[1], "no rematch");
        // An admin filters the history by the tournament mode.
        let admin = crate::admin::admin(&app, "referee").await;
        let history = app.get("/api/v1/admin/matches?mode=tournament", Some(&admin.token)).await;
        let mut found: Vec<String> = history.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect();
        found.sort();
        match_ids.sort();
        assert_eq!(found, match_ids);

        let done = wait_for(&app, &id, "the tournament to finish", |t| t["status"] == "finished").await;
        assert_eq!(done["round"], 2);
        assert!(done["ends_at"].is_string());

        // The standings follow from the exported games: score = wins + draws/2 + byes;
        // Buchholz = opponents' scores (a bye: the player's own).
        let export = app.get(&format!("/api/v1/tournaments/{id}/export?format=ndjson"), None).await;
        export.expect(200);
        assert_eq!(export.header("content-type"), Some("application/x-ndjson"));
        let lines: Vec<Value> = export.text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let standings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "standing").collect();
        let games: Vec<&Value> = lines.iter().filter(|l| l["type"] == "game").collect();
        let bye_lines: Vec<&Value> = lines.iter().filter(|l| l["type"] == "bye").collect();
        assert_eq!((standings.len(), games.len(), bye_lines.len()), (3, 2, 2));
        let mut score: HashMap<String, f64> = HashMap::new();
        for g in &games {
            let (x, o) = (g["x"]["id"].as_str().unwrap(), g["o"]["id"].as_str().unwrap());
            let (sx, so) = match g["result"].as_str().unwrap() {
                "x" => (1.0, 0.0),
                "o" => (0.0, 1.0),
                _ => (0.5, 0.5),
            };
            *score.entry(x.to_owned()).or_default() += sx;
            *score.entry(o.to_owned()).or_default() += so;
        }
        for b in &bye_lines {
            *score.entry(b["player"]["id"].as_str().unwrap().to_owned()).or_default() += 1.0;
        }
        for s in &standings {
            let pid = s["player"]["id"].as_str().unwrap();
            assert_eq!(s["score"].as_f64().unwrap(), score[pid], "score of {pid}");
            let mut buchholz = 0.0;
            for g in &games {
                let (x, o) = (g["x"]["id"].as_str().unwrap(), g["o"]["id"].as_str().unwrap());
                if x == pid { buchholz += score[o]; }
                if o == pid { buchholz += score[x]; }
            }
            for b in &bye_lines {
                if b["player"]["id"] == pid { buchholz += score[pid]; }
            }
            assert_eq!(s["tiebreaks"]["buchholz"].as_f64().unwrap(), buchholz, "Buchholz of {pid}");
        }
        let ranks: Vec<u64> = standings.iter().map(|s| s["rank"].as_u64().unwrap()).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "ranked in order: {ranks:?}");
        let scores: Vec<f64> = standings.iter().map(|s| s["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "leader first: {scores:?}");

        // The paginated standings are the export's.
        let page = app.get(&format!("/api/v1/tournaments/{id}/standings?limit=2"), None).await;
        page.expect(200);
        assert_eq!(page.body["items"].as_array().unwrap().len(), 2);
        let rest = app.get(&format!("/api/v1/tournaments/{id}/standings?limit=2&cursor={}",
            page.body["next_cursor"].as_str().unwrap()), None).await;
        rest.expect(200);
        assert_eq!(rest.body["next_cursor"], Value::Null);
        let paged: Vec<Value> = page.body["items"].as_array().unwrap().iter()
            .chain(rest.body["items"].as_array().unwrap()).cloned().collect();
        for (p, s) in paged.iter().zip(&standings) {
            assert_eq!(p["player"], s["player"]);
            assert_eq!(p["score"], s["score"]);
        }

        let csv = app.get(&format!("/api/v1/tournaments/{id}/export?format=csv"), None).await;
        csv.expect(200);
        let sections: Vec<&str> = csv.text.split("\n\n").collect();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].lines().count(), 1 + 3);
        assert_eq!(sections[1].lines().count(), 1 + 2 + 2);

        // The stream followed to the end.
        loop {
            let t = next_named(&mut feed, "tournament").await;
            if t["status"] == "finished" {
                break;
            }
        }
        let finished = app.get("/api/v1/tournaments?status=finished", None).await;
        assert_eq!(finished.body["items"][0]["id"], id.as_str());
    }

    async fn a_rated_tournament_changes_ratings_as_ranked_matches_do(app: TestApp) {
        let dir = app.quick_player("director").await;
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let id = create(&app, &dir, json!({"name": "Rated", "kind": "swiss", "rounds": 1,
            "ladder": "ultimate-10m", "round_pause_ms": 0})).await;
        act(&app, &a, &id, "join").await.expect(200);
        act(&app, &b, &id, "join").await.expect(200);
        act(&app, &dir, &id, "start").await.expect(200);
        let r = round(&app, &id, 1).await;
        let match_id = r["pairings"][0]["match_id"].as_str().unwrap().to_owned();
        assert_eq!(r["bye"], Value::Null);
        let x_id = r["pairings"][0]["x"]["id"].as_str().unwrap();
        let (x, o) = if x_id == a.id { (&a, &b) } else { (&b, &a) };
        let state = app.state(x, &match_id).await;
        assert_eq!(state["rated"], true);
        assert_eq!(state["ladder"], "ultimate-10m");
        assert_eq!(state["mode"], "tournament");
        let resigned = app.post(&format!("/api/v1/matches/{match_id}/resign"), &json!({}), Some(&x.token)).await;
        resigned.expect(200);
        let changes = &resigned.body["result"]["rating_changes"];
        assert!(changes["o"]["after"].as_f64().unwrap() > changes["o"]["before"].as_f64().unwrap());
        assert!(changes["x"]["after"].as_f64().unwrap() < changes["x"]["before"].as_f64().unwrap());
        // The ladder's rating rows say the same, as for a ranked match.
        let winner = app.rating_row(o, "ultimate-10m").await;
        let loser = app.rating_row(x, "ultimate-10m").await;
        assert_eq!((winner.games, winner.wins, loser.games, loser.losses), (1, 1, 1, 1));
        // The state shows ratings to two decimals.
        assert!((winner.rating - changes["o"]["after"].as_f64().unwrap()).abs() < 0.01);
        wait_for(&app, &id, "the tournament to finish", |t| t["status"] == "finished").await;
    }

    async fn a_scheduled_tournament_starts_itself_at_its_time(app: TestApp) {
        let dir = app.quick_player("director").await;
        let a = app.quick_player("alice").await;
        let b = app.quick_player("bob").await;
        let at = uttt::time::rfc3339(uttt::time::TimeSource::now_ms(app.time.as_ref()) + 60_000);
        let mut body = quick_settings("Scheduled", 1);
        body["starts_at"] = json!(at);
        let id = create(&app, &dir, body).await;
        act(&app, &a, &id, "join").await.expect(200);
        act(&app, &b, &id, "join").await.expect(200);
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(tournament(&app, &id).await["status"], "registering");
        app.time.advance(61_000);
        let t = wait_for(&app, &id, "the scheduled start", |t| t["status"] == "running").await;
        assert_eq!(t["round"], 1);
        assert_eq!(round(&app, &id, 1).await["pairings"].as_array().unwrap().len(), 1);
    }
}

/// A server whose workers run only when the test ticks them.
async fn ticked(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers = uttt::config::Workers::NONE;
    Some(TestApp::start(config).await)
}

both_backends! {
    with ticked;
    async fn the_next_round_is_paired_when_the_pause_after_the_last_game_is_over(app: TestApp) {
        let dir = app.quick_player("director").await;
        let mut players = Vec::new();
        for name in ["ann", "ben", "cat", "dan"] {
            players.push(app.quick_player(name).await);
        }
        let mut settings = quick_settings("Paused", 2);
        settings["round_pause_ms"] = json!(10_000);
        let id = create(&app, &dir, settings).await;
        for p in &players {
            act(&app, p, &id, "join").await.expect(200);
        }
        act(&app, &dir, &id, "start").await.expect(200);
        let tick = || async { uttt::worker::tournaments::tick(&app.ctx).await.unwrap() };
        let first = round(&app, &id, 1).await;
        let boards = first["pairings"].as_array().unwrap().clone();
        assert_eq!(boards.len(), 2);
        for (i, board) in boards.iter().enumerate() {
            let x = players.iter().find(|p| board["x"]["id"] == p.id.as_str()).unwrap();
            let game = board["match_id"].as_str().unwrap();
            app.post(&format!("/api/v1/matches/{game}/resign"), &json!({}), Some(&x.token)).await.expect(200);
            if i == 0 {
                // One game of the round still on: no pause starts yet.
                tick().await;
                app.time.advance(20_000);
                tick().await;
                assert_eq!(tournament(&app, &id).await["round"], 1, "a game of round 1 is still on");
            }
        }
        // The last result is recorded at once; round 2 waits out the pause from then.
        tick().await;
        let recorded = round(&app, &id, 1).await;
        assert!(recorded["pairings"].as_array().unwrap().iter().all(|b| b["result"] == "o"), "{recorded}");
        assert_eq!(tournament(&app, &id).await["round"], 1);
        app.time.advance(9_999);
        tick().await;
        assert_eq!(tournament(&app, &id).await["round"], 1, "still pausing");
        app.time.advance(1);
        tick().await;
        assert_eq!(tournament(&app, &id).await["round"], 2, "paired when the pause is over");
        assert_eq!(round(&app, &id, 2).await["pairings"].as_array().unwrap().len(), 2);
    }
}
