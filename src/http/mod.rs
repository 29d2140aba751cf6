//! The HTTP layer: routes, extractors, request/response types, the
//! error-to-problem+json mapping and OpenAPI generation. Handlers are thin:
//! extract → parse → one service call → response.

pub mod accounts;
pub mod admin;
pub mod analysis;
pub mod auth;
pub mod challenges;
pub mod events;
pub mod head_limits;
pub mod json;
pub mod ladders;
pub mod matches;
pub mod middleware;
pub mod openapi;
pub mod ops;
pub mod problem;
pub mod query;
pub mod rooms;
mod routes_table;
pub mod stream_guard;
pub mod tournaments;
mod versioned_stream;
pub mod web;

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpRequest, HttpResponse, ResponseError};
use tracing_actix_web::TracingLogger;
use utoipa_actix_web::service_config::ServiceConfig;
use utoipa_actix_web::{AppExt, scope};
use utoipa_swagger_ui::SwaggerUi;

use crate::service::Context;
use problem::Problem;

/// Every documented route.
pub fn routes(cfg: &mut ServiceConfig<'_>) {
    cfg.service(ops::healthz)
        .service(ops::readyz)
        .service(ops::metrics)
        .service(
            scope::scope("/api/v1/auth")
                .service(accounts::register)
                .service(accounts::login)
                .service(accounts::refresh)
                .service(accounts::logout),
        )
        .service(
            scope::scope("/api/v1/matches")
                .service(matches::create)
                .service(matches::get_match)
                .service(matches::play)
                .service(matches::resign)
                .service(matches::heartbeat)
                .service(matches::moves)
                .service(analysis::request_analysis)
                .service(analysis::get_analysis)
                .service(events::match_events),
        )
        .service(
            scope::scope("/api/v1/rooms")
                .service(rooms::create)
                .service(rooms::get_room)
                .service(rooms::join)
                .service(rooms::rematch),
        )
        .service(
            scope::scope("/api/v1/challenges")
                .service(challenges::create)
                .service(challenges::get_challenge)
                .service(challenges::accept)
                .service(challenges::decline)
                .service(challenges::cancel),
        )
        .service(
            scope::scope("/api/v1/tournaments")
                .service(tournaments::create)
                .service(tournaments::list)
                .service(tournaments::show)
                .service(tournaments::join)
                .service(tournaments::withdraw)
                .service(tournaments::start_tournament)
                .service(tournaments::cancel_tournament)
                .service(tournaments::remove)
                .service(tournaments::standings)
                .service(tournaments::round)
                .service(tournaments::games)
                .service(tournaments::berserk)
                .service(tournaments::export_games)
                .service(tournaments::events),
        )
        .service(
            scope::scope("/api/v1/ladders")
                .service(ladders::list)
                .service(ladders::leaderboard),
        )
        .service(
            scope::scope("/api/v1/matchmaking/tickets")
                .service(ladders::create_ticket)
                .service(ladders::get_ticket)
                .service(ladders::cancel_ticket),
        )
        .service(
            scope::scope("/api/v1/players")
                .service(ladders::profile)
                .service(admin::player_matches)
                .service(ladders::rating_history)
                .service(ladders::head_to_head),
        )
        .service(
            scope::scope("/api/v1/admin")
                .service(admin::list_matches)
                .service(admin::export)
                .service(admin::match_detail)
                .service(admin::search_players),
        )
        .service(
            scope::scope("/api/v1")
                .service(accounts::me)
                .service(matches::my_matches)
                .service(challenges::my_challenges)
                .service(accounts::make_bot)
                .service(accounts::get_preferences)
                .service(accounts::set_preferences)
                .service(events::my_events),
        );
}

async fn no_route(req: HttpRequest) -> Result<HttpResponse, Problem> {
    match routes_table::allowed_methods(req.path()) {
        Some(methods) => Err(Problem::method_not_allowed(&methods)),
        None => Err(Problem::no_route(req.path())),
    }
}

async fn docs_redirect() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header(("Location", "/docs/"))
        .finish()
}

/// The application for one HTTP worker.
pub fn app(
    ctx: actix_web::web::Data<Context>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let metrics = ctx.metrics.clone();
    App::new()
        .into_utoipa_app()
        .openapi(openapi::base())
        .app_data(ctx)
        .configure(routes)
        .openapi_service(|doc| SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", doc))
        .into_app()
        .route("/docs", actix_web::web::get().to(docs_redirect))
        .configure(web::routes)
        .default_service(actix_web::web::to(no_route))
        .wrap_fn(|req, srv| {
            let passed = match middleware::nul_refusal(&req) {
                Some(problem) => Err(req.into_response(problem.error_response())),
                None => Ok(srv.call(req)),
            };
            async move {
                match passed {
                    Ok(fut) => Ok(fut.await?.map_into_boxed_body()),
                    Err(refused) => Ok(refused),
                }
            }
        })
        .wrap_fn(|req, srv| {
            let fut = srv.call(req);
            async move { Ok(middleware::problem_bodies(fut.await?.map_into_boxed_body())) }
        })
        .wrap_fn(move |req, srv| {
            let started = Instant::now();
            let method = req.method().to_string();
            let metrics = metrics.clone();
            let fut = srv.call(req);
            async move {
                let res = fut.await?;
                let route = res
                    .request()
                    .match_pattern()
                    .unwrap_or_else(|| "unmatched".into());
                middleware::observe(&metrics, &method, &route, res.status().as_u16(), started);
                Ok(res)
            }
        })
        .wrap(TracingLogger::<middleware::RequestSpan>::new())
}
