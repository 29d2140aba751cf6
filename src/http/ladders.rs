//! `/api/v1/ladders/*`, `/api/v1/matchmaking/tickets/*` and `/api/v1/players/*`.

use actix_web::{HttpResponse, delete, get, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::Authenticated;
use super::json::JsonBody;
use super::problem::{Problem, ProblemBody};
use super::query::{Pagination, QueryParams};
use crate::service::ladders::{self, LadderInfo, Leaderboard, Profile, RatingHistory};
use crate::service::matchmaking::{self, TicketView};
use crate::service::versus::{self, Versus};
use crate::service::{Context, Error, FieldError, cursor};

/// The configured ladders.
#[utoipa::path(
    tag = "ladders",
    responses((status = 200, description = "Every ladder", body = Vec<LadderInfo>))
)]
#[get("")]
pub async fn list(ctx: web::Data<Context>) -> HttpResponse {
    HttpResponse::Ok().json(ladders::list(&ctx))
}

/// A ladder's leaderboard: the players established as of `as_of` (their
/// deviation, grown by inactivity since their last rated game, at most 110),
/// by rating. Provisional players are not ranked: a player who stops playing
/// drops off until they play again. Later pages keep the first page's `as_of`.
/// `players=humans` or `players=bots` lists only those (ranks count within the list).
#[utoipa::path(
    tag = "ladders",
    params(
        ("id" = String, Path, description = "Ladder id"),
        ("players" = Option<String>, Query, description = "`all` (default), `humans` or `bots`"),
        Pagination
    ),
    responses(
        (status = 200, description = "A page of the leaderboard", body = Leaderboard),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/leaderboard")]
pub async fn leaderboard(
    ctx: web::Data<Context>,
    id: web::Path<String>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(ladders::decode_leader_cursor, &mut errors);
    let bots = match query.get("players") {
        None | Some("all") => None,
        Some("humans") => Some(false),
        Some("bots") => Some(true),
        Some(_) => {
            errors.push(FieldError::new("players", "must be all, humans or bots"));
            None
        }
    };
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let board = ladders::leaderboard(&ctx, id.into_inner(), after, bots, page.limit).await?;
    Ok(HttpResponse::Ok().json(board))
}

/// A request to queue.
#[derive(Debug, Deserialize, ToSchema)]
pub struct TicketRequest {
    /// The ladder's id.
    #[schema(example = "ultimate-10m")]
    pub ladder: String,
}

/// Queue for ranked play on a ladder. Read the ticket (or keep
/// `/api/v1/me/events` open) at least once a minute: an unwatched ticket is
/// cancelled as `abandoned`.
#[utoipa::path(
    tag = "matchmaking",
    security(("bearer" = [])),
    request_body = TicketRequest,
    responses(
        (status = 201, description = "Queued", body = TicketView),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: a bot account on a ladder without `bots: true`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`already_queued` (with `ticket_id`) or `in_active_match` (with `match_id`)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: no such ladder", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("")]
pub async fn create_ticket(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<TicketRequest>,
) -> Result<HttpResponse, Problem> {
    let Some(ladder) = ctx.config.ladder(&body.0.ladder).cloned() else {
        return Err(
            Error::Validation(vec![FieldError::new("ladder", "no ladder has this id")]).into(),
        );
    };
    let ticket = matchmaking::create_ticket(&ctx, &player, &ladder).await?;
    Ok(HttpResponse::Created().json(ticket))
}

/// One of your tickets: its status, the match once paired, and the queue's state.
#[utoipa::path(
    tag = "matchmaking",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Ticket id")),
    responses(
        (status = 200, description = "The ticket", body = TicketView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` (also for another player's ticket)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn get_ticket(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(matchmaking::get_ticket(&ctx, &player, &id).await?))
}

/// Leave the queue.
#[utoipa::path(
    tag = "matchmaking",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Ticket id")),
    responses(
        (status = 204, description = "Cancelled (also when it already was)"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`already_matched`, with `match_id`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[delete("/{id}")]
pub async fn cancel_ticket(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    matchmaking::cancel_ticket(&ctx, &player, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A player's public profile and ratings.
#[utoipa::path(
    tag = "ladders",
    params(("username" = String, Path, description = "Username (any case)")),
    responses(
        (status = 200, description = "The profile", body = Profile),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{username}")]
pub async fn profile(
    ctx: web::Data<Context>,
    username: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let profile = ladders::profile(&ctx, username.into_inner()).await?;
    Ok(HttpResponse::Ok().json(profile))
}

/// A player's rating on one ladder as of now (deviation grown since their
/// last rated game) and the rating and deviation after every rated game, oldest first.
#[utoipa::path(
    tag = "ladders",
    params(
        ("username" = String, Path, description = "Username (any case)"),
        ("ladder" = String, Path, description = "Ladder id"),
    ),
    responses(
        (status = 200, description = "The rating and its history", body = RatingHistory),
        (status = 404, description = "`not_found`: no such player or ladder", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{username}/ratings/{ladder}")]
pub async fn rating_history(
    ctx: web::Data<Context>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, Problem> {
    let (username, ladder) = path.into_inner();
    Ok(HttpResponse::Ok().json(ladders::history(&ctx, username, ladder).await?))
}

/// Head-to-head: wins, draws and losses of `a` against `b` over every
/// finished match between them, from a's side, with a page of those
/// matches (newest first; `limit` and `cursor` page the matches).
#[utoipa::path(
    tag = "ladders",
    security(("bearer" = [])),
    params(
        ("a" = String, Path, description = "Username (any case) whose side the record is from"),
        ("b" = String, Path, description = "The opponent's username (any case)"),
        Pagination,
    ),
    responses(
        (status = 200, description = "The record and a page of matches", body = Versus),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such player", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{a}/versus/{b}")]
pub async fn head_to_head(
    ctx: web::Data<Context>,
    _viewer: Authenticated,
    path: web::Path<(String, String)>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(cursor::decode_keyset, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let (a, b) = path.into_inner();
    Ok(HttpResponse::Ok().json(versus::versus(&ctx, a, b, after, page.limit).await?))
}
