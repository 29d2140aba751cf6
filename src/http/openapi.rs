//! The OpenAPI document: generated from the handlers' annotations and checked
//! in as `openapi/openapi.json` (a test keeps the two equal; regenerate with
//! `cargo run -- openapi > openapi/openapi.json`).

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "uttt",
        description = "The ranked Ultimate Tic-Tac-Toe server: accounts, matches at depths 1 to 4 \
                       under clocks, matchmaking, Glicko-2 ladders, CPU opponents.\n\n\
                       Errors are `application/problem+json` with a stable `code`. Times are RFC 3339 UTC; \
                       durations are integer milliseconds.\n\n\
                       | status | code | meaning |\n|---|---|---|\n\
                       | 400 | `malformed_json` | the body is not JSON |\n\
                       | 401 | `unauthorized` | no valid access token (or refresh token) |\n\
                       | 401 | `invalid_credentials` | wrong username or password |\n\
                       | 403 | `forbidden` | not allowed for this player |\n\
                       | 404 | `not_found` | no such resource |\n\
                       | 405 | `method_not_allowed` | see the `Allow` header |\n\
                       | 409 | `username_taken` | the name exists, ignoring case |\n\
                       | 409 | `too_many_practice_matches` | the player has the most unfinished practice matches allowed |\n\
                       | 409 | `too_many_open_rooms` | the player has the most rooms nobody joined yet allowed |\n\
                       | 409 | `has_rated_games` | the account played rated games as a human, so it cannot become a bot |\n\
                       | 409 | `challenge_not_pending` | the challenge was already answered, cancelled or expired (see `challenge_status`) |\n\
                       | 409 | `already_joined` | the player already entered the tournament (from `POST /me/bot`: a tournament not over yet rated on a ladder closed to bots; see `tournament_id`) |\n\
                       | 409 | `tournament_full` | the tournament has all the players it takes |\n\
                       | 409 | `tournament_closed` | the tournament no longer takes this (a Swiss after round 1 started, or finished or cancelled; see `tournament_status`) |\n\
                       | 409 | `not_enough_players` | a tournament needs two players to start |\n\
                       | 409 | `berserk_not_allowed` | berserk after your first move, without a clock, or outside a running arena |\n\
                       | 413 | `payload_too_large` | the body is over 16 KiB |\n\
                       | 414 | `uri_too_long` | the request line is over 8 KiB (any path) |\n\
                       | 422 | `validation_failed` | see `errors`: a list of `{field, message}` |\n\
                       | 429 | `rate_limited` | see the `Retry-After` header (logins, registrations, room look-ups, open event streams, pending challenges) |\n\
                       | 431 | `headers_too_large` | the request head is over 64 KiB or has over 96 headers (any path) |\n\
                       | 500 | `internal` | a bug; details are logged, never sent |\n\
                       | 503 | `unavailable` | the database or Redis is down; retry |",
        license(name = "MIT"),
    ),
    modifiers(&Security),
    tags(
        (name = "accounts", description = "Register, log in, tokens"),
        (name = "matches", description = "Practice against the CPU, moves, clocks, resigning, live events"),
        (name = "rooms", description = "Casual games through a six-character code"),
        (name = "challenges", description = "Challenge a named player; bot accounts"),
        (name = "ladders", description = "Ladders, leaderboards, profiles and ratings (Glicko-2)"),
        (name = "matchmaking", description = "Queueing for ranked play"),
        (name = "tournaments", description = "Swiss and arena tournaments: registration, rounds, games, berserk, standings, export, live events"),
        (name = "admin", description = "Match history, export and player lookup (role `admin` only)"),
        (name = "operations", description = "Health, readiness, metrics"),
    ),
)]
struct BaseDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some("The `access_token` of a session. Event streams also accept `?access_token=`."))
                    .build(),
            ),
        );
    }
}

/// The base document (info, tags, security schemes) the routes are added to.
pub fn base() -> utoipa::openapi::OpenApi {
    BaseDoc::openapi()
}

/// The whole document, as served at `/openapi.json`.
pub fn document() -> utoipa::openapi::OpenApi {
    use utoipa_actix_web::AppExt;
    actix_web::App::new()
        .into_utoipa_app()
        .openapi(base())
        .configure(super::routes)
        .split_for_parts()
        .1
}

/// The document as pretty JSON with a final newline (the checked-in form).
///
/// # Errors
/// Serialisation failure (not expected).
pub fn document_json() -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&document())?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::ConflictCode;

    /// The descriptions of every 409 response of every operation.
    fn conflict_descriptions() -> Vec<String> {
        let doc = serde_json::to_value(document()).unwrap();
        let mut found = Vec::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for operation in item.as_object().unwrap().values() {
                if let Some(text) = operation["responses"]["409"]["description"].as_str() {
                    found.push(text.to_owned());
                }
            }
        }
        found
    }

    #[test]
    fn every_conflict_code_a_client_can_receive_is_in_a_409_response() {
        let descriptions = conflict_descriptions();
        for code in ConflictCode::ALL {
            let quoted = format!("`{code}`");
            let documented = descriptions.iter().any(|d| d.contains(&quoted));
            assert_eq!(
                documented,
                code.reaches_clients(),
                "{code}: documented in a 409 response = {documented}"
            );
        }
    }
}
