//! Command-line subcommands that are not the server: their arguments and
//! their output. Printing and timing live here, never in the pure layers.

pub mod perft;
