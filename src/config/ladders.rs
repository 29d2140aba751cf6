//! Ladders (`UTTT_LADDERS` adds to the defaults), matchmaking's timing and how
//! fast rating deviations grow between games.

use std::time::Duration;

use super::ConfigError;
use crate::clock::TimeControl;

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
    /// Whether bot accounts may queue here (`"bots": true` in `UTTT_LADDERS`).
    pub bots: bool,
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
    /// Pairs a round claims, writes and announces together, several such
    /// chunks at once (`UTTT_MM_CHUNK_PAIRS`).
    pub chunk_pairs: usize,
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
    #[serde(default)]
    bots: bool,
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
            bots: false,
        },
        LadderConfig {
            id: "ultimate-turn30".into(),
            name: "Ultimate, 30 seconds a turn".into(),
            depth: 2,
            time_control: TimeControl::PerTurn { turn_ms: 30_000 },
            rated: true,
            bots: false,
        },
        LadderConfig {
            id: "advanced-10m".into(),
            name: "Advanced (depth 3), 10 minutes".into(),
            depth: 3,
            time_control: TimeControl::TOURNAMENT,
            rated: true,
            bots: false,
        },
    ]
}

/// The default ladders plus those of `UTTT_LADDERS` (a JSON list; an entry
/// with a default's id replaces it).
pub(super) fn ladders(text: Option<String>) -> Result<Vec<LadderConfig>, ConfigError> {
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
            bots: l.bots,
        };
        match all.iter_mut().find(|x| x.id == ladder.id) {
            Some(existing) => *existing = ladder,
            None => all.push(ladder),
        }
    }
    Ok(all)
}

/// `UTTT_RATING_PERIODS_PER_DAY`: unset gives the default growth.
pub(super) fn rating_growth(text: Option<String>) -> Result<crate::rating::Growth, ConfigError> {
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
