//! API conventions: every error is problem+json with a stable code.

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
}
