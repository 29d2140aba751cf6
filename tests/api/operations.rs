//! Health, readiness, metrics and the documentation page.

use crate::both_backends;
use crate::support::TestApp;

both_backends! {
    async fn healthz_and_readyz_answer_200_when_everything_is_up(app: TestApp) {
        app.get("/healthz", None).await.expect(200);
        let ready = app.get("/readyz", None).await;
        ready.expect(200);
        assert_eq!(ready.body["database"], "ok");
        let broker = if app.ctx.config.redis_url.is_some() { "ok" } else { "in-process" };
        assert_eq!(ready.body["broker"], broker);
    }

    async fn metrics_count_requests_by_route_and_status(app: TestApp) {
        app.get("/healthz", None).await.expect(200);
        app.get("/api/v1/me", None).await.expect(401);
        let text = app.get("/metrics", None).await.text;
        assert!(text.contains(r#"uttt_http_requests_total{method="GET",route="/healthz",status="200"} 1"#), "{text}");
        assert!(text.contains(r#"uttt_http_requests_total{method="GET",route="/api/v1/me",status="401"} 1"#), "{text}");
        assert!(text.contains("uttt_http_request_duration_seconds_bucket"), "{text}");
    }

    async fn the_docs_page_and_the_spec_are_served(app: TestApp) {
        let docs = app.get("/docs/", None).await;
        docs.expect(200);
        assert!(docs.text.contains("swagger"), "{}", &docs.text[..200.min(docs.text.len())]);
        // /docs redirects to /docs/ (the client follows it).
        assert!(app.get("/docs", None).await.expect(200).text.contains("swagger"));
        let spec = app.get("/openapi.json", None).await;
        spec.expect(200);
        assert_eq!(spec.body["info"]["title"], "uttt");
    }
}

#[actix_web::test]
async fn start_up_fails_loudly_when_the_database_is_unreachable() {
    use crate::support::{Backend, TestConfig};
    let mut config = TestConfig::new(Backend::Sqlite).unwrap();
    config.config.database = uttt::config::DatabaseConfig::Postgres(
        "postgres://postgres@127.0.0.1:1/none?connect_timeout=1".into(),
    );
    let result = uttt::server::context(config.config.clone(), uttt::time::ManualTime::new(0)).await;
    assert!(
        result.is_err(),
        "start-up must fail when the database is unreachable"
    );
}

#[actix_web::test]
async fn readyz_and_requests_answer_503_when_the_database_goes_away() {
    let Some(app) = TestApp::spawn_postgres().await else {
        return;
    };
    let p = app.register("lena").await;
    // Drop the test database under the running server.
    let db = app.config.database_name().unwrap().to_owned();
    let admin = std::env::var("TEST_DATABASE_URL").unwrap();
    let mut conn = uttt::store::connect_pg(&admin).unwrap();
    diesel::RunQueryDsl::execute(
        diesel::sql_query(format!("DROP DATABASE {db} WITH (FORCE)")),
        &mut conn,
    )
    .unwrap();

    let ready = app.get("/readyz", None).await;
    ready.expect(503);
    assert_eq!(ready.body["database"], "unavailable");
    app.get("/api/v1/me", Some(&p.token))
        .await
        .expect_problem(503, "unavailable");
    app.get("/healthz", None).await.expect(200);
}
