//! `uttt bot`: the reference bot. It plays as a bot account through the
//! public HTTP API only — the same calls and streams any client has (API.md,
//! "Challenges and bots") — with the built-in CPU player choosing its moves:
//!
//! 1. renews its session with the refresh token it was given (`api`);
//! 2. listens on `/api/v1/me/events`; on `challenge` it accepts (with
//!    `--accept-challenges`) or declines; on `match_found` and
//!    `tournament_pairing` it plays the match;
//! 3. with `--ladder` it queues there whenever it is not playing, and again
//!    after each match;
//! 4. plays each match on its `/api/v1/matches/{id}/events` stream: on its
//!    turn it reads the moves, thinks within its clock and posts a move;
//! 5. reconnects lost streams and then re-reads its matches, challenges and
//!    ticket, so nothing said while it was away is missed.
//!
//! Over 400 lines: the event loop and the per-match player share the bot's
//! state (matches in play, ticket, session); the HTTP calls and the event
//! stream parser are already apart (`api`, `sse`).

mod api;
pub mod sse;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cpu::{self, Level};
use crate::rules::{Address, Depth, Position, Square};

pub use api::{Api, Credential, Fatal, renew_after};

/// Arguments of `uttt bot`.
#[derive(Debug, clap::Args)]
pub struct BotArgs {
    /// The server's base URL, e.g. `http://127.0.0.1:8080` (plain HTTP).
    #[arg(long, env = "UTTT_BOT_SERVER")]
    pub server: String,
    /// The bot account's refresh token (from `POST /api/v1/auth/login`),
    /// renewed as it goes; an access token works too, until it expires.
    #[arg(
        long,
        env = "UTTT_BOT_TOKEN",
        hide_env_values = true,
        required_unless_present = "token_file"
    )]
    pub token: Option<String>,
    /// A file holding the refresh token; the bot writes each renewed token
    /// back, so a restarted bot continues its session. With `--token` too,
    /// that token is used and then kept here.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// The CPU's strength, 1..=5.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub level: u8,
    /// Queue on this ladder (it must accept bots) whenever not playing.
    #[arg(long)]
    pub ladder: Option<String>,
    /// Accept the challenges made to the bot (otherwise they are declined).
    #[arg(long)]
    pub accept_challenges: bool,
    /// Turn the account into a bot first if it is not one: for good, the
    /// server never turns a bot back into a human.
    #[arg(long)]
    pub become_bot: bool,
    /// Stop after this many finished matches (0: run until stopped).
    #[arg(long, default_value_t = 0)]
    pub matches: u32,
}

/// Longest wait between two reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Runs the bot until it has played `--matches` matches, or for ever.
///
/// # Errors
/// Bad arguments, a session the server refuses, an account that is not a
/// bot (without `--become-bot`), or a ladder the bot may not queue on.
pub fn run(args: &BotArgs) -> anyhow::Result<()> {
    actix_web::rt::System::new().block_on(async {
        let bot = Bot::start(args).await?;
        bot.run().await
    })
}

/// The account, as `GET /me` answers.
#[derive(Debug, Clone, Deserialize)]
struct Me {
    id: String,
    username: String,
    #[serde(default)]
    bot: bool,
}

/// The part of a match state the bot reads (API.md, "Match state").
#[derive(Debug, Clone, Deserialize)]
struct MatchState {
    id: String,
    depth: u8,
    status: String,
    ply: u32,
    turn: Option<String>,
    players: Seats,
    clocks: Clocks,
    #[serde(default)]
    result: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
struct Seats {
    x: SeatState,
    o: SeatState,
}

#[derive(Debug, Clone, Deserialize)]
struct SeatState {
    id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Clocks {
    x_ms: Option<i64>,
    o_ms: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
struct MoveItem {
    ply: u32,
    address: Vec<u8>,
}

impl MatchState {
    /// The seat `player` holds, if any.
    fn seat_of(&self, player: &str) -> Option<&'static str> {
        if self.players.x.id.as_deref() == Some(player) {
            Some("x")
        } else if self.players.o.id.as_deref() == Some(player) {
            Some("o")
        } else {
            None
        }
    }

    /// Time left on `seat`'s clock when this state was sent.
    fn clock_ms(&self, seat: &str) -> Option<i64> {
        if seat == "x" {
            self.clocks.x_ms
        } else {
            self.clocks.o_ms
        }
    }
}

/// A challenge, as events and `GET /me/challenges` carry it.
#[derive(Debug, Clone, Deserialize)]
struct Challenge {
    id: String,
    challenger: ChallengePlayer,
    challenged: ChallengePlayer,
    #[serde(default)]
    status: String,
}

#[derive(Debug, Clone, Deserialize)]
struct ChallengePlayer {
    id: String,
    username: String,
}

struct Bot {
    api: Api,
    me: Me,
    level: Level,
    ladder: Option<String>,
    accept_challenges: bool,
    /// Matches a task is playing.
    playing: RefCell<HashSet<String>>,
    /// Matches played to the end.
    finished: RefCell<HashSet<String>>,
    /// The live ticket, once queued.
    ticket: RefCell<Option<String>>,
    /// Stop after this many finished matches (0: never).
    stop_after: u32,
    /// Set when the bot must stop: `Some(Ok)` when done, `Some(Err)` on a fatal error.
    outcome: RefCell<Option<anyhow::Result<()>>>,
    stop: tokio::sync::Notify,
    queued_at: Cell<Option<Instant>>,
}

impl Bot {
    async fn start(args: &BotArgs) -> anyhow::Result<Rc<Bot>> {
        let level = Level::new(args.level).context("--level must be 1..=5")?;
        let token = match (&args.token, &args.token_file) {
            (Some(token), _) => token.clone(),
            (None, Some(file)) => std::fs::read_to_string(file)
                .with_context(|| format!("reading the token from {}", file.display()))?,
            (None, None) => bail!("give --token or --token-file"),
        };
        let credential = Credential::from_token(&token, args.token_file.clone());
        let api = Api::connect(&args.server, credential).await?;
        let mut me: Me = api.get("/me").await?.into_json("reading the account")?;
        if !me.bot {
            if !args.become_bot {
                bail!(
                    "{} is not a bot account: pass --become-bot to turn it into one (for good), or use a bot account",
                    me.username
                );
            }
            me = api
                .post("/me/bot", &json!({}))
                .await?
                .into_json("turning the account into a bot")?;
            tracing::info!(username = %me.username, "the account is a bot now");
        }
        tracing::info!(username = %me.username, level = level.get(), ladder = ?args.ladder, accept_challenges = args.accept_challenges, "bot started");
        Ok(Rc::new(Bot {
            api,
            me,
            level,
            ladder: args.ladder.clone(),
            accept_challenges: args.accept_challenges,
            playing: RefCell::default(),
            finished: RefCell::default(),
            ticket: RefCell::default(),
            stop_after: args.matches,
            outcome: RefCell::default(),
            stop: tokio::sync::Notify::new(),
            queued_at: Cell::new(None),
        }))
    }

    /// Ends the run with `outcome` (the first one set wins).
    fn finish(&self, outcome: anyhow::Result<()>) {
        let mut slot = self.outcome.borrow_mut();
        if slot.is_none() {
            *slot = Some(outcome);
        }
        self.stop.notify_one();
    }

    async fn run(self: Rc<Bot>) -> anyhow::Result<()> {
        let events = actix_web::rt::spawn(self.clone().listen());
        tokio::select! {
            () = self.stop.notified() => {}
            () = interrupted() => tracing::info!("interrupted; stopping"),
        }
        events.abort();
        // A ticket left behind would pair the bot with nobody to play.
        let ticket = self.ticket.borrow_mut().take();
        if let Some(id) = ticket {
            let _ = self
                .api
                .call(
                    awc::http::Method::DELETE,
                    &format!("/matchmaking/tickets/{id}"),
                    None,
                )
                .await;
        }
        self.outcome.borrow_mut().take().unwrap_or(Ok(()))
    }

    /// Listens on `/me/events` for ever, reconnecting when the stream ends.
    async fn listen(self: Rc<Bot>) {
        let mut backoff = Duration::from_millis(500);
        loop {
            match self.api.stream("/me/events", None).await {
                Ok(mut stream) => {
                    tracing::info!("listening on /me/events");
                    backoff = Duration::from_millis(500);
                    // Subscribed first, then caught up: nothing falls in between.
                    if let Err(err) = self.catch_up().await {
                        self.fatal_or_log(err);
                    }
                    while let Some(event) = stream.next().await {
                        if let Err(err) = self.on_event(&event).await {
                            self.fatal_or_log(err);
                        }
                    }
                    tracing::info!("the event stream ended; reconnecting");
                }
                Err(err) => {
                    let refused = err
                        .downcast_ref::<api::StreamRefused>()
                        .is_some_and(|r| r.status == 401);
                    if refused || err.is::<Fatal>() {
                        self.finish(Err(err));
                        return;
                    }
                    tracing::warn!(error = %err, "cannot open /me/events; retrying in {backoff:?}");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Fatal errors stop the bot; others are logged and the bot carries on.
    fn fatal_or_log(&self, err: anyhow::Error) {
        if err.is::<Fatal>() {
            self.finish(Err(err));
        } else {
            tracing::warn!(error = %format!("{err:#}"), "carrying on after an error");
        }
    }

    async fn on_event(self: &Rc<Bot>, event: &sse::Event) -> anyhow::Result<()> {
        let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
        match event.event.as_str() {
            "challenge" => {
                let challenge: Challenge =
                    serde_json::from_value(data).context("a challenge event")?;
                self.answer(&challenge).await
            }
            "match_found" | "tournament_pairing" => {
                if let Some(id) = data["match_id"].as_str() {
                    if data["ticket_id"].as_str().is_some()
                        && data["ticket_id"].as_str() == self.ticket.borrow().as_deref()
                    {
                        self.ticket.replace(None);
                    }
                    self.play(id);
                }
                Ok(())
            }
            "resync" => self.catch_up().await,
            "session_revoked" => Err(Fatal("the session was logged out or revoked".into()).into()),
            _ => Ok(()),
        }
    }

    /// Re-reads what events may have said while the stream was away: active
    /// matches, pending challenges, the ticket.
    async fn catch_up(self: &Rc<Bot>) -> anyhow::Result<()> {
        let page: Value = self
            .api
            .get("/me/matches?status=active&limit=100")
            .await?
            .into_json("listing active matches")?;
        for item in page["items"].as_array().into_iter().flatten() {
            if let Some(id) = item["id"].as_str() {
                self.play(id);
            }
        }
        let pending: Value = self
            .api
            .get("/me/challenges")
            .await?
            .into_json("listing challenges")?;
        for item in pending["incoming"].as_array().into_iter().flatten() {
            if let Ok(challenge) = serde_json::from_value::<Challenge>(item.clone()) {
                self.answer(&challenge).await?;
            }
        }
        self.queue().await
    }

    /// Accepts or declines a challenge made to the bot.
    async fn answer(self: &Rc<Bot>, challenge: &Challenge) -> anyhow::Result<()> {
        if challenge.challenged.id != self.me.id
            || !(challenge.status.is_empty() || challenge.status == "pending")
        {
            return Ok(());
        }
        let path = format!("/challenges/{}", challenge.id);
        if !self.accept_challenges {
            let reply = self
                .api
                .post(
                    &format!("{path}/decline"),
                    &json!({"reason": "this bot does not take challenges"}),
                )
                .await?;
            tracing::info!(challenge = %challenge.id, from = %challenge.challenger.username, status = reply.status, "challenge declined");
            return Ok(());
        }
        let reply = self.api.post(&format!("{path}/accept"), &json!({})).await?;
        match (reply.status, reply.code()) {
            (200, _) => {
                tracing::info!(challenge = %challenge.id, from = %challenge.challenger.username, "challenge accepted");
                if let Some(id) = reply.body["match_id"].as_str() {
                    self.play(id);
                }
            }
            (409, "in_active_match") => {
                let _ = self
                    .api
                    .post(
                        &format!("{path}/decline"),
                        &json!({"reason": "busy with a rated match; try again later"}),
                    )
                    .await?;
                tracing::info!(challenge = %challenge.id, "challenge declined: in a rated match");
            }
            // Cancelled, expired or answered meanwhile.
            (status, code) => {
                tracing::info!(challenge = %challenge.id, status, code, "challenge not accepted");
            }
        }
        Ok(())
    }

    /// With `--ladder`: holds a ticket there while not playing.
    async fn queue(self: &Rc<Bot>) -> anyhow::Result<()> {
        let Some(ladder) = &self.ladder else {
            return Ok(());
        };
        if !self.playing.borrow().is_empty() || self.stopping() {
            return Ok(());
        }
        let ticket = self.ticket.borrow().clone();
        if let Some(id) = ticket {
            let reply = self.api.get(&format!("/matchmaking/tickets/{id}")).await?;
            match reply.body["status"].as_str() {
                Some("queued") => return Ok(()),
                Some("matched") => {
                    self.ticket.replace(None);
                    if let Some(match_id) = reply.body["match_id"].as_str() {
                        self.play(match_id);
                        return Ok(());
                    }
                }
                _ => {
                    self.ticket.replace(None);
                }
            }
        }
        let reply = self
            .api
            .post("/matchmaking/tickets", &json!({ "ladder": ladder }))
            .await?;
        match (reply.status, reply.code()) {
            (201, _) => {
                let id = reply.body["id"].as_str().unwrap_or_default().to_owned();
                tracing::info!(ticket = %id, ladder = %ladder, "queued");
                self.ticket.replace(Some(id));
                self.queued_at.set(Some(Instant::now()));
            }
            (409, "already_queued") => {
                let id = reply.body["ticket_id"].as_str().map(str::to_owned);
                self.ticket.replace(id);
            }
            // The ranked match it is in shows in the active list.
            (409, "in_active_match") => {
                if let Some(id) = reply.body["match_id"].as_str() {
                    self.play(id);
                }
            }
            (403 | 404 | 422, _) => {
                return Err(Fatal(format!(
                    "cannot queue on ladder {ladder}: HTTP {} {}",
                    reply.status, reply.body
                ))
                .into());
            }
            (status, _) => bail!("queueing on {ladder}: HTTP {status} {}", reply.body),
        }
        Ok(())
    }

    fn stopping(&self) -> bool {
        self.stop_after > 0
            && self.finished.borrow().len()
                >= usize::try_from(self.stop_after).unwrap_or(usize::MAX)
    }

    /// Plays match `id` in a task of its own, unless one already does.
    fn play(self: &Rc<Bot>, id: &str) {
        if self.finished.borrow().contains(id) || !self.playing.borrow_mut().insert(id.to_owned()) {
            return;
        }
        let bot = self.clone();
        let id = id.to_owned();
        actix_web::rt::spawn(async move {
            if let Some(queued) = bot.queued_at.take() {
                tracing::debug!(waited_ms = queued.elapsed().as_millis(), "paired");
            }
            let result = bot.play_match(&id).await;
            bot.playing.borrow_mut().remove(&id);
            match result {
                Ok(state) => {
                    bot.finished.borrow_mut().insert(id.clone());
                    let winner = state.result.as_ref().and_then(|r| r["winner"].as_str());
                    let seat = state.seat_of(&bot.me.id);
                    let outcome = match (winner, seat) {
                        (None, _) => "draw",
                        (Some(w), Some(s)) if w == s => "won",
                        _ => "lost",
                    };
                    let reason = state
                        .result
                        .as_ref()
                        .and_then(|r| r["reason"].as_str())
                        .unwrap_or("");
                    tracing::info!(match_id = %id, outcome, reason, plies = state.ply, "match finished");
                    if bot.stopping() {
                        bot.finish(Ok(()));
                        return;
                    }
                }
                Err(err) => {
                    tracing::warn!(match_id = %id, error = %format!("{err:#}"), "stopped playing a match");
                }
            }
            if let Err(err) = bot.queue().await {
                bot.fatal_or_log(err);
            }
        });
    }

    /// Plays match `id` to its end; answers the final state.
    async fn play_match(&self, id: &str) -> anyhow::Result<MatchState> {
        let mut last_event_id: Option<String> = None;
        let mut tried_ply: Option<u32> = None;
        let mut backoff = Duration::from_millis(200);
        loop {
            let mut stream = match self
                .api
                .stream(&format!("/matches/{id}/events"), last_event_id.as_deref())
                .await
            {
                Ok(stream) => stream,
                Err(err) => {
                    if let Some(refused) = err.downcast_ref::<api::StreamRefused>()
                        && matches!(refused.status, 401 | 403 | 404)
                    {
                        return Err(err);
                    }
                    tracing::warn!(match_id = %id, error = %err, "cannot open the match stream; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            backoff = Duration::from_millis(200);
            while let Some(event) = stream.next().await {
                if event.event != "state" {
                    continue;
                }
                let state: MatchState =
                    serde_json::from_str(&event.data).context("a match state")?;
                let received = Instant::now();
                last_event_id = event.id.clone();
                if state.status == "finished" {
                    return Ok(state);
                }
                let Some(seat) = state.seat_of(&self.me.id) else {
                    bail!("the bot holds no seat in match {}", state.id);
                };
                if state.turn.as_deref() != Some(seat) || tried_ply == Some(state.ply) {
                    continue;
                }
                tried_ply = Some(state.ply);
                if let Err(err) = self.move_in(&state, seat, received).await {
                    if err.is::<Fatal>() {
                        return Err(err);
                    }
                    tracing::warn!(match_id = %id, ply = state.ply, error = %format!("{err:#}"), "move failed; reloading");
                    // Read the whole state again when the stream reconnects.
                    tried_ply = None;
                    last_event_id = None;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    break;
                }
            }
        }
    }

    /// Thinks and posts a move in `state`, where `seat` is to move.
    async fn move_in(
        &self,
        state: &MatchState,
        seat: &str,
        received: Instant,
    ) -> anyhow::Result<()> {
        let depth =
            Depth::new(state.depth).map_err(|e| anyhow::anyhow!("depth {}: {e:?}", state.depth))?;
        let moves: Vec<MoveItem> = self
            .api
            .get(&format!("/matches/{}/moves", state.id))
            .await?
            .into_json("reading the moves")?;
        let position = replay(depth, &moves)?;
        if position.ply() != state.ply {
            // A move landed between the state and the list: the next state says so.
            return Ok(());
        }
        let clock_left = state.clock_ms(seat).map(|ms| {
            Duration::from_millis(u64::try_from(ms).unwrap_or(0)).saturating_sub(received.elapsed())
        });
        let level = self.level;
        let seed = rand::random::<u64>();
        let square = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            cpu::choose_move(&position, level, clock_left, seed, &started)
        })
        .await
        .context("the CPU search")?
        .context("no legal move in an active match")?;
        let address: Vec<u8> = square.to_address(depth).coords().to_vec();
        let reply = self
            .api
            .post(
                &format!("/matches/{}/moves", state.id),
                &json!({"ply": state.ply, "address": address}),
            )
            .await?;
        match (reply.status, reply.code()) {
            (200, _) => Ok(()),
            // The match moved on (a time forfeit, a resignation): the stream tells.
            (409, "stale_ply" | "not_your_turn" | "match_over") => Ok(()),
            (status, _) => bail!("move refused: HTTP {status} {}", reply.body),
        }
    }
}

/// Waits for Ctrl-C or SIGTERM.
async fn interrupted() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// The position after `moves`.
fn replay(depth: Depth, moves: &[MoveItem]) -> anyhow::Result<Position> {
    let mut squares = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        anyhow::ensure!(
            usize::try_from(m.ply).ok() == Some(i),
            "the move list skips ply {i}"
        );
        let address =
            Address::new(&m.address).map_err(|e| anyhow::anyhow!("move {}: {e}", m.ply))?;
        let square = Square::from_address(depth, &address)
            .with_context(|| format!("move {} is not a square at depth {depth:?}", m.ply))?;
        squares.push(square);
    }
    Position::replay(depth, &squares).map_err(|e| anyhow::anyhow!("replaying the moves: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_moves_replay_into_the_position_the_cpu_thinks_about() {
        let depth = Depth::new(2).unwrap();
        let moves = vec![
            MoveItem {
                ply: 0,
                address: vec![4, 0],
            },
            MoveItem {
                ply: 1,
                address: vec![0, 4],
            },
        ];
        let position = replay(depth, &moves).unwrap();
        assert_eq!(position.ply(), 2);
        let square = cpu::choose_move(&position, Level::MIN, None, 1, &Instant::now()).unwrap();
        // The send rule: O played square 4 of board 0, so X plays in board 4.
        assert_eq!(square.to_address(depth).coords()[0], 4);
    }

    #[test]
    fn a_gap_in_the_move_list_is_an_error() {
        let depth = Depth::new(1).unwrap();
        let moves = vec![MoveItem {
            ply: 1,
            address: vec![4],
        }];
        assert!(replay(depth, &moves).is_err());
    }

    #[test]
    fn a_seat_is_found_by_player_id() {
        let state: MatchState = serde_json::from_value(json!({
            "id": "m", "depth": 1, "status": "active", "ply": 0, "turn": "x",
            "players": {"x": {"id": "a"}, "o": {"id": null}},
            "clocks": {"x_ms": 1000, "o_ms": null},
        }))
        .unwrap();
        assert_eq!(state.seat_of("a"), Some("x"));
        assert_eq!(state.seat_of("b"), None);
        assert_eq!(state.clock_ms("x"), Some(1000));
    }
}
