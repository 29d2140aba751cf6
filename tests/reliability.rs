//! Reliability with real `uttt serve` processes on PostgreSQL and Redis:
//! two instances sharing one database and broker, crashes (`kill -9` of the
//! server, a restart of Redis), and graceful shutdown on SIGTERM.
//!
//! These run when `TEST_DATABASE_URL` and `TEST_REDIS_URL` are set (as
//! `.ci/run` sets them); they use real time, a few seconds each.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use common::db::TestDatabase;
use common::http::{Player, get_ok, register, try_call};
use common::sse::EventStream;

const SECRET: &str = "reliability-secret-0123456789abcdef0123";
/// A ladder where a match takes seconds: tic-tac-toe, 5 s a turn.
const QUICK: &str = r#"[{"id":"quick","name":"Quick","depth":1,"time_control":{"kind":"per_turn","turn_ms":5000}},
                       {"id":"lonely","name":"Lonely","depth":1,"time_control":{"kind":"per_turn","turn_ms":5000}}]"#;

fn env_or_skip() -> Option<(String, String)> {
    let db = std::env::var("TEST_DATABASE_URL")
        .ok()
        .filter(|v| !v.is_empty());
    let redis = std::env::var("TEST_REDIS_URL")
        .ok()
        .filter(|v| !v.is_empty());
    match (db, redis) {
        (Some(db), Some(redis)) => Some((db, redis)),
        (None, None) => {
            eprintln!(
                "TEST_DATABASE_URL / TEST_REDIS_URL are not set: the multi-process tests do not run"
            );
            None
        }
        _ => panic!("set both TEST_DATABASE_URL and TEST_REDIS_URL for the multi-process tests"),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `uttt serve` process.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    env: Vec<(String, String)>,
}

impl Server {
    fn start(port: u16, env: &[(String, String)], log: &Path) -> Server {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_uttt"))
            .arg("serve")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("UTTT_BIND", format!("127.0.0.1:{port}"))
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .expect("start uttt serve");
        Server {
            child,
            port,
            log: log.to_owned(),
            env: env.to_vec(),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn ready(&self, client: &awc::Client) {
        for _ in 0..300 {
            if let Ok(res) = client.get(format!("{}/readyz", self.url())).send().await
                && res.status().as_u16() == 200
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "uttt on port {} did not become ready; log:\n{}",
            self.port,
            self.log_tail()
        );
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal} failed");
    }

    /// `kill -9`, then a fresh process on the same port.
    fn crash_and_restart(&mut self) {
        self.signal("-KILL");
        let _ = self.child.wait();
        *self = Server::start(self.port, &self.env.clone(), &self.log.clone());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_env(db: &str, redis: &str, prefix: &str, dir: &Path) -> Vec<(String, String)> {
    [
        ("DATABASE_URL", db.to_owned()),
        ("REDIS_URL", redis.to_owned()),
        ("UTTT_REDIS_PREFIX", prefix.to_owned()),
        ("UTTT_JWT_SECRET", SECRET.to_owned()),
        ("UTTT_DATA_DIR", dir.display().to_string()),
        ("UTTT_LADDERS", QUICK.to_owned()),
        ("UTTT_DROP_GRACE_MS", "1500".to_owned()),
        ("UTTT_MM_ROUND_MS", "100".to_owned()),
        ("UTTT_MM_WINDOW_START", "5000".to_owned()),
        ("UTTT_REGISTER_LIMIT_PER_ADDRESS", "100000".to_owned()),
        ("UTTT_LOGIN_LIMIT_PER_ADDRESS", "100000".to_owned()),
        // One spectator watches every match on both instances.
        ("UTTT_STREAMS_PER_PLAYER", "100".to_owned()),
        ("UTTT_HTTP_WORKERS", "2".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uttt-{name}-{}", uttt::ids::record_id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a multi-process test runs on: a database of its own, a scratch
/// folder, and the servers' environment on the shared Redis under a key
/// prefix of its own.
struct Setup {
    db: TestDatabase,
    dir: PathBuf,
    env: Vec<(String, String)>,
    prefix: String,
    redis: String,
}

/// The setup of the test `name`; `None` when the variables are unset.
fn setup(name: &str) -> Option<Setup> {
    let (admin_url, redis) = env_or_skip()?;
    let db = TestDatabase::create(&admin_url);
    let dir = temp_dir(name);
    let prefix = format!("{name}:{}:", uttt::ids::record_id());
    let env = server_env(&db.url, &redis, &prefix, &dir);
    Some(Setup {
        db,
        dir,
        env,
        prefix,
        redis,
    })
}

fn client() -> awc::Client {
    awc::Client::builder()
        .connector(awc::Connector::new().limit(256))
        .timeout(Duration::from_secs(20))
        .finish()
}

/// A classic untimed match between `x` (who opens a room on `base`) and
/// `o` (who joins it): the room's code and the match's id.
async fn room_match(http: &awc::Client, base: &str, x: &Player, o: &Player) -> (String, String) {
    let room = try_call(
        http,
        "POST",
        &format!("{base}/api/v1/rooms"),
        Some(&json!({"depth": 2, "time_control": {"kind": "none"}})),
        Some(&x.token),
    )
    .await
    .unwrap()
    .body;
    let code = room["code"].as_str().unwrap().to_owned();
    let joined = try_call(
        http,
        "POST",
        &format!("{base}/api/v1/rooms/{code}/join"),
        Some(&json!({})),
        Some(&o.token),
    )
    .await
    .unwrap()
    .body;
    let id = joined["match_id"].as_str().unwrap().to_owned();
    (code, id)
}

/// Reads every match of the database, in one snapshot, and checks it:
/// stored record = replay of the moves, result follows.
async fn assert_database_consistent(db_url: &str) -> Vec<uttt::store::matches::MatchRow> {
    let db = uttt::store::Db::new(
        &uttt::config::DatabaseConfig::Postgres(db_url.to_owned()),
        2,
    )
    .unwrap();
    let rows: Vec<(
        uttt::store::matches::MatchRow,
        Vec<uttt::store::matches::MoveRow>,
    )> = db
        .run(|conn| {
            common::db::in_one_snapshot(conn, |conn| {
                let matches =
                    uttt::store::history::search(conn, &Default::default(), None, 10_000)?;
                let mut out = Vec::new();
                for m in matches {
                    let moves = uttt::store::matches::moves(conn, &m.id)?;
                    out.push((m, moves));
                }
                Ok(out)
            })
        })
        .await
        .unwrap();
    for (row, moves) in &rows {
        let found =
            uttt::service::audit::audit(&uttt::service::audit::StoredMatch::from_rows(row, moves));
        assert!(found.is_empty(), "match {}: {found:#?}", row.id);
    }
    rows.into_iter().map(|(r, _)| r).collect()
}

/// Plays one match from both seats through the given instances until it ends.
/// `behaviour`: "play", "drop_o" (O vanishes after its first move), "stall_x" (X stays but never moves).
async fn drive(
    client: awc::Client,
    bases: [String; 2],
    x: Player,
    o: Player,
    id: String,
    behaviour: &'static str,
) -> Value {
    let mut turn_count = 0u32;
    loop {
        let viewer = if behaviour == "drop_o" && turn_count > 1 {
            &x
        } else {
            &o
        };
        let state = try_call(
            &client,
            "GET",
            &format!("{}/api/v1/matches/{id}", bases[turn_count as usize % 2]),
            None,
            Some(&viewer.token),
        )
        .await
        .expect("state")
        .body;
        if state["status"] == "finished" {
            return state;
        }
        let mover = if state["turn"] == "x" { &x } else { &o };
        let dropped =
            behaviour == "drop_o" && mover.id == o.id && state["ply"].as_u64().unwrap_or(0) >= 1;
        let stalled = behaviour == "stall_x" && mover.id == x.id;
        if dropped || stalled {
            if stalled {
                let base = &bases[0];
                try_call(
                    &client,
                    "POST",
                    &format!("{base}/api/v1/matches/{id}/heartbeat"),
                    Some(&json!({})),
                    Some(&x.token),
                )
                .await;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            turn_count += 1;
            continue;
        }
        let legal = state["next"]["legal"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(address) = legal.first() {
            let base = &bases[(turn_count as usize + 1) % 2];
            try_call(
                &client,
                "POST",
                &format!("{base}/api/v1/matches/{id}/moves"),
                Some(&json!({"ply": state["ply"], "address": address})),
                Some(&mover.token),
            )
            .await;
        }
        turn_count += 1;
    }
}

#[actix_web::test]
async fn two_instances_play_ranked_games_without_double_booking_double_moves_or_lost_events() {
    let Some(Setup { db, dir, env, .. }) = setup("two") else {
        return;
    };
    let a = Server::start(free_port(), &env, &dir.join("a.log"));
    let b = Server::start(free_port(), &env, &dir.join("b.log"));
    let http = client();
    a.ready(&http).await;
    b.ready(&http).await;
    let bases = [a.url(), b.url()];

    let mut players = Vec::new();
    for i in 0..12 {
        players.push(register(&http, &bases[i % 2], &format!("rel_{i}")).await);
    }
    // Each player listens on one instance and queues through the other.
    let mut own_events = Vec::new();
    for (i, p) in players.iter().enumerate() {
        own_events.push(
            EventStream::open_at(&bases[i % 2], &http, "/api/v1/me/events", &p.token, None).await,
        );
    }
    for (i, p) in players.iter().enumerate() {
        try_call(
            &http,
            "POST",
            &format!("{}/api/v1/matchmaking/tickets", bases[(i + 1) % 2]),
            Some(&json!({"ladder": "quick"})),
            Some(&p.token),
        )
        .await
        .unwrap()
        .expect(201);
    }
    let mut match_of: HashMap<String, String> = HashMap::new();
    for (p, events) in players.iter().zip(own_events.iter_mut()) {
        let found = events
            .next_event(Duration::from_secs(20))
            .await
            .expect("match_found");
        assert_eq!(found.event, "match_found");
        let data: Value = serde_json::from_str(&found.data).unwrap();
        match_of.insert(p.id.clone(), data["match_id"].as_str().unwrap().to_owned());
    }
    let mut seated: HashMap<String, Vec<String>> = HashMap::new();
    for (player, m) in &match_of {
        seated.entry(m.clone()).or_default().push(player.clone());
    }
    assert_eq!(
        seated.len(),
        6,
        "12 players, 6 matches: nobody double-booked"
    );
    assert!(seated.values().all(|v| v.len() == 2));

    // Watch every match on both instances, and play them: four to the end,
    // one with a dropped O (the CPU substitutes), one where X stalls (time forfeit).
    // A spectator watches: a seated player's open stream would keep their seat present.
    let spectator = register(&http, &bases[0], "rel_spectator").await;
    drop(own_events);
    let by_id: HashMap<String, Player> =
        players.iter().map(|p| (p.id.clone(), p.clone())).collect();
    let mut watchers = Vec::new();
    let mut drivers = Vec::new();
    let behaviours = ["play", "play", "drop_o", "stall_x", "play", "play"];
    let mut ids: Vec<&String> = seated.keys().collect();
    ids.sort();
    for (k, id) in ids.iter().enumerate() {
        let state = try_call(
            &http,
            "GET",
            &format!("{}/api/v1/matches/{id}", bases[0]),
            None,
            Some(&players[0].token),
        )
        .await
        .unwrap()
        .body;
        let x = by_id[state["players"]["x"]["id"].as_str().unwrap()].clone();
        let o = by_id[state["players"]["o"]["id"].as_str().unwrap()].clone();
        for base in &bases {
            let stream = EventStream::open_at(
                base,
                &http,
                &format!("/api/v1/matches/{id}/events"),
                &spectator.token,
                None,
            )
            .await;
            let versions = Arc::new(Mutex::new(Vec::new()));
            let seen = versions.clone();
            watchers.push((
                id.to_string(),
                versions,
                actix_web::rt::spawn(async move {
                    let mut stream = stream;
                    while let Some(event) = stream.next_event(Duration::from_secs(60)).await {
                        let state: Value = serde_json::from_str(&event.data).unwrap();
                        seen.lock()
                            .unwrap()
                            .push(state["version"].as_i64().unwrap());
                        if state["status"] == "finished" {
                            break;
                        }
                    }
                }),
            ));
        }
        drivers.push(actix_web::rt::spawn(drive(
            http.clone(),
            bases.clone(),
            x,
            o,
            id.to_string(),
            behaviours[k],
        )));
    }
    let mut finals = Vec::new();
    for d in drivers {
        finals.push(
            tokio::time::timeout(Duration::from_secs(60), d)
                .await
                .expect("match ends")
                .unwrap(),
        );
    }
    let substituted = &finals[2];
    assert_eq!(
        substituted["players"]["o"]["controller"], "cpu",
        "the dropped O is played by the CPU: {substituted}"
    );
    let forfeited = &finals[3];
    assert_eq!(forfeited["result"]["reason"], "timeout", "{forfeited}");
    assert_eq!(
        forfeited["result"]["winner"], "o",
        "the stalling X loses on time"
    );

    let rows = assert_database_consistent(&db.url).await;
    assert_eq!(rows.len(), 6);
    for (id, versions, task) in watchers {
        tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("stream ends")
            .unwrap();
        let versions = versions.lock().unwrap().clone();
        assert!(
            versions.windows(2).all(|w| w[0] < w[1]),
            "match {id}: versions only grow: {versions:?}"
        );
        let final_version = rows.iter().find(|r| r.id == id).unwrap().version as i64;
        assert_eq!(
            versions.last().copied(),
            Some(final_version),
            "match {id}: the stream saw the final state"
        );
    }
    // Both instances' rated results counted exactly once.
    for p in &players {
        let games = quick_games(&http, &bases[0], p).await;
        assert_eq!(games, 1, "{}: one rated game", p.username);
    }
    drop(a);
    drop(b);
}

/// The number of rated games `p` has on the `quick` ladder, from `/me`.
async fn quick_games(http: &awc::Client, base: &str, p: &Player) -> u64 {
    let me = try_call(
        http,
        "GET",
        &format!("{base}/api/v1/me"),
        None,
        Some(&p.token),
    )
    .await
    .expect("me")
    .body;
    let ratings = me["ratings"].as_array().cloned().unwrap_or_default();
    ratings
        .iter()
        .find(|r| r["ladder"] == "quick")
        .map_or(0, |r| r["games"].as_u64().unwrap())
}

/// The next game for a pair: a rematch in their room, or (no room) both queue
/// on the `quick` ladder until paired. `None` while the server is unreachable.
async fn next_game(
    http: &awc::Client,
    base: &str,
    room: Option<&str>,
    after: &str,
    a: &Player,
    b: &Player,
) -> Option<String> {
    if let Some(code) = room {
        let room = try_call(
            http,
            "POST",
            &format!("{base}/api/v1/rooms/{code}/rematch"),
            Some(&json!({"after_match_id": after})),
            Some(&a.token),
        )
        .await?;
        return (room.status == 200).then(|| room.body["match_id"].as_str().unwrap().to_owned());
    }
    let mut ticket = String::new();
    for p in [a, b] {
        // 409 already_queued after a crash is fine: the ticket is still there.
        let t = try_call(
            http,
            "POST",
            &format!("{base}/api/v1/matchmaking/tickets"),
            Some(&json!({"ladder": "quick"})),
            Some(&p.token),
        )
        .await?
        .body;
        if let Some(id) = t["id"].as_str().or(t["ticket_id"].as_str()) {
            ticket = id.to_owned();
        }
    }
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let t = try_call(
            http,
            "GET",
            &format!("{base}/api/v1/matchmaking/tickets/{ticket}"),
            None,
            Some(&b.token),
        )
        .await?
        .body;
        if let Some(m) = t["match_id"].as_str() {
            return Some(m.to_owned());
        }
    }
    None
}

#[actix_web::test]
async fn acknowledged_moves_survive_kill_9_and_a_redis_restart() {
    let Some((admin_url, _shared_redis)) = env_or_skip() else {
        return;
    };
    // A Redis of this test's own, so restarting it disturbs no other test.
    let redis_port = free_port();
    let start_redis = || {
        Command::new("redis-server")
            .args([
                "--port",
                &redis_port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server must be installed for the crash test")
    };
    let mut redis = start_redis();
    let redis_url = format!("redis://127.0.0.1:{redis_port}");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", redis_port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let db = TestDatabase::create(&admin_url);
    let dir = temp_dir("crash");
    let env = server_env(&db.url, &redis_url, "crash:", &dir);
    let mut server = Server::start(free_port(), &env, &dir.join("server.log"));
    let http = client();
    server.ready(&http).await;
    let base = server.url();

    // Eight rooms playing game after game, and one player waiting alone on a ladder.
    let mut games = Vec::new();
    for g in 0..8 {
        let a = register(&http, &base, &format!("cx_{g}")).await;
        let b = register(&http, &base, &format!("co_{g}")).await;
        let (code, id) = room_match(&http, &base, &a, &b).await;
        games.push((Some(code), id, a, b));
    }
    let waiting = register(&http, &base, "c_waiting").await;
    let ticket = try_call(
        &http,
        "POST",
        &format!("{base}/api/v1/matchmaking/tickets"),
        Some(&json!({"ladder": "lonely"})),
        Some(&waiting.token),
    )
    .await
    .unwrap()
    .body;
    let ticket_id = ticket["id"].as_str().unwrap().to_owned();

    // Steady move load; every move acknowledged with 200 is recorded.
    let acked: Arc<Mutex<Vec<(String, u64, Value)>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    // A ranked pair too, queueing again after each match (one pair, so it is always paired with itself).
    for r in 0..1 {
        let a = register(&http, &base, &format!("cr_{r}a")).await;
        let b = register(&http, &base, &format!("cr_{r}b")).await;
        let first = next_game(&http, &base, None, "", &a, &b)
            .await
            .expect("ranked pair matched");
        games.push((None, first, a, b));
    }
    for (code, first, a, b) in games.clone() {
        let (http, acked, stop, base) = (http.clone(), acked.clone(), stop.clone(), base.clone());
        load.push(actix_web::rt::spawn(async move {
            let mut id = first;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let Some(state) = get_ok(
                    &http,
                    &format!("{base}/api/v1/matches/{id}"),
                    Some(&a.token),
                )
                .await
                else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                if state["status"] != "active" {
                    if let Some(next) = next_game(&http, &base, code.as_deref(), &id, &a, &b).await
                    {
                        id = next;
                    }
                    continue;
                }
                let seat = state["turn"].as_str().unwrap().to_owned();
                let mover = if state["players"][&seat]["id"] == a.id.as_str() {
                    &a
                } else {
                    &b
                };
                let legal = state["next"]["legal"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let Some(address) = legal.last().cloned() else {
                    continue;
                };
                let ply = state["ply"].as_u64().unwrap();
                if try_call(
                    &http,
                    "POST",
                    &format!("{base}/api/v1/matches/{id}/moves"),
                    Some(&json!({"ply": ply, "address": address})),
                    Some(&mover.token),
                )
                .await
                .is_some_and(|r| r.status == 200)
                {
                    acked.lock().unwrap().push((id.clone(), ply, address));
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before_crash = acked.lock().unwrap().len();
    server.crash_and_restart();
    server.ready(&http).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Redis goes away too, loses everything (no persistence), and comes back.
    let _ = redis.kill();
    let _ = redis.wait();
    tokio::time::sleep(Duration::from_millis(300)).await;
    redis = start_redis();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for t in load {
        t.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        before_crash > 0 && acked.len() > before_crash,
        "the load ran on both sides of the crash ({before_crash}, {})",
        acked.len()
    );

    // Every acknowledged move is in the database, and every match is consistent.
    let rows = assert_database_consistent(&db.url).await;
    let store =
        uttt::store::Db::new(&uttt::config::DatabaseConfig::Postgres(db.url.clone()), 2).unwrap();
    for (id, ply, address) in &acked {
        let (m, i) = (id.clone(), *ply as i32);
        let stored = store
            .run(move |conn| uttt::store::matches::move_at(conn, &m, i))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("acknowledged move {id}@{ply} is lost"));
        // Rooms play depth 2, the ranked pair's ladder depth 1.
        let row = rows
            .iter()
            .find(|r| r.id == *id)
            .expect("the match is stored");
        let depth = uttt::rules::Depth::new(row.depth as u8).unwrap();
        let coords: Vec<u8> = address
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap() as u8)
            .collect();
        let square =
            uttt::rules::Square::from_address(depth, &uttt::rules::Address::new(&coords).unwrap())
                .unwrap();
        assert_eq!(stored.square as usize, square.index(), "move {id}@{ply}");
    }
    assert!(
        rows.len() > 9,
        "games went on in every room ({} matches)",
        rows.len()
    );
    // Each finished rated match was counted exactly once in both players' ratings.
    // The server still runs, so a match may finish meanwhile (its clock, or
    // the CPU in a seat its player left): the count is taken between two
    // reads of the stored matches that agree.
    let finished_of = |rows: &[uttt::store::matches::MatchRow], id: &str| {
        rows.iter()
            .filter(|m| {
                m.rated
                    && m.status.as_str() == "finished"
                    && (m.x_player_id.as_deref() == Some(id)
                        || m.o_player_id.as_deref() == Some(id))
            })
            .count()
    };
    for (_, _, a, b) in games.iter().filter(|g| g.0.is_none()) {
        for p in [a, b] {
            let (mut finished, mut games) = (usize::MAX, 0);
            for _ in 0..20 {
                let before = finished_of(&assert_database_consistent(&db.url).await, &p.id);
                games = quick_games(&http, &base, p).await;
                finished = finished_of(&assert_database_consistent(&db.url).await, &p.id);
                if before == finished {
                    break;
                }
            }
            assert_eq!(
                games as usize, finished,
                "{}: rated games = finished rated matches",
                p.username
            );
            assert!(finished >= 1, "{} finished a ranked match", p.username);
        }
    }
    // The waiting player's ticket survived the Redis restart (restored from the database).
    let mut status = Value::Null;
    for _ in 0..50 {
        if let Some(t) = get_ok(
            &http,
            &format!("{base}/api/v1/matchmaking/tickets/{ticket_id}"),
            Some(&waiting.token),
        )
        .await
        {
            status = t;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status["status"], "queued", "{status}");
    assert_eq!(status["queue_size"], 1, "back in the queue: {status}");
    let unique: HashSet<(String, u64)> = acked.iter().map(|(m, p, _)| (m.clone(), *p)).collect();
    assert_eq!(unique.len(), acked.len(), "no ply was acknowledged twice");
    let _ = redis.kill();
    let _ = redis.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_web::test]
async fn sigterm_closes_streams_releases_the_pairing_lock_and_says_goodbye_to_postgresql() {
    let Some(Setup {
        db,
        dir,
        env,
        prefix,
        redis,
    }) = setup("term")
    else {
        return;
    };
    let mut server = Server::start(free_port(), &env, &dir.join("server.log"));
    let http = client();
    server.ready(&http).await;
    let p = register(&http, &server.url(), "term_player").await;
    let mut events =
        EventStream::open_at(&server.url(), &http, "/api/v1/me/events", &p.token, None).await;
    // Several pooled connections open at once.
    let me = format!("{}/api/v1/me", server.url());
    let statuses = read_burst(&http, &me, &p.token).await;
    assert!(statuses.iter().all(|s| *s == Some(200)), "{statuses:?}");
    // Keep the pairing worker busy taking its lock.
    try_call(
        &http,
        "POST",
        &format!("{}/api/v1/matchmaking/tickets", server.url()),
        Some(&json!({"ladder": "lonely"})),
        Some(&p.token),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal("-TERM");
    assert!(
        events.closes_within(Duration::from_secs(10)).await,
        "the stream is closed by the server"
    );
    assert!(
        events.buffered().contains("retry: 1000"),
        "{}",
        events.buffered()
    );
    let status = tokio::task::spawn_blocking(move || {
        let status = server.child.wait().unwrap();
        (status, server)
    })
    .await
    .unwrap();
    assert!(
        status.0.success(),
        "exit status {:?}; log:\n{}",
        status.0,
        status.1.log_tail()
    );
    let mut conn = redis::Client::open(redis.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    // SCAN, not KEYS: one KEYS over a Redis that holds other keys (a
    // benchmark left 1.9 million) outlasts the client's response timeout.
    let mut found: redis::AsyncIter<'_, String> =
        redis::AsyncCommands::scan_match(&mut conn, format!("{prefix}lock:*"))
            .await
            .unwrap();
    let mut locks = Vec::new();
    while let Some(key) = found.next_item().await {
        locks.push(key.unwrap());
    }
    assert!(locks.is_empty(), "broker locks left behind: {locks:?}");
    // Every connection of the server ended with a Terminate: the pool is
    // closed before the process exits, not cut by its exit.
    let (backends, abandoned) = tokio::task::spawn_blocking(move || server_sessions_left(&db))
        .await
        .unwrap();
    assert_eq!(backends, 0, "the server's backends ended");
    assert_eq!(abandoned, 0, "sessions that ended without a Terminate");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Once `db`'s backends other than this check's own have ended (waiting up
/// to 5 s): how many are left, and how many of the database's sessions
/// ended with their client lost (no `Terminate`).
fn server_sessions_left(db: &TestDatabase) -> (i64, i64) {
    use diesel::RunQueryDsl;
    use diesel::sql_types::BigInt;
    #[derive(diesel::QueryableByName)]
    struct Sessions {
        #[diesel(sql_type = BigInt)]
        backends: i64,
        #[diesel(sql_type = BigInt)]
        abandoned: i64,
    }
    let mut conn = uttt::store::connect_pg(&db.url).unwrap();
    let mut read = || -> Sessions {
        // Statistics are read as a snapshot per transaction: cleared first.
        diesel::sql_query("SELECT pg_stat_clear_snapshot()")
            .execute(&mut conn)
            .unwrap();
        diesel::sql_query(
            "SELECT (SELECT count(*) FROM pg_stat_activity \
               WHERE datname = current_database() AND pid <> pg_backend_pid()) AS backends, \
             (SELECT sessions_abandoned FROM pg_stat_database \
               WHERE datname = current_database()) AS abandoned",
        )
        .get_result(&mut conn)
        .unwrap()
    };
    let mut now = read();
    for _ in 0..50 {
        if now.backends == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        now = read();
    }
    (now.backends, now.abandoned)
}

#[actix_web::test]
async fn the_players_of_a_killed_instance_count_as_absent_within_the_lease_lifetime() {
    const LEASE_MS: u64 = 1_500;
    const GRACE_MS: u64 = 1_500;
    let Some(Setup {
        db: _db,
        dir,
        mut env,
        ..
    }) = setup("lease")
    else {
        return;
    };
    env.push(("UTTT_PRESENCE_LEASE_MS".into(), LEASE_MS.to_string()));
    let a = Server::start(free_port(), &env, &dir.join("a.log"));
    let b = Server::start(free_port(), &env, &dir.join("b.log"));
    let http = client();
    a.ready(&http).await;
    b.ready(&http).await;
    let (x, o) = (
        register(&http, &b.url(), "lease_x").await,
        register(&http, &b.url(), "lease_o").await,
    );
    let (_, id) = room_match(&http, &b.url(), &x, &o).await;
    let path = format!("/api/v1/matches/{id}/events");
    // X (to move) watches on A; O watches on B; nobody sends a heartbeat.
    let mut on_a = EventStream::open_at(&a.url(), &http, &path, &x.token, None).await;
    on_a.next_event(Duration::from_secs(5))
        .await
        .expect("state");
    let mut on_b = EventStream::open_at(&b.url(), &http, &path, &o.token, None).await;
    on_b.next_event(Duration::from_secs(5))
        .await
        .expect("state");
    let state = |token: String| {
        let (http, url) = (http.clone(), format!("{}/api/v1/matches/{id}", b.url()));
        async move {
            try_call(&http, "GET", &url, None, Some(&token))
                .await
                .unwrap()
                .body
        }
    };
    // Twice the grace and the lease's lifetime: A renews X's lease, B sees X present.
    tokio::time::sleep(Duration::from_millis(2 * (LEASE_MS + GRACE_MS))).await;
    let s = state(o.token.clone()).await;
    assert_eq!(s["players"]["x"]["controller"], "human", "{s}");
    assert_eq!(s["players"]["x"]["connected"], true, "{s}");
    // A dies with X's stream open: nobody releases the lease, it lapses by itself.
    a.signal("-KILL");
    let killed = std::time::Instant::now();
    let taken = loop {
        let s = state(o.token.clone()).await;
        if s["players"]["x"]["controller"] == "cpu" {
            break s;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "X still holds the seat 10 s after A died: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let after = killed.elapsed();
    println!("X absent and substituted {after:?} after the kill (lease {LEASE_MS} ms)");
    assert_eq!(taken["players"]["x"]["connected"], false);
    // The lease lapses within its lifetime; the presence worker (every 0.5 s) then acts.
    assert!(
        after < Duration::from_millis(LEASE_MS + 1_000),
        "absent {after:?} after the kill (lease {LEASE_MS} ms)"
    );
    drop(on_a);
    drop(a);
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Resigns, as X, every unfinished game of a tournament round (through `base`).
async fn resign_round(
    http: &awc::Client,
    base: &str,
    round: &Value,
    players: &HashMap<String, Player>,
) {
    for game in round["pairings"].as_array().unwrap() {
        if !game["result"].is_null() {
            continue;
        }
        let x = &players[game["x"]["id"].as_str().unwrap()];
        let id = game["match_id"].as_str().unwrap();
        let reply = try_call(
            http,
            "POST",
            &format!("{base}/api/v1/matches/{id}/resign"),
            Some(&json!({})),
            Some(&x.token),
        )
        .await
        .expect("resign");
        assert!(
            reply.status == 200 || reply.code() == "match_over",
            "resign {id}: {}",
            reply.text
        );
    }
}

/// Waits (real time) until the tournament read through `base` satisfies `ok`.
async fn tournament_where(
    http: &awc::Client,
    base: &str,
    id: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let started = std::time::Instant::now();
    loop {
        if let Some(t) = get_ok(http, &format!("{base}/api/v1/tournaments/{id}"), None).await
            && ok(&t)
        {
            return t;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "tournament {id} did not get there"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn a_tournament_run_by_two_instances_survives_kill_9_of_one_and_pairs_each_round_once() {
    let Some(Setup { db, dir, env, .. }) = setup("swiss") else {
        return;
    };
    let a = Server::start(free_port(), &env, &dir.join("a.log"));
    let b = Server::start(free_port(), &env, &dir.join("b.log"));
    let http = client();
    a.ready(&http).await;
    b.ready(&http).await;
    let director = register(&http, &a.url(), "swiss_td").await;
    let mut players = HashMap::new();
    for i in 0..5 {
        let p = register(&http, &b.url(), &format!("swiss{i}")).await;
        players.insert(p.id.clone(), p);
    }
    const ROUNDS: u64 = 3;
    let made = try_call(
        &http,
        "POST",
        &format!("{}/api/v1/tournaments", a.url()),
        Some(
            &json!({"name": "Crash cup", "kind": "swiss", "rounds": ROUNDS, "depth": 1,
                     "time_control": {"kind": "per_turn", "turn_ms": 5000}, "round_pause_ms": 0}),
        ),
        Some(&director.token),
    )
    .await
    .unwrap();
    made.expect(201);
    let id = made.body["id"].as_str().unwrap().to_owned();
    for (n, p) in players.values().enumerate() {
        let base = if n % 2 == 0 { a.url() } else { b.url() };
        try_call(
            &http,
            "POST",
            &format!("{base}/api/v1/tournaments/{id}/join"),
            Some(&json!({})),
            Some(&p.token),
        )
        .await
        .unwrap()
        .expect(200);
    }
    try_call(
        &http,
        "POST",
        &format!("{}/api/v1/tournaments/{id}/start", a.url()),
        Some(&json!({})),
        Some(&director.token),
    )
    .await
    .unwrap()
    .expect(200);

    // Round 1 is played with both instances' workers racing to pair round 2.
    let r1 = get_ok(
        &http,
        &format!("{}/api/v1/tournaments/{id}/rounds/1", b.url()),
        None,
    )
    .await
    .unwrap();
    resign_round(&http, &a.url(), &r1, &players).await;
    tournament_where(&http, &b.url(), &id, |t| t["round"] == 2).await;

    // A dies mid-round 2; B records the results and pairs the rest alone.
    a.signal("-KILL");
    for n in 2..=ROUNDS {
        let t = tournament_where(&http, &b.url(), &id, |t| t["round"] == n).await;
        assert_eq!(t["status"], "running");
        let r = get_ok(
            &http,
            &format!("{}/api/v1/tournaments/{id}/rounds/{n}", b.url()),
            None,
        )
        .await
        .unwrap();
        resign_round(&http, &b.url(), &r, &players).await;
    }
    let done = tournament_where(&http, &b.url(), &id, |t| t["status"] == "finished").await;
    assert_eq!(done["round"], ROUNDS);

    // The database: each round paired once, two boards and a bye each, nobody twice in a round.
    let store =
        uttt::store::Db::new(&uttt::config::DatabaseConfig::Postgres(db.url.clone()), 2).unwrap();
    let tid = id.clone();
    let (rounds, games) = store
        .run(move |conn| -> Result<_, uttt::store::StoreError> {
            Ok((
                uttt::store::tournaments::rounds(conn, &tid)?,
                uttt::store::tournaments::games(conn, &tid)?,
            ))
        })
        .await
        .unwrap();
    let numbers: Vec<i32> = rounds.iter().map(|r| r.round).collect();
    assert_eq!(numbers, (1..=ROUNDS as i32).collect::<Vec<_>>());
    let mut byes = HashSet::new();
    for r in &rounds {
        let in_round: Vec<_> = games.iter().filter(|g| g.round == r.round).collect();
        assert_eq!(in_round.len(), 2, "round {}", r.round);
        let mut seen = HashSet::new();
        for g in &in_round {
            assert!(
                g.result.is_some(),
                "round {} board {} recorded",
                r.round,
                g.board
            );
            assert!(seen.insert(g.x_player_id.clone()) && seen.insert(g.o_player_id.clone()));
        }
        let bye = r.bye_player_id.clone().expect("a bye with five players");
        assert!(seen.insert(bye.clone()), "the bye player does not play");
        assert!(byes.insert(bye), "one bye per player");
    }
    assert_database_consistent(&db.url).await;
    drop(a);
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ends every connection the server holds to its database, as a restart of
/// PostgreSQL does, and waits until those backends are gone; returns how
/// many there were.
fn drop_connections(admin_url: &str, db: &TestDatabase) -> usize {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Backend {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let mut conn = uttt::store::connect_pg(admin_url).unwrap();
    let ended: Vec<Backend> = diesel::sql_query(format!(
        // Materialized first: the planner may otherwise call
        // pg_terminate_backend before the datname filter, on any backend,
        // this connection included.
        "WITH server AS MATERIALIZED (SELECT pid FROM pg_stat_activity \
         WHERE datname = '{}' AND pid <> pg_backend_pid()) \
         SELECT pid FROM server WHERE pg_terminate_backend(pid)",
        db.name()
    ))
    .load(&mut conn)
    .unwrap();
    let pids: Vec<String> = ended.iter().map(|b| b.pid.to_string()).collect();
    // pg_terminate_backend only signals: the backends end a moment later.
    for _ in 0..100 {
        let left: Vec<Backend> = diesel::sql_query(format!(
            "SELECT pid FROM pg_stat_activity WHERE pid IN ({})",
            if pids.is_empty() {
                "0".to_owned()
            } else {
                pids.join(",")
            }
        ))
        .load(&mut conn)
        .unwrap();
        if left.is_empty() {
            return pids.len();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the backends {pids:?} did not end");
}

/// Sends eight `GET /me` at once, so that the pool hands out several
/// connections; the statuses, `None` where the server could not be reached.
async fn read_burst(http: &awc::Client, me: &str, token: &str) -> Vec<Option<u16>> {
    let burst = (0..8).map(|_| try_call(http, "GET", me, None, Some(token)));
    futures_util::future::join_all(burst)
        .await
        .into_iter()
        .map(|r| r.map(|r| r.status.as_u16()))
        .collect()
}

#[actix_web::test]
async fn connections_the_database_dropped_cost_no_read_and_at_most_one_write() {
    let Some(setup) = setup("dropped") else {
        return;
    };
    let admin_url = std::env::var("TEST_DATABASE_URL").unwrap();
    let server = Server::start(free_port(), &setup.env, &setup.dir.join("server.log"));
    let http = client();
    server.ready(&http).await;
    let p = register(&http, &server.url(), "dropper").await;
    let me = format!("{}/api/v1/me", server.url());
    let renew = format!("{}/api/v1/auth/refresh", server.url());
    let mut refresh = p.refresh.clone();
    let all_ok = |s: &[Option<u16>]| s.iter().all(|s| *s == Some(200));
    // Twice: right after the connections were used (the pool trusts them
    // for a second), and after they sat idle (the pool tests them).
    for pause in [
        Duration::ZERO,
        uttt::store::TEST_AFTER_IDLE + Duration::from_millis(300),
    ] {
        let before = read_burst(&http, &me, &p.token).await;
        assert!(all_ok(&before), "before the pause of {pause:?}: {before:?}");
        tokio::time::sleep(pause).await;
        assert!(drop_connections(&admin_url, &setup.db) > 0);
        // A read that meets a lost connection is asked again on another,
        // so a burst meeting several lost ones at once still loses nothing.
        let after = read_burst(&http, &me, &p.token).await;
        assert!(
            all_ok(&after),
            "reads after a drop, pause {pause:?}: {after:?}; log:\n{}",
            server.log_tail()
        );

        let before = read_burst(&http, &me, &p.token).await;
        assert!(all_ok(&before), "before the pause of {pause:?}: {before:?}");
        tokio::time::sleep(pause).await;
        assert!(drop_connections(&admin_url, &setup.db) > 0);
        // A write is not asked twice (it may have committed): the first may
        // meet a lost connection; it has the pool test the others, so every
        // later one succeeds. A refresh writes without reading first.
        let mut answered = Vec::new();
        for _ in 0..10 {
            let body = json!({ "refresh_token": refresh });
            let reply = try_call(&http, "POST", &renew, Some(&body), None).await;
            let renewed = reply.filter(|r| r.status == 200);
            if let Some(r) = &renewed {
                refresh = r.body["refresh_token"].as_str().unwrap().to_owned();
            }
            answered.push(renewed.is_some());
        }
        assert!(
            answered[1..].iter().all(|ok| *ok),
            "writes after a pause of {pause:?}: {answered:?}; log:\n{}",
            server.log_tail()
        );
    }
    let _ = std::fs::remove_dir_all(&setup.dir);
}

/// A process that exits while other threads still use encrypted PostgreSQL
/// connections exits cleanly. OpenSSL's clean-up at exit used to free what
/// those threads were using, so a test binary or a server died of SIGSEGV
/// after its work was done (1 run in 12 of the API tests here).
#[test]
fn a_process_exiting_amid_busy_postgres_connections_exits_cleanly() {
    let Some((db, _)) = env_or_skip() else { return };
    let exe = std::env::current_exe().unwrap();
    for run in 0..15 {
        let out = Command::new(&exe)
            .args(["--ignored", "--exact", "busy_postgres_connections_at_exit"])
            .env("TEST_DATABASE_URL", &db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "run {run}: the process ended with {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Run as a child process by the test above: leaves four threads opening,
/// using and closing PostgreSQL connections as fast as they can and returns,
/// so the harness exits amid them.
#[test]
#[ignore = "a child process of a_process_exiting_amid_busy_postgres_connections_exits_cleanly"]
fn busy_postgres_connections_at_exit() {
    use diesel::RunQueryDsl;
    let url = std::env::var("TEST_DATABASE_URL").unwrap();
    let mut conn = uttt::store::connect_pg(&url).unwrap();
    #[derive(diesel::QueryableByName)]
    struct Ssl {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ssl: bool,
    }
    let ssl: Vec<Ssl> =
        diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .load(&mut conn)
            .unwrap();
    if !ssl.first().is_some_and(|s| s.ssl) {
        eprintln!("NOTICE: this PostgreSQL connection is not encrypted; OpenSSL is not exercised");
    }
    let (started, ready) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let (url, started) = (url.clone(), started.clone());
        // Connecting and closing: each connection makes and frees its own
        // OpenSSL context, which is what raced with the clean-up.
        std::thread::spawn(move || {
            let _ = started.send(());
            while let Ok(mut conn) = uttt::store::connect_pg(&url) {
                let _ = diesel::sql_query("SELECT 1").execute(&mut conn);
            }
        });
    }
    for _ in 0..4 {
        ready.recv().unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
}

/// Holds the row lock of match `id` in `db` from a connection of its own
/// until told to let go (sent on the returned channel); returns that
/// connection's backend pid once the lock is held.
fn lock_match_row(db_url: &str, id: &str) -> (i32, std::sync::mpsc::Sender<()>) {
    use diesel::connection::SimpleConnection;
    let (locked, held) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (url, id) = (db_url.to_owned(), id.to_owned());
    std::thread::spawn(move || {
        let mut conn = uttt::store::connect_pg(&url).unwrap();
        conn.batch_execute(&format!(
            "BEGIN; SELECT id FROM matches WHERE id = '{id}' FOR UPDATE"
        ))
        .unwrap();
        locked.send(backend_pid(&mut conn)).unwrap();
        let _ = released.recv();
        conn.batch_execute("ROLLBACK").unwrap();
    });
    (held.recv().unwrap(), release)
}

fn backend_pid(conn: &mut diesel::PgConnection) -> i32 {
    use diesel::RunQueryDsl;
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(conn)
    .unwrap()
}

/// Ends the one backend of `db_url`'s database (other than `spared`) that
/// waits for a row lock, once there is one (waiting up to 10 s); returns
/// whether it found one.
fn end_the_backend_waiting_for_a_lock(db_url: &str, spared: i32) -> bool {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Ended {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ended: bool,
    }
    let mut conn = uttt::store::connect_pg(db_url).unwrap();
    for _ in 0..500 {
        let ended: Vec<Ended> = diesel::sql_query(format!(
            // Materialized: pg_terminate_backend only on the rows that pass.
            "WITH waiting AS MATERIALIZED (SELECT pid FROM pg_stat_activity \
               WHERE datname = current_database() AND wait_event_type = 'Lock' \
               AND pid NOT IN ({spared}, pg_backend_pid())) \
             SELECT pg_terminate_backend(pid) AS ended FROM waiting"
        ))
        .load(&mut conn)
        .unwrap();
        if ended.iter().any(|e| e.ended) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The moves stored for match `id`.
fn stored_moves(db_url: &str, id: &str) -> usize {
    let mut conn = uttt::store::DbConnection::Pg(uttt::store::connect_pg(db_url).unwrap());
    uttt::store::matches::moves(&mut conn, id).unwrap().len()
}

#[actix_web::test]
async fn a_move_whose_database_connection_is_lost_mid_write_is_written_once_or_not_at_all() {
    let Some(setup) = setup("lost") else {
        return;
    };
    let http = client();
    // The pipelined path (the default): the write's fate is unknown to the
    // server, which plays the move again under the row's lock, where a move
    // already written would be a safe retry. Then the pool's locked path
    // alone: its write is not asked twice (it may have committed), so the
    // move is refused whole, with a 503 to try again.
    for (pipeline, name, answer) in [("16", "pipelined", 200), ("0", "pooled", 503)] {
        let mut env = setup.env.clone();
        env.push(("UTTT_DB_PIPELINE_SIZE".into(), pipeline.into()));
        // Nobody streams: a slow machine must not count a player dropped
        // and let the CPU move for them (the last value of a variable wins).
        env.push(("UTTT_DROP_GRACE_MS".into(), "600000".into()));
        let server = Server::start(free_port(), &env, &setup.dir.join(format!("{name}.log")));
        server.ready(&http).await;
        let base = server.url();
        let x = register(&http, &base, &format!("lost_{name}_x")).await;
        let o = register(&http, &base, &format!("lost_{name}_o")).await;
        let (_, id) = room_match(&http, &base, &x, &o).await;
        let moves = format!("{base}/api/v1/matches/{id}/moves");
        let play = |token: String, ply: u32, address: [u8; 2]| {
            let (http, url) = (http.clone(), moves.clone());
            async move {
                let body = json!({"ply": ply, "address": address});
                try_call(&http, "POST", &url, Some(&body), Some(&token))
                    .await
                    .expect("the server answers")
            }
        };
        for (token, ply, address) in [(&x.token, 0, [4, 4]), (&o.token, 1, [4, 0])] {
            let reply = play(token.clone(), ply, address).await;
            assert_eq!(reply.status, 200, "{name}: {}", reply.text);
        }
        // X's move (on the row the instance remembers from O's, when
        // pipelined) waits for the row lock held here; its connection is
        // then ended by the database, as by a restart or a failover.
        let (locker, release) = {
            let (url, id) = (setup.db.url.clone(), id.clone());
            tokio::task::spawn_blocking(move || lock_match_row(&url, &id))
                .await
                .unwrap()
        };
        let ender = {
            let url = setup.db.url.clone();
            async move {
                let ended = tokio::task::spawn_blocking(move || {
                    end_the_backend_waiting_for_a_lock(&url, locker)
                })
                .await
                .unwrap();
                release.send(()).unwrap();
                ended
            }
        };
        let (reply, ended) =
            futures_util::future::join(play(x.token.clone(), 2, [0, 4]), ender).await;
        assert!(ended, "{name}: the move's write waited for the row lock");
        assert_eq!(
            reply.status.as_u16(),
            answer,
            "{name}: {}; log:\n{}",
            reply.text,
            server.log_tail()
        );
        if answer == 200 {
            assert_eq!(reply.body["ply"], 3, "{name}: {}", reply.text);
        } else {
            assert_eq!(reply.body["code"], "unavailable", "{name}: {}", reply.text);
            assert_eq!(
                reply.header("content-type"),
                Some("application/problem+json")
            );
            assert_eq!(
                stored_moves(&setup.db.url, &id),
                2,
                "{name}: nothing written"
            );
            let again = play(x.token.clone(), 2, [0, 4]).await;
            assert_eq!(again.status, 200, "{name}: played again: {}", again.text);
        }
        // Written once, and the game goes on.
        assert_eq!(stored_moves(&setup.db.url, &id), 3, "{name}");
        let next = play(o.token.clone(), 3, [4, 8]).await;
        assert_eq!(next.status, 200, "{name}: {}", next.text);
        assert_eq!(stored_moves(&setup.db.url, &id), 4, "{name}");
    }
    assert_database_consistent(&setup.db.url).await;
    let _ = std::fs::remove_dir_all(&setup.dir);
}
