//! `uttt bot`, run as engine authors run it: a server on a port of its own
//! (SQLite, and PostgreSQL + Redis when `TEST_DATABASE_URL` and
//! `TEST_REDIS_URL` are set), the real `uttt bot` binary as a child process
//! that knows only the server's URL and a refresh token, and test clients
//! speaking HTTP. Real time: a match takes a few seconds.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::IndexedRandom as _;
use serde_json::{Value, json};

use common::db::TestDatabase;
use common::http::{Player, Reply, register, send};
use common::sse::EventStream;
use uttt::config::Config;
use uttt::time::SystemTime;

/// A rated ladder open to bots: ultimate tic-tac-toe, 30 s a turn.
const LADDERS: &str = r#"[{"id":"bots","name":"Open to bots","depth":2,"time_control":{"kind":"per_turn","turn_ms":30000},"bots":true}]"#;
/// The longest a bot may take to play its matches and exit.
const BOT_DEADLINE: Duration = Duration::from_secs(300);
/// The longest the test waits for one event.
const EVENT_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    PostgresRedis,
}

/// SQLite always; PostgreSQL with Redis when both variables are set.
fn backends() -> Vec<Backend> {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty());
    match (set("TEST_DATABASE_URL"), set("TEST_REDIS_URL")) {
        (true, true) => vec![Backend::Sqlite, Backend::PostgresRedis],
        (false, false) => {
            eprintln!(
                "TEST_DATABASE_URL / TEST_REDIS_URL are unset: the bot tests run on SQLite only"
            );
            vec![Backend::Sqlite]
        }
        _ => panic!("set both TEST_DATABASE_URL and TEST_REDIS_URL, or neither"),
    }
}

/// A server on a port of its own, with every worker and the real clock.
struct Server {
    url: String,
    handle: actix_web::dev::ServerHandle,
    dir: PathBuf,
    _database: Option<TestDatabase>,
}

impl Server {
    /// `env` is read as the environment would be (`UTTT_…` variables).
    async fn start(backend: Backend, env: &[(&str, &str)]) -> Server {
        let dir = std::env::temp_dir().join(format!("uttt-bot-test-{}", uttt::ids::record_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = matches!(backend, Backend::PostgresRedis)
            .then(|| TestDatabase::create(&std::env::var("TEST_DATABASE_URL").unwrap()));
        let redis = std::env::var("TEST_REDIS_URL").unwrap_or_default();
        let prefix = format!("bot-test:{}:", uttt::ids::record_id());
        let mut vars: Vec<(String, String)> = vec![
            ("UTTT_BIND".into(), "127.0.0.1:0".into()),
            ("UTTT_DATA_DIR".into(), dir.display().to_string()),
            (
                "UTTT_JWT_SECRET".into(),
                "bot-test-secret-0123456789abcdef0123456".into(),
            ),
            ("UTTT_HTTP_WORKERS".into(), "2".into()),
            ("UTTT_LADDERS".into(), LADDERS.into()),
            ("UTTT_MM_ROUND_MS".into(), "100".into()),
            // Anyone on the ladder pairs with anyone: ratings part after a game.
            ("UTTT_MM_WINDOW_START".into(), "5000".into()),
            ("UTTT_REGISTER_LIMIT_PER_ADDRESS".into(), "1000".into()),
            ("UTTT_LOGIN_LIMIT_PER_ADDRESS".into(), "1000".into()),
        ];
        if let Some(db) = &database {
            vars.push(("DATABASE_URL".into(), db.url.clone()));
            vars.push(("REDIS_URL".into(), redis));
            vars.push(("UTTT_REDIS_PREFIX".into(), prefix));
        }
        vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let config = Config::from_lookup(|name| {
            vars.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
        .expect("test configuration");
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
            _database: database,
        }
    }

    async fn stop(self) {
        self.handle.stop(false).await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `uttt bot` process, killed when dropped.
struct BotProcess {
    child: Child,
    log: PathBuf,
}

impl BotProcess {
    /// Runs `uttt bot --server URL --token REFRESH ARGS…`, its output in `dir/NAME.log`.
    fn start(server: &Server, name: &str, refresh_token: &str, args: &[&str]) -> BotProcess {
        let log = server.dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_uttt"))
            .args(["bot", "--server", &server.url, "--level", "1"])
            .args(args)
            // The token goes through the environment, as the README advises
            // (a command line is visible to every user of the machine).
            .env("UTTT_BOT_TOKEN", refresh_token)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .expect("start uttt bot");
        BotProcess { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the process to exit (it was told how many matches to play).
    async fn exited(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < BOT_DEADLINE,
                "the bot did not finish its matches in {BOT_DEADLINE:?}; log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Asserts the bot exited with success.
    async fn succeeded(&mut self) {
        let status = self.exited().await;
        assert!(
            status.success(),
            "uttt bot exited with {status}; log:\n{}",
            self.log()
        );
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish()
}

async fn call(
    http: &awc::Client,
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    who: &Player,
) -> Reply {
    send(
        http,
        method,
        &format!("{}/api/v1{path}", server.url),
        body.map(|b| b.to_string()),
        Some(&who.token),
        &[],
    )
    .await
    .unwrap()
}

/// `GET path` as the player `watcher`, logged in afresh (with short-lived
/// access tokens, any earlier token may have expired by the time it reads).
async fn public(http: &awc::Client, server: &Server, path: &str) -> Reply {
    let login = send(
        http,
        "POST",
        &format!("{}/api/v1/auth/login", server.url),
        Some(json!({"username": "watcher", "password": common::http::PASSWORD}).to_string()),
        None,
        &[],
    )
    .await
    .unwrap();
    login.expect(200);
    let token = login.body["access_token"].as_str().unwrap();
    let reply = send(
        http,
        "GET",
        &format!("{}/api/v1{path}", server.url),
        None,
        Some(token),
        &[],
    )
    .await
    .unwrap();
    reply.expect(200);
    reply
}

/// Registers `name` and turns the account into a bot through the API.
async fn bot_account(http: &awc::Client, server: &Server, name: &str) -> Player {
    let bot = register(http, &server.url, name).await;
    let me = call(http, server, "POST", "/me/bot", Some(json!({})), &bot).await;
    me.expect(200);
    assert_eq!(me.body["bot"], true);
    bot
}

/// The player's rating entry on ladder `bots`.
async fn rating(http: &awc::Client, server: &Server, name: &str) -> Value {
    let profile = public(http, server, &format!("/players/{name}")).await;
    profile.body["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ladder"] == "bots")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Plays `player`'s seat of match `id` with random legal moves to the end;
/// answers the final state.
async fn play_randomly(http: &awc::Client, server: &Server, player: &Player, id: &str) -> Value {
    let mut stream = EventStream::open_at(
        &server.url,
        http,
        &format!("/api/v1/matches/{id}/events"),
        &player.token,
        None,
    )
    .await;
    // States repeat a ply when only presence changed: play each ply once.
    let mut next_ply = 0;
    loop {
        let state = stream
            .state_where(EVENT_WAIT, |s| {
                s["status"] == "finished"
                    || (s["players"][s["turn"].as_str().unwrap_or("-")]["id"] == player.id.as_str()
                        && s["ply"].as_u64().unwrap() >= next_ply)
            })
            .await;
        if state["status"] == "finished" {
            return state;
        }
        let legal = state["next"]["legal"].as_array().unwrap().clone();
        let address = legal.choose(&mut rand::rng()).unwrap().clone();
        let reply = call(
            http,
            server,
            "POST",
            &format!("/matches/{id}/moves"),
            Some(json!({"ply": state["ply"], "address": address})),
            player,
        )
        .await;
        reply.expect(200);
        next_ply = state["ply"].as_u64().unwrap() + 1;
    }
}

async fn a_bot_plays_a_human(backend: Backend) {
    let server = Server::start(backend, &[]).await;
    let http = client();
    register(&http, &server.url, "watcher").await;
    let human = register(&http, &server.url, "human").await;
    let bot = bot_account(&http, &server, "cpu_bot").await;
    let mut process = BotProcess::start(
        &server,
        "cpu_bot",
        &bot.refresh,
        &["--ladder", "bots", "--accept-challenges", "--matches", "2"],
    );

    // A rated match: the human queues on the ladder the bot waits on.
    let mut events =
        EventStream::open_at(&server.url, &http, "/api/v1/me/events", &human.token, None).await;
    call(
        &http,
        &server,
        "POST",
        "/matchmaking/tickets",
        Some(json!({"ladder": "bots"})),
        &human,
    )
    .await
    .expect(201);
    let found = loop {
        let event = events
            .next_event(EVENT_WAIT)
            .await
            .unwrap_or_else(|| panic!("no pairing; bot log:\n{}", process.log()));
        if event.event == "match_found" {
            break serde_json::from_str::<Value>(&event.data).unwrap();
        }
    };
    let id = found["match_id"].as_str().unwrap().to_owned();
    let end = play_randomly(&http, &server, &human, &id).await;
    let bot_seat = if end["players"]["x"]["id"] == bot.id.as_str() {
        "x"
    } else {
        "o"
    };
    assert_eq!(end["players"][bot_seat]["bot"], true, "{end}");
    assert_eq!(
        end["players"][bot_seat]["controller"], "human",
        "the bot played its own seat: {end}"
    );
    assert_eq!(end["rated"], true);
    assert_ne!(end["result"]["reason"], "timeout", "{end}");
    let changes = &end["result"]["rating_changes"];
    assert!(changes.is_object(), "{end}");
    // Both start at 1500 ± 350: a rated game always narrows the deviation,
    // and a decided one moves the rating too (a draw between equals does not).
    let decided = !end["result"]["winner"].is_null();
    for name in ["human", "cpu_bot"] {
        let r = rating(&http, &server, name).await;
        assert_eq!(r["games"], 1, "{name}: {r}");
        assert!(r["deviation"].as_f64().unwrap() < 350.0, "{name}: {r}");
        assert_eq!(r["rating"].as_f64() != Some(1500.0), decided, "{name}: {r}");
    }

    // A casual challenge, accepted by the bot; the human (X) resigns at once.
    let challenge = call(
        &http,
        &server,
        "POST",
        "/challenges",
        Some(json!({"username": "cpu_bot", "depth": 1, "seat": "x", "time_control": {"kind": "none"}})),
        &human,
    )
    .await;
    challenge.expect(201);
    let accepted = loop {
        let event = events
            .next_event(EVENT_WAIT)
            .await
            .unwrap_or_else(|| panic!("the bot did not accept; bot log:\n{}", process.log()));
        if event.event == "challenge_accepted" {
            break serde_json::from_str::<Value>(&event.data).unwrap();
        }
    };
    assert_eq!(accepted["challenge_id"], challenge.body["id"]);
    let casual = accepted["match_id"].as_str().unwrap();
    let end = call(
        &http,
        &server,
        "POST",
        &format!("/matches/{casual}/resign"),
        Some(json!({})),
        &human,
    )
    .await;
    end.expect(200);
    assert_eq!(end.body["players"]["o"]["id"], bot.id.as_str());
    assert_eq!(end.body["rated"], false);

    // Two matches played: the bot stops, and leaves no ticket behind.
    process.succeeded().await;
    let log = process.log();
    assert_eq!(log.matches("match finished").count(), 2, "{log}");
    let r = rating(&http, &server, "cpu_bot").await;
    assert_eq!(r["games"], 1, "the casual match is not rated: {r}");
    server.stop().await;
}

#[actix_web::test]
async fn the_bot_plays_a_rated_match_against_a_human_and_accepts_a_challenge() {
    for backend in backends() {
        a_bot_plays_a_human(backend).await;
    }
}

async fn two_bots_play(backend: Backend) {
    // Access tokens of 2 s: streams end (and are reopened) every other
    // second, and each bot renews its session many times as it plays.
    let server = Server::start(backend, &[("UTTT_ACCESS_TOKEN_TTL_SECS", "2")]).await;
    let http = client();
    register(&http, &server.url, "watcher").await;
    let one = bot_account(&http, &server, "bot_one").await;
    // The second is made a bot by `uttt bot --become-bot`.
    let two = register(&http, &server.url, "bot_two").await;
    let mut first = BotProcess::start(
        &server,
        "bot_one",
        &one.refresh,
        &["--ladder", "bots", "--matches", "2"],
    );
    let mut second = BotProcess::start(
        &server,
        "bot_two",
        &two.refresh,
        &["--ladder", "bots", "--matches", "2", "--become-bot"],
    );
    first.succeeded().await;
    second.succeeded().await;

    // Two rated matches between them: the bots queued again after the first.
    let versus = public(&http, &server, "/players/bot_one/versus/bot_two").await;
    let games: u64 = ["wins", "draws", "losses"]
        .iter()
        .map(|k| versus.body[k].as_u64().unwrap())
        .sum();
    assert_eq!(games, 2, "{}", versus.text);
    for name in ["bot_one", "bot_two"] {
        let r = rating(&http, &server, name).await;
        assert_eq!(r["games"], 2, "{name}: {r}");
        let profile = public(&http, &server, &format!("/players/{name}")).await;
        assert_eq!(profile.body["bot"], true, "{}", profile.text);
    }
    for item in versus.body["matches"].as_array().unwrap() {
        assert_ne!(item["reason"], "timeout", "{item}");
    }
    // The short tokens were renewed: neither bot had to stop for its session.
    for bot in [&first, &second] {
        assert!(!bot.log().contains("refused"), "{}", bot.log());
    }
    server.stop().await;
}

#[actix_web::test]
async fn two_bots_pair_on_a_bots_ladder_and_play_two_matches_with_nobody_else() {
    for backend in backends() {
        two_bots_play(backend).await;
    }
}

fn python_runs() -> bool {
    Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

async fn python_plays_the_bot(backend: Backend) {
    let server = Server::start(backend, &[]).await;
    let http = client();
    register(&http, &server.url, "watcher").await;
    let rust = bot_account(&http, &server, "rust_bot").await;
    register(&http, &server.url, "py_bot").await;
    let log = server.dir.join("py_bot.log");
    let out = std::fs::File::create(&log).unwrap();
    let python = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/bot.py"))
        .args([
            "--server",
            &server.url,
            "--username",
            "py_bot",
            "--ladder",
            "bots",
        ])
        .args(["--matches", "1", "--become-bot"])
        .env("UTTT_BOT_PASSWORD", common::http::PASSWORD)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .spawn()
        .expect("start python3 examples/bot.py");
    let mut python = BotProcess { child: python, log };
    let mut cpu = BotProcess::start(
        &server,
        "rust_bot",
        &rust.refresh,
        &["--ladder", "bots", "--matches", "1"],
    );
    python.succeeded().await;
    cpu.succeeded().await;
    let versus = public(&http, &server, "/players/py_bot/versus/rust_bot").await;
    assert_eq!(
        versus.body["matches"].as_array().unwrap().len(),
        1,
        "{}",
        versus.text
    );
    assert!(python.log().contains("finished:"), "{}", python.log());
    server.stop().await;
}

#[actix_web::test]
async fn the_python_example_plays_a_match_against_uttt_bot() {
    if !python_runs() {
        eprintln!("NOTICE: python3 is missing: the Python example is not tested");
        return;
    }
    for backend in backends() {
        python_plays_the_bot(backend).await;
    }
}
