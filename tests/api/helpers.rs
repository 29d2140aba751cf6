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
use uttt::time::ManualTime;

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
    fn create(admin_url: &str) -> TestDatabase {
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
    time: Arc<ManualTime>,
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
