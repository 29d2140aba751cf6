//! The match state as clients see it (API.md, "Match state"). Built once per
//! change and published as is to every event stream, so it lives here rather
//! than in the HTTP layer.
//!
//! Just over 400 lines: the state's types are the API's documented shape
//! (with their OpenAPI doc lines), next to the one function that renders them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::cpu::Level;
use crate::rules::{BoardStatus, MoveList, Position, Seat, Square};
use crate::store::matches::{MatchRow, MoveRow};
use crate::time::{Millis, rfc3339};

use super::super::Result;
use super::super::accounts::DELETED_USERNAME;
use super::record::{Controller, EndReason, MatchRecord, seat_str};

/// A time control as the API writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeControlBody {
    /// A countdown per player (the tournament default: 600000 ms, no increment).
    Clock {
        /// Each player's starting bank, 10000..=10800000 ms.
        initial_ms: i64,
        /// Added after each completed move, 0..=60000 ms.
        #[serde(default)]
        increment_ms: i64,
    },
    /// A limit per turn (30000 or 60000 ms on the default ladders), 5000..=600000 ms.
    PerTurn {
        /// The limit of one turn.
        turn_ms: i64,
    },
    /// No limit (casual or practice only).
    None,
}

impl From<TimeControl> for TimeControlBody {
    fn from(tc: TimeControl) -> Self {
        match tc {
            TimeControl::Clock {
                initial_ms,
                increment_ms,
            } => TimeControlBody::Clock {
                initial_ms,
                increment_ms,
            },
            TimeControl::PerTurn { turn_ms } => TimeControlBody::PerTurn { turn_ms },
            TimeControl::None => TimeControlBody::None,
        }
    }
}

/// One seat of a match.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SeatState {
    /// The seated player's id; `null` for the CPU opponent of a practice match.
    pub id: Option<String>,
    /// The seated player's name, or `CPU (level N)`.
    pub username: String,
    /// `cpu` while the CPU plays the seat (practice opponent, or substitute for a dropped player).
    pub controller: &'static str,
    /// Whether the seated player is present: an open event stream, or a
    /// heartbeat or request on the match within the grace period of their turn.
    pub connected: bool,
    /// While the CPU plays the seat: its level (the practice opponent's, or the substitute's).
    pub cpu_level: Option<u8>,
    /// Whether the seated player's account is a bot (never for the practice CPU).
    pub bot: bool,
}

/// Both seats.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Seats {
    /// X, who moves first.
    pub x: SeatState,
    /// O.
    pub o: SeatState,
}

/// The board: squares and decided boards.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BoardState {
    /// `9^depth` characters of `.`, `x`, `o`, by flat square index.
    pub cells: String,
    /// Decided boards only, keyed by address joined with dots (the root is `""`): `x`, `o` or `draw`.
    pub boards: BTreeMap<String, &'static str>,
}

/// Where the side to move may play.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct NextState {
    /// The address of the relaxed target board (`[]` is the root); `null` when the match is over.
    pub board: Option<Vec<u8>>,
    /// Every legal square address; empty when the match is over.
    pub legal: Vec<Vec<u8>>,
}

/// Clocks as the server sees them at `server_time`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ClocksState {
    /// X's time left (per turn: in this turn if X is to move, else their next
    /// turn: a full turn plus any lag credit); `null` without a limit.
    pub x_ms: Option<i64>,
    /// O's time left.
    pub o_ms: Option<i64>,
    /// The seat whose time is running.
    pub running: Option<&'static str>,
    /// When the side to move loses on time; `null` without a limit or once finished.
    pub turn_deadline: Option<String>,
    /// The server's time when this state was made.
    pub server_time: String,
}

/// How a client keeps its seat present (API.md, "Presence").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PresenceState {
    /// How often (ms) a seated client without an open event stream should send
    /// `POST /matches/{id}/heartbeat`: at most a third of the shortest grace
    /// period the server may apply to this match (an open event stream keeps
    /// the seat present by itself).
    #[schema(minimum = 1, example = 1000)]
    pub heartbeat_ms: i64,
}

/// A rating before and after a match.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RatingChange {
    /// Rating before.
    pub before: f64,
    /// Rating after.
    pub after: f64,
}

/// Both players' rating changes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RatingChanges {
    /// X's change.
    pub x: RatingChange,
    /// O's change.
    pub o: RatingChange,
}

/// How a match ended.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResultState {
    /// `x`, `o`, or `null` for a draw.
    pub winner: Option<&'static str>,
    /// `three_in_a_row`, `draw`, `timeout` or `resignation`.
    pub reason: String,
    /// Ranked matches: both players' ratings before and after.
    pub rating_changes: Option<RatingChanges>,
}

/// The tournament round a match was paired in.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct TournamentRef {
    /// The tournament.
    pub id: String,
    /// The round (Swiss), from 1; `null` in an arena.
    pub round: Option<i32>,
}

/// The full state of a match.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MatchState {
    /// Short, URL-safe id (the match link).
    pub id: String,
    /// `ranked`, `casual`, `practice` or `tournament`.
    pub mode: String,
    /// The tournament round this match was paired in; `null` outside tournaments.
    pub tournament: Option<TournamentRef>,
    /// The ladder of a ranked match.
    pub ladder: Option<String>,
    /// Whether the result changes ratings.
    pub rated: bool,
    /// 1..=4 (2 is the classic game).
    pub depth: u8,
    /// The time control.
    pub time_control: TimeControlBody,
    /// `active` or `finished`.
    pub status: String,
    /// Moves played so far; send it back as `ply` with the next move.
    pub ply: u32,
    /// The side to move; `null` once finished.
    pub turn: Option<&'static str>,
    /// The seats.
    pub players: Seats,
    /// Squares and decided boards.
    pub board: BoardState,
    /// Where the side to move may play.
    pub next: NextState,
    /// Clocks.
    pub clocks: ClocksState,
    /// `null` while active.
    pub result: Option<ResultState>,
    /// How clients keep their seat present.
    pub presence: PresenceState,
    /// The state's version; the event id of its `state` event, bumped by every change.
    pub version: i32,
    /// When the match was made.
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// The room the match was played in.
    pub room_code: Option<String>,
}

/// Usernames of the seated players, looked up with the row.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Seat X's name.
    pub x: Option<String>,
    /// Seat O's name.
    pub o: Option<String>,
    /// Whether X's and O's players are bot accounts.
    pub bots: [bool; 2],
}

impl Names {
    fn bot(&self, seat: Seat) -> bool {
        match seat {
            Seat::X => self.bots[0],
            Seat::O => self.bots[1],
        }
    }

    fn of(&self, seat: Seat) -> Option<&str> {
        match seat {
            Seat::X => self.x.as_deref(),
            Seat::O => self.o.as_deref(),
        }
    }
}

fn board_mark(status: BoardStatus) -> Option<&'static str> {
    match status {
        BoardStatus::Won(seat) => Some(seat_str(seat)),
        BoardStatus::Drawn => Some("draw"),
        BoardStatus::Open => None,
    }
}

fn seat_state(row: &MatchRow, seat: Seat, names: &Names, connected: bool) -> SeatState {
    let controller = row.controller(seat);
    match row.player(seat) {
        Some(id) => SeatState {
            id: Some(id.to_string()),
            username: names.of(seat).unwrap_or(DELETED_USERNAME).to_owned(),
            controller: controller.as_str(),
            connected,
            cpu_level: (controller == Controller::Cpu).then_some(Level::SUBSTITUTE.get()),
            bot: names.bot(seat),
        },
        None => {
            let level = row
                .cpu_level
                .and_then(|l| u8::try_from(l).ok())
                .unwrap_or(1);
            SeatState {
                id: None,
                username: format!("CPU (level {level})"),
                controller: Controller::Cpu.as_str(),
                connected: true,
                cpu_level: Some(level),
                bot: false,
            }
        }
    }
}

/// The live presence a state shows.
#[derive(Debug, Clone, Copy)]
pub struct Presence {
    /// Whether X's and O's players are present.
    pub connected: [bool; 2],
    /// The heartbeat interval clients are told.
    pub heartbeat_ms: i64,
}

/// Builds the state of `row` (whose decoded position is `position`) at `now`.
///
/// # Errors
/// A corrupt row.
pub fn render(
    row: &MatchRow,
    position: &Position,
    names: &Names,
    rating_changes: Option<RatingChanges>,
    tournament: Option<TournamentRef>,
    presence: Presence,
    now: Millis,
) -> Result<MatchState> {
    let connected = presence.connected;
    let tc = row.time_control()?;
    let depth = position.depth();
    let mut cells = String::with_capacity(depth.squares());
    position.write_cells(&mut cells);
    let boards = position
        .decided_boards()
        .into_iter()
        .filter_map(|(address, status)| board_mark(status).map(|m| (address.to_string(), m)))
        .collect();
    let active = row.is_active();
    let to_move = row.to_move_seat().filter(|_| active);
    let next = match position.target().filter(|_| active) {
        Some(target) => {
            let mut list = MoveList::new(depth);
            position.legal_moves(&mut list);
            NextState {
                board: Some(target.coords().to_vec()),
                legal: list
                    .iter()
                    .map(|sq| sq.to_address(depth).coords().to_vec())
                    .collect(),
            }
        }
        None => NextState {
            board: None,
            legal: Vec::new(),
        },
    };
    let clock_of = |seat: Seat| {
        if to_move == Some(seat) {
            tc.left_to_move(row.turn_started_at, row.bank(seat), now)
        } else if active {
            tc.left_waiting(row.bank(seat))
        } else {
            // Finished: the banks of a clock (a per-turn bank is only the next turn's allowance).
            tc.initial_bank().and(row.bank(seat).or(tc.initial_bank()))
        }
    };
    let result = (!active).then(|| ResultState {
        winner: row.winner_seat().map(seat_str),
        reason: row
            .reason
            .map(EndReason::as_str)
            .unwrap_or_default()
            .to_owned(),
        rating_changes,
    });
    Ok(MatchState {
        id: row.id.to_string(),
        mode: row.mode.as_str().to_owned(),
        tournament,
        ladder: row.ladder.clone(),
        rated: row.rated,
        depth: depth.get(),
        time_control: tc.into(),
        status: row.status.as_str().to_owned(),
        ply: u32::try_from(row.ply).unwrap_or(0),
        turn: to_move.map(seat_str),
        players: Seats {
            x: seat_state(row, Seat::X, names, connected[0]),
            o: seat_state(row, Seat::O, names, connected[1]),
        },
        board: BoardState { cells, boards },
        next,
        clocks: ClocksState {
            x_ms: clock_of(Seat::X),
            o_ms: clock_of(Seat::O),
            running: to_move.filter(|_| tc != TimeControl::None).map(seat_str),
            turn_deadline: row.deadline_at.filter(|_| active).map(rfc3339),
            server_time: rfc3339(now),
        },
        result,
        presence: PresenceState {
            heartbeat_ms: presence.heartbeat_ms,
        },
        version: row.version,
        created_at: rfc3339(row.created_at),
        finished_at: row.finished_at.map(rfc3339),
        room_code: row.room_code.clone(),
    })
}

/// One played move.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MoveState {
    /// Moves before it.
    pub ply: u32,
    /// `x` or `o`.
    pub seat: String,
    /// The square's address, root first.
    pub address: Vec<u8>,
    /// When the server accepted it.
    pub played_at: String,
    /// The mover's clock bank after the move (clock control), ms.
    pub clock_ms: Option<i64>,
}

/// The API form of stored moves of a match of `depth`.
pub fn render_moves(depth: crate::rules::Depth, rows: &[MoveRow]) -> Vec<MoveState> {
    rows.iter()
        .map(|m| MoveState {
            ply: u32::try_from(m.ply).unwrap_or(0),
            seat: m.seat.clone(),
            address: usize::try_from(m.square)
                .ok()
                .and_then(|i| Square::new(depth, i))
                .map(|sq| sq.to_address(depth).coords().to_vec())
                .unwrap_or_default(),
            played_at: rfc3339(m.played_at),
            clock_ms: m.clock_ms,
        })
        .collect()
}
