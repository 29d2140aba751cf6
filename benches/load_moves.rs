//! Load client: moves per second over HTTP against a running server.
//!
//! `LOAD_URL` (default `http://127.0.0.1:8080`), `LOAD_GAMES` concurrent games
//! (default 64), `LOAD_SECS` seconds (default 30). Each game is a room between
//! two fresh players; the side to move plays a random legal square from the
//! state the previous move returned; a finished game is followed by a
//! rematch in the same room. Prints moves/s and latency percentiles of the
//! accepted moves. The server needs a registration limit that allows
//! `2 × LOAD_GAMES` sign-ups (`UTTT_REGISTER_LIMIT_PER_ADDRESS`).
//!
//! Run: `cargo bench --bench load_moves` (with the server started separately).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Game {
    room: String,
    tokens: [String; 2],
    ids: [String; 2],
    match_id: String,
    state: Value,
}

async fn post(client: &awc::Client, url: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
    let mut req = client.post(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    match req.send_json(body).await {
        Ok(mut res) => {
            let status = res.status().as_u16();
            let value = res
                .json::<Value>()
                .limit(8 << 20)
                .await
                .unwrap_or(Value::Null);
            (status, value)
        }
        Err(_) => (0, Value::Null),
    }
}

async fn register(client: &awc::Client, base: &str, name: &str) -> (String, String) {
    let (status, body) = post(
        client,
        &format!("{base}/api/v1/auth/register"),
        None,
        &json!({"username": name, "password": "load test password"}),
    )
    .await;
    assert_eq!(status, 201, "registration failed: {body}");
    (
        body["access_token"].as_str().unwrap_or_default().to_owned(),
        body["player"]["id"].as_str().unwrap_or_default().to_owned(),
    )
}

async fn state(client: &awc::Client, base: &str, token: &str, id: &str) -> Value {
    let mut res = client
        .get(format!("{base}/api/v1/matches/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("state");
    res.json::<Value>()
        .limit(8 << 20)
        .await
        .expect("state json")
}

async fn setup(client: &awc::Client, base: &str, tag: &str, i: usize) -> Game {
    let (t0, id0) = register(client, base, &format!("ld{tag}{i}a")).await;
    let (t1, id1) = register(client, base, &format!("ld{tag}{i}b")).await;
    let (_, room) = post(
        client,
        &format!("{base}/api/v1/rooms"),
        Some(&t0),
        &json!({"depth": 2, "time_control": {"kind": "none"}}),
    )
    .await;
    let code = room["code"].as_str().expect("room code").to_owned();
    let (_, joined) = post(
        client,
        &format!("{base}/api/v1/rooms/{code}/join"),
        Some(&t1),
        &json!({}),
    )
    .await;
    let match_id = joined["match_id"].as_str().expect("match").to_owned();
    let state = state(client, base, &t0, &match_id).await;
    Game {
        room: code,
        tokens: [t0, t1],
        ids: [id0, id1],
        match_id,
        state,
    }
}

fn mover(game: &Game) -> usize {
    let x = game.state["players"]["x"]["id"]
        .as_str()
        .unwrap_or_default();
    let x_is_first = x == game.ids[0];
    let x_to_move = game.state["turn"] == "x";
    usize::from(x_is_first != x_to_move)
}

async fn play(
    client: awc::Client,
    base: String,
    mut game: Game,
    until: Instant,
    seed: u64,
) -> (Vec<f64>, usize) {
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut rng = seed | 1;
    while Instant::now() < until {
        if game.state["status"] != "active" {
            let (_, room) = post(
                &client,
                &format!("{base}/api/v1/rooms/{}/rematch", game.room),
                Some(&game.tokens[0]),
                &json!({"after_match_id": game.match_id}),
            )
            .await;
            game.match_id = room["match_id"].as_str().unwrap_or_default().to_owned();
            game.state = state(&client, &base, &game.tokens[0], &game.match_id).await;
            continue;
        }
        let legal = game.state["next"]["legal"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if legal.is_empty() {
            game.state = state(&client, &base, &game.tokens[0], &game.match_id).await;
            continue;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let address = legal[(rng % legal.len() as u64) as usize].clone();
        let who = mover(&game);
        let started = Instant::now();
        let (status, body) = post(
            &client,
            &format!("{base}/api/v1/matches/{}/moves", game.match_id),
            Some(&game.tokens[who]),
            &json!({"ply": game.state["ply"], "address": address}),
        )
        .await;
        if status == 200 {
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            game.state = body;
        } else {
            errors += 1;
            game.state = state(&client, &base, &game.tokens[0], &game.match_id).await;
        }
    }
    (latencies, errors)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn main() {
    let base: String = env("LOAD_URL", "http://127.0.0.1:8080".to_owned());
    let games: usize = env("LOAD_GAMES", 64);
    let secs: u64 = env("LOAD_SECS", 30);
    actix_rt::System::new().block_on(async move {
        let connector = awc::Connector::new().limit(games * 2 + 8);
        let client = awc::Client::builder()
            .connector(connector)
            .timeout(Duration::from_secs(30))
            .finish();
        let tag = format!("{:x}", std::process::id() % 0xffff);
        let mut set = Vec::new();
        for i in 0..games {
            set.push(setup(&client, &base, &tag, i).await);
        }
        eprintln!("{games} games ready; playing for {secs} s against {base}");
        let until = Instant::now() + Duration::from_secs(secs);
        let started = Instant::now();
        let tasks: Vec<_> = set
            .into_iter()
            .enumerate()
            .map(|(i, g)| actix_rt::spawn(play(client.clone(), base.clone(), g, until, i as u64 * 7919 + 1)))
            .collect();
        let mut all = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let (l, e) = t.await.expect("game task");
            all.extend(l);
            errors += e;
        }
        let elapsed = started.elapsed().as_secs_f64();
        all.sort_by(f64::total_cmp);
        println!(
            "{} moves in {elapsed:.1} s = {:.0} moves/s; latency p50 {:.2} ms, p99 {:.2} ms; {errors} refused",
            all.len(),
            all.len() as f64 / elapsed,
            percentile(&all, 0.5),
            percentile(&all, 0.99)
        );
    });
}
