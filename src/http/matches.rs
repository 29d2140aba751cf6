//! `/api/v1/matches/*` and `/api/v1/me/matches`.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::auth::{Authenticated, TokenSubject};
use super::json::JsonBody;
use super::problem::{Problem, ProblemBody};
use super::query::{Pagination, QueryParams};
use crate::clock::TimeControl;
use crate::cpu::Level;
use crate::rules::{Address, Depth, Seat};
use crate::service::matches::state::{MatchState, MoveState, TimeControlBody};
use crate::service::matches::{self, MatchSummary, Page, PracticeRequest};
use crate::service::{Context, Error, FieldError, accounts, cursor};
use crate::store::kinds::MatchStatus;

/// A practice match against the CPU.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateMatchBody {
    /// Only `cpu` (rooms and matchmaking make the other kinds).
    #[schema(example = "cpu", pattern = "^cpu$")]
    pub opponent: String,
    /// Board depth 1..=4 (default 2, the classic game).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 4, example = 2)]
    pub depth: Option<i64>,
    /// Time control (default `{"kind": "none"}`).
    #[serde(default)]
    pub time_control: Option<TimeControlBody>,
    /// CPU strength 1..=5 (default 3).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 5, example = 3)]
    pub cpu_level: Option<i64>,
    /// The seat you take: `x` (moves first, the default) or `o`.
    #[serde(default)]
    #[schema(example = "x")]
    pub seat: Option<String>,
}

/// A move.
#[derive(Debug, Deserialize, ToSchema)]
pub struct MoveBody {
    /// Moves already played (compare-and-set): the `ply` of the state you are answering.
    #[schema(minimum = 0, example = 0)]
    pub ply: u32,
    /// The square, root first: one coordinate 0..=8 per level of the match's depth.
    #[schema(example = json!([4, 0]), min_items = 1, max_items = 4)]
    pub address: Vec<i64>,
    /// Optional: the network time (ms) the client measured for this move —
    /// e.g. its recent round trip to the server — 0..=60000. Under a clock or
    /// a per-turn limit up to the player's lag quota is given back (to the
    /// clock; per turn, to the next turn), never more than the turn used. The
    /// quota starts at 3 gains, gains `min(1000, (initial_ms + 40 × increment_ms)
    /// / 250 + 150)` ms a move (per turn: `40 × turn_ms` in place of the sum)
    /// and holds at most 7 gains: one move gets back at most 7 gains, n moves
    /// at most n + 2 gains in all.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 60000, example = 120)]
    pub lag_ms: Option<i64>,
}

/// Parses the reported lag of a move.
fn parse_lag(value: Option<i64>, errors: &mut Vec<FieldError>) -> Option<i64> {
    let lag = value?;
    if (0..=crate::clock::MAX_REPORTED_LAG_MS).contains(&lag) {
        Some(lag)
    } else {
        errors.push(FieldError::new(
            "lag_ms",
            format!(
                "must be between 0 and {} ms",
                crate::clock::MAX_REPORTED_LAG_MS
            ),
        ));
        None
    }
}

/// Parses a depth field.
pub fn parse_depth(value: Option<i64>, field: &str, errors: &mut Vec<FieldError>) -> Option<Depth> {
    let depth = value.unwrap_or(2);
    match u8::try_from(depth).ok().and_then(|d| Depth::new(d).ok()) {
        Some(d) => Some(d),
        None => {
            errors.push(FieldError::new(field, "must be 1, 2, 3 or 4"));
            None
        }
    }
}

/// Parses a time control field, checking its ranges.
pub fn parse_time_control(
    value: Option<TimeControlBody>,
    default: TimeControl,
    field: &str,
    errors: &mut Vec<FieldError>,
) -> Option<TimeControl> {
    let parsed = match value {
        None => Ok(default),
        Some(TimeControlBody::Clock {
            initial_ms,
            increment_ms,
        }) => TimeControl::clock(initial_ms, increment_ms),
        Some(TimeControlBody::PerTurn { turn_ms }) => TimeControl::per_turn(turn_ms),
        Some(TimeControlBody::None) => Ok(TimeControl::None),
    };
    match parsed {
        Ok(tc) => Some(tc),
        Err(e) => {
            errors.push(FieldError::new(format!("{field}.{}", e.field), e.message));
            None
        }
    }
}

/// Start a practice match against the CPU (unrated).
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    request_body = CreateMatchBody,
    responses(
        (status = 201, description = "The new match", body = MatchState),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`too_many_practice_matches`: the player already has the most unfinished practice matches allowed (`UTTT_PRACTICE_MATCHES_PER_PLAYER`, default 5); finish or resign one", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("")]
pub async fn create(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<CreateMatchBody>,
) -> Result<HttpResponse, Problem> {
    let request = parse_practice(body.0).map_err(Error::Validation)?;
    let state = matches::create_practice(&ctx, &player, request).await?;
    Ok(HttpResponse::Created().json(state))
}

/// Parses a practice match's body; every field error at once.
fn parse_practice(body: CreateMatchBody) -> Result<PracticeRequest, Vec<FieldError>> {
    let mut errors = Vec::new();
    if body.opponent != "cpu" {
        errors.push(FieldError::new(
            "opponent",
            "must be `cpu`; play people through rooms or matchmaking",
        ));
    }
    let depth = parse_depth(body.depth, "depth", &mut errors);
    let tc = parse_time_control(
        body.time_control,
        TimeControl::None,
        "time_control",
        &mut errors,
    );
    let level = body.cpu_level.unwrap_or(3);
    let level = u8::try_from(level).ok().and_then(Level::new);
    if level.is_none() {
        errors.push(FieldError::new("cpu_level", "must be 1 to 5"));
    }
    let seat = match body.seat.as_deref() {
        None | Some("x") => Some(Seat::X),
        Some("o") => Some(Seat::O),
        Some(_) => {
            errors.push(FieldError::new("seat", "must be `x` or `o`"));
            None
        }
    };
    let (Some(depth), Some(time_control), Some(level), Some(seat), true) =
        (depth, tc, level, seat, errors.is_empty())
    else {
        return Err(errors);
    };
    Ok(PracticeRequest {
        depth,
        time_control,
        level,
        seat,
    })
}

fn etag(state: &MatchState) -> String {
    format!("\"{}-{}\"", state.id, state.version)
}

/// The state of a match. Supports `If-None-Match` with the `ETag` (which changes with `version`).
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "The match", body = MatchState, headers(("ETag" = String))),
        (status = 304, description = "Unchanged since the `If-None-Match` version"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn get_match(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, Problem> {
    let state = matches::get(&ctx, &player, id.into_inner()).await?;
    let tag = etag(&state);
    let unchanged = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().trim_start_matches("W/") == tag || t.trim() == "*")
        });
    if unchanged {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, tag))
            .finish());
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, tag))
        .json(state))
}

/// Play a move. `ply` must be the number of moves already played; resending
/// the move accepted at that ply (same player, same square) answers 200 with
/// the current state, so a lost response can be retried safely.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The new state (or the current one, for a safe retry)", body = MatchState),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not a seated player", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`stale_ply` (with `current_ply`), `not_your_turn`, or `match_over` (also when the mover's time ran out: the match then ends on time)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`illegal_move` (with `reason`: `bad_address`, `cell_occupied`, `wrong_board`, `board_closed`) or `validation_failed` (also `lag_ms` out of 0..=60000)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/moves")]
pub async fn play(
    ctx: web::Data<Context>,
    TokenSubject(player): TokenSubject,
    id: web::Path<String>,
    body: JsonBody<MoveBody>,
) -> Result<HttpResponse, Problem> {
    let MoveBody {
        ply,
        address,
        lag_ms,
    } = body.0;
    let mut errors = Vec::new();
    let lag_ms = parse_lag(lag_ms, &mut errors);
    if !errors.is_empty() {
        // As on every refusal of a move: a deleted player's token comes first.
        accounts::confirm(&ctx, &player).await?;
        return Err(Error::Validation(errors).into());
    }
    let address = parse_address(&address);
    let played = matches::play_move(&ctx, &player, id.into_inner(), ply, address, lag_ms).await?;
    // The text the state was published as: the same JSON, serialised once.
    Ok(match played.json {
        Some(json) => HttpResponse::Ok()
            .content_type(actix_web::http::header::ContentType::json())
            .body(json),
        None => HttpResponse::Ok().json(played.state),
    })
}

/// The address of a move body: coordinates 0..=8, root first. `None` when it
/// names no square of any board; the move is then refused as `bad_address`,
/// after the checks that come before legality (seat, ply, turn).
fn parse_address(coords: &[i64]) -> Option<Address> {
    let coords: Option<Vec<u8>> = coords
        .iter()
        .map(|&c| u8::try_from(c).ok().filter(|c| *c <= 8))
        .collect();
    Address::new(&coords?).ok()
}

/// Resign: allowed at any time, on either player's turn; resigning loses.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "The final state", body = MatchState),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not a seated player", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`match_over`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/resign")]
pub async fn resign(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let state = matches::resign(&ctx, &player, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(state))
}

/// Presence of a seated player. A client without an open event stream sends
/// one every `presence.heartbeat_ms` of the match state (at most a third of
/// the shortest grace period the match may have). An open event stream keeps
/// the seat present by itself, and any request on the match also counts.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 204, description = "Noted"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not a seated player", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/heartbeat")]
pub async fn heartbeat(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    matches::heartbeat(&ctx, &player, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The moves of a match, in order.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "The moves", body = Vec<MoveState>),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/moves")]
pub async fn moves(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let moves = matches::moves(&ctx, &player, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(moves))
}

/// Filters of a player's match list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyMatchesQuery {
    /// `active` (the matches to rejoin), `finished`, or `all` (the default).
    pub status: Option<String>,
}

/// Parses a match-list status filter.
pub fn parse_status(value: Option<&str>, errors: &mut Vec<FieldError>) -> Option<MatchStatus> {
    match value {
        None | Some("all") => None,
        Some("active") => Some(MatchStatus::Active),
        Some("finished") => Some(MatchStatus::Finished),
        Some(_) => {
            errors.push(FieldError::new(
                "status",
                "must be `active`, `finished` or `all`",
            ));
            None
        }
    }
}

/// The logged-in player's matches, newest first (`?status=active`: the ones to rejoin).
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(MyMatchesQuery, Pagination),
    responses(
        (status = 200, description = "A page of matches", body = Page<MatchSummary>),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/me/matches")]
pub async fn my_matches(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(cursor::decode_keyset, &mut errors);
    let status = parse_status(query.get("status"), &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let list = matches::list_for_player(&ctx, player.id, status, after, page.limit).await?;
    Ok(HttpResponse::Ok().json(list))
}
