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

#[cfg(test)]
mod tests {
    use super::{PerftArgs, run};

    fn output(depth: u8, plies: u32, divide: bool) -> String {
        let mut out = Vec::new();
        run(
            &PerftArgs {
                depth,
                plies,
                divide,
            },
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn perft_prints_one_line_per_ply_then_the_speed() {
        let text = output(2, 3, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..3], ["ply 1: 81", "ply 2: 720", "ply 3: 6336"]);
        assert_eq!(lines.len(), 4);
        assert!(lines[3].starts_with("7137 leaf nodes in "), "{}", lines[3]);
        assert!(lines[3].contains("leaf nodes/s (bulk counting at the last ply"));
    }

    #[test]
    fn perft_divide_prints_the_count_under_each_first_move_of_the_last_ply() {
        let text = output(2, 2, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..2], ["ply 1: 81", "ply 2: 720"]);
        assert_eq!(lines.len(), 2 + 81 + 1);
        assert_eq!(lines[2], "0.0: 8");
        assert_eq!(lines[3], "0.1: 9");
        assert_eq!(lines[2 + 40], "4.4: 8");
        assert_eq!(lines[2 + 80], "8.8: 8");
    }
}
