//! `/api/v1/admin/*` (role `admin` only) and `/api/v1/players/{username}/matches`.

use std::convert::Infallible;

use actix_web::web::Bytes;
use actix_web::{HttpResponse, get, web};
use futures_util::stream;
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::{Admin, Authenticated};
use super::problem::{Problem, ProblemBody};
use super::query::{Pagination, QueryParams};
use crate::service::admin::{
    self, AdminMatch, AdminMatchDetail, AdminPlayer, ExportRecord, HistoryQuery,
};
use crate::service::matches::{self, MatchSummary, Page};
use crate::service::{Context, Error, FieldError, cursor};
use crate::store::history::MatchFilter;
use crate::store::kinds::{EndReason, MatchStatus, Mode};
use crate::time::parse_rfc3339;

/// The filters of the match history (all optional, combined with AND).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryFilters {
    /// A seated player, by username (any case). Only a username: ids go in `player_id`.
    pub player: Option<String>,
    /// A seated player, by id. With `player` as well, both must name the same player.
    pub player_id: Option<String>,
    /// Ladder id.
    pub ladder: Option<String>,
    /// `ranked`, `casual`, `practice` or `tournament`.
    pub mode: Option<String>,
    /// `active` or `finished`.
    pub status: Option<String>,
    /// `x`, `o` or `draw`.
    pub result: Option<String>,
    /// `three_in_a_row`, `draw`, `timeout` or `resignation`.
    pub reason: Option<String>,
    /// Made at or after this time (RFC 3339).
    pub from: Option<String>,
    /// Made before this time (RFC 3339).
    pub to: Option<String>,
}

fn one_of(
    query: &QueryParams,
    name: &str,
    allowed: &[&str],
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let value = query.get(name)?;
    if allowed.contains(&value) {
        Some(value.to_owned())
    } else {
        errors.push(FieldError::new(
            name,
            format!("must be one of {}", allowed.join(", ")),
        ));
        None
    }
}

/// A filter naming one variant of a stored kind, by its text.
fn kind<T: Copy>(
    query: &QueryParams,
    name: &str,
    all: &[T],
    text: fn(T) -> &'static str,
    errors: &mut Vec<FieldError>,
) -> Option<T> {
    let texts: Vec<&str> = all.iter().map(|&k| text(k)).collect();
    let value = one_of(query, name, &texts, errors)?;
    all.iter().copied().find(|&k| text(k) == value)
}

fn time(query: &QueryParams, name: &str, errors: &mut Vec<FieldError>) -> Option<i64> {
    let value = query.get(name)?;
    let parsed = parse_rfc3339(value);
    if parsed.is_none() {
        errors.push(FieldError::new(
            name,
            "must be an RFC 3339 time such as 2026-12-01T00:00:00Z",
        ));
    }
    parsed
}

/// Parses the history filters (the service resolves the username of `player`).
fn filters(query: &QueryParams, errors: &mut Vec<FieldError>) -> HistoryQuery {
    let mut filter = MatchFilter {
        player_id: None,
        ladder: None,
        mode: kind(query, "mode", Mode::ALL, Mode::as_str, errors),
        status: kind(
            query,
            "status",
            MatchStatus::ALL,
            MatchStatus::as_str,
            errors,
        ),
        result: one_of(query, "result", &["x", "o", "draw"], errors),
        reason: kind(query, "reason", EndReason::ALL, EndReason::as_str, errors),
        from: time(query, "from", errors),
        to: time(query, "to", errors),
    };
    if let Some(ladder) = query.get("ladder") {
        let ok = (1..=32).contains(&ladder.len())
            && ladder
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            filter.ladder = Some(ladder.to_owned());
        } else {
            errors.push(FieldError::new(
                "ladder",
                "must be a ladder id (1-32 of a-z, 0-9, -)",
            ));
        }
    }
    if let (Some(from), Some(to)) = (filter.from, filter.to)
        && from > to
    {
        errors.push(FieldError::new("to", "must not be before `from`"));
    }
    // Names and ids are separate filters: a username may look like an id.
    let by_id = query.get("player_id").map(str::to_owned);
    if by_id
        .as_deref()
        .is_some_and(|id| !(1..=64).contains(&id.len()))
    {
        errors.push(FieldError::new("player_id", "must be a player id"));
    }
    let player_name = match query.get("player") {
        Some(name) if (1..=64).contains(&name.len()) => Some(name.to_owned()),
        Some(_) => {
            errors.push(FieldError::new("player", "must be a username"));
            None
        }
        None => None,
    };
    filter.player_id = by_id;
    HistoryQuery {
        filter,
        player_name,
    }
}

/// The match history, newest first, with every filter of the API. Cursors
/// stay correct while new matches arrive.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(HistoryFilters, Pagination),
    responses(
        (status = 200, description = "A page of matches", body = Page<AdminMatch>),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an admin", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`: a bad filter value", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/matches")]
pub async fn list_matches(
    ctx: web::Data<Context>,
    _admin: Admin,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(cursor::decode_keyset, &mut errors);
    let history = filters(&query, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    Ok(HttpResponse::Ok().json(admin::list(&ctx, history, after, page.limit).await?))
}

/// The history as newline-delimited JSON, one match per line with its moves
/// in text notation (see `ExportRecord`); same filters, newest first. Check
/// an export with `uttt replay FILE`.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(HistoryFilters),
    responses(
        (status = 200, description = "One `ExportRecord` per line", content_type = "application/x-ndjson", body = ExportRecord),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: not an admin", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/matches/export")]
pub async fn export(
    ctx: web::Data<Context>,
    _admin: Admin,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let history = filters(&query, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let filter = admin::resolve(&ctx, history).await?;
    // Fetch the first batch before answering, so a database failure is a 503, not a cut stream.
    let first = admin::export_batch(&ctx, filter.clone(), None).await?;
    let body = stream::unfold(Some((ctx, filter, Some(first))), |state| async move {
        let (ctx, filter, ready) = state?;
        let (lines, next) = match ready {
            Some(batch) => batch,
            None => return None,
        };
        let bytes = Bytes::from(lines.concat());
        let following = match next {
            Some(after) => match admin::export_batch(&ctx, filter.clone(), Some(after)).await {
                Ok(batch) => Some((ctx, filter, Some(batch))),
                Err(err) => {
                    tracing::error!(error = %err, "export stopped early");
                    None
                }
            },
            None => None,
        };
        Some((Ok::<_, Infallible>(bytes), following))
    });
    Ok(HttpResponse::Ok()
        .content_type("application/x-ndjson")
        .streaming(body))
}

/// One match with its full move list, clocks and rating changes.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "The match", body = AdminMatchDetail),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/matches/{id}")]
pub async fn match_detail(
    ctx: web::Data<Context>,
    _admin: Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(HttpResponse::Ok().json(admin::detail(&ctx, id.into_inner()).await?))
}

/// The prefix of a username to search.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlayerQuery {
    /// Username prefix, ignoring case (1 to 24 of A-Z a-z 0-9 _ -).
    pub query: String,
}

/// Players by username prefix, by name.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(PlayerQuery, Pagination),
    responses(
        (status = 200, description = "A page of players", body = Page<AdminPlayer>),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/players")]
pub async fn search_players(
    ctx: web::Data<Context>,
    _admin: Admin,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(admin::decode_player_cursor, &mut errors);
    let prefix = query.get("query").unwrap_or_default().to_owned();
    let ok = (1..=24).contains(&prefix.len())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        errors.push(FieldError::new(
            "query",
            "must be 1 to 24 of A-Z a-z 0-9 _ -",
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    Ok(HttpResponse::Ok().json(admin::players(&ctx, prefix, after, page.limit).await?))
}

/// A player's finished matches, newest first (any logged-in player may look).
#[utoipa::path(
    tag = "ladders",
    security(("bearer" = [])),
    params(("username" = String, Path, description = "Username (any case)"), Pagination),
    responses(
        (status = 200, description = "A page of matches", body = Page<MatchSummary>),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 422, description = "`validation_failed`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{username}/matches")]
pub async fn player_matches(
    ctx: web::Data<Context>,
    _viewer: Authenticated,
    username: web::Path<String>,
    query: QueryParams,
) -> Result<HttpResponse, Problem> {
    let mut errors = Vec::new();
    let page = query.pagination(&mut errors);
    let after = page.cursor(cursor::decode_keyset, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let list = matches::finished_of(&ctx, username.into_inner(), after, page.limit).await?;
    Ok(HttpResponse::Ok().json(list))
}
