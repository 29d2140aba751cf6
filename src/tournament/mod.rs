//! Tournaments (RULES.md, "Tournaments"): who plays whom, with which seat, and
//! how results score. Pure: the entrants and the games so far go in, pairings
//! and standings come out; time and ratings are passed in, nothing is read or
//! written anywhere else.
//!
//! - [`swiss`]: a fixed number of rounds; [`swiss::Swiss::pair_next_round`]
//!   pairs the next round (Dutch-style, no rematches, seat alternation, one bye
//!   per player), [`swiss::Swiss::standings`] ranks by score, Buchholz,
//!   Sonneborn-Berger and rating.
//! - [`arena`]: a fixed duration; [`arena::pair_pool`] pairs the players waiting
//!   in the pool, [`arena::Arena::standings`] scores points with streaks ("on
//!   fire") and berserk, [`arena::berserk_left`] halves a berserk player's clock.
//!
//! Player ids are the server's opaque strings; the module only compares them.

pub mod arena;
mod matching;
pub mod swiss;

use std::cmp::Ordering;

use crate::rules::Seat;

/// A player's id, as the service stores it (compared, never interpreted).
pub type PlayerId = String;

/// How a finished tournament game ended, by seat (API.md: `"x" | "o" | "draw"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// This seat won (by a line, on time, by resignation or forfeit).
    Win(Seat),
    /// Neither won.
    Draw,
}

impl GameResult {
    /// The result from a winner, `None` meaning a draw.
    #[must_use]
    pub const fn from_winner(winner: Option<Seat>) -> GameResult {
        match winner {
            Some(seat) => GameResult::Win(seat),
            None => GameResult::Draw,
        }
    }

    /// The result as the player in `seat` scored it.
    #[must_use]
    pub fn for_seat(self, seat: Seat) -> Outcome {
        match self {
            GameResult::Win(winner) if winner == seat => Outcome::Win,
            GameResult::Win(_) => Outcome::Loss,
            GameResult::Draw => Outcome::Draw,
        }
    }
}

/// A game's result from one player's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player won.
    Win,
    /// A draw.
    Draw,
    /// The player lost.
    Loss,
}

/// How often a player has had each seat, and the seat of their latest game:
/// what the seat rules of both kinds of tournament look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeatHistory {
    /// Games played as X.
    pub x_games: u32,
    /// Games played as O.
    pub o_games: u32,
    /// The seat of the latest game, if any.
    pub last: Option<Seat>,
}

impl SeatHistory {
    /// Records one more game in `seat`.
    pub fn record(&mut self, seat: Seat) {
        match seat {
            Seat::X => self.x_games += 1,
            Seat::O => self.o_games += 1,
        }
        self.last = Some(seat);
    }

    /// RULES.md's seat rule between two players: X goes to the one who has had
    /// X fewer times, then to the one who had O last. `Less` means `self` gets
    /// X, `Greater` the other; `Equal` when the rule does not decide.
    #[must_use]
    pub fn x_order(&self, other: &SeatHistory) -> Ordering {
        self.x_games.cmp(&other.x_games).then_with(|| {
            match (self.last == Some(Seat::O), other.last == Some(Seat::O)) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                _ => Ordering::Equal,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_goes_to_fewer_x_then_to_who_had_o_last() {
        let mut a = SeatHistory::default();
        let mut b = SeatHistory::default();
        assert_eq!(a.x_order(&b), Ordering::Equal);
        a.record(Seat::X);
        b.record(Seat::O);
        assert_eq!(a.x_order(&b), Ordering::Greater, "b had X fewer times");
        b.record(Seat::X);
        a.record(Seat::O);
        assert_eq!(a.x_order(&b), Ordering::Less, "same X count, a had O last");
        assert_eq!(b.x_order(&a), Ordering::Greater);
    }

    #[test]
    fn results_score_from_each_side() {
        let r = GameResult::from_winner(Some(Seat::O));
        assert_eq!(r.for_seat(Seat::O), Outcome::Win);
        assert_eq!(r.for_seat(Seat::X), Outcome::Loss);
        assert_eq!(GameResult::Draw.for_seat(Seat::X), Outcome::Draw);
    }
}
