//! `uttt`: a ranked Ultimate Tic-Tac-Toe server.

use clap::{Parser, Subcommand};

/// The `uttt` command line.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count move sequences from the empty board (perft) and time the move generator.
    Perft(uttt::cli::perft::PerftArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Perft(args) => uttt::cli::perft::run(&args, &mut std::io::stdout().lock()),
    }
}
