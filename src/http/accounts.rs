//! `/api/v1/auth/*` and `/api/v1/me`.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{Authenticated, client_address};
use super::json::JsonBody;
use super::problem::{Problem, ProblemBody};
use crate::service::accounts::{self, Password, Player, Role, Session, Username};
use crate::service::bots::{self, Preferences};
use crate::service::ladders::{self, LadderRating};
use crate::service::{Context, Error, FieldError};
use crate::time::rfc3339;

/// Credentials for register and login.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Credentials {
    /// 3 to 24 of `A-Z a-z 0-9 _ -`; unique ignoring case.
    #[schema(
        example = "alice",
        min_length = 3,
        max_length = 24,
        pattern = "^[A-Za-z0-9_-]{3,24}$"
    )]
    pub username: String,
    /// 8 to 128 characters.
    #[schema(example = "correct horse battery", min_length = 8, max_length = 128)]
    pub password: String,
}

/// A refresh token, for refresh and logout.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RefreshRequest {
    /// The refresh token of a session.
    pub refresh_token: String,
}

/// A player as the account endpoints show it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Account)]
pub struct AccountBody {
    /// Opaque id.
    pub id: String,
    /// Display name.
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// When the account was made.
    pub created_at: String,
    /// Whether the account is a bot.
    pub bot: bool,
}

impl From<Player> for AccountBody {
    fn from(p: Player) -> Self {
        AccountBody {
            bot: p.bot,
            id: p.id,
            username: p.username,
            role: p.role,
            created_at: rfc3339(p.created_at),
        }
    }
}

/// A logged-in session.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionBody {
    /// Who.
    pub player: AccountBody,
    /// Bearer token for `Authorization: Bearer …`.
    pub access_token: String,
    /// Single-use token for `/auth/refresh`.
    pub refresh_token: String,
    /// Always `Bearer`.
    #[schema(example = "Bearer")]
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    #[schema(example = 900)]
    pub expires_in: u64,
}

impl From<Session> for SessionBody {
    fn from(s: Session) -> Self {
        SessionBody {
            player: s.player.into(),
            access_token: s.access_token,
            refresh_token: s.refresh_token,
            token_type: "Bearer",
            expires_in: s.expires_in,
        }
    }
}

fn ctx_address(ctx: &Context, req: &HttpRequest) -> String {
    client_address(req, &ctx.config.proxy_trust)
}

/// Create an account and log in.
#[utoipa::path(
    tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 201, description = "Registered and logged in", body = SessionBody),
        (status = 400, description = "Malformed JSON", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`username_taken`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body over 16 KiB", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("/register")]
pub async fn register(
    ctx: web::Data<Context>,
    req: HttpRequest,
    body: JsonBody<Credentials>,
) -> Result<HttpResponse, Problem> {
    let Credentials { username, password } = body.0;
    let (username, password) = match (Username::parse(&username), Password::parse(&password)) {
        (Ok(u), Ok(p)) => (u, p),
        (u, p) => {
            let errors: Vec<FieldError> = [u.err(), p.err()].into_iter().flatten().collect();
            return Err(Error::Validation(errors).into());
        }
    };
    let session = accounts::register(&ctx, username, password, &ctx_address(&ctx, &req)).await?;
    Ok(HttpResponse::Created().json(SessionBody::from(session)))
}

/// Log in with a username and password.
#[utoipa::path(
    tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 200, description = "Logged in", body = SessionBody),
        (status = 400, description = "Malformed JSON", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`invalid_credentials` (same answer for an unknown user)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 413, description = "Body over 16 KiB", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`", body = ProblemBody, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("/login")]
pub async fn login(
    ctx: web::Data<Context>,
    req: HttpRequest,
    body: JsonBody<Credentials>,
) -> Result<HttpResponse, Problem> {
    let Credentials { username, password } = body.0;
    let session = accounts::login(&ctx, username, password, &ctx_address(&ctx, &req)).await?;
    Ok(HttpResponse::Ok().json(SessionBody::from(session)))
}

/// Exchange a refresh token for a new token pair. Each refresh token works
/// once: presenting a spent one again revokes the whole session, so a client
/// running in several tabs or processes must let one of them refresh at a
/// time and share the new pair (for example under a Web Lock, with the pair
/// in IndexedDB rather than localStorage, whose writes reach other tabs late).
#[utoipa::path(
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "A new token pair", body = SessionBody),
        (status = 400, description = "Malformed JSON", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "Unknown, expired or revoked token; reusing a spent token revokes its session", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/refresh")]
pub async fn refresh(
    ctx: web::Data<Context>,
    body: JsonBody<RefreshRequest>,
) -> Result<HttpResponse, Problem> {
    let session = accounts::refresh(&ctx, body.0.refresh_token).await?;
    Ok(HttpResponse::Ok().json(SessionBody::from(session)))
}

/// End the session of a refresh token.
#[utoipa::path(
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 204, description = "Logged out (also for an unknown token)"),
        (status = 400, description = "Malformed JSON", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/logout")]
pub async fn logout(
    ctx: web::Data<Context>,
    body: JsonBody<RefreshRequest>,
) -> Result<HttpResponse, Problem> {
    accounts::logout(&ctx, body.0.refresh_token).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The logged-in player with a rating per ladder.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeBody {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// When the account was made.
    pub created_at: String,
    /// Whether the account is a bot.
    pub bot: bool,
    /// Standing on every ladder (the initial rating where they have not played).
    pub ratings: Vec<LadderRating>,
}

/// The logged-in player, with a rating per ladder.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The player", body = MeBody),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/me")]
pub async fn me(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
) -> Result<HttpResponse, Problem> {
    let ratings = ladders::ratings_of(&ctx, player.id.clone()).await?;
    let account = AccountBody::from(player);
    Ok(HttpResponse::Ok().json(MeBody {
        id: account.id,
        username: account.username,
        role: account.role,
        created_at: account.created_at,
        bot: account.bot,
        ratings,
    }))
}

/// Turn your account into a bot account, for good. Bots play through the
/// same endpoints as humans, only on ladders with `"bots": true`.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The account, now a bot (asking again answers the same)", body = AccountBody),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`has_rated_games`: the account played rated games as a human; `in_active_match` while it sits in an unfinished ranked match; `already_queued` (with `ticket_id`) while it holds a queued ticket; `already_joined` (with `tournament_id`) while it may still play in a registering or running tournament rated on a ladder closed to bots (entered and not withdrawn, paused in an arena, or with a game of it in progress)", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/me/bot")]
pub async fn make_bot(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
) -> Result<HttpResponse, Problem> {
    let player = bots::make_bot(&ctx, &player).await?;
    Ok(HttpResponse::Ok().json(AccountBody::from(player)))
}

/// New values for your preferences; fields left out stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PreferencesBody {
    /// Whether challenges from bot accounts reach you (default true).
    #[serde(default)]
    pub accept_bot_challenges: Option<bool>,
}

/// Your preferences.
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Your preferences", body = Preferences),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/me/preferences")]
pub async fn get_preferences(Authenticated(player): Authenticated) -> HttpResponse {
    HttpResponse::Ok().json(bots::preferences(&player))
}

/// Change your preferences (`accept_bot_challenges: false` refuses challenges from bots).
#[utoipa::path(
    tag = "challenges",
    security(("bearer" = [])),
    request_body = PreferencesBody,
    responses(
        (status = 200, description = "Your preferences as they now are", body = Preferences),
        (status = 400, description = "`malformed_json`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/me/preferences")]
pub async fn set_preferences(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    body: JsonBody<PreferencesBody>,
) -> Result<HttpResponse, Problem> {
    let prefs = bots::set_preferences(&ctx, &player, body.0.accept_bot_challenges).await?;
    Ok(HttpResponse::Ok().json(prefs))
}
