//! Making new matches: the row every kind of match starts from, and practice
//! matches against the CPU.

use crate::clock::TimeControl;
use crate::ids;
use crate::rules::{self, Depth, Seat};
use crate::store::matches::{self, MatchRow};
use crate::time::Millis;

use super::super::{ConflictCode, Error, Result};
use super::record::{
    Controller, MatchRecord, MatchStatus, Mode, PlayerId, StoredSeat, time_control_columns,
};

/// Who sits in a seat of a new match.
#[derive(Debug, Clone)]
pub struct SeatSpec {
    /// The player, or `None` for the practice CPU.
    pub player_id: Option<PlayerId>,
    /// Who plays it.
    pub controller: Controller,
}

impl SeatSpec {
    /// A human player's seat.
    pub fn player(id: &str) -> SeatSpec {
        SeatSpec {
            player_id: Some(PlayerId::from(id)),
            controller: Controller::Human,
        }
    }

    /// The CPU opponent's seat.
    pub fn cpu() -> SeatSpec {
        SeatSpec {
            player_id: None,
            controller: Controller::Cpu,
        }
    }
}

/// Everything that defines a new match.
#[derive(Debug, Clone)]
pub struct NewMatch {
    /// How it was made.
    pub mode: Mode,
    /// The ladder of a ranked match.
    pub ladder: Option<String>,
    /// Whether it changes ratings.
    pub rated: bool,
    /// Board depth.
    pub depth: Depth,
    /// Time control.
    pub time_control: TimeControl,
    /// Seat X.
    pub x: SeatSpec,
    /// Seat O.
    pub o: SeatSpec,
    /// Level of the practice CPU.
    pub cpu_level: Option<u8>,
    /// The room, for casual matches.
    pub room_code: Option<String>,
}

/// The row of a match that starts at `now`: X to move, clocks full.
///
/// # Errors
/// Never for valid input (the derived columns are computed from it).
pub fn new_row(spec: NewMatch, now: Millis) -> Result<MatchRow> {
    let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) =
        time_control_columns(spec.time_control);
    let bank = spec.time_control.initial_bank();
    let mut row = MatchRow {
        id: ids::match_id().into(),
        mode: spec.mode,
        ladder: spec.ladder,
        rated: spec.rated,
        depth: i16::from(spec.depth.get()),
        tc_kind,
        tc_initial_ms,
        tc_increment_ms,
        tc_turn_ms,
        x_player_id: spec.x.player_id,
        o_player_id: spec.o.player_id,
        x_controller: spec.x.controller,
        o_controller: spec.o.controller,
        cpu_level: spec.cpu_level.map(i16::from),
        position: rules::encode(spec.depth, &[]),
        ply: 0,
        to_move: Some(StoredSeat(Seat::X)),
        x_bank_ms: bank,
        o_bank_ms: bank,
        // X's clock runs from the match's start.
        turn_started_at: now,
        deadline_at: None,
        awaiting_cpu: false,
        cpu_claimed_until: None,
        status: MatchStatus::Active,
        winner: None,
        reason: None,
        room_code: spec.room_code,
        version: 1,
        created_at: now,
        finished_at: None,
        x_lag_quota_ms: None,
        o_lag_quota_ms: None,
    };
    row.refresh_derived()?;
    Ok(row)
}

/// Inserts a new match, retrying on the (astronomically unlikely) id collision.
///
/// # Errors
/// Database errors.
pub fn insert_new(conn: &mut crate::store::DbConnection, row: &mut MatchRow) -> Result<()> {
    for _ in 0..3 {
        match matches::insert(conn, row) {
            Err(e) if e.is_unique_violation() => row.id = ids::match_id().into(),
            other => return Ok(other?),
        }
    }
    Ok(matches::insert(conn, row)?)
}

/// Refuses a new practice match to a player who already has `cap` unfinished
/// ones (`too_many_practice_matches`): each waits on the shared CPU workers.
/// Call it inside the transaction that inserts the match.
///
/// # Errors
/// `too_many_practice_matches`, or database errors.
pub fn check_practice_cap(
    conn: &mut crate::store::DbConnection,
    player_id: &str,
    cap: u32,
) -> Result<()> {
    crate::store::players::lock(conn, player_id)?;
    let open = matches::count_active(conn, player_id, Mode::Practice)?;
    if open >= i64::from(cap) {
        return Err(Error::conflict(
            ConflictCode::TooManyPracticeMatches,
            format!(
                "you already have {open} unfinished practice matches (at most {cap}); finish or resign one first"
            ),
            None,
        ));
    }
    Ok(())
}
