//! Operations endpoints: liveness, readiness, metrics.

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::problem::{Problem, ProblemBody};
use crate::service::{Context, Error};
use actix_web::ResponseError;
use actix_web::http::StatusCode;

/// Readiness of the backing services.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ok` or `unavailable`.
    pub database: &'static str,
    /// `ok`, `unavailable`, or `in-process` when no Redis is configured.
    pub broker: &'static str,
}

/// 200 while the process runs.
#[utoipa::path(tag = "operations", responses((status = 200, description = "Alive", body = String, content_type = "text/plain")))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("ok")
}

/// 200 when the database (and Redis, when configured) answer, else 503.
#[utoipa::path(tag = "operations", responses(
    (status = 200, description = "Ready", body = Readiness),
    (status = 503, description = "`unavailable`, with the members of `Readiness` saying what is down", body = ProblemBody, content_type = "application/problem+json"),
))]
#[get("/readyz")]
pub async fn readyz(ctx: web::Data<Context>) -> HttpResponse {
    let (db, broker) = tokio::join!(ctx.db.ping(), ctx.broker.ping());
    let body = Readiness {
        database: if db.is_ok() { "ok" } else { "unavailable" },
        broker: match (&broker, ctx.broker.kind()) {
            (Err(_), _) => "unavailable",
            (Ok(()), "redis") => "ok",
            (Ok(()), _) => "in-process",
        },
    };
    if db.is_ok() && broker.is_ok() {
        HttpResponse::Ok().json(body)
    } else {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "Service unavailable",
            "a backing service does not answer",
        )
        .with("database", body.database)
        .with("broker", body.broker)
        .error_response()
    }
}

/// Whether the request carries `Authorization: Bearer <expected>`, compared
/// in constant time.
fn bearer_matches(req: &HttpRequest, expected: &str) -> bool {
    let Some(given) = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
    else {
        return false;
    };
    // Compare digests, so neither the length nor a prefix leaks through timing.
    use sha2::{Digest, Sha256};
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(expected.as_bytes()),
    );
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// Prometheus metrics of this instance. When the server sets
/// `UTTT_METRICS_TOKEN`, send it as `Authorization: Bearer <token>`;
/// otherwise keep `/metrics` behind your proxy.
#[utoipa::path(tag = "operations", responses(
    (status = 200, description = "Prometheus text format", body = String, content_type = "text/plain; version=0.0.4"),
    (status = 401, description = "`unauthorized`: the server requires its metrics token (`UTTT_METRICS_TOKEN`) as a bearer token", body = ProblemBody, content_type = "application/problem+json"),
))]
#[get("/metrics")]
pub async fn metrics(ctx: web::Data<Context>, req: HttpRequest) -> Result<HttpResponse, Problem> {
    if let Some(expected) = &ctx.config.metrics_token
        && !bearer_matches(&req, expected)
    {
        return Err(
            Error::Unauthorized("/metrics needs the metrics token as a bearer token").into(),
        );
    }
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(ctx.metrics.render()))
}
