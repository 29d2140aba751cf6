//! Speed of the CPU player at depth 2, side by side with the MIT crate
//! `ai-ultimate-tictactoe` 0.2 in the same run:
//! - random full-game playouts from the empty board (throughput: games);
//! - MCTS iterations from the empty board, searches of 100,000 iterations
//!   (throughput: iterations): their random-playout UCT against our levels'
//!   search (UCT with one-move tactics) and our plain UCT.
//!
//! Run with `cargo bench --bench cpu`.

use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "support/theirs.rs"]
mod theirs;

use ai_ultimate_tictactoe as other;
use criterion::{
    BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime,
};
use uttt::cpu::{Budget, Rng, Settings, mcts, random_playout};
use uttt::rules::{Game, Tree2};

const GAMES: u64 = 1_000;
const ITERATIONS: u32 = 100_000;

fn playouts_ours(games: u64) -> u32 {
    let mut rng = Rng::new(7);
    let mut plies = 0;
    for _ in 0..games {
        let mut game = Tree2::start();
        black_box(random_playout(&mut game, &mut rng));
        plies += game.ply();
    }
    plies
}

/// Their rollout loop, as their own UCT runs it, with our generator.
fn playouts_theirs(games: u64) -> u32 {
    let mut rng = Rng::new(7);
    theirs::playouts(games, |n| rng.below(n)) as u32
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
}

fn playouts_depth_two(c: &mut Criterion) {
    let mut group = c.benchmark_group("playouts_d2");
    configure(&mut group);
    group.throughput(Throughput::Elements(GAMES));
    group.bench_function("uttt", |b| b.iter(|| playouts_ours(black_box(GAMES))));
    group.bench_function("ai_ultimate_tictactoe", |b| {
        b.iter(|| playouts_theirs(black_box(GAMES)))
    });
    group.finish();
}

fn mcts_depth_two(c: &mut Criterion) {
    let mut group = c.benchmark_group("mcts_iterations_d2");
    configure(&mut group);
    group.throughput(Throughput::Elements(u64::from(ITERATIONS)));
    let start = Tree2::start();
    let watch = Instant::now();
    let levels = Settings::with_budget(Budget::iterations(ITERATIONS));
    let plain = Settings::plain_uct(ITERATIONS);
    let mut seed = 0;
    group.bench_function("uttt_levels", |b| {
        b.iter(|| {
            seed += 1;
            let report = mcts::search(black_box(&start), &levels, seed, &watch);
            assert_eq!(report.iterations, ITERATIONS);
            report.square
        })
    });
    group.bench_function("uttt_plain_uct", |b| {
        b.iter(|| {
            seed += 1;
            mcts::search(black_box(&start), &plain, seed, &watch).square
        })
    });
    // Built once: it loads their embedded policy network, unused by UCT.
    let mut searcher = other::MctsSearcher::new();
    group.bench_function("ai_ultimate_tictactoe_uct", |b| {
        b.iter(|| {
            seed += 1;
            let options = other::MctsOptions {
                max_simulations: ITERATIONS,
                // 0: no deadline, only the simulation bound.
                soft_time_ms: 0,
                exploration: std::f64::consts::SQRT_2,
                seed,
                strategy: other::MctsStrategy::UctRandom,
            };
            let report = searcher.search(other::Position::start(), options);
            assert_eq!(report.simulations, ITERATIONS);
            report.best_move
        })
    });
    group.finish();
}

criterion_group!(benches, playouts_depth_two, mcts_depth_two);
criterion_main!(benches);
