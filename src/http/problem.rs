//! Errors as `application/problem+json` (RFC 9457) with a stable `code`.
//! Internal causes are logged once here and never sent to the client.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::service::{ConflictCode, Error, FieldError};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error response (boxed: it travels in every `Result` of the HTTP layer).
#[derive(Debug, Clone)]
pub struct Problem(Box<Inner>);

#[derive(Debug, Clone)]
struct Inner {
    status: StatusCode,
    code: &'static str,
    title: &'static str,
    detail: String,
    extra: Map<String, Value>,
    retry_after_secs: Option<u64>,
    allow: Option<String>,
}

/// The body of an error response, as documented in the OpenAPI spec.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Problem)]
pub struct ProblemBody {
    /// A URI naming the problem type: `urn:uttt:problem:<code>`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the problem type.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong in this case.
    pub detail: String,
    /// Stable machine-readable code (see API.md).
    #[schema(example = "validation_failed")]
    pub code: String,
    /// With `validation_failed`: what is wrong with which field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldErrorBody>>,
    /// With `stale_ply`: the number of moves already played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_ply: Option<u32>,
    /// With `illegal_move`: `bad_address`, `cell_occupied`, `wrong_board` or `board_closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `already_matched`, `in_active_match` and `match_in_progress`: the match concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// With `already_queued`: the live ticket.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket_id: Option<String>,
    /// With `challenge_not_pending`: `accepted`, `declined`, `cancelled` or `expired`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge_status: Option<String>,
    /// With `tournament_closed`: `running`, `finished` or `cancelled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tournament_status: Option<String>,
    /// With `already_joined` from `POST /me/bot`: the tournament entered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tournament_id: Option<String>,
}

/// One field error in a `validation_failed` problem.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = FieldError)]
pub struct FieldErrorBody {
    /// The field, as a dotted path into the request body (or the query parameter's name).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl Problem {
    /// A problem with a status, code, title and detail.
    pub fn new(
        status: StatusCode,
        code: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem(Box::new(Inner {
            status,
            code,
            title,
            detail: detail.into(),
            extra: Map::new(),
            retry_after_secs: None,
            allow: None,
        }))
    }

    /// Adds a member to the body.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Problem {
        self.0.extra.insert(key.to_owned(), value.into());
        self
    }

    /// 400 `malformed_json`.
    pub fn malformed_json(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "Malformed JSON",
            detail,
        )
    }

    /// 422 `validation_failed` listing the field errors.
    pub fn validation(errors: &[FieldError]) -> Problem {
        let list: Vec<Value> = errors
            .iter()
            .map(|e| serde_json::json!({"field": e.field, "message": e.message}))
            .collect();
        let detail = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; ");
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
            "Validation failed",
            detail,
        )
        .with("errors", Value::Array(list))
    }

    /// 413 `payload_too_large`.
    pub fn payload_too_large(limit: usize) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "Payload too large",
            format!("the request body is larger than {limit} bytes"),
        )
    }

    /// 404 `not_found` for a path that names nothing.
    pub fn no_route(path: &str) -> Problem {
        Problem::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "Not found",
            format!("no resource at {path}"),
        )
    }

    /// 405 `method_not_allowed` with the `Allow` header.
    pub fn method_not_allowed(methods: &[&str]) -> Problem {
        let allow = methods.join(", ");
        let mut p = Problem::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "Method not allowed",
            format!("this resource accepts {allow}"),
        );
        p.0.allow = Some(allow);
        p
    }

    /// 409 with `code`.
    fn conflict(code: ConflictCode, detail: impl Into<String>) -> Problem {
        let title = match code {
            ConflictCode::UsernameTaken => "Username taken",
            ConflictCode::NotYourTurn => "Not your turn",
            ConflictCode::StalePly => "Stale ply",
            ConflictCode::MatchOver => "Match over",
            _ => "Conflict",
        };
        Problem::new(StatusCode::CONFLICT, code.as_str(), title, detail)
    }

    /// A problem for an error status that a lower layer produced without a body.
    pub fn for_status(status: StatusCode) -> Problem {
        let (code, title) = match status {
            StatusCode::NOT_FOUND => ("not_found", "Not found"),
            StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "Method not allowed"),
            StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "Payload too large"),
            StatusCode::UNAUTHORIZED => ("unauthorized", "Unauthorized"),
            StatusCode::FORBIDDEN => ("forbidden", "Forbidden"),
            StatusCode::SERVICE_UNAVAILABLE => ("unavailable", "Service unavailable"),
            s if s.is_server_error() => ("internal", "Internal server error"),
            _ => ("bad_request", "Bad request"),
        };
        let detail = status.canonical_reason().unwrap_or("error").to_owned();
        Problem::new(status, code, title, detail)
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        self.0.code
    }

    fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert(
            "type".into(),
            format!("urn:uttt:problem:{}", self.0.code).into(),
        );
        body.insert("title".into(), self.0.title.into());
        body.insert("status".into(), self.0.status.as_u16().into());
        body.insert("detail".into(), self.0.detail.clone().into());
        body.insert("code".into(), self.0.code.into());
        // An extension member never replaces a member RFC 9457 defines (or
        // `code`): clients decode `status` as the HTTP status, an integer.
        for (k, v) in &self.0.extra {
            body.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(body)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.0.status.as_u16(),
            self.0.code,
            self.0.detail
        )
    }
}

impl ResponseError for Problem {
    fn status_code(&self) -> StatusCode {
        self.0.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.0.status);
        res.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.0.retry_after_secs {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        if let Some(allow) = &self.0.allow {
            res.insert_header((header::ALLOW, allow.as_str()));
        }
        if self.0.status == StatusCode::UNAUTHORIZED {
            res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
        }
        res.body(self.body().to_string())
    }
}

impl From<Error> for Problem {
    fn from(err: Error) -> Self {
        match err {
            Error::Validation(errors) => Problem::validation(&errors),
            Error::InvalidCredentials => Problem::new(
                StatusCode::UNAUTHORIZED,
                "invalid_credentials",
                "Invalid credentials",
                "the username or password is wrong",
            ),
            Error::Unauthorized(why) => Problem::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Unauthorized",
                why,
            ),
            Error::Forbidden(why) => {
                Problem::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden", why)
            }
            Error::NotFound(what) => Problem::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "Not found",
                format!("no such {what}"),
            ),
            Error::UsernameTaken => Problem::conflict(
                ConflictCode::UsernameTaken,
                "a player with that username exists (names are compared ignoring case)",
            ),
            Error::RateLimited { retry_after_secs } => {
                let mut p = Problem::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "Too many requests",
                    format!("too many attempts; retry after {retry_after_secs} s"),
                )
                .with("retry_after", retry_after_secs);
                p.0.retry_after_secs = Some(retry_after_secs);
                p
            }
            Error::NotYourTurn => {
                Problem::conflict(ConflictCode::NotYourTurn, "the other seat is to move")
            }
            Error::StalePly { current_ply } => Problem::conflict(
                ConflictCode::StalePly,
                format!("the match is at ply {current_ply}; reload it and try again"),
            )
            .with("current_ply", current_ply),
            Error::MatchOver(why) => Problem::conflict(ConflictCode::MatchOver, why),
            Error::IllegalMove(reason) => Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "illegal_move",
                "Illegal move",
                format!("the rules refuse this move: {reason}"),
            )
            .with("reason", reason.code()),
            Error::Conflict {
                code,
                detail,
                related,
            } => {
                let p = Problem::conflict(code, detail);
                match related {
                    Some((key, id)) => p.with(key, id),
                    None => p,
                }
            }
            Error::Unavailable(cause) => {
                tracing::warn!(error = %cause, "dependency unavailable");
                Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "Service unavailable",
                    "a backing service is unavailable; try again shortly",
                )
            }
            Error::Internal(cause) => {
                tracing::error!(error = %cause, "internal error");
                Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "Internal server error",
                    "an unexpected error occurred",
                )
            }
        }
    }
}
