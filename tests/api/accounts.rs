//! Accounts: register, login, refresh rotation, logout, /me, tokens, rate limits.

use base64::Engine;
use serde_json::json;

use crate::both_backends;
use crate::support::{Backend, SECRET, TestApp, TestConfig};

fn b64(value: &serde_json::Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn signed(claims: &serde_json::Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap()
}

both_backends! {
    async fn register_returns_201_with_a_session(app: TestApp) {
        let reply = app
            .post("/api/v1/auth/register", &json!({"username": "Alice_1", "password": "password1"}), None)
            .await;
        reply.expect(201);
        let body = &reply.body;
        assert_eq!(body["player"]["username"], "Alice_1");
        assert_eq!(body["player"]["role"], "player");
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["expires_in"], 900);
        assert!(body["player"]["created_at"].as_str().unwrap().ends_with('Z'));
        let token = body["access_token"].as_str().unwrap();
        let me = app.get("/api/v1/me", Some(token)).await;
        me.expect(200);
        assert_eq!(me.body["username"], "Alice_1");
        assert_eq!(me.body["id"], body["player"]["id"]);
    }

    async fn register_returns_409_when_the_name_is_taken_ignoring_case(app: TestApp) {
        app.register("bob").await;
        let reply = app
            .post("/api/v1/auth/register", &json!({"username": "BoB", "password": "password1"}), None)
            .await;
        reply.expect_problem(409, "username_taken");
    }

    async fn register_refuses_bad_usernames_and_passwords_with_422(app: TestApp) {
        for (username, password, field) in [
            ("ab", "password1", "username"),
            ("x".repeat(25).as_str(), "password1", "username"),
            ("émile", "password1", "username"),
            ("名前です", "password1", "username"),
            ("has space", "password1", "username"),
            ("good_name", "short", "password"),
            ("good_name", "p".repeat(129).as_str(), "password"),
        ] {
            let reply = app
                .post("/api/v1/auth/register", &json!({"username": username, "password": password}), None)
                .await;
            reply.expect_problem(422, "validation_failed");
            let fields: Vec<&str> = reply.body["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["field"].as_str().unwrap())
                .collect();
            assert_eq!(fields, [field], "{username:?} / {password:?}: {}", reply.text);
        }
        // Both wrong: both reported.
        let reply = app
            .post("/api/v1/auth/register", &json!({"username": "a", "password": "b"}), None)
            .await;
        reply.expect_problem(422, "validation_failed");
        assert_eq!(reply.body["errors"].as_array().unwrap().len(), 2);
        // 24 characters and 128-character (non-ASCII) passwords are fine.
        app.post(
            "/api/v1/auth/register",
            &json!({"username": "y".repeat(24), "password": "é".repeat(128)}),
            None,
        )
        .await
        .expect(201);
    }

    async fn bad_bodies_get_400_422_or_413(app: TestApp) {
        let path = "/api/v1/auth/register";
        app.call_raw("POST", path, None, None, &[]).await.expect_problem(400, "malformed_json");
        app.call_raw("POST", path, Some(String::new()), None, &[]).await.expect_problem(400, "malformed_json");
        app.call_raw("POST", path, Some("{\"username\":".into()), None, &[]).await.expect_problem(400, "malformed_json");
        app.call_raw("POST", path, Some("not json".into()), None, &[]).await.expect_problem(400, "malformed_json");
        let reply = app.call_raw("POST", path, Some("{\"username\": 7, \"password\": \"password1\"}".into()), None, &[]).await;
        reply.expect_problem(422, "validation_failed");
        assert_eq!(reply.body["errors"][0]["field"], "username");
        let reply = app.call_raw("POST", path, Some("{\"username\": \"abc\"}".into()), None, &[]).await;
        reply.expect_problem(422, "validation_failed");
        assert_eq!(reply.body["errors"][0]["field"], "password");
        app.call_raw("POST", path, Some("[]".into()), None, &[]).await.expect_problem(422, "validation_failed");
        app.call_raw("POST", path, Some("null".into()), None, &[]).await.expect_problem(422, "validation_failed");
        let big = json!({"username": "abc", "password": "x".repeat(17 * 1024)}).to_string();
        app.call_raw("POST", path, Some(big), None, &[]).await.expect_problem(413, "payload_too_large");
        // Nothing was written by any of these.
        app.post("/api/v1/auth/login", &json!({"username": "abc", "password": "password1"}), None)
            .await
            .expect_problem(401, "invalid_credentials");
    }

    async fn login_accepts_the_right_password_and_any_case_of_the_name(app: TestApp) {
        let p = app.register("Carol").await;
        let reply = app
            .post("/api/v1/auth/login", &json!({"username": "carol", "password": p.password}), None)
            .await;
        reply.expect(200);
        assert_eq!(reply.body["player"]["username"], "Carol");
        assert_eq!(reply.body["player"]["id"], p.id);
        assert!(reply.body["refresh_token"].as_str().unwrap() != p.refresh);
    }

    async fn a_wrong_password_and_an_unknown_user_get_the_same_401(app: TestApp) {
        app.register("dave").await;
        let wrong = app
            .post("/api/v1/auth/login", &json!({"username": "dave", "password": "wrong password"}), None)
            .await;
        let unknown = app
            .post("/api/v1/auth/login", &json!({"username": "nobody", "password": "wrong password"}), None)
            .await;
        wrong.expect_problem(401, "invalid_credentials");
        unknown.expect_problem(401, "invalid_credentials");
        assert_eq!(wrong.text, unknown.text);
        let malformed = app
            .post("/api/v1/auth/login", &json!({"username": "名前", "password": ""}), None)
            .await;
        malformed.expect_problem(401, "invalid_credentials");
    }

    async fn refresh_rotates_and_a_reused_token_revokes_the_family(app: TestApp) {
        let p = app.register("erin").await;
        let first = app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None).await;
        first.expect(200);
        let second_token = first.body["refresh_token"].as_str().unwrap().to_owned();
        assert_ne!(second_token, p.refresh);
        app.get("/api/v1/me", first.body["access_token"].as_str()).await.expect(200);

        // The spent token again: refused, and the whole session is revoked.
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None)
            .await
            .expect_problem(401, "unauthorized");
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": second_token}), None)
            .await
            .expect_problem(401, "unauthorized");

        // Another login is a separate family and keeps working.
        let login = app
            .post("/api/v1/auth/login", &json!({"username": "erin", "password": p.password}), None)
            .await;
        let fresh = login.body["refresh_token"].as_str().unwrap();
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": fresh}), None).await.expect(200);
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": "made-up"}), None)
            .await
            .expect_problem(401, "unauthorized");
    }

    async fn logout_ends_the_session(app: TestApp) {
        let p = app.register("frank").await;
        app.post("/api/v1/auth/logout", &json!({"refresh_token": p.refresh}), None).await.expect(204);
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None)
            .await
            .expect_problem(401, "unauthorized");
        // Twice, or with an unknown token: still 204.
        app.post("/api/v1/auth/logout", &json!({"refresh_token": p.refresh}), None).await.expect(204);
        app.post("/api/v1/auth/logout", &json!({"refresh_token": "nope"}), None).await.expect(204);
        app.post("/api/v1/auth/logout", &json!({}), None).await.expect_problem(422, "validation_failed");
    }

    async fn me_refuses_missing_forged_expired_and_unsigned_tokens(app: TestApp) {
        let p = app.register("grace").await;
        let me = "/api/v1/me";
        let reply = app.get(me, None).await;
        reply.expect_problem(401, "unauthorized");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        app.get(me, Some("garbage")).await.expect_problem(401, "unauthorized");
        app.call_raw("GET", me, None, None, &[("authorization", "Basic abc")]).await.expect_problem(401, "unauthorized");

        let now = now_secs();
        let claims = json!({"sub": p.id, "role": "admin", "sid": "s", "iss": "uttt", "aud": "uttt-api", "iat": now, "exp": now + 600});
        app.get(me, Some(&signed(&claims, "some other secret entirely"))).await.expect_problem(401, "unauthorized");
        let unsigned = format!("{}.{}.", b64(&json!({"alg": "none", "typ": "JWT"})), b64(&claims));
        app.get(me, Some(&unsigned)).await.expect_problem(401, "unauthorized");
        let expired = json!({"sub": p.id, "role": "player", "sid": "s", "iss": "uttt", "aud": "uttt-api", "iat": now - 602, "exp": now - 2});
        app.get(me, Some(&signed(&expired, SECRET))).await.expect_problem(401, "unauthorized");
        // Tampered payload with the original signature.
        let mut parts: Vec<String> = p.token.split('.').map(str::to_owned).collect();
        parts[1] = b64(&claims);
        app.get(me, Some(&parts.join("."))).await.expect_problem(401, "unauthorized");
        // A well-signed token for someone who does not exist.
        let ghost = json!({"sub": "nobody", "role": "player", "sid": "s", "iss": "uttt", "aud": "uttt-api", "iat": now, "exp": now + 600});
        app.get(me, Some(&signed(&ghost, SECRET))).await.expect_problem(401, "unauthorized");
        // Without this server's issuer and audience, or living longer than it
        // issues tokens for (900 s), a well-signed token is refused.
        for (key, value) in [("iss", json!("elsewhere")), ("aud", json!("another-api")), ("exp", json!(now + 3600))] {
            let mut odd = claims.clone();
            odd[key] = value;
            app.get(me, Some(&signed(&odd, SECRET))).await.expect_problem(401, "unauthorized");
        }
        // And the real one works, with the role from the database, not the token.
        let forged_role = signed(&claims, SECRET);
        let reply = app.get(me, Some(&forged_role)).await;
        reply.expect(200);
        assert_eq!(reply.body["role"], "player");
    }

    async fn a_deleted_players_token_is_refused(app: TestApp) {
        let p = app.register("heidi").await;
        app.get("/api/v1/me", Some(&p.token)).await.expect(200);
        let id = p.id.clone();
        app.ctx.db.run(move |conn| uttt::store::players::delete(conn, &id)).await.unwrap();
        app.get("/api/v1/me", Some(&p.token)).await.expect_problem(401, "unauthorized");
        app.post("/api/v1/auth/refresh", &json!({"refresh_token": p.refresh}), None)
            .await
            .expect_problem(401, "unauthorized");
    }

    async fn a_deleted_players_token_cannot_move(app: TestApp) {
        let (x, o) = (app.register("kevin").await, app.register("laura").await);
        let id = app.room_match(&x, &o, 2, json!({"kind": "none"})).await;
        app.play(&x, &id, 0, "4.4").await.expect(200);
        app.play(&o, &id, 1, "4.0").await.expect(200);
        let gone = x.id.clone();
        app.ctx.db.run(move |conn| uttt::store::players::delete(conn, &gone)).await.unwrap();
        // The move is taken from the token without a look-up; every answer
        // to it still says first that the player is gone.
        app.play(&x, &id, 2, "0.4").await.expect_problem(401, "unauthorized");
        app.play(&x, &id, 0, "4.4").await.expect_problem(401, "unauthorized");
        app.play(&x, "no-such-match", 2, "0.4").await.expect_problem(401, "unauthorized");
        let bad_lag = json!({"ply": 2, "address": [0, 4], "lag_ms": -1});
        app.post(&format!("/api/v1/matches/{id}/moves"), &bad_lag, Some(&x.token))
            .await
            .expect_problem(401, "unauthorized");
        // A player who exists but is not seated is refused as before.
        let other = app.register("mallory").await;
        app.play(&other, &id, 2, "0.4").await.expect_problem(403, "forbidden");
    }

    async fn deleting_a_player_empties_their_seats_and_keeps_their_matches(app: TestApp) {
        let (x, o) = (app.register("nadia").await, app.register("oscar").await);
        // Nadia sits X in a finished match and O in an unfinished one.
        let done = app.room_match(&x, &o, 1, json!({"kind": "none"})).await;
        app.play_script(&x, &o, &done, &["0", "3", "1", "4", "2"]).await;
        let open = app.room_match(&o, &x, 1, json!({"kind": "none"})).await;
        let gone = x.id.clone();
        let deleted = app.ctx.db.run(move |conn| uttt::store::players::delete(conn, &gone)).await.unwrap();
        assert!(deleted);
        for (id, kept_x, kept_o) in [(&done, None, Some(o.id.clone())), (&open, Some(o.id.clone()), None)] {
            let id = id.clone();
            let row = app.ctx.db.run(move |conn| uttt::store::matches::get(conn, &id)).await.unwrap().unwrap();
            let seats = (row.x_player_id.map(|p| p.to_string()), row.o_player_id.map(|p| p.to_string()));
            assert_eq!(seats, (kept_x, kept_o), "only the deleted player's seat is empty");
        }
        // Oscar's record keeps the finished match.
        let list = app.get("/api/v1/players/oscar/matches", Some(&o.token)).await;
        list.expect(200);
        assert_eq!(list.body["items"][0]["id"], done.as_str());
        app.get(&format!("/api/v1/matches/{done}"), Some(&o.token)).await.expect(200);
        let again = x.id.clone();
        assert!(!app.ctx.db.run(move |conn| uttt::store::players::delete(conn, &again)).await.unwrap());
    }

    async fn admin_promotion_changes_the_role(app: TestApp) {
        let p = app.register("ivan").await;
        let name = p.username.clone();
        app.ctx
            .db
            .run(move |conn| {
                uttt::service::accounts::set_role(conn, &name.to_uppercase(), uttt::service::accounts::Role::Admin)
            })
            .await
            .unwrap();
        let reply = app.get("/api/v1/me", Some(&p.token)).await;
        assert_eq!(reply.body["role"], "admin");
        let missing = app
            .ctx
            .db
            .run(|conn| uttt::service::accounts::set_role(conn, "nobody", uttt::service::accounts::Role::Admin))
            .await;
        assert!(missing.is_err());
    }
}

async fn rate_limited_app(backend: Backend) -> Option<TestApp> {
    let mut config = TestConfig::new(backend)?;
    config.config.rate_limits.login_per_username.limit = 3;
    config.config.rate_limits.register_per_address.limit = 2;
    Some(TestApp::start(config).await)
}

async fn check_login_rate_limit(app: TestApp) {
    let p = app.register("judy").await;
    for _ in 0..3 {
        app.post(
            "/api/v1/auth/login",
            &json!({"username": "judy", "password": "wrong password"}),
            None,
        )
        .await
        .expect_problem(401, "invalid_credentials");
    }
    // Over the limit: even the right password waits, and the case of the name does not help.
    let reply = app
        .post(
            "/api/v1/auth/login",
            &json!({"username": "JUDY", "password": p.password}),
            None,
        )
        .await;
    reply.expect_problem(429, "rate_limited");
    let retry: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // Another name is not affected.
    app.post(
        "/api/v1/auth/login",
        &json!({"username": "other", "password": "wrong password"}),
        None,
    )
    .await
    .expect_problem(401, "invalid_credentials");
}

async fn check_register_rate_limit(app: TestApp) {
    // Two registrations per address are allowed in a window; the third is refused.
    app.register("kim1").await;
    app.register("kim2").await;
    app.post(
        "/api/v1/auth/register",
        &json!({"username": "kim3", "password": "password1"}),
        None,
    )
    .await
    .expect_problem(429, "rate_limited");
}

#[actix_web::test]
async fn login_is_rate_limited_per_username_on_sqlite() {
    check_login_rate_limit(rate_limited_app(Backend::Sqlite).await.unwrap()).await;
}

#[actix_web::test]
async fn login_is_rate_limited_per_username_on_postgres() {
    if let Some(app) = rate_limited_app(Backend::Postgres).await {
        check_login_rate_limit(app).await;
    }
}

#[actix_web::test]
async fn register_is_rate_limited_per_address_on_sqlite() {
    check_register_rate_limit(rate_limited_app(Backend::Sqlite).await.unwrap()).await;
}

#[actix_web::test]
async fn register_is_rate_limited_per_address_on_postgres() {
    if let Some(app) = rate_limited_app(Backend::Postgres).await {
        check_register_rate_limit(app).await;
    }
}
