//! Creating a tournament: any player may, and directs it.

use crate::clock::TimeControl;
use crate::config::LadderConfig;
use crate::ids;
use crate::rules::Depth;
use crate::store::tournaments::{self as store, TournamentRow};
use crate::time::Millis;

use super::super::accounts::Player;
use super::super::matches::record::time_control_columns;
use super::super::{Context, Error, FieldError, Result};
use super::arena::DURATION_MS;
use super::{Kind, Status, TournamentView, view};

/// Swiss rounds allowed.
pub const ROUNDS: (u32, u32) = (1, 30);
/// Entrant caps allowed.
pub const MAX_PLAYERS: (u32, u32) = (2, 10_000);
/// The pause between rounds when none is given.
pub const DEFAULT_ROUND_PAUSE_MS: Millis = 10_000;
/// The longest pause between rounds.
pub const MAX_ROUND_PAUSE_MS: Millis = 3_600_000;
/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 80;
/// Longest entry code, in characters.
pub const MAX_CODE_CHARS: usize = 32;

/// A new tournament, as the request gave it (formats checked by the HTTP layer).
#[derive(Debug, Clone)]
pub struct NewTournament {
    /// Display name.
    pub name: String,
    /// Swiss or arena.
    pub kind: Kind,
    /// Board depth (the ladder's when rated; default 2).
    pub depth: Option<Depth>,
    /// Time control (the ladder's when rated; default the 10-minute clock).
    pub time_control: Option<TimeControl>,
    /// The ladder of a rated tournament.
    pub ladder: Option<String>,
    /// Swiss: the number of rounds.
    pub rounds: Option<u32>,
    /// Arena: how long it runs.
    pub duration_ms: Option<i64>,
    /// Swiss: the pause between rounds.
    pub round_pause_ms: Option<i64>,
    /// When it starts; `None`: the director starts it.
    pub starts_at: Option<Millis>,
    /// Most entrants.
    pub max_players: Option<u32>,
    /// The code joining needs.
    pub entry_code: Option<String>,
    /// The lowest rating that may join.
    pub min_rating: Option<f64>,
}

/// The depth and time control of the games, from the request and the ladder.
fn settings(
    spec: &NewTournament,
    ladder: Option<&LadderConfig>,
    errors: &mut Vec<FieldError>,
) -> Option<(Depth, TimeControl)> {
    let Some(ladder) = ladder else {
        return Some((
            spec.depth.unwrap_or(Depth::TWO),
            spec.time_control.unwrap_or(TimeControl::TOURNAMENT),
        ));
    };
    let depth = Depth::new(ladder.depth).ok()?;
    if spec.depth.is_some_and(|d| d != depth) {
        errors.push(FieldError::new(
            "depth",
            format!("the ladder `{}` plays depth {}", ladder.id, ladder.depth),
        ));
    }
    if spec
        .time_control
        .is_some_and(|tc| tc != ladder.time_control)
    {
        errors.push(FieldError::new(
            "time_control",
            format!("the ladder `{}` has its own time control", ladder.id),
        ));
    }
    Some((depth, ladder.time_control))
}

/// A Swiss's rounds and pause (and no duration).
fn swiss_settings(
    spec: &NewTournament,
    errors: &mut Vec<FieldError>,
) -> (Option<u32>, i64, Option<i64>) {
    let rounds = spec.rounds.unwrap_or(0);
    if !(ROUNDS.0..=ROUNDS.1).contains(&rounds) {
        errors.push(FieldError::new(
            "rounds",
            format!(
                "a Swiss tournament needs {} to {} rounds",
                ROUNDS.0, ROUNDS.1
            ),
        ));
    }
    let round_pause_ms = spec.round_pause_ms.unwrap_or(DEFAULT_ROUND_PAUSE_MS);
    if !(0..=MAX_ROUND_PAUSE_MS).contains(&round_pause_ms) {
        errors.push(FieldError::new(
            "round_pause_ms",
            format!("must be 0 to {MAX_ROUND_PAUSE_MS}"),
        ));
    }
    if spec.duration_ms.is_some() {
        errors.push(FieldError::new(
            "duration_ms",
            "only arena tournaments have a duration",
        ));
    }
    (Some(rounds), round_pause_ms, None)
}

/// An arena's duration, `min_duration_ms` (the configured shortest) to a
/// day, and no rounds or pause.
fn arena_settings(
    spec: &NewTournament,
    min_duration_ms: i64,
    errors: &mut Vec<FieldError>,
) -> (Option<u32>, i64, Option<i64>) {
    let (min, max) = (min_duration_ms, DURATION_MS.1);
    match spec.duration_ms {
        Some(d) if (min..=max).contains(&d) => {}
        Some(_) => errors.push(FieldError::new(
            "duration_ms",
            format!("must be {min} to {max}"),
        )),
        None => errors.push(FieldError::new(
            "duration_ms",
            format!("an arena needs a duration, {min} to {max} ms"),
        )),
    }
    if spec.rounds.is_some() {
        errors.push(FieldError::new(
            "rounds",
            "an arena has a duration, not rounds",
        ));
    }
    if spec.round_pause_ms.is_some() {
        errors.push(FieldError::new(
            "round_pause_ms",
            "an arena has no rounds to pause between",
        ));
    }
    (None, 0, spec.duration_ms)
}

/// Checks a new tournament and builds its row.
fn row_of(
    ctx: &Context,
    director: &Player,
    spec: NewTournament,
    now: Millis,
) -> Result<TournamentRow> {
    let mut errors = Vec::new();
    let name = spec.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        errors.push(FieldError::new(
            "name",
            format!("must be 1 to {MAX_NAME_CHARS} characters"),
        ));
    }
    let ladder = match spec.ladder.as_deref() {
        None => None,
        Some(id) => match ctx.config.ladder(id) {
            Some(l) if l.rated => Some(l.clone()),
            Some(_) => {
                errors.push(FieldError::new(
                    "ladder",
                    "this ladder is not rated; leave `ladder` out for a casual tournament",
                ));
                None
            }
            None => {
                errors.push(FieldError::new("ladder", "no such ladder"));
                None
            }
        },
    };
    let (depth, tc) = settings(&spec, ladder.as_ref(), &mut errors)
        .ok_or_else(|| Error::Internal("ladder depth".into()))?;
    if tc == TimeControl::None {
        errors.push(FieldError::new(
            "time_control",
            "tournament games need a clock or a turn limit (a player who does not show up loses on time)",
        ));
    }
    let (rounds, round_pause_ms, duration_ms) = match spec.kind {
        Kind::Swiss => swiss_settings(&spec, &mut errors),
        Kind::Arena => arena_settings(&spec, ctx.config.arena_min_duration_ms, &mut errors),
    };
    if spec.starts_at.is_some_and(|at| at < now) {
        errors.push(FieldError::new("starts_at", "must not be in the past"));
    }
    if let Some(max) = spec.max_players
        && !(MAX_PLAYERS.0..=MAX_PLAYERS.1).contains(&max)
    {
        errors.push(FieldError::new(
            "max_players",
            format!("must be {} to {}", MAX_PLAYERS.0, MAX_PLAYERS.1),
        ));
    }
    let entry_code = spec.entry_code.map(|c| c.trim().to_owned());
    if entry_code
        .as_deref()
        .is_some_and(|c| c.is_empty() || c.chars().count() > MAX_CODE_CHARS)
    {
        errors.push(FieldError::new(
            "entry_code",
            format!("must be 1 to {MAX_CODE_CHARS} characters"),
        ));
    }
    if spec.min_rating.is_some_and(|r| !r.is_finite()) {
        errors.push(FieldError::new("min_rating", "must be a number"));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) = time_control_columns(tc);
    Ok(TournamentRow {
        id: ids::record_id(),
        name,
        kind: spec.kind.as_str().to_owned(),
        status: Status::Registering.as_str().to_owned(),
        director_id: director.id.clone(),
        depth: i16::from(depth.get()),
        tc_kind,
        tc_initial_ms,
        tc_increment_ms,
        tc_turn_ms,
        rated: ladder.is_some(),
        ladder: ladder.map(|l| l.id),
        rounds: rounds.and_then(|r| i32::try_from(r).ok()),
        round: 0,
        round_pause_ms,
        duration_ms,
        starts_at: spec.starts_at,
        ends_at: None,
        next_at: spec.starts_at,
        max_players: spec.max_players.and_then(|m| i32::try_from(m).ok()),
        entry_code,
        min_rating: spec.min_rating,
        players: 0,
        version: 1,
        sort_at: spec.starts_at.unwrap_or(now),
        created_at: now,
        finished_at: None,
        tallied: true,
    })
}

/// Creates a tournament directed by `director`.
///
/// # Errors
/// `validation_failed` for bad settings (see [`NewTournament`]); store failures.
#[tracing::instrument(skip(ctx, director, spec), fields(player.id = %director.id))]
pub async fn create(
    ctx: &Context,
    director: &Player,
    spec: NewTournament,
) -> Result<TournamentView> {
    let now = ctx.time.now_ms();
    let row = row_of(ctx, director, spec, now)?;
    let view = ctx
        .db
        .write(move |conn| {
            store::insert(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    tracing::info!(tournament.id = %view.id, "tournament created");
    Ok(view)
}
