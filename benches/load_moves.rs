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
//! `LOAD_MIXED=1` adds the rest of a server's day on top: every match
//! (rematches too) is watched through its event stream while it is played,
//! `LOAD_LOGINS` clients (default 2) log in every `LOAD_LOGIN_PAUSE_MS`
//! (default 500), and `LOAD_RANKED` pairs (default 4) queue on
//! `LOAD_LADDER` (default `ultimate-turn30`), get paired and play their
//! ranked match, then queue again. `LOAD_PID` names the server process whose
//! resident memory is sampled every second (start, peak, end, and ten
//! readings spread over the run). The CPU time the server, the local
//! PostgreSQL and Redis and the client itself spent is printed per move.
//!
//! `LOAD_RATE` (moves/s) switches to an open loop: moves arrive on a fixed
//! schedule, one every `1 / LOAD_RATE` s, whether or not earlier ones have
//! returned, and each is taken by whichever of the `LOAD_GAMES` games is free
//! (waiting for one if none is). Latency is measured from the scheduled
//! arrival, so queueing, in the server or for a free game, counts: a closed
//! loop hides it, sending only when an answer came back. Give it games to
//! spare (in flight ≈ rate × latency); the arrivals that found no free game
//! at once are counted and printed. Before its clock starts, the open loop
//! spreads the games over a match's length (see `stagger`): started
//! together, they would all end, and ask for their rematches, in the same
//! second, a burst of match creations that is not part of the move rate
//! (bursts have their own benches: `uttt bench pairing` and `uttt bench
//! arena`).
//!
//! `LOAD_FLOOR=1` sends no moves: `LOAD_GAMES` clients each ask `GET
//! /healthz` (an answer that touches neither database nor broker) in a
//! closed loop, through the same client and server stack, and the CPU is
//! printed per request. A move is such a request and more, so this is the
//! floor under a move's HTTP cost on this machine (scripts/moves-vs-pgbench.sh
//! turns it into a ceiling on moves/s).
//!
//! Run: `cargo bench --bench load_moves` (with the server started separately).
//!
//! Over 400 lines: one client for the closed loop, the open loop, the
//! mixed day and the floor, which share the set-up, the move choice and the
//! report.

// A bench that cannot set itself up has nothing to measure: it stops there.
#![expect(clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The part of a match's state the client plays from. Parsed into this
/// instead of a `serde_json::Value`: the client shares the server's cores,
/// and building a `Value` of every answer (boards, clocks, presence) was
/// some 0.06 ms of its CPU a move.
#[derive(Deserialize, Default)]
struct State {
    #[serde(default)]
    ply: u32,
    #[serde(default)]
    status: String,
    #[serde(default)]
    turn: Option<String>,
    #[serde(default)]
    players: Players,
    #[serde(default)]
    next: Next,
}

/// The seats of a state; only X's player is read.
#[derive(Deserialize, Default)]
struct Players {
    #[serde(default)]
    x: Option<Seated>,
}

/// A seated player.
#[derive(Deserialize)]
struct Seated {
    id: String,
}

/// The squares the player to move may play.
#[derive(Deserialize, Default)]
struct Next {
    #[serde(default)]
    legal: Vec<Vec<u8>>,
}

impl State {
    fn active(&self) -> bool {
        self.status == "active"
    }
}

struct Game {
    room: String,
    tokens: [String; 2],
    ids: [String; 2],
    match_id: String,
}

/// The status and JSON body of a sent request; status 0 when it failed.
async fn answer<T: DeserializeOwned + Default>(
    sent: Result<
        awc::ClientResponse<
            impl futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>>
            + Unpin,
        >,
        awc::error::SendRequestError,
    >,
) -> (u16, T) {
    match sent {
        Ok(mut res) => {
            let status = res.status().as_u16();
            let value = res.json::<T>().limit(8 << 20).await.unwrap_or_default();
            (status, value)
        }
        Err(_) => (0, T::default()),
    }
}

async fn post<T: DeserializeOwned + Default>(
    client: &awc::Client,
    url: &str,
    token: Option<&str>,
    body: &Value,
) -> (u16, T) {
    let mut req = client.post(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    answer(req.send_json(body).await).await
}

async fn get<T: DeserializeOwned + Default>(
    client: &awc::Client,
    url: &str,
    token: &str,
) -> (u16, T) {
    answer(client.get(url).bearer_auth(token).send().await).await
}

/// Sends a move to the match at `match_url` as `mover`; on 200 `state`
/// becomes the answer, otherwise it is read again as `reader`. Returns
/// whether the move was accepted, or the refusal: the status and the
/// problem's `code`.
async fn send_move(
    client: &awc::Client,
    match_url: &str,
    mover: &str,
    reader: &str,
    address: Vec<u8>,
    state: &mut State,
) -> Result<(), String> {
    let sent = client
        .post(format!("{match_url}/moves"))
        .bearer_auth(mover)
        .send_json(&json!({"ply": state.ply, "address": address}))
        .await;
    let status = sent.as_ref().map_or(0, |res| res.status().as_u16());
    if status == 200 {
        (_, *state) = answer(sent).await;
        Ok(())
    } else {
        let (_, problem): (u16, Value) = answer(sent).await;
        (_, *state) = get(client, match_url, reader).await;
        Err(format!(
            "{status} {}",
            problem["code"].as_str().unwrap_or("-")
        ))
    }
}

async fn register(client: &awc::Client, base: &str, name: &str) -> (String, String) {
    let (status, body): (u16, Value) = post(
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

async fn setup(client: &awc::Client, base: &str, tag: &str, i: usize) -> Game {
    let (t0, id0) = register(client, base, &format!("ld{tag}{i}a")).await;
    let (t1, id1) = register(client, base, &format!("ld{tag}{i}b")).await;
    let (_, room): (u16, Value) = post(
        client,
        &format!("{base}/api/v1/rooms"),
        Some(&t0),
        &json!({"depth": 2, "time_control": {"kind": "none"}}),
    )
    .await;
    let code = room["code"].as_str().expect("room code").to_owned();
    let (_, joined): (u16, Value) = post(
        client,
        &format!("{base}/api/v1/rooms/{code}/join"),
        Some(&t1),
        &json!({}),
    )
    .await;
    let match_id = joined["match_id"].as_str().expect("match").to_owned();
    Game {
        room: code,
        tokens: [t0, t1],
        ids: [id0, id1],
        match_id,
    }
}

async fn play(
    client: awc::Client,
    base: String,
    mut game: Game,
    until: Instant,
    seed: u64,
    events: Option<Arc<AtomicUsize>>,
) -> (Vec<f64>, usize) {
    let mut latencies = Vec::new();
    let mut refused = 0;
    let mut rng = seed | 1;
    while Instant::now() < until {
        // Mixed load: every match, rematches included, has a spectator
        // stream open while it is played, as the opponent's client would.
        let watcher = events.as_ref().map(|events| {
            actix_rt::spawn(watch(
                client.clone(),
                base.clone(),
                game.tokens[1].clone(),
                game.match_id.clone(),
                until,
                events.clone(),
            ))
        });
        let tokens = [game.tokens[0].as_str(), game.tokens[1].as_str()];
        let ids = [game.ids[0].as_str(), game.ids[1].as_str()];
        refused += play_out(
            &client,
            &base,
            tokens,
            ids,
            &game.match_id,
            until,
            &mut rng,
            &mut latencies,
        )
        .await;
        // The stream ends itself on the final state; should it miss it, its
        // connection must not outlive the match.
        if let Some(mut watcher) = watcher {
            let _ = actix_rt::time::timeout(Duration::from_secs(2), &mut watcher).await;
            watcher.abort();
        }
        if Instant::now() >= until {
            break;
        }
        rematch(&client, &base, &mut game).await;
    }
    (latencies, refused)
}

/// Starts the next match in the game's room.
async fn rematch(client: &awc::Client, base: &str, game: &mut Game) {
    let (_, room): (u16, Value) = post(
        client,
        &format!("{base}/api/v1/rooms/{}/rematch", game.room),
        Some(&game.tokens[0]),
        &json!({"after_match_id": game.match_id}),
    )
    .await;
    game.match_id = room["match_id"].as_str().unwrap_or_default().to_owned();
}

/// A random legal move of `state`: the index in `ids` of the player to
/// move and the address; `None` when the state lists no legal square.
fn choose(state: &State, ids: [&str; 2], rng: &mut u64) -> Option<(usize, Vec<u8>)> {
    let legal = &state.next.legal;
    if legal.is_empty() {
        return None;
    }
    let x_first = state.players.x.as_ref().is_some_and(|x| x.id == ids[0]);
    let who = usize::from(x_first != (state.turn.as_deref() == Some("x")));
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    Some((who, legal[(*rng % legal.len() as u64) as usize].clone()))
}

/// Plays random legal moves for whichever of `tokens` is to move until the
/// match ends; returns the number of refused moves.
#[allow(clippy::too_many_arguments)]
async fn play_out(
    client: &awc::Client,
    base: &str,
    tokens: [&str; 2],
    ids: [&str; 2],
    match_id: &str,
    until: Instant,
    rng: &mut u64,
    latencies: &mut Vec<f64>,
) -> usize {
    let mut refused = 0;
    let (_, mut state): (u16, State) = get(
        client,
        &format!("{base}/api/v1/matches/{match_id}"),
        tokens[0],
    )
    .await;
    while Instant::now() < until && state.active() {
        let Some((who, address)) = choose(&state, ids, rng) else {
            (_, state) = get(
                client,
                &format!("{base}/api/v1/matches/{match_id}"),
                tokens[0],
            )
            .await;
            continue;
        };
        let started = Instant::now();
        let url = format!("{base}/api/v1/matches/{match_id}");
        if send_move(client, &url, tokens[who], tokens[0], address, &mut state)
            .await
            .is_ok()
        {
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        } else {
            refused += 1;
        }
    }
    refused
}

/// The scheduled arrival times of an open loop, taken by whichever game is free.
type Arrivals = Arc<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<Instant>>>;

/// An arrival taken this much after its time found no free game at once.
const LATE_FOR_A_GAME: Duration = Duration::from_millis(2);

/// How long after the end the games still serve arrivals queued before it;
/// the rest are counted as dropped.
const DRAIN: Duration = Duration::from_secs(5);

/// Emits one arrival every `1 / rate` s from `start` until `until`, each
/// carrying its scheduled time (a late timer sends the missed ones at once,
/// with their own times).
async fn schedule(
    rate: f64,
    start: Instant,
    until: Instant,
    sender: tokio::sync::mpsc::UnboundedSender<Instant>,
) {
    for k in 0u64.. {
        let at = start + Duration::from_secs_f64(k as f64 / rate);
        if at >= until {
            break;
        }
        actix_rt::time::sleep_until(at.into()).await;
        if sender.send(at).is_err() {
            break;
        }
    }
}

/// What one game of the open loop saw.
#[derive(Default)]
struct OpenStats {
    /// Latency (ms) of each accepted move from its scheduled arrival.
    latencies: Vec<f64>,
    /// Refused arrivals by reason (status and problem code).
    refusals: std::collections::BTreeMap<String, usize>,
    /// Arrivals that waited for this game to be free.
    late: usize,
    /// Arrivals taken after the drain time, not sent.
    dropped: usize,
}

/// The server's own histogram of accepted and refused moves (`/metrics`:
/// upper bound in seconds, cumulative count), from a request's arrival in
/// the server to its response head.
async fn server_moves_histogram(client: &awc::Client, base: &str) -> Vec<(String, u64)> {
    let Ok(mut response) = client.get(format!("{base}/metrics")).send().await else {
        return Vec::new();
    };
    let body = response.body().limit(16 << 20).await.unwrap_or_default();
    String::from_utf8_lossy(&body)
        .lines()
        .filter(|l| {
            l.starts_with("uttt_http_request_duration_seconds_bucket")
                && l.contains("method=\"POST\"")
                && l.contains("/moves\"")
        })
        .filter_map(|l| {
            let le = l.split("le=\"").nth(1)?.split('"').next()?.to_owned();
            let n = l.rsplit(' ').next()?.parse().ok()?;
            Some((le, n))
        })
        .collect()
}

/// The share of the moves between two histogram readings under each bound.
fn histogram_between(before: &[(String, u64)], after: &[(String, u64)]) -> String {
    let count =
        |h: &[(String, u64)], le: &str| h.iter().find(|(l, _)| l == le).map_or(0, |(_, n)| *n);
    let total = count(after, "+Inf").saturating_sub(count(before, "+Inf"));
    let shares: Vec<String> = after
        .iter()
        .filter(|(le, _)| le != "+Inf")
        .map(|(le, n)| {
            let under = n.saturating_sub(count(before, le));
            let ms = le.parse::<f64>().unwrap_or(f64::NAN) * 1000.0;
            format!(
                "<={ms}ms {:.2}%",
                100.0 * under as f64 / total.max(1) as f64
            )
        })
        .collect();
    format!("{total} moves: {}", shares.join(" "))
}

/// Plies a random match lasts, about: [`stagger`] spreads the games over it.
const STAGGER_PLIES: usize = 50;

/// Before an open loop's clock starts: game `i` of `n` plays `i ×
/// STAGGER_PLIES / n` random moves (a rematch when its match ends), so the
/// games are spread over a match's length instead of all ending, and asking
/// for their rematches, in the same second;
/// returns each game with its state, read here instead of by all the games
/// at once when the clock starts.
async fn stagger(client: &awc::Client, base: &str, games: Vec<Game>) -> Vec<(Game, State)> {
    let n = games.len().max(1);
    let tasks: Vec<_> = games
        .into_iter()
        .enumerate()
        .map(|(i, mut game)| {
            let (client, base) = (client.clone(), base.to_owned());
            actix_rt::spawn(async move {
                let mut rng = i as u64 * 104_729 + 3;
                let url = |game: &Game| format!("{base}/api/v1/matches/{}", game.match_id);
                let (_, mut state): (u16, State) = get(&client, &url(&game), &game.tokens[0]).await;
                for _ in 0..i * STAGGER_PLIES / n {
                    if !state.active() {
                        rematch(&client, &base, &mut game).await;
                        (_, state) = get(&client, &url(&game), &game.tokens[0]).await;
                        continue;
                    }
                    let Some((who, address)) =
                        choose(&state, [&game.ids[0], &game.ids[1]], &mut rng)
                    else {
                        break;
                    };
                    // A refusal only means the state was read again.
                    let _ = send_move(
                        &client,
                        &url(&game),
                        &game.tokens[who],
                        &game.tokens[0],
                        address,
                        &mut state,
                    )
                    .await;
                }
                (game, state)
            })
        })
        .collect();
    let mut staggered = Vec::with_capacity(tasks.len());
    for t in tasks {
        staggered.push(t.await.expect("staggering a game"));
    }
    staggered
}

/// One game of the open loop: takes the next arrival when it is free, plays
/// a random legal move for it, and starts a rematch when a match ends.
async fn open_loop_game(
    client: awc::Client,
    base: String,
    (mut game, mut state): (Game, State),
    arrivals: Arrivals,
    until: Instant,
    seed: u64,
) -> OpenStats {
    let mut stats = OpenStats::default();
    let mut rng = seed | 1;
    let state_url = |game: &Game| format!("{base}/api/v1/matches/{}", game.match_id);
    loop {
        if !state.active() {
            // A match that ended after the end is this game's last: the
            // arrivals left are the other games'.
            if Instant::now() >= until {
                break;
            }
            rematch(&client, &base, &mut game).await;
            (_, state) = get(&client, &state_url(&game), &game.tokens[0]).await;
            continue;
        }
        let choice = choose(&state, [&game.ids[0], &game.ids[1]], &mut rng);
        let Some(at) = arrivals.lock().await.recv().await else {
            break;
        };
        let taken = Instant::now();
        if taken > until + DRAIN {
            stats.dropped += 1;
            continue;
        }
        stats.late += usize::from(taken.duration_since(at) > LATE_FOR_A_GAME);
        let Some((who, address)) = choice else {
            // An active match with no legal move for either token: the
            // arrival is refused, the state read again.
            *stats
                .refusals
                .entry("no legal move".to_owned())
                .or_default() += 1;
            (_, state) = get(&client, &state_url(&game), &game.tokens[0]).await;
            continue;
        };
        let url = state_url(&game);
        match send_move(
            &client,
            &url,
            &game.tokens[who],
            &game.tokens[0],
            address,
            &mut state,
        )
        .await
        {
            Ok(()) => stats.latencies.push(at.elapsed().as_secs_f64() * 1000.0),
            Err(why) => *stats.refusals.entry(why).or_default() += 1,
        }
    }
    stats
}

/// Plays `games` open-loop at `rate` moves/s until `until`; returns the
/// latencies of the accepted moves and the number refused.
async fn open_loop(
    client: &awc::Client,
    base: &str,
    games: Vec<(Game, State)>,
    rate: f64,
    until: Instant,
) -> (Vec<f64>, usize) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let arrivals: Arrivals = Arc::new(tokio::sync::Mutex::new(receiver));
    let ticker = actix_rt::spawn(schedule(rate, Instant::now(), until, sender));
    let tasks: Vec<_> = games
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            actix_rt::spawn(open_loop_game(
                client.clone(),
                base.to_owned(),
                g,
                arrivals.clone(),
                until,
                i as u64 * 7919 + 1,
            ))
        })
        .collect();
    let mut all = OpenStats::default();
    for t in tasks {
        let stats = t.await.expect("open-loop game");
        all.latencies.extend(stats.latencies);
        for (why, n) in stats.refusals {
            *all.refusals.entry(why).or_default() += n;
        }
        all.late += stats.late;
        all.dropped += stats.dropped;
    }
    ticker.await.expect("ticker");
    println!(
        "open loop at {rate:.0} moves/s: {} arrivals waited for a free game, {} dropped after the end, refused: {:?}",
        all.late, all.dropped, all.refusals
    );
    (all.latencies, all.refusals.values().sum())
}

/// Two players who queue on a ladder, play the match they are given, and queue again.
async fn ranked_pair(
    client: awc::Client,
    base: String,
    tag: String,
    i: usize,
    until: Instant,
) -> (Vec<f64>, usize) {
    let ladder: String = env("LOAD_LADDER", "ultimate-turn30".to_owned());
    let (t0, id0) = register(&client, &base, &format!("rk{tag}{i}a")).await;
    let (t1, id1) = register(&client, &base, &format!("rk{tag}{i}b")).await;
    let mut latencies = Vec::new();
    let mut matches = 0;
    let mut rng = i as u64 * 104_729 + 3;
    while Instant::now() < until {
        let mut tickets = Vec::new();
        for token in [&t0, &t1] {
            let (_, ticket): (u16, Value) = post(
                &client,
                &format!("{base}/api/v1/matchmaking/tickets"),
                Some(token),
                &json!({"ladder": ladder}),
            )
            .await;
            tickets.push(ticket["id"].as_str().unwrap_or_default().to_owned());
        }
        let mut match_id = None;
        while match_id.is_none() && Instant::now() < until {
            actix_rt::time::sleep(Duration::from_millis(200)).await;
            let (_, ticket): (u16, Value) = get(
                &client,
                &format!("{base}/api/v1/matchmaking/tickets/{}", tickets[0]),
                &t0,
            )
            .await;
            match_id = ticket["match_id"].as_str().map(str::to_owned);
        }
        let Some(match_id) = match_id else { break };
        play_out(
            &client,
            &base,
            [&t0, &t1],
            [&id0, &id1],
            &match_id,
            until,
            &mut rng,
            &mut latencies,
        )
        .await;
        matches += 1;
    }
    (latencies, matches)
}

/// Logs one player in over and over; returns the number of successful logins.
async fn login_loop(
    client: awc::Client,
    base: String,
    tag: String,
    i: usize,
    until: Instant,
) -> usize {
    let name = format!("lg{tag}{i}");
    register(&client, &base, &name).await;
    // A login is an Argon2id verify (tens of ms of CPU); players log in once
    // a session, not in a tight loop, so each client paces itself.
    let pause = Duration::from_millis(env("LOAD_LOGIN_PAUSE_MS", 500));
    let mut ok = 0;
    while Instant::now() < until {
        actix_rt::time::sleep(pause).await;
        let (status, _): (u16, Value) = post(
            &client,
            &format!("{base}/api/v1/auth/login"),
            None,
            &json!({"username": name, "password": "load test password"}),
        )
        .await;
        ok += usize::from(status == 200);
    }
    ok
}

/// Reads a match's event stream until the match is over or `until`, adding
/// the number of `state` events to `events`.
async fn watch(
    client: awc::Client,
    base: String,
    token: String,
    match_id: String,
    until: Instant,
    events: Arc<AtomicUsize>,
) {
    use futures_util::StreamExt as _;
    let Ok(mut res) = client
        .get(format!("{base}/api/v1/matches/{match_id}/events"))
        .bearer_auth(&token)
        .timeout(Duration::from_secs(3600))
        .send()
        .await
    else {
        return;
    };
    while let Ok(Some(Ok(chunk))) =
        actix_rt::time::timeout(until.saturating_duration_since(Instant::now()), res.next()).await
    {
        let seen = chunk.windows(12).filter(|w| w == b"event: state").count();
        events.fetch_add(seen, Ordering::Relaxed);
        if chunk.windows(20).any(|w| w == br#""status":"finished""#) {
            break;
        }
    }
}

/// Resident set size of `pid` in MiB (`VmRSS`), from /proc.
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// CPU seconds used by the processes named `comm` on this machine (or by
/// `pid` alone), children they reaped included, from /proc (USER_HZ = 100).
fn cpu_secs(comm: &str, pid: Option<u32>) -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    let mut ticks = 0u64;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(this) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid.is_some_and(|p| p != this) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{this}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid …": the name may hold spaces, so split at the last ')'.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        if pid.is_none() && head.split_once(" (").map(|(_, c)| c) != Some(comm) {
            continue;
        }
        // After the name: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
        let fields: Vec<&str> = rest.split_whitespace().collect();
        ticks += fields[11..15]
            .iter()
            .filter_map(|f| f.parse::<u64>().ok())
            .sum::<u64>();
    }
    ticks as f64 / 100.0
}

/// CPU seconds of the server (`LOAD_PID`), PostgreSQL, Redis and this client.
fn cpu_snapshot(pid: Option<u32>) -> [f64; 4] {
    [
        pid.map_or(0.0, |p| cpu_secs("", Some(p))),
        cpu_secs("postgres", None),
        cpu_secs("redis-server", None),
        cpu_secs("", Some(std::process::id())),
    ]
}

/// The floor (`LOAD_FLOOR=1`): `clients` closed loops of `GET /healthz`
/// until `until`; returns each answered request's latency (ms) and how many
/// failed.
async fn floor(
    client: &awc::Client,
    base: &str,
    clients: usize,
    until: Instant,
) -> (Vec<f64>, usize) {
    let url = format!("{base}/healthz");
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            actix_rt::spawn(async move {
                let (mut latencies, mut failed) = (Vec::new(), 0);
                while Instant::now() < until {
                    let sent = Instant::now();
                    let ok = match client.get(url.as_str()).send().await {
                        Ok(mut res) => res.status().is_success() && res.body().await.is_ok(),
                        Err(_) => false,
                    };
                    if ok {
                        latencies.push(sent.elapsed().as_secs_f64() * 1e3);
                    } else {
                        failed += 1;
                    }
                }
                (latencies, failed)
            })
        })
        .collect();
    let (mut all, mut failed) = (Vec::new(), 0);
    for t in tasks {
        let (l, f) = t.await.expect("floor task");
        all.extend(l);
        failed += f;
    }
    (all, failed)
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
        let pid: Option<u32> = std::env::var("LOAD_PID").ok().and_then(|v| v.parse().ok());
        if env("LOAD_FLOOR", 0u8) == 1 {
            assert!(
                env("LOAD_MIXED", 0u8) != 1 && env("LOAD_RATE", 0.0f64) <= 0.0,
                "LOAD_FLOOR sends no moves: not with LOAD_MIXED or LOAD_RATE"
            );
            eprintln!("floor: {games} clients asking GET /healthz for {secs} s against {base}");
            let cpu_before = cpu_snapshot(pid);
            let started = Instant::now();
            let (mut all, failed) = floor(&client, &base, games, started + Duration::from_secs(secs)).await;
            let elapsed = started.elapsed().as_secs_f64();
            let cpu_after = cpu_snapshot(pid);
            all.sort_by(f64::total_cmp);
            let per = |i: usize| (cpu_after[i] - cpu_before[i]) * 1e3 / all.len().max(1) as f64;
            println!(
                "floor CPU: server {:.3} ms/request, load client {:.3} ms/request",
                per(0),
                per(3)
            );
            println!(
                "floor: {} requests in {elapsed:.1} s = {:.0} requests/s; latency p50 {:.2} ms, p99 {:.2} ms; {failed} failed",
                all.len(),
                all.len() as f64 / elapsed,
                percentile(&all, 0.5),
                percentile(&all, 0.99)
            );
            return;
        }
        let tag = format!("{:x}", std::process::id() % 0xffff);
        let mut set = Vec::new();
        for i in 0..games {
            set.push(setup(&client, &base, &tag, i).await);
        }
        let mixed = env("LOAD_MIXED", 0u8) == 1;
        let rate = Some(env("LOAD_RATE", 0.0f64)).filter(|r| *r > 0.0);
        let mut staggered = Vec::new();
        if rate.is_some() {
            staggered = stagger(&client, &base, std::mem::take(&mut set)).await;
            eprintln!("open loop: the games spread over {STAGGER_PLIES} plies before the clock starts");
        }
        // Read before the clock starts, so no arrival waits for it.
        let histogram_before = server_moves_histogram(&client, &base).await;
        eprintln!("{games} games ready; playing for {secs} s against {base}");
        let until = Instant::now() + Duration::from_secs(secs);
        let started = Instant::now();
        assert!(!(mixed && rate.is_some()), "LOAD_RATE is for moves alone, not with LOAD_MIXED");
        let cpu_before = cpu_snapshot(pid);
        // One RSS reading a second, to show whether memory stays flat.
        let sampler = pid.map(|pid| {
            actix_rt::spawn(async move {
                let mut readings = vec![rss_mib(pid).unwrap_or(f64::NAN)];
                while Instant::now() < until {
                    actix_rt::time::sleep(Duration::from_secs(1)).await;
                    readings.push(rss_mib(pid).unwrap_or(f64::NAN));
                }
                readings
            })
        });
        let events = mixed.then(|| Arc::new(AtomicUsize::new(0)));
        let mut logins = Vec::new();
        let mut ranked = Vec::new();
        if mixed {
            for i in 0..env("LOAD_LOGINS", 2usize) {
                logins.push(actix_rt::spawn(login_loop(client.clone(), base.clone(), tag.clone(), i, until)));
            }
            for i in 0..env("LOAD_RANKED", 4usize) {
                ranked.push(actix_rt::spawn(ranked_pair(client.clone(), base.clone(), tag.clone(), i, until)));
            }
        }
        let mut all = Vec::new();
        let mut errors = 0;
        if let Some(rate) = rate {
            (all, errors) = open_loop(&client, &base, staggered, rate, until).await;
        } else {
            let tasks: Vec<_> = set
                .into_iter()
                .enumerate()
                .map(|(i, g)| actix_rt::spawn(play(client.clone(), base.clone(), g, until, i as u64 * 7919 + 1, events.clone())))
                .collect();
            for t in tasks {
                let (l, e) = t.await.expect("game task");
                all.extend(l);
                errors += e;
            }
        }
        let mut ranked_matches = 0;
        for t in ranked {
            let (l, m) = t.await.expect("ranked task");
            all.extend(l);
            ranked_matches += m;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let cpu_after = cpu_snapshot(pid);
        let histogram_after = server_moves_histogram(&client, &base).await;
        all.sort_by(f64::total_cmp);
        if let Some(events) = &events {
            let mut login_count = 0;
            for t in logins {
                login_count += t.await.expect("login task");
            }
            let events = events.load(Ordering::Relaxed);
            println!(
                "mixed: {login_count} logins ({:.1}/s), {ranked_matches} ranked matches started, {events} state events ({:.0}/s) on a stream per match",
                login_count as f64 / elapsed,
                events as f64 / elapsed
            );
        }
        if let Some(sampler) = sampler {
            let readings = sampler.await.expect("sampler");
            let peak = readings.iter().copied().fold(f64::NAN, f64::max);
            // Ten readings spread over the run: a rising line is a leak.
            let step = (readings.len() / 10).max(1);
            let series: Vec<String> = readings.iter().step_by(step).map(|r| format!("{r:.0}")).collect();
            println!(
                "server RSS (MiB): start {:.1}, peak {peak:.1}, end {:.1}; every {step} s: {}",
                readings[0],
                readings[readings.len() - 1],
                series.join(" ")
            );
        }
        // What each part spent, for the capacity model: CPU per accepted move.
        let spent: Vec<String> = ["server", "postgres", "redis", "load client"]
            .iter()
            .zip(cpu_before.iter().zip(&cpu_after))
            .filter(|(_, (b, a))| *a > *b)
            .map(|(name, (b, a))| {
                format!("{name} {:.1} s ({:.3} ms/move)", a - b, (a - b) * 1e3 / all.len().max(1) as f64)
            })
            .collect();
        println!("CPU in {elapsed:.1} s: {}", spent.join(", "));
        // Where the client's latency differs, the time went before the
        // server saw the request (the kernel, the client).
        println!(
            "server-side move latency (from /metrics, this run's moves): {}",
            histogram_between(&histogram_before, &histogram_after)
        );
        println!(
            "{} moves in {elapsed:.1} s = {:.0} moves/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {errors} refused",
            all.len(),
            all.len() as f64 / elapsed,
            percentile(&all, 0.5),
            percentile(&all, 0.99),
            percentile(&all, 1.0)
        );
    });
}
