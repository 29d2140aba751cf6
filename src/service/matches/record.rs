//! Reading a stored match row in the game's words.

use crate::clock::TimeControl;
use crate::rules::{self, Depth, Position, Seat, Square};
pub use crate::store::kinds::{
    Controller, EndReason, MatchId, MatchStatus, Mode, PlayerId, StoredSeat,
};
use crate::store::matches::MatchRow;

use super::super::{Error, Result};

/// `x` or `o`.
pub fn seat_str(seat: Seat) -> &'static str {
    StoredSeat(seat).as_str()
}

/// Parses `x` or `o`.
pub fn parse_seat(text: &str) -> Option<Seat> {
    StoredSeat::parse(text).map(|s| s.0)
}

/// The time control stored in these columns.
///
/// # Errors
/// `Internal` when the columns do not describe a control (a corrupt row).
pub fn time_control(
    kind: &str,
    initial: Option<i64>,
    increment: Option<i64>,
    turn: Option<i64>,
) -> Result<TimeControl> {
    match (kind, initial, turn) {
        ("clock", Some(initial_ms), _) => Ok(TimeControl::Clock {
            initial_ms,
            increment_ms: increment.unwrap_or(0),
        }),
        ("per_turn", _, Some(turn_ms)) => Ok(TimeControl::PerTurn { turn_ms }),
        ("none", _, _) => Ok(TimeControl::None),
        _ => Err(Error::Internal(format!(
            "stored time control `{kind}` is incomplete"
        ))),
    }
}

/// The columns of a time control: kind, initial, increment, turn.
pub fn time_control_columns(tc: TimeControl) -> (String, Option<i64>, Option<i64>, Option<i64>) {
    match tc {
        TimeControl::Clock {
            initial_ms,
            increment_ms,
        } => ("clock".into(), Some(initial_ms), Some(increment_ms), None),
        TimeControl::PerTurn { turn_ms } => ("per_turn".into(), None, None, Some(turn_ms)),
        TimeControl::None => ("none".into(), None, None, None),
    }
}

/// Game-level reading of a stored match.
pub trait MatchRecord {
    /// The time control.
    ///
    /// # Errors
    /// A corrupt row.
    fn time_control(&self) -> Result<TimeControl>;
    /// The depth.
    ///
    /// # Errors
    /// A corrupt row.
    fn depth(&self) -> Result<Depth>;
    /// The position and the move list, decoded (and so re-validated) from the stored record.
    ///
    /// # Errors
    /// A corrupt record.
    fn decode(&self) -> Result<(Position, Vec<Square>)>;
    /// The seat `player_id` holds, if any.
    fn seat_of(&self, player_id: &str) -> Option<Seat>;
    /// The player seated at `seat`.
    fn player(&self, seat: Seat) -> Option<&PlayerId>;
    /// Who plays `seat` now.
    fn controller(&self, seat: Seat) -> Controller;
    /// Sets who plays `seat`.
    fn set_controller(&mut self, seat: Seat, controller: Controller);
    /// The clock bank of `seat` at the start of the current turn.
    fn bank(&self, seat: Seat) -> Option<i64>;
    /// Sets the bank of `seat`.
    fn set_bank(&mut self, seat: Seat, bank: Option<i64>);
    /// The lag-compensation quota of `seat` (`None`: the control's starting quota).
    fn lag_quota(&self, seat: Seat) -> Option<i64>;
    /// Sets the lag-compensation quota of `seat`.
    fn set_lag_quota(&mut self, seat: Seat, quota: Option<i64>);
    /// The side to move, while active.
    fn to_move_seat(&self) -> Option<Seat>;
    /// The winner of a decided match (`None`: a draw, or still being played).
    fn winner_seat(&self) -> Option<Seat>;
    /// Whether the match is still being played.
    fn is_active(&self) -> bool;
    /// Recomputes the columns derived from the others (deadline, CPU queue
    /// flag, and a substitute's pace as a claim on its turn).
    ///
    /// # Errors
    /// A corrupt row.
    fn refresh_derived(&mut self) -> Result<()>;
}

impl MatchRecord for MatchRow {
    fn time_control(&self) -> Result<TimeControl> {
        time_control(
            &self.tc_kind,
            self.tc_initial_ms,
            self.tc_increment_ms,
            self.tc_turn_ms,
        )
    }

    fn depth(&self) -> Result<Depth> {
        u8::try_from(self.depth)
            .ok()
            .and_then(|d| Depth::new(d).ok())
            .ok_or_else(|| Error::Internal(format!("stored depth {} is invalid", self.depth)))
    }

    fn decode(&self) -> Result<(Position, Vec<Square>)> {
        let (position, moves) = rules::decode(&self.position)
            .map_err(|e| Error::Internal(format!("match {} has a corrupt record: {e}", self.id)))?;
        if position.depth() != self.depth()?
            || moves.len() != usize::try_from(self.ply).unwrap_or(usize::MAX)
        {
            return Err(Error::Internal(format!(
                "match {} record disagrees with its row",
                self.id
            )));
        }
        Ok((position, moves))
    }

    fn seat_of(&self, player_id: &str) -> Option<Seat> {
        if self.x_player_id.as_deref() == Some(player_id) {
            Some(Seat::X)
        } else if self.o_player_id.as_deref() == Some(player_id) {
            Some(Seat::O)
        } else {
            None
        }
    }

    fn player(&self, seat: Seat) -> Option<&PlayerId> {
        match seat {
            Seat::X => self.x_player_id.as_ref(),
            Seat::O => self.o_player_id.as_ref(),
        }
    }

    fn controller(&self, seat: Seat) -> Controller {
        match seat {
            Seat::X => self.x_controller,
            Seat::O => self.o_controller,
        }
    }

    fn set_controller(&mut self, seat: Seat, controller: Controller) {
        match seat {
            Seat::X => self.x_controller = controller,
            Seat::O => self.o_controller = controller,
        }
    }

    fn bank(&self, seat: Seat) -> Option<i64> {
        match seat {
            Seat::X => self.x_bank_ms,
            Seat::O => self.o_bank_ms,
        }
    }

    fn set_bank(&mut self, seat: Seat, bank: Option<i64>) {
        match seat {
            Seat::X => self.x_bank_ms = bank,
            Seat::O => self.o_bank_ms = bank,
        }
    }

    fn lag_quota(&self, seat: Seat) -> Option<i64> {
        match seat {
            Seat::X => self.x_lag_quota_ms,
            Seat::O => self.o_lag_quota_ms,
        }
    }

    fn set_lag_quota(&mut self, seat: Seat, quota: Option<i64>) {
        match seat {
            Seat::X => self.x_lag_quota_ms = quota,
            Seat::O => self.o_lag_quota_ms = quota,
        }
    }

    fn to_move_seat(&self) -> Option<Seat> {
        self.to_move.map(|s| s.0)
    }

    fn winner_seat(&self) -> Option<Seat> {
        self.winner.map(|s| s.0)
    }

    fn is_active(&self) -> bool {
        self.status == MatchStatus::Active
    }

    fn refresh_derived(&mut self) -> Result<()> {
        let tc = self.time_control()?;
        match self.to_move_seat().filter(|_| self.is_active()) {
            Some(seat) => {
                self.deadline_at = tc.deadline(self.turn_started_at, self.bank(seat));
                self.awaiting_cpu = self.controller(seat) == Controller::Cpu;
                // The practice opponent answers at once; a substitute keeps a
                // human pace: no worker claims its turn before the pace is up.
                if self.awaiting_cpu
                    && self.player(seat).is_some()
                    && self.cpu_claimed_until.is_none()
                {
                    let pace = super::grace::substitute_pace(tc, self.bank(seat));
                    // Claimable once the claim time is past, i.e. from turn start + pace.
                    self.cpu_claimed_until = Some(self.turn_started_at.saturating_add(pace) - 1);
                }
            }
            None => {
                self.to_move = None;
                self.deadline_at = None;
                self.awaiting_cpu = false;
            }
        }
        Ok(())
    }
}
