//! Speed of the rules core at depth 2, side by side with the MIT crate
//! `ai-ultimate-tictactoe` 0.2 in the same run:
//! - perft from the empty board to ply 6 (4,020,960 leaves), with and without
//!   bulk counting at the last ply, for both engines;
//! - make-moves: random playouts to the end of the match, `legal_moves` then
//!   `play` at every ply; throughput is moves played.
//!
//! Run with `cargo bench --bench rules`.

use std::hint::black_box;
use std::time::Duration;

#[path = "support/theirs.rs"]
mod theirs;

use ai_ultimate_tictactoe as other;
use criterion::{
    BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime,
};
use uttt::rules::perft::{perft, perft_without_bulk};
use uttt::rules::{Depth, Game, MoveList, Position, Tree2, Tree3, Tree4};

const PLIES: u32 = 6;
const PLAYOUTS: u64 = 200;

/// Their perft with bulk counting at the last ply, built on their public API
/// (their own `perft` plays every leaf).
fn their_perft_bulk(position: other::Position, plies: u8) -> u64 {
    match plies {
        0 => 1,
        1 => position.legal_moves().len() as u64,
        _ => position
            .legal_moves()
            .iter()
            .map(|m| {
                position
                    .play(m)
                    .map_or(0, |child| their_perft_bulk(child, plies - 1))
            })
            .sum(),
    }
}

/// A cheap generator shared by both engines' playouts: the same sequence of
/// choices, so both play games of the same kind (not the same games: their
/// move lists are ordered differently).
struct Lcg(u64);

impl Lcg {
    fn pick(&mut self, len: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (((self.0 >> 32) * len as u64) >> 32) as usize
    }
}

fn playouts_ours(games: u64) -> u64 {
    let mut rng = Lcg(7);
    let mut moves = MoveList::new(Depth::TWO);
    let mut played = 0;
    for _ in 0..games {
        let mut game = Tree2::start();
        loop {
            game.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            game.play_unchecked(moves.as_slice()[rng.pick(moves.len())]);
            played += 1;
        }
        black_box(&game);
    }
    played
}

fn playouts_ours_checked(games: u64) -> u64 {
    let mut rng = Lcg(7);
    let mut moves = MoveList::new(Depth::TWO);
    let mut played = 0;
    for _ in 0..games {
        let mut position = Position::new(Depth::TWO);
        loop {
            position.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            if position
                .play_square(moves.as_slice()[rng.pick(moves.len())])
                .is_ok()
            {
                played += 1;
            }
        }
        black_box(&position);
    }
    played
}

fn playouts_theirs(games: u64) -> u64 {
    let mut rng = Lcg(7);
    theirs::playouts(games, |n| rng.pick(n))
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
}

fn perft_depth_two(c: &mut Criterion) {
    let start = Tree2::start();
    let theirs = other::Position::start();
    let leaves = perft(&start, PLIES);
    // Both engines must count the same tree before their speed is compared.
    assert_eq!(leaves, 4_020_960);
    assert_eq!(perft_without_bulk(&start, PLIES), leaves);
    assert_eq!(other::perft(theirs, PLIES as u8), leaves);
    assert_eq!(their_perft_bulk(theirs, PLIES as u8), leaves);

    let mut group = c.benchmark_group("perft_d2_ply6");
    configure(&mut group);
    group.throughput(Throughput::Elements(leaves));
    group.bench_function("uttt_bulk", |b| b.iter(|| perft(black_box(&start), PLIES)));
    group.bench_function("ai_ultimate_tictactoe_bulk", |b| {
        b.iter(|| their_perft_bulk(black_box(theirs), PLIES as u8))
    });
    group.bench_function("uttt_no_bulk", |b| {
        b.iter(|| perft_without_bulk(black_box(&start), PLIES))
    });
    group.bench_function("ai_ultimate_tictactoe_perft", |b| {
        b.iter(|| other::perft(black_box(theirs), PLIES as u8))
    });
    group.finish();
}

fn make_moves_depth_two(c: &mut Criterion) {
    let mut group = c.benchmark_group("make_moves_d2");
    configure(&mut group);
    let ours = playouts_ours(PLAYOUTS);
    group.throughput(Throughput::Elements(ours));
    group.bench_function("uttt_tree2_play_unchecked", |b| {
        b.iter(|| playouts_ours(black_box(PLAYOUTS)))
    });
    let checked = playouts_ours_checked(PLAYOUTS);
    assert_eq!(checked, ours, "the same choices give the same games");
    group.throughput(Throughput::Elements(checked));
    group.bench_function("uttt_position_play_square", |b| {
        b.iter(|| playouts_ours_checked(black_box(PLAYOUTS)))
    });
    group.throughput(Throughput::Elements(playouts_theirs(PLAYOUTS)));
    group.bench_function("ai_ultimate_tictactoe_play", |b| {
        b.iter(|| playouts_theirs(black_box(PLAYOUTS)))
    });
    group.finish();
}

fn perft_deeper(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft_deeper");
    configure(&mut group);
    group.throughput(Throughput::Elements(4_723_992));
    group.bench_function("uttt_d3_ply5_bulk", |b| {
        b.iter(|| perft(black_box(&Tree3::start()), 5))
    });
    group.throughput(Throughput::Elements(531_216));
    group.bench_function("uttt_d4_ply3_bulk", |b| {
        b.iter(|| perft(black_box(&Tree4::start()), 3))
    });
    group.finish();
}

criterion_group!(benches, perft_depth_two, make_moves_depth_two, perft_deeper);
criterion_main!(benches);
