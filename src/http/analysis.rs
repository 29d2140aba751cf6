//! `/api/v1/matches/{id}/analysis`: engine analysis of a finished match.

use actix_web::{HttpResponse, get, post, web};

use super::auth::Authenticated;
use super::problem::{Problem, ProblemBody};
use crate::service::Context;
use crate::service::analysis::{self, AnalysisView, Queued, Requested};

/// Asks for the CPU's analysis of a finished match (a seated player or an
/// admin). It is computed once, in the background, one analysis at a time
/// per instance (`UTTT_ANALYSIS_MS_PER_POSITION` of thought per position);
/// follow it with `GET`.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "Already analysed: the analysis", body = AnalysisView),
        (status = 202, description = "Queued (or already queued or running): `position` is how many analyses a worker takes before this one", body = Queued),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: neither a player of the match nor an admin", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 409, description = "`match_not_finished`: the match is still being played (with `match_id`)", body = ProblemBody, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: the analysis queue is full (`UTTT_ANALYSIS_QUEUE` analyses queued or running over all instances); see `Retry-After`", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/analysis")]
pub async fn request_analysis(
    ctx: web::Data<Context>,
    Authenticated(player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    Ok(
        match analysis::request(&ctx, &player, id.into_inner()).await? {
            Requested::Done(view) => HttpResponse::Ok().json(view),
            Requested::Pending(queued) => HttpResponse::Accepted().json(queued),
        },
    )
}

/// The analysis of a match as far as it has come: `progress` while it runs,
/// the moves judged so far in `plies`.
#[utoipa::path(
    tag = "matches",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Match id")),
    responses(
        (status = 200, description = "The analysis", body = AnalysisView),
        (status = 401, description = "`unauthorized`", body = ProblemBody, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such match, or nobody asked for its analysis", body = ProblemBody, content_type = "application/problem+json"),
    )
)]
#[get("/{id}/analysis")]
pub async fn get_analysis(
    ctx: web::Data<Context>,
    Authenticated(_player): Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, Problem> {
    let view = analysis::get(&ctx, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(view))
}
