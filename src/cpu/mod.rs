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

use crate::rules::{Position, Square};

pub use budget::{Budget, Stopwatch};
pub use level::Level;
pub use mcts::{Decision, Report, Settings};
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

/// The settings of `level` for `position`, within `clock_left` when given:
/// the solver with random playouts at every depth. Greedy playouts stay
/// selectable but are not the default: at depth 2 they scored 38.8% against
/// the pre-solver level 5 where random ones scored 54.4% (README, "Strength").
#[must_use]
pub fn level_settings(position: &Position, level: Level, clock_left: Option<Duration>) -> Settings {
    let depth = position.depth();
    Settings::with_budget(Budget::for_level(level, depth, clock_left))
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
