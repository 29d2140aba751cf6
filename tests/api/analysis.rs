//! Engine analysis of finished matches (API.md "Analysis"): who may ask,
//! the queue and its bound, progress stored position by position, the result
//! (every ply judged, a known blunder judged a blunder), computed once, and
//! the lease that keeps two instances off one analysis.

use std::time::Duration;

use serde_json::{Value, json};
use uttt::store::analyses;
use uttt::time::TimeSource;

use crate::admin::admin;
use crate::both_backends;
use crate::support::{Backend, TestApp, TestConfig, eventually};

/// Tic-tac-toe: X 0, O 4, X 1 threatens 2; O plays 3 instead of blocking
/// (a blunder: X wins at once), and X wins at 2.
const BLUNDER_GAME: &[&str] = &["0", "4", "1", "3", "2"];
const JUDGEMENTS: [&str; 5] = ["best", "good", "inaccuracy", "mistake", "blunder"];

/// A test server whose analysis worker thinks `ms` a position (`None`: no
/// worker; the test drives it).
async fn app_with(
    backend: crate::support::Backend,
    worker_ms: Option<u64>,
    queue: u32,
) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.workers.analysis = worker_ms.is_some();
    // Enough for the solver to prove these tic-tac-toe positions, which
    // ends each search long before the time is up.
    config.config.analysis.per_position = Duration::from_millis(worker_ms.unwrap_or(200));
    config.config.analysis.queue = queue;
    Some(TestApp::start(config).await)
}

/// A finished room match of `BLUNDER_GAME`; (X, O, match id).
async fn blunder_match(
    app: &TestApp,
    prefix: &str,
) -> (crate::support::Player, crate::support::Player, String) {
    let x = app.register(&format!("{prefix}x")).await;
    let o = app.register(&format!("{prefix}o")).await;
    let id = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
    let last = app.play_script(&x, &o, &id, BLUNDER_GAME).await;
    assert_eq!(last.body["status"], "finished");
    (x, o, id)
}

fn path(id: &str) -> String {
    format!("/api/v1/matches/{id}/analysis")
}

/// Checks the shape of an analysis with `plies` judged, and its invariants.
fn check_shape(body: &Value, plies: usize) {
    let list = body["plies"].as_array().expect("plies");
    assert_eq!(list.len(), plies, "{body}");
    for (k, ply) in list.iter().enumerate() {
        assert_eq!(ply["ply"], k, "{ply}");
        assert_eq!(ply["seat"], if k % 2 == 0 { "x" } else { "o" });
        assert_eq!(
            ply["address"],
            json!([BLUNDER_GAME[k].parse::<u8>().unwrap()])
        );
        assert_eq!(ply["best"].as_array().expect("best").len(), 1);
        for field in ["win_x", "best_win", "loss"] {
            let v = ply[field].as_f64().expect(field);
            assert!((0.0..=1.0).contains(&v), "{field} = {v}");
        }
        let judgement = ply["judgement"].as_str().expect("judgement");
        assert!(JUDGEMENTS.contains(&judgement), "{judgement}");
        if ply["best"] == ply["address"] {
            assert_eq!(judgement, "best");
            assert_eq!(ply["loss"].as_f64(), Some(0.0));
        }
    }
    for side in ["x", "o"] {
        let a = body["accuracy"][side].as_f64().expect("accuracy");
        assert!((0.0..=100.0).contains(&a), "accuracy {side} = {a}");
    }
}

async fn stored(app: &TestApp, id: &str) -> analyses::AnalysisRow {
    let id = id.to_owned();
    app.ctx
        .db
        .run(move |conn| analyses::get(conn, &id))
        .await
        .unwrap()
        .expect("an analysis row")
}

async fn with_worker(backend: Backend) -> Option<TestApp> {
    app_with(backend, Some(200), 32).await
}

async fn without_worker(backend: Backend) -> Option<TestApp> {
    app_with(backend, None, 32).await
}

async fn queue_of_one(backend: Backend) -> Option<TestApp> {
    app_with(backend, None, 1).await
}

both_backends! {
    with with_worker;

    async fn a_player_asks_and_the_worker_judges_every_ply_once(app: TestApp) {
        let (x, o, id) = blunder_match(&app, "an1").await;
        let queued = app.post(&path(&id), &json!({}), Some(&x.token)).await;
        queued.expect(202);
        assert!(["queued", "running"].contains(&queued.body["status"].as_str().unwrap()));
        assert_eq!(queued.body["position"], 0);
        let done = eventually(Duration::from_secs(30), "the analysis", || {
            let (app, token, id) = (&app, x.token.clone(), id.clone());
            async move {
                let reply = app.get(&path(&id), Some(&token)).await;
                reply.expect(200);
                (reply.body["status"] == "done").then_some(reply.body)
            }
        })
        .await;
        assert_eq!(done["match_id"], id);
        assert_eq!(done["progress"], json!({"plies_done": 5, "plies_total": 5}));
        check_shape(&done, 5);
        // O's 3 let X win at once where blocking at 2 drew.
        assert_eq!(done["plies"][3]["best"], json!([2]));
        assert_eq!(done["plies"][3]["judgement"], "blunder");
        assert_eq!(done["plies"][4]["judgement"], "best", "X's winning move");
        assert!(done["accuracy"]["o"].as_f64() < done["accuracy"]["x"].as_f64());

        // Asked again (by the other player): answered as it is, not recomputed.
        let row = stored(&app, &id).await;
        let again = app.post(&path(&id), &json!({}), Some(&o.token)).await;
        again.expect(200);
        assert_eq!(again.body, done);
        assert!(!uttt::worker::analysis::tick(&app.ctx).await.unwrap(), "nothing left to claim");
        assert_eq!(stored(&app, &id).await, row);
    }
}

both_backends! {
    with without_worker;

    async fn progress_is_stored_position_by_position(app: TestApp) {
        let (x, _o, id) = blunder_match(&app, "an2").await;
        app.get(&path(&id), Some(&x.token)).await.expect_problem(404, "not_found");
        app.post(&path(&id), &json!({}), Some(&x.token)).await.expect(202);
        let read = || async { app.get(&path(&id), Some(&x.token)).await.body };
        let body = read().await;
        assert_eq!(body["status"], "queued");
        assert_eq!(body["progress"], json!({"plies_done": 0, "plies_total": 5}));
        check_shape(&body, 0);

        let mut job = uttt::worker::analysis::claim(&app.ctx).await.unwrap().expect("a job");
        assert_eq!(job.match_id, id);
        assert_eq!(read().await["status"], "running");
        let again = app.post(&path(&id), &json!({}), Some(&x.token)).await;
        again.expect(202);
        assert_eq!(again.body, json!({"status": "running", "position": 0}));
        // Six positions (before each move and after the last) judge five plies.
        for positions in 1..=6_usize {
            let step = uttt::worker::analysis::step(&app.ctx, &mut job).await.unwrap();
            assert_eq!(step, uttt::worker::analysis::Step::Stored);
            assert_eq!(job.positions_done(), positions);
            let body = read().await;
            let judged = positions - 1;
            assert_eq!(body["progress"]["plies_done"], judged);
            check_shape(&body, judged);
            assert_eq!(body["status"], if positions == 6 { "done" } else { "running" });
        }
        assert!(job.is_done());
    }

    async fn two_instances_never_hold_one_analysis_and_a_lapsed_lease_is_taken_over(app: TestApp) {
        let (x, _o, id) = blunder_match(&app, "an3").await;
        app.post(&path(&id), &json!({}), Some(&x.token)).await.expect(202);
        let lease = i64::try_from(app.ctx.config.analysis.lease().as_millis()).unwrap();
        let now = app.time.now_ms();
        let claim = |instance: &'static str, at: i64| {
            app.ctx.db.write(move |conn| analyses::claim(conn, instance, at, lease))
        };
        let save = |instance: &'static str, at: i64| {
            let id = id.clone();
            app.ctx
                .db
                .write(move |conn| analyses::save_progress(conn, &id, instance, 0, "[]", false, at))
        };
        assert_eq!(claim("a", now).await.unwrap().unwrap().claimed_by.as_deref(), Some("a"));
        assert!(claim("b", now).await.unwrap().is_none(), "held by a");
        assert!(!save("b", now).await.unwrap(), "b holds nothing");
        assert!(save("a", now + 1_000).await.unwrap(), "a renews its lease");
        assert!(claim("b", now + lease).await.unwrap().is_none(), "renewed a second ago");
        // a stops renewing: once the lease lapses b takes over, and a's late
        // writes are refused.
        let taken = claim("b", now + 1_000 + lease + 1).await.unwrap().expect("taken over");
        assert_eq!(taken.claimed_by.as_deref(), Some("b"));
        assert_eq!(taken.status, "running");
        assert!(!save("a", now + lease + 2_000).await.unwrap());
        assert!(save("b", now + lease + 2_000).await.unwrap());
    }
}

both_backends! {
    async fn only_players_and_admins_ask_and_only_for_finished_matches(app: TestApp) {
        let (x, o, id) = blunder_match(&app, "an4").await;
        let stranger = app.register("an4stranger").await;
        app.post(&path(&id), &json!({}), Some(&stranger.token)).await.expect_problem(403, "forbidden");
        app.post(&path(&id), &json!({}), None).await.expect_problem(401, "unauthorized");
        app.post(&path("nosuchmatch"), &json!({}), Some(&x.token)).await.expect_problem(404, "not_found");
        app.get(&path("nosuchmatch"), Some(&x.token)).await.expect_problem(404, "not_found");
        // A match still being played.
        let live = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        let refused = app.post(&path(&live), &json!({}), Some(&x.token)).await;
        refused.expect_problem(409, "match_not_finished");
        assert_eq!(refused.body["match_id"], live);
        app.post(&path(&live), &json!({}), Some(&stranger.token)).await.expect_problem(403, "forbidden");
        app.get(&path(&live), Some(&x.token)).await.expect_problem(404, "not_found");
        // An admin may ask for anyone's finished match; anyone may read it then.
        let boss = admin(&app, "an4boss").await;
        app.post(&path(&id), &json!({}), Some(&boss.token)).await.expect(202);
        app.get(&path(&id), Some(&stranger.token)).await.expect(200);
        assert_eq!(stored(&app, &id).await.requested_by.as_deref(), Some(boss.id.as_str()));
    }
}

both_backends! {
    with queue_of_one;

    async fn a_full_queue_refuses_with_429(app: TestApp) {
        let (x, _, first) = blunder_match(&app, "an5a").await;
        let (y, _, second) = blunder_match(&app, "an5b").await;
        app.post(&path(&first), &json!({}), Some(&x.token)).await.expect(202);
        let full = app.post(&path(&second), &json!({}), Some(&y.token)).await;
        full.expect_problem(429, "rate_limited");
        assert!(full.header("retry-after").is_some());
        app.get(&path(&second), Some(&y.token)).await.expect_problem(404, "not_found");
        // The one queued is still answered.
        app.post(&path(&first), &json!({}), Some(&x.token)).await.expect(202);
        // Once it is done, the queue has room again.
        let mut job = uttt::worker::analysis::claim(&app.ctx).await.unwrap().unwrap();
        while !job.is_done() {
            uttt::worker::analysis::step(&app.ctx, &mut job).await.unwrap();
        }
        app.post(&path(&second), &json!({}), Some(&y.token)).await.expect(202);
    }
}
