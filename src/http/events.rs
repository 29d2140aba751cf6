//! Server-sent event streams: a match's states, and a player's own events.
//!
//! A match stream sends `state` (the full match state, `id` = its version) on
//! connect — unless `Last-Event-ID` already is the current version — and after
//! every change, whichever instance made it. Comments keep proxies from
//! closing an idle stream. An open stream of a seated player holds a lease on
//! their seat for as long as it is open (`service::matches::presence`).
//!
//! Every stream also ends when the access token that opened it expires (with
//! `retry`, so the client reconnects with a fresh token) or its session is
//! revoked (event `session_revoked`), and holds one of the player's stream
//! slots while open (see [`StreamGuard`]).

use std::convert::Infallible;
use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, get, web};
use futures_util::stream;

use super::auth::AuthenticatedSession;
use super::problem::{Problem, ProblemBody};
use super::stream_guard::StreamGuard;
use super::versioned_stream::{self, Source};
use crate::broker::{Notice, Subscription};
use crate::service::FieldError;
use crate::service::accounts::Player;
use crate::service::matches;
use crate::service::matches::presence::Lease;
use crate::service::matches::state::MatchState;
use crate::service::{Context, events, matchmaking};

/// Longest gap between two writes on a stream.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// What clients wait before reconnecting.
pub(super) const RETRY_MS: u32 = 3000;

pub(super) fn sse_response(
    body: impl futures_util::Stream<Item = Result<Bytes, Infallible>> + 'static,
) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body)
}

/// One event of a `text/event-stream` response, as a client's EventSource
/// parses it (keep-alive comments are not events). Documents the frames only.
#[derive(Debug, utoipa::ToSchema)]
pub struct ServerSentEvent {
    /// The event's name: `state` on a match stream; on `/me/events` what happened (`match_found`, …).
    pub event: Option<String>,
    /// On a match stream, the version of the state (sent back as `Last-Event-ID` to resume).
    pub id: Option<String>,
    /// JSON text: the match state for `state`, the event's payload otherwise.
    pub data: String,
    /// How many milliseconds a client waits before it reconnects.
    pub retry: Option<u64>,
}

/// The version a resuming client last received; 0 without the header.
///
/// # Errors
/// 422 `validation_failed` when the header is not a version (a non-negative
/// integer): the client would otherwise silently get the whole history again.
pub(super) fn last_event_id(req: &HttpRequest) -> Result<i32, Problem> {
    let Some(value) = req.headers().get("Last-Event-ID") else {
        return Ok(0);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .filter(|v| *v >= 0)
        .ok_or_else(|| {
            Problem::validation(&[FieldError::new(
                "Last-Event-ID",
                "must be a version this stream sent (a non-negative integer)",
            )])
        })
}

/// Sent before a stream closes for a shutdown: reconnect in a second.
pub(super) const SHUTDOWN_FRAME: &[u8] = b"retry: 1000\n: server shutting down\n\n";

/// A match's states, as a seated viewer or a spectator sees them.
struct MatchSource {
    viewer: Player,
    id: String,
    /// Keeps a seated viewer present until the stream closes (dropped with it).
    _lease: Option<Lease>,
}

impl Source for MatchSource {
    const EVENT: &'static str = "state";

    async fn current(&self, ctx: &Context) -> Option<(i32, String)> {
        match matches::reload(ctx, &self.viewer, self.id.clone()).await {
            Ok(state) => versioned(&state),
            Err(err) => {
                tracing::warn!(match.id = %self.id, error = %err, "stream resync failed");
                None
            }
        }
    }
}

fn versioned(state: &MatchState) -> Option<(i32, String)> {
    serde_json::to_string(state)
        .ok()
        .map(|json| (state.version, json))
}

/// The live states of a match (`text/event-stream`). Browsers may pass the
/// token as `?access_token=`. Send `Last-Event-ID` to resume.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "Match id"),
        ("access_token" = Option<String>, Query, description = "The access token, for clients that cannot set headers"),
        ("Last-Event-ID" = Option<i32>, Header, minimum = 0, description = "The last version received"),
    ),
    responses(
        (status = 200, description = "Events `state` (data: the match state; id: its version), and keep-alive comments", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 401, description = "`unauthorized` (also when the token's session was ended)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: `Last-Event-ID` is not a version", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: the player already has the most open event streams allowed (`UTTT_STREAMS_PER_PLAYER`, default 10)", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[get("/{id}/events")]
pub async fn match_events(
    ctx: web::Data<Context>,
    AuthenticatedSession(viewer, claims): AuthenticatedSession,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, Problem> {
    let id = id.into_inner();
    let sent = last_event_id(&req)?;
    let guard = StreamGuard::open(&ctx, &viewer.id, &claims).await?;
    let feed = matches::open_feed(&ctx, &viewer, id.clone()).await?;
    let initial = versioned(&feed.initial);
    let source = MatchSource {
        viewer,
        id,
        _lease: feed.lease,
    };
    Ok(versioned_stream::respond(
        ctx,
        source,
        feed.subscription,
        guard,
        sent,
        initial,
    ))
}

/// The logged-in player's own events: `match_found` (data: `{match_id, seat, …}`)
/// when matchmaking pairs them (with `ladder` and `ticket_id`) or a room's game
/// starts (with `room_code`); `tournament_pairing` (data: `{tournament_id,
/// round, match_id, seat}`) when a tournament round pairs them; `resync` when events may have been lost (re-read
/// tickets and matches); `session_revoked` just before the stream ends
/// because the session was logged out or revoked. An open stream also keeps
/// a queued ticket alive.
#[utoipa::path(
    tag = "matchmaking",
    security(("bearer" = [])),
    params(("access_token" = Option<String>, Query, description = "The access token, for clients that cannot set headers")),
    responses(
        (status = 200, description = "Events named after what happened, JSON data", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 401, description = "`unauthorized` (also when the token's session was ended)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: the player already has the most open event streams allowed (`UTTT_STREAMS_PER_PLAYER`, default 10)", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[get("/me/events")]
pub async fn my_events(
    ctx: web::Data<Context>,
    AuthenticatedSession(player, claims): AuthenticatedSession,
) -> Result<HttpResponse, Problem> {
    let guard = StreamGuard::open(&ctx, &player.id, &claims).await?;
    let subscription = events::subscribe(&ctx, &player.id).await?;
    // Waiting from this moment on, not from the first keep-alive.
    keep_waiting(&ctx, &player.id).await;
    let mut keep_alive =
        tokio::time::interval(KEEP_ALIVE.min(ctx.config.matchmaking.abandon_after / 3));
    keep_alive.reset();
    let state = PlayerStream {
        ctx,
        player_id: player.id,
        subscription,
        first: Some(Bytes::from(format!("retry: {RETRY_MS}\n\n"))),
        keep_alive,
        closing: false,
        guard,
    };
    let body = stream::unfold(state, |mut s| async move {
        let bytes = s.next().await?;
        Some((Ok::<_, Infallible>(bytes), s))
    });
    Ok(sse_response(body))
}

/// An open stream shows the player is still waiting for a pairing: their
/// queued ticket is touched (a failure only logged; the next touch may do).
async fn keep_waiting(ctx: &Context, player_id: &str) {
    if let Err(err) = matchmaking::keep_waiting(ctx, player_id).await {
        tracing::debug!(error = %err, "ticket keep-alive failed");
    }
}

struct PlayerStream {
    ctx: web::Data<Context>,
    player_id: String,
    subscription: Subscription,
    first: Option<Bytes>,
    keep_alive: tokio::time::Interval,
    closing: bool,
    guard: StreamGuard,
}

impl PlayerStream {
    async fn next(&mut self) -> Option<Bytes> {
        if let Some(bytes) = self.first.take() {
            return Some(bytes);
        }
        loop {
            if self.closing {
                return None;
            }
            tokio::select! {
                () = self.ctx.shutdown.wait() => {
                    self.closing = true;
                    return Some(Bytes::from_static(SHUTDOWN_FRAME));
                }
                // The token expired or the session was revoked.
                frame = self.guard.ended() => {
                    self.closing = true;
                    return Some(frame);
                }
                notice = matches::next_notice(&mut self.subscription) => match notice? {
                    Notice::Message(payload) => {
                        if let Some((event, json)) = events::parse_payload(&payload) {
                            return Some(Bytes::from(format!("event: {event}\ndata: {json}\n\n")));
                        }
                    }
                    // Events may have been lost: clients re-read their tickets and matches.
                    Notice::Resync => return Some(Bytes::from_static(b"event: resync\ndata: {}\n\n")),
                },
                _ = self.keep_alive.tick() => {
                    keep_waiting(&self.ctx, &self.player_id).await;
                    return Some(Bytes::from_static(b": keep-alive\n\n"));
                }
            }
        }
    }
}
