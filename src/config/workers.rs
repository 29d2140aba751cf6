//! Which background workers an instance runs, and how open event streams
//! keep their players' seats.

use std::time::Duration;

use super::ConfigError;

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
    /// Expires challenges nobody answered in time.
    pub challenges: bool,
    /// Starts tournaments, records their results and pairs their rounds.
    pub tournaments: bool,
    /// Runs engine analyses of finished matches, one at a time.
    pub analysis: bool,
}

impl Workers {
    /// Every worker.
    pub const ALL: Workers = Workers {
        clock: true,
        cpu: true,
        pairing: true,
        presence: true,
        prune: true,
        challenges: true,
        tournaments: true,
        analysis: true,
    };
    /// No worker.
    pub const NONE: Workers = Workers {
        clock: false,
        cpu: false,
        pairing: false,
        presence: false,
        prune: false,
        challenges: false,
        tournaments: false,
        analysis: false,
    };
}

/// `true`/`false`, or a comma-separated list of `clock`, `cpu`, `pairing`, `presence`, `prune`, `challenges`, `tournaments`, `analysis`.
pub(super) fn workers(text: Option<String>) -> Result<Workers, ConfigError> {
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
            "challenges" => set.challenges = true,
            "tournaments" => set.tournaments = true,
            "analysis" => set.analysis = true,
            other => {
                return Err(ConfigError {
                    name: "UTTT_WORKERS",
                    message: format!(
                        "unknown worker `{other}` (clock, cpu, pairing, presence, prune, challenges, tournaments, analysis, all, none)"
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

/// The engine analysis of finished matches (README, "Analysis").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisConfig {
    /// How long the CPU thinks on each position (`UTTT_ANALYSIS_MS_PER_POSITION`).
    pub per_position: Duration,
    /// The most analyses waiting or running at once, over all instances
    /// (`UTTT_ANALYSIS_QUEUE`); a request past it is refused with 429.
    pub queue: u32,
}

impl AnalysisConfig {
    /// How long a worker's claim on an analysis lasts without renewal: it
    /// renews it with every position, so ten positions' time (at least 30 s)
    /// before another instance takes the analysis over.
    pub fn lease(&self) -> Duration {
        (self.per_position * 10).max(Duration::from_secs(30))
    }
}
