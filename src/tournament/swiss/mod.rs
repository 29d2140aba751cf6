//! Swiss tournaments (RULES.md, "Tournaments", Swiss): a fixed number of
//! rounds, everyone plays once per round.
//!
//! Build a [`Swiss`] from the entrants and the rounds so far (checked once),
//! then ask it for the next round's [`Pairing`] or the [`Standing`]s:
//!
//! ```
//! use uttt::tournament::swiss::{Entrant, Swiss};
//!
//! let entrants = (1..=4)
//!     .map(|i| Entrant { id: format!("p{i}"), rating: 1600.0 - 100.0 * f64::from(i), withdrawn: false })
//!     .collect();
//! let swiss = Swiss::new(entrants, Vec::new()).unwrap();
//! let round1 = swiss.pair_next_round().unwrap();
//! assert_eq!((round1.boards[0].x.as_str(), round1.boards[0].o.as_str()), ("p1", "p3"));
//! ```
//!
//! Scoring: win 1, draw ½, loss 0, bye 1. Scores are kept in half points, so
//! every comparison is exact.

mod pairing;
mod standings;

use std::collections::HashMap;

use super::{GameResult, Outcome, PlayerId, SeatHistory};
use crate::rules::Seat;

pub use standings::Standing;

/// A player registered in the tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct Entrant {
    /// The player's id.
    pub id: PlayerId,
    /// The rating the pairing sorts by after the score (the service chooses
    /// which: the ladder rating at the start, or the current one).
    pub rating: f64,
    /// Withdrew or was removed: no further pairings; games played still count.
    pub withdrawn: bool,
}

/// One game of a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// The player seated X (moves first).
    pub x: PlayerId,
    /// The player seated O.
    pub o: PlayerId,
    /// The result; `None` while the game is being played.
    pub result: Option<GameResult>,
}

/// A round as it was paired: its games and the player who had the bye.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Round {
    /// The games, in board order.
    pub games: Vec<Game>,
    /// The player who sat out with a bye (scores 1), if any.
    pub bye: Option<PlayerId>,
}

/// One board of a new round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    /// 1 for the top board (highest scores), then down.
    pub number: u32,
    /// The player seated X.
    pub x: PlayerId,
    /// The player seated O.
    pub o: PlayerId,
}

/// The pairing of the next round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// The round's number, from 1.
    pub round: u32,
    /// The boards, top first.
    pub boards: Vec<Board>,
    /// The player who gets the bye, if the number of active players is odd.
    pub bye: Option<PlayerId>,
}

impl Pairing {
    /// The round to record, with every game still to be played.
    #[must_use]
    pub fn to_round(&self) -> Round {
        Round {
            games: self
                .boards
                .iter()
                .map(|b| Game {
                    x: b.x.clone(),
                    o: b.o.clone(),
                    result: None,
                })
                .collect(),
            bye: self.bye.clone(),
        }
    }
}

/// Why entrants and rounds were refused, or a round cannot be paired yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwissError {
    /// Two entrants share an id.
    #[error("entrant {0} is listed twice")]
    DuplicateEntrant(PlayerId),
    /// A rating is not a finite number.
    #[error("entrant {0} has a rating that is not a finite number")]
    InvalidRating(PlayerId),
    /// A round names a player who is not an entrant.
    #[error("round {round} names {player}, who is not an entrant")]
    UnknownPlayer {
        /// The round, from 1.
        round: u32,
        /// The unknown id.
        player: PlayerId,
    },
    /// A player appears twice in one round (two games, a game and the bye,
    /// or against themself).
    #[error("round {round} names {player} twice")]
    PlayedTwice {
        /// The round, from 1.
        round: u32,
        /// The player.
        player: PlayerId,
    },
    /// The next round cannot be paired while a game has no result.
    #[error("round {round} still has a game in progress")]
    RoundInProgress {
        /// The round, from 1.
        round: u32,
    },
}

/// One game as one player saw it.
#[derive(Debug, Clone, Copy)]
struct Played {
    /// The opponent's entrant index.
    opponent: usize,
    seat: Seat,
    /// `None` while in progress.
    outcome: Option<Outcome>,
}

/// How a player's pairing in the latest round compared with their score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Float {
    #[default]
    None,
    /// Met a lower score, or had the bye.
    Down,
    /// Met a higher score.
    Up,
}

/// What the rounds so far say about one entrant.
#[derive(Debug, Clone, Default)]
struct Record {
    /// Score in half points (finished games and byes).
    half_points: u32,
    /// Every game, in round order, including games in progress.
    games: Vec<Played>,
    byes: u32,
    seats: SeatHistory,
    /// The float of the latest round.
    float: Float,
}

/// A Swiss tournament's entrants and rounds, checked and indexed.
#[derive(Debug, Clone)]
pub struct Swiss {
    entrants: Vec<Entrant>,
    rounds: Vec<Round>,
    records: Vec<Record>,
}

impl Swiss {
    /// Checks the entrants and the rounds played so far (oldest first).
    ///
    /// # Errors
    /// Duplicate entrants, a rating that is not finite, a round naming an
    /// unknown player or someone twice.
    pub fn new(entrants: Vec<Entrant>, rounds: Vec<Round>) -> Result<Swiss, SwissError> {
        let mut index = HashMap::with_capacity(entrants.len());
        for (i, e) in entrants.iter().enumerate() {
            if !e.rating.is_finite() {
                return Err(SwissError::InvalidRating(e.id.clone()));
            }
            if index.insert(e.id.as_str(), i).is_some() {
                return Err(SwissError::DuplicateEntrant(e.id.clone()));
            }
        }
        let mut records = vec![Record::default(); entrants.len()];
        let mut seen = vec![usize::MAX; entrants.len()];
        for (r, round) in rounds.iter().enumerate() {
            let number = r as u32 + 1;
            let mut lookup = |id: &PlayerId| -> Result<usize, SwissError> {
                let i = *index
                    .get(id.as_str())
                    .ok_or_else(|| SwissError::UnknownPlayer {
                        round: number,
                        player: id.clone(),
                    })?;
                if seen[i] == r {
                    return Err(SwissError::PlayedTwice {
                        round: number,
                        player: id.clone(),
                    });
                }
                seen[i] = r;
                Ok(i)
            };
            let mut games = Vec::with_capacity(round.games.len());
            for g in &round.games {
                games.push((lookup(&g.x)?, lookup(&g.o)?, g.result));
            }
            let bye = round.bye.as_ref().map(&mut lookup).transpose()?;

            // Floats compare the scores before this round.
            let before: Vec<u32> = records.iter().map(|rec| rec.half_points).collect();
            for rec in &mut records {
                rec.float = Float::None;
            }
            for &(x, o, result) in &games {
                for (me, them, seat) in [(x, o, Seat::X), (o, x, Seat::O)] {
                    let outcome = result.map(|res| res.for_seat(seat));
                    let rec = &mut records[me];
                    rec.games.push(Played {
                        opponent: them,
                        seat,
                        outcome,
                    });
                    rec.seats.record(seat);
                    rec.half_points += match outcome {
                        Some(Outcome::Win) => 2,
                        Some(Outcome::Draw) => 1,
                        Some(Outcome::Loss) | None => 0,
                    };
                    rec.float = match before[me].cmp(&before[them]) {
                        std::cmp::Ordering::Greater => Float::Down,
                        std::cmp::Ordering::Less => Float::Up,
                        std::cmp::Ordering::Equal => Float::None,
                    };
                }
            }
            if let Some(b) = bye {
                records[b].byes += 1;
                records[b].half_points += 2;
                records[b].float = Float::Down;
            }
        }
        Ok(Swiss {
            entrants,
            rounds,
            records,
        })
    }

    /// The entrants, as given.
    #[must_use]
    pub fn entrants(&self) -> &[Entrant] {
        &self.entrants
    }

    /// The rounds so far, as given.
    #[must_use]
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Pairs the next round (RULES.md). When the rules cannot all hold they
    /// give way in this order, the first holding longest: everyone active is
    /// paired once or has the bye, and the bye goes to a player who has not
    /// had one while anyone active has not; no rematch; no seat three games
    /// in a row; the bye to the lowest-ranked player it can go to; then the
    /// Dutch preferences (score groups, top half against bottom half, floats,
    /// seat alternation). Deterministic: the same input gives the same
    /// pairing whatever the order of the entrants.
    ///
    /// # Errors
    /// [`SwissError::RoundInProgress`] while a game of an earlier round has
    /// no result.
    pub fn pair_next_round(&self) -> Result<Pairing, SwissError> {
        for (r, round) in self.rounds.iter().enumerate() {
            if round.games.iter().any(|g| g.result.is_none()) {
                return Err(SwissError::RoundInProgress {
                    round: r as u32 + 1,
                });
            }
        }
        Ok(pairing::pair(self))
    }

    /// The standings now: score, then Buchholz, then Sonneborn-Berger, then
    /// rating (games in progress do not count yet).
    #[must_use]
    pub fn standings(&self) -> Vec<Standing> {
        standings::standings(self)
    }
}
