//! Tournaments (RULES.md and API.md, "Tournaments"): the record, registration,
//! the director's controls, standings, rounds, export and the event stream.
//! Who plays whom is decided by the pure [`crate::tournament`] core; each
//! game is an ordinary match, made by [`run`] when a round is paired.
//!
//! Swiss and arena share the record, registration, standings views, events
//! and the worker; [`arena`] holds what only the arena does (its pool, its
//! passes, berserk, its games list).

pub mod arena;
pub mod create;
pub mod director;
pub mod export;
pub mod feed;
pub mod read;
pub mod registration;
pub mod run;
pub mod tally;

use std::collections::HashMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::config::LadderConfig;
use crate::rating;
use crate::rules::Depth;
use crate::store::DbConnection;
use crate::store::tournaments::{self as store, TournamentRow};
use crate::time::{Millis, rfc3339};

use super::matches::create::{NewMatch, SeatSpec};
use super::matches::record::{Mode, time_control};
use super::matches::state::TimeControlBody;
use super::{ConflictCode, Context, Error, Result, ladders};

/// Swiss or arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fixed number of rounds.
    Swiss,
    /// A fixed duration (issue 21).
    Arena,
}

impl Kind {
    /// The stored (and API) form.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Swiss => "swiss",
            Kind::Arena => "arena",
        }
    }

    /// Parses `swiss` or `arena`.
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "swiss" => Some(Kind::Swiss),
            "arena" => Some(Kind::Arena),
            _ => None,
        }
    }
}

/// Where a tournament stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Taking entries.
    Registering,
    /// Being played.
    Running,
    /// Over; the standings are final.
    Finished,
    /// Called off by its director (or it had too few players at its start).
    Cancelled,
}

impl Status {
    /// The stored (and API) form.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Registering => "registering",
            Status::Running => "running",
            Status::Finished => "finished",
            Status::Cancelled => "cancelled",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "registering" => Some(Status::Registering),
            "running" => Some(Status::Running),
            "finished" => Some(Status::Finished),
            "cancelled" => Some(Status::Cancelled),
            _ => None,
        }
    }

    /// The status of a stored row.
    fn of(row: &TournamentRow) -> Status {
        Status::parse(&row.status).unwrap_or(Status::Cancelled)
    }
}

use super::accounts::DELETED_USERNAME;
pub use super::accounts::PlayerRef;

/// A tournament's entrants as its views name them, by id.
struct Roster(HashMap<String, PlayerRef>);

impl Roster {
    /// The entrants of tournament `id`, read in one statement.
    fn of(conn: &mut DbConnection, id: &str) -> Result<Roster> {
        Ok(Roster(
            store::entrants(conn, id)?
                .into_iter()
                .map(|(e, username, bot)| {
                    let player = PlayerRef {
                        id: e.player_id.clone(),
                        username,
                        bot,
                    };
                    (e.player_id, player)
                })
                .collect(),
        ))
    }

    /// The entrant `id` (`(deleted)` once their account is gone).
    fn named(&self, id: &str) -> PlayerRef {
        self.0.get(id).cloned().unwrap_or_else(|| PlayerRef {
            id: id.to_owned(),
            username: DELETED_USERNAME.to_owned(),
            bot: false,
        })
    }
}

/// A tournament as clients see it (API.md `GET /tournaments/{id}`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentView {
    /// Opaque id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// `swiss` or `arena`.
    #[schema(example = "swiss")]
    pub kind: String,
    /// `registering`, `running`, `finished` or `cancelled`.
    #[schema(example = "registering")]
    pub status: String,
    /// The player who created it and directs it.
    pub director: PlayerRef,
    /// Board depth of the games.
    pub depth: u8,
    /// Time control of the games.
    pub time_control: TimeControlBody,
    /// The ladder a rated tournament's games are rated on.
    pub ladder: Option<String>,
    /// Whether the games change ratings.
    pub rated: bool,
    /// Swiss: the number of rounds.
    pub rounds: Option<u32>,
    /// Swiss: the current round (0 before the start).
    pub round: u32,
    /// Swiss: the pause between a round's last result and the next pairing (ms).
    pub round_pause_ms: i64,
    /// Arena: how long it runs (ms).
    pub duration_ms: Option<i64>,
    /// When it starts (`null`: when the director starts it); once started, when it did.
    pub starts_at: Option<String>,
    /// When it ended.
    pub ends_at: Option<String>,
    /// Entrants (withdrawn ones included once play started).
    pub players: u32,
    /// Most entrants allowed.
    pub max_players: Option<u32>,
    /// Whether joining needs an entry code.
    pub private: bool,
    /// The lowest rating that may join.
    pub min_rating: Option<f64>,
    /// When it was made.
    pub created_at: String,
    /// The event version: bumped by every change (the `id` of its `tournament` event).
    pub version: i32,
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// The time control a stored tournament's games use.
fn games_time_control(row: &TournamentRow) -> Result<TimeControl> {
    time_control(
        &row.tc_kind,
        row.tc_initial_ms,
        row.tc_increment_ms,
        row.tc_turn_ms,
    )
}

/// The board depth a stored tournament's games use.
fn games_depth(row: &TournamentRow) -> Result<Depth> {
    u8::try_from(row.depth)
        .ok()
        .and_then(|d| Depth::new(d).ok())
        .ok_or_else(|| Error::Internal(format!("tournament {} has depth {}", row.id, row.depth)))
}

/// The match a tournament pairs `x` (X) against `o` in: its depth, time
/// control and (rated) ladder, stored with mode `tournament`.
fn game_spec(row: &TournamentRow, x: &str, o: &str) -> Result<NewMatch> {
    Ok(NewMatch {
        mode: Mode::Tournament,
        ladder: row.ladder.clone(),
        rated: row.rated,
        depth: games_depth(row)?,
        time_control: games_time_control(row)?,
        x: SeatSpec::player(x),
        o: SeatSpec::player(o),
        cpu_level: None,
        room_code: None,
    })
}

/// The player's name and bot flag, or `(deleted)`.
fn player_ref(conn: &mut DbConnection, id: &str) -> Result<PlayerRef> {
    let (username, bot) = crate::store::players::by_id(conn, id)?.map_or_else(
        || (DELETED_USERNAME.to_owned(), false),
        |p| (p.username, p.bot),
    );
    Ok(PlayerRef {
        id: id.to_owned(),
        username,
        bot,
    })
}

/// The view of a stored tournament.
///
/// # Errors
/// A corrupt row, or database errors.
pub fn view(conn: &mut DbConnection, row: &TournamentRow) -> Result<TournamentView> {
    Ok(TournamentView {
        id: row.id.clone(),
        name: row.name.clone(),
        kind: row.kind.clone(),
        status: row.status.clone(),
        director: player_ref(conn, &row.director_id)?,
        depth: games_depth(row)?.get(),
        time_control: games_time_control(row)?.into(),
        ladder: row.ladder.clone(),
        rated: row.rated,
        rounds: row.rounds.map(count),
        round: count(row.round),
        round_pause_ms: row.round_pause_ms,
        duration_ms: row.duration_ms,
        starts_at: row.starts_at.map(rfc3339),
        ends_at: row.ends_at.map(rfc3339),
        players: count(row.players),
        max_players: row.max_players.map(count),
        private: row.entry_code.is_some(),
        min_rating: row.min_rating,
        created_at: rfc3339(row.created_at),
        version: row.version,
    })
}

/// The ladder whose ratings rank a tournament's entrants (pairing order,
/// `min_rating`): its own ladder when rated, else the configured ladder of
/// the same depth and time control, else the first configured one.
pub fn rating_ladder<'a>(
    ladders: &'a [LadderConfig],
    row: &TournamentRow,
) -> Option<&'a LadderConfig> {
    if let Some(id) = row.ladder.as_deref() {
        return ladders.iter().find(|l| l.id == id);
    }
    let tc = games_time_control(row).ok();
    ladders
        .iter()
        .find(|l| i16::from(l.depth) == row.depth && Some(l.time_control) == tc)
        .or_else(|| ladders.first())
}

/// A player's current rating on `ladder` (the initial rating where they have not played).
///
/// # Errors
/// Database errors.
pub fn current_rating(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: Option<&LadderConfig>,
    growth: crate::rating::Growth,
    now: Millis,
) -> Result<f64> {
    let Some(ladder) = ladder else {
        return Ok(rating::INITIAL.rating);
    };
    Ok(
        match crate::store::ratings::get(conn, player_id, &ladder.id)? {
            Some(row) => ladders::as_of_row(&row, growth, now).0.rating,
            None => rating::INITIAL.rating,
        },
    )
}

/// Loads a tournament under a lock, or `not_found`.
fn lock(conn: &mut DbConnection, id: &str) -> Result<TournamentRow> {
    store::lock(conn, id)?.ok_or(Error::NotFound("tournament"))
}

/// The 409 `tournament_closed`.
fn closed(row: &TournamentRow) -> Error {
    Error::conflict(
        ConflictCode::TournamentClosed,
        format!("the tournament is {} and no longer takes this", row.status),
        Some(("tournament_status", row.status.clone())),
    )
}

/// Reads a tournament.
///
/// # Errors
/// `not_found`; store failures.
pub async fn get(ctx: &Context, id: &str) -> Result<TournamentView> {
    let id = id.to_owned();
    ctx.db
        .run(move |conn| {
            let row = store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            view(conn, &row)
        })
        .await
}
