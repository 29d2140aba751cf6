//! Matches over HTTP: practice, rooms, every ending, the move rules, clocks,
//! concurrency, events.

use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::support::{Backend, EventStream, TestApp, TestConfig, addr, eventually, legal_of};

const NO_CLOCK: fn() -> Value = || json!({"kind": "none"});

/// Depth 1: X takes the top row.
const X_TOP_ROW: &[&str] = &["0", "3", "1", "4", "2"];
/// Depth 1: nine moves, no line (x o x / x o o / o x x).
const DEPTH_ONE_DRAW: &[&str] = &["0", "1", "2", "4", "3", "5", "7", "6", "8"];
/// Depth 2: X wins board 2 (cells 3 4 5); O is then sent to board 5.
const X_WINS_BOARD_TWO: &[&str] = &["2.3", "3.2", "2.4", "4.2", "2.5"];
/// Depth 2, seed 000's double win: O's win of board 8 is its third board in the bottom row.
pub(crate) const DOUBLE_WIN: &[&str] = &[
    "5.6", "6.0", "0.6", "6.1", "1.6", "6.2", "2.7", "7.3", "3.7", "7.4", "4.7", "7.5", "5.8",
    "8.0", "0.8", "8.4", "4.8", "8.8",
];
/// Depth 2, seed 000's closed draw: the last open board fills without a line, no global line.
const CLOSED_DRAW: &[&str] = &[
    "2.3", "3.2", "2.4", "4.2", "2.5", "5.0", "0.5", "5.1", "1.5", "5.2", "0.2", "6.0", "0.8",
    "8.4", "4.6", "6.3", "3.4", "4.5", "3.0", "6.6", "3.8", "8.1", "1.4", "4.8", "8.0", "1.0",
    "8.2", "7.2", "8.3", "1.1", "1.6", "7.3", "7.0", "1.2", "8.7", "7.5", "7.4", "8.5", "7.8",
    "8.6", "8.8",
];

both_backends! {
    async fn a_practice_match_starts_at_once_and_the_cpu_answers(app: TestApp) {
        let p = app.register("pat").await;
        let created = app
            .post("/api/v1/matches", &json!({"opponent": "cpu", "depth": 2, "time_control": NO_CLOCK(), "cpu_level": 1}), Some(&p.token))
            .await;
        created.expect(201);
        let s = &created.body;
        assert_eq!(s["mode"], "practice");
        assert_eq!(s["rated"], false);
        assert_eq!(s["status"], "active");
        assert_eq!(s["ply"], 0);
        assert_eq!(s["turn"], "x");
        assert_eq!(s["players"]["x"]["id"], p.id.as_str());
        assert_eq!(s["players"]["x"]["controller"], "human");
        assert_eq!(s["players"]["x"]["connected"], true);
        assert_eq!(s["players"]["o"]["controller"], "cpu");
        assert_eq!(s["players"]["o"]["id"], Value::Null);
        assert_eq!(s["board"]["cells"].as_str().unwrap(), ".".repeat(81));
        assert_eq!(s["board"]["boards"], json!({}));
        assert_eq!(s["next"]["board"], json!([]));
        assert_eq!(s["next"]["legal"].as_array().unwrap().len(), 81);
        assert_eq!(s["clocks"]["running"], Value::Null);
        assert_eq!(s["result"], Value::Null);
        let id = s["id"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 10);

        app.play(&p, &id, 0, "4.4").await.expect(200);
        let state = eventually(Duration::from_secs(10), "the CPU's answer", || async {
            let s = app.state(&p, &id).await;
            (s["ply"] == 2).then_some(s)
        })
        .await;
        assert_eq!(state["turn"], "x");
        let cells = state["board"]["cells"].as_str().unwrap();
        assert_eq!(cells.matches('o').count(), 1);
        // The CPU was sent to board 4 and played there.
        assert_eq!(&cells[36..45].replace('.', "").len(), &2);
        app.assert_consistent(&id).await;
    }

    async fn the_cpu_moves_first_when_the_player_takes_o_at_any_depth(app: TestApp) {
        let p = app.register("otto").await;
        for depth in [1, 3, 4] {
            let created = app
                .post("/api/v1/matches", &json!({"opponent": "cpu", "depth": depth, "cpu_level": 2, "seat": "o"}), Some(&p.token))
                .await;
            created.expect(201);
            assert_eq!(created.body["players"]["o"]["id"], p.id.as_str());
            assert_eq!(created.body["board"]["cells"].as_str().unwrap().len(), 9usize.pow(depth));
            let id = created.body["id"].as_str().unwrap().to_owned();
            eventually(Duration::from_secs(10), "the CPU's first move", || async {
                (app.state(&p, &id).await["ply"] == 1).then_some(())
            })
            .await;
        }
    }

    async fn practice_requests_are_validated(app: TestApp) {
        let p = app.register("val").await;
        for (body, field) in [
            (json!({"opponent": "human"}), "opponent"),
            (json!({"opponent": "cpu", "depth": 5}), "depth"),
            (json!({"opponent": "cpu", "depth": 0}), "depth"),
            (json!({"opponent": "cpu", "cpu_level": 6}), "cpu_level"),
            (json!({"opponent": "cpu", "cpu_level": 0}), "cpu_level"),
            (json!({"opponent": "cpu", "seat": "z"}), "seat"),
            (json!({"opponent": "cpu", "time_control": {"kind": "clock", "initial_ms": 5}}), "time_control.initial_ms"),
            (json!({"opponent": "cpu", "time_control": {"kind": "per_turn", "turn_ms": 999999999}}), "time_control.turn_ms"),
        ] {
            let reply = app.post("/api/v1/matches", &body, Some(&p.token)).await;
            reply.expect_problem(422, "validation_failed");
            assert_eq!(reply.body["errors"][0]["field"], field, "{body}");
        }
        let reply = app.post("/api/v1/matches", &json!({"opponent": "cpu", "time_control": {"kind": "sundial"}}), Some(&p.token)).await;
        reply.expect_problem(422, "validation_failed");
        app.post("/api/v1/matches", &json!({"opponent": "cpu"}), None).await.expect_problem(401, "unauthorized");
        // Nothing was created.
        let mine = app.get("/api/v1/me/matches", Some(&p.token)).await;
        assert_eq!(mine.body["items"], json!([]));
    }

    async fn a_room_game_ends_by_three_in_a_row(app: TestApp) {
        let (x, o) = (app.register("xavier").await, app.register("olga").await);
        let id = app.room_match(&x, &o, 1, NO_CLOCK()).await;
        let last = app.play_script(&x, &o, &id, X_TOP_ROW).await;
        let s = &last.body;
        assert_eq!(s["status"], "finished");
        assert_eq!(s["mode"], "casual");
        assert_eq!(s["turn"], Value::Null);
        assert_eq!(s["result"]["winner"], "x");
        assert_eq!(s["result"]["reason"], "three_in_a_row");
        assert_eq!(s["result"]["rating_changes"], Value::Null);
        assert_eq!(s["board"]["boards"], json!({"": "x"}));
        assert_eq!(s["next"], json!({"board": null, "legal": []}));
        assert!(s["finished_at"].is_string());
        app.play(&o, &id, 5, "5").await.expect_problem(409, "match_over");
        app.assert_consistent(&id).await;
        let moves = app.get(&format!("/api/v1/matches/{id}/moves"), Some(&x.token)).await;
        moves.expect(200);
        assert_eq!(moves.body.as_array().unwrap().len(), 5);
        assert_eq!(moves.body[4]["seat"], "x");
        assert_eq!(moves.body[4]["address"], json!([2]));
        assert_eq!(moves.body[4]["ply"], 4);
    }

    async fn a_room_game_ends_in_a_draw(app: TestApp) {
        let (x, o) = (app.register("dora").await, app.register("drew").await);
        let id = app.room_match(&x, &o, 1, NO_CLOCK()).await;
        let last = app.play_script(&x, &o, &id, DEPTH_ONE_DRAW).await;
        assert_eq!(last.body["result"]["winner"], Value::Null);
        assert_eq!(last.body["result"]["reason"], "draw");
        assert_eq!(last.body["board"]["boards"], json!({"": "draw"}));
        app.assert_consistent(&id).await;
    }

    async fn the_worked_examples_of_the_rules_play_out_over_http(app: TestApp) {
        let (x, o) = (app.register("wex").await, app.register("weo").await);

        // Forced board: X plays the centre of the top-left board; O must play in board [4].
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let s = app.play(&x, &id, 0, "0.4").await;
        assert_eq!(s.body["next"]["board"], json!([4]));
        let expected: Vec<String> = (0..9).map(|c| format!("4.{c}")).collect();
        assert_eq!(legal_of(&s.body), expected);
        let wrong = app.play(&o, &id, 1, "0.0").await;
        wrong.expect_problem(422, "illegal_move");
        assert_eq!(wrong.body["reason"], "wrong_board");

        // Free move: O sends X to the won board [2]; X may play anywhere open.
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let mut script = X_WINS_BOARD_TWO.to_vec();
        script.push("5.2");
        let s = app.play_script(&x, &o, &id, &script).await;
        assert_eq!(s.body["board"]["boards"], json!({"2": "x"}));
        assert_eq!(s.body["next"]["board"], json!([]));
        assert_eq!(s.body["next"]["legal"].as_array().unwrap().len(), 81 - 9 - 3);
        let closed = app.play(&x, &id, 6, "2.0").await;
        closed.expect_problem(422, "illegal_move");
        assert_eq!(closed.body["reason"], "board_closed");
        app.play(&x, &id, 6, "7.7").await.expect(200);

        // Double win: O's local win is its third board in a row, and the match.
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let s = app.play_script(&x, &o, &id, DOUBLE_WIN).await;
        assert_eq!(s.body["status"], "finished");
        assert_eq!(s.body["result"]["winner"], "o");
        assert_eq!(s.body["result"]["reason"], "three_in_a_row");
        assert_eq!(s.body["board"]["boards"], json!({"": "o", "6": "o", "7": "o", "8": "o"}));
        app.assert_consistent(&id).await;

        // Closed draw: the last open board fills without a line, no global line.
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let s = app.play_script(&x, &o, &id, CLOSED_DRAW).await;
        assert_eq!(s.body["result"]["winner"], Value::Null);
        assert_eq!(s.body["result"]["reason"], "draw");
        assert_eq!(s.body["board"]["boards"][""], "draw");
        assert_eq!(s.body["board"]["boards"]["8"], "draw");
        app.assert_consistent(&id).await;
    }

    async fn every_illegal_move_gets_its_reason_and_changes_nothing(app: TestApp) {
        let (x, o) = (app.register("ilx").await, app.register("ilo").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        for (address, reason) in [
            (json!([4]), "bad_address"),
            (json!([4, 4, 4]), "bad_address"),
            (json!([]), "bad_address"),
            (json!([9, 0]), "bad_address"),
            (json!([-1, 0]), "bad_address"),
            (json!([4, 300]), "bad_address"),
        ] {
            let reply = app.post(&format!("/api/v1/matches/{id}/moves"), &json!({"ply": 0, "address": address}), Some(&x.token)).await;
            reply.expect_problem(422, "illegal_move");
            assert_eq!(reply.body["reason"], reason, "{address}");
        }
        app.play(&x, &id, 0, "4.4").await.expect(200);
        let occupied = app.play(&o, &id, 1, "4.4").await;
        occupied.expect_problem(422, "illegal_move");
        assert_eq!(occupied.body["reason"], "cell_occupied");
        let wrong = app.play(&o, &id, 1, "3.3").await;
        assert_eq!(wrong.body["reason"], "wrong_board");
        let bad_types = app.post(&format!("/api/v1/matches/{id}/moves"), &json!({"ply": 1, "address": "4.0"}), Some(&o.token)).await;
        bad_types.expect_problem(422, "validation_failed");
        assert_eq!(bad_types.body["errors"][0]["field"], "address");
        let negative = app.post(&format!("/api/v1/matches/{id}/moves"), &json!({"ply": -1, "address": [4, 0]}), Some(&o.token)).await;
        negative.expect_problem(422, "validation_failed");
        let s = app.state(&o, &id).await;
        assert_eq!(s["ply"], 1);
        app.assert_consistent(&id).await;
    }

    async fn turn_seat_ply_and_retry_rules_hold(app: TestApp) {
        let (x, o, stranger) = (app.register("trx").await, app.register("tro").await, app.register("trs").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        app.play(&o, &id, 0, "4.4").await.expect_problem(409, "not_your_turn");
        app.play(&stranger, &id, 0, "4.4").await.expect_problem(403, "forbidden");
        app.post(&format!("/api/v1/matches/{id}/resign"), &json!({}), Some(&stranger.token)).await.expect_problem(403, "forbidden");
        let stale = app.play(&x, &id, 3, "4.4").await;
        stale.expect_problem(409, "stale_ply");
        assert_eq!(stale.body["current_ply"], 0);
        let first = app.play(&x, &id, 0, "4.4").await;
        first.expect(200);
        assert_eq!(first.body["ply"], 1);
        // The response was lost; the client sends the same move again.
        let retry = app.play(&x, &id, 0, "4.4").await;
        retry.expect(200);
        assert_eq!(retry.body["ply"], 1);
        assert_eq!(retry.body["board"]["cells"].as_str().unwrap().matches('x').count(), 1);
        // A different move at the old ply is stale, not a retry.
        let other = app.play(&x, &id, 0, "4.5").await;
        other.expect_problem(409, "stale_ply");
        assert_eq!(other.body["current_ply"], 1);
        // O resending X's move is not a retry either.
        app.play(&o, &id, 0, "4.4").await.expect_problem(409, "stale_ply");
        app.get(&format!("/api/v1/matches/{id}/moves"), Some(&stranger.token)).await.expect(200);
        app.get("/api/v1/matches/nope123456", Some(&x.token)).await.expect_problem(404, "not_found");
        app.play(&x, "nope123456", 0, "4.4").await.expect_problem(404, "not_found");
        app.assert_consistent(&id).await;
    }

    async fn a_player_may_resign_on_either_turn(app: TestApp) {
        let (x, o) = (app.register("rex").await, app.register("reo").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 60000})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        // X resigns while O is to move.
        let r = app.post(&format!("/api/v1/matches/{id}/resign"), &json!({}), Some(&x.token)).await;
        r.expect(200);
        assert_eq!(r.body["result"]["winner"], "o");
        assert_eq!(r.body["result"]["reason"], "resignation");
        app.post(&format!("/api/v1/matches/{id}/resign"), &json!({}), Some(&o.token)).await.expect_problem(409, "match_over");
        app.assert_consistent(&id).await;
    }

    async fn the_etag_answers_304_until_the_match_changes(app: TestApp) {
        let (x, o) = (app.register("etx").await, app.register("eto").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let path = format!("/api/v1/matches/{id}");
        let first = app.get(&path, Some(&x.token)).await;
        let tag = first.header("etag").unwrap().to_owned();
        let same = app.call_raw("GET", &path, None, Some(&x.token), &[("if-none-match", &tag)]).await;
        same.expect(304);
        assert!(same.text.is_empty());
        app.play(&x, &id, 0, "4.4").await.expect(200);
        let changed = app.call_raw("GET", &path, None, Some(&x.token), &[("if-none-match", &tag)]).await;
        changed.expect(200);
        assert_ne!(changed.header("etag").unwrap(), tag);
    }

    async fn my_active_matches_list_the_ones_to_rejoin(app: TestApp) {
        let (x, o) = (app.register("lix").await, app.register("lio").await);
        let done = app.room_match(&x, &o, 1, NO_CLOCK()).await;
        app.play_script(&x, &o, &done, X_TOP_ROW).await;
        let live = app.room_match(&x, &o, 1, NO_CLOCK()).await;
        let active = app.get("/api/v1/me/matches?status=active", Some(&x.token)).await;
        active.expect(200);
        let ids: Vec<&str> = active.body["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [live.as_str()]);
        assert_eq!(active.body["items"][0]["seat"], "x");
        // Both players named, so a list needs no look-up per row.
        assert_eq!(active.body["items"][0]["players"], json!({
            "x": {"id": x.id, "username": "lix", "bot": false},
            "o": {"id": o.id, "username": "lio", "bot": false},
        }));
        let solo = app.register("lip").await;
        app.post("/api/v1/matches", &json!({"opponent": "cpu", "seat": "o"}), Some(&solo.token)).await.expect(201);
        let practice = app.get("/api/v1/me/matches", Some(&solo.token)).await;
        assert_eq!(practice.body["items"][0]["players"], json!({
            "x": null,
            "o": {"id": solo.id, "username": "lip", "bot": false},
        }), "the CPU's seat names no player");
        let all = app.get("/api/v1/me/matches?limit=1", Some(&o.token)).await;
        assert_eq!(all.body["items"].as_array().unwrap().len(), 1);
        let cursor = all.body["next_cursor"].as_str().unwrap().to_owned();
        let next = app.get(&format!("/api/v1/me/matches?limit=1&cursor={cursor}"), Some(&o.token)).await;
        assert_eq!(next.body["items"].as_array().unwrap().len(), 1);
        assert_ne!(next.body["items"][0]["id"], all.body["items"][0]["id"]);
        assert_eq!(next.body["next_cursor"], Value::Null);
        app.get("/api/v1/me/matches?status=bogus", Some(&o.token)).await.expect_problem(422, "validation_failed");
        app.get("/api/v1/me/matches?limit=0", Some(&o.token)).await.expect_problem(422, "validation_failed");
        app.get("/api/v1/me/matches?cursor=%%%", Some(&o.token)).await.expect_problem(422, "validation_failed");
    }

    async fn a_rematch_in_a_room_swaps_x_and_o(app: TestApp) {
        let (host, guest) = (app.register("host").await, app.register("guest").await);
        let room = app.post("/api/v1/rooms", &json!({"depth": 1, "time_control": NO_CLOCK()}), Some(&host.token)).await;
        room.expect(201);
        assert_eq!(room.body["match_id"], Value::Null);
        let code = room.body["code"].as_str().unwrap().to_owned();
        assert_eq!(code.len(), 6);
        app.post(&format!("/api/v1/rooms/{code}/join"), &json!({}), Some(&host.token)).await.expect_problem(409, "own_room");
        let joined = app.post(&format!("/api/v1/rooms/{}/join", code.to_lowercase()), &json!({}), Some(&guest.token)).await;
        joined.expect(200);
        let first = joined.body["match_id"].as_str().unwrap().to_owned();
        let seated = |body: &Value| {
            assert_eq!(body["host"], json!({"id": host.id, "username": host.username, "bot": false}), "{body}");
            assert_eq!(body["guest"], json!({"id": guest.id, "username": guest.username, "bot": false}), "{body}");
        };
        assert_eq!(room.body["host"], json!({"id": host.id, "username": host.username, "bot": false}));
        assert_eq!(room.body["guest"], Value::Null);
        seated(&joined.body);
        let third = app.register("third").await;
        app.post(&format!("/api/v1/rooms/{code}/join"), &json!({}), Some(&third.token)).await.expect_problem(409, "room_full");
        let early = app.post(&format!("/api/v1/rooms/{code}/rematch"), &json!({}), Some(&guest.token)).await;
        early.expect_problem(409, "match_in_progress");
        assert_eq!(early.body["match_id"], first.as_str());
        app.play_script(&host, &guest, &first, X_TOP_ROW).await;

        let again = app.post(&format!("/api/v1/rooms/{code}/rematch"), &json!({"after_match_id": first}), Some(&guest.token)).await;
        again.expect(200);
        let second = again.body["match_id"].as_str().unwrap().to_owned();
        assert_ne!(second, first);
        seated(&again.body);
        // The host asks too: the same new game, not an error.
        let same = app.post(&format!("/api/v1/rooms/{code}/rematch"), &json!({"after_match_id": first}), Some(&host.token)).await;
        same.expect(200);
        assert_eq!(same.body["match_id"], second.as_str());
        seated(&same.body);
        let s = app.state(&host, &second).await;
        assert_eq!(s["players"]["x"]["id"], guest.id.as_str(), "the guest moves first in the rematch");
        assert_eq!(s["players"]["o"]["id"], host.id.as_str());
        assert_eq!(s["room_code"], code.as_str());
        // An outsider learns nothing about the code: the answer is a missing room's.
        let outsider = app.post(&format!("/api/v1/rooms/{code}/rematch"), &json!({}), Some(&third.token)).await;
        outsider.expect_problem(404, "not_found");
        let missing = app.post("/api/v1/rooms/ZZZZZZ/rematch", &json!({}), Some(&third.token)).await;
        missing.expect_problem(404, "not_found");
        assert_eq!(outsider.body, missing.body);
        app.get("/api/v1/rooms/ZZZZZZ", Some(&host.token)).await.expect_problem(404, "not_found");
        app.get("/api/v1/rooms/bad", Some(&host.token)).await.expect_problem(404, "not_found");
    }

    async fn the_clock_sweeper_ends_a_match_whose_clock_ran_out(app: TestApp) {
        let (x, o) = (app.register("clx").await, app.register("clo").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 10000, "increment_ms": 1000})).await;
        let mut events = EventStream::open(&app, &format!("/api/v1/matches/{id}/events"), &o.token, None).await;
        app.time.advance(4_000);
        let s = app.play(&x, &id, 0, "4.4").await;
        assert_eq!(s.body["clocks"]["x_ms"], 7_000, "10 s - 4 s + 1 s increment");
        assert_eq!(s.body["clocks"]["o_ms"], 10_000);
        assert_eq!(s.body["clocks"]["running"], "o");
        // O lets the clock run out; nobody calls the server.
        app.time.advance(10_000);
        let ended = events.state_where(Duration::from_secs(5), |s| s["status"] == "finished").await;
        assert_eq!(ended["result"]["winner"], "x");
        assert_eq!(ended["result"]["reason"], "timeout");
        assert_eq!(ended["clocks"]["o_ms"], 0);
        app.assert_consistent(&id).await;
    }

    async fn the_per_turn_limit_ends_a_match_when_a_turn_runs_out(app: TestApp) {
        let (x, o) = (app.register("ptx").await, app.register("pto").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "per_turn", "turn_ms": 30000})).await;
        app.time.advance(29_000);
        let s = app.play(&x, &id, 0, "4.4").await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["o_ms"], 30_000);
        assert_eq!(s.body["clocks"]["x_ms"], 30_000);
        app.time.advance(30_000);
        let ended = eventually(Duration::from_secs(5), "the per-turn forfeit", || async {
            let s = app.state(&x, &id).await;
            (s["status"] == "finished").then_some(s)
        })
        .await;
        assert_eq!(ended["result"]["winner"], "x");
        assert_eq!(ended["result"]["reason"], "timeout");
        app.assert_consistent(&id).await;
    }

    async fn fifty_concurrent_moves_for_one_ply_apply_exactly_one(app: TestApp) {
        let (x, o) = (app.register("ccx").await, app.register("cco").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let squares: Vec<String> = (0..50).map(|i| format!("{}.{}", (i / 9) % 9, i % 9)).collect();
        let replies = futures_util::future::join_all(squares.iter().map(|sq| app.play(&x, &id, 0, sq))).await;
        let applied: Vec<&str> = replies
            .iter()
            .zip(&squares)
            .filter(|(r, _)| r.status.as_u16() == 200)
            .map(|(_, sq)| sq.as_str())
            .collect();
        let state = app.state(&x, &id).await;
        assert_eq!(state["ply"], 1, "exactly one move was applied");
        let cells = state["board"]["cells"].as_str().unwrap();
        let played = cells.find('x').unwrap();
        let played = format!("{}.{}", played / 9, played % 9);
        for (reply, square) in replies.iter().zip(&squares) {
            match reply.status.as_u16() {
                200 => assert_eq!(square, &played, "only the applied move (or its retry) answers 200"),
                409 => {
                    assert_eq!(reply.code(), "stale_ply", "{}", reply.text);
                    assert_eq!(reply.body["current_ply"], 1);
                }
                other => panic!("unexpected {other}: {}", reply.text),
            }
        }
        assert!(applied.contains(&played.as_str()));
        app.assert_consistent(&id).await;
    }

    async fn the_event_stream_sends_the_state_on_connect_and_after_each_move(app: TestApp) {
        let (x, o) = (app.register("evx").await, app.register("evo").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let path = format!("/api/v1/matches/{id}/events");
        let mut stream = EventStream::open(&app, &path, &o.token, None).await;
        let first = stream.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!(first["ply"], 0);
        app.play(&x, &id, 0, "4.4").await.expect(200);
        let after = stream.state_where(Duration::from_secs(5), |s| s["ply"] == 1).await;
        assert_eq!(after["next"]["board"], json!([4]));
        // Resuming from the current version sends nothing until the next change.
        let version = after["version"].as_i64().unwrap() as i32;
        let mut resumed = EventStream::open(&app, &path, &x.token, Some(version)).await;
        assert!(resumed.next_event(Duration::from_millis(300)).await.is_none());
        app.play(&o, &id, 1, "4.0").await.expect(200);
        let next = resumed.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!(next["ply"], 2);
        // A Last-Event-ID past every version this match had (one kept from
        // another match) starts over: the current state comes at once.
        let mut ahead = EventStream::open(&app, &path, &x.token, Some(999_999)).await;
        let now = ahead.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!((now["ply"].clone(), now["version"].clone()), (json!(2), next["version"].clone()));
        app.play(&x, &id, 2, "0.4").await.expect(200);
        let later = ahead.state_where(Duration::from_secs(5), |_| true).await;
        assert_eq!(later["ply"], 3, "and every change after it");
        // Without a token the stream is refused.
        app.get(&path, None).await.expect_problem(401, "unauthorized");
        // A Last-Event-ID that is no version is refused, not read as "from the start".
        for bad in ["abc", "-1", "1.5"] {
            app.call_raw("GET", &path, None, Some(&x.token), &[("Last-Event-ID", bad)])
                .await
                .expect_problem(422, "validation_failed");
        }
    }
}

#[actix_web::test]
async fn a_move_after_the_flag_is_refused_and_ends_the_match_on_time() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(mut config) = TestConfig::new(backend) else {
            continue;
        };
        config.config.workers = uttt::config::Workers::NONE; // no sweeper: the late move itself must end it
        let app = TestApp::start(config).await;
        let (x, o) = (app.register("flx").await, app.register("flo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 10000}))
            .await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        app.time.advance(10_000);
        let late = app.play(&o, &id, 1, "4.0").await;
        late.expect_problem(409, "match_over");
        let s = app.state(&x, &id).await;
        assert_eq!(s["status"], "finished");
        assert_eq!(s["result"]["winner"], "x");
        assert_eq!(s["result"]["reason"], "timeout");
        assert_eq!(s["ply"], 1);
        app.assert_consistent(&id).await;
        // The sweeper tick finds nothing more to do, twice.
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 0);
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 0);
    }
}

#[actix_web::test]
async fn a_move_that_arrived_in_time_is_judged_before_the_flag_falls() {
    use uttt::service::matches::play::{self, Choice, MoveOutcome, Mover};
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(mut config) = TestConfig::new(backend) else {
            continue;
        };
        config.config.workers = uttt::config::Workers::NONE;
        config.config.flag_settle = std::time::Duration::from_millis(500);
        let app = TestApp::start(config).await;
        // Four games whose O has 10 s from the same instant.
        let mut games = Vec::new();
        for g in 0..4 {
            let (x, o) = (
                app.register(&format!("setx{g}")).await,
                app.register(&format!("seto{g}")).await,
            );
            let id = app
                .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 10000}))
                .await;
            app.play(&x, &id, 0, "4.4").await.expect(200);
            games.push((x, o, id));
        }
        let [
            (x, o, waiting),
            (x2, o2, late),
            (x3, _, quiet),
            (x4, _, resigned),
        ] = &games[..]
        else {
            unreachable!()
        };
        let id = waiting.clone();
        let deadline = app
            .ctx
            .db
            .run(move |conn| uttt::store::matches::get(conn, &id))
            .await
            .unwrap()
            .unwrap()
            .deadline_at
            .unwrap();

        // O's time ran out 100 ms ago: within the settling time, neither the
        // sweeper nor a read ends a match…
        app.time.advance(10_000 + 100);
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 0);
        assert_eq!(app.state(x, waiting).await["status"], "active");
        // …so O's move, which arrived 1 ms before the deadline and waited for
        // the row meanwhile, is judged by its arrival and accepted.
        let (id, growth) = (waiting.clone(), app.ctx.config.rating_growth);
        let mover = Mover::Player(o.id.as_str().into());
        let square = Choice::Address(Some(uttt::rules::Address::new(&[4, 0]).unwrap()));
        let outcome = app
            .ctx
            .db
            .write(move |conn| {
                play::play(conn, &id, &mover, 1, &square, None, deadline - 1, growth)
            })
            .await
            .unwrap();
        assert!(
            matches!(outcome, MoveOutcome::Applied(_)),
            "the move in time is played"
        );
        // X resigning now, 100 ms past O's deadline, resigns: O's move could
        // still be on its way, so the flag has not fallen for X to win by.
        app.post(
            &format!("/api/v1/matches/{resigned}/resign"),
            &json!({}),
            Some(&x4.token),
        )
        .await
        .expect(200);
        let s = app.state(x4, resigned).await;
        assert_eq!(
            (s["result"]["reason"].clone(), s["result"]["winner"].clone()),
            (json!("resignation"), json!("o")),
            "{s}"
        );
        // A move arriving now is late, settling time or not.
        app.play(o2, late, 1, "4.0")
            .await
            .expect_problem(409, "match_over");
        assert_eq!(app.state(x2, late).await["result"]["reason"], "timeout");

        // Past the settling time the sweeper ends the lapsed match with no
        // client calling.
        app.time.advance(400);
        assert_eq!(uttt::worker::clock::tick(&app.ctx).await.unwrap(), 1);
        let ended = app.state(x3, quiet).await;
        assert_eq!(ended["result"]["reason"], "timeout", "{ended}");
        assert_eq!(ended["result"]["winner"], "x");
        assert_eq!(app.state(x, waiting).await["status"], "active");
        for (_, _, id) in &games {
            app.assert_consistent(id).await;
        }
    }
}

#[actix_web::test]
async fn a_stream_on_one_instance_sees_a_move_made_on_another() {
    let Some(app) = TestApp::spawn_postgres().await else {
        return;
    };
    assert!(
        app.ctx.config.redis_url.is_some(),
        "set TEST_REDIS_URL with TEST_DATABASE_URL"
    );
    let (x, o) = (app.register("twx").await, app.register("two").await);
    let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
    let (other, _ctx, _handle) = app.start_sibling().await;
    let mut stream = EventStream::open_at(
        &other,
        &app.client,
        &format!("/api/v1/matches/{id}/events"),
        &o.token,
        None,
    )
    .await;
    stream
        .state_where(Duration::from_secs(5), |s| s["ply"] == 0)
        .await;
    // The move goes to the first instance; the stream is on the second.
    app.play(&x, &id, 0, "4.4").await.expect(200);
    let seen = stream
        .state_where(Duration::from_secs(5), |s| s["ply"] == 1)
        .await;
    assert_eq!(
        seen["board"]["cells"].as_str().unwrap().chars().nth(40),
        Some('x')
    );
    let _ = addr("4.4");
}

#[actix_web::test]
async fn on_shutdown_event_streams_close_with_a_retry_hint() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let (x, o) = (app.register("shx").await, app.register("sho").await);
    let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
    let mut stream = EventStream::open(
        &app,
        &format!("/api/v1/matches/{id}/events"),
        &o.token,
        None,
    )
    .await;
    let mut mine = EventStream::open(&app, "/api/v1/me/events", &o.token, None).await;
    stream.state_where(Duration::from_secs(5), |_| true).await;
    app.ctx.shutdown.trigger();
    for s in [&mut stream, &mut mine] {
        assert!(
            s.closes_within(Duration::from_secs(5)).await,
            "the stream is closed"
        );
        assert!(s.buffered().contains("retry: 1000\n"), "{:?}", s.buffered());
    }
}

both_backends! {
    async fn a_moves_answer_is_json_and_the_state_its_stream_receives(app: TestApp) {
        let (x, o) = (app.register("echo_x").await, app.register("echo_o").await);
        let id = app.room_match(&x, &o, 2, NO_CLOCK()).await;
        let mut stream =
            EventStream::open(&app, &format!("/api/v1/matches/{id}/events"), &o.token, None).await;
        stream
            .state_where(Duration::from_secs(5), |s| s["ply"] == 0)
            .await;
        for (ply, mover, square) in [(0, &x, "4.4"), (1, &o, "4.0")] {
            let reply = app.play(mover, &id, ply, square).await;
            reply.expect(200);
            assert_eq!(reply.header("content-type"), Some("application/json"));
            let seen = stream
                .state_where(Duration::from_secs(5), |s| s["ply"] == ply + 1)
                .await;
            // Apart from what a later re-publication (a presence change) moves.
            let settled = |mut state: Value| {
                state["version"] = Value::Null;
                state["clocks"]["server_time"] = Value::Null;
                state
            };
            assert_eq!(settled(seen), settled(reply.body.clone()), "ply {ply}");
        }
    }
}
