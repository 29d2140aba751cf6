//! Cross-cutting request handling: the request span (without the query
//! string, which may carry an access token), metrics with an access log line,
//! and the rule that every error body is problem+json.

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::{Error, ResponseError};
use tracing::Span;
use tracing_actix_web::RootSpanBuilder;

use super::problem::{PROBLEM_JSON, Problem};
use crate::metrics::Metrics;

/// Builds the span of each request.
#[derive(Debug, Clone, Copy)]
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        tracing::info_span!(
            "http",
            http.method = %request.method(),
            http.route = %request.match_pattern().unwrap_or_else(|| "unmatched".into()),
            // The path only: `?access_token=` must never reach a log.
            http.path = %request.path(),
            http.status = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        let status = match outcome {
            Ok(res) => res.status(),
            Err(err) => err.as_response_error().status_code(),
        };
        span.record("http.status", status.as_u16());
    }
}

/// Records the request in `metrics` and writes the access log line.
pub fn observe(metrics: &Metrics, method: &str, route: &str, status: u16, started: Instant) {
    let elapsed = started.elapsed();
    metrics.observe_request(method, route, status, elapsed);
    let ms = elapsed.as_secs_f64() * 1000.0;
    if status >= 500 {
        tracing::warn!(http.status = status, latency_ms = ms, "request failed");
    } else {
        tracing::info!(http.status = status, latency_ms = ms, "request");
    }
}

/// Replaces the body of an error response that is not problem+json (those
/// made by actix itself: unknown method, unreadable request…) with one.
pub fn problem_bodies(res: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let is_problem = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if is_problem {
        return res;
    }
    let allow = res.headers().get(header::ALLOW).cloned();
    let problem = if status == actix_web::http::StatusCode::NOT_FOUND {
        Problem::no_route(res.request().path())
    } else {
        Problem::for_status(status)
    };
    let (req, _) = res.into_parts();
    let mut response = problem.error_response();
    if let Some(allow) = allow {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    ServiceResponse::new(req, response)
}
