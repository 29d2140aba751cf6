//! The bundled web client, tested in a real browser: each test starts a server
//! on port 0 (a fresh SQLite database, every worker running, the real clock)
//! and runs one script of `web/tests/` with Node, which drives headless
//! Chromium through playwright-core against it (`UTTT_URL`).
//!
//! Needs Node, Chromium (`/usr/bin/chromium`, or `CHROMIUM`) and
//! `web/node_modules` (`npm ci` in `web/`). With `TEST_BROWSER=1` (CI sets
//! it) a missing one fails the test; without it the test says what is
//! missing and passes, so `cargo test` works on a machine without them.
//! Screenshots go to `target/web-screenshots/`.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use uttt::config::{Config, DatabaseConfig, Workers};
use uttt::time::SystemTime;

/// Longest a script may run.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// One browser at a time: the machine may have two cores.
static BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

fn node_runs() -> bool {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What is missing to run the scripts (`browser`: Chromium and playwright-core too).
fn missing(browser: bool) -> Vec<String> {
    let mut missing = Vec::new();
    if !node_runs() {
        missing.push("Node.js (`node`)".to_owned());
    }
    if browser {
        if !chromium().is_file() {
            missing.push(format!(
                "Chromium at {} (`apt-get install chromium`, or set CHROMIUM)",
                chromium().display()
            ));
        }
        if !root()
            .join("web/node_modules/playwright-core/package.json")
            .is_file()
        {
            missing.push("web/node_modules (run `npm ci` in web/)".to_owned());
        }
    }
    missing
}

/// Whether the test may run; panics when `TEST_BROWSER=1` and something is missing.
fn ready(what: &str, browser: bool) -> bool {
    let missing = missing(browser);
    if missing.is_empty() {
        return true;
    }
    let required = std::env::var("TEST_BROWSER").is_ok_and(|v| v == "1");
    let list = missing.join(", ");
    assert!(
        !required,
        "TEST_BROWSER=1 but {what} cannot run: missing {list}"
    );
    eprintln!("NOTICE: {what} skipped: missing {list} (set TEST_BROWSER=1 to make this an error)");
    false
}

/// A server of the test's own.
struct Server {
    url: String,
    handle: actix_web::dev::ServerHandle,
    dir: PathBuf,
}

impl Server {
    /// A server with the test configuration, edited by `configure`.
    async fn start(configure: impl FnOnce(&mut Config)) -> Server {
        let dir = std::env::temp_dir().join(format!("uttt-web-test-{}", uttt::ids::record_id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut config = Config::from_lookup(|_| None).expect("default config");
        config.bind = "127.0.0.1:0".into();
        config.data_dir = dir.clone();
        config.database = DatabaseConfig::Sqlite(dir.join("uttt.db"));
        config.jwt_secret = Some("web-test-secret-0123456789abcdef012345".into());
        config.http_workers = 2;
        config.workers = Workers::ALL;
        // Every script signs up several players from 127.0.0.1.
        config.rate_limits.register_per_address.limit = 1000;
        config.rate_limits.login_per_address.limit = 1000;
        configure(&mut config);
        let ctx = uttt::server::context(config, Arc::new(SystemTime))
            .await
            .unwrap_or_else(|e| panic!("test server failed to start: {e:#}"));
        let bound = uttt::server::bind(ctx).expect("bind");
        let handle = bound.server.handle();
        actix_web::rt::spawn(bound.server);
        Server {
            url: format!("http://{}", bound.addr),
            handle,
            dir,
        }
    }

    async fn stop(self) {
        self.handle.stop(false).await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `node ARGS` in the crate's folder with `UTTT_URL=url`, its output
/// written to `log`; answers (success, output).
async fn node(args: &[&str], url: &str, log: PathBuf) -> (bool, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        let out = File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let started = Instant::now();
        let mut child = Command::new("node")
            .args(&args)
            .current_dir(root())
            .env("UTTT_URL", &url)
            .env("UTTT_SCREENSHOTS", root().join("target/web-screenshots"))
            .env("CHROMIUM", chromium())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("node starts");
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for node") {
                break Some(status);
            }
            if started.elapsed() > SCRIPT_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let mut text = std::fs::read_to_string(&log).unwrap_or_default();
        match status {
            Some(s) if s.success() => (true, text),
            Some(s) => {
                text.push_str(&format!("\n(node exited with {s})"));
                (false, text)
            }
            None => {
                text.push_str(&format!("\n(killed after {SCRIPT_TIMEOUT:?})"));
                (false, text)
            }
        }
    })
    .await
    .expect("node runner")
}

/// Runs the browser script `web/tests/NAME.mjs` against a fresh server.
async fn browser_script(name: &str) {
    browser_script_with(name, |_| {}).await;
}

/// Runs `web/tests/NAME.mjs` against a fresh server configured by `configure`.
async fn browser_script_with(name: &str, configure: impl FnOnce(&mut Config)) {
    let script = format!("web/tests/{name}.mjs");
    if !ready(&script, true) {
        return;
    }
    let _turn = BROWSER.lock().await;
    let server = Server::start(configure).await;
    let started = Instant::now();
    let (ok, output) = node(&[&script], &server.url, server.dir.join("node.log")).await;
    server.stop().await;
    assert!(ok, "{script} failed:\n{output}");
    println!("{output}{script}: {:.1} s", started.elapsed().as_secs_f64());
}

#[actix_web::test]
async fn practice_against_the_cpu_to_the_end_with_reload_and_log_in_again() {
    browser_script("practice").await;
}

#[actix_web::test]
async fn depth_three_practice_browses_into_sub_boards() {
    browser_script("depth3").await;
}

#[actix_web::test]
async fn a_phone_sized_screen_plays_by_tapping() {
    browser_script("phone").await;
}

#[actix_web::test]
async fn two_players_in_a_room_see_each_other_live_and_rematch() {
    browser_script("room").await;
}

#[actix_web::test]
async fn two_players_queue_on_a_ladder_and_are_paired() {
    browser_script("ranked").await;
}

#[actix_web::test]
async fn tokens_are_refreshed_before_expiry_and_tabs_share_the_session() {
    // 65-second tokens: the client refreshes a minute ahead, so every 5 s.
    browser_script_with("session", |c| c.access_token_ttl = Duration::from_secs(65)).await;
}

#[actix_web::test]
async fn a_dropped_player_is_replaced_by_the_cpu_and_gets_the_seat_back() {
    browser_script_with("dropout", |c| c.drop_grace = Duration::from_secs(3)).await;
}

#[actix_web::test]
async fn a_finished_match_is_analysed_and_stepped_through() {
    browser_script_with("analysis", |c| {
        c.analysis.per_position = Duration::from_millis(50);
    })
    .await;
}

#[actix_web::test]
async fn a_swiss_tournament_is_created_joined_started_followed_and_exported() {
    // Players who joined through the API never open their games: no CPU
    // takes their seats before the script resigns for them.
    browser_script_with("tournament", |c| c.drop_grace = Duration::from_secs(120)).await;
}

#[actix_web::test]
async fn an_arena_counts_down_goes_berserk_moves_from_game_to_game_and_shows_fire() {
    // The opponent plays through the API and never opens its games: no CPU
    // takes its seat before the script resigns for it.
    browser_script_with("arena", |c| c.drop_grace = Duration::from_secs(120)).await;
}

#[actix_web::test]
async fn the_client_modules_pass_their_node_unit_tests() {
    if !ready("web/tests/unit (node --test)", false) {
        return;
    }
    let log = std::env::temp_dir().join(format!("uttt-web-unit-{}.log", uttt::ids::record_id()));
    let (ok, output) = node(&["--test", "web/tests/unit/"], "", log.clone()).await;
    let _ = std::fs::remove_file(log);
    assert!(ok, "node --test web/tests/unit/ failed:\n{output}");
}

/// The page's routes sit beside the API without shadowing it or entering the OpenAPI document.
#[actix_web::test]
async fn the_page_is_served_beside_the_api() {
    let server = Server::start(|_| {}).await;
    let client = awc::Client::default();
    let get = |path: &str| {
        let req = client.get(format!("{}{path}", server.url));
        async move {
            let mut res = req.send().await.expect("request");
            let body = res.body().limit(8 << 20).await.expect("body");
            let ty = res
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            (
                res.status().as_u16(),
                ty,
                String::from_utf8_lossy(&body).into_owned(),
            )
        }
    };

    let (status, ty, body) = get("/").await;
    assert_eq!((status, ty.as_str()), (200, "text/html; charset=utf-8"));
    assert!(body.contains("/web/js/app.js"));
    let (status, ty, _) = get("/web/js/match.js").await;
    assert_eq!(
        (status, ty.as_str()),
        (200, "text/javascript; charset=utf-8")
    );
    let (status, ty, body) = get("/web/js/nope.js").await;
    assert_eq!((status, ty.as_str()), (404, "application/problem+json"));
    assert!(body.contains("\"not_found\""), "{body}");

    let (status, _, body) = get("/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, ty, _) = get("/readyz").await;
    assert_eq!((status, ty.as_str()), (200, "application/json"));
    let (status, _, _) = get("/metrics").await;
    assert_eq!(status, 200);
    let (status, _, _) = get("/docs/").await;
    assert_eq!(status, 200);
    let (status, ty, _) = get("/api/v1/ladders").await;
    assert_eq!((status, ty.as_str()), (200, "application/json"));
    let (status, ty, _) = get("/api/v1/nothing").await;
    assert_eq!((status, ty.as_str()), (404, "application/problem+json"));
    let (status, ty, _) = get("/nothing").await;
    assert_eq!((status, ty.as_str()), (404, "application/problem+json"));

    let (status, _, spec) = get("/openapi.json").await;
    assert_eq!(status, 200);
    let spec: serde_json::Value = serde_json::from_str(&spec).expect("spec");
    let paths: Vec<&String> = spec["paths"].as_object().expect("paths").keys().collect();
    assert!(
        paths
            .iter()
            .all(|p| p.starts_with("/api/")
                || ["/healthz", "/readyz", "/metrics"].contains(&p.as_str())),
        "the page's routes are not part of the API: {paths:?}"
    );
    server.stop().await;
}

#[actix_web::test]
async fn a_challenge_is_declined_cancelled_and_accepted_into_the_same_match() {
    browser_script("challenge").await;
}
