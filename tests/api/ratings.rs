//! Ratings over time (RULES.md and API.md, "Ratings over time"): deviations
//! grown by inactivity wherever a rating is shown and when a game is rated,
//! leaderboard membership that changes with time, rating history,
//! head-to-head, and the recomputation of a ladder from its matches.

use crate::both_backends;
use serde_json::{Value, json};
use uttt::rating::{self, INITIAL, Rating, Score};
use uttt::service::recompute::{self, Recomputed};
use uttt::time::TimeSource;

use crate::ranked::{CLOSED_DRAW, LADDER, manual_app, ranked_pair};
use crate::support::{Backend, Player, TestApp};

const DAY: i64 = 86_400_000;

/// RULES.md's growth written out on its own: φ' = √(φ² + t·σ²) on the
/// Glicko-2 scale, t = days × 0.21436, at most 350.
fn grown(deviation: f64, volatility: f64, days: f64) -> f64 {
    let phi = deviation / 173.7178;
    let t = days * 0.21436;
    ((phi * phi + t * volatility * volatility).sqrt() * 173.7178).min(350.0)
}

fn close(a: f64, b: f64, within: f64) -> bool {
    (a - b).abs() <= within
}

async fn app_for(backend: Backend) -> Option<TestApp> {
    manual_app(backend, |c| c.matchmaking.window_start = 5000.0).await
}

/// `loser` resigns the ranked match `id`.
async fn resign(app: &TestApp, loser: &Player, id: &str) {
    app.post(
        &format!("/api/v1/matches/{id}/resign"),
        &json!({}),
        Some(&loser.token),
    )
    .await
    .expect(200);
}

/// A ranked game between `a` and `b` that `winner` wins (`None`: drawn); returns the match id.
async fn ranked_game(app: &TestApp, a: &Player, b: &Player, winner: Option<&Player>) -> String {
    let (id, x, o) = ranked_pair(app, a, b).await;
    match winner {
        Some(w) if w.id == x.id => resign(app, o, &id).await,
        Some(_) => resign(app, x, &id).await,
        None => {
            let last = app.play_script(x, o, &id, CLOSED_DRAW).await;
            assert_eq!(last.body["result"]["reason"], "draw");
        }
    }
    id
}

fn standing_on(body: &Value) -> Value {
    body["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ladder"] == LADDER)
        .unwrap()
        .clone()
}

async fn recomputed(app: &TestApp) -> Recomputed {
    let growth = app.ctx.config.rating_growth;
    app.ctx
        .db
        .run(move |conn| recompute::recompute(conn, LADDER, growth))
        .await
        .expect("recompute")
}

both_backends! {
    with app_for;
    async fn a_match_after_a_long_break_starts_from_the_grown_deviation(app: TestApp) {
        let (a, b, c) = (
            app.quick_player("lb_a").await,
            app.quick_player("lb_b").await,
            app.quick_player("lb_c").await,
        );
        app.set_rating(&a, LADDER, 1650.0, 60.0).await;
        app.set_rating(&b, LADDER, 1550.0, 70.0).await;
        ranked_game(&app, &a, &b, Some(&a)).await;
        let after_first = app.rating_row(&a, LADDER).await;
        assert!(after_first.deviation < 70.0);

        // 400 days without a game: profiles and /me show the grown deviation.
        app.time.advance(400 * DAY);
        let expect_dev = grown(after_first.deviation, after_first.volatility, 400.0);
        assert!(expect_dev > 110.0, "{expect_dev}");
        for body in [
            app.get(&format!("/api/v1/players/{}", a.username), None)
                .await
                .body,
            app.get("/api/v1/me", Some(&a.token)).await.body,
        ] {
            let standing = standing_on(&body);
            assert!(close(
                standing["deviation"].as_f64().unwrap(),
                expect_dev,
                0.006
            ));
            assert!(close(
                standing["rating"].as_f64().unwrap(),
                after_first.rating,
                0.006
            ));
            assert_eq!(
                standing["provisional"], true,
                "the grown deviation is above 110"
            );
        }
        // The stored row is untouched: growth is applied when read.
        assert_eq!(app.rating_row(&a, LADDER).await, after_first);

        // The next game starts from the grown deviation (c is new: 1500/350).
        let id = ranked_game(&app, &a, &c, Some(&a)).await;
        let a_before = Rating {
            rating: after_first.rating,
            deviation: expect_dev,
            volatility: after_first.volatility,
        };
        let state = app.state(&a, &id).await;
        let (a_expected, c_expected) = if state["players"]["x"]["id"] == a.id.as_str() {
            rating::after_game(a_before, INITIAL, Score::Win)
        } else {
            let (c_after, a_after) = rating::after_game(INITIAL, a_before, Score::Loss);
            (a_after, c_after)
        };
        let a_now = app.rating_row(&a, LADDER).await;
        let c_now = app.rating_row(&c, LADDER).await;
        assert!(
            close(a_now.rating, a_expected.rating, 1e-6),
            "{a_now:?} vs {a_expected:?}"
        );
        assert!(close(a_now.deviation, a_expected.deviation, 1e-6));
        assert!(close(a_now.volatility, a_expected.volatility, 1e-9));
        assert!(close(c_now.rating, c_expected.rating, 1e-6));
        // Without the break the same win would have moved the rating less.
        let stale = rating::after_game(
            Rating {
                deviation: after_first.deviation,
                ..a_before
            },
            INITIAL,
            Score::Win,
        )
        .0;
        assert!(a_now.rating - after_first.rating > stale.rating - after_first.rating + 1.0);
        // The recorded change starts from the grown deviation too.
        let changes = app
            .ctx
            .db
            .run(move |conn| uttt::store::ratings::changes(conn, &id))
            .await
            .unwrap();
        let mine = changes.iter().find(|ch| ch.player_id == a.id).unwrap();
        assert!(close(mine.deviation_before, expect_dev, 1e-9));
        assert_eq!(mine.rating_before, after_first.rating);
    }
}

async fn board(app: &TestApp, query: &str) -> Value {
    let reply = app
        .get(
            &format!("/api/v1/ladders/{LADDER}/leaderboard{query}"),
            None,
        )
        .await;
    reply.expect(200);
    reply.body
}

fn names(board: &Value) -> Vec<String> {
    board["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["player"]["username"].as_str().unwrap().to_owned())
        .collect()
}

both_backends! {
    with app_for;
    async fn leaderboard_membership_changes_as_time_passes_without_games(app: TestApp) {
        let (a, b) = (
            app.quick_player("mem_a").await,
            app.quick_player("mem_b").await,
        );
        app.set_rating(&a, LADDER, 1700.0, 50.0).await;
        app.set_rating(&b, LADDER, 1600.0, 95.0).await;
        ranked_game(&app, &a, &b, Some(&a)).await;
        let (ra, rb) = (
            app.rating_row(&a, LADDER).await,
            app.rating_row(&b, LADDER).await,
        );
        let played_at = app.time.now_ms();
        // Days until each grown deviation passes 110, from the formula alone.
        let days_to_110 = |dev: f64, vol: f64| {
            let (phi, limit) = (dev / 173.7178, 110.0 / 173.7178);
            (limit * limit - phi * phi) / (vol * vol) / 0.21436
        };
        let (da, db) = (
            days_to_110(ra.deviation, ra.volatility),
            days_to_110(rb.deviation, rb.volatility),
        );
        assert!(db + 2.0 < da, "b drops off first: {db} vs {da}");

        let now = board(&app, "").await;
        assert_eq!(names(&now), ["mem_a", "mem_b"]);
        assert_eq!(
            uttt::time::parse_rfc3339(now["as_of"].as_str().unwrap()),
            Some(played_at)
        );
        let first_page = board(&app, "?limit=1").await;
        let cursor = first_page["next_cursor"].as_str().unwrap().to_owned();

        // A day after b's deviation passed 110, without a game: b is off the board.
        let elapsed = ((db + 1.0) * DAY as f64) as i64;
        app.time.set(played_at + elapsed);
        let later = board(&app, "").await;
        assert_eq!(names(&later), ["mem_a"]);
        let shown = later["items"][0]["deviation"].as_f64().unwrap();
        let days = elapsed as f64 / DAY as f64;
        assert!(
            close(shown, grown(ra.deviation, ra.volatility, days), 0.006),
            "{shown}"
        );
        assert!(shown <= 110.0 && shown > ra.deviation);
        let b_profile = app
            .get(&format!("/api/v1/players/{}", b.username), None)
            .await;
        let b_now = standing_on(&b_profile.body);
        assert_eq!(b_now["provisional"], true);
        assert!(b_now["deviation"].as_f64().unwrap() > 110.0);
        // A cursor keeps its board's time: page 2 of the earlier board still has b.
        let page2 = board(&app, &format!("?limit=1&cursor={cursor}")).await;
        assert_eq!(names(&page2), ["mem_b"]);
        assert_eq!(page2["items"][0]["rank"], 2);
        assert_eq!(page2["as_of"], first_page["as_of"]);

        // Past a's bound too: nobody is established.
        app.time.set(played_at + ((da + 1.0) * DAY as f64) as i64);
        assert!(names(&board(&app, "").await).is_empty());

        // Playing again puts them back.
        ranked_game(&app, &a, &b, None).await;
        let back = board(&app, "").await;
        for (player, name) in [(&a, "mem_a"), (&b, "mem_b")] {
            let dev = app.rating_row(player, LADDER).await.deviation;
            assert_eq!(
                names(&back).contains(&name.to_owned()),
                dev <= 110.0,
                "{name}: {dev}"
            );
        }
    }
}

both_backends! {
    with app_for;
    async fn rating_history_and_head_to_head(app: TestApp) {
        let (a, b, c) = (
            app.quick_player("hv_a").await,
            app.quick_player("hv_b").await,
            app.quick_player("hv_c").await,
        );
        let start = app.time.now_ms();
        let m1 = ranked_game(&app, &a, &b, Some(&b)).await;
        app.time.advance(3 * DAY);
        let m2 = ranked_game(&app, &a, &b, Some(&a)).await;
        app.time.advance(DAY);
        let m3 = ranked_game(&app, &a, &c, Some(&a)).await;
        app.time.advance(10 * DAY);
        let m4 = ranked_game(&app, &b, &a, None).await;
        app.time.advance(60_000);
        let casual = app.room_match(&a, &b, 1, json!({"kind": "none"})).await;
        resign(&app, &b, &casual).await;
        app.time.advance(30 * DAY);

        // History: every rated game, oldest first, and the rating as of now.
        let h = app
            .get(
                &format!("/api/v1/players/{}/ratings/{LADDER}", "HV_A"),
                None,
            )
            .await;
        h.expect(200);
        let points = h.body["history"].as_array().unwrap();
        let ids: Vec<&str> = points
            .iter()
            .map(|p| p["match_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [m1.as_str(), m2.as_str(), m3.as_str(), m4.as_str()]);
        assert_eq!(
            uttt::time::parse_rfc3339(points[1]["at"].as_str().unwrap()),
            Some(start + 3 * DAY)
        );
        let row = app.rating_row(&a, LADDER).await;
        assert!(close(
            points[3]["rating"].as_f64().unwrap(),
            row.rating,
            0.006
        ));
        assert!(close(
            points[3]["deviation"].as_f64().unwrap(),
            row.deviation,
            0.006
        ));
        assert_eq!(h.body["games"], 4);
        assert!(close(
            h.body["deviation"].as_f64().unwrap(),
            grown(row.deviation, row.volatility, 30.0),
            0.006
        ));
        assert_eq!(
            h.body["provisional"],
            grown(row.deviation, row.volatility, 30.0) > 110.0
        );
        // A ladder the player never played: the initial rating, no history.
        let fresh = app
            .get(
                &format!("/api/v1/players/{}/ratings/advanced-10m", a.username),
                None,
            )
            .await;
        fresh.expect(200);
        assert_eq!(fresh.body["rating"], 1500.0);
        assert_eq!(fresh.body["deviation"], 350.0);
        assert_eq!(fresh.body["history"], json!([]));
        app.get(&format!("/api/v1/players/nobody/ratings/{LADDER}"), None)
            .await
            .expect_problem(404, "not_found");
        app.get(
            &format!("/api/v1/players/{}/ratings/nope", a.username),
            None,
        )
        .await
        .expect_problem(404, "not_found");

        // Versus: every finished match between them, from a's side.
        let path = format!("/api/v1/players/{}/versus/{}", a.username, b.username);
        let v = app.get(&path, Some(&c.token)).await;
        v.expect(200);
        assert_eq!(
            (
                v.body["wins"].clone(),
                v.body["draws"].clone(),
                v.body["losses"].clone()
            ),
            (json!(2), json!(1), json!(1))
        );
        let listed: Vec<&str> = v.body["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            listed,
            [casual.as_str(), m4.as_str(), m2.as_str(), m1.as_str()]
        );
        assert_eq!(v.body["next_cursor"], Value::Null);
        assert!(
            v.body["matches"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["seat"].is_string())
        );
        // Each summary names both players (only a and b ever sit in them).
        for m in v.body["matches"].as_array().unwrap() {
            let seat = m["seat"].as_str().unwrap();
            let other = if seat == "x" { "o" } else { "x" };
            assert_eq!(m["players"][seat], json!({"id": a.id, "username": a.username, "bot": false}), "{m}");
            assert_eq!(m["players"][other], json!({"id": b.id, "username": b.username, "bot": false}), "{m}");
        }
        let seat = &v.body["matches"][1]["seat"];
        let state = app.state(&a, &m4).await;
        assert_eq!(
            state["players"][seat.as_str().unwrap()]["id"],
            a.id.as_str()
        );
        // From b's side the record mirrors.
        let mirrored = app
            .get(
                &format!("/api/v1/players/{}/versus/{}", b.username, a.username),
                Some(&b.token),
            )
            .await;
        assert_eq!(
            (
                mirrored.body["wins"].clone(),
                mirrored.body["losses"].clone()
            ),
            (json!(1), json!(2))
        );
        // Paged like other lists.
        let first = app.get(&format!("{path}?limit=3"), Some(&a.token)).await;
        assert_eq!(first.body["matches"].as_array().unwrap().len(), 3);
        let cursor = first.body["next_cursor"].as_str().unwrap();
        let rest = app
            .get(&format!("{path}?limit=3&cursor={cursor}"), Some(&a.token))
            .await;
        assert_eq!(rest.body["matches"][0]["id"], m1.as_str());
        assert_eq!(rest.body["next_cursor"], Value::Null);
        assert_eq!(
            rest.body["wins"], 2,
            "the record covers every match, not the page"
        );
        // Errors.
        app.get(&path, None)
            .await
            .expect_problem(401, "unauthorized");
        app.get(
            &format!("/api/v1/players/{}/versus/nobody", a.username),
            Some(&a.token),
        )
        .await
        .expect_problem(404, "not_found");
        app.get(
            &format!("/api/v1/players/nobody/versus/{}", a.username),
            Some(&a.token),
        )
        .await
        .expect_problem(404, "not_found");
        app.get(&format!("{path}?cursor=zz"), Some(&a.token))
            .await
            .expect_problem(422, "validation_failed");
        app.get(&format!("{path}?limit=0"), Some(&a.token))
            .await
            .expect_problem(422, "validation_failed");
        let own = app
            .get(
                &format!("/api/v1/players/{0}/versus/{0}", a.username),
                Some(&a.token),
            )
            .await;
        assert_eq!(
            (own.body["wins"].clone(), own.body["matches"].clone()),
            (json!(0), json!([]))
        );

        // The games were played over weeks; a replay of the ladder agrees with every stored figure.
        let found = recomputed(&app).await;
        assert_eq!(found.differences, Vec::<String>::new());
        assert_eq!((found.matches, found.players), (4, 3));

        // The admin export carries the rating changes, and `uttt replay` checks them.
        let boss = crate::admin::admin(&app, "hv_boss").await;
        let export = app
            .get(
                &format!("/api/v1/admin/matches/export?ladder={LADDER}"),
                Some(&boss.token),
            )
            .await;
        export.expect(200);
        let records: Vec<Value> = export
            .text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 4);
        for r in &records {
            let changes = r["rating_changes"].as_array().unwrap();
            assert_eq!(changes.len(), 2);
            assert_eq!(
                (changes[0]["seat"].as_str(), changes[1]["seat"].as_str()),
                (Some("x"), Some("o"))
            );
            assert_eq!(changes[0]["player_id"], r["x"]["id"]);
        }
        let m2_record = records.iter().find(|r| r["id"] == m2.as_str()).unwrap();
        let a_change = m2_record["rating_changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["player_id"] == a.id.as_str())
            .unwrap();
        // a's second game came three days after the first: its deviation had grown.
        let first = app
            .ctx
            .db
            .run({
                let m1 = m1.clone();
                move |conn| uttt::store::ratings::changes(conn, &m1)
            })
            .await
            .unwrap();
        let a_first = first.iter().find(|c| c.player_id == a.id).unwrap();
        assert!(close(
            a_change["deviation_before"].as_f64().unwrap(),
            grown(a_first.deviation_after, a_first.volatility_after, 3.0),
            1e-9
        ));
        let report = uttt::cli::replay::check_all(export.text.as_bytes()).unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        let mut tampered = records[0].clone();
        let after = tampered["rating_changes"][1]["rating_after"]
            .as_f64()
            .unwrap();
        tampered["rating_changes"][1]["rating_after"] = json!(after + 5.0);
        let mut stripped = records[1].clone();
        stripped["rating_changes"] = json!([]);
        let text = format!("{tampered}\n{stripped}\n{}\n", records[2]);
        let report = uttt::cli::replay::check_all(text.as_bytes()).unwrap();
        assert_eq!(report.records, 3);
        let lines: Vec<usize> = report.problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, [1, 2], "{:?}", report.problems);
        assert!(
            report.problems[0].2.contains("seat o's rating after"),
            "{:?}",
            report.problems
        );
    }
}

both_backends! {
    with app_for;
    async fn recompute_ratings_is_clean_on_a_seeded_database_and_finds_a_tampered_rating(app: TestApp) {
        let args = uttt::cli::seed::SeedArgs {
            matches: 400,
            players: Some(12),
            seed: 7,
            batch: 150,
        };
        let config = app.ctx.config.clone();
        let db = app.ctx.db.clone();
        let mut log = Vec::new();
        uttt::cli::seed::run(&db, &config.ladders, config.rating_growth, &args, &mut log).unwrap();
        let run = |ladder: &str| {
            let mut out = Vec::new();
            let args = uttt::cli::recompute::RecomputeArgs {
                ladder: ladder.to_owned(),
            };
            let found = uttt::cli::recompute::run(&db, &config, &args, &mut out).unwrap();
            (found, String::from_utf8(out).unwrap())
        };
        let mut rated = 0;
        for ladder in &config.ladders {
            let (found, text) = run(&ladder.id);
            assert_eq!(found.differences, Vec::<String>::new(), "{text}");
            assert!(text.ends_with("0 difference(s)\n"), "{text}");
            rated += found.matches;
        }
        assert!(rated > 150, "{rated} rated matches seeded");
        // The seeded ratings are what the server shows.
        let top = board(&app, "?limit=100").await;
        assert!(top["items"].as_array().is_some());

        // Tamper with one stored rating and one recorded change.
        let rows = app
            .ctx
            .db
            .run(|conn| uttt::store::ratings::ladder_rows(conn, LADDER))
            .await
            .unwrap();
        let mut victim = rows.into_iter().find(|r| r.games > 0).unwrap();
        victim.rating += 3.0;
        let who = victim.player_id.clone();
        app.ctx
            .db
            .run(move |conn| uttt::store::ratings::save(conn, &victim))
            .await
            .unwrap();
        let (found, text) = run(LADDER);
        assert_eq!(found.differences.len(), 1, "{text}");
        assert!(
            found.differences[0].starts_with(&format!("player {who} rating: stored")),
            "{text}"
        );
        let unknown = uttt::cli::recompute::RecomputeArgs {
            ladder: "nope".into(),
        };
        assert!(uttt::cli::recompute::run(&db, &config, &unknown, &mut Vec::new()).is_err());
    }
}
