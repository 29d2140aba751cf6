//! The broker contract: every check runs against the in-process broker
//! (`broker/memory.rs`) and against Redis (`broker/redis.rs` and the Lua
//! scripts of `broker/redis_queue.rs`), which implement the same rules twice.
//!
//! Redis runs when `TEST_REDIS_URL` is set, and a Redis Cluster when
//! `TEST_REDIS_CLUSTER_URL` is (one or more nodes' URLs, separated by commas;
//! `scripts/redis-cluster.sh start` makes a local three-node one); a Redis
//! that cannot be reached then fails the test. Each Redis check works under a key prefix of its own
//! (`contract:<id>:`), deleted when it ends, so checks run in parallel.
//!
//! Leases, locks, slots, presence records and rate windows live in real time;
//! the checks that let one lapse sleep past it, with margins of hundreds of
//! milliseconds either side.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use uttt::broker::memory::MemoryBroker;
use uttt::broker::redis::RedisBroker;
use uttt::broker::{
    Cancelled, Enqueued, FlaggedPayload, FlaggedPublish, Notice, PairClaim, PresenceRecord,
    PresentIf, PubSub, RateDecision, SharedBroker, Subscription, Ticket, TicketStatus,
};

/// Declares each check once per broker: `name::in_process`, `name::redis` and
/// `name::redis_cluster`.
macro_rules! on_both_brokers {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn in_process() {
                    super::in_process(super::$name).await;
                }

                #[tokio::test]
                async fn redis() {
                    super::on_redis(super::$name).await;
                }

                #[tokio::test]
                async fn redis_cluster() {
                    super::on_redis_cluster(super::$name).await;
                }
            }
        )*
    };
}

on_both_brokers!(
    health_answers,
    rate_windows_count_up_to_the_limit_then_refuse,
    rate_windows_end_and_peek_counts_nothing,
    messages_reach_the_subscribers_of_their_channel_only,
    seen_keeps_the_newest_time_and_lapses,
    seen_then_presence_answers_as_seen_and_then_presence,
    seen_then_publish_fills_the_flags_from_what_it_read,
    marks_replace_and_lapse,
    leases_are_held_until_their_last_holder_releases,
    leases_lapse_unless_renewed,
    slots_are_bounded_renewable_and_lapse,
    locks_have_one_holder_and_lapse,
    the_queue_is_not_restored_until_marked,
    a_ticket_reads_back_as_enqueued_and_a_player_queues_once,
    the_queue_is_ordered_by_rating_per_ladder,
    touching_a_ticket_only_moves_its_time_forward,
    the_queue_reads_each_ticket_as_it_stands,
    cancelling_withdraws_a_queued_ticket_once,
    a_pair_is_claimed_whole_and_once,
    a_released_pair_is_queued_again,
    a_round_of_pairs_is_claimed_in_one_call_each_pair_whole,
    only_the_channels_an_instance_watches_reach_it,
    a_queue_longer_than_a_read_batch_is_read_whole_in_order,
);

/// Runs `check` against a fresh in-process broker.
async fn in_process<F, Fut>(check: F)
where
    F: FnOnce(SharedBroker) -> Fut,
    Fut: Future<Output = ()>,
{
    let broker: SharedBroker = MemoryBroker::new();
    check(broker).await;
}

/// `TEST_REDIS_URL`, or `None` (saying so) when it is unset.
fn redis_url() -> Option<String> {
    let url = std::env::var("TEST_REDIS_URL")
        .ok()
        .filter(|v| !v.is_empty());
    if url.is_none() {
        eprintln!("TEST_REDIS_URL is not set: the Redis variant of this check does not run");
    }
    url
}

/// `TEST_REDIS_CLUSTER_URL`, or `None` (saying so) when it is unset.
fn cluster_url() -> Option<String> {
    let url = std::env::var("TEST_REDIS_CLUSTER_URL")
        .ok()
        .filter(|v| !v.is_empty());
    if url.is_none() {
        eprintln!(
            "TEST_REDIS_CLUSTER_URL is not set: the Redis Cluster variant of this check does not run"
        );
    }
    url
}

/// A broker on the Redis at `url`.
async fn redis_broker(url: &str, prefix: &str) -> Arc<RedisBroker> {
    RedisBroker::connect(url, prefix).await.unwrap_or_else(|e| {
        panic!("TEST_REDIS_URL is set to {url} but Redis cannot be reached: {e}")
    })
}

/// A broker on the Redis Cluster at `url` (nodes separated by commas).
async fn cluster_broker(url: &str, prefix: &str) -> Arc<RedisBroker> {
    let nodes: Vec<&str> = url.split(',').collect();
    RedisBroker::connect_cluster(&nodes, prefix)
        .await
        .unwrap_or_else(|e| {
            panic!("TEST_REDIS_CLUSTER_URL is set to {url} but the cluster cannot be reached: {e}")
        })
}

/// Runs `check` against Redis under a prefix of its own, deleting its keys
/// afterwards; does nothing when `TEST_REDIS_URL` is unset.
async fn on_redis<F, Fut>(check: F)
where
    F: FnOnce(SharedBroker) -> Fut,
    Fut: Future<Output = ()>,
{
    on_redis_raw(|b, _, _| check(b)).await;
}

/// As [`on_redis`], on the Redis Cluster of `TEST_REDIS_CLUSTER_URL`.
async fn on_redis_cluster<F, Fut>(check: F)
where
    F: FnOnce(SharedBroker) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(url) = cluster_url() else {
        return;
    };
    let prefix = format!("contract:{}:", uttt::ids::record_id());
    run_then_clean(cluster_broker(&url, &prefix).await, check).await;
}

/// As [`on_redis`], for the Redis-only checks that reach under the broker:
/// `check` also gets a plain connection to the same Redis and the prefix.
async fn on_redis_raw<F, Fut>(check: F)
where
    F: FnOnce(SharedBroker, redis::aio::MultiplexedConnection, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(url) = redis_url() else {
        return;
    };
    let prefix = format!("contract:{}:", uttt::ids::record_id());
    let broker = redis_broker(&url, &prefix).await;
    let raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    run_then_clean(broker, |b| check(b, raw, prefix)).await;
}

/// Runs `check` on `broker`, then deletes its keys, failing or not.
async fn run_then_clean<F, Fut>(broker: Arc<RedisBroker>, check: F)
where
    F: FnOnce(SharedBroker) -> Fut,
    Fut: Future<Output = ()>,
{
    let shared: SharedBroker = Arc::clone(&broker) as SharedBroker;
    let outcome = AssertUnwindSafe(check(shared)).catch_unwind().await;
    broker
        .delete_all_keys()
        .await
        .expect("delete the check's keys");
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

const MINUTE: Duration = Duration::from_secs(60);

/// Sleeps `ms` milliseconds of real time (leases, locks and windows lapse in it).
async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// The next notice of `sub`; fails after 10 s (a guard against a hang, not a measure).
async fn next_notice(sub: &mut Subscription) -> Notice {
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("a message within 10 s")
        .expect("the subscription is open")
}

fn message(text: &str) -> Notice {
    Notice::Message(text.into())
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|k| (*k).to_owned()).collect()
}

/// A queued ticket of `player` on `ladder`.
fn ticket(id: &str, player: &str, ladder: &str, rating: f64) -> Ticket {
    Ticket {
        id: id.to_owned(),
        player_id: player.to_owned(),
        ladder: ladder.to_owned(),
        rating,
        created_at: 1_000,
        seen_at: 1_000,
        status: TicketStatus::Queued,
        match_id: None,
        reason: None,
        last_x_at: None,
        last_opponent: None,
    }
}

/// The ids of a ladder's queued tickets, in queue order.
async fn queued_ids(b: &SharedBroker, ladder: &str) -> Vec<String> {
    b.queued(ladder)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect()
}

/// The claim of tickets `a` and `b` into match `m`.
fn pair(a: &str, b: &str, m: &str) -> PairClaim {
    PairClaim {
        a: a.into(),
        b: b.into(),
        match_id: m.into(),
    }
}

/// Claims one pair on the `blitz` ladder; whether it was claimed.
async fn claim_one(b: &SharedBroker, x: &str, y: &str, m: &str) -> bool {
    let claimed = b.claim_pairs("blitz", &[pair(x, y, m)]).await.unwrap();
    assert_eq!(claimed.len(), 1, "one answer per pair");
    claimed[0]
}

/// Queues a ticket on the `blitz` ladder for each (id, player, rating).
async fn queue_on_blitz(b: &SharedBroker, tickets: &[(&str, &str, f64)]) {
    for &(id, player, rating) in tickets {
        b.enqueue(&ticket(id, player, "blitz", rating))
            .await
            .unwrap();
    }
}

/// Releases tickets of the `blitz` ladder.
async fn release(b: &SharedBroker, ids: &[&str]) {
    b.release_tickets("blitz", &keys(ids)).await.unwrap();
}

async fn status_of(b: &SharedBroker, id: &str) -> TicketStatus {
    b.ticket(id).await.unwrap().expect("the ticket").status
}

async fn health_answers(b: SharedBroker) {
    b.ping().await.unwrap();
    assert!(["in-process", "redis"].contains(&b.kind()), "{}", b.kind());
}

async fn rate_windows_count_up_to_the_limit_then_refuse(b: SharedBroker) {
    for _ in 0..3 {
        assert_eq!(b.hit("k", 3, MINUTE).await.unwrap(), RateDecision::Allowed);
    }
    for _ in 0..2 {
        match b.hit("k", 3, MINUTE).await.unwrap() {
            RateDecision::Limited { retry_after } => {
                assert!(
                    retry_after > Duration::ZERO && retry_after <= MINUTE,
                    "{retry_after:?}"
                );
            }
            RateDecision::Allowed => panic!("a fourth hit within the window is refused"),
        }
    }
    // Refused hits count too; other keys have windows of their own.
    assert_eq!(b.peek("k").await.unwrap().map(|(n, _)| n), Some(5));
    assert_eq!(
        b.hit("other", 3, MINUTE).await.unwrap(),
        RateDecision::Allowed
    );
    assert_eq!(b.peek("other").await.unwrap().map(|(n, _)| n), Some(1));
}

async fn rate_windows_end_and_peek_counts_nothing(b: SharedBroker) {
    assert_eq!(
        b.peek("k").await.unwrap(),
        None,
        "no window before the first hit"
    );
    let window = Duration::from_millis(400);
    assert_eq!(b.hit("k", 1, window).await.unwrap(), RateDecision::Allowed);
    for _ in 0..3 {
        let (count, left) = b.peek("k").await.unwrap().expect("an open window");
        assert_eq!(count, 1, "peeking counts nothing");
        assert!(left > Duration::ZERO && left <= window, "{left:?}");
    }
    sleep_ms(900).await;
    assert_eq!(b.peek("k").await.unwrap(), None, "the window has ended");
    assert_eq!(
        b.hit("k", 1, window).await.unwrap(),
        RateDecision::Allowed,
        "a new window starts"
    );
}

async fn messages_reach_the_subscribers_of_their_channel_only(b: SharedBroker) {
    // Delivery is asynchronous (Redis pushes to the instance's one pattern
    // subscription), so wait until "before" has been handed out: only then
    // is it truly before the subscriptions below.
    let mut witness = b.subscribe("m").await.unwrap();
    b.publish("m", "before".into()).await.unwrap();
    assert_eq!(next_notice(&mut witness).await, message("before"));
    drop(witness);
    let mut first = b.subscribe("m").await.unwrap();
    let mut second = b.subscribe("m").await.unwrap();
    let mut elsewhere = b.subscribe("n").await.unwrap();
    b.publish("m", "one".into()).await.unwrap();
    b.publish("m", "two".into()).await.unwrap();
    b.publish("n", "three".into()).await.unwrap();
    for sub in [&mut first, &mut second] {
        // Nothing from before the subscription, then the messages in order.
        assert_eq!(next_notice(sub).await, message("one"));
        assert_eq!(next_notice(sub).await, message("two"));
    }
    assert_eq!(next_notice(&mut elsewhere).await, message("three"));
    drop(first);
    b.publish("m", "four".into()).await.unwrap();
    assert_eq!(next_notice(&mut second).await, message("four"));
}

async fn only_the_channels_an_instance_watches_reach_it(b: SharedBroker) {
    let mut watched = b.subscribe("m").await.unwrap();
    let before = b.received();
    // Nobody here watches "n": it does not reach the instance at all.
    b.publish("n", "elsewhere".into()).await.unwrap();
    b.publish("m", "here".into()).await.unwrap();
    assert_eq!(next_notice(&mut watched).await, message("here"));
    assert_eq!(
        b.received() - before,
        1,
        "only the watched channel's message arrived"
    );
    drop(watched);
}

async fn seen_keeps_the_newest_time_and_lapses(b: SharedBroker) {
    assert_eq!(b.seen("s", 200, MINUTE).await.unwrap(), None);
    assert_eq!(b.seen("s", 300, MINUTE).await.unwrap(), Some(200));
    // A late, older report does not move it back.
    assert_eq!(b.seen("s", 100, MINUTE).await.unwrap(), Some(300));
    let ks = keys(&["s", "never"]);
    assert_eq!(
        b.presence(&ks).await.unwrap(),
        vec![
            PresenceRecord {
                leased: false,
                last_seen: Some(300)
            },
            PresenceRecord {
                leased: false,
                last_seen: None
            },
        ]
    );
    assert_eq!(b.presence(&[]).await.unwrap(), vec![]);

    assert_eq!(
        b.seen("short", 5, Duration::from_millis(300))
            .await
            .unwrap(),
        None
    );
    sleep_ms(800).await;
    assert_eq!(
        b.presence(&keys(&["short"])).await.unwrap()[0].last_seen,
        None
    );
    assert_eq!(
        b.seen("short", 6, MINUTE).await.unwrap(),
        None,
        "a lapsed record is gone"
    );
}

async fn seen_then_presence_answers_as_seen_and_then_presence(b: SharedBroker) {
    b.hold(&[("m:o".into(), "h".into())], MINUTE).await.unwrap();
    let seats = keys(&["m:x", "m:o"]);
    let (previous, records) = b
        .seen_then_presence("m:x", 200, MINUTE, &seats)
        .await
        .unwrap();
    assert_eq!(previous, None);
    assert_eq!(
        records,
        vec![
            PresenceRecord {
                leased: false,
                last_seen: Some(200)
            },
            PresenceRecord {
                leased: true,
                last_seen: None
            },
        ],
        "the seen time just set, and the other seat's lease"
    );
    // An older report keeps the newer time, as `seen` does.
    let (previous, records) = b
        .seen_then_presence("m:x", 100, MINUTE, &seats)
        .await
        .unwrap();
    assert_eq!(previous, Some(200));
    assert_eq!(records[0].last_seen, Some(200));
    b.seen("m:o", 250, MINUTE).await.unwrap();
    let (previous, records) = b
        .seen_then_presence("m:x", 300, MINUTE, &seats)
        .await
        .unwrap();
    assert_eq!(previous, Some(200));
    assert_eq!(records, b.presence(&seats).await.unwrap());
    assert_eq!(
        records[1],
        PresenceRecord {
            leased: true,
            last_seen: Some(250)
        }
    );
    assert_eq!(
        b.seen_then_presence("alone", 5, MINUTE, &[]).await.unwrap(),
        (None, vec![])
    );
    assert_eq!(b.seen("alone", 6, MINUTE).await.unwrap(), Some(5));
}

/// A publication on "match:p" of `{"x":X,"o":O}` (version 3) under `rules`,
/// its flags marked under "p:shown".
fn flagged(rules: [PresentIf; 2]) -> FlaggedPublish<'static> {
    FlaggedPublish {
        rules,
        channel: "match:p",
        payload: FlaggedPayload {
            parts: ["3\n{\"x\":".into(), ",\"o\":".into(), "}".into()],
        },
        mark: ("p:shown", MINUTE),
    }
}

async fn seen_then_publish_fills_the_flags_from_what_it_read(b: SharedBroker) {
    let seats: [String; 2] = ["p:x".into(), "p:o".into()];
    let shown = keys(&["p:shown"]);
    let mut sub = b.subscribe("match:p").await.unwrap();
    // X is seen at 200 by this call, O holds a lease.
    b.hold(&[("p:o".into(), "h".into())], MINUTE).await.unwrap();
    let out = flagged([PresentIf::SeenAfter(199), PresentIf::SeenAfter(i64::MAX)]);
    let (previous, records) = b
        .seen_then_publish("p:x", 200, MINUTE, &seats, &out)
        .await
        .unwrap();
    assert_eq!(previous, None);
    assert_eq!(records, b.presence(&seats).await.unwrap());
    assert_eq!(records[0].last_seen, Some(200));
    assert_eq!(
        next_notice(&mut sub).await,
        message("3\n{\"x\":true,\"o\":true}"),
        "X seen after 199, O leased"
    );
    assert_eq!(b.marks(&shown).await.unwrap(), vec![Some("11".into())]);
    // Seen at 200 is not seen after 200; O's lease gone, its seen time
    // decides; the CPU's seat always shows present.
    b.release("p:o", "h").await.unwrap();
    b.seen("p:o", 250, MINUTE).await.unwrap();
    let cases = [
        (
            [PresentIf::SeenAfter(200), PresentIf::SeenAfter(249)],
            "false",
            "true",
            "01",
        ),
        (
            [PresentIf::SeenAfter(-1), PresentIf::SeenAfter(250)],
            "true",
            "false",
            "10",
        ),
        (
            [PresentIf::SeenAfter(300), PresentIf::Always],
            "false",
            "true",
            "01",
        ),
    ];
    for (rules, x, o, mark) in cases {
        let out = flagged(rules);
        // An older report keeps the newer time, as `seen` does.
        let (previous, records) = b
            .seen_then_publish("p:x", 100, MINUTE, &seats, &out)
            .await
            .unwrap();
        assert_eq!(previous, Some(200));
        assert_eq!(
            records,
            vec![
                PresenceRecord {
                    leased: false,
                    last_seen: Some(200)
                },
                PresenceRecord {
                    leased: false,
                    last_seen: Some(250)
                },
            ]
        );
        let flags = out.flags(&records);
        assert_eq!(
            out.payload.fill(flags),
            format!("3\n{{\"x\":{x},\"o\":{o}}}")
        );
        assert_eq!(
            next_notice(&mut sub).await,
            message(&out.payload.fill(flags)),
            "the flags published are the rules' answers on the records returned ({rules:?})"
        );
        assert_eq!(b.marks(&shown).await.unwrap(), vec![Some(mark.into())]);
    }
    // A seat never seen and without a lease is absent unless always present.
    let unseen: [String; 2] = ["q:x".into(), "q:o".into()];
    let out = flagged([PresentIf::SeenAfter(4), PresentIf::SeenAfter(i64::MIN)]);
    b.seen_then_publish("q:x", 5, MINUTE, &unseen, &out)
        .await
        .unwrap();
    assert_eq!(
        next_notice(&mut sub).await,
        message("3\n{\"x\":true,\"o\":false}")
    );
    assert_eq!(b.marks(&shown).await.unwrap(), vec![Some("10".into())]);
}

async fn marks_replace_and_lapse(b: SharedBroker) {
    assert_eq!(b.mark("a", "one", MINUTE).await.unwrap(), None);
    assert_eq!(
        b.mark("a", "two", MINUTE).await.unwrap(),
        Some("one".into())
    );
    assert_eq!(
        b.mark("short", "x", Duration::from_millis(300))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        b.marks(&keys(&["a", "short", "never"])).await.unwrap(),
        vec![Some("two".into()), Some("x".into()), None]
    );
    assert_eq!(b.marks(&[]).await.unwrap(), Vec::<Option<String>>::new());
    sleep_ms(800).await;
    assert_eq!(b.marks(&keys(&["short"])).await.unwrap(), vec![None]);
    assert_eq!(
        b.mark("short", "y", MINUTE).await.unwrap(),
        None,
        "a lapsed mark is not returned"
    );
}

async fn leased(b: &SharedBroker, key: &str) -> bool {
    b.presence(&keys(&[key])).await.unwrap()[0].leased
}

async fn leases_are_held_until_their_last_holder_releases(b: SharedBroker) {
    assert!(!leased(&b, "seat").await);
    b.hold(&[], MINUTE).await.unwrap();
    b.hold(
        &[("seat".into(), "h1".into()), ("other".into(), "h1".into())],
        MINUTE,
    )
    .await
    .unwrap();
    assert!(leased(&b, "seat").await && leased(&b, "other").await);
    // Releasing as a non-holder changes nothing.
    b.release("seat", "stranger").await.unwrap();
    assert!(leased(&b, "seat").await);
    b.hold(&[("seat".into(), "h2".into())], MINUTE)
        .await
        .unwrap();
    b.release("seat", "h1").await.unwrap();
    assert!(leased(&b, "seat").await, "h2 still holds it");
    b.release("seat", "h2").await.unwrap();
    assert!(!leased(&b, "seat").await);
    assert!(leased(&b, "other").await, "leases are per key");
    // Releasing what nobody holds is fine.
    b.release("seat", "h2").await.unwrap();
    b.release("never", "h1").await.unwrap();
}

async fn leases_lapse_unless_renewed(b: SharedBroker) {
    let ttl = Duration::from_millis(2_000);
    b.hold(
        &[
            ("renewed".into(), "h".into()),
            ("lapsing".into(), "h".into()),
        ],
        ttl,
    )
    .await
    .unwrap();
    b.hold(&[("long".into(), "h1".into())], MINUTE)
        .await
        .unwrap();
    b.hold(&[("long".into(), "h2".into())], Duration::from_millis(300))
        .await
        .unwrap();
    sleep_ms(1_200).await;
    b.hold(&[("renewed".into(), "h".into())], ttl)
        .await
        .unwrap();
    sleep_ms(1_300).await;
    // 2.5 s after the first hold: the renewed lease runs to 3.2 s, the other ended at 2 s.
    assert!(leased(&b, "renewed").await, "a renewed lease lives on");
    assert!(!leased(&b, "lapsing").await, "an unrenewed lease lapses");
    assert!(leased(&b, "long").await, "h1's lease outlives h2's");
    b.release("long", "h1").await.unwrap();
    assert!(
        !leased(&b, "long").await,
        "h2's lapsed lease does not count"
    );
    sleep_ms(1_500).await;
    assert!(!leased(&b, "renewed").await);
}

async fn slots_are_bounded_renewable_and_lapse(b: SharedBroker) {
    assert!(b.acquire("set", "m1", 2, MINUTE).await.unwrap());
    assert!(b.acquire("set", "m2", 2, MINUTE).await.unwrap());
    assert!(
        !b.acquire("set", "m3", 2, MINUTE).await.unwrap(),
        "the set is full"
    );
    assert!(
        b.acquire("set", "m1", 2, MINUTE).await.unwrap(),
        "a holder renews at the cap"
    );
    assert!(
        b.acquire("other", "m3", 2, MINUTE).await.unwrap(),
        "sets are per key"
    );
    // Giving back a slot one does not hold frees nothing.
    b.release_slot("set", "m9").await.unwrap();
    assert!(!b.acquire("set", "m3", 2, MINUTE).await.unwrap());
    b.release_slot("set", "m1").await.unwrap();
    assert!(b.acquire("set", "m3", 2, MINUTE).await.unwrap());

    let short = Duration::from_millis(300);
    assert!(b.acquire("brief", "m1", 1, short).await.unwrap());
    assert!(!b.acquire("brief", "m2", 1, short).await.unwrap());
    sleep_ms(800).await;
    assert!(
        b.acquire("brief", "m2", 1, MINUTE).await.unwrap(),
        "a lapsed slot is free"
    );
    assert!(!b.acquire("brief", "m1", 1, MINUTE).await.unwrap());
}

async fn locks_have_one_holder_and_lapse(b: SharedBroker) {
    assert!(b.try_lock("pairing", "t1", MINUTE).await.unwrap());
    assert!(
        !b.try_lock("pairing", "t2", MINUTE).await.unwrap(),
        "a held lock"
    );
    assert!(
        b.try_lock("pairing", "t1", MINUTE).await.unwrap(),
        "the holder extends it"
    );
    assert!(
        b.try_lock("other", "t2", MINUTE).await.unwrap(),
        "locks are per name"
    );
    // Unlocking as a non-holder changes nothing.
    b.unlock("pairing", "t2").await.unwrap();
    assert!(!b.try_lock("pairing", "t2", MINUTE).await.unwrap());
    b.unlock("pairing", "t1").await.unwrap();
    assert!(b.try_lock("pairing", "t2", MINUTE).await.unwrap());
    b.unlock("never", "t1").await.unwrap();

    let ttl = Duration::from_millis(2_000);
    assert!(b.try_lock("renewed", "t1", ttl).await.unwrap());
    assert!(b.try_lock("lapsing", "t1", ttl).await.unwrap());
    sleep_ms(1_200).await;
    assert!(b.try_lock("renewed", "t1", ttl).await.unwrap());
    sleep_ms(1_300).await;
    assert!(
        !b.try_lock("renewed", "t2", ttl).await.unwrap(),
        "an extended lock holds"
    );
    assert!(
        b.try_lock("lapsing", "t2", ttl).await.unwrap(),
        "a lapsed lock is free"
    );
}

async fn the_queue_is_not_restored_until_marked(b: SharedBroker) {
    assert!(!b.is_restored().await.unwrap());
    b.mark_restored().await.unwrap();
    assert!(b.is_restored().await.unwrap());
}

async fn a_ticket_reads_back_as_enqueued_and_a_player_queues_once(b: SharedBroker) {
    let plain = ticket("t1", "p1", "blitz", 1_500.0);
    let full = Ticket {
        last_x_at: Some(777),
        last_opponent: Some("p9".into()),
        rating: 1_623.25,
        ..ticket("t2", "p2", "blitz", 0.0)
    };
    for t in [&plain, &full] {
        assert_eq!(b.enqueue(t).await.unwrap(), Enqueued::Queued);
        assert_eq!(b.ticket(&t.id).await.unwrap().as_ref(), Some(t));
    }
    assert_eq!(b.ticket("never").await.unwrap(), None);
    assert_eq!(b.player_ticket("p1").await.unwrap(), Some("t1".into()));
    assert_eq!(b.player_ticket("nobody").await.unwrap(), None);
    // One live ticket a player, on any ladder.
    for again in [
        ticket("t3", "p1", "blitz", 1.0),
        ticket("t4", "p1", "bullet", 1.0),
    ] {
        assert_eq!(
            b.enqueue(&again).await.unwrap(),
            Enqueued::AlreadyQueued("t1".into())
        );
        assert_eq!(
            b.ticket(&again.id).await.unwrap(),
            None,
            "nothing was added"
        );
    }
    assert_eq!(b.queue_size("blitz").await.unwrap(), 2);
    assert_eq!(b.queue_size("bullet").await.unwrap(), 0);
}

async fn the_queue_is_ordered_by_rating_per_ladder(b: SharedBroker) {
    for t in [
        ticket("c", "p1", "blitz", 1_700.0),
        ticket("a", "p2", "blitz", 1_400.5),
        ticket("d", "p3", "blitz", 1_400.5),
        ticket("b", "p4", "blitz", 1_550.0),
        ticket("z", "p5", "bullet", 1_000.0),
    ] {
        assert_eq!(b.enqueue(&t).await.unwrap(), Enqueued::Queued);
    }
    // By rating, ties by id.
    assert_eq!(queued_ids(&b, "blitz").await, ["a", "d", "b", "c"]);
    assert_eq!(queued_ids(&b, "bullet").await, ["z"]);
    assert_eq!(queued_ids(&b, "empty").await, Vec::<String>::new());
    assert_eq!(b.queue_size("blitz").await.unwrap(), 4);
    assert_eq!(b.queue_size("empty").await.unwrap(), 0);
}

async fn touching_a_ticket_only_moves_its_time_forward(b: SharedBroker) {
    b.enqueue(&ticket("t1", "p1", "blitz", 1_500.0))
        .await
        .unwrap();
    b.touch_ticket("t1", 5_000).await.unwrap();
    assert_eq!(b.ticket("t1").await.unwrap().unwrap().seen_at, 5_000);
    b.touch_ticket("t1", 4_000).await.unwrap();
    assert_eq!(b.ticket("t1").await.unwrap().unwrap().seen_at, 5_000);
    // Touching a ticket that does not exist makes none.
    b.touch_ticket("never", 6_000).await.unwrap();
    assert_eq!(b.ticket("never").await.unwrap(), None);
}

/// A ticket with every field set, as a player who played before queues it.
fn full_ticket(id: &str, player: &str) -> Ticket {
    Ticket {
        rating: 1_432.25,
        last_x_at: Some(900),
        last_opponent: Some("p_before".into()),
        ..ticket(id, player, "blitz", 0.0)
    }
}

/// What the pairing round reads of the queue is each ticket as it stands:
/// every field, a touch's time, and again after a release.
async fn the_queue_reads_each_ticket_as_it_stands(b: SharedBroker) {
    let mut t = full_ticket("t1", "p1");
    b.enqueue(&t).await.unwrap();
    b.enqueue(&ticket("t2", "p2", "blitz", 1_500.0))
        .await
        .unwrap();
    assert_eq!(b.queued("blitz").await.unwrap()[0], t);
    b.touch_ticket("t1", 7_000).await.unwrap();
    t.seen_at = 7_000;
    assert_eq!(b.queued("blitz").await.unwrap()[0], t, "the touch is read");
    assert!(claim_one(&b, "t1", "t2", "m1").await);
    assert_eq!(queued_ids(&b, "blitz").await, Vec::<String>::new());
    release(&b, &["t1", "t2"]).await;
    assert_eq!(b.queued("blitz").await.unwrap()[0], t, "released whole");
    b.cancel("t1", "left").await.unwrap();
    assert_eq!(queued_ids(&b, "blitz").await, ["t2"]);
}

async fn cancelling_withdraws_a_queued_ticket_once(b: SharedBroker) {
    b.enqueue(&ticket("t1", "p1", "blitz", 1_500.0))
        .await
        .unwrap();
    b.enqueue(&ticket("t2", "p2", "blitz", 1_600.0))
        .await
        .unwrap();
    assert_eq!(b.cancel("t1", "left").await.unwrap(), Cancelled::Cancelled);
    let cancelled = b.ticket("t1").await.unwrap().expect("still readable");
    assert_eq!(cancelled.status, TicketStatus::Cancelled);
    assert_eq!(cancelled.reason.as_deref(), Some("left"));
    assert_eq!(queued_ids(&b, "blitz").await, ["t2"]);
    assert_eq!(b.queue_size("blitz").await.unwrap(), 1);
    assert_eq!(b.player_ticket("p1").await.unwrap(), None);
    assert_eq!(
        b.cancel("t1", "again").await.unwrap(),
        Cancelled::AlreadyCancelled
    );
    assert_eq!(
        b.ticket("t1").await.unwrap().unwrap().reason.as_deref(),
        Some("left"),
        "the first reason stays"
    );
    assert_eq!(b.cancel("never", "left").await.unwrap(), Cancelled::Missing);
    // The player may queue again.
    assert_eq!(
        b.enqueue(&ticket("t3", "p1", "blitz", 1_500.0))
            .await
            .unwrap(),
        Enqueued::Queued
    );
    assert_eq!(b.player_ticket("p1").await.unwrap(), Some("t3".into()));
}

async fn a_pair_is_claimed_whole_and_once(b: SharedBroker) {
    for (id, player) in [("a", "p1"), ("b", "p2"), ("c", "p3"), ("d", "p4")] {
        b.enqueue(&ticket(id, player, "blitz", 1_500.0))
            .await
            .unwrap();
    }
    assert!(
        !claim_one(&b, "a", "a", "m0").await,
        "a ticket cannot meet itself"
    );
    assert!(!claim_one(&b, "a", "never", "m0").await);
    assert_eq!(
        status_of(&b, "a").await,
        TicketStatus::Queued,
        "all or nothing"
    );

    assert!(claim_one(&b, "a", "b", "m1").await);
    for id in ["a", "b"] {
        let t = b.ticket(id).await.unwrap().unwrap();
        assert_eq!(
            (t.status, t.match_id.as_deref()),
            (TicketStatus::Matched, Some("m1"))
        );
    }
    assert_eq!(queued_ids(&b, "blitz").await, ["c", "d"]);
    // A double claim, or a claim of one claimed ticket with a queued one, fails whole.
    assert!(!claim_one(&b, "a", "b", "m2").await);
    assert!(!claim_one(&b, "b", "c", "m2").await);
    assert_eq!(status_of(&b, "c").await, TicketStatus::Queued);
    assert_eq!(
        b.ticket("b").await.unwrap().unwrap().match_id.as_deref(),
        Some("m1")
    );
    // A claimed ticket can no longer be cancelled; its player may queue again.
    assert_eq!(
        b.cancel("a", "left").await.unwrap(),
        Cancelled::AlreadyMatched("m1".into())
    );
    assert_eq!(b.player_ticket("p1").await.unwrap(), Some("a".into()));
    assert_eq!(
        b.enqueue(&ticket("e", "p1", "blitz", 1_500.0))
            .await
            .unwrap(),
        Enqueued::Queued
    );
    b.cancel("d", "left").await.unwrap();
    assert!(
        !claim_one(&b, "c", "d", "m3").await,
        "a cancelled ticket is not claimed"
    );
    assert_eq!(status_of(&b, "c").await, TicketStatus::Queued);
}

async fn a_released_pair_is_queued_again(b: SharedBroker) {
    queue_on_blitz(
        &b,
        &[
            ("a", "p1", 1_600.0),
            ("b", "p2", 1_400.0),
            ("c", "p3", 1_500.0),
        ],
    )
    .await;
    assert!(claim_one(&b, "a", "b", "m1").await);
    release(&b, &["a", "b"]).await;
    for id in ["a", "b"] {
        let t = b.ticket(id).await.unwrap().unwrap();
        assert_eq!((t.status, t.match_id), (TicketStatus::Queued, None));
    }
    assert_eq!(
        queued_ids(&b, "blitz").await,
        ["b", "c", "a"],
        "back in rating order"
    );
    assert!(claim_one(&b, "b", "a", "m2").await, "and claimable again");

    // Releasing touches only matched tickets: queued and cancelled ones stay as they are.
    b.enqueue(&ticket("d", "p4", "blitz", 1_450.0))
        .await
        .unwrap();
    b.cancel("d", "left").await.unwrap();
    release(&b, &["c", "d"]).await;
    release(&b, &["never", "c"]).await;
    assert_eq!(status_of(&b, "c").await, TicketStatus::Queued);
    assert_eq!(status_of(&b, "d").await, TicketStatus::Cancelled);
    assert_eq!(queued_ids(&b, "blitz").await, ["c"]);
    assert_eq!(b.queue_size("blitz").await.unwrap(), 1);
}

async fn a_round_of_pairs_is_claimed_in_one_call_each_pair_whole(b: SharedBroker) {
    for i in 0..8 {
        b.enqueue(&ticket(
            &format!("t{i}"),
            &format!("p{i}"),
            "blitz",
            1_000.0 + f64::from(i),
        ))
        .await
        .unwrap();
    }
    b.cancel("t7", "left").await.unwrap();
    let round = [
        pair("t0", "t1", "m1"),
        // t1 is taken by the pair before: this one is refused whole.
        pair("t1", "t2", "m2"),
        pair("t3", "t4", "m3"),
        pair("t5", "t5", "m4"),
        // t7 was cancelled.
        pair("t6", "t7", "m5"),
        pair("t2", "t5", "m6"),
    ];
    assert_eq!(
        b.claim_pairs("blitz", &round).await.unwrap(),
        [true, false, true, false, false, true]
    );
    for (id, status, match_id) in [
        ("t0", TicketStatus::Matched, Some("m1")),
        ("t1", TicketStatus::Matched, Some("m1")),
        ("t2", TicketStatus::Matched, Some("m6")),
        ("t3", TicketStatus::Matched, Some("m3")),
        ("t4", TicketStatus::Matched, Some("m3")),
        ("t5", TicketStatus::Matched, Some("m6")),
        ("t6", TicketStatus::Queued, None),
        ("t7", TicketStatus::Cancelled, None),
    ] {
        let t = b.ticket(id).await.unwrap().unwrap();
        assert_eq!(
            (t.status, t.match_id.as_deref()),
            (status, match_id),
            "{id}"
        );
    }
    assert_eq!(queued_ids(&b, "blitz").await, ["t6"]);
    assert_eq!(b.queue_size("blitz").await.unwrap(), 1);
    assert!(
        b.claim_pairs("blitz", &[]).await.unwrap().is_empty(),
        "an empty round claims nothing"
    );
    // A failed write puts the whole round back, in rating order.
    release(&b, &["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"]).await;
    assert_eq!(
        queued_ids(&b, "blitz").await,
        ["t0", "t1", "t2", "t3", "t4", "t5", "t6"]
    );
    assert_eq!(status_of(&b, "t7").await, TicketStatus::Cancelled);
}

/// More tickets than one read batch of a round (10,000 on Redis).
const LONG_QUEUE: usize = 10_050;

/// Queues [`LONG_QUEUE`] tickets on `blitz`, `t00000` rated lowest; their ids in order.
async fn queue_long(b: &SharedBroker) -> Vec<String> {
    let ids: Vec<String> = (0..LONG_QUEUE).map(|i| format!("t{i:05}")).collect();
    futures_util::stream::iter(ids.iter().enumerate())
        .for_each_concurrent(64, |(i, id)| {
            let b = b.clone();
            async move {
                let t = ticket(id, &format!("p{i}"), "blitz", 1_000.0 + i as f64);
                assert_eq!(b.enqueue(&t).await.unwrap(), Enqueued::Queued);
            }
        })
        .await;
    ids
}

/// A round reads a queue longer than one batch of its reads whole, in
/// rating order, each ticket once.
async fn a_queue_longer_than_a_read_batch_is_read_whole_in_order(b: SharedBroker) {
    let ids = queue_long(&b).await;
    let read = b.queued("blitz").await.unwrap();
    assert_eq!(
        read.iter().map(|t| &t.id).collect::<Vec<_>>(),
        ids.iter().collect::<Vec<_>>()
    );
    assert_eq!(
        read[LONG_QUEUE - 1],
        ticket(
            &ids[LONG_QUEUE - 1],
            &format!("p{}", LONG_QUEUE - 1),
            "blitz",
            1_000.0 + (LONG_QUEUE - 1) as f64
        )
    );
}

/// Lines missing in any batch of a long queue's read are built from their
/// tickets' hashes, a queue entry whose ticket left the queue between the
/// read's two steps (its line gone, its hash no longer queued) is not read,
/// and one whose ticket hash is gone too (it expired) leaves the queue.
#[tokio::test]
async fn redis_missing_lines_are_built_in_every_batch_of_a_read() {
    on_redis_raw(|b, mut raw, prefix| async move {
        let ids = queue_long(&b).await;
        let lines = format!("{prefix}{{mm}}:ql:blitz");
        let (first, second, left, expired) = (&ids[5], &ids[10_003], &ids[10_040], &ids[7]);
        let removed: i64 = redis::cmd("HDEL")
            .arg(&lines)
            .arg(first)
            .arg(second)
            .arg(left)
            .arg(expired)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(removed, 4);
        let _: i64 = redis::cmd("DEL")
            .arg(format!("{prefix}{{mm}}:t:{expired}"))
            .query_async(&mut raw)
            .await
            .unwrap();
        // As a claim leaves a ticket, but for its queue entry.
        let _: i64 = redis::cmd("HSET")
            .arg(format!("{prefix}{{mm}}:t:{left}"))
            .arg("status")
            .arg("matched")
            .query_async(&mut raw)
            .await
            .unwrap();
        let read: Vec<String> = queued_ids(&b, "blitz").await;
        let expected: Vec<String> = ids
            .iter()
            .filter(|id| *id != left && *id != expired)
            .cloned()
            .collect();
        assert_eq!(read, expected);
        // The entry of the expired ticket is gone; the one whose ticket
        // left meanwhile is its claim's to remove.
        assert_eq!(b.queue_size("blitz").await.unwrap(), LONG_QUEUE as u64 - 1);
        for (id, kept) in [(first, true), (second, true), (left, false)] {
            let has_line: bool = redis::cmd("HEXISTS")
                .arg(&lines)
                .arg(id)
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!(has_line, kept, "line of {id}");
        }
    })
    .await;
}

/// A queue entry whose ticket hash is gone (evicted, deleted by hand) is
/// refused by the claim and leaves the queue, instead of being planned and
/// refused in every round.
#[tokio::test]
async fn redis_a_queue_entry_without_its_ticket_leaves_the_queue_at_its_claim() {
    on_redis_raw(|b, mut raw, prefix| async move {
        queue_on_blitz(&b, &[("t1", "p1", 1_500.0), ("t2", "p2", 1_510.0)]).await;
        let _: i64 = redis::cmd("DEL")
            .arg(format!("{prefix}{{mm}}:t:t1"))
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(!claim_one(&b, "t1", "t2", "m1").await);
        assert_eq!(queued_ids(&b, "blitz").await, ["t2"]);
        assert_eq!(b.queue_size("blitz").await.unwrap(), 1);
        assert_eq!(status_of(&b, "t2").await, TicketStatus::Queued);
        // The second ticket of a pair gone: the first, already marked by
        // the claim, is queued again as it was, without a match.
        queue_on_blitz(&b, &[("t3", "p3", 1_520.0)]).await;
        let _: i64 = redis::cmd("DEL")
            .arg(format!("{prefix}{{mm}}:t:t3"))
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(!claim_one(&b, "t2", "t3", "m2").await);
        assert_eq!(queued_ids(&b, "blitz").await, ["t2"]);
        let t2 = b.ticket("t2").await.unwrap().unwrap();
        assert_eq!((t2.status, t2.match_id), (TicketStatus::Queued, None));
        // Neither gone ticket's hash is made again by the claim.
        let left: i64 = redis::cmd("EXISTS")
            .arg(format!("{prefix}{{mm}}:t:t1"))
            .arg(format!("{prefix}{{mm}}:t:t3"))
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(left, 0);
        // And t2 is still claimable.
        queue_on_blitz(&b, &[("t4", "p4", 1_530.0)]).await;
        assert!(claim_one(&b, "t2", "t4", "m3").await);
        assert!(queued_ids(&b, "blitz").await.is_empty());
    })
    .await;
}

/// A ticket's hash expires a day after it was last queued, touched or put
/// back, whatever happens to it meanwhile: a claim leaves the expiry as it
/// was, so a matched ticket stays readable for about a day, and nothing a
/// ticket goes through leaves its hash in Redis for good.
#[tokio::test]
async fn redis_a_tickets_hash_lives_a_day_after_it_was_last_queued_touched_or_put_back() {
    on_redis_raw(|b, mut raw, prefix| async move {
        const DAY_MS: i64 = 24 * 3600 * 1000;
        let key = |id: &str| format!("{prefix}{{mm}}:t:{id}");
        queue_on_blitz(
            &b,
            &[
                ("t1", "p1", 1_500.0),
                ("t2", "p2", 1_510.0),
                ("t3", "p3", 1_520.0),
            ],
        )
        .await;
        let fresh = |ms: i64| ms > DAY_MS - 60_000 && ms <= DAY_MS;
        let queued = pttl(&mut raw, &key("t1")).await;
        assert!(fresh(queued), "queued: {queued}");
        // A ticket waiting long is kept alive by its player's touches.
        pexpire(&mut raw, &key("t1"), 5_000).await;
        b.touch_ticket("t1", 2_000).await.unwrap();
        let touched = pttl(&mut raw, &key("t1")).await;
        assert!(fresh(touched), "touched: {touched}");
        // A claim keeps the expiry it found.
        pexpire(&mut raw, &key("t2"), DAY_MS - 3_600_000).await;
        assert!(claim_one(&b, "t1", "t2", "m1").await);
        assert_eq!(status_of(&b, "t2").await, TicketStatus::Matched);
        let matched = pttl(&mut raw, &key("t2")).await;
        assert!(
            matched > 0 && matched <= DAY_MS - 3_600_000,
            "matched: {matched}"
        );
        // Put back in the queue, it has a day again.
        release(&b, &["t2"]).await;
        assert_eq!(status_of(&b, "t2").await, TicketStatus::Queued);
        let put_back = pttl(&mut raw, &key("t2")).await;
        assert!(fresh(put_back), "put back: {put_back}");
        // Touching a matched ticket leaves its expiry alone.
        pexpire(&mut raw, &key("t1"), 5_000).await;
        b.touch_ticket("t1", 3_000).await.unwrap();
        let touched_matched = pttl(&mut raw, &key("t1")).await;
        assert!(
            touched_matched > 0 && touched_matched <= 5_000,
            "matched, touched: {touched_matched}"
        );
        pexpire(&mut raw, &key("t3"), 5_000).await;
        b.cancel("t3", "left").await.unwrap();
        let cancelled = pttl(&mut raw, &key("t3")).await;
        assert!(fresh(cancelled), "cancelled: {cancelled}");
    })
    .await;
}

/// Milliseconds until `key` expires (-1: never, -2: no such key).
async fn pttl(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query_async(raw).await.unwrap()
}

/// Sets `key` to expire in `ms`.
async fn pexpire(raw: &mut redis::aio::MultiplexedConnection, key: &str, ms: i64) {
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(ms)
        .query_async(raw)
        .await
        .unwrap();
}

/// A queue written before each ticket's line was kept beside it (an upgrade
/// with tickets waiting): the round still reads every ticket whole, from
/// its hash, and keeps its line from then on.
#[tokio::test]
async fn redis_tickets_queued_before_their_lines_existed_are_read_whole() {
    on_redis_raw(|b, mut raw, prefix| async move {
        let t = full_ticket("t1", "p1");
        b.enqueue(&t).await.unwrap();
        let lines = format!("{prefix}{{mm}}:ql:blitz");
        let removed: i64 = redis::cmd("DEL")
            .arg(&lines)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(removed, 1, "the ladder's lines were kept");
        assert_eq!(b.queued("blitz").await.unwrap(), std::slice::from_ref(&t));
        let kept: bool = redis::cmd("HEXISTS")
            .arg(&lines)
            .arg("t1")
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(kept, "the line is kept once read");
        assert_eq!(b.queued("blitz").await.unwrap(), [t]);
    })
    .await;
}

/// Four instances on one Redis (four brokers under one prefix), each
/// streaming its own matches: each instance's subscription connection takes
/// in the events of its matches only, every stream sees every version in
/// order, and an instance holds a Redis subscription for a channel exactly
/// while it has a local subscriber on it.
#[tokio::test]
async fn redis_instances_receive_only_the_events_of_the_matches_they_stream() {
    let Some(url) = redis_url() else {
        return;
    };
    let prefix = format!("contract:{}:", uttt::ids::record_id());
    let mut instances = Vec::new();
    for _ in 0..4 {
        instances.push(RedisBroker::connect(&url, &prefix).await.unwrap());
    }
    let client = redis::Client::open(url.as_str()).unwrap();
    let counter = SubscriberCount {
        nodes: vec![client.get_multiplexed_async_connection().await.unwrap()],
        sharded: false,
    };
    instances_receive_only_their_share(instances, counter, &prefix).await;
}

/// The same on a Redis Cluster (sharded pub/sub: each match's channel lives
/// on the node of its hash slot).
#[tokio::test]
async fn redis_cluster_instances_receive_only_the_events_of_the_matches_they_stream() {
    let Some(url) = cluster_url() else {
        return;
    };
    let prefix = format!("contract:{}:", uttt::ids::record_id());
    let mut instances = Vec::new();
    for _ in 0..4 {
        instances.push(cluster_broker(&url, &prefix).await);
    }
    // Every node of the cluster, from CLUSTER NODES of the first one named.
    let first = url.split(',').next().unwrap();
    let mut conn = redis::Client::open(first)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let listing: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut nodes = Vec::new();
    for line in listing.lines() {
        let address = line.split(' ').nth(1).unwrap().split('@').next().unwrap();
        let client = redis::Client::open(format!("redis://{address}")).unwrap();
        nodes.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    assert!(nodes.len() >= 3, "a cluster of three nodes or more");
    let counter = SubscriberCount {
        nodes,
        sharded: true,
    };
    instances_receive_only_their_share(instances, counter, &prefix).await;
}

/// Counts the subscriptions Redis holds on a channel, over every node.
struct SubscriberCount {
    nodes: Vec<redis::aio::MultiplexedConnection>,
    /// Sharded channels (SSUBSCRIBE) rather than classic ones.
    sharded: bool,
}

impl SubscriberCount {
    async fn of(&mut self, channel: &str) -> i64 {
        let mut total = 0;
        for conn in &mut self.nodes {
            let answer: Vec<(String, i64)> = redis::cmd("PUBSUB")
                .arg(if self.sharded {
                    "SHARDNUMSUB"
                } else {
                    "NUMSUB"
                })
                .arg(channel)
                .query_async(conn)
                .await
                .unwrap();
            total += answer[0].1;
        }
        total
    }
}

/// The body of the four-instance checks above.
async fn instances_receive_only_their_share(
    instances: Vec<Arc<RedisBroker>>,
    mut counter: SubscriberCount,
    prefix: &str,
) {
    let channel = |m: usize| format!("match:m{m}");
    // How many instances Redis counts as subscribed to match `m`'s channel.
    let counter_sharded = counter.sharded;
    let mut subscribers =
        async |m: usize| -> i64 { counter.of(&format!("{prefix}ev:{}", channel(m))).await };

    // Instance i streams matches 2i and 2i+1, match 2i twice (two viewers).
    let mut streams = Vec::new();
    for (i, b) in instances.iter().enumerate() {
        let mut mine = Vec::new();
        for m in [2 * i, 2 * i, 2 * i + 1] {
            mine.push((m, b.subscribe(&channel(m)).await.unwrap()));
        }
        streams.push(mine);
    }
    for m in 0..8 {
        assert_eq!(
            subscribers(m).await,
            1,
            "one subscription per instance, however many viewers"
        );
    }
    assert_eq!(subscribers(8).await, 0, "nobody streams match 8");
    let before: Vec<u64> = instances.iter().map(|b| b.received()).collect();

    // Versions 1..=20 of matches 0..=8, interleaved, from any instance.
    const VERSIONS: usize = 20;
    for v in 1..=VERSIONS {
        for m in 0..=8 {
            instances[(m + v) % 4]
                .publish(&channel(m), format!("{v}"))
                .await
                .unwrap();
        }
    }
    for mine in &mut streams {
        for (m, sub) in mine.iter_mut() {
            for v in 1..=VERSIONS {
                assert_eq!(next_notice(sub).await, message(&v.to_string()), "match {m}");
            }
        }
    }
    // A witness published last: once each instance has it, everything
    // published before it has reached that instance too (one connection, in
    // order; on a cluster the nodes deliver independently, so wait a moment
    // more for a stray message to show).
    let mut witnesses = Vec::new();
    for b in &instances {
        witnesses.push(b.subscribe("witness").await.unwrap());
    }
    instances[0].publish("witness", "w".into()).await.unwrap();
    for w in &mut witnesses {
        assert_eq!(next_notice(w).await, message("w"));
    }
    if counter_sharded {
        sleep_ms(300).await;
    }
    for (i, _) in witnesses.iter().enumerate() {
        assert_eq!(
            instances[i].received() - before[i],
            2 * VERSIONS as u64 + 1,
            "instance {i} took in its two matches' versions and the witness, nothing else"
        );
    }

    // The last viewer leaving unsubscribes the instance; one of two does not.
    let (m0, first) = streams[0].remove(0);
    drop(first);
    let mut lone = streams[0].remove(0).1;
    instances[0]
        .publish(&channel(m0), "still".into())
        .await
        .unwrap();
    assert_eq!(next_notice(&mut lone).await, message("still"));
    drop(lone);
    // Unsubscribing happens in the background: wait for it (the 10 s cap guards a hang).
    let start = std::time::Instant::now();
    while subscribers(m0).await != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "never unsubscribed"
        );
        sleep_ms(10).await;
    }
    assert_eq!(
        subscribers(1).await,
        1,
        "the instance's other match stays subscribed"
    );
    drop(streams);
    drop(witnesses);
    instances[0].delete_all_keys().await.unwrap();
}

/// The id Redis gives the connection `broker` sends the current runtime's
/// commands on.
async fn client_id(broker: &RedisBroker) -> i64 {
    redis::cmd("CLIENT")
        .arg("ID")
        .query_async(&mut broker.connection())
        .await
        .expect("CLIENT ID on the runtime's connection")
}

/// Waits until the current runtime's own connection is open (the 10 s cap
/// guards a hang), asking for it as a call does; returns its id.
async fn own_client_id(broker: &RedisBroker) -> i64 {
    let start = std::time::Instant::now();
    loop {
        let id = client_id(broker).await;
        if broker.runtime_has_own_connection() {
            return client_id(broker).await;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no own connection after {id}"
        );
        sleep_ms(5).await;
    }
}

/// The runtime a broker was connected on, on a thread of its own, which
/// drives the broker's shared connection until [`Home::end`].
struct Home {
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Home {
    /// Ends the runtime (and with it the shared connection's driver).
    fn end(self) {
        drop(self.stop);
        self.thread.join().unwrap();
    }
}

/// A broker on `TEST_REDIS_URL` connected on a [`Home`] runtime; `None`
/// when the variable is unset.
fn broker_on_its_own_runtime() -> Option<(Home, Arc<RedisBroker>)> {
    let url = redis_url()?;
    let prefix = format!("contract:{}:", uttt::ids::record_id());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        current_thread_runtime().block_on(async move {
            let broker = redis_broker(&url, &prefix).await;
            tx.send(broker).unwrap();
            let _ = stopped.await;
        });
    });
    let broker = rx.recv().expect("the broker's runtime started");
    Some((Home { stop, thread }, broker))
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Each runtime that sends commands (an HTTP worker's, each on its own
/// thread) gets a connection of its own, opened and driven on it: the
/// shared connection serves until it is open, and the two runtimes' own go
/// on serving them after the runtime that drives the shared one ended.
#[test]
fn redis_each_runtime_sends_on_a_connection_of_its_own_driven_by_it() {
    let Some((home, broker)) = broker_on_its_own_runtime() else {
        return;
    };
    // Both threads hold their own connections at once, through `home`'s end.
    // Channels, not barriers: a thread that fails drops its sender, and the
    // test fails instead of waiting for it.
    let (opened, own) = std::sync::mpsc::channel();
    let worker = |broker: Arc<RedisBroker>| {
        let opened = opened.clone();
        let (go, ended) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = current_thread_runtime();
            let (first, mine) = runtime
                .block_on(async { (client_id(&broker).await, own_client_id(&broker).await) });
            opened.send(()).unwrap();
            ended.recv().unwrap();
            let after = runtime.block_on(client_id(&broker));
            (first, mine, after)
        });
        (go, thread)
    };
    let (a, b) = (worker(Arc::clone(&broker)), worker(Arc::clone(&broker)));
    for _ in 0..2 {
        own.recv_timeout(Duration::from_secs(30))
            .expect("each thread opens a connection of its own");
    }
    home.end();
    let [a, b] = [a, b].map(|(go, thread)| {
        go.send(()).unwrap();
        thread.join().unwrap()
    });
    assert_eq!(
        a.0, b.0,
        "before its own opens, a runtime uses the shared connection"
    );
    assert_ne!(a.1, a.0, "a runtime's own connection is not the shared one");
    assert_ne!(b.1, a.1, "two runtimes, two connections");
    assert_eq!(
        (a.2, b.2),
        (a.1, b.1),
        "each keeps its own, driven by its own runtime"
    );
}

/// A thread that runs one runtime after another sends on the current one's
/// connection: not on an idle runtime's (nothing drives it), nor on an
/// ended runtime's (its driver is gone, and its id may be the new one's),
/// and the ended runtimes' connections are let go.
#[test]
fn redis_a_thread_on_another_runtime_sends_on_that_runtimes_connection() {
    let Some((_home, broker)) = broker_on_its_own_runtime() else {
        return;
    };
    let idle = current_thread_runtime();
    let first = idle.block_on(own_client_id(&broker));
    // `idle` lives on, idle, while this thread runs another runtime.
    let second = current_thread_runtime().block_on(own_client_id(&broker));
    assert_ne!(second, first, "a connection of the second runtime's own");
    drop(idle);
    // Both runtimes are gone; this thread is the same.
    let (served, third) = current_thread_runtime().block_on(async {
        let served = client_id(&broker).await;
        (served, own_client_id(&broker).await)
    });
    assert!(
        ![first, second].contains(&served) && ![first, second].contains(&third),
        "never sent on an ended runtime's connection"
    );
    assert_eq!(
        broker.own_connections(),
        1,
        "the ended runtimes' connections are no longer kept"
    );
    current_thread_runtime().block_on(async { broker.delete_all_keys().await.unwrap() });
}
