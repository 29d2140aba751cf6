//! Operations endpoints: liveness, readiness, metrics.

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::problem::{Problem, ProblemBody};
use crate::service::Context;
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

/// Prometheus metrics of this instance.
#[utoipa::path(tag = "operations", responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain; version=0.0.4")))]
#[get("/metrics")]
pub async fn metrics(ctx: web::Data<Context>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(ctx.metrics.render())
}
