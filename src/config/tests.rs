//! The configuration read from sample environments.

use super::*;
use crate::clock::TimeControl;
use std::collections::HashMap;

fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::from_lookup(|name| map.get(name).cloned())
}

#[test]
fn defaults_give_the_embedded_single_machine_server() {
    let c = config(&[]).unwrap();
    assert_eq!(c.bind, "127.0.0.1:8080");
    assert_eq!(
        c.database,
        DatabaseConfig::Sqlite(PathBuf::from("./data/uttt.db"))
    );
    assert_eq!(c.redis_url, None);
    assert_eq!(c.access_token_ttl, Duration::from_secs(900));
    assert_eq!(c.refresh_token_ttl, Duration::from_secs(2_592_000));
    assert_eq!(c.log_format, LogFormat::Human);
    assert_eq!(c.presence.lease_ttl, Duration::from_secs(15));
    assert_eq!(c.presence.renew_every(), Duration::from_secs(5));
    assert_eq!(c.presence.linger, Duration::from_secs(3));
}

#[test]
fn a_postgres_url_selects_postgres_and_a_path_selects_sqlite() {
    let pg = config(&[("DATABASE_URL", "postgres://u@h/db")]).unwrap();
    assert_eq!(
        pg.database,
        DatabaseConfig::Postgres("postgres://u@h/db".into())
    );
    let file = config(&[("DATABASE_URL", "sqlite:///tmp/x.db")]).unwrap();
    assert_eq!(
        file.database,
        DatabaseConfig::Sqlite(PathBuf::from("/tmp/x.db"))
    );
    let dir = config(&[("UTTT_DATA_DIR", "/srv/uttt")]).unwrap();
    assert_eq!(
        dir.database,
        DatabaseConfig::Sqlite(PathBuf::from("/srv/uttt/uttt.db"))
    );
}

#[test]
fn the_default_ladders_are_the_three_of_api_md() {
    let c = config(&[]).unwrap();
    let ids: Vec<&str> = c.ladders.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["ultimate-10m", "ultimate-turn30", "advanced-10m"]);
    assert_eq!(c.ladder("advanced-10m").unwrap().depth, 3);
    assert_eq!(
        c.ladder("ultimate-turn30").unwrap().time_control,
        TimeControl::PerTurn { turn_ms: 30_000 }
    );
}

#[test]
fn a_host_can_add_and_replace_ladders() {
    let extra = r#"[{"id": "blitz", "name": "Blitz", "depth": 2, "time_control": {"kind": "clock", "initial_ms": 180000, "increment_ms": 2000}},
                    {"id": "ultimate-10m", "name": "Ten", "depth": 2, "time_control": {"kind": "clock", "initial_ms": 600000}, "rated": false}]"#;
    let c = config(&[("UTTT_LADDERS", extra)]).unwrap();
    assert_eq!(c.ladders.len(), 4);
    assert_eq!(
        c.ladder("blitz").unwrap().time_control,
        TimeControl::Clock {
            initial_ms: 180_000,
            increment_ms: 2_000
        }
    );
    assert!(!c.ladder("ultimate-10m").unwrap().rated);
    for bad in [
        r#"[{"id": "Bad Id", "name": "x", "depth": 2, "time_control": {"kind": "none"}, "rated": false}]"#,
        r#"[{"id": "deep", "name": "x", "depth": 5, "time_control": {"kind": "per_turn", "turn_ms": 30000}}]"#,
        r#"[{"id": "free", "name": "x", "depth": 2, "time_control": {"kind": "none"}}]"#,
        "not json",
    ] {
        assert_eq!(
            config(&[("UTTT_LADDERS", bad)]).unwrap_err().name,
            "UTTT_LADDERS",
            "{bad}"
        );
    }
}

#[test]
fn workers_can_be_chosen_one_by_one() {
    assert_eq!(config(&[]).unwrap().workers, Workers::ALL);
    assert_eq!(
        config(&[("UTTT_WORKERS", "false")]).unwrap().workers,
        Workers::NONE
    );
    let some = config(&[("UTTT_WORKERS", "clock, cpu")]).unwrap().workers;
    assert!(some.clock && some.cpu && !some.pairing && !some.presence);
    assert_eq!(
        config(&[("UTTT_WORKERS", "clock,bogus")]).unwrap_err().name,
        "UTTT_WORKERS"
    );
}

#[test]
fn placeholder_short_and_repetitive_jwt_secrets_are_refused() {
    let compose = "change-me-to-a-long-random-secret-shared-by-all-instances";
    for bad in [
        compose,
        "CHANGE_ME_TO_A_LONG_RANDOM_SECRET_SHARED_BY_ALL_INSTANCES",
        "changeme",
        "secret",
        "please-change-me-before-going-live-0123456789",
        "0123456789abcdef",
        &"a".repeat(64),
        "abababababababababababababababababab",
    ] {
        let err = config(&[("UTTT_JWT_SECRET", bad)]).unwrap_err();
        assert_eq!(err.name, "UTTT_JWT_SECRET", "{bad}");
        let text = err.to_string();
        assert!(text.contains("UTTT_JWT_SECRET"), "{text}");
        assert!(text.contains("openssl rand"), "{text}");
    }
    let good = "Qm9vdHN0cmFwcGVkIHNlY3JldCBmb3IgdGhlIHRlc3Rz";
    assert_eq!(
        config(&[("UTTT_JWT_SECRET", good)])
            .unwrap()
            .jwt_secret
            .as_deref(),
        Some(good)
    );
    // Unset: the embedded default generates one in the data folder.
    assert_eq!(config(&[]).unwrap().jwt_secret, None);
}

#[test]
fn proxy_trust_is_off_by_default_and_one_hop_when_on() {
    assert_eq!(config(&[]).unwrap().proxy_trust, ProxyTrust::None);
    assert_eq!(
        config(&[("UTTT_TRUSTED_PROXY_HOPS", "2")])
            .unwrap()
            .proxy_trust,
        ProxyTrust::None,
        "hops mean nothing until the proxy is trusted"
    );
    let on = config(&[("UTTT_TRUST_PROXY", "true")]).unwrap();
    assert_eq!(on.proxy_trust, ProxyTrust::Hops(1));
    let two = config(&[
        ("UTTT_TRUST_PROXY", "true"),
        ("UTTT_TRUSTED_PROXY_HOPS", "2"),
    ])
    .unwrap();
    assert_eq!(two.proxy_trust, ProxyTrust::Hops(2));
    assert_eq!(
        config(&[
            ("UTTT_TRUST_PROXY", "true"),
            ("UTTT_TRUSTED_PROXY_HOPS", "0")
        ])
        .unwrap_err()
        .name,
        "UTTT_TRUSTED_PROXY_HOPS"
    );
    let list = config(&[
        ("UTTT_TRUST_PROXY", "true"),
        ("UTTT_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.7,fd00::/8"),
    ])
    .unwrap();
    let ProxyTrust::Addresses(nets) = list.proxy_trust else {
        panic!("a list of proxies")
    };
    assert_eq!(nets.len(), 3);
    assert_eq!(
        config(&[
            ("UTTT_TRUST_PROXY", "true"),
            ("UTTT_TRUSTED_PROXIES", "10.0.0.0/33")
        ])
        .unwrap_err()
        .name,
        "UTTT_TRUSTED_PROXIES"
    );
}

#[test]
fn networks_contain_their_addresses_only() {
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let net = IpNet::parse("10.1.0.0/16").unwrap();
    assert!(net.contains(ip("10.1.200.3")));
    assert!(!net.contains(ip("10.2.0.1")));
    assert!(net.contains(ip("::ffff:10.1.0.9")), "IPv4-mapped IPv6");
    assert!(IpNet::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
    let one = IpNet::parse("192.168.1.7").unwrap();
    assert!(one.contains(ip("192.168.1.7")) && !one.contains(ip("192.168.1.8")));
    let v6 = IpNet::parse("2001:db8::/32").unwrap();
    assert!(v6.contains(ip("2001:db8:1::1")) && !v6.contains(ip("2001:db9::1")));
    assert!(!v6.contains(ip("10.0.0.1")));
    assert!(IpNet::parse("nonsense").is_err());
    assert!(IpNet::parse("::1/129").is_err());
}

#[test]
fn caps_and_limits_have_documented_defaults() {
    let c = config(&[]).unwrap();
    assert_eq!(
        c.caps,
        PlayerCaps {
            practice_matches: 5,
            open_rooms: 5,
            pending_challenges: 5,
            streams: 10
        }
    );
    assert_eq!(c.room_ttl, Duration::from_secs(3600));
    assert_eq!(c.rate_limits.login_per_username.limit, 10);
    assert_eq!(c.rate_limits.login_ceiling_per_username.limit, 100);
    assert_eq!(c.rate_limits.room_lookups_per_player.limit, 60);
    assert_eq!(c.rate_limits.room_lookups_per_address.limit, 120);
    assert_eq!(c.metrics_token, None);
    assert_eq!(
        config(&[("UTTT_METRICS_TOKEN", "short")]).unwrap_err().name,
        "UTTT_METRICS_TOKEN"
    );
}

/// The `UTTT_*` names quoted in `text`.
fn variables_in(text: &str) -> std::collections::BTreeSet<String> {
    text.match_indices("UTTT_")
        .map(|(i, _)| {
            text[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| name.len() > "UTTT_".len() && !name.ends_with('_'))
        .collect()
}

#[test]
fn every_variable_is_in_the_readme_table_and_compose_sets_only_known_ones() {
    // Every file of the configuration, so a variable read anywhere in it counts.
    let code = variables_in(
        &[
            include_str!("mod.rs"),
            include_str!("ladders.rs"),
            include_str!("network.rs"),
            include_str!("secrets.rs"),
            include_str!("workers.rs"),
        ]
        .concat(),
    );
    let readme = include_str!("../../README.md");
    let table: String = readme
        .lines()
        .skip_while(|l| !l.starts_with("## Configuration"))
        .take_while(|l| !l.starts_with("## API overview"))
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').nth(1).unwrap_or_default())
        .collect();
    let documented = variables_in(&table);
    for name in &code {
        assert!(
            documented.contains(name),
            "{name} is missing from the README's configuration table"
        );
    }
    for name in variables_in(include_str!("../../docker-compose.yml")) {
        assert!(
            code.contains(&name),
            "docker-compose.yml sets {name}, which the server does not read"
        );
    }
}

#[test]
fn rating_periods_per_day_default_to_lichess_and_refuse_negatives() {
    assert_eq!(
        config(&[]).unwrap().rating_growth.periods_per_day(),
        0.21436
    );
    let c = config(&[("UTTT_RATING_PERIODS_PER_DAY", "1.5")]).unwrap();
    assert_eq!(c.rating_growth.periods_per_day(), 1.5);
    let err = config(&[("UTTT_RATING_PERIODS_PER_DAY", "-1")]).unwrap_err();
    assert_eq!(err.name, "UTTT_RATING_PERIODS_PER_DAY");
}

#[test]
fn a_bad_value_names_the_variable() {
    let err = config(&[("UTTT_ACCESS_TOKEN_TTL_SECS", "soon")]).unwrap_err();
    assert_eq!(err.name, "UTTT_ACCESS_TOKEN_TTL_SECS");
    let err = config(&[("UTTT_LOG_FORMAT", "xml")]).unwrap_err();
    assert_eq!(err.name, "UTTT_LOG_FORMAT");
}

#[test]
fn analysis_time_per_position_and_queue_bound_are_read() {
    let c = config(&[]).unwrap();
    assert_eq!(c.analysis.per_position, Duration::from_millis(1_000));
    assert_eq!(c.analysis.queue, 32);
    assert!(c.workers.analysis);
    let c = config(&[
        ("UTTT_ANALYSIS_MS_PER_POSITION", "20"),
        ("UTTT_ANALYSIS_QUEUE", "3"),
        ("UTTT_WORKERS", "analysis"),
    ])
    .unwrap();
    assert_eq!(c.analysis.per_position, Duration::from_millis(20));
    assert_eq!(c.analysis.queue, 3);
    assert!(c.workers.analysis && !c.workers.cpu);
    // The lease outlasts ten positions, and never less than 30 s.
    assert_eq!(c.analysis.lease(), Duration::from_secs(30));
    let err = config(&[("UTTT_ANALYSIS_QUEUE", "many")]).unwrap_err();
    assert_eq!(err.name, "UTTT_ANALYSIS_QUEUE");
}

#[test]
fn the_shortest_arena_is_api_md_s_unless_the_operator_lowers_it() {
    assert_eq!(config(&[]).unwrap().arena_min_duration_ms, 600_000);
    let c = config(&[("UTTT_ARENA_MIN_DURATION_MS", "300000")]).unwrap();
    assert_eq!(c.arena_min_duration_ms, 300_000);
    for refused in ["59999", "600001", "-1", "five minutes"] {
        let err = config(&[("UTTT_ARENA_MIN_DURATION_MS", refused)]).unwrap_err();
        assert_eq!(err.name, "UTTT_ARENA_MIN_DURATION_MS", "{refused}");
    }
}

#[test]
fn an_unseen_ticket_is_abandoned_within_the_day_its_redis_hash_lives() {
    let c = config(&[("UTTT_MM_ABANDON_AFTER_MS", "86399999")]).unwrap();
    assert_eq!(c.matchmaking.abandon_after.as_millis(), 86_399_999);
    let err = config(&[("UTTT_MM_ABANDON_AFTER_MS", "86400000")]).unwrap_err();
    assert_eq!(err.name, "UTTT_MM_ABANDON_AFTER_MS");
}

#[test]
fn a_pairing_round_is_made_in_chunks_the_operator_may_size() {
    assert_eq!(config(&[]).unwrap().matchmaking.chunk_pairs, 1_250);
    let c = config(&[("UTTT_MM_CHUNK_PAIRS", "2")]).unwrap();
    assert_eq!(c.matchmaking.chunk_pairs, 2);
    // Zero would make no chunk at all: one pair is the smallest.
    assert_eq!(
        config(&[("UTTT_MM_CHUNK_PAIRS", "0")])
            .unwrap()
            .matchmaking
            .chunk_pairs,
        1
    );
    let err = config(&[("UTTT_MM_CHUNK_PAIRS", "many")]).unwrap_err();
    assert_eq!(err.name, "UTTT_MM_CHUNK_PAIRS");
}
