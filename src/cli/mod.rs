//! Command-line subcommands that are not the server: their arguments and
//! their output. Printing and timing live here, never in the pure layers.

pub mod arena_bench;
pub mod bot;
pub mod cpu_bench;
pub mod history_bench;
pub mod leaderboard_bench;
pub mod pairing_bench;
pub mod perft;
pub mod recompute;
pub mod replay;
pub mod seed;
pub mod selfplay;
