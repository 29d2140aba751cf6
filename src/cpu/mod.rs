//! The CPU player: Monte-Carlo tree search over the rules core, with levels
//! 1..=5. Pure: the position, a seed and a stopwatch come in, a move goes
//! out; no I/O, no clock reading.
//!
//! - [`level`]: the levels; [`budget`]: what a level may spend, capped by
//!   the clock;
//! - [`tactics`]: one-move wins and blocks at the root;
//! - [`playout`]: random or greedy playouts; [`mcts`]: the tree search (UCT
//!   with an MCTS-solver), generic over [`Game`](crate::rules::Game) so each
//!   depth compiles to its own code;
//! - [`openings`]: random openings for matches between CPU players.

pub mod analysis;
pub mod budget;
pub mod level;
pub mod mcts;
pub mod openings;
pub mod playout;
pub mod rng;
pub mod tactics;

use std::time::Duration;

use crate::rules::{Position, Square, Tree1, Tree2, Tree3, Tree4};

pub use budget::{Budget, Stopwatch};
pub use level::Level;
pub use mcts::{Decision, Kept, Report, Settings};
pub use playout::{Playout, playout, random_playout};
pub use rng::Rng;

/// Searches `position` with `settings`, whatever its depth.
pub fn think(position: &Position, settings: &Settings, seed: u64, watch: &dyn Stopwatch) -> Report {
    match position {
        Position::D1(tree) => mcts::search(tree, settings, seed, watch),
        Position::D2(tree) => mcts::search(tree, settings, seed, watch),
        Position::D3(tree) => mcts::search(&**tree, settings, seed, watch),
        Position::D4(tree) => mcts::search(&**tree, settings, seed, watch),
    }
}

/// A CPU player that keeps its search tree from one move to the next of
/// one match (tree reuse): the search of a position two plies on starts
/// from the subtree the last search grew for it.
#[derive(Default)]
pub struct Searcher {
    d1: Kept<Tree1>,
    d2: Kept<Tree2>,
    d3: Kept<Tree3>,
    d4: Kept<Tree4>,
}

impl Searcher {
    /// A searcher with nothing kept.
    #[must_use]
    pub fn new() -> Searcher {
        Searcher::default()
    }

    /// As [`think`], from what the last search kept when `position` follows
    /// its position by one or two plies; keeps this search's tree.
    pub fn think(
        &mut self,
        position: &Position,
        settings: &Settings,
        seed: u64,
        watch: &dyn Stopwatch,
    ) -> Report {
        // Only the depth searched keeps a tree.
        let depth = position.depth().get();
        if depth != 1 {
            self.d1.clear();
        }
        if depth != 2 {
            self.d2.clear();
        }
        if depth != 3 {
            self.d3.clear();
        }
        if depth != 4 {
            self.d4.clear();
        }
        match position {
            Position::D1(tree) => mcts::search_kept(tree, settings, seed, watch, &mut self.d1),
            Position::D2(tree) => mcts::search_kept(tree, settings, seed, watch, &mut self.d2),
            Position::D3(tree) => mcts::search_kept(&**tree, settings, seed, watch, &mut self.d3),
            Position::D4(tree) => mcts::search_kept(&**tree, settings, seed, watch, &mut self.d4),
        }
    }

    /// Forgets the kept tree (a new match).
    pub fn clear(&mut self) {
        *self = Searcher::default();
    }
}

/// The settings of `level` for `position`, within `clock_left` when given:
/// levels 1–4 the solver with random playouts at every depth, level 5
/// [`Settings::strongest`] (decisive playouts, a one-move prior). Greedy
/// playouts stay selectable but are not used: at depth 2 they scored 38.8%
/// against the pre-solver level 5 where random ones scored 54.4% (README,
/// "Strength").
#[must_use]
pub fn level_settings(position: &Position, level: Level, clock_left: Option<Duration>) -> Settings {
    let budget = Budget::for_level(level, position.depth(), clock_left);
    if level == Level::MAX {
        Settings::strongest(budget)
    } else {
        Settings::with_budget(budget)
    }
}

/// Picks a move for the side to move of `position`, within `clock_left` when
/// given; `None` only when the match is over.
pub fn choose_move(
    position: &Position,
    level: Level,
    clock_left: Option<Duration>,
    seed: u64,
    watch: &dyn Stopwatch,
) -> Option<Square> {
    think(
        position,
        &level_settings(position, level, clock_left),
        seed,
        watch,
    )
    .square
}
