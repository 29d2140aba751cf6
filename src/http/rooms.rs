//! `/api/v1/rooms/*`: casual games through a six-character code.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::{Authenticated, client_address};
use super::json::{JsonBody, OptionalJsonBody};
use super::matches::{parse_depth, parse_time_control};
use super::problem::{Problem, ProblemBody};
use crate::clock::TimeControl;
use crate::ids;
use crate::service::matches::state::TimeControlBody;
use crate::service::rooms::{self, RoomState};
use crate::service::{Context, Error};

/// The settings of a room's games.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateRoomBody {
    /// Board depth 1..=4 (default 2).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 4, example = 2)]
    pub depth: Option<i64>,
    /// Time control (default: the 10-minute clock).
    #[serde(default)]
    pub time_control: Option<TimeControlBody>,
}

/// Which finished game a rematch follows.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RematchBody {
    /// The game you are answering; when the other player already started the
    /// next one, you get that one instead of an error.
    #[serde(default)]
    pub after_match_id: Option<String>,
}

fn code(path: &str) -> Result<String, Problem> {
    if ids::is_room_code(path) {
        Ok(path.to_ascii_uppercase())
    } else {
        Err(Error::NotFound("room").into())
    }
}

/// Open a casual room; share its code. The host is X in the first game.
#[utoipa::path(
    tag = "rooms",
    security(("bearer" = [])),
    request_body = CreateRoomBody,
    responses(
        (status = 201, description = "The room (`match_id` is null until someone joins). A room nobody joins within `UTTT_ROOM_TTL_SECS` (default one hour) expires.", body = RoomState),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`too_many_open_rooms`: the player already has the most rooms nobody joined yet (`UTTT_OPEN_ROOMS_PER_PLAYER`, default 5)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("")]
pub async fn create(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<CreateRoomBody>,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let depth = parse_depth(body.0.depth, "depth", &mut errors);
    let tc = parse_time_control(
        body.0.time_control,
        TimeControl::TOURNAMENT,
        "time_control",
        &mut errors,
    );
    let (Some(depth), Some(tc)) = (depth, tc) else {
        return Err(Error::Validation(errors).into());
    };
    let room = rooms::create(&ctx, &player, depth, tc).await?;
    Ok(HttpResponse::Created().json(room))
}

/// A room.
#[utoipa::path(
    tag = "rooms",
    security(("bearer" = [])),
    params(("code" = String, Path, description = "The six-character code (any case)")),
    responses(
        (status = 200, description = "The room", body = RoomState),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` (also a room nobody joined in time)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: too many room look-ups by this player or address (`UTTT_ROOM_LOOKUPS_PER_PLAYER`, `UTTT_ROOM_LOOKUPS_PER_ADDRESS`)", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[get("/{code}")]
pub async fn get_room(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, Problem> {
    let client = client_address(&req, &ctx.config.proxy_trust);
    let room = rooms::get(&ctx, &player, &code(&path)?, &client).await?;
    Ok(HttpResponse::Ok().json(room))
}

/// Join a room as its second player; this starts the first game.
#[utoipa::path(
    tag = "rooms",
    security(("bearer" = [])),
    params(("code" = String, Path, description = "The six-character code (any case)")),
    responses(
        (status = 200, description = "The room with its game's `match_id` (joining again answers the same)", body = RoomState),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found` (also a room nobody joined in time)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`room_full`, or `own_room` for the host", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: too many room look-ups by this player or address", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("/{code}/join")]
pub async fn join(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, Problem> {
    let client = client_address(&req, &ctx.config.proxy_trust);
    let room = rooms::join(&ctx, &player, &code(&path)?, &client).await?;
    Ok(HttpResponse::Ok().json(room))
}

/// Start the room's next game once the current one is over. X and O swap
/// (the "alternate first move" house rule).
#[utoipa::path(
    tag = "rooms",
    security(("bearer" = [])),
    params(("code" = String, Path, description = "The six-character code (any case)")),
    request_body(content = Option<RematchBody>, description = "Optional"),
    responses(
        (status = 200, description = "The room with its new game's `match_id`", body = RoomState),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such room, or the caller is not one of its players (the same answer, so codes cannot be probed)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`match_in_progress` (with `match_id`) or `room_not_full`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: a body that is not `{after_match_id}`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{code}/rematch")]
pub async fn rematch(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    path: web::Path<String>,
    body: OptionalJsonBody<RematchBody>,
) -> Result<HttpResponse, Problem> {
    let after = body.0.and_then(|b| b.after_match_id);
    let room = rooms::rematch(&ctx, &player, &code(&path)?, after).await?;
    Ok(HttpResponse::Ok().json(room))
}
