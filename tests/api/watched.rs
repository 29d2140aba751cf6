//! Events only where they are watched (issue 18), through real servers: four
//! instances on one PostgreSQL and one Redis (or a Redis Cluster), each
//! streaming one of four matches while the moves of every match go through
//! another instance. Each instance takes in the events of its own match and
//! nothing of the other three (the broker counts the messages that reach
//! it), and each stream sees every version of its match in order. The
//! broker-level counterpart, with the subscriptions Redis holds per channel,
//! is in `tests/broker_contract.rs`.

use std::time::Duration;

use serde_json::{Value, json};
use uttt::service::Context;

use crate::common::http;
use crate::ranked::{LADDER, seats};
use crate::support::{Backend, EventStream, Player, TestApp, TestConfig, addr, legal_of};

/// Moves played in each match.
const MOVES: u64 = 8;

/// Reads the stream's state events until ply `ply` shows; checks that each
/// comes with the version after the one before. Returns the events read.
async fn states_until(stream: &mut EventStream, version: &mut u64, ply: u64, m: usize) -> u64 {
    let mut read = 0;
    loop {
        let event = stream
            .next_event(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("match {m}: no state within 5 s (waiting for ply {ply})"));
        if event.event != "state" {
            continue;
        }
        read += 1;
        let state: Value = serde_json::from_str(&event.data).unwrap();
        let next = state["version"].as_u64().unwrap();
        assert_eq!(next, *version + 1, "match {m}: every version, in order");
        *version = next;
        let at = state["ply"].as_u64().unwrap();
        assert!(at <= ply, "match {m}: ply {at} before ply {ply} was seen");
        if at == ply {
            return read;
        }
    }
}

async fn four_instances_receive_only_the_events_of_the_matches_they_stream(config: TestConfig) {
    let app = TestApp::start(config).await;
    let mut instances: Vec<(String, Context)> = vec![(app.address.clone(), app.ctx.clone())];
    let mut handles = Vec::new();
    for _ in 0..3 {
        let (address, ctx, handle) = app.start_sibling().await;
        instances.push((address, ctx));
        handles.push(handle);
    }

    // Four ranked matches; match i is streamed on instance i (by its O player).
    let mut games: Vec<(String, Player, Player)> = Vec::new();
    for i in 0..4 {
        let a = app.quick_player(&format!("share_a{i}")).await;
        let b = app.quick_player(&format!("share_b{i}")).await;
        let id = app.ranked_match(&a, &b, LADDER).await;
        let (x_id, _) = seats(&app.state(&a, &id).await);
        games.push(if x_id == a.id { (id, a, b) } else { (id, b, a) });
    }
    let mut streams = Vec::new();
    for (i, (id, _, o)) in games.iter().enumerate() {
        let mut stream = EventStream::open_at(
            &instances[i].0,
            &app.client,
            &format!("/api/v1/matches/{id}/events"),
            &o.token,
            None,
        )
        .await;
        let first = stream
            .state_where(Duration::from_secs(5), |s| s["ply"] == 0)
            .await;
        streams.push((stream, first["version"].as_u64().unwrap()));
    }
    let before: Vec<u64> = instances.iter().map(|(_, c)| c.broker.received()).collect();

    // The moves of match i go through instance i + 1, interleaved across the
    // four matches, so every instance publishes events of a match it does
    // not stream.
    let mut seen = [0u64; 4];
    for ply in 0..MOVES {
        for (i, (id, x, o)) in games.iter().enumerate() {
            let mover = if ply % 2 == 0 { x } else { o };
            let state = app.state(mover, id).await;
            let address = legal_of(&state)[0].clone();
            let through = &instances[(i + 1) % 4].0;
            let reply = http::send(
                &app.client,
                "POST",
                &format!("{through}/api/v1/matches/{id}/moves"),
                Some(json!({"ply": ply, "address": addr(&address)}).to_string()),
                Some(&mover.token),
                &[],
            )
            .await
            .unwrap();
            reply.expect(200);
        }
        for (i, (stream, version)) in streams.iter_mut().enumerate() {
            seen[i] += states_until(stream, version, ply + 1, i).await;
        }
    }
    // On a cluster the nodes deliver independently: give a stray message of
    // another match time to show before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (i, (stream, _)) in streams.iter_mut().enumerate() {
        assert!(
            stream.next_event(Duration::from_millis(50)).await.is_none(),
            "match {i}: no event after the last move"
        );
        let received = instances[i].1.broker.received() - before[i];
        assert_eq!(
            received,
            seen[i],
            "instance {i} took in its own match's {} events and nothing of the other three matches' {}",
            seen[i],
            seen.iter().sum::<u64>() - seen[i]
        );
    }
    assert!(seen.iter().all(|&n| n >= MOVES), "{seen:?}");
    for handle in handles {
        handle.stop(false).await;
    }
}

/// A PostgreSQL configuration with a Redis (`TEST_REDIS_URL`), or `None`.
fn redis_config() -> Option<TestConfig> {
    let config = TestConfig::new(Backend::Postgres)?;
    if config.config.redis_url.is_none() {
        eprintln!("TEST_REDIS_URL is not set: the four-instance events test does not run");
        return None;
    }
    Some(config)
}

#[actix_web::test]
async fn four_instances_on_redis_receive_only_the_events_of_the_matches_they_stream() {
    let Some(mut config) = redis_config() else {
        return;
    };
    config.config.workers = uttt::config::Workers::NONE;
    four_instances_receive_only_the_events_of_the_matches_they_stream(config).await;
}

#[actix_web::test]
async fn four_instances_on_a_redis_cluster_receive_only_the_events_of_the_matches_they_stream() {
    let Some(url) = std::env::var("TEST_REDIS_CLUSTER_URL")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        eprintln!("TEST_REDIS_CLUSTER_URL is not set: the four-instance cluster test does not run");
        return;
    };
    let Some(mut config) = TestConfig::new(Backend::Postgres) else {
        panic!("TEST_REDIS_CLUSTER_URL is set: set TEST_DATABASE_URL too");
    };
    config.config.redis_url = Some(url);
    config.config.redis_cluster = true;
    config.config.redis_prefix = format!("test:{}:", uttt::ids::record_id());
    config.config.workers = uttt::config::Workers::NONE;
    four_instances_receive_only_the_events_of_the_matches_they_stream(config).await;
}
