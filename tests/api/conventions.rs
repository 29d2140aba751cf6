//! API conventions: every error is problem+json with a stable code.

use serde_json::json;

use crate::both_backends;

both_backends! {
    async fn unknown_routes_get_a_404_problem(app: TestApp) {
        app.get("/nope", None).await.expect_problem(404, "not_found");
        app.get("/api/v1/nothing/here", None).await.expect_problem(404, "not_found");
    }

    async fn a_known_path_with_the_wrong_method_gets_405_with_allow(app: TestApp) {
        let reply = app.call("DELETE", "/api/v1/me", None, None).await;
        reply.expect_problem(405, "method_not_allowed");
        assert_eq!(reply.header("allow"), Some("GET"));
        let reply = app.call("GET", "/api/v1/auth/login", None, None).await;
        reply.expect_problem(405, "method_not_allowed");
        assert_eq!(reply.header("allow"), Some("POST"));
    }

    async fn text_holding_nul_is_bad_input_on_either_backend(app: TestApp) {
        // PostgreSQL refuses U+0000 in text; SQLite stores it. Either way the
        // client hears it is bad input, and nothing is written.
        let a = app.register("nulla").await;
        let field = |reply: &crate::support::Reply| reply.body["errors"][0]["field"].clone();
        let tc = json!({"kind": "per_turn", "turn_ms": 30000});
        let made = app.post("/api/v1/tournaments",
            &json!({"name": "Cup\u{0}", "kind": "swiss", "depth": 1, "rounds": 1, "time_control": tc}),
            Some(&a.token)).await;
        made.expect_problem(422, "validation_failed");
        assert_eq!(field(&made), "name");
        let listed = app.get("/api/v1/tournaments", Some(&a.token)).await;
        assert_eq!(listed.body["items"], json!([]), "nothing was written");
        let challenged = app.post("/api/v1/challenges",
            &json!({"username": "nullb\u{0}", "depth": 1, "time_control": tc}), Some(&a.token)).await;
        challenged.expect_problem(422, "validation_failed");
        assert_eq!(field(&challenged), "username");
        app.post("/api/v1/auth/register", &json!({"username": "x\u{0}y", "password": "correct horse battery"}), None)
            .await
            .expect_problem(422, "validation_failed");

        // In the target: a path names nothing, a query parameter is named.
        app.get("/api/v1/players/nulla%00", Some(&a.token)).await.expect_problem(404, "not_found");
        app.get("/api/v1/matches/%00abc", Some(&a.token)).await.expect_problem(404, "not_found");
        let queried = app.get("/api/v1/tournaments?status=running%00", Some(&a.token)).await;
        queried.expect_problem(422, "validation_failed");
        assert_eq!(field(&queried), "status");
        let queried = app.get("/api/v1/players/nulla/ratings/ultimate-10m?x=1&%00=2", Some(&a.token)).await;
        queried.expect_problem(422, "validation_failed");
        assert_eq!(field(&queried), "query");
        // A cursor is a token the server gave out; one holding U+0000 never was
        // ("0\n\0" and "0:\0", base64url).
        for cursor in ["MAoA", "MDoA"] {
            let listed = app.get(&format!("/api/v1/me/matches?cursor={cursor}"), Some(&a.token)).await;
            listed.expect_problem(422, "validation_failed");
            assert_eq!(field(&listed), "cursor");
        }
        // The same requests without the character are served.
        app.get("/api/v1/players/nulla", Some(&a.token)).await.expect(200);
        app.get("/api/v1/players/nullz", Some(&a.token)).await.expect_problem(404, "not_found");
        assert_eq!(app.get("/api/v1/tournaments?status=running", Some(&a.token)).await.body["items"], json!([]));
    }
}
