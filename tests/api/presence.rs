//! Fair seats (issue 15): an open event stream keeps its player's seat for as
//! long as it is open, whatever the grace; a connected player who lets the
//! time run out loses on time; the CPU substitute keeps a human pace; lag
//! compensation stays within its quota.

use crate::both_backends;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Backend, EventStream, Player, TestApp, TestConfig, eventually, legal_of};
use uttt::broker::PresenceRecord;
use uttt::rules::Seat;
use uttt::service::matches::dropout::SUBSTITUTE_PACE_MS;
use uttt::service::matches::presence::presence_key;

/// The default grace (20 s) and linger (3 s); workers run only when a test ticks them.
fn config(backend: Backend) -> Option<TestConfig> {
    let mut config = TestConfig::new(backend)?;
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
    Some(config)
}

async fn app(backend: Backend) -> Option<TestApp> {
    Some(TestApp::start(config(backend)?).await)
}

const GRACE_MS: i64 = 20_000;
const LINGER_MS: i64 = 3_000;

async fn presence_tick(app: &TestApp) -> usize {
    uttt::worker::presence::tick(&app.ctx)
        .await
        .expect("presence tick")
}

async fn cpu_tick(app: &TestApp) -> usize {
    uttt::worker::cpu::tick(&app.ctx).await.expect("cpu tick")
}

async fn clock_tick(app: &TestApp) -> usize {
    uttt::worker::clock::tick(&app.ctx)
        .await
        .expect("clock tick")
}

async fn record(app: &TestApp, id: &str, seat: Seat) -> PresenceRecord {
    app.ctx
        .broker
        .presence(&[presence_key(id, seat)])
        .await
        .expect("presence")[0]
}

async fn open_stream(app: &TestApp, p: &Player, id: &str) -> EventStream {
    let mut stream =
        EventStream::open(app, &format!("/api/v1/matches/{id}/events"), &p.token, None).await;
    stream.state_where(Duration::from_secs(5), |_| true).await;
    stream
}

/// Waits until the server has noticed that a dropped stream closed.
async fn until_released(app: &TestApp, id: &str, seat: Seat) {
    eventually(Duration::from_secs(5), "the lease's release", || async {
        (!record(app, id, seat).await.leased).then_some(())
    })
    .await;
}

/// Advances game time in `step` ms steps up to `total`, ticking the presence worker; answers the takeovers.
async fn wait_with_ticks(app: &TestApp, total: i64, step: i64) -> usize {
    let mut taken = 0;
    let mut waited = 0;
    while waited < total {
        let d = step.min(total - waited);
        app.time.advance(d);
        waited += d;
        taken += presence_tick(app).await;
    }
    taken
}

both_backends! {
    with app;
    async fn a_connected_player_with_an_open_stream_loses_on_time_per_turn_never_substituted(app: TestApp) {
        let (x, o) = (app.register("repx").await, app.register("repo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "per_turn", "turn_ms": 5000}))
            .await;
        let mut stream = open_stream(&app, &x, &id).await;
        // X's stream is open; X sends no heartbeat and does not move. The grace of
        // this turn is 3 s, but the stream keeps the seat to the end.
        assert_eq!(
            wait_with_ticks(&app, 4_900, 250).await,
            0,
            "never substituted"
        );
        assert_eq!(cpu_tick(&app).await, 0);
        let s = app.state(&o, &id).await;
        assert_eq!(s["players"]["x"]["controller"], "human");
        assert_eq!(s["players"]["x"]["connected"], true);
        assert_eq!(s["presence"]["heartbeat_ms"], 1_000);
        app.time.advance(100);
        assert_eq!(clock_tick(&app).await, 1);
        let end = stream
            .state_where(Duration::from_secs(5), |s| s["status"] == "finished")
            .await;
        assert_eq!(end["result"]["reason"], "timeout");
        assert_eq!(end["result"]["winner"], "o");
        assert_eq!(end["players"]["x"]["controller"], "human");
        assert_eq!(end["ply"], 0);
        app.assert_consistent(&id).await;
    }
}

both_backends! {
    with app;
    async fn an_open_stream_keeps_the_seat_with_eight_seconds_left_of_ten_minutes(app: TestApp) {
        let (x, o) = (app.register("scrx").await, app.register("scro").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        let mut stream = open_stream(&app, &x, &id).await;
        // X thinks 592 s on the first move, leaving 8 s: that turn's grace is 4 s.
        app.time.advance(592_000);
        let s = app.play(&x, &id, 0, "4.4").await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["x_ms"], 8_000);
        assert_eq!(s.body["presence"]["heartbeat_ms"], 1_000);
        app.play(&o, &id, 1, "4.0").await.expect(200);
        assert_eq!(
            wait_with_ticks(&app, 7_900, 200).await,
            0,
            "never substituted"
        );
        let s = app.state(&o, &id).await;
        assert_eq!(s["players"]["x"]["controller"], "human");
        assert_eq!(s["players"]["x"]["connected"], true);
        app.time.advance(100);
        assert_eq!(clock_tick(&app).await, 1);
        let end = stream
            .state_where(Duration::from_secs(5), |s| s["status"] == "finished")
            .await;
        assert_eq!(end["result"]["reason"], "timeout");
        assert_eq!(end["result"]["winner"], "o");
        assert_eq!(end["players"]["x"]["controller"], "human");
        assert_eq!(end["clocks"]["x_ms"], 0);
    }
}

both_backends! {
    with app;
    async fn a_closed_stream_is_substituted_after_the_linger_and_the_grace(app: TestApp) {
        let (x, o) = (app.register("closx").await, app.register("closo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        let mut watcher = open_stream(&app, &o, &id).await;
        let stream = open_stream(&app, &x, &id).await;
        assert!(record(&app, &id, Seat::X).await.leased);
        // Long past the grace with the stream open: X keeps the seat.
        assert_eq!(wait_with_ticks(&app, 60_000, 5_000).await, 0);
        // X closes the stream: the seat lingers 3 s, then the 20 s grace runs.
        drop(stream);
        until_released(&app, &id, Seat::X).await;
        assert_eq!(
            wait_with_ticks(&app, GRACE_MS, 1_000).await,
            0,
            "the linger"
        );
        assert_eq!(
            wait_with_ticks(&app, LINGER_MS - 1, LINGER_MS - 1).await,
            0,
            "the grace after the linger"
        );
        app.time.advance(1);
        assert_eq!(presence_tick(&app).await, 1, "substituted after both");
        let taken = watcher
            .state_where(Duration::from_secs(5), |s| {
                s["players"]["x"]["controller"] == "cpu"
            })
            .await;
        assert_eq!(taken["players"]["x"]["connected"], false);
        // Opening the stream again gives the seat back at once.
        let back = open_stream(&app, &x, &id).await;
        let s = app.state(&o, &id).await;
        assert_eq!(s["players"]["x"]["controller"], "human");
        assert_eq!(s["players"]["x"]["connected"], true);
        drop(back);
    }
}

#[actix_web::test]
async fn a_stream_on_one_instance_keeps_the_seat_while_moves_go_through_another() {
    let Some(app) = app(Backend::Postgres).await else {
        return;
    };
    assert!(
        app.ctx.config.redis_url.is_some(),
        "set TEST_REDIS_URL with TEST_DATABASE_URL"
    );
    let (b, b_ctx, _handle) = app.start_sibling().await;
    let on_b = |path: &str| format!("{b}{path}");
    let (x, o) = (app.register("twinx").await, app.register("twino").await);
    let id = app
        .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
        .await;
    // X watches on instance A; every request goes to instance B.
    let stream = open_stream(&app, &x, &id).await;
    let play_on_b = |p: &Player, ply: u64, address: Value| {
        let (url, token) = (
            on_b(&format!("/api/v1/matches/{id}/moves")),
            p.token.clone(),
        );
        let client = app.client.clone();
        async move {
            let mut res = client
                .post(url)
                .bearer_auth(token)
                .send_json(&json!({"ply": ply, "address": address}))
                .await
                .expect("move on B");
            assert_eq!(res.status().as_u16(), 200);
            res.json::<Value>().limit(1 << 20).await.expect("state")
        }
    };
    let s = play_on_b(&x, 0, json!([4, 4])).await;
    let s = play_on_b(
        &o,
        1,
        json!(
            legal_of(&s)[0]
                .split('.')
                .map(|c| c.parse::<u8>().unwrap())
                .collect::<Vec<_>>()
        ),
    )
    .await;
    assert_eq!(s["turn"], "x");
    // X's turn, long past the grace; B's presence worker leaves the seat alone.
    for _ in 0..12 {
        app.time.advance(5_000);
        assert_eq!(
            uttt::worker::presence::tick(&b_ctx).await.unwrap(),
            0,
            "the stream on A keeps X present for B"
        );
    }
    let seen = app
        .client
        .get(on_b(&format!("/api/v1/matches/{id}")))
        .bearer_auth(&o.token)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .limit(1 << 20)
        .await
        .unwrap();
    assert_eq!(seen["players"]["x"]["controller"], "human");
    assert_eq!(seen["players"]["x"]["connected"], true);
    // X closes the stream on A: B substitutes after the linger and the grace.
    drop(stream);
    until_released(&app, &id, Seat::X).await;
    app.time.advance(GRACE_MS + LINGER_MS - 1);
    assert_eq!(uttt::worker::presence::tick(&b_ctx).await.unwrap(), 0);
    app.time.advance(1);
    assert_eq!(uttt::worker::presence::tick(&b_ctx).await.unwrap(), 1);
}

both_backends! {
    with app;
    async fn a_lease_nobody_renews_lapses_after_its_lifetime(app: TestApp) {
        let (x, o) = (app.register("deadx").await, app.register("deado").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        // A stream on an instance that died: its lease is never renewed nor released.
        let ttl = Duration::from_millis(800);
        app.ctx
            .broker
            .hold(
                &[(presence_key(&id, Seat::X), "dead-instance:1".into())],
                ttl,
            )
            .await
            .unwrap();
        let started = std::time::Instant::now();
        app.time.advance(60_000);
        assert_eq!(
            presence_tick(&app).await,
            0,
            "present while the lease lives"
        );
        assert!(
            started.elapsed() < ttl,
            "the check ran within the lease's lifetime"
        );
        let s = app.state(&o, &id).await;
        assert_eq!(s["players"]["x"]["connected"], true);
        tokio::time::sleep(ttl + Duration::from_millis(100)).await;
        assert!(!record(&app, &id, Seat::X).await.leased, "the lease lapsed");
        assert_eq!(presence_tick(&app).await, 1, "then absent: substituted");
        let s = app.state(&o, &id).await;
        assert_eq!(s["players"]["x"]["controller"], "cpu");
        assert_eq!(s["players"]["x"]["connected"], false);
    }
}

async fn renewed_lease(backend: Backend) {
    let Some(mut config) = config(backend) else {
        return;
    };
    config.config.presence.lease_ttl = Duration::from_millis(300);
    let app = TestApp::start(config).await;
    let (x, o) = (app.register("renx").await, app.register("reno").await);
    let id = app
        .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
        .await;
    let stream = open_stream(&app, &x, &id).await;
    // Many lifetimes of the lease: the instance renews it while the stream is open.
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        app.time.advance(10_000);
        assert_eq!(presence_tick(&app).await, 0);
        assert!(record(&app, &id, Seat::X).await.leased);
    }
    drop(stream);
    until_released(&app, &id, Seat::X).await;
    let seen = record(&app, &id, Seat::X).await.last_seen.unwrap();
    assert_eq!(
        seen,
        uttt::time::TimeSource::now_ms(app.time.as_ref()) + LINGER_MS,
        "the close starts the linger"
    );
}

#[actix_web::test]
async fn an_open_streams_lease_is_renewed_for_as_long_as_it_is_open_on_sqlite() {
    renewed_lease(Backend::Sqlite).await;
}

#[actix_web::test]
async fn an_open_streams_lease_is_renewed_for_as_long_as_it_is_open_on_postgres() {
    renewed_lease(Backend::Postgres).await;
}

both_backends! {
    with app;
    async fn the_state_says_how_often_to_heartbeat(app: TestApp) {
        let (x, o) = (app.register("hbx").await, app.register("hbo").await);
        for (tc, expected) in [
            (json!({"kind": "clock", "initial_ms": 600000}), 1_000),
            (json!({"kind": "per_turn", "turn_ms": 30000}), 5_000),
            (json!({"kind": "per_turn", "turn_ms": 5000}), 1_000),
            (json!({"kind": "none"}), 6_666),
        ] {
            let id = app.room_match(&x, &o, 1, tc.clone()).await;
            let s = app.state(&x, &id).await;
            assert_eq!(s["presence"]["heartbeat_ms"], expected, "{tc}");
            app.post(
                &format!("/api/v1/matches/{id}/resign"),
                &json!({}),
                Some(&x.token),
            )
            .await
            .expect(200);
        }
        // A heartbeat at that interval keeps a seat without a stream, even with 4 s left.
        let id = app
            .room_match(&x, &o, 1, json!({"kind": "clock", "initial_ms": 10000}))
            .await;
        app.time.advance(6_000);
        app.play(&x, &id, 0, "4").await.expect(200);
        app.play(&o, &id, 1, "0").await.expect(200);
        for _ in 0..3 {
            app.time.advance(1_000);
            app.post(
                &format!("/api/v1/matches/{id}/heartbeat"),
                &json!({}),
                Some(&x.token),
            )
            .await
            .expect(204);
            assert_eq!(presence_tick(&app).await, 0);
        }
        app.time.advance(1_000);
        assert_eq!(
            clock_tick(&app).await,
            1,
            "X loses on time, never substituted"
        );
        let s = app.state(&o, &id).await;
        assert_eq!(s["result"]["reason"], "timeout");
        assert_eq!(s["players"]["x"]["controller"], "human");
    }
}

/// The played_at times of a match's moves, in ms.
async fn played_at(app: &TestApp, viewer: &Player, id: &str) -> Vec<i64> {
    app.get(&format!("/api/v1/matches/{id}/moves"), Some(&viewer.token))
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|m| uttt::time::parse_rfc3339(m["played_at"].as_str().unwrap()).unwrap())
        .collect()
}

both_backends! {
    with app;
    async fn the_substitute_plays_at_a_human_pace(app: TestApp) {
        let (x, o) = (app.register("pacex").await, app.register("paceo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        let _stream = open_stream(&app, &x, &id).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        // O is gone: after the grace the CPU takes the seat; that turn is old enough already.
        assert_eq!(wait_with_ticks(&app, GRACE_MS, GRACE_MS).await, 1);
        assert_eq!(cpu_tick(&app).await, 1);
        let s = app.state(&x, &id).await;
        assert_eq!(s["ply"], 2);
        // X answers at once; the substitute's next move waits a second of its turn.
        app.play(&x, &id, 2, &legal_of(&s)[0]).await.expect(200);
        assert_eq!(cpu_tick(&app).await, 0, "not at once");
        app.time.advance(SUBSTITUTE_PACE_MS - 1);
        assert_eq!(cpu_tick(&app).await, 0, "not before a second");
        app.time.advance(1);
        assert_eq!(cpu_tick(&app).await, 1);
        let at = played_at(&app, &x, &id).await;
        assert_eq!(at.len(), 4);
        assert!(at[3] - at[2] >= SUBSTITUTE_PACE_MS, "{at:?}");
        // The practice opponent still answers at once.
        let created = app
            .post(
                "/api/v1/matches",
                &json!({"opponent": "cpu", "depth": 2, "seat": "o", "cpu_level": 1}),
                Some(&x.token),
            )
            .await;
        created.expect(201);
        assert_eq!(
            cpu_tick(&app).await,
            1,
            "the practice CPU moves without waiting"
        );
    }
}

both_backends! {
    with app;
    async fn two_dropped_seats_no_longer_finish_a_ranked_match_in_a_blink(app: TestApp) {
        let (a, b, watcher) = (
            app.register("blinka").await,
            app.register("blinkb").await,
            app.register("blinkw").await,
        );
        let id = app.ranked_match(&a, &b, "tiny").await;
        // Nobody comes: time moves in small steps and every worker ticks.
        for _ in 0..2_000 {
            app.time.advance(100);
            presence_tick(&app).await;
            cpu_tick(&app).await;
            let s = app
                .get(&format!("/api/v1/matches/{id}"), Some(&watcher.token))
                .await
                .body;
            if s["status"] == "finished" {
                break;
            }
        }
        let s = app
            .get(&format!("/api/v1/matches/{id}"), Some(&watcher.token))
            .await
            .body;
        assert_eq!(s["status"], "finished", "{s}");
        let at = played_at(&app, &watcher, &id).await;
        assert!(at.len() >= 5);
        for pair in at.windows(2) {
            assert!(
                pair[1] - pair[0] >= SUBSTITUTE_PACE_MS,
                "each substitute move takes a second: {at:?}"
            );
        }
        app.assert_consistent(&id).await;
    }
}

async fn move_with_lag(
    app: &TestApp,
    p: &Player,
    id: &str,
    ply: u64,
    address: Value,
    lag: Value,
) -> crate::support::Reply {
    app.post(
        &format!("/api/v1/matches/{id}/moves"),
        &json!({"ply": ply, "address": address, "lag_ms": lag}),
        Some(&p.token),
    )
    .await
}

both_backends! {
    with app;
    async fn lag_is_credited_within_the_quota(app: TestApp) {
        let (x, o) = (app.register("lagx").await, app.register("lago").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        // Bad reports are refused and change nothing.
        for bad in [json!(-1), json!(60_001), json!("slow"), json!(1.5)] {
            move_with_lag(&app, &x, &id, 0, json!([4, 4]), bad.clone())
                .await
                .expect_problem(422, "validation_failed");
        }
        assert_eq!(app.state(&x, &id).await["ply"], 0);
        // 10 minutes: the quota gains 1 s a move, starts at 3 s, holds at most 7 s.
        // An honest 200 ms link: all of it comes back.
        app.time.advance(4_000);
        let s = move_with_lag(&app, &x, &id, 0, json!([4, 4]), json!(200)).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["x_ms"], 600_000 - 4_000 + 200);
        // A lie: 60 s of "lag" gets back the quota (3 s), no more.
        app.time.advance(10_000);
        let s = move_with_lag(&app, &o, &id, 1, json!([4, 0]), json!(60_000)).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["o_ms"], 600_000 - 10_000 + 3_000);
        // Never more than the turn used, whatever the quota (X holds 3.8 s).
        app.time.advance(100);
        let s = move_with_lag(&app, &x, &id, 2, json!([0, 4]), json!(60_000)).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["x_ms"], 600_000 - 4_000 + 200);
        // O's quota is down to the gain (1 s): the next lie gets 1 s back.
        app.time.advance(5_000);
        let s = move_with_lag(&app, &o, &id, 3, json!([4, 8]), json!(60_000)).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["o_ms"], 593_000 - 5_000 + 1_000);
        // No report, no credit.
        app.time.advance(1_000);
        let s = app.play(&x, &id, 4, &legal_of(&s.body)[0]).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["x_ms"], 596_200 - 1_000);
        let moves = app
            .get(&format!("/api/v1/matches/{id}/moves"), Some(&x.token))
            .await
            .body;
        assert_eq!(moves[1]["clock_ms"], 593_000);
        // The quotas are stored per seat.
        let row = app.match_row(&id).await;
        // X: 3000 - 200 + 1000, then - 100 + 1000, then + 1000 (no report).
        assert_eq!(row.x_lag_quota_ms, Some(5_700));
        assert_eq!(row.o_lag_quota_ms, Some(1_000));
        app.assert_consistent(&id).await;

        // Per turn: the credit lengthens the mover's next turn.
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "per_turn", "turn_ms": 5000}))
            .await;
        app.time.advance(4_000);
        let s = move_with_lag(&app, &x, &id, 0, json!([4, 4]), json!(300)).await;
        s.expect(200);
        assert_eq!(s.body["clocks"]["x_ms"], 5_300, "X's next turn");
        app.time.advance(1_000);
        let s = app.play(&o, &id, 1, "4.0").await;
        s.expect(200);
        let deadline =
            uttt::time::parse_rfc3339(s.body["clocks"]["turn_deadline"].as_str().unwrap()).unwrap();
        let now = uttt::time::TimeSource::now_ms(app.time.as_ref());
        assert_eq!(deadline - now, 5_300);
        assert_eq!(s.body["clocks"]["x_ms"], 5_300);
        // The lengthened turn is used up like any other.
        app.time.advance(5_300);
        assert_eq!(clock_tick(&app).await, 1);
    }
}

/// Real time, every worker running: X keeps the stream open and lets the time
/// run out under a 5-second turn and a 10-second clock at once.
async fn real_time_flag(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    config.config.workers = uttt::config::Workers::ALL;
    // The server's own settling time before a flag falls, not the tests' zero.
    config.config.flag_settle = uttt::config::Config::from_lookup(|_| None)
        .expect("default config")
        .flag_settle;
    let app = TestApp::start_real_time(config).await;
    let (x, o) = (app.register("realx").await, app.register("realo").await);
    let mut runs = Vec::new();
    for tc in [
        json!({"kind": "per_turn", "turn_ms": 5000}),
        json!({"kind": "clock", "initial_ms": 10000}),
    ] {
        let id = app.room_match(&x, &o, 2, tc).await;
        let stream = EventStream::open(
            &app,
            &format!("/api/v1/matches/{id}/events"),
            &x.token,
            None,
        )
        .await;
        runs.push((id, stream));
    }
    let watches = runs.into_iter().map(|(id, mut stream)| async move {
        let mut deadline = None;
        let mut x_was_cpu = false;
        let end = loop {
            let s = stream.state_where(Duration::from_secs(20), |_| true).await;
            x_was_cpu |= s["players"]["x"]["controller"] == "cpu";
            if let Some(d) = s["clocks"]["turn_deadline"].as_str() {
                deadline = uttt::time::parse_rfc3339(d);
            }
            if s["status"] == "finished" {
                break s;
            }
        };
        let arrived = chrono::Utc::now().timestamp_millis();
        (id, end, deadline.expect("a deadline"), arrived, x_was_cpu)
    });
    for (id, end, deadline, arrived, x_was_cpu) in futures_util::future::join_all(watches).await {
        assert!(!x_was_cpu, "{id}: X was never substituted");
        assert_eq!(end["result"]["reason"], "timeout", "{end}");
        assert_eq!(end["result"]["winner"], "o");
        assert_eq!(end["players"]["x"]["controller"], "human");
        assert!(
            arrived >= deadline && arrived - deadline < 1_000,
            "{id}: the final state arrived {} ms after the deadline",
            arrived - deadline
        );
    }
}

#[actix_web::test]
async fn in_real_time_the_final_state_reaches_the_open_stream_within_a_second_of_the_deadline_on_sqlite()
 {
    real_time_flag(Backend::Sqlite).await;
}

#[actix_web::test]
async fn in_real_time_the_final_state_reaches_the_open_stream_within_a_second_of_the_deadline_on_postgres()
 {
    real_time_flag(Backend::Postgres).await;
}

both_backends! {
    with app;
    async fn a_moves_state_shows_each_seat_present_as_the_broker_has_it(app: TestApp) {
        let (x, o) = (app.register("showx").await, app.register("showo").await);
        let id = app
            .room_match(&x, &o, 2, json!({"kind": "clock", "initial_ms": 600000}))
            .await;
        // O has been away past the grace: X's move shows X here and O gone.
        app.time.advance(GRACE_MS + 10);
        let first = app.play(&x, &id, 0, "4.4").await;
        let first = &first.expect(200).body;
        assert_eq!(first["players"]["x"]["connected"], true);
        assert_eq!(first["players"]["o"]["connected"], false);

        // O moves: both seen within the grace.
        let reply = app.play(&o, &id, 1, &legal_of(first)[0]).await;
        let second = &reply.expect(200).body;
        assert_eq!(second["players"]["o"]["connected"], true);
        assert_eq!(second["players"]["x"]["connected"], true, "X moved just now");

        // O away again past the grace, but with a live stream lease (on any
        // instance): X's move shows O present through the lease alone.
        app.time.advance(GRACE_MS + 10);
        app.ctx
            .broker
            .hold(
                &[(presence_key(&id, Seat::O), "elsewhere:1".into())],
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        let reply = app.play(&x, &id, 2, &legal_of(second)[0]).await;
        let third = &reply.expect(200).body;
        assert_eq!(third["players"]["x"]["connected"], true);
        assert_eq!(third["players"]["o"]["connected"], true, "O's lease");
        assert_eq!(third, &app.state(&x, &id).await, "as a read of the match shows it");
    }
}
