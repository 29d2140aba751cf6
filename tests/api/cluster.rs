//! A smoke run on a Redis Cluster (`TEST_REDIS_CLUSTER_URL`, nodes separated
//! by commas; `scripts/redis-cluster.sh start` makes a local three-node one)
//! with PostgreSQL: two instances pair a ranked match, and a stream on one
//! sees every move made through the other, each version in order. The
//! broker's methods one by one are checked on the cluster by
//! `tests/broker_contract.rs`.

use std::time::Duration;

use crate::ranked::{LADDER, seats};
use crate::support::{Backend, EventStream, TestApp, TestConfig, legal_of};

#[actix_web::test]
async fn ranked_pairing_and_moves_through_two_instances_on_a_redis_cluster() {
    let Some(url) = std::env::var("TEST_REDIS_CLUSTER_URL")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        eprintln!("TEST_REDIS_CLUSTER_URL is not set: the Redis Cluster smoke run does not run");
        return;
    };
    let Some(mut config) = TestConfig::new(Backend::Postgres) else {
        panic!("TEST_REDIS_CLUSTER_URL is set: set TEST_DATABASE_URL too");
    };
    config.config.redis_url = Some(url);
    config.config.redis_cluster = true;
    config.config.redis_prefix = format!("test:{}:", uttt::ids::record_id());
    config.config.workers = uttt::config::Workers::NONE;
    let app = TestApp::start(config).await;
    let (other, _ctx, _handle) = app.start_sibling().await;

    let a = app.quick_player("cla").await;
    let b = app.quick_player("clb").await;
    let id = app.ranked_match(&a, &b, LADDER).await;
    let state = app.state(&a, &id).await;
    let (x_id, _) = seats(&state);
    let (x, o) = if x_id == a.id { (&a, &b) } else { (&b, &a) };

    // The stream is on the second instance; the moves go to the first.
    let mut stream = EventStream::open_at(
        &other,
        &app.client,
        &format!("/api/v1/matches/{id}/events"),
        &o.token,
        None,
    )
    .await;
    let first = stream
        .state_where(Duration::from_secs(5), |s| s["ply"] == 0)
        .await;
    let mut version = first["version"].as_u64().unwrap();
    for ply in 0..12u64 {
        let mover = if ply % 2 == 0 { x } else { o };
        let now = app.state(mover, &id).await;
        let address = legal_of(&now)[0].clone();
        app.play(mover, &id, ply, &address).await.expect(200);
        // Every state the stream shows comes in version order, and the move's
        // ply arrives with no ply skipped (presence changes may add states).
        loop {
            let event = stream
                .next_event(Duration::from_secs(5))
                .await
                .expect("a state event within 5 s");
            if event.event != "state" {
                continue;
            }
            let seen: serde_json::Value = serde_json::from_str(&event.data).unwrap();
            let next = seen["version"].as_u64().unwrap();
            assert!(next > version, "versions rise: {version} then {next}");
            version = next;
            let at = seen["ply"].as_u64().unwrap();
            assert!(at <= ply + 1, "ply {at} before ply {} was seen", ply + 1);
            if at == ply + 1 {
                break;
            }
        }
    }
    app.post(
        &format!("/api/v1/matches/{id}/resign"),
        &serde_json::json!({}),
        Some(&x.token),
    )
    .await
    .expect(200);
    let end = stream
        .state_where(Duration::from_secs(5), |s| s["status"] == "finished")
        .await;
    assert_eq!(end["result"]["winner"], "o", "{end}");
    app.assert_consistent(&id).await;
}
