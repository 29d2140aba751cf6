//! The test harness: a real server on port 0 with a fresh database per test.
//!
//! SQLite: a temporary file, always. PostgreSQL: when `TEST_DATABASE_URL` is
//! set, a database created for the test and dropped after it, with Redis
//! (when `TEST_REDIS_URL` is set) under a key prefix of its own. When a
//! variable is set and its server cannot be reached, the test fails loudly.

#![allow(dead_code, reason = "shared by every test module; each uses a part")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use awc::http::StatusCode;
use awc::http::header::HeaderMap;
use diesel::{Connection, PgConnection, RunQueryDsl};
use serde_json::{Value, json};

use uttt::config::{Config, DatabaseConfig};
use uttt::service::Context;
use uttt::time::{ManualTime, TimeSource};

/// The JWT secret every test server uses, so tests can forge tokens.
pub const SECRET: &str = "test-secret-0123456789abcdef0123456789";

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A temporary SQLite file and the in-process broker.
    Sqlite,
    /// A fresh PostgreSQL database and Redis (when `TEST_REDIS_URL` is set).
    Postgres,
}

/// Declares each test once per backend: `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! both_backends {
    ($($(#[$meta:meta])* async fn $name:ident($app:ident: TestApp) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[actix_web::test]
                async fn sqlite() {
                    let $app = $crate::helpers::TestApp::spawn($crate::helpers::Backend::Sqlite).await;
                    $body
                }

                #[actix_web::test]
                async fn postgres() {
                    let Some($app) = $crate::helpers::TestApp::spawn_postgres().await else { return };
                    $body
                }
            }
        )*
    };
}

/// A PostgreSQL database made for one test, dropped with it.
pub struct TestDatabase {
    admin_url: String,
    name: String,
    /// URL of the test database.
    pub url: String,
}

impl TestDatabase {
    /// Creates a database on the server of `admin_url`.
    pub fn create(admin_url: &str) -> TestDatabase {
        let name = format!("uttt_test_{}", uttt::ids::record_id().to_lowercase());
        let mut conn = PgConnection::establish(admin_url).unwrap_or_else(|e| {
            panic!("TEST_DATABASE_URL is set to {admin_url} but PostgreSQL cannot be reached: {e}")
        });
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
        let url = with_database(admin_url, &name);
        TestDatabase {
            admin_url: admin_url.to_owned(),
            name,
            url,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(mut conn) = PgConnection::establish(&self.admin_url) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
    }
}

/// `url` with its database name replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut out = format!("{}/{name}", &base[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// What a test server is built from.
pub struct TestConfig {
    /// The configuration, editable before the server starts.
    pub config: Config,
    backend: Backend,
    database: Option<TestDatabase>,
    dir: PathBuf,
}

impl TestConfig {
    /// A configuration for `backend`; `None` for PostgreSQL when `TEST_DATABASE_URL` is unset.
    pub fn new(backend: Backend) -> Option<TestConfig> {
        let dir = std::env::temp_dir().join(format!("uttt-test-{}", uttt::ids::record_id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut config = Config::from_lookup(|_| None).expect("default config");
        config.bind = "127.0.0.1:0".into();
        config.data_dir = dir.clone();
        config.jwt_secret = Some(SECRET.into());
        config.http_workers = 2;
        config.db_pool_size = 8;
        // The presence worker would take over seats whenever a test jumps the
        // clock; the drop-out tests turn it on (or tick it) themselves.
        config.workers = uttt::config::Workers {
            presence: false,
            ..uttt::config::Workers::ALL
        };
        let mut database = None;
        match backend {
            Backend::Sqlite => config.database = DatabaseConfig::Sqlite(dir.join("uttt.db")),
            Backend::Postgres => {
                let admin = std::env::var("TEST_DATABASE_URL")
                    .ok()
                    .filter(|v| !v.is_empty());
                let Some(admin) = admin else {
                    eprintln!(
                        "TEST_DATABASE_URL is not set: the PostgreSQL variant of this test does not run"
                    );
                    return None;
                };
                let db = TestDatabase::create(&admin);
                config.database = DatabaseConfig::Postgres(db.url.clone());
                database = Some(db);
                if let Some(redis) = std::env::var("TEST_REDIS_URL")
                    .ok()
                    .filter(|v| !v.is_empty())
                {
                    config.redis_url = Some(redis);
                    config.redis_prefix = format!("test:{}:", uttt::ids::record_id());
                }
            }
        }
        Some(TestConfig {
            config,
            backend,
            database,
            dir,
        })
    }

    /// The name of the PostgreSQL test database, if any.
    pub fn database_name(&self) -> Option<&str> {
        self.database.as_ref().map(|d| d.name.as_str())
    }

    /// A second instance's configuration on the same database and Redis prefix.
    pub fn sibling(&self) -> Config {
        let mut config = self.config.clone();
        config.bind = "127.0.0.1:0".into();
        config
    }
}

/// A running test server.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`.
    pub address: String,
    /// The server's service context.
    pub ctx: Context,
    /// The server's game clock.
    pub time: Arc<ManualTime>,
    /// The backend it runs on.
    pub backend: Backend,
    /// The HTTP client.
    pub client: awc::Client,
    /// Kept so the database lives as long as the test.
    pub config: TestConfig,
    server: actix_web::dev::ServerHandle,
}

/// One HTTP response, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
    /// Body as text.
    pub text: String,
}

impl Reply {
    /// The problem `code` of an error body.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, showing the body when it differs.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Reply {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        self
    }

    /// Asserts an error status and code, and that the body is problem+json.
    #[track_caller]
    pub fn expect_problem(&self, status: u16, code: &str) -> &Reply {
        self.expect(status);
        assert_eq!(
            self.code(),
            code,
            "unexpected problem code; body: {}",
            self.text
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{}",
            self.text
        );
        self
    }
}

/// A registered player with a session.
#[derive(Debug, Clone)]
pub struct Player {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Password.
    pub password: String,
    /// Access token.
    pub token: String,
    /// Refresh token.
    pub refresh: String,
}

impl TestApp {
    /// A server on `backend` with the default test configuration.
    pub async fn spawn(backend: Backend) -> TestApp {
        let config = TestConfig::new(backend).expect("backend configured");
        TestApp::start(config).await
    }

    /// A PostgreSQL server, or `None` when `TEST_DATABASE_URL` is unset.
    pub async fn spawn_postgres() -> Option<TestApp> {
        Some(TestApp::start(TestConfig::new(Backend::Postgres)?).await)
    }

    /// Starts a server from an edited configuration.
    pub async fn start(config: TestConfig) -> TestApp {
        // `TEST_LOG=1` shows the servers' logs (filtered by RUST_LOG).
        if std::env::var("TEST_LOG").is_ok() {
            uttt::telemetry::init(uttt::config::LogFormat::Human);
        }
        let time = ManualTime::new(chrono::Utc::now().timestamp_millis());
        let (address, ctx, server) = start_instance(config.config.clone(), time.clone()).await;
        TestApp {
            address,
            ctx,
            time,
            backend: config.backend,
            client: awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish(),
            config,
            server,
        }
    }

    /// Starts a server from an edited configuration on the real clock (for the
    /// few tests that measure real time; `time` is then not the server's clock).
    pub async fn start_real_time(config: TestConfig) -> TestApp {
        let time = ManualTime::new(0);
        let (address, ctx, server) =
            start_instance(config.config.clone(), Arc::new(uttt::time::SystemTime)).await;
        TestApp {
            address,
            ctx,
            time,
            backend: config.backend,
            client: awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish(),
            config,
            server,
        }
    }

    /// Starts another instance on the same database and broker prefix, sharing the game clock.
    pub async fn start_sibling(&self) -> (String, Context, actix_web::dev::ServerHandle) {
        start_instance(self.config.sibling(), self.time.clone()).await
    }

    /// The full URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// Sends a request with an optional JSON body and bearer token.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> Reply {
        self.call_raw(method, path, body.map(Value::to_string), token, &[])
            .await
    }

    /// Sends raw body text with extra headers.
    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        token: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let method = awc::http::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, self.url(path));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        for (k, v) in headers {
            req = req.insert_header((*k, *v));
        }
        let sent = match body {
            Some(text) => req.content_type("application/json").send_body(text).await,
            None => req.send().await,
        };
        let mut res = sent.unwrap_or_else(|e| panic!("request to {path} failed: {e}"));
        let bytes = res.body().limit(64 * 1024 * 1024).await.expect("body");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Reply {
            status: res.status(),
            headers: res.headers().clone(),
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        }
    }

    /// GET with a token.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.call("GET", path, None, token).await
    }

    /// POST a JSON body with a token.
    pub async fn post(&self, path: &str, body: &Value, token: Option<&str>) -> Reply {
        self.call("POST", path, Some(body), token).await
    }

    /// Registers `username` with a fixed password.
    pub async fn register(&self, username: &str) -> Player {
        let password = "correct horse battery";
        let reply = self
            .post(
                "/api/v1/auth/register",
                &json!({"username": username, "password": password}),
                None,
            )
            .await;
        reply.expect(201);
        Player {
            id: reply.body["player"]["id"].as_str().expect("id").to_owned(),
            username: username.to_owned(),
            password: password.to_owned(),
            token: reply.body["access_token"]
                .as_str()
                .expect("token")
                .to_owned(),
            refresh: reply.body["refresh_token"]
                .as_str()
                .expect("refresh")
                .to_owned(),
        }
    }

    /// Stops the server.
    pub async fn stop(&self) {
        self.server.stop(false).await;
    }
}

async fn start_instance(
    config: Config,
    time: Arc<dyn TimeSource>,
) -> (String, Context, actix_web::dev::ServerHandle) {
    let ctx = uttt::server::context(config, time)
        .await
        .unwrap_or_else(|e| panic!("test server failed to start: {e:#}"));
    let bound = uttt::server::bind(ctx).expect("bind");
    let handle = bound.server.handle();
    actix_web::rt::spawn(bound.server);
    (format!("http://{}", bound.addr), bound.ctx, handle)
}

impl Drop for TestConfig {
    fn drop(&mut self) {
        let _ = self.database.take();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn database_names_are_replaced_in_urls() {
    assert_eq!(
        with_database("postgres://u@h:5432/postgres", "t1"),
        "postgres://u@h:5432/t1"
    );
    assert_eq!(
        with_database("postgres://u@h/db?sslmode=disable", "t1"),
        "postgres://u@h/t1?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h", "t1"), "postgres://h/t1");
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `event:` (default `message`).
    pub event: String,
    /// `id:`, if any.
    pub id: Option<String>,
    /// `data:` lines joined.
    pub data: String,
}

/// A client of a `text/event-stream` response.
pub struct EventStream {
    response: awc::ClientResponse,
    buffer: String,
}

impl EventStream {
    /// Opens `path` as an event stream (token in the query string, as browsers do).
    pub async fn open(
        app: &TestApp,
        path: &str,
        token: &str,
        last_event_id: Option<i32>,
    ) -> EventStream {
        EventStream::open_at(&app.address, &app.client, path, token, last_event_id).await
    }

    /// Opens a stream on the server at `address`.
    pub async fn open_at(
        address: &str,
        client: &awc::Client,
        path: &str,
        token: &str,
        last_event_id: Option<i32>,
    ) -> EventStream {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut req = client
            .get(format!("{address}{path}{sep}access_token={token}"))
            .timeout(Duration::from_secs(3600));
        if let Some(id) = last_event_id {
            req = req.insert_header(("Last-Event-ID", id.to_string()));
        }
        let response = req.send().await.expect("event stream");
        assert_eq!(response.status().as_u16(), 200, "event stream refused");
        assert_eq!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        EventStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame (events and comments), or `None` after `timeout`.
    pub async fn next_frame(&mut self, timeout: Duration) -> Option<String> {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame = self.buffer[..end].to_owned();
                self.buffer.drain(..end + 2);
                return Some(frame);
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.next())
                .await
                .ok()??;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk")));
        }
    }

    /// Whether the server closes the stream within `timeout` (frames before the end are dropped).
    pub async fn closes_within(&mut self, timeout: Duration) -> bool {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.response.next()).await {
                Err(_) => return false,
                Ok(None) => return true,
                Ok(Some(chunk)) => self
                    .buffer
                    .push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk"))),
            }
        }
    }

    /// Everything received and not yet consumed.
    pub fn buffered(&self) -> &str {
        &self.buffer
    }

    /// The next event (skipping comments and `retry:`), or `None` after `timeout`.
    pub async fn next_event(&mut self, timeout: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let frame = self.next_frame(left).await?;
            let mut event = SseEvent {
                event: "message".into(),
                id: None,
                data: String::new(),
            };
            let mut has_data = false;
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event.event = v.to_owned();
                } else if let Some(v) = line.strip_prefix("id: ") {
                    event.id = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(v);
                    has_data = true;
                }
            }
            if has_data {
                return Some(event);
            }
        }
    }

    /// Waits for a `state` event whose state satisfies `wanted`.
    pub async fn state_where(
        &mut self,
        timeout: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let event = self
                .next_event(left)
                .await
                .expect("no matching state event in time");
            if event.event == "state" {
                let state: Value = serde_json::from_str(&event.data).expect("state is JSON");
                assert_eq!(
                    event.id.as_deref(),
                    Some(state["version"].to_string().as_str())
                );
                if wanted(&state) {
                    return state;
                }
            }
        }
    }
}

/// Polls `check` every 20 ms until it returns `Some`, or panics after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The legal moves of a match state, as `"4.0"` texts.
pub fn legal_of(state: &Value) -> Vec<String> {
    state["next"]["legal"]
        .as_array()
        .expect("legal moves")
        .iter()
        .map(|a| {
            a.as_array()
                .expect("an address")
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect()
}

/// `"4.0"` → `[4, 0]`.
pub fn addr(text: &str) -> Vec<u8> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split('.')
        .map(|c| c.parse().expect("coordinate"))
        .collect()
}

impl TestApp {
    /// Opens a room as `host` and seats `guest`; returns the match id (host is X).
    pub async fn room_match(
        &self,
        host: &Player,
        guest: &Player,
        depth: u8,
        time_control: Value,
    ) -> String {
        let room = self
            .post(
                "/api/v1/rooms",
                &json!({"depth": depth, "time_control": time_control}),
                Some(&host.token),
            )
            .await;
        room.expect(201);
        let code = room.body["code"].as_str().expect("code").to_owned();
        let joined = self
            .post(
                &format!("/api/v1/rooms/{code}/join"),
                &json!({}),
                Some(&guest.token),
            )
            .await;
        joined.expect(200);
        joined.body["match_id"]
            .as_str()
            .expect("match id")
            .to_owned()
    }

    /// Plays `address` (dotted) at `ply` as `player`.
    pub async fn play(&self, player: &Player, match_id: &str, ply: u64, address: &str) -> Reply {
        self.post(
            &format!("/api/v1/matches/{match_id}/moves"),
            &json!({"ply": ply, "address": addr(address)}),
            Some(&player.token),
        )
        .await
    }

    /// Plays a whole script, alternating `x` and `o` from ply 0; returns the last reply.
    pub async fn play_script(
        &self,
        x: &Player,
        o: &Player,
        match_id: &str,
        moves: &[&str],
    ) -> Reply {
        let mut last = None;
        for (ply, address) in moves.iter().enumerate() {
            let mover = if ply % 2 == 0 { x } else { o };
            let reply = self.play(mover, match_id, ply as u64, address).await;
            reply.expect(200);
            last = Some(reply);
        }
        last.expect("a non-empty script")
    }

    /// The match state as `player` sees it.
    pub async fn state(&self, player: &Player, match_id: &str) -> Value {
        let reply = self
            .get(&format!("/api/v1/matches/{match_id}"), Some(&player.token))
            .await;
        reply.expect(200);
        reply.body
    }

    /// Checks the stored record of a match against its moves rows: the
    /// position decoded from the match row equals the replay of the moves,
    /// and the stored result follows from it (or from a timeout/resignation).
    pub async fn assert_consistent(&self, match_id: &str) {
        use uttt::rules::{Depth, Position, Square, Status};
        let id = match_id.to_owned();
        let (row, moves) = self
            .ctx
            .db
            .run(move |conn| -> Result<_, uttt::store::StoreError> {
                let row = uttt::store::matches::get(conn, &id)?.expect("match row");
                let moves = uttt::store::matches::moves(conn, &id)?;
                Ok((row, moves))
            })
            .await
            .unwrap();
        let (stored, record) = uttt::rules::decode(&row.position).expect("stored record decodes");
        let depth = Depth::new(row.depth as u8).unwrap();
        let squares: Vec<Square> = moves
            .iter()
            .enumerate()
            .map(|(i, m)| {
                assert_eq!(m.ply as usize, i, "moves are numbered from 0 without gaps");
                let seat = if i % 2 == 0 { "x" } else { "o" };
                assert_eq!(m.seat, seat, "seats alternate from X");
                Square::new(depth, m.square as usize).expect("stored square")
            })
            .collect();
        assert_eq!(
            record, squares,
            "the stored record is the list of stored moves"
        );
        let replayed = Position::replay(depth, &squares).expect("stored moves replay");
        assert_eq!(replayed, stored);
        assert_eq!(row.ply as usize, squares.len());
        match (
            row.status.as_str(),
            row.reason.map(|r| r.as_str()),
            replayed.status(),
        ) {
            ("active", None, Status::Ongoing) => assert!(row.winner.is_none()),
            ("finished", Some("three_in_a_row"), Status::Won(seat)) => {
                assert_eq!(
                    row.winner.map(|w| w.as_str()),
                    Some(if seat == uttt::rules::Seat::X {
                        "x"
                    } else {
                        "o"
                    })
                );
            }
            ("finished", Some("draw"), Status::Drawn) => assert!(row.winner.is_none()),
            ("finished", Some("timeout" | "resignation"), Status::Ongoing) => {
                assert!(row.winner.is_some())
            }
            other => panic!("stored result {other:?} does not follow from the moves"),
        }
    }
}

impl TestApp {
    /// A player inserted straight into the database with a token, for tests
    /// that need many players (registration's password hashing is the slow part).
    pub async fn quick_player(&self, username: &str) -> Player {
        let id = uttt::ids::player_id();
        let (pid, name) = (id.clone(), username.to_owned());
        let now = self.time.now_ms();
        self.ctx
            .db
            .run(move |conn| {
                uttt::store::players::insert(
                    conn,
                    &uttt::store::players::NewPlayer {
                        id: &pid,
                        username: &name,
                        username_key: &name.to_ascii_lowercase(),
                        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$unusable",
                        role: "player",
                        created_at: now,
                    },
                )
            })
            .await
            .expect("insert player");
        Player {
            token: self
                .ctx
                .tokens
                .issue(&id, "player", &uttt::ids::record_id())
                .expect("token"),
            id,
            username: username.to_owned(),
            password: String::new(),
            refresh: String::new(),
        }
    }

    /// Sets a player's rating on a ladder directly.
    pub async fn set_rating(&self, player: &Player, ladder: &str, rating: f64, deviation: f64) {
        let (pid, lid) = (player.id.clone(), ladder.to_owned());
        let now = self.time.now_ms();
        self.ctx
            .db
            .run(move |conn| -> uttt::service::Result<()> {
                let mut row = uttt::service::ladders::ensure(conn, &pid, &lid, now)?;
                row.rating = rating;
                row.deviation = deviation;
                row.established = deviation <= 110.0;
                uttt::store::ratings::save(conn, &row)?;
                Ok(())
            })
            .await
            .expect("set rating");
    }

    /// The stored rating row of a player.
    pub async fn rating_row(
        &self,
        player: &Player,
        ladder: &str,
    ) -> uttt::store::ratings::RatingRow {
        let (pid, lid) = (player.id.clone(), ladder.to_owned());
        self.ctx
            .db
            .run(move |conn| uttt::store::ratings::get(conn, &pid, &lid))
            .await
            .expect("rating")
            .expect("rating row")
    }

    /// Queues a player; returns the ticket id.
    pub async fn queue(&self, player: &Player, ladder: &str) -> String {
        let reply = self
            .post(
                "/api/v1/matchmaking/tickets",
                &json!({"ladder": ladder}),
                Some(&player.token),
            )
            .await;
        reply.expect(201);
        reply.body["id"].as_str().expect("ticket id").to_owned()
    }

    /// Waits until a ticket is matched; returns the match id.
    pub async fn matched(&self, player: &Player, ticket: &str) -> String {
        let path = format!("/api/v1/matchmaking/tickets/{ticket}");
        eventually(Duration::from_secs(20), "a pairing", || async {
            let t = self.get(&path, Some(&player.token)).await;
            t.body["match_id"].as_str().map(str::to_owned)
        })
        .await
    }
}
