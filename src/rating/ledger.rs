//! A ladder's ratings replayed from its rated results in order. Pure: the
//! caller feeds the games (players, score, end time) oldest first.

use std::collections::HashMap;

use super::{Growth, RatedGame, Score, Standing, rated_game};

/// One player's ratings and record on the ladder so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Entry {
    /// The rating after their last game, and when it ended.
    pub standing: Standing,
    /// Rated games.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Lost.
    pub losses: u32,
    /// Drawn.
    pub draws: u32,
}

impl Entry {
    fn record(&mut self, after: super::Rating, score: Score, at: i64) {
        self.standing = Standing {
            rating: after,
            rated_at: Some(at),
        };
        self.games += 1;
        match score {
            Score::Win => self.wins += 1,
            Score::Loss => self.losses += 1,
            Score::Draw => self.draws += 1,
        }
    }
}

/// Every player's entry, built by replaying games.
#[derive(Debug, Clone)]
pub struct Ledger {
    growth: Growth,
    entries: HashMap<String, Entry>,
}

impl Ledger {
    /// An empty ladder whose deviations grow by `growth`.
    pub fn new(growth: Growth) -> Ledger {
        Ledger {
            growth,
            entries: HashMap::new(),
        }
    }

    /// Plays one rated game between `x` and `o` that ended at `at` (after
    /// every game already played), exactly as the server applies a result.
    pub fn play(&mut self, x: &str, o: &str, x_score: Score, at: i64) -> RatedGame {
        let standing = |id: &str| self.entries.get(id).map(|e| e.standing).unwrap_or_default();
        let game = rated_game(standing(x), standing(o), x_score, at, self.growth);
        self.entries
            .entry(x.to_owned())
            .or_default()
            .record(game.x_after, x_score, at);
        self.entries
            .entry(o.to_owned())
            .or_default()
            .record(game.o_after, x_score.opposite(), at);
        game
    }

    /// A player's entry, when they have played.
    pub fn get(&self, player: &str) -> Option<&Entry> {
        self.entries.get(player)
    }

    /// Every player who has played, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::{INITIAL, after_game};
    use proptest::prelude::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn the_first_game_starts_both_players_from_the_initial_rating() {
        let mut ledger = Ledger::new(Growth::default());
        let game = ledger.play("a", "b", Score::Win, 5 * DAY);
        assert_eq!((game.x_before, game.o_before), (INITIAL, INITIAL));
        assert_eq!(
            (game.x_after, game.o_after),
            after_game(INITIAL, INITIAL, Score::Win)
        );
        let a = ledger.get("a").unwrap();
        assert_eq!(
            (a.games, a.wins, a.standing.rated_at),
            (1, 1, Some(5 * DAY))
        );
        assert_eq!(ledger.get("b").unwrap().losses, 1);
    }

    #[test]
    fn a_later_game_starts_from_the_grown_deviation() {
        let growth = Growth::default();
        let mut ledger = Ledger::new(growth);
        let first = ledger.play("a", "b", Score::Draw, 0);
        let second = ledger.play("a", "c", Score::Win, 100 * DAY);
        let grown =
            growth.deviation_after(first.x_after.deviation, first.x_after.volatility, 100 * DAY);
        assert_eq!(second.x_before.deviation, grown);
        assert!(second.x_before.deviation > first.x_after.deviation);
        assert_eq!(second.o_before, INITIAL);
    }

    proptest! {
        #[test]
        fn records_add_up_and_deviations_stay_in_range(
            games in prop::collection::vec((0usize..5, 1usize..5, 0u8..3, 0i64..(30 * DAY)), 1..60)
        ) {
            let mut ledger = Ledger::new(Growth::default());
            let mut at = 0;
            for (x, step, score, gap) in &games {
                let o = (x + step) % 5;
                at += gap;
                let score = [Score::Win, Score::Draw, Score::Loss][usize::from(*score)];
                let (x, o) = (x.to_string(), o.to_string());
                let stored = ledger.get(&x).map_or(INITIAL, |e| e.standing.rating);
                let game = ledger.play(&x, &o, score, at);
                // Inactivity only ever grows a deviation, never the rating.
                prop_assert!(game.x_before.deviation >= stored.deviation);
                prop_assert_eq!(game.x_before.rating, stored.rating);
                prop_assert_eq!(ledger.get(&x).unwrap().standing.rating, game.x_after);
            }
            let total: u32 = ledger.entries().map(|(_, e)| e.games).sum();
            prop_assert_eq!(total as usize, 2 * games.len());
            for (_, e) in ledger.entries() {
                prop_assert_eq!(e.games, e.wins + e.losses + e.draws);
            }
        }
    }
}
