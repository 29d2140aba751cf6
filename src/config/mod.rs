//! Configuration from the environment. Every variable is documented in the
//! README's configuration table; defaults make `cargo run --release` a complete
//! single-machine server. One file per concern: network (rate limits, proxies),
//! secrets, ladders and matchmaking, workers and presence; this one holds the
//! whole `Config` and reads it.

mod ladders;
mod network;
mod secrets;
#[cfg(test)]
mod tests;
mod workers;

use std::path::PathBuf;
use std::time::Duration;

pub use ladders::{LadderConfig, MatchmakingConfig, default_ladders};
use ladders::{ladders, rating_growth};
pub use network::{IpNet, ProxyTrust, RateLimit, RateLimits};
pub use secrets::{MIN_JWT_SECRET_BYTES, check_jwt_secret};
use workers::workers;
pub use workers::{AnalysisConfig, PresenceConfig, Workers};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Readable lines for a terminal.
    Human,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Where matches and players are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseConfig {
    /// A PostgreSQL URL (`postgres://…`), the production shape.
    Postgres(String),
    /// A SQLite file, the embedded default.
    Sqlite(PathBuf),
}

/// Caps on what one player may hold open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayerCaps {
    /// Unfinished practice matches (`UTTT_PRACTICE_MATCHES_PER_PLAYER`).
    pub practice_matches: u32,
    /// Rooms nobody has joined yet (`UTTT_OPEN_ROOMS_PER_PLAYER`).
    pub open_rooms: u32,
    /// Pending challenges one challenger may hold (`UTTT_PENDING_CHALLENGES_PER_PLAYER`).
    pub pending_challenges: u32,
    /// Open event streams, on all instances together (`UTTT_STREAMS_PER_PLAYER`).
    pub streams: u32,
}

/// The whole server configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address the HTTP server binds (`UTTT_BIND`).
    pub bind: String,
    /// Folder for the SQLite file and the generated secret (`UTTT_DATA_DIR`).
    pub data_dir: PathBuf,
    /// The database (`DATABASE_URL`).
    pub database: DatabaseConfig,
    /// Largest number of pooled database connections (`UTTT_DB_POOL_SIZE`).
    pub db_pool_size: u32,
    /// Named prepared statements on PostgreSQL (`UTTT_DB_PREPARED_STATEMENTS`);
    /// off behind PgBouncer in transaction pooling.
    pub db_prepared_statements: bool,
    /// Connections a PostgreSQL instance keeps for players' moves in two
    /// statements (`UTTT_DB_PIPELINE_SIZE`, see `store::pipelined`); 0
    /// plays every move in the locked transaction of five.
    pub db_pipeline_size: u32,
    /// Redis URL (`REDIS_URL`); `None` selects the in-process broker. On a
    /// cluster, one or more nodes' URLs separated by commas.
    pub redis_url: Option<String>,
    /// `REDIS_URL` names a Redis Cluster (`UTTT_REDIS_CLUSTER`, or implied
    /// by several URLs).
    pub redis_cluster: bool,
    /// Prefix of every Redis key and channel (`UTTT_REDIS_PREFIX`).
    pub redis_prefix: String,
    /// HMAC secret for access tokens (`UTTT_JWT_SECRET`); `None` = generated into the data dir.
    pub jwt_secret: Option<String>,
    /// Lifetime of access tokens (`UTTT_ACCESS_TOKEN_TTL_SECS`).
    pub access_token_ttl: Duration,
    /// Lifetime of refresh tokens (`UTTT_REFRESH_TOKEN_TTL_SECS`).
    pub refresh_token_ttl: Duration,
    /// Log format (`UTTT_LOG_FORMAT`: `human` or `json`).
    pub log_format: LogFormat,
    /// Whether and how the client address is taken from `X-Forwarded-For`:
    /// `UTTT_TRUST_PROXY` (only behind proxies you run), then which hops are
    /// those proxies (`UTTT_TRUSTED_PROXY_HOPS`, `UTTT_TRUSTED_PROXIES`).
    pub proxy_trust: ProxyTrust,
    /// Rate limits on login, registration and room look-ups.
    pub rate_limits: RateLimits,
    /// What one player may hold open at once.
    pub caps: PlayerCaps,
    /// How long a room nobody joined stays open (`UTTT_ROOM_TTL_SECS`).
    pub room_ttl: Duration,
    /// The bearer token `/metrics` asks for (`UTTT_METRICS_TOKEN`); `None`: open.
    pub metrics_token: Option<String>,
    /// Which background workers this instance runs (`UTTT_WORKERS`).
    pub workers: Workers,
    /// HTTP worker threads (`UTTT_HTTP_WORKERS`, default: one per core).
    pub http_workers: usize,
    /// How long a seated player may be absent before the CPU takes their seat (`UTTT_DROP_GRACE_MS`).
    pub drop_grace: Duration,
    /// How long past a player's deadline the clock sweeper, reads and the
    /// other player's resignation wait before they end the match on time
    /// (`UTTT_FLAG_SETTLE_MS`): a move
    /// that arrived in time may still wait for a database connection or the
    /// row's lock, and is judged first. A move arriving late is refused at
    /// once whatever this is.
    pub flag_settle: Duration,
    /// How open event streams keep their players' seats: lease lifetime and linger.
    pub presence: PresenceConfig,
    /// The ladders (`UTTT_LADDERS` adds to the defaults).
    pub ladders: Vec<LadderConfig>,
    /// Matchmaking windows and timing.
    pub matchmaking: MatchmakingConfig,
    /// How fast rating deviations grow between games (`UTTT_RATING_PERIODS_PER_DAY`).
    pub rating_growth: crate::rating::Growth,
    /// Engine analysis of finished matches: time per position, queue bound.
    pub analysis: AnalysisConfig,
    /// The shortest arena a player may create, in ms
    /// (`UTTT_ARENA_MIN_DURATION_MS`): API.md's 10 minutes unless the
    /// operator lowers it, to 1 minute at least, for short club events.
    pub arena_min_duration_ms: i64,
}

impl Config {
    /// The ladder with this id.
    pub fn ladder(&self, id: &str) -> Option<&LadderConfig> {
        self.ladders.iter().find(|l| l.id == id)
    }
}

/// A configuration value that could not be understood.
#[derive(Debug, thiserror::Error)]
#[error("configuration variable {name}: {message}")]
pub struct ConfigError {
    /// The variable's name.
    pub name: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl Config {
    /// Reads the configuration from the process environment.
    ///
    /// # Errors
    /// A variable that is set but cannot be parsed.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// Reads the configuration through `get`, which maps a variable name to its value.
    ///
    /// # Errors
    /// A variable that is set but cannot be parsed.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let data_dir = PathBuf::from(get("UTTT_DATA_DIR").unwrap_or_else(|| "./data".into()));
        let database = match get("DATABASE_URL") {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                DatabaseConfig::Postgres(url)
            }
            Some(url) => {
                let path = url.strip_prefix("sqlite://").unwrap_or(&url);
                DatabaseConfig::Sqlite(PathBuf::from(path))
            }
            None => DatabaseConfig::Sqlite(data_dir.join("uttt.db")),
        };
        let window = Duration::from_secs(number(&get, "UTTT_RATE_WINDOW_SECS", 60)?);
        let rate = |name: &'static str, default: u64| -> Result<RateLimit, ConfigError> {
            let limit = number(&get, name, default)?;
            Ok(RateLimit {
                limit: u32::try_from(limit).map_err(|_| ConfigError {
                    name,
                    message: "too large".into(),
                })?,
                window,
            })
        };
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let jwt_secret = get("UTTT_JWT_SECRET");
        if let Some(secret) = &jwt_secret {
            check_jwt_secret(secret)?;
        }
        let trust_proxy = flag(&get, "UTTT_TRUST_PROXY", false)?;
        let proxy_trust = match (trust_proxy, get("UTTT_TRUSTED_PROXIES")) {
            (false, _) => ProxyTrust::None,
            (true, Some(list)) => ProxyTrust::Addresses(
                list.split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(IpNet::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|message| ConfigError {
                        name: "UTTT_TRUSTED_PROXIES",
                        message,
                    })?,
            ),
            (true, None) => {
                let hops = number(&get, "UTTT_TRUSTED_PROXY_HOPS", 1)?;
                ProxyTrust::Hops(
                    usize::try_from(hops)
                        .ok()
                        .filter(|h| (1..=16).contains(h))
                        .ok_or(ConfigError {
                            name: "UTTT_TRUSTED_PROXY_HOPS",
                            message: format!("must be 1 to 16, got {hops}"),
                        })?,
                )
            }
        };
        let cap = |name: &'static str, default: u64| -> Result<u32, ConfigError> {
            u32::try_from(number(&get, name, default)?.max(1)).map_err(|_| ConfigError {
                name,
                message: "too large".into(),
            })
        };
        Ok(Config {
            bind: get("UTTT_BIND").unwrap_or_else(|| "127.0.0.1:8080".into()),
            data_dir,
            database,
            db_pool_size: u32::try_from(number(&get, "UTTT_DB_POOL_SIZE", 16)?.max(1)).map_err(
                |_| ConfigError {
                    name: "UTTT_DB_POOL_SIZE",
                    message: "too large".into(),
                },
            )?,
            db_prepared_statements: flag(&get, "UTTT_DB_PREPARED_STATEMENTS", true)?,
            db_pipeline_size: u32::try_from(number(&get, "UTTT_DB_PIPELINE_SIZE", 16)?).map_err(
                |_| ConfigError {
                    name: "UTTT_DB_PIPELINE_SIZE",
                    message: "too large".into(),
                },
            )?,
            redis_cluster: flag(&get, "UTTT_REDIS_CLUSTER", false)?
                || get("REDIS_URL").is_some_and(|u| u.contains(',')),
            redis_url: get("REDIS_URL"),
            redis_prefix: get("UTTT_REDIS_PREFIX").unwrap_or_else(|| "uttt:".into()),
            jwt_secret,
            access_token_ttl: Duration::from_secs(number(&get, "UTTT_ACCESS_TOKEN_TTL_SECS", 900)?),
            refresh_token_ttl: Duration::from_secs(number(
                &get,
                "UTTT_REFRESH_TOKEN_TTL_SECS",
                30 * 24 * 3600,
            )?),
            log_format: match get("UTTT_LOG_FORMAT").as_deref() {
                None | Some("human") => LogFormat::Human,
                Some("json") => LogFormat::Json,
                Some(other) => {
                    return Err(ConfigError {
                        name: "UTTT_LOG_FORMAT",
                        message: format!("expected `human` or `json`, got `{other}`"),
                    });
                }
            },
            proxy_trust,
            rate_limits: RateLimits {
                login_per_address: rate("UTTT_LOGIN_LIMIT_PER_ADDRESS", 30)?,
                login_per_username: rate("UTTT_LOGIN_LIMIT_PER_USERNAME", 10)?,
                login_ceiling_per_username: rate("UTTT_LOGIN_CEILING_PER_USERNAME", 100)?,
                register_per_address: rate("UTTT_REGISTER_LIMIT_PER_ADDRESS", 10)?,
                room_lookups_per_player: rate("UTTT_ROOM_LOOKUPS_PER_PLAYER", 60)?,
                room_lookups_per_address: rate("UTTT_ROOM_LOOKUPS_PER_ADDRESS", 120)?,
            },
            caps: PlayerCaps {
                practice_matches: cap("UTTT_PRACTICE_MATCHES_PER_PLAYER", 5)?,
                open_rooms: cap("UTTT_OPEN_ROOMS_PER_PLAYER", 5)?,
                pending_challenges: cap("UTTT_PENDING_CHALLENGES_PER_PLAYER", 5)?,
                streams: cap("UTTT_STREAMS_PER_PLAYER", 10)?,
            },
            room_ttl: Duration::from_secs(number(&get, "UTTT_ROOM_TTL_SECS", 3600)?.max(1)),
            metrics_token: match get("UTTT_METRICS_TOKEN") {
                Some(token) if token.len() < 16 => {
                    return Err(ConfigError {
                        name: "UTTT_METRICS_TOKEN",
                        message: "needs at least 16 characters (e.g. `openssl rand -hex 24`)"
                            .into(),
                    });
                }
                other => other,
            },
            workers: workers(get("UTTT_WORKERS"))?,
            drop_grace: Duration::from_millis(number(&get, "UTTT_DROP_GRACE_MS", 20_000)?),
            flag_settle: Duration::from_millis(number(&get, "UTTT_FLAG_SETTLE_MS", 300)?),
            presence: PresenceConfig {
                lease_ttl: Duration::from_millis(
                    number(&get, "UTTT_PRESENCE_LEASE_MS", 15_000)?.max(30),
                ),
                linger: Duration::from_millis(number(&get, "UTTT_PRESENCE_LINGER_MS", 3_000)?),
            },
            ladders: ladders(get("UTTT_LADDERS"))?,
            matchmaking: MatchmakingConfig {
                window_start: number(&get, "UTTT_MM_WINDOW_START", 100)? as f64,
                window_growth_per_sec: number(&get, "UTTT_MM_WINDOW_GROWTH", 10)? as f64,
                unlimited_after: Duration::from_millis(number(
                    &get,
                    "UTTT_MM_UNLIMITED_AFTER_MS",
                    60_000,
                )?),
                abandon_after: abandon_after(&get)?,
                round_every: Duration::from_millis(number(&get, "UTTT_MM_ROUND_MS", 500)?.max(10)),
                chunk_pairs: usize::try_from(number(&get, "UTTT_MM_CHUNK_PAIRS", 1_250)?.max(1))
                    .unwrap_or(usize::MAX),
            },
            http_workers: usize::try_from(number(&get, "UTTT_HTTP_WORKERS", cores as u64)?.max(1))
                .unwrap_or(cores),
            rating_growth: rating_growth(get("UTTT_RATING_PERIODS_PER_DAY"))?,
            analysis: AnalysisConfig {
                per_position: Duration::from_millis(
                    number(&get, "UTTT_ANALYSIS_MS_PER_POSITION", 1_000)?.max(1),
                ),
                queue: cap("UTTT_ANALYSIS_QUEUE", 32)?,
            },
            arena_min_duration_ms: arena_min_duration(&get)?,
        })
    }
}

/// API.md's shortest arena (10 minutes): `UTTT_ARENA_MIN_DURATION_MS`'s default.
pub const API_MIN_ARENA_MS: i64 = 600_000;
/// How far an operator may lower the shortest arena (1 minute).
pub const LOWEST_MIN_ARENA_MS: i64 = 60_000;

/// `UTTT_ARENA_MIN_DURATION_MS`: 1 minute to 10 minutes, default 10.
fn arena_min_duration(get: &impl Fn(&str) -> Option<String>) -> Result<i64, ConfigError> {
    let (api, floor) = (API_MIN_ARENA_MS, LOWEST_MIN_ARENA_MS);
    let name = "UTTT_ARENA_MIN_DURATION_MS";
    let ms = number(get, name, api.unsigned_abs())?;
    match i64::try_from(ms) {
        Ok(ms) if (floor..=api).contains(&ms) => Ok(ms),
        _ => Err(ConfigError {
            name,
            message: format!("must be {floor} to {api} (ms), got {ms}"),
        }),
    }
}

/// `UTTT_MM_ABANDON_AFTER_MS`: under a day, since a queued ticket's hash in
/// Redis lives a day past its player's last touch, and an unseen ticket must
/// be cancelled before its hash is gone.
fn abandon_after(get: &impl Fn(&str) -> Option<String>) -> Result<Duration, ConfigError> {
    const DAY_MS: u64 = 24 * 3600 * 1000;
    match number(get, "UTTT_MM_ABANDON_AFTER_MS", 60_000)? {
        ms if ms < DAY_MS => Ok(Duration::from_millis(ms)),
        ms => Err(ConfigError {
            name: "UTTT_MM_ABANDON_AFTER_MS",
            message: format!("must be under a day ({DAY_MS} ms), got {ms}"),
        }),
    }
}

fn number(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u64,
) -> Result<u64, ConfigError> {
    match get(name) {
        None => Ok(default),
        Some(text) => text.trim().parse().map_err(|_| ConfigError {
            name,
            message: format!("expected a whole number, got `{text}`"),
        }),
    }
}

fn flag(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: bool,
) -> Result<bool, ConfigError> {
    match get(name).as_deref().map(str::trim) {
        None => Ok(default),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(other) => Err(ConfigError {
            name,
            message: format!("expected true or false, got `{other}`"),
        }),
    }
}
