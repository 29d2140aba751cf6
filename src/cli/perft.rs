//! `uttt perft`: perft counts from the empty board, with their speed.

use std::io::Write;
use std::time::Instant;

use anyhow::Context;

use crate::rules::perft::{divide_position, perft_position};
use crate::rules::{Depth, Position};

/// Arguments of `uttt perft`.
#[derive(Clone, Debug, clap::Args)]
pub struct PerftArgs {
    /// Depth of the board tree, 1..=4.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub depth: u8,
    /// Count move sequences of 1 up to this many plies.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub plies: u32,
    /// Also print the count under each first move, for the last ply.
    #[arg(long)]
    pub divide: bool,
}

/// Prints `ply K: COUNT` for K = 1..=plies, the divide of the last ply when
/// asked for, then the leaf nodes per second over all plies.
///
/// # Errors
/// A depth outside 1..=4, or a failed write to `out`.
pub fn run(args: &PerftArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let depth = Depth::new(args.depth)?;
    let start = Position::new(depth);
    let mut leaves = 0u64;
    let mut divided = Vec::new();
    let started = Instant::now();
    for ply in 1..=args.plies {
        let count = if args.divide && ply == args.plies {
            divided = divide_position(&start, ply);
            divided.iter().map(|&(_, count)| count).sum()
        } else {
            perft_position(&start, ply)
        };
        leaves += count;
        writeln!(out, "ply {ply}: {count}").context("writing the perft counts")?;
    }
    let elapsed = started.elapsed();
    for (square, count) in divided {
        writeln!(out, "{}: {count}", square.to_address(depth))?;
    }
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        leaves as f64 / seconds
    } else {
        f64::INFINITY
    };
    writeln!(
        out,
        "{leaves} leaf nodes in {seconds:.3} s: {:.1} M leaf nodes/s (bulk counting at the last ply, one thread)",
        rate / 1e6
    )?;
    Ok(())
}
