//! The checked-in OpenAPI document is what the code generates.

use crate::support::{Backend, TestApp};

const CHECKED_IN: &str = include_str!("../../openapi/openapi.json");

#[test]
fn the_checked_in_openapi_document_matches_the_code() {
    let generated = uttt::http::openapi::document_json().unwrap();
    if generated != CHECKED_IN {
        if std::env::var("UPDATE_OPENAPI").is_ok() {
            std::fs::write(
                concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json"),
                &generated,
            )
            .unwrap();
            return;
        }
        panic!(
            "openapi/openapi.json is out of date: regenerate it with \
             `cargo run -- openapi > openapi/openapi.json` (or UPDATE_OPENAPI=1 cargo test openapi)"
        );
    }
}

#[actix_web::test]
async fn the_served_document_is_the_checked_in_one() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let served = app.get("/openapi.json", None).await.body;
    let checked_in: serde_json::Value = serde_json::from_str(CHECKED_IN).unwrap();
    assert_eq!(served, checked_in);
}

#[test]
fn every_error_code_of_api_md_is_documented() {
    let codes = [
        "validation_failed",
        "malformed_json",
        "unauthorized",
        "invalid_credentials",
        "forbidden",
        "not_found",
        "username_taken",
        "rate_limited",
        "payload_too_large",
        "unavailable",
        "already_joined",
        "tournament_full",
        "tournament_closed",
        "not_enough_players",
        "already_queued",
        "already_matched",
        "in_active_match",
        "not_your_turn",
        "stale_ply",
        "match_over",
        "illegal_move",
        "berserk_not_allowed",
        "challenge_not_pending",
        "has_rated_games",
    ];
    for code in codes {
        assert!(
            CHECKED_IN.contains(&format!("`{code}`")),
            "openapi.json does not mention `{code}`"
        );
    }
}

#[test]
fn the_codes_of_the_security_limits_are_documented() {
    for code in [
        "too_many_practice_matches",
        "too_many_open_rooms",
        "uri_too_long",
        "headers_too_large",
        "in_active_match",
    ] {
        assert!(
            CHECKED_IN.contains(&format!("`{code}`")),
            "openapi.json does not mention `{code}`"
        );
    }
}
