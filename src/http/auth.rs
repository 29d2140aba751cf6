//! Extractors for the authenticated player and for admins.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use futures_util::future::LocalBoxFuture;

use super::problem::Problem;
use crate::config::ProxyTrust;
use crate::service::accounts::{self, Player, Role};
use crate::service::tokens::Claims;
use crate::service::{Context, Error};

/// The player who sent the request (a valid bearer token of an existing player).
#[derive(Debug, Clone)]
pub struct Authenticated(pub Player);

/// The player who sent the request with the claims of their token (its
/// session and expiry), for event streams.
#[derive(Debug, Clone)]
pub struct AuthenticatedSession(pub Player, pub Claims);

/// The player id a valid access token names (signature, issuer, audience
/// and lifetime checked), before the player is looked up: for a move, which
/// is confirmed by its seat instead (see [`crate::service::matches::play_move`]),
/// saving the look-up a request.
#[derive(Debug, Clone)]
pub struct TokenSubject(pub String);

/// An authenticated player with the `admin` role (403 for anyone else).
#[derive(Debug, Clone)]
pub struct Admin(pub Player);

/// The bearer token of a request. Event streams may pass it as
/// `?access_token=` because browsers' EventSource cannot set headers.
fn bearer_token(req: &HttpRequest) -> Option<String> {
    if let Some(value) = req.headers().get(header::AUTHORIZATION) {
        let text = value.to_str().ok()?;
        let (scheme, token) = text.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim().to_owned())
            .filter(|t| !t.is_empty());
    }
    if req.path().ends_with("/events") {
        return web::Query::<std::collections::HashMap<String, String>>::from_query(
            req.query_string(),
        )
        .ok()?
        .get("access_token")
        .cloned();
    }
    None
}

fn context(req: &HttpRequest) -> Result<web::Data<Context>, Problem> {
    req.app_data::<web::Data<Context>>()
        .cloned()
        .ok_or_else(|| Error::Internal("no service context registered".into()).into())
}

impl FromRequest for Authenticated {
    type Error = Problem;
    type Future = LocalBoxFuture<'static, Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer_token(req);
        let ctx = context(req);
        Box::pin(async move {
            let ctx = ctx?;
            let token = token.ok_or(Error::Unauthorized("a bearer access token is required"))?;
            Ok(Authenticated(accounts::authenticate(&ctx, &token).await?))
        })
    }
}

impl FromRequest for TokenSubject {
    type Error = Problem;
    type Future = std::future::Ready<Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let subject = || -> Result<Self, Problem> {
            let ctx = context(req)?;
            let token = bearer_token(req)
                .ok_or(Error::Unauthorized("a bearer access token is required"))?;
            Ok(TokenSubject(accounts::token_subject(&ctx, &token)?))
        };
        std::future::ready(subject())
    }
}

impl FromRequest for AuthenticatedSession {
    type Error = Problem;
    type Future = LocalBoxFuture<'static, Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = bearer_token(req);
        let ctx = context(req);
        Box::pin(async move {
            let ctx = ctx?;
            let token = token.ok_or(Error::Unauthorized("a bearer access token is required"))?;
            let (player, claims) = accounts::authenticate_session(&ctx, &token).await?;
            Ok(AuthenticatedSession(player, claims))
        })
    }
}

impl FromRequest for Admin {
    type Error = Problem;
    type Future = LocalBoxFuture<'static, Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let player = Authenticated::from_request(req, payload);
        Box::pin(async move {
            let Authenticated(player) = player.await?;
            if player.role == Role::Admin {
                Ok(Admin(player))
            } else {
                Err(Error::Forbidden("this needs the admin role").into())
            }
        })
    }
}

/// The client's address as a rate-limit key: the peer address, or behind the
/// server's own proxies the hop they appended to `X-Forwarded-For` (see
/// [`client_ip`](super::middleware::client_ip)); an IPv6 address counts as its /64.
pub fn client_address(req: &HttpRequest, trust: &ProxyTrust) -> String {
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .collect();
    super::middleware::client_ip(req.peer_addr().map(|a| a.ip()), &forwarded, trust)
        .map_or_else(|| "unknown".into(), super::middleware::rate_key)
}
