//! Configuration from the environment. Every variable is documented in the
//! README's configuration table; defaults make `cargo run --release` a complete
//! single-machine server.

use std::path::PathBuf;

use crate::clock::TimeControl;
use std::time::Duration;

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

/// A limit of `limit` requests per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed in one window.
    pub limit: u32,
    /// Length of the window.
    pub window: Duration,
}

/// Rate limits on the account and room endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Login attempts per client address.
    pub login_per_address: RateLimit,
    /// Failed logins per username from one client address; past it that
    /// address waits for the window, whatever the password.
    pub login_per_username: RateLimit,
    /// Failed logins per username from every address together; past it only
    /// addresses with no failure for that name in the window may try.
    pub login_ceiling_per_username: RateLimit,
    /// Registrations per client address.
    pub register_per_address: RateLimit,
    /// Room look-ups and joins (`/rooms/{code}`) per player.
    pub room_lookups_per_player: RateLimit,
    /// Room look-ups and joins per client address.
    pub room_lookups_per_address: RateLimit,
}

/// Caps on what one player may hold open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayerCaps {
    /// Unfinished practice matches (`UTTT_PRACTICE_MATCHES_PER_PLAYER`).
    pub practice_matches: u32,
    /// Rooms nobody has joined yet (`UTTT_OPEN_ROOMS_PER_PLAYER`).
    pub open_rooms: u32,
    /// Open event streams, on all instances together (`UTTT_STREAMS_PER_PLAYER`).
    pub streams: u32,
}

/// Which `X-Forwarded-For` hops are the server's own proxies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyTrust {
    /// `X-Forwarded-For` is ignored: the client is the peer (`UTTT_TRUST_PROXY=false`).
    None,
    /// This many proxies stand in front of the server (`UTTT_TRUSTED_PROXY_HOPS`):
    /// the client is the address the outermost one appended.
    Hops(usize),
    /// Proxies at these addresses (`UTTT_TRUSTED_PROXIES`): the client is the
    /// rightmost hop that is not one of them.
    Addresses(Vec<IpNet>),
}

/// An IP network: an address and a prefix length (`10.0.0.0/8`, `::1/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    addr: std::net::IpAddr,
    prefix: u8,
}

impl IpNet {
    /// Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address, or one with `/n`.
    ///
    /// # Errors
    /// A text that is neither.
    pub fn parse(text: &str) -> Result<IpNet, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: std::net::IpAddr = addr
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR network"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {max}"))?,
        };
        Ok(IpNet { addr, prefix })
    }

    /// Whether `ip` lies in this network (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// The fewest bytes a JWT secret may have.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// Secrets that are published or guessed first: the one `docker-compose.yml`
/// used to ship, and the usual placeholders. Compared ignoring case and the
/// characters `-`, `_`, `.` and spaces.
const PLACEHOLDER_SECRETS: &[&str] = &[
    "change-me-to-a-long-random-secret-shared-by-all-instances",
    "changeme",
    "secret",
    "jwtsecret",
    "password",
    "yoursecret",
    "mysecret",
    "supersecret",
    "default",
    "example",
    "test",
];

/// Refuses a JWT secret anyone could know or guess: a known placeholder, one
/// that asks to be changed, one shorter than [`MIN_JWT_SECRET_BYTES`], or one
/// made of a handful of distinct bytes.
///
/// # Errors
/// A [`ConfigError`] naming `UTTT_JWT_SECRET` and saying how to make a good one.
pub fn check_jwt_secret(secret: &str) -> Result<(), ConfigError> {
    const HOW: &str = "set it to a long random value shared by every instance, e.g. the output of `openssl rand -base64 48`";
    let bad = |why: String| ConfigError {
        name: "UTTT_JWT_SECRET",
        message: format!("{why}; {HOW}"),
    };
    let normalized: String = secret
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    let placeholder = PLACEHOLDER_SECRETS.iter().any(|p| {
        let p: String = p
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .collect();
        normalized == p
    }) || ["changeme", "replaceme", "changethis", "yoursecret"]
        .iter()
        .any(|p| normalized.contains(p));
    if placeholder {
        return Err(bad(
            "is a published placeholder value: anyone could sign access tokens with it".into(),
        ));
    }
    if secret.len() < MIN_JWT_SECRET_BYTES {
        return Err(bad(format!(
            "has {} bytes; it needs at least {MIN_JWT_SECRET_BYTES}",
            secret.len()
        )));
    }
    let distinct: std::collections::HashSet<u8> = secret.bytes().collect();
    if distinct.len() < 8 {
        return Err(bad(format!(
            "is made of only {} distinct characters",
            distinct.len()
        )));
    }
    Ok(())
}

/// A ladder: a rating pool with its own board depth and time control.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderConfig {
    /// Stable id, `[a-z0-9-]{1,32}`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Board depth 1..=4.
    pub depth: u8,
    /// Time control of its matches.
    pub time_control: TimeControl,
    /// Whether results change ratings.
    pub rated: bool,
}

/// How matchmaking widens its rating window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatchmakingConfig {
    /// Rating gap accepted at once (`UTTT_MM_WINDOW_START`).
    pub window_start: f64,
    /// Rating points added per second of waiting (`UTTT_MM_WINDOW_GROWTH`).
    pub window_growth_per_sec: f64,
    /// After this long anyone on the ladder can be paired (`UTTT_MM_UNLIMITED_AFTER_MS`).
    pub unlimited_after: Duration,
    /// A queued ticket nobody has looked at for this long is cancelled (`UTTT_MM_ABANDON_AFTER_MS`).
    pub abandon_after: Duration,
    /// Time between pairing rounds (`UTTT_MM_ROUND_MS`).
    pub round_every: Duration,
}

#[derive(serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum TimeControlText {
    Clock {
        initial_ms: i64,
        #[serde(default)]
        increment_ms: i64,
    },
    PerTurn {
        turn_ms: i64,
    },
    None,
}

#[derive(serde::Deserialize)]
struct LadderText {
    id: String,
    name: String,
    depth: u8,
    time_control: TimeControlText,
    #[serde(default = "yes")]
    rated: bool,
}

fn yes() -> bool {
    true
}

/// The default ladders: the tournament ruleset, its 30-second-turn variant, and depth 3.
pub fn default_ladders() -> Vec<LadderConfig> {
    vec![
        LadderConfig {
            id: "ultimate-10m".into(),
            name: "Ultimate, 10 minutes".into(),
            depth: 2,
            time_control: TimeControl::TOURNAMENT,
            rated: true,
        },
        LadderConfig {
            id: "ultimate-turn30".into(),
            name: "Ultimate, 30 seconds a turn".into(),
            depth: 2,
            time_control: TimeControl::PerTurn { turn_ms: 30_000 },
            rated: true,
        },
        LadderConfig {
            id: "advanced-10m".into(),
            name: "Advanced (depth 3), 10 minutes".into(),
            depth: 3,
            time_control: TimeControl::TOURNAMENT,
            rated: true,
        },
    ]
}

/// The default ladders plus those of `UTTT_LADDERS` (a JSON list; an entry
/// with a default's id replaces it).
fn ladders(text: Option<String>) -> Result<Vec<LadderConfig>, ConfigError> {
    let mut all = default_ladders();
    let Some(text) = text else { return Ok(all) };
    let bad = |message: String| ConfigError {
        name: "UTTT_LADDERS",
        message,
    };
    let extra: Vec<LadderText> = serde_json::from_str(&text)
        .map_err(|e| bad(format!("expected a JSON list of ladders: {e}")))?;
    for l in extra {
        let id_ok = (1..=32).contains(&l.id.len())
            && l.id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !id_ok {
            return Err(bad(format!(
                "ladder id `{}` must be 1-32 of a-z, 0-9 and -",
                l.id
            )));
        }
        if !(1..=4).contains(&l.depth) {
            return Err(bad(format!("ladder `{}`: depth must be 1 to 4", l.id)));
        }
        let time_control = match l.time_control {
            TimeControlText::Clock {
                initial_ms,
                increment_ms,
            } => TimeControl::clock(initial_ms, increment_ms),
            TimeControlText::PerTurn { turn_ms } => TimeControl::per_turn(turn_ms),
            TimeControlText::None => Ok(TimeControl::None),
        }
        .map_err(|e| bad(format!("ladder `{}`: {e}", l.id)))?;
        if l.rated && time_control == TimeControl::None {
            return Err(bad(format!(
                "ladder `{}`: a rated ladder needs a time limit",
                l.id
            )));
        }
        let ladder = LadderConfig {
            id: l.id,
            name: l.name,
            depth: l.depth,
            time_control,
            rated: l.rated,
        };
        match all.iter_mut().find(|x| x.id == ladder.id) {
            Some(existing) => *existing = ladder,
            None => all.push(ladder),
        }
    }
    Ok(all)
}

/// Which background workers an instance runs. Every instance may run all of
/// them; turning one off is for tests and for dedicating instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// Ends matches whose time ran out.
    pub clock: bool,
    /// Plays the CPU's moves.
    pub cpu: bool,
    /// Pairs matchmaking tickets.
    pub pairing: bool,
    /// Hands dropped players' seats to the CPU.
    pub presence: bool,
    /// Deletes expired refresh tokens and rooms nobody joined.
    pub prune: bool,
}

impl Workers {
    /// Every worker.
    pub const ALL: Workers = Workers {
        clock: true,
        cpu: true,
        pairing: true,
        presence: true,
        prune: true,
    };
    /// No worker.
    pub const NONE: Workers = Workers {
        clock: false,
        cpu: false,
        pairing: false,
        presence: false,
        prune: false,
    };
}

/// `true`/`false`, or a comma-separated list of `clock`, `cpu`, `pairing`, `presence`, `prune`.
fn workers(text: Option<String>) -> Result<Workers, ConfigError> {
    let Some(text) = text else {
        return Ok(Workers::ALL);
    };
    match text.trim() {
        "1" | "true" | "yes" | "on" | "all" => return Ok(Workers::ALL),
        "0" | "false" | "no" | "off" | "none" => return Ok(Workers::NONE),
        _ => {}
    }
    let mut set = Workers::NONE;
    for name in text.split(',').map(str::trim) {
        match name {
            "clock" => set.clock = true,
            "cpu" => set.cpu = true,
            "pairing" => set.pairing = true,
            "presence" => set.presence = true,
            "prune" => set.prune = true,
            other => {
                return Err(ConfigError {
                    name: "UTTT_WORKERS",
                    message: format!(
                        "unknown worker `{other}` (clock, cpu, pairing, presence, prune, all, none)"
                    ),
                });
            }
        }
    }
    Ok(set)
}

/// How an open event stream keeps its player's seat (README, "Presence, grace, heartbeat and lag").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenceConfig {
    /// A stream's lease lapses this long (real time) after its last renewal
    /// (`UTTT_PRESENCE_LEASE_MS`): the bound on how long an instance that died
    /// with open streams keeps their players present. Renewed every third of it.
    pub lease_ttl: Duration,
    /// After a stream closes, its seat stays present this long (game time)
    /// before the grace period starts (`UTTT_PRESENCE_LINGER_MS`), so a
    /// reconnect to another instance keeps the seat.
    pub linger: Duration,
}

impl PresenceConfig {
    /// How often an instance renews the leases of its open streams.
    pub fn renew_every(&self) -> Duration {
        (self.lease_ttl / 3).max(Duration::from_millis(10))
    }
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
    /// Redis URL (`REDIS_URL`); `None` selects the in-process broker.
    pub redis_url: Option<String>,
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
    /// How open event streams keep their players' seats: lease lifetime and linger.
    pub presence: PresenceConfig,
    /// The ladders (`UTTT_LADDERS` adds to the defaults).
    pub ladders: Vec<LadderConfig>,
    /// Matchmaking windows and timing.
    pub matchmaking: MatchmakingConfig,
    /// How fast rating deviations grow between games (`UTTT_RATING_PERIODS_PER_DAY`).
    pub rating_growth: crate::rating::Growth,
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
                abandon_after: Duration::from_millis(number(
                    &get,
                    "UTTT_MM_ABANDON_AFTER_MS",
                    60_000,
                )?),
                round_every: Duration::from_millis(number(&get, "UTTT_MM_ROUND_MS", 500)?.max(10)),
            },
            http_workers: usize::try_from(number(&get, "UTTT_HTTP_WORKERS", cores as u64)?.max(1))
                .unwrap_or(cores),
            rating_growth: rating_growth(get("UTTT_RATING_PERIODS_PER_DAY"))?,
        })
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

fn rating_growth(text: Option<String>) -> Result<crate::rating::Growth, ConfigError> {
    let Some(text) = text else {
        return Ok(crate::rating::Growth::default());
    };
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(crate::rating::Growth::new)
        .ok_or_else(|| ConfigError {
            name: "UTTT_RATING_PERIODS_PER_DAY",
            message: format!("expected a number of rating periods a day (0 or more), got `{text}`"),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
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
        let code = variables_in(include_str!("config.rs"));
        let readme = include_str!("../README.md");
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
        for name in variables_in(include_str!("../docker-compose.yml")) {
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
}
