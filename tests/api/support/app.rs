//! Test servers: their configuration per backend, and starting and stopping them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use uttt::config::{Config, DatabaseConfig};
use uttt::service::Context;
use uttt::time::{ManualTime, TimeSource};

use crate::common::db::TestDatabase;

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
/// `with MAKE;` first starts each app with `MAKE(backend)` (an async function
/// or closure returning `Option<TestApp>`, `None` when PostgreSQL is not
/// configured) instead of the default configuration.
#[macro_export]
macro_rules! both_backends {
    (with $make:expr; $($(#[$meta:meta])* async fn $name:ident($app:ident: TestApp) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[actix_web::test]
                async fn sqlite() {
                    let Some($app) = ($make)($crate::support::Backend::Sqlite).await else {
                        panic!("a SQLite test app always starts")
                    };
                    $body
                }

                #[actix_web::test]
                async fn postgres() {
                    let Some($app) = ($make)($crate::support::Backend::Postgres).await else { return };
                    $body
                }
            }
        )*
    };
    ($($(#[$meta:meta])* async fn $name:ident($app:ident: TestApp) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[actix_web::test]
                async fn sqlite() {
                    let $app = $crate::support::TestApp::spawn($crate::support::Backend::Sqlite).await;
                    $body
                }

                #[actix_web::test]
                async fn postgres() {
                    let Some($app) = $crate::support::TestApp::spawn_postgres().await else { return };
                    $body
                }
            }
        )*
    };
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
        config.db_pipeline_size = 4;
        // Tests jump the clock to a deadline exactly and expect the flag to
        // fall there; the settling time has a test of its own (matches.rs).
        config.flag_settle = std::time::Duration::ZERO;
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
                // Through PgBouncer in transaction pooling (see the README).
                config.db_prepared_statements =
                    std::env::var("TEST_DB_PREPARED_STATEMENTS").as_deref() != Ok("false");
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
        self.database.as_ref().map(TestDatabase::name)
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
        TestApp::launch(config, time.clone(), time).await
    }

    /// Starts a server from an edited configuration on the real clock (for the
    /// few tests that measure real time; `time` is then not the server's clock).
    pub async fn start_real_time(config: TestConfig) -> TestApp {
        TestApp::launch(config, ManualTime::new(0), Arc::new(uttt::time::SystemTime)).await
    }

    /// Starts a server whose game time is `clock`; `time` is what tests advance.
    async fn launch(
        config: TestConfig,
        time: Arc<ManualTime>,
        clock: Arc<dyn TimeSource>,
    ) -> TestApp {
        let (address, ctx, server) = start_instance(config.config.clone(), clock).await;
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
