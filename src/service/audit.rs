//! The consistency audit of one stored match: its moves are numbered from 0
//! and alternate seats from X, its stored position is the replay of those
//! moves, and its stored result follows from that position (or from a
//! timeout or resignation while it was still open).
//!
//! One audit serves the API tests, the multi-process reliability tests and
//! `uttt replay`; it reads values only (no database, no HTTP).

use crate::rules::{Address, Depth, Position, ReplayError, Seat, Square, Status};
use crate::service::admin::ExportRecord;
use crate::store::matches::{MatchRow, MoveRow};

/// Where a stored move was played, in the form its source keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// A flat square index (a `moves` row).
    Index(i64),
    /// A dotted address (`"4.0"`, an export's text notation).
    Address(&'a str),
}

/// One stored move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredMove<'a> {
    /// Its stored ply number.
    pub ply: i64,
    /// Its stored seat (`"x"`/`"o"`), where the source keeps one.
    pub seat: Option<&'a str>,
    /// The square.
    pub place: Place<'a>,
}

/// What the audit reads of a match, borrowed from wherever it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMatch<'a> {
    /// Its depth, as stored.
    pub depth: i64,
    /// Its moves, in order.
    pub moves: Vec<StoredMove<'a>>,
    /// The encoded record of the match row (an export has none).
    pub position: Option<&'a [u8]>,
    /// The move count of the match row (an export has none).
    pub ply: Option<i64>,
    /// `active` or `finished`.
    pub status: &'a str,
    /// Why it ended.
    pub reason: Option<&'a str>,
    /// `x`, `o`, or none.
    pub winner: Option<&'a str>,
}

impl<'a> StoredMatch<'a> {
    /// A match row and its move rows.
    pub fn from_rows(row: &'a MatchRow, moves: &'a [MoveRow]) -> StoredMatch<'a> {
        StoredMatch {
            depth: i64::from(row.depth),
            moves: moves
                .iter()
                .map(|m| StoredMove {
                    ply: i64::from(m.ply),
                    seat: Some(m.seat.as_str()),
                    place: Place::Index(i64::from(m.square)),
                })
                .collect(),
            position: Some(&row.position),
            ply: Some(i64::from(row.ply)),
            status: row.status.as_str(),
            reason: row.reason.map(|r| r.as_str()),
            winner: row.winner.map(|w| w.as_str()),
        }
    }

    /// A record of an admin export: its moves are numbered by their order.
    pub fn from_export(record: &'a ExportRecord) -> StoredMatch<'a> {
        StoredMatch {
            depth: i64::from(record.depth),
            moves: (0..)
                .zip(record.moves.split_whitespace())
                .map(|(ply, text)| StoredMove {
                    ply,
                    seat: None,
                    place: Place::Address(text),
                })
                .collect(),
            position: None,
            ply: None,
            status: &record.status,
            reason: record.reason.as_deref(),
            winner: record.winner.as_deref(),
        }
    }
}

/// One way a stored match contradicts itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Discrepancy {
    /// The depth is not 1 to 4 (nothing else can be checked).
    #[error("depth {0} is not 1 to 4")]
    BadDepth(i64),
    /// The move at `index` carries another ply number.
    #[error("move {index} is numbered {ply}: moves are numbered from 0 without gaps")]
    PlyNumber {
        /// Its place in the list.
        index: usize,
        /// Its stored number.
        ply: i64,
    },
    /// The move at `index` is stored for the wrong seat.
    #[error("move {index} is stored for seat `{seat}`: seats alternate from x")]
    SeatOutOfTurn {
        /// Its place in the list.
        index: usize,
        /// The stored seat.
        seat: String,
    },
    /// A stored square is not a square of the match's depth.
    #[error("move {index} `{place}` is not a square of depth {depth}")]
    NotASquare {
        /// Its place in the list.
        index: usize,
        /// The stored index or address.
        place: String,
        /// The match's depth.
        depth: u8,
    },
    /// The moves cannot be played in order.
    #[error("the moves do not replay: {0}")]
    Illegal(ReplayError),
    /// The stored position does not decode.
    #[error("the stored position does not decode: {0}")]
    Undecodable(String),
    /// The stored position's move list is not the stored moves.
    #[error("the stored position records {recorded} move(s) that differ from the {stored} stored")]
    RecordDiffers {
        /// Moves in the stored position's record.
        recorded: usize,
        /// Moves stored as rows.
        stored: usize,
    },
    /// The stored position is not the replay of the moves.
    #[error("the stored position is not the replay of the moves")]
    PositionDiffers,
    /// The match row counts another number of moves than are stored.
    #[error("the match counts {counted} move(s), {stored} are stored")]
    PlyCount {
        /// The match row's count.
        counted: i64,
        /// Moves stored.
        stored: usize,
    },
    /// The stored status, reason and winner do not follow from the replay.
    #[error(
        "stored result {status} {reason:?} won by {winner:?} does not follow from the moves, which give {replayed:?}"
    )]
    Result {
        /// Stored status.
        status: String,
        /// Stored reason.
        reason: Option<String>,
        /// Stored winner.
        winner: Option<String>,
        /// What the replay gives.
        replayed: Status,
    },
}

/// Everything inconsistent about `stored`; empty when it is consistent.
pub fn audit(stored: &StoredMatch<'_>) -> Vec<Discrepancy> {
    let Some(depth) = u8::try_from(stored.depth)
        .ok()
        .and_then(|d| Depth::new(d).ok())
    else {
        return vec![Discrepancy::BadDepth(stored.depth)];
    };
    let mut found = Vec::new();
    let mut squares = Vec::with_capacity(stored.moves.len());
    for (index, m) in stored.moves.iter().enumerate() {
        if usize::try_from(m.ply).ok() != Some(index) {
            found.push(Discrepancy::PlyNumber { index, ply: m.ply });
        }
        let expected = if index % 2 == 0 { "x" } else { "o" };
        if let Some(seat) = m.seat.filter(|s| *s != expected) {
            found.push(Discrepancy::SeatOutOfTurn {
                index,
                seat: seat.to_owned(),
            });
        }
        match square_of(depth, m.place) {
            Some(square) => squares.push(square),
            None => found.push(Discrepancy::NotASquare {
                index,
                place: match m.place {
                    Place::Index(i) => i.to_string(),
                    Place::Address(text) => text.to_owned(),
                },
                depth: depth.get(),
            }),
        }
    }
    if squares.len() < stored.moves.len() {
        // Without every square there is nothing to replay.
        return found;
    }
    let replayed = match Position::replay(depth, &squares) {
        Ok(position) => position,
        Err(e) => {
            found.push(Discrepancy::Illegal(e));
            return found;
        }
    };
    if let Some(bytes) = stored.position {
        match crate::rules::decode(bytes) {
            Err(e) => found.push(Discrepancy::Undecodable(e.to_string())),
            Ok((position, record)) => {
                if record != squares {
                    found.push(Discrepancy::RecordDiffers {
                        recorded: record.len(),
                        stored: squares.len(),
                    });
                }
                if position != replayed {
                    found.push(Discrepancy::PositionDiffers);
                }
            }
        }
    }
    if let Some(counted) = stored
        .ply
        .filter(|n| usize::try_from(*n).ok() != Some(squares.len()))
    {
        found.push(Discrepancy::PlyCount {
            counted,
            stored: squares.len(),
        });
    }
    if !result_follows(stored, replayed.status()) {
        found.push(Discrepancy::Result {
            status: stored.status.to_owned(),
            reason: stored.reason.map(str::to_owned),
            winner: stored.winner.map(str::to_owned),
            replayed: replayed.status(),
        });
    }
    found
}

fn square_of(depth: Depth, place: Place<'_>) -> Option<Square> {
    match place {
        Place::Index(i) => Square::new(depth, usize::try_from(i).ok()?),
        Place::Address(text) => Square::from_address(depth, &text.parse::<Address>().ok()?),
    }
}

fn seat(text: &str) -> Option<Seat> {
    match text {
        "x" => Some(Seat::X),
        "o" => Some(Seat::O),
        _ => None,
    }
}

/// Whether the stored status, reason and winner follow from `replayed`: an
/// open match has no result; a finished one was won on the board by the
/// stored winner, drawn, or ended by time or resignation while still open.
fn result_follows(stored: &StoredMatch<'_>, replayed: Status) -> bool {
    let winner = match stored.winner {
        None => None,
        Some(text) => match seat(text) {
            Some(seat) => Some(seat),
            None => return false,
        },
    };
    match (stored.status, stored.reason, replayed) {
        ("active", None, Status::Ongoing) => winner.is_none(),
        ("finished", Some("three_in_a_row"), Status::Won(w)) => winner == Some(w),
        ("finished", Some("draw"), Status::Drawn) => winner.is_none(),
        ("finished", Some("timeout" | "resignation"), Status::Ongoing) => winner.is_some(),
        _ => false,
    }
}
