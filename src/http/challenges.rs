//! `/api/v1/challenges/*` and `/api/v1/me/challenges`: challenge a named player.

use actix_web::{HttpResponse, get, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::Authenticated;
use super::json::{JsonBody, OptionalJsonBody};
use super::matches::parse_time_control;
use super::problem::{Problem, ProblemBody};
use crate::clock::TimeControl;
use crate::rules::Depth;
use crate::service::challenges::{
    self, Accepted, ChallengeView, MyChallenges, NewChallenge, SeatChoice,
};
use crate::service::matches::state::TimeControlBody;
use crate::service::{Context, Error, FieldError};

/// A challenge to a named player.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateChallengeBody {
    /// The challenged player's name (any case).
    pub username: String,
    /// Board depth 1..=4 (default 2, or the ladder's).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 4, example = 2)]
    pub depth: Option<i64>,
    /// Time control (default the 10-minute clock, or the ladder's).
    #[serde(default)]
    pub time_control: Option<TimeControlBody>,
    /// The challenger's seat: `x`, `o` or `random` (default).
    #[serde(default)]
    #[schema(example = "random")]
    pub seat: Option<String>,
    /// A ladder to play a rated match on; both players must be able to play
    /// there. Its depth and time control apply.
    #[serde(default)]
    pub ladder: Option<String>,
}

/// Why the challenge is declined.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DeclineBody {
    /// Shown to the challenger (at most 200 characters are kept).
    #[serde(default)]
    pub reason: Option<String>,
}

fn parse(body: CreateChallengeBody) -> Result<NewChallenge, Error> {
    let mut errors = Vec::new();
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
    let seat = match body.seat.as_deref() {
        None => Some(SeatChoice::Random),
        Some(text) => SeatChoice::parse(text).or_else(|| {
            errors.push(FieldError::new("seat", "must be x, o or random"));
            None
        }),
    };
    if body.username.trim().is_empty() {
        errors.push(FieldError::new("username", "must name a player"));
    }
    match (seat, errors.is_empty()) {
        (Some(seat), true) => Ok(NewChallenge {
            username: body.username,
            depth,
            time_control,
            seat,
            ladder: body.ladder,
        }),
        _ => Err(Error::Validation(errors)),
    }
}

/// Challenge a player by name. They get event `challenge` on `/me/events`;
/// an unanswered challenge expires after 60 seconds.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    request_body = CreateChallengeBody,
    responses(
        (status = 201, description = "The pending challenge", body = ChallengeView),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: the player does not accept challenges from bots, or a bot would play on a ladder closed to bots", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no player of that name", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: bad settings, yourself, an unknown or unrated ladder, or settings other than the ladder's", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: you already have the most pending challenges allowed (`UTTT_PENDING_CHALLENGES_PER_PLAYER`, default 5); `Retry-After` says when the oldest expires", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("")]
pub async fn create(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<CreateChallengeBody>,
) -> Result<HttpResponse, Problem> {
    let spec = parse(body.0)?;
    let view = challenges::create(&ctx, &player, spec).await?;
    Ok(HttpResponse::Created().json(view))
}

/// A challenge you made or received.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Challenge id")),
    responses(
        (status = 200, description = "The challenge (`status: expired` once 60 s passed unanswered)", body = ChallengeView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` (also someone else's challenge)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn get_challenge(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let view = challenges::get(&ctx, &player, &path).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Accept a challenge made to you: the match starts at once. The challenger
/// gets `challenge_accepted` and both get `match_found` on `/me/events`.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Challenge id")),
    responses(
        (status = 200, description = "The new match", body = Accepted),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: you made this challenge, or it is rated on a ladder closed to bots and either player has become a bot since it was made", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`challenge_not_pending` (with `challenge_status`: already accepted, declined, cancelled or expired), or `in_active_match` for a rated challenge while either player has an unfinished ranked match", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/accept")]
pub async fn accept(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let accepted = challenges::accept(&ctx, &player, &path).await?;
    Ok(HttpResponse::Ok().json(accepted))
}

/// Decline a challenge made to you; the challenger gets `challenge_declined`.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Challenge id")),
    request_body(content = Option<DeclineBody>, description = "Optional"),
    responses(
        (status = 200, description = "The declined challenge", body = ChallengeView),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: you made this challenge, or it is rated on a ladder closed to bots and either player has become a bot since it was made", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`challenge_not_pending` (with `challenge_status`)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: a body that is not `{reason}`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/decline")]
pub async fn decline(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    body: OptionalJsonBody<DeclineBody>,
) -> Result<HttpResponse, Problem> {
    let reason = body.0.and_then(|b| b.reason);
    let view = challenges::decline(&ctx, &player, &path, reason).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Withdraw a challenge you made; the challenged player gets `challenge_cancelled`.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Challenge id")),
    responses(
        (status = 200, description = "The cancelled challenge", body = ChallengeView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: the challenge was made to you (decline it instead)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`challenge_not_pending` (with `challenge_status`)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/cancel")]
pub async fn cancel(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let view = challenges::cancel(&ctx, &player, &path).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Your pending challenges, incoming and outgoing.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Pending challenges, oldest first", body = MyChallenges),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/me/challenges")]
pub async fn my_challenges(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(challenges::mine(&ctx, &player).await?))
}
