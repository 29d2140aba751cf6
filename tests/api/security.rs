//! The security review's findings (issue 16), one test or more each: secrets,
//! file modes, client addresses behind proxies, lockouts, room codes, event
//! streams, the admin filter, tokens, metrics and over-long requests.

use std::time::Duration;

use serde_json::json;
use uttt::config::{IpNet, ProxyTrust};

use uttt::time::TimeSource;

use crate::both_backends;
use crate::support::{Backend, EventStream, TestApp, TestConfig};

/// The value `docker-compose.yml` used to ship as its fallback secret.
const COMPOSE_PLACEHOLDER: &str = "change-me-to-a-long-random-secret-shared-by-all-instances";

#[test]
fn the_server_refuses_to_start_with_a_placeholder_or_short_secret() {
    let dir = std::env::temp_dir().join(format!("uttt-weak-{}", uttt::ids::record_id()));
    for secret in [
        COMPOSE_PLACEHOLDER,
        "changeme",
        "secret",
        "0123456789abcdef0123456789",
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_uttt"))
            .arg("serve")
            .env_clear()
            .env("UTTT_JWT_SECRET", secret)
            .env("UTTT_DATA_DIR", &dir)
            .env("UTTT_BIND", "127.0.0.1:0")
            .output()
            .expect("run uttt");
        assert!(!out.status.success(), "started with {secret:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("UTTT_JWT_SECRET"), "{secret:?}: {stderr}");
        assert!(
            !dir.join("uttt.db").exists(),
            "nothing is made before the check"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[actix_web::test]
async fn a_context_built_in_code_checks_the_secret_too() {
    let mut config = TestConfig::new(Backend::Sqlite).unwrap();
    config.config.jwt_secret = Some(COMPOSE_PLACEHOLDER.into());
    let time = uttt::time::ManualTime::new(0);
    let err = uttt::server::context(config.config.clone(), time)
        .await
        .expect_err("a placeholder secret");
    assert!(err.to_string().contains("UTTT_JWT_SECRET"), "{err:#}");
}

#[cfg(unix)]
#[actix_web::test]
async fn the_data_folder_secret_and_database_are_private_and_old_modes_are_fixed() {
    use std::os::unix::fs::PermissionsExt;
    use uttt::data_dir::mode_of;
    let mut config = TestConfig::new(Backend::Sqlite).unwrap();
    // The embedded default: no secret given, so it lives in the data folder.
    config.config.jwt_secret = None;
    let dir = config.config.data_dir.clone();
    let secret = uttt::ids::secret(48);
    std::fs::write(dir.join("jwt-secret"), &secret).unwrap();
    std::fs::write(dir.join("uttt.db"), b"").unwrap();
    for (path, mode) in [
        (dir.clone(), 0o755),
        (dir.join("jwt-secret"), 0o644),
        (dir.join("uttt.db"), 0o644),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let app = TestApp::start(config).await;
    assert_eq!(mode_of(&dir).unwrap(), 0o700);
    assert_eq!(mode_of(&dir.join("jwt-secret")).unwrap(), 0o600);
    assert_eq!(mode_of(&dir.join("uttt.db")).unwrap(), 0o600);
    // The server works on them: a registration writes the database, and its
    // token is signed with the kept secret.
    let p = app.register("modes").await;
    let claims: serde_json::Value = {
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        v.validate_aud = false;
        jsonwebtoken::decode::<serde_json::Value>(
            &p.token,
            &jsonwebtoken::DecodingKey::from_secret(secret.as_bytes()).unwrap(),
            &v,
        )
        .expect("signed with the kept secret")
        .claims
    };
    assert_eq!(claims["sub"], p.id.as_str());
    for extra in ["uttt.db-wal", "uttt.db-shm"] {
        if let Ok(mode) = mode_of(&dir.join(extra)) {
            assert_eq!(mode & 0o077, 0, "{extra} is {mode:o}");
        }
    }
}

#[cfg(unix)]
#[actix_web::test]
async fn a_new_data_folder_is_made_private() {
    use uttt::data_dir::mode_of;
    let mut config = TestConfig::new(Backend::Sqlite).unwrap();
    let dir = config.config.data_dir.join("fresh");
    config.config.data_dir = dir.clone();
    config.config.database = uttt::config::DatabaseConfig::Sqlite(dir.join("uttt.db"));
    config.config.jwt_secret = None;
    let _app = TestApp::start(config).await;
    assert_eq!(mode_of(&dir).unwrap(), 0o700);
    assert_eq!(mode_of(&dir.join("jwt-secret")).unwrap(), 0o600);
    assert_eq!(mode_of(&dir.join("uttt.db")).unwrap(), 0o600);
}

/// A server behind one trusted proxy, with a small per-address login limit.
async fn behind_proxy(backend: Backend, trust: ProxyTrust) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.proxy_trust = trust;
    config.config.rate_limits.login_per_address.limit = 3;
    Some(TestApp::start(config).await)
}

async fn login_from(app: &TestApp, forwarded_for: &str) -> u16 {
    app.call_raw(
        "POST",
        "/api/v1/auth/login",
        Some(json!({"username": "nobody_here", "password": "wrong password"}).to_string()),
        None,
        &[("x-forwarded-for", forwarded_for)],
    )
    .await
    .status
    .as_u16()
}

async fn spoofed_hops_do_not_give_fresh_buckets(app: TestApp, appended: &str) {
    // The proxy appends the attacker's real address after whatever they sent.
    for i in 0..3 {
        let status = login_from(&app, &format!("198.18.{i}.{i}, {appended}")).await;
        assert_eq!(status, 401, "attempt {i}");
    }
    for i in 3..8 {
        let status = login_from(&app, &format!("198.18.{i}.{i}, 10.{i}.0.1, {appended}")).await;
        assert_eq!(
            status, 429,
            "a spoofed leftmost hop must not reset the limit (attempt {i})"
        );
    }
    // Another client behind the same proxy has its own bucket.
    assert_eq!(login_from(&app, "198.18.0.0, 203.0.113.200").await, 401);
}

#[actix_web::test]
async fn behind_one_proxy_hop_spoofed_forwarded_for_hops_are_ignored_on_sqlite() {
    let app = behind_proxy(Backend::Sqlite, ProxyTrust::Hops(1))
        .await
        .unwrap();
    spoofed_hops_do_not_give_fresh_buckets(app, "203.0.113.7").await;
}

#[actix_web::test]
async fn behind_one_proxy_hop_spoofed_forwarded_for_hops_are_ignored_on_postgres() {
    if let Some(app) = behind_proxy(Backend::Postgres, ProxyTrust::Hops(1)).await {
        spoofed_hops_do_not_give_fresh_buckets(app, "203.0.113.7").await;
    }
}

#[actix_web::test]
async fn behind_listed_proxies_spoofed_forwarded_for_hops_are_ignored() {
    // The test client connects from 127.0.0.1, which plays the outer proxy; 10.0.0.0/8 the inner ones.
    let trust = ProxyTrust::Addresses(vec![
        IpNet::parse("127.0.0.1").unwrap(),
        IpNet::parse("10.0.0.0/8").unwrap(),
    ]);
    let app = behind_proxy(Backend::Sqlite, trust).await.unwrap();
    spoofed_hops_do_not_give_fresh_buckets(app, "203.0.113.7, 10.0.0.5").await;
}

#[actix_web::test]
async fn without_proxy_trust_the_header_is_not_believed_at_all() {
    let app = behind_proxy(Backend::Sqlite, ProxyTrust::None)
        .await
        .unwrap();
    for i in 0..3 {
        assert_eq!(login_from(&app, &format!("203.0.113.{i}")).await, 401);
    }
    // Every request came from 127.0.0.1, whatever the header said.
    assert_eq!(login_from(&app, "203.0.113.99").await, 429);
}

async fn login_as(app: &TestApp, username: &str, password: &str, address: &str) -> u16 {
    app.call_raw(
        "POST",
        "/api/v1/auth/login",
        Some(json!({"username": username, "password": password}).to_string()),
        None,
        &[("x-forwarded-for", address)],
    )
    .await
    .status
    .as_u16()
}

async fn lockout_is_not_in_a_strangers_hands(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    config.config.proxy_trust = ProxyTrust::Hops(1);
    config.config.rate_limits.login_ceiling_per_username.limit = 15;
    let app = TestApp::start(config).await;
    let bob = app.register("bob").await;
    let (a, b) = ("198.51.100.1", "198.51.100.2");
    // Ten wrong passwords from address A…
    for i in 0..10 {
        assert_eq!(
            login_as(&app, "bob", "wrong password", a).await,
            401,
            "guess {i}"
        );
    }
    // …slow A down, whatever it sends next…
    assert_eq!(login_as(&app, "bob", "wrong password", a).await, 429);
    assert_eq!(login_as(&app, "BOB", &bob.password, a).await, 429);
    // …but bob, from his own address, logs in.
    assert_eq!(login_as(&app, "bob", &bob.password, b).await, 200);

    // Guesses spread over many addresses reach the ceiling (15 failures for the name)…
    for i in 0..5 {
        let c = format!("203.0.113.{i}");
        assert_eq!(login_as(&app, "bob", "wrong password", &c).await, 401);
    }
    // …after which an address with a failure for bob waits, a fresh one gets a single guess…
    assert_eq!(
        login_as(&app, "bob", "wrong password", "203.0.113.0").await,
        429
    );
    assert_eq!(
        login_as(&app, "bob", "wrong password", "203.0.113.50").await,
        401
    );
    assert_eq!(
        login_as(&app, "bob", &bob.password, "203.0.113.50").await,
        429
    );
    // …and bob still logs in from an address of his.
    assert_eq!(
        login_as(&app, "bob", &bob.password, "198.51.100.3").await,
        200
    );
    // Other names are not affected by any of it.
    app.register("carol").await;
    assert_eq!(
        login_as(&app, "carol", "correct horse battery", a).await,
        200
    );
}

#[actix_web::test]
async fn ten_wrong_passwords_from_one_address_do_not_lock_the_owner_out_on_sqlite() {
    lockout_is_not_in_a_strangers_hands(Backend::Sqlite).await;
}

#[actix_web::test]
async fn ten_wrong_passwords_from_one_address_do_not_lock_the_owner_out_on_postgres() {
    lockout_is_not_in_a_strangers_hands(Backend::Postgres).await;
}

both_backends! {
    async fn fifty_newer_unfinished_matches_do_not_hide_a_ranked_one(app: TestApp) {
        let (a, b) = (app.register("ranked_a").await, app.register("ranked_b").await);
        let ta = app.queue(&a, "ultimate-10m").await;
        app.queue(&b, "ultimate-10m").await;
        let ranked = app.matched(&a, &ta).await;
        // Fifty newer unfinished matches of other kinds (rooms, which no cap limits).
        for i in 0..50 {
            let host = app.quick_player(&format!("host{i}")).await;
            app.time.advance(1);
            app.room_match(&host, &a, 2, json!({"kind": "none"})).await;
        }
        let listed = app.get("/api/v1/me/matches?status=active&limit=100", Some(&a.token)).await;
        assert_eq!(listed.body["items"].as_array().unwrap().len(), 51);
        let again = app
            .post("/api/v1/matchmaking/tickets", &json!({"ladder": "ultimate-turn30"}), Some(&a.token))
            .await;
        again.expect_problem(409, "in_active_match");
        assert_eq!(again.body["match_id"], ranked.as_str());
    }
}

/// A second instance on the same database with a broker of its own, so each
/// can hold a queued ticket of the same player (as two instances whose
/// broker state diverged would).
async fn second_instance(app: &TestApp) -> uttt::service::Context {
    let mut config = app.config.sibling();
    config.redis_prefix = format!("test:{}:", uttt::ids::record_id());
    uttt::server::context(config, app.time.clone())
        .await
        .expect("second instance")
}

async fn queued_ticket(
    ctx: &uttt::service::Context,
    player: &crate::support::Player,
    ladder: &str,
    now: i64,
) -> uttt::broker::Ticket {
    let ticket = uttt::broker::Ticket {
        id: uttt::ids::record_id(),
        player_id: player.id.clone(),
        ladder: ladder.into(),
        rating: 1500.0,
        created_at: now,
        seen_at: now,
        status: uttt::broker::TicketStatus::Queued,
        match_id: None,
        reason: None,
        last_x_at: None,
        last_opponent: None,
    };
    let row = uttt::service::matchmaking::queued_record(
        ticket.id.clone(),
        player.id.clone(),
        ladder.into(),
        1500.0,
        now,
    );
    ctx.db
        .run(move |conn| uttt::store::tickets::insert(conn, &row))
        .await
        .unwrap();
    assert_eq!(
        ctx.broker.enqueue(&ticket).await.unwrap(),
        uttt::broker::Enqueued::Queued
    );
    ticket
}

async fn two_instances_pair_one_player_at_once(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    config.config.workers = uttt::config::Workers::NONE;
    let app = TestApp::start(config).await;
    let other = second_instance(&app).await;
    let now = app.time.now_ms();
    let (p, q, r) = (
        app.quick_player("twice_p").await,
        app.quick_player("twice_q").await,
        app.quick_player("twice_r").await,
    );
    let (l1, l2) = (
        app.ctx.config.ladder("ultimate-10m").unwrap().clone(),
        app.ctx.config.ladder("ultimate-turn30").unwrap().clone(),
    );
    let p1 = queued_ticket(&app.ctx, &p, &l1.id, now).await;
    let q1 = queued_ticket(&app.ctx, &q, &l1.id, now).await;
    let p2 = queued_ticket(&other, &p, &l2.id, now).await;
    let r2 = queued_ticket(&other, &r, &l2.id, now).await;
    let (one, two) = tokio::join!(
        uttt::service::matchmaking::make_match(&app.ctx, &l1, &p1, &q1),
        uttt::service::matchmaking::make_match(&other, &l2, &p2, &r2),
    );
    let made: Vec<String> = [one.unwrap(), two.unwrap()].into_iter().flatten().collect();
    assert_eq!(made.len(), 1, "exactly one ranked match for p: {made:?}");
    let pid = p.id.clone();
    let seated = app
        .ctx
        .db
        .run(move |conn| {
            uttt::store::matches::count_active(conn, &pid, uttt::store::kinds::Mode::Ranked)
        })
        .await
        .unwrap();
    assert_eq!(seated, 1);
    // The refused pairing: p's ticket is cancelled, the opponent waits on.
    let p1_id = p1.id.clone();
    let p1_row = app
        .ctx
        .db
        .run(move |conn| uttt::store::tickets::get(conn, &p1_id))
        .await
        .unwrap()
        .unwrap();
    let (lost_ctx, lost_p, lost_opponent) = if p1_row.match_id.as_deref() == Some(made[0].as_str())
    {
        (&other, &p2, &r2)
    } else {
        (&app.ctx, &p1, &q1)
    };
    for (ticket, status, reason) in [
        (lost_p, "cancelled", Some("in_active_match")),
        (lost_opponent, "queued", None),
    ] {
        let id = ticket.id.clone();
        let row = lost_ctx
            .db
            .run(move |conn| uttt::store::tickets::get(conn, &id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.status, status, "{}", ticket.player_id);
        assert_eq!(row.reason.as_deref(), reason);
        let held = lost_ctx.broker.ticket(&ticket.id).await.unwrap().unwrap();
        assert_eq!(held.status.as_str(), status);
    }
}

/// A pair whose ticket was cancelled in the database, or whose player was
/// deleted, while the broker still held the ticket queued: the round's
/// first write assumes the pair can be made, is refused (by the count of
/// tickets it marks, or the check of the seated players), and the checked
/// write leaves the pair out and puts the other ticket back.
async fn a_pair_with_a_ticket_gone_from_the_database_is_left_out(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    config.config.workers = uttt::config::Workers::NONE;
    let app = TestApp::start(config).await;
    let now = app.time.now_ms();
    let (p, q) = (
        app.quick_player("gone_p").await,
        app.quick_player("gone_q").await,
    );
    let ladder = app.ctx.config.ladder("ultimate-10m").unwrap().clone();
    let pt = queued_ticket(&app.ctx, &p, &ladder.id, now).await;
    let qt = queued_ticket(&app.ctx, &q, &ladder.id, now).await;
    let gone = pt.id.clone();
    assert!(
        app.ctx
            .db
            .run(move |conn| uttt::store::tickets::mark_cancelled(conn, &gone, "cancelled", now))
            .await
            .unwrap()
    );
    let made = uttt::service::matchmaking::make_match(&app.ctx, &ladder, &pt, &qt)
        .await
        .unwrap();
    assert_eq!(made, None, "no match for a pair with a cancelled ticket");
    for (ticket, status) in [(&pt, "cancelled"), (&qt, "queued")] {
        let row = crate::pairing::ticket_row(&app, &ticket.id).await;
        assert_eq!(row.status, status, "{}", ticket.player_id);
        assert_eq!(row.match_id, None);
    }
    let held = app.ctx.broker.ticket(&qt.id).await.unwrap().unwrap();
    assert_eq!(
        held.status.as_str(),
        "queued",
        "the other ticket is back in the queue"
    );
    let pid = p.id.clone();
    let seated = app
        .ctx
        .db
        .run(move |conn| uttt::store::matches::active_ranked(conn, &pid))
        .await
        .unwrap();
    assert_eq!(seated, None);

    // A deleted player's ticket, still queued in the broker: the first write
    // is refused by the check of the seated players, and the checked write
    // finds the ticket gone with its player.
    let (r, s) = (
        app.quick_player("gone_r").await,
        app.quick_player("gone_s").await,
    );
    let rt = queued_ticket(&app.ctx, &r, &ladder.id, now).await;
    let st = queued_ticket(&app.ctx, &s, &ladder.id, now).await;
    let rid = r.id.clone();
    assert!(
        app.ctx
            .db
            .run(move |conn| uttt::store::players::delete(conn, &rid))
            .await
            .unwrap()
    );
    let made = uttt::service::matchmaking::make_match(&app.ctx, &ladder, &rt, &st)
        .await
        .unwrap();
    assert_eq!(made, None, "no match for a deleted player");
    let row = crate::pairing::ticket_row(&app, &st.id).await;
    assert_eq!((row.status.as_str(), row.match_id), ("queued", None));
    let held = app.ctx.broker.ticket(&st.id).await.unwrap().unwrap();
    assert_eq!(
        held.status.as_str(),
        "queued",
        "the opponent is back in the queue"
    );
}

#[actix_web::test]
async fn a_pair_with_a_ticket_gone_from_the_database_is_left_out_on_sqlite() {
    a_pair_with_a_ticket_gone_from_the_database_is_left_out(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_pair_with_a_ticket_gone_from_the_database_is_left_out_on_postgres() {
    a_pair_with_a_ticket_gone_from_the_database_is_left_out(Backend::Postgres).await;
}

#[actix_web::test]
async fn two_instances_pairing_one_player_at_once_seat_them_once_on_sqlite() {
    two_instances_pair_one_player_at_once(Backend::Sqlite).await;
}

#[actix_web::test]
async fn two_instances_pairing_one_player_at_once_seat_them_once_on_postgres() {
    two_instances_pair_one_player_at_once(Backend::Postgres).await;
}

both_backends! {
    async fn practice_matches_are_capped_per_player(app: TestApp) {
        let p = app.register("practiser").await;
        let body = json!({"opponent": "cpu", "cpu_level": 1});
        let mut ids = Vec::new();
        for _ in 0..5 {
            let made = app.post("/api/v1/matches", &body, Some(&p.token)).await;
            made.expect(201);
            ids.push(made.body["id"].as_str().unwrap().to_owned());
        }
        let refused = app.post("/api/v1/matches", &body, Some(&p.token)).await;
        refused.expect_problem(409, "too_many_practice_matches");
        // Another player is not affected; finishing one makes room.
        let other = app.register("practiser2").await;
        app.post("/api/v1/matches", &body, Some(&other.token)).await.expect(201);
        app.post(&format!("/api/v1/matches/{}/resign", ids[0]), &json!({}), Some(&p.token))
            .await
            .expect(200);
        app.post("/api/v1/matches", &body, Some(&p.token)).await.expect(201);
    }
}

async fn practice(
    app: &TestApp,
    p: &crate::support::Player,
    time_control: serde_json::Value,
) -> String {
    app.time.advance(1);
    let made = app
        .post(
            "/api/v1/matches",
            &json!({"opponent": "cpu", "seat": "o", "cpu_level": 1, "time_control": time_control}),
            Some(&p.token),
        )
        .await;
    made.expect(201);
    made.body["id"].as_str().unwrap().to_owned()
}

async fn ply_of(app: &TestApp, id: &str) -> i32 {
    app.match_row(id).await.ply
}

async fn crowded_cpu_queue(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    config.config.workers = uttt::config::Workers::NONE;
    config.config.drop_grace = Duration::from_millis(1_000);
    config.config.caps.practice_matches = 10;
    let app = TestApp::start(config).await;
    let untimed = json!({"kind": "none"});
    // The oldest turns: six practice matches of one player…
    let hog = app.quick_player("hog").await;
    let mut hogs = Vec::new();
    for _ in 0..6 {
        hogs.push(practice(&app, &hog, untimed.clone()).await);
    }
    // …then nine players with one each…
    let mut others = Vec::new();
    for i in 0..9 {
        let p = app.quick_player(&format!("other{i}")).await;
        others.push(practice(&app, &p, untimed.clone()).await);
    }
    // …a practice match under a clock…
    let clocked_player = app.quick_player("clocked").await;
    let clocked = practice(
        &app,
        &clocked_player,
        json!({"kind": "clock", "initial_ms": 600000}),
    )
    .await;
    // …and, newest, a room match whose X dropped out: the CPU covers X.
    let (sx, so) = (
        app.quick_player("sub_x").await,
        app.quick_player("sub_o").await,
    );
    let covered = app.room_match(&sx, &so, 2, untimed.clone()).await;
    app.time.advance(1_010);
    assert_eq!(
        uttt::worker::presence::tick(&app.ctx).await.unwrap(),
        1,
        "X is covered"
    );

    // One tick with sixteen CPU moves waiting and room for eight.
    let played = uttt::worker::cpu::tick(&app.ctx).await.unwrap();
    assert_eq!(played, uttt::worker::cpu_order::BATCH);
    assert_eq!(
        ply_of(&app, &covered).await,
        1,
        "the substitute moves first"
    );
    assert_eq!(ply_of(&app, &clocked).await, 1, "then the running clock");
    let mut hog_moved = 0;
    for id in &hogs {
        hog_moved += ply_of(&app, id).await;
    }
    assert_eq!(hog_moved, 2, "one player gets at most two of the batch");
    let mut moved = Vec::new();
    for id in &others {
        moved.push(ply_of(&app, id).await);
    }
    assert_eq!(
        moved,
        [1, 1, 1, 1, 0, 0, 0, 0, 0],
        "then the longest waiting"
    );
    // The next ticks serve the rest; nothing is starved.
    while uttt::worker::cpu::tick(&app.ctx).await.unwrap() > 0 {}
    for id in hogs.iter().chain(&others) {
        assert_eq!(ply_of(&app, id).await, 1);
    }
}

#[actix_web::test]
async fn a_crowded_cpu_queue_serves_substitutes_and_clocks_first_and_no_player_takes_it_all_on_sqlite()
 {
    crowded_cpu_queue(Backend::Sqlite).await;
}

#[actix_web::test]
async fn a_crowded_cpu_queue_serves_substitutes_and_clocks_first_and_no_player_takes_it_all_on_postgres()
 {
    crowded_cpu_queue(Backend::Postgres).await;
}

async fn room_app(
    backend: Backend,
    edit: impl FnOnce(&mut uttt::config::Config),
) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    edit(&mut config.config);
    Some(TestApp::start(config).await)
}

async fn open_room(app: &TestApp, host: &crate::support::Player) -> crate::support::Reply {
    app.post("/api/v1/rooms", &json!({"depth": 1}), Some(&host.token))
        .await
}

async fn room_guessing(backend: Backend) {
    let Some(app) = room_app(backend, |c| {
        c.rate_limits.room_lookups_per_player.limit = 5;
        c.rate_limits.room_lookups_per_address.limit = 7;
    })
    .await
    else {
        return;
    };
    let host = app.quick_player("roomhost").await;
    let real = open_room(&app, &host).await.body["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let guesser = app.quick_player("guesser").await;
    let guesses = ["AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD", "EEEEEE"];
    for code in guesses {
        app.get(&format!("/api/v1/rooms/{code}"), Some(&guesser.token))
            .await
            .expect_problem(404, "not_found");
    }
    // The sixth look-up of this player, and a join, wait — even for the real code.
    let limited = app
        .get(&format!("/api/v1/rooms/{real}"), Some(&guesser.token))
        .await;
    limited.expect_problem(429, "rate_limited");
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    app.post(
        &format!("/api/v1/rooms/{real}/join"),
        &json!({}),
        Some(&guesser.token),
    )
    .await
    .expect_problem(429, "rate_limited");
    // A second account from the same address has what is left of the
    // address's look-ups (7, of which the guesser's five allowed ones used 5).
    let helper = app.quick_player("helper").await;
    for code in ["FFFFFF", "GGGGGG"] {
        app.get(&format!("/api/v1/rooms/{code}"), Some(&helper.token))
            .await
            .expect_problem(404, "not_found");
    }
    app.get("/api/v1/rooms/HHHHHH", Some(&helper.token))
        .await
        .expect_problem(429, "rate_limited");
}

#[actix_web::test]
async fn room_look_ups_and_joins_are_rate_limited_per_player_and_address_on_sqlite() {
    room_guessing(Backend::Sqlite).await;
}

#[actix_web::test]
async fn room_look_ups_and_joins_are_rate_limited_per_player_and_address_on_postgres() {
    room_guessing(Backend::Postgres).await;
}

both_backends! {
    with |backend| room_app(backend, |c| c.workers = uttt::config::Workers::NONE);
    async fn a_room_nobody_joins_expires_and_is_pruned(app: TestApp) {
        {
            let ttl_ms = i64::try_from(app.ctx.config.room_ttl.as_millis()).unwrap();
            let host = app.quick_player("lonely").await;
            let guest = app.quick_player("late").await;
            let stale = open_room(&app, &host).await.body["code"]
                .as_str()
                .unwrap()
                .to_owned();
            app.time.advance(ttl_ms - 1);
            let fresh = open_room(&app, &host).await.body["code"]
                .as_str()
                .unwrap()
                .to_owned();
            app.get(&format!("/api/v1/rooms/{stale}"), Some(&guest.token))
                .await
                .expect(200);
            app.time.advance(1);
            // Past its time to live, nobody can see or join it…
            app.get(&format!("/api/v1/rooms/{stale}"), Some(&guest.token))
                .await
                .expect_problem(404, "not_found");
            app.post(
                &format!("/api/v1/rooms/{stale}/join"),
                &json!({}),
                Some(&guest.token),
            )
            .await
            .expect_problem(404, "not_found");
            // …and the pruning worker deletes it, leaving the younger one.
            let pruned = uttt::worker::prune::tick(&app.ctx).await.unwrap();
            assert_eq!(pruned.rooms, 1);
            app.get(&format!("/api/v1/rooms/{fresh}"), Some(&guest.token))
                .await
                .expect(200);
            app.post(
                &format!("/api/v1/rooms/{fresh}/join"),
                &json!({}),
                Some(&guest.token),
            )
            .await
            .expect(200);
            // A joined room does not expire.
            app.time.advance(ttl_ms * 2);
            assert_eq!(uttt::worker::prune::tick(&app.ctx).await.unwrap().rooms, 0);
            app.get(&format!("/api/v1/rooms/{fresh}"), Some(&guest.token))
                .await
                .expect(200);
        }
    }
}

both_backends! {
    async fn open_rooms_are_capped_per_player(app: TestApp) {
        let host = app.quick_player("roomy").await;
        let mut codes = Vec::new();
        for _ in 0..5 {
            let room = open_room(&app, &host).await;
            room.expect(201);
            codes.push(room.body["code"].as_str().unwrap().to_owned());
        }
        open_room(&app, &host).await.expect_problem(409, "too_many_open_rooms");
        // A joined room no longer counts…
        let guest = app.quick_player("joiner").await;
        app.post(&format!("/api/v1/rooms/{}/join", codes[0]), &json!({}), Some(&guest.token)).await.expect(200);
        open_room(&app, &host).await.expect(201);
        open_room(&app, &host).await.expect_problem(409, "too_many_open_rooms");
        // …nor do expired ones; other players are not affected.
        open_room(&app, &guest).await.expect(201);
        app.time.advance(i64::try_from(app.ctx.config.room_ttl.as_millis()).unwrap());
        open_room(&app, &host).await.expect(201);
    }
}

both_backends! {
    async fn a_username_equal_to_another_players_id_cannot_stand_in_for_them(app: TestApp) {
        let boss = app.register("boss").await;
        let name = boss.username.clone();
        app.ctx
            .db
            .run(move |conn| uttt::service::accounts::set_role(conn, &name, uttt::service::accounts::Role::Admin))
            .await
            .unwrap();
        let (victim, rival) = (app.quick_player("victim").await, app.quick_player("rival").await);
        let victims = app.room_match(&victim, &rival, 1, json!({"kind": "none"})).await;
        // Someone registers the victim's id as their username.
        assert!(uttt::service::accounts::Username::parse(&victim.id).is_ok());
        let impostor = app.register(&victim.id).await;
        let other = app.quick_player("other").await;
        let impostors = app.room_match(&impostor, &other, 1, json!({"kind": "none"})).await;
        let ids = |reply: &crate::support::Reply| -> Vec<String> {
            reply.body["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect()
        };
        let list = |q: String| {
            let token = boss.token.clone();
            let app = &app;
            async move {
                let reply = app.get(&format!("/api/v1/admin/matches?{q}"), Some(&token)).await;
                reply.expect(200);
                reply
            }
        };
        // By id: the victim's matches, whatever names exist.
        assert_eq!(ids(&list(format!("player_id={}", victim.id)).await), std::slice::from_ref(&victims));
        // By name: the player with that name (here the impostor), never an id.
        assert_eq!(ids(&list(format!("player={}", victim.id)).await), [impostors]);
        assert_eq!(ids(&list("player=rival".to_owned()).await), std::slice::from_ref(&victims));
        // Both: they must agree.
        assert_eq!(ids(&list(format!("player=victim&player_id={}", victim.id)).await), [victims]);
        assert!(ids(&list(format!("player=rival&player_id={}", victim.id)).await).is_empty());
        // An unknown name matches nothing (it is not tried as an id).
        assert!(ids(&list(format!("player={}", rival.id)).await).is_empty());
    }
}

/// Ends of the frames the server sends before closing a stream.
const EXPIRED: &str = "the access token expired";
const REVOKED: &str = "event: session_revoked";

async fn stream_app(
    backend: Backend,
    edit: impl FnOnce(&mut uttt::config::Config),
) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    // Keep-alives every 100 ms, so a closed client is noticed quickly.
    config.config.drop_grace = Duration::from_millis(300);
    config.config.workers = uttt::config::Workers::NONE;
    edit(&mut config.config);
    Some(TestApp::start(config).await)
}

async fn streams_end_when_the_token_expires(backend: Backend) {
    let Some(app) = stream_app(backend, |c| c.access_token_ttl = Duration::from_secs(2)).await
    else {
        return;
    };
    let (x, o) = (app.register("expx").await, app.register("expo").await);
    let id = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
    let mut mine = EventStream::open(&app, "/api/v1/me/events", &x.token, None).await;
    let mut match_stream = EventStream::open(
        &app,
        &format!("/api/v1/matches/{id}/events"),
        &x.token,
        None,
    )
    .await;
    match_stream
        .state_where(Duration::from_secs(5), |_| true)
        .await;
    // The token lives at most two seconds: both streams end with a retry hint.
    for stream in [&mut mine, &mut match_stream] {
        assert!(
            stream.closes_within(Duration::from_secs(15)).await,
            "the stream stays open"
        );
        let tail = stream.buffered();
        assert!(
            tail.contains(EXPIRED) && tail.contains("retry: 1000"),
            "{tail}"
        );
    }
    // The expired token opens nothing; a fresh one does.
    let stale = app
        .get(&format!("/api/v1/me/events?access_token={}", x.token), None)
        .await;
    stale.expect_problem(401, "unauthorized");
    let fresh = app
        .post(
            "/api/v1/auth/refresh",
            &json!({"refresh_token": x.refresh}),
            None,
        )
        .await;
    fresh.expect(200);
    EventStream::open(
        &app,
        "/api/v1/me/events",
        fresh.body["access_token"].as_str().unwrap(),
        None,
    )
    .await;
}

#[actix_web::test]
async fn event_streams_end_when_their_access_token_expires_on_sqlite() {
    streams_end_when_the_token_expires(Backend::Sqlite).await;
}

#[actix_web::test]
async fn event_streams_end_when_their_access_token_expires_on_postgres() {
    streams_end_when_the_token_expires(Backend::Postgres).await;
}

both_backends! {
    async fn logging_out_ends_the_sessions_streams_on_every_instance(app: TestApp) {
        let (x, o) = (app.register("outx").await, app.register("outo").await);
        let id = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        let mine = EventStream::open(&app, "/api/v1/me/events", &x.token, None).await;
        let mut watching =
            EventStream::open(&app, &format!("/api/v1/matches/{id}/events"), &x.token, None).await;
        watching.state_where(Duration::from_secs(5), |_| true).await;
        let mut session_streams = vec![mine, watching];
        // With Redis, a stream on a second instance ends too.
        if app.ctx.broker.kind() == "redis" {
            let (address, _ctx, _handle) = app.start_sibling().await;
            session_streams.push(EventStream::open_at(&address, &app.client, "/api/v1/me/events", &x.token, None).await);
        }
        // Another session of the same player is not touched.
        let other_login = app
            .post("/api/v1/auth/login", &json!({"username": "outx", "password": x.password}), None)
            .await;
        let other_token = other_login.body["access_token"].as_str().unwrap().to_owned();
        let mut other = EventStream::open(&app, "/api/v1/me/events", &other_token, None).await;

        app.post("/api/v1/auth/logout", &json!({"refresh_token": x.refresh}), None).await.expect(204);
        for stream in &mut session_streams {
            assert!(stream.closes_within(Duration::from_secs(10)).await, "a stream of the session stays open");
            assert!(stream.buffered().contains(REVOKED), "{}", stream.buffered());
        }
        // The access token still verifies, but cannot reopen a stream of the ended session.
        app.get(&format!("/api/v1/me/events?access_token={}", x.token), None)
            .await
            .expect_problem(401, "unauthorized");
        assert!(!other.closes_within(Duration::from_millis(500)).await, "the other session's stream ended");
    }

    async fn a_reused_refresh_token_ends_the_sessions_streams(app: TestApp) {
        let p = app.register("reuser").await;
        let mut mine = EventStream::open(&app, "/api/v1/me/events", &p.token, None).await;
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None).await.expect(200);
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None)
            .await
            .expect_problem(401, "unauthorized");
        assert!(mine.closes_within(Duration::from_secs(10)).await);
        assert!(mine.buffered().contains(REVOKED), "{}", mine.buffered());
    }
}

both_backends! {
    with |backend| stream_app(backend, |c| c.caps.streams = 2);
    async fn open_event_streams_are_capped_per_player(app: TestApp) {
        let (x, o) = (app.register("capx").await, app.register("capo").await);
        let id = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        let path = format!("/api/v1/matches/{id}/events");
        let first = EventStream::open(&app, &path, &x.token, None).await;
        let _second = EventStream::open(&app, "/api/v1/me/events", &x.token, None).await;
        let refused = app
            .get(&format!("{path}?access_token={}", x.token), None)
            .await;
        refused.expect_problem(429, "rate_limited");
        assert!(refused.header("retry-after").is_some());
        app.get(&format!("/api/v1/me/events?access_token={}", x.token), None)
            .await
            .expect_problem(429, "rate_limited");
        // Another player has slots of their own.
        let _theirs = EventStream::open(&app, &path, &o.token, None).await;
        // Closing a stream gives its slot back.
        drop(first);
        crate::support::eventually(Duration::from_secs(20), "a freed stream slot", || async {
            let url = format!("{}{path}?access_token={}", app.address, x.token);
            let res = app.client.get(url).send().await.ok()?;
            (res.status().as_u16() == 200).then_some(())
        })
        .await;
    }
}

/// Sends raw bytes on a fresh connection and reads until the server closes it.
async fn raw_exchange(app: &TestApp, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.address.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    // The server may refuse before it has read everything we send.
    let _ = conn.write_all(request).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn problem_of(response: &str) -> (u16, serde_json::Value, &str) {
    let status: u16 = response.split(' ').nth(1).unwrap().parse().unwrap();
    let (head, body) = response.rsplit_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or_default(), head)
}

#[actix_web::test]
async fn an_over_long_url_gets_a_problem_document_not_a_bare_400() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    for len in [100 * 1024, 40 * 1024, 9 * 1024] {
        let request = format!(
            "GET /api/v1/players/{} HTTP/1.1\r\nHost: x\r\n\r\n",
            "a".repeat(len)
        );
        let response = raw_exchange(&app, request.as_bytes()).await;
        let (status, body, head) = problem_of(&response);
        assert_eq!(status, 414, "{len}: {head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/problem+json"),
            "{head}"
        );
        assert_eq!(body["code"], "uri_too_long");
        assert_eq!(body["status"], 414);
    }
    // On a kept-alive connection: the first request is answered, the long second one refused.
    let both = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "b".repeat(100 * 1024)
    );
    let response = raw_exchange(&app, both.as_bytes()).await;
    assert!(
        response.starts_with("HTTP/1.1 200"),
        "{}",
        &response[..80.min(response.len())]
    );
    assert!(response.contains("HTTP/1.1 414 URI Too Long"), "{response}");
    // Too many headers, or a huge one: 431 headers_too_large.
    let many: String = (0..120).map(|i| format!("X-H{i}: v\r\n")).collect();
    let response = raw_exchange(
        &app,
        format!("GET /healthz HTTP/1.1\r\n{many}\r\n").as_bytes(),
    )
    .await;
    let (status, body, _) = problem_of(&response);
    assert_eq!(
        (status, body["code"].as_str()),
        (431, Some("headers_too_large"))
    );
    // An ordinary request still works, and a URL just under the limit reaches the routes.
    let near = format!("/api/v1/players/{}", "c".repeat(7 * 1024));
    app.get(&near, None).await.expect_problem(404, "not_found");
}

#[actix_web::test]
async fn metrics_ask_for_their_token_when_one_is_set() {
    let token = "metrics-token-0123456789";
    let mut config = TestConfig::new(Backend::Sqlite).unwrap();
    config.config.metrics_token = Some(token.into());
    let app = TestApp::start(config).await;
    app.get("/metrics", None)
        .await
        .expect_problem(401, "unauthorized");
    app.get("/metrics", Some("wrong-token-0123456789"))
        .await
        .expect_problem(401, "unauthorized");
    let player = app.register("metricsfan").await;
    app.get("/metrics", Some(&player.token))
        .await
        .expect_problem(401, "unauthorized");
    let ok = app.get("/metrics", Some(token)).await;
    ok.expect(200);
    assert!(ok.text.contains("uttt_http_requests_total"));
    // Without a token configured, /metrics stays open (for deployments that fence it at the proxy).
    let open = TestApp::spawn(Backend::Sqlite).await;
    open.get("/metrics", None).await.expect(200);
}

async fn pruning(backend: Backend) {
    {
        let Some(mut config) = TestConfig::new(backend) else {
            return;
        };
        // Only the test ticks the pruning worker.
        config.config.workers = uttt::config::Workers::NONE;
        let app = TestApp::start(config).await;
        let p = app.register("pruned").await;
        let now = chrono::Utc::now().timestamp_millis();
        // Three stored tokens of a family: two expired (one of them spent), one live.
        let pid = p.id.clone();
        app.ctx
            .db
            .run(move |conn| -> Result<(), uttt::store::StoreError> {
                for (i, expires_at) in [now - 1_000, now - 86_400_000].into_iter().enumerate() {
                    uttt::store::refresh_tokens::insert(
                        conn,
                        &uttt::store::refresh_tokens::NewRefreshToken {
                            id: &format!("old{i}"),
                            player_id: &pid,
                            family_id: "old-family",
                            token_hash: &format!("hash{i}"),
                            created_at: expires_at - 1_000,
                            expires_at,
                        },
                    )?;
                }
                Ok(())
            })
            .await
            .unwrap();
        let pruned = uttt::worker::prune::tick(&app.ctx).await.unwrap();
        assert_eq!(pruned.refresh_tokens, 2);
        assert_eq!(
            uttt::worker::prune::tick(&app.ctx)
                .await
                .unwrap()
                .refresh_tokens,
            0,
            "idempotent"
        );
        for i in 0..2 {
            let hash = format!("hash{i}");
            let gone = app
                .ctx
                .db
                .run(move |conn| uttt::store::refresh_tokens::by_hash(conn, &hash))
                .await
                .unwrap();
            assert!(gone.is_none());
        }
        // The live session is untouched.
        app.post(
            "/api/v1/auth/refresh",
            &json!({"refresh_token": p.refresh}),
            None,
        )
        .await
        .expect(200);
    }
}

#[actix_web::test]
async fn the_pruning_worker_deletes_expired_refresh_tokens_only_on_sqlite() {
    pruning(Backend::Sqlite).await;
}

#[actix_web::test]
async fn the_pruning_worker_deletes_expired_refresh_tokens_only_on_postgres() {
    pruning(Backend::Postgres).await;
}

/// Tickets matched or cancelled over a day ago (created and last changed
/// then) are deleted; queued ones and recently finished ones are kept.
async fn ticket_pruning(backend: Backend) {
    let Some(mut config) = TestConfig::new(backend) else {
        return;
    };
    // Only the test ticks the pruning worker.
    config.config.workers = uttt::config::Workers::NONE;
    let app = TestApp::start(config).await;
    let p = app.register("ticketholder").await;
    let now = app.time.now_ms();
    let day = uttt::worker::prune::TICKETS_KEPT_MS;
    // (id, status, created_at, updated_at, pruned)
    let cases = [
        ("old-matched", "matched", now - 2 * day, now - 2 * day, true),
        (
            "old-cancelled",
            "cancelled",
            now - day - 1_000,
            now - day - 1_000,
            true,
        ),
        (
            "old-but-just-matched",
            "matched",
            now - 2 * day,
            now - 1_000,
            false,
        ),
        (
            "old-still-queued",
            "queued",
            now - 2 * day,
            now - 2 * day,
            false,
        ),
        ("recent-matched", "matched", now - 1_000, now - 1_000, false),
    ];
    let rows: Vec<_> = cases
        .iter()
        .map(
            |&(id, status, created_at, updated_at, _)| uttt::store::tickets::TicketRow {
                id: id.into(),
                player_id: p.id.clone(),
                ladder: "ultimate-10m".into(),
                rating: 1500.0,
                status: status.into(),
                match_id: None,
                reason: None,
                created_at,
                updated_at,
            },
        )
        .collect();
    app.ctx
        .db
        .run(move |conn| uttt::store::tickets::insert_many(conn, &rows))
        .await
        .unwrap();
    let pruned = uttt::worker::prune::tick(&app.ctx).await.unwrap();
    assert_eq!(pruned.tickets, 2);
    assert_eq!(
        uttt::worker::prune::tick(&app.ctx).await.unwrap().tickets,
        0,
        "idempotent"
    );
    for (id, _, _, _, gone) in cases {
        let kept = app
            .ctx
            .db
            .run(move |conn| uttt::store::tickets::get(conn, id))
            .await
            .unwrap();
        assert_eq!(kept.is_none(), gone, "{id}");
    }
}

#[actix_web::test]
async fn the_pruning_worker_deletes_tickets_finished_over_a_day_ago_on_sqlite() {
    ticket_pruning(Backend::Sqlite).await;
}

#[actix_web::test]
async fn the_pruning_worker_deletes_tickets_finished_over_a_day_ago_on_postgres() {
    ticket_pruning(Backend::Postgres).await;
}
