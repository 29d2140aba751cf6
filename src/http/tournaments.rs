//! `/api/v1/tournaments/*`: create, list and read tournaments, join and
//! withdraw, the director's controls, standings, rounds, games, berserk,
//! export and the tournament's event stream.
//!
//! Over 400 lines: one thin handler per endpoint of API.md's "Tournaments",
//! most of it their OpenAPI annotations.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::{Authenticated, AuthenticatedSession};
use super::events::{ServerSentEvent, last_event_id};
use super::json::{JsonBody, OptionalJsonBody};
use super::matches::parse_time_control;
use super::problem::{Problem, ProblemBody};
use super::query::QueryParams;
use super::stream_guard::StreamGuard;
use super::versioned_stream::{self, Source};
use crate::clock::TimeControl;
use crate::rules::Depth;
use crate::service::matches::state::{MatchState, TimeControlBody};
use crate::service::tournaments::arena::{self, GameView};
use crate::service::tournaments::create::NewTournament;
use crate::service::tournaments::export::Format;
use crate::service::tournaments::read::{Page, RoundView, StandingView};
use crate::service::tournaments::{
    self, Kind, Status, TournamentView, director, export, feed, read, registration,
};
use crate::service::{Context, Error, FieldError, cursor};
use crate::time::parse_rfc3339;

/// A new tournament.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateTournamentBody {
    /// Display name, 1..=80 characters.
    pub name: String,
    /// `swiss` (a fixed number of rounds) or `arena` (a fixed duration).
    #[schema(example = "swiss")]
    pub kind: String,
    /// Board depth 1..=4 (default 2, or the ladder's).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 4, example = 2)]
    pub depth: Option<i64>,
    /// Time control of the games (default the 10-minute clock, or the
    /// ladder's); a clock or a turn limit, so a no-show loses on time.
    #[serde(default)]
    pub time_control: Option<TimeControlBody>,
    /// A rated ladder: the games are rated there and use its depth and time control.
    #[serde(default)]
    pub ladder: Option<String>,
    /// Swiss: the number of rounds, 1..=30.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 30, example = 5)]
    pub rounds: Option<i64>,
    /// Arena (required there, refused for a Swiss): how long it runs, 600000..=86400000 ms
    /// (an operator may lower the shortest with `UTTT_ARENA_MIN_DURATION_MS`).
    #[serde(default)]
    #[schema(minimum = 600000, maximum = 86400000, example = 3600000)]
    pub duration_ms: Option<i64>,
    /// Swiss: the pause between a round's last result and the next pairing, 0..=3600000 ms (default 10000).
    #[serde(default)]
    #[schema(example = 10000)]
    pub round_pause_ms: Option<i64>,
    /// When it starts (RFC 3339); absent: the director starts it.
    #[serde(default)]
    pub starts_at: Option<String>,
    /// Most entrants, 2..=10000.
    #[serde(default)]
    pub max_players: Option<i64>,
    /// The code joining needs (1..=32 characters); makes the tournament private.
    #[serde(default)]
    pub entry_code: Option<String>,
    /// The lowest rating that may join (on the tournament's ladder, or the
    /// configured ladder of the same depth and time control).
    #[serde(default)]
    pub min_rating: Option<f64>,
}

/// Joining a tournament.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct JoinBody {
    /// The entry code of a private tournament.
    #[serde(default)]
    pub entry_code: Option<String>,
}

fn whole(value: Option<i64>, field: &str, errors: &mut Vec<FieldError>) -> Option<u32> {
    let v = value?;
    u32::try_from(v).ok().or_else(|| {
        errors.push(FieldError::new(field, "must be a positive whole number"));
        None
    })
}

fn parse(body: CreateTournamentBody) -> Result<NewTournament, Error> {
    let mut errors = Vec::new();
    let kind = Kind::parse(&body.kind);
    if kind.is_none() {
        errors.push(FieldError::new("kind", "must be swiss or arena"));
    }
    let depth = match body.depth {
        None => None,
        Some(d) => match u8::try_from(d).ok().and_then(|d| Depth::new(d).ok()) {
            Some(d) => Some(d),
            None => {
                errors.push(FieldError::new("depth", "must be 1, 2, 3 or 4"));
                None
            }
        },
    };
    let time_control = match body.time_control {
        None => None,
        Some(tc) => parse_time_control(
            Some(tc),
            TimeControl::TOURNAMENT,
            "time_control",
            &mut errors,
        ),
    };
    let starts_at = match body.starts_at.as_deref() {
        None => None,
        Some(text) => parse_rfc3339(text).or_else(|| {
            errors.push(FieldError::new("starts_at", "must be an RFC 3339 time"));
            None
        }),
    };
    let rounds = whole(body.rounds, "rounds", &mut errors);
    let max_players = whole(body.max_players, "max_players", &mut errors);
    match kind {
        Some(kind) if errors.is_empty() => Ok(NewTournament {
            name: body.name,
            kind,
            depth,
            time_control,
            ladder: body.ladder,
            rounds,
            duration_ms: body.duration_ms,
            round_pause_ms: body.round_pause_ms,
            starts_at,
            max_players,
            entry_code: body.entry_code,
            min_rating: body.min_rating,
        }),
        _ => Err(Error::Validation(errors)),
    }
}

/// Create a tournament; you direct it.
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    request_body = CreateTournamentBody,
    responses(
        (status = 201, description = "The tournament, registering", body = TournamentView),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: bad settings, an unknown or unrated ladder, settings other than the ladder's, no time limit, a start in the past, a Swiss without `rounds` or with `duration_ms`, an arena without `duration_ms` (600000..=86400000) or with `rounds` or `round_pause_ms`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("")]
pub async fn create(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<CreateTournamentBody>,
) -> Result<HttpResponse, Problem> {
    let spec = parse(body.0)?;
    let view = tournaments::create::create(&ctx, &player, spec).await?;
    Ok(HttpResponse::Created().json(view))
}

/// Tournaments, soonest first (by start time, or creation time while the director has not started one).
#[utoipa::path(
    tag = "tournaments",
    params(
        ("status" = Option<String>, Query, description = "`registering`, `running`, `finished` or `cancelled`"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Page size (default 20)"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of tournaments", body = Page<TournamentView>),
        (status = 422, description = "`validation_failed`: a bad status, limit or cursor", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("")]
pub async fn list(ctx: web::Data<Context>, query: QueryParams) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let status = query.get("status").and_then(|s| {
        Status::parse(s).or_else(|| {
            errors.push(FieldError::new(
                "status",
                "must be registering, running, finished or cancelled",
            ));
            None
        })
    });
    let page = query.pagination(&mut errors);
    let after = page.cursor(cursor::decode_keyset, &mut errors);
    if !errors.is_empty() {
        return Err(Problem::validation(&errors));
    }
    let list = read::list(&ctx, status, after, page.limit).await?;
    Ok(HttpResponse::Ok().json(list))
}

/// A tournament.
#[utoipa::path(
    tag = "tournaments",
    params(("id" = String, Path, description = "Tournament id")),
    responses(
        (status = 200, description = "The tournament", body = TournamentView),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn show(
    ctx: web::Data<Context>,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(tournaments::get(&ctx, &path).await?))
}

/// Join a tournament (a Swiss until its round 1 is paired, an arena until
/// it ends). In a running arena, a player who withdrew comes back into the
/// pool by joining again (unless the director removed them).
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Tournament id")),
    request_body(content = Option<JoinBody>, description = "The entry code of a private tournament"),
    responses(
        (status = 200, description = "The tournament", body = TournamentView),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: a missing or wrong entry code, a rating below `min_rating`, or a bot on a ladder closed to bots", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`already_joined` (also a withdrawn player outside a running arena, or one the director removed); `tournament_full`; `tournament_closed` (with `tournament_status`: a Swiss whose round 1 started, or one finished or cancelled)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/join")]
pub async fn join(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    body: OptionalJsonBody<JoinBody>,
) -> Result<HttpResponse, Problem> {
    let code = body.0.and_then(|b| b.entry_code);
    let view = registration::join(&ctx, &player, &path, code).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Withdraw: before the start your entry is removed; after it you are not
/// paired again (games played count; a game in progress is played out). In
/// an arena this pauses you: join again to come back while it runs.
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Tournament id")),
    responses(
        (status = 200, description = "The tournament", body = TournamentView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` (also when you did not enter)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`tournament_closed`: it is finished or cancelled", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/withdraw")]
pub async fn withdraw(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(registration::withdraw(&ctx, &player, &path).await?))
}

/// Director: start now (round 1 is paired at once).
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Tournament id")),
    responses(
        (status = 200, description = "The running tournament", body = TournamentView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not the director", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`not_enough_players` (fewer than 2), or `tournament_closed` (already started, finished or cancelled)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/start")]
pub async fn start_tournament(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(director::start(&ctx, &player, &path).await?))
}

/// Director: call the tournament off (games in progress are played out).
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Tournament id")),
    responses(
        (status = 200, description = "The cancelled tournament", body = TournamentView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not the director", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`tournament_closed`: already finished or cancelled", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/cancel")]
pub async fn cancel_tournament(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(director::cancel(&ctx, &player, &path).await?))
}

/// Director: remove a player (as a withdrawal).
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("player_id" = String, Path, description = "The entrant's player id"),
    ),
    responses(
        (status = 200, description = "The tournament", body = TournamentView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not the director", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such tournament or entrant", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`tournament_closed`: finished or cancelled", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/players/{player_id}/remove")]
pub async fn remove(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, Problem> {
    let (id, target) = path.into_inner();
    Ok(HttpResponse::Ok().json(registration::remove(&ctx, &player, &id, &target).await?))
}

/// The standings: Swiss by score, Buchholz, Sonneborn-Berger, rating; arena
/// by points, performance, rating (games being played do not count yet, and
/// arena games that end after its end time never do).
#[utoipa::path(
    tag = "tournaments",
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Page size (default 20)"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of the standings, leader first", body = Page<StandingView>),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: a bad limit or cursor", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/standings")]
pub async fn standings(
    ctx: web::Data<Context>,
    path: web::Path<String>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let from = page.cursor(read::decode_standings_cursor, &mut errors);
    if !errors.is_empty() {
        return Err(Problem::validation(&errors));
    }
    Ok(HttpResponse::Ok().json(read::standings(&ctx, &path, from, page.limit).await?))
}

/// A Swiss round's pairings and bye.
#[utoipa::path(
    tag = "tournaments",
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("n" = u32, Path, minimum = 1, description = "The round"),
    ),
    responses(
        (status = 200, description = "The round", body = RoundView),
        (status = 404, description = "`not_found`: no such tournament, or the round is not paired yet", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: `n` is not a round number", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/rounds/{n}")]
pub async fn round(
    ctx: web::Data<Context>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, Problem> {
    let (id, n) = path.into_inner();
    let n = n.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
        Problem::validation(&[FieldError::new("n", "must be a round number from 1")])
    })?;
    Ok(HttpResponse::Ok().json(read::round(&ctx, &id, n).await?))
}

/// Going berserk in an arena game.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BerserkBody {
    /// Your game in this arena.
    pub match_id: String,
}

/// Arena: go berserk in your game before your first move (clock time
/// controls only): your own clock is halved, and a win scores a point more.
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Tournament id")),
    request_body = BerserkBody,
    responses(
        (status = 200, description = "The match, your clock halved", body = MatchState),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: you are not seated in the match", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such tournament, or the match is not one of its games", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`berserk_not_allowed`: after your first move, already berserk, without a clock, not an arena, or the arena is not running; `match_over`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/berserk")]
pub async fn berserk(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    body: JsonBody<BerserkBody>,
) -> Result<HttpResponse, Problem> {
    let state = arena::berserk(&ctx, &player, &path, &body.0.match_id).await?;
    Ok(HttpResponse::Ok().json(state))
}

/// A tournament's games, oldest first, with their results, berserks and
/// (arena) the points each scored.
#[utoipa::path(
    tag = "tournaments",
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Page size (default 20)"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of games, oldest first", body = Page<GameView>),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: a bad limit or cursor", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/games")]
pub async fn games(
    ctx: web::Data<Context>,
    path: web::Path<String>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let from = page.cursor(read::decode_standings_cursor, &mut errors);
    if !errors.is_empty() {
        return Err(Problem::validation(&errors));
    }
    Ok(HttpResponse::Ok().json(read::games(&ctx, &path, from, page.limit).await?))
}

/// The standings and every game (and bye), as CSV (standings, an empty
/// line, games) or NDJSON (one `{"type": "standing" | "game" | "bye", …}` a line).
#[utoipa::path(
    tag = "tournaments",
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("format" = Option<String>, Query, description = "`csv` (default) or `ndjson`"),
    ),
    responses(
        (status = 200, description = "The export", content_type = "text/csv", body = String),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: an unknown format", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/export")]
pub async fn export_games(
    ctx: web::Data<Context>,
    path: web::Path<String>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let format = Format::parse(query.get("format").unwrap_or("csv")).ok_or_else(|| {
        Problem::validation(&[FieldError::new("format", "must be csv or ndjson")])
    })?;
    let body = export::export(&ctx, &path, format).await?;
    Ok(HttpResponse::Ok()
        .content_type(format.content_type())
        .body(body))
}

/// A tournament, as anyone sees it.
struct TournamentSource {
    id: String,
}

impl Source for TournamentSource {
    const EVENT: &'static str = "tournament";

    async fn current(&self, ctx: &Context) -> Option<(i32, String)> {
        match tournaments::get(ctx, &self.id).await {
            Ok(view) => versioned(&view),
            Err(err) => {
                tracing::warn!(tournament.id = %self.id, error = %err, "stream resync failed");
                None
            }
        }
    }
}

fn versioned(view: &TournamentView) -> Option<(i32, String)> {
    serde_json::to_string(view)
        .ok()
        .map(|json| (view.version, json))
}

/// The tournament's live changes (`text/event-stream`): event `tournament`
/// with the whole tournament on connect and after every change (entry,
/// start, pairing, result, end); `id` is its version, and `Last-Event-ID`
/// resumes. Browsers may pass the token as `?access_token=`.
#[utoipa::path(
    tag = "tournaments",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "Tournament id"),
        ("access_token" = Option<String>, Query, description = "The access token, for clients that cannot set headers"),
        ("Last-Event-ID" = Option<i32>, Header, minimum = 0, description = "The last version received"),
    ),
    responses(
        (status = 200, description = "Events `tournament` (data: the tournament; id: its version), and keep-alive comments", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: `Last-Event-ID` is not a version", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: the player already has the most open event streams allowed", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[get("/{id}/events")]
pub async fn events(
    ctx: web::Data<Context>,
    AuthenticatedSession(viewer, claims): AuthenticatedSession,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, Problem> {
    let id = path.into_inner();
    let sent = last_event_id(&req)?;
    let opened = feed::open(&ctx, &id).await?;
    let guard = StreamGuard::open(&ctx, &viewer.id, &claims).await?;
    let initial = versioned(&opened.initial);
    Ok(versioned_stream::respond(
        ctx,
        TournamentSource { id },
        opened.subscription,
        guard,
        sent,
        initial,
    ))
}
