//! `uttt bench cpu`: the CPU player's speed on one thread, from the empty
//! board: random full-game playouts per second, and MCTS iterations per
//! second of the levels' search. Needs no database.

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cpu::{Budget, Rng, Settings, mcts, random_playout};
use crate::rules::{Depth, Game, Tree1, Tree2, Tree3, Tree4};

/// Arguments of `uttt bench cpu`.
#[derive(Clone, Debug, clap::Args)]
pub struct CpuBenchArgs {
    /// Seconds to measure each figure.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Depths to measure, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1u8, 2, 3, 4],
          value_parser = clap::value_parser!(u8).range(1..=4))]
    pub depth: Vec<u8>,
}

/// Playouts and iterations counted over a measured span.
struct Rate {
    count: u64,
    /// Plies played, or searches run.
    extra: u64,
    /// Tree nodes over all searches.
    nodes: u64,
    elapsed: Duration,
}

impl Rate {
    fn per_second(&self) -> f64 {
        self.count as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Random games from the empty board until `span` has passed.
fn playouts<G: Game>(span: Duration) -> Rate {
    let mut rng = Rng::new(7);
    let started = Instant::now();
    let (mut games, mut plies) = (0, 0);
    while started.elapsed() < span {
        for _ in 0..16 {
            let mut game = G::start();
            black_box(random_playout(&mut game, &mut rng));
            plies += u64::from(game.ply());
            games += 1;
        }
    }
    Rate {
        count: games,
        extra: plies,
        nodes: 0,
        elapsed: started.elapsed(),
    }
}

/// Searches of `per_search` iterations from the empty board until `span` has passed.
fn iterations<G: Game>(per_search: u32, span: Duration) -> Rate {
    let settings = Settings::with_budget(Budget::iterations(per_search));
    let start = G::start();
    let started = Instant::now();
    let (mut total, mut seed, mut nodes) = (0, 0, 0);
    while started.elapsed() < span {
        let report = mcts::search(&start, &settings, seed, &started);
        total += u64::from(report.iterations);
        nodes += report.nodes as u64;
        seed += 1;
    }
    Rate {
        count: total,
        extra: seed,
        nodes,
        elapsed: started.elapsed(),
    }
}

/// Prints one line per depth: playouts/s with the mean game length, then
/// iterations/s with the search size.
///
/// # Errors
/// A failed write to `out`.
pub fn run(args: &CpuBenchArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let span = Duration::from_secs_f64(args.seconds.max(0.01));
    writeln!(
        out,
        "CPU speed, one thread, from the empty board ({:.1} s per figure):",
        span.as_secs_f64()
    )
    .context("writing the benchmark")?;
    for &levels in &args.depth {
        let depth = Depth::new(levels)?;
        // Searches of the size a strong level runs at each depth.
        let per_search = [20_000, 100_000, 10_000, 1_000][usize::from(levels - 1)];
        let (played, searched) = match levels {
            1 => (
                playouts::<Tree1>(span),
                iterations::<Tree1>(per_search, span),
            ),
            2 => (
                playouts::<Tree2>(span),
                iterations::<Tree2>(per_search, span),
            ),
            3 => (
                playouts::<Tree3>(span),
                iterations::<Tree3>(per_search, span),
            ),
            _ => (
                playouts::<Tree4>(span),
                iterations::<Tree4>(per_search, span),
            ),
        };
        writeln!(
            out,
            "depth {}: {:>9.0} playouts/s ({:.1} moves each), {:>9.0} MCTS iterations/s ({} searches of {per_search}, {:.0} nodes each)",
            depth.get(),
            played.per_second(),
            played.extra as f64 / played.count.max(1) as f64,
            searched.per_second(),
            searched.extra,
            searched.nodes as f64 / searched.extra.max(1) as f64,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{CpuBenchArgs, run};

    #[test]
    fn bench_cpu_prints_a_line_per_depth() {
        let mut out = Vec::new();
        run(
            &CpuBenchArgs {
                seconds: 0.01,
                depth: vec![1, 2],
            },
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].starts_with("depth 1: "), "{}", lines[1]);
        assert!(lines[2].contains("playouts/s") && lines[2].contains("MCTS iterations/s"));
    }
}
