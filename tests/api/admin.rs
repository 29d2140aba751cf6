//! Administration: match history filters and pagination, the export and
//! `uttt replay`, player lookup, and who may see them.

use std::collections::HashSet;

use serde_json::{Value, json};
use uttt::rules::{Address, Depth, Seat, Square};
use uttt::service::accounts::Role;
use uttt::service::matches::create::{self, NewMatch, SeatSpec};
use uttt::service::matches::record::{MatchStatus, Mode, StoredSeat};

use crate::both_backends;
use crate::support::{Player, TestApp};

const DAY: i64 = 24 * 3600 * 1000;

pub(crate) async fn admin(app: &TestApp, name: &str) -> Player {
    let p = app.register(name).await;
    let username = p.username.clone();
    app.ctx
        .db
        .run(move |conn| uttt::service::accounts::set_role(conn, &username, Role::Admin))
        .await
        .unwrap();
    p
}

/// What a seeded match is.
#[derive(Clone, Copy)]
struct Spec {
    mode: Mode,
    ladder: Option<&'static str>,
    moves: &'static [&'static str],
    /// `(winner, reason)` once finished.
    end: Option<(Option<Seat>, &'static str)>,
    days_ago: i64,
}

const X_ROW: &[&str] = &["0", "3", "1", "4", "2"];
const DRAW: &[&str] = &["0", "1", "2", "4", "3", "5", "7", "6", "8"];
const SHORT: &[&str] = &["4", "0"];

/// Inserts a depth-1 match between `x` and `o` as specified; returns its id.
async fn seed(app: &TestApp, x: &Player, o: &Player, spec: Spec) -> String {
    let now = app.ctx.time.now_ms();
    let created = now - spec.days_ago * DAY;
    let depth = Depth::new(1).unwrap();
    let mut row = create::new_row(
        NewMatch {
            mode: spec.mode,
            ladder: spec.ladder.map(str::to_owned),
            rated: false,
            depth,
            time_control: uttt::clock::TimeControl::TOURNAMENT,
            x: SeatSpec::player(&x.id),
            o: SeatSpec::player(&o.id),
            cpu_level: None,
            room_code: None,
        },
        created,
    )
    .unwrap();
    let squares: Vec<Square> = spec
        .moves
        .iter()
        .map(|m| Square::from_address(depth, &m.parse::<Address>().unwrap()).unwrap())
        .collect();
    row.position = uttt::rules::encode(depth, &squares);
    row.ply = squares.len() as i32;
    if let Some((winner, reason)) = spec.end {
        row.status = MatchStatus::Finished;
        row.to_move = None;
        row.deadline_at = None;
        row.winner = winner.map(StoredSeat);
        row.reason = Some(reason.parse().unwrap());
        row.finished_at = Some(created + 60_000);
    } else {
        row.to_move = Some(StoredSeat(Seat::to_move_at(row.ply as u32)));
        // The turn runs from now: a deadline days ago would let the clock
        // sweeper end the match while the test reads it.
        row.turn_started_at = now;
        row.deadline_at = Some(now + 600_000);
    }
    let id = row.id.clone();
    app.ctx
        .db
        .run(move |conn| -> Result<(), uttt::store::StoreError> {
            uttt::store::matches::insert(conn, &row)?;
            for (ply, sq) in squares.iter().enumerate() {
                uttt::store::matches::insert_move(
                    conn,
                    &uttt::store::matches::MoveRow {
                        match_id: row.id.to_string(),
                        ply: ply as i32,
                        seat: Seat::to_move_at(ply as u32).to_string(),
                        square: sq.index() as i32,
                        played_at: created + ply as i64 * 1000,
                        clock_ms: Some(600_000),
                        by_cpu: false,
                    },
                )?;
            }
            Ok(())
        })
        .await
        .unwrap();
    id.to_string()
}

fn ids(reply: &Value) -> Vec<String> {
    reply["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Reads every page of `query` (which must not set `limit`/`cursor`).
async fn all_pages(app: &TestApp, who: &Player, query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let sep = if query.is_empty() { "" } else { "&" };
        let path = match &cursor {
            Some(c) => format!("/api/v1/admin/matches?{query}{sep}limit=3&cursor={c}"),
            None => format!("/api/v1/admin/matches?{query}{sep}limit=3"),
        };
        let reply = app.get(&path, Some(&who.token)).await;
        reply.expect(200);
        out.extend(ids(&reply.body));
        match reply.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return out,
        }
    }
}

both_backends! {
    async fn only_admins_see_the_history(app: TestApp) {
        let plain = app.register("plainp").await;
        for path in [
            "/api/v1/admin/matches",
            "/api/v1/admin/matches/export",
            "/api/v1/admin/matches/abc",
            "/api/v1/admin/players?query=a",
        ] {
            app.get(path, Some(&plain.token)).await.expect_problem(403, "forbidden");
            app.get(path, None).await.expect_problem(401, "unauthorized");
        }
        let boss = admin(&app, "bossy").await;
        app.get("/api/v1/admin/matches", Some(&boss.token)).await.expect(200);
    }

    async fn every_filter_and_their_combinations_select_the_right_matches(app: TestApp) {
        let boss = admin(&app, "filterboss").await;
        let (a, b, c) = (app.quick_player("fa_one").await, app.quick_player("fb_two").await, app.quick_player("fc_three").await);
        let specs = [
            (&a, &b, Spec { mode: Mode::Ranked, ladder: Some("ultimate-10m"), moves: X_ROW, end: Some((Some(Seat::X), "three_in_a_row")), days_ago: 1 }),
            (&b, &c, Spec { mode: Mode::Ranked, ladder: Some("advanced-10m"), moves: DRAW, end: Some((None, "draw")), days_ago: 2 }),
            (&c, &a, Spec { mode: Mode::Casual, ladder: None, moves: SHORT, end: Some((Some(Seat::O), "timeout")), days_ago: 3 }),
            (&a, &c, Spec { mode: Mode::Practice, ladder: None, moves: SHORT, end: Some((Some(Seat::X), "resignation")), days_ago: 4 }),
            (&b, &a, Spec { mode: Mode::Ranked, ladder: Some("ultimate-10m"), moves: SHORT, end: None, days_ago: 5 }),
            (&c, &b, Spec { mode: Mode::Ranked, ladder: Some("ultimate-10m"), moves: SHORT, end: Some((Some(Seat::X), "resignation")), days_ago: 6 }),
        ];
        let mut made = Vec::new();
        for (x, o, spec) in specs {
            made.push(seed(&app, x, o, spec).await);
        }
        let get = |q: &'static str| {
            let app = &app;
            let boss = &boss;
            async move { all_pages(app, boss, q).await }
        };
        // Newest first.
        assert_eq!(get("").await, made);
        let pick = |idx: &[usize]| idx.iter().map(|&i| made[i].clone()).collect::<Vec<_>>();
        assert_eq!(get("ladder=ultimate-10m").await, pick(&[0, 4, 5]));
        assert_eq!(get("mode=ranked").await, pick(&[0, 1, 4, 5]));
        assert_eq!(get("mode=casual").await, pick(&[2]));
        assert_eq!(get("status=active").await, pick(&[4]));
        assert_eq!(get("status=finished").await, pick(&[0, 1, 2, 3, 5]));
        assert_eq!(get("result=x").await, pick(&[0, 3, 5]));
        assert_eq!(get("result=o").await, pick(&[2]));
        assert_eq!(get("result=draw").await, pick(&[1]));
        assert_eq!(get("reason=resignation").await, pick(&[3, 5]));
        assert_eq!(get("reason=timeout").await, pick(&[2]));
        // The player filter takes a username (any case), player_id an id; either seat counts.
        assert_eq!(get("player=FA_ONE").await, pick(&[0, 2, 3, 4]));
        let by_id = all_pages(&app, &boss, &format!("player_id={}", c.id)).await;
        assert_eq!(by_id, pick(&[1, 2, 3, 5]));
        assert_eq!(get("player=nobody_here").await, Vec::<String>::new());
        // Time range on created_at: [from, to).
        let now = app.ctx.time.now_ms();
        let (from, to) = (uttt::time::rfc3339(now - 4 * DAY - 1000), uttt::time::rfc3339(now - 2 * DAY + 1000));
        let range = all_pages(&app, &boss, &format!("from={from}&to={to}")).await;
        assert_eq!(range, pick(&[1, 2, 3]));
        // Combinations.
        assert_eq!(get("mode=ranked&result=x&ladder=ultimate-10m").await, pick(&[0, 5]));
        assert_eq!(get("player=fb_two&status=finished&mode=ranked").await, pick(&[0, 1, 5]));
        assert_eq!(get("reason=resignation&player=fa_one").await, pick(&[3]));
        let combined = all_pages(&app, &boss, &format!("player=fc_three&from={from}&reason=timeout")).await;
        assert_eq!(combined, pick(&[2]));
        let listed = app.get("/api/v1/admin/matches?limit=1", Some(&boss.token)).await;
        let item = &listed.body["items"][0];
        assert_eq!(item["x"]["username"], "fa_one");
        assert_eq!(item["o"]["username"], "fb_two");
        assert_eq!(item["x"]["bot"], false);
        assert_eq!(item["reason"], "three_in_a_row");
    }

    async fn bad_filter_values_get_422_naming_the_parameter(app: TestApp) {
        let boss = admin(&app, "strictboss").await;
        for (query, field) in [
            ("mode=blitz", "mode"),
            ("status=paused", "status"),
            ("result=tie", "result"),
            ("reason=boredom", "reason"),
            ("from=yesterday", "from"),
            ("to=2026-13-01", "to"),
            ("from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "to"),
            ("ladder=Not%20A%20Ladder", "ladder"),
            ("limit=101", "limit"),
            ("limit=abc", "limit"),
            ("cursor=nonsense", "cursor"),
        ] {
            let reply = app.get(&format!("/api/v1/admin/matches?{query}"), Some(&boss.token)).await;
            reply.expect_problem(422, "validation_failed");
            assert_eq!(reply.body["errors"][0]["field"], field, "{query}: {}", reply.text);
            let export = app.get(&format!("/api/v1/admin/matches/export?{query}"), Some(&boss.token)).await;
            if !["limit", "cursor"].contains(&field) {
                export.expect_problem(422, "validation_failed");
            }
        }
        app.get("/api/v1/admin/players", Some(&boss.token)).await.expect_problem(422, "validation_failed");
        app.get("/api/v1/admin/players?query=a%20b", Some(&boss.token)).await.expect_problem(422, "validation_failed");
    }

    async fn pages_neither_skip_nor_repeat_while_matches_arrive(app: TestApp) {
        let boss = admin(&app, "pageboss").await;
        let (a, b) = (app.quick_player("pg_a").await, app.quick_player("pg_b").await);
        let mut before = HashSet::new();
        for i in 0..25 {
            let spec = Spec { mode: Mode::Casual, ladder: None, moves: X_ROW, end: Some((Some(Seat::X), "three_in_a_row")), days_ago: 10 + i };
            before.insert(seed(&app, &a, &b, spec).await);
        }
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut arrived = 0;
        loop {
            let path = match &cursor {
                Some(c) => format!("/api/v1/admin/matches?limit=10&cursor={c}"),
                None => "/api/v1/admin/matches?limit=10".to_owned(),
            };
            let page = app.get(&path, Some(&boss.token)).await;
            seen.extend(ids(&page.body));
            // New matches arrive between pages.
            for _ in 0..3 {
                let spec = Spec { mode: Mode::Casual, ladder: None, moves: SHORT, end: None, days_ago: 0 };
                seed(&app, &b, &a, spec).await;
                arrived += 1;
            }
            match page.body["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert!(arrived >= 9);
        assert_eq!(seen.len(), 25, "no row twice, none skipped");
        assert_eq!(seen.iter().cloned().collect::<HashSet<_>>(), before);
    }

    async fn the_export_replays_cleanly_and_a_tampered_record_is_reported(app: TestApp) {
        let boss = admin(&app, "exportboss").await;
        let (a, b) = (app.quick_player("ex_a").await, app.quick_player("ex_b").await);
        // Real matches played over HTTP as well as seeded ones.
        let (x, o) = (app.register("expx").await, app.register("expo").await);
        let live = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play_script(&x, &o, &live, &["4.4", "4.0", "0.4"]).await;
        app.post(&format!("/api/v1/matches/{live}/resign"), &json!({}), Some(&o.token)).await.expect(200);
        for (i, (moves, end)) in [
            (X_ROW, Some((Some(Seat::X), "three_in_a_row"))),
            (DRAW, Some((None, "draw"))),
            (SHORT, Some((Some(Seat::O), "timeout"))),
            (SHORT, None),
        ]
        .into_iter()
        .enumerate()
        {
            seed(&app, &a, &b, Spec { mode: Mode::Casual, ladder: None, moves, end, days_ago: i as i64 + 1 }).await;
        }
        let export = app.get("/api/v1/admin/matches/export", Some(&boss.token)).await;
        export.expect(200);
        assert_eq!(export.header("content-type"), Some("application/x-ndjson"));
        let lines: Vec<&str> = export.text.lines().collect();
        assert_eq!(lines.len(), 5);
        let first: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["id"], live.as_str());
        assert_eq!(first["moves"], "4.4 4.0 0.4");
        assert_eq!(first["reason"], "resignation");
        let report = uttt::cli::replay::check_all(export.text.as_bytes()).unwrap();
        assert_eq!(report.records, 5);
        assert!(report.problems.is_empty(), "{:?}", report.problems);

        // The same through the command and a file.
        let file = app.ctx.config.data_dir.join("export.ndjson");
        std::fs::write(&file, &export.text).unwrap();
        let mut out = Vec::new();
        assert!(uttt::cli::replay::run(&uttt::cli::replay::ReplayArgs { file: file.clone() }, &mut out).unwrap());
        assert!(String::from_utf8(out).unwrap().contains("5 record(s), 5 consistent, 0 inconsistent"));

        // A record whose stored result does not follow from its moves is reported.
        let mut tampered: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(tampered["reason"], "three_in_a_row");
        tampered["winner"] = json!("o");
        let mut text = export.text.replace(lines[1], &tampered.to_string());
        text.push_str("{\"not\": \"a record\"}\n");
        let report = uttt::cli::replay::check_all(text.as_bytes()).unwrap();
        assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
        assert_eq!(report.problems[0].0, 2, "line 2");
        // Filters apply to the export too.
        let casual = app.get("/api/v1/admin/matches/export?status=active", Some(&boss.token)).await;
        assert_eq!(casual.text.lines().count(), 1);
    }

    async fn one_match_in_full_and_players_by_prefix(app: TestApp) {
        let boss = admin(&app, "detailboss").await;
        let (x, o) = (app.register("alpha_one").await, app.register("Alphabet").await);
        app.register("axb").await;
        app.register("a_b").await;
        let id = app.room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 60000, "increment_ms": 1000})).await;
        app.time.advance(3_000);
        app.play_script(&x, &o, &id, &["4.4", "4.0"]).await;
        let detail = app.get(&format!("/api/v1/admin/matches/{id}"), Some(&boss.token)).await;
        detail.expect(200);
        assert_eq!(detail.body["state"]["id"], id.as_str());
        assert_eq!(detail.body["moves"][0]["clock_ms"], 58_000);
        assert_eq!(detail.body["moves"][1]["by_cpu"], false);
        assert_eq!(detail.body["moves"][1]["address"], json!([4, 0]));
        assert_eq!(detail.body["rating_changes"], json!([]));
        app.get("/api/v1/admin/matches/nope", Some(&boss.token)).await.expect_problem(404, "not_found");

        let found = app.get("/api/v1/admin/players?query=ALPHA", Some(&boss.token)).await;
        let names: Vec<&str> = found.body["items"].as_array().unwrap().iter().map(|p| p["username"].as_str().unwrap()).collect();
        assert_eq!(names, ["alpha_one", "Alphabet"]);
        assert_eq!(found.body["items"][0]["bot"], false);
        let underscore = app.get("/api/v1/admin/players?query=a_", Some(&boss.token)).await;
        let names: Vec<&str> = underscore.body["items"].as_array().unwrap().iter().map(|p| p["username"].as_str().unwrap()).collect();
        assert_eq!(names, ["a_b"], "`_` is a character, not a wildcard");
        let paged = app.get("/api/v1/admin/players?query=a&limit=2", Some(&boss.token)).await;
        assert_eq!(paged.body["items"].as_array().unwrap().len(), 2);
        let cursor = paged.body["next_cursor"].as_str().unwrap();
        let rest = app.get(&format!("/api/v1/admin/players?query=a&limit=2&cursor={cursor}"), Some(&boss.token)).await;
        let first: Vec<&str> = paged.body["items"].as_array().unwrap().iter().map(|p| p["username"].as_str().unwrap()).collect();
        let second: Vec<&str> = rest.body["items"].as_array().unwrap().iter().map(|p| p["username"].as_str().unwrap()).collect();
        assert_eq!([first, second].concat(), ["a_b", "alpha_one", "Alphabet", "axb"]);
    }

    async fn players_see_finished_matches_in_profiles(app: TestApp) {
        let (x, o) = (app.register("histx").await, app.register("histo").await);
        let done = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        app.play_script(&x, &o, &done, X_ROW).await;
        app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        let list = app.get("/api/v1/players/HISTO/matches", Some(&x.token)).await;
        list.expect(200);
        assert_eq!(ids(&list.body), [done]);
        assert_eq!(list.body["items"][0]["winner"], "x");
        app.get("/api/v1/players/nobody_at_all/matches", Some(&x.token)).await.expect_problem(404, "not_found");
        app.get("/api/v1/players/histo/matches", None).await.expect_problem(401, "unauthorized");
    }
}
