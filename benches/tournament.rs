//! Speed of the tournament core (no database, no broker):
//! - Swiss: pairing each round of simulated events (checking the entrants and
//!   rounds, then pairing: what the service will call), with a table of the
//!   CPU time of every round and criterion on the worst one. Events: 1,000
//!   players over 10 rounds with random results, and with the favourites
//!   always winning; an adversarial 1,000-player field where most players
//!   must take O (so the seat-streak rule has to give way); 40 players over
//!   30 rounds (few legal opponents left, rematches forced); 10,000 players.
//! - Arena: one pairing pass over a pool of 2,000 players, alone and with the
//!   standings it ranks by (20,000 games).
//!
//! Run with `cargo bench --bench tournament`.

// A bench that cannot set itself up has nothing to measure: it stops there.
#![expect(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use uttt::rules::Seat;
use uttt::tournament::GameResult;
use uttt::tournament::arena::{self, Arena, PoolPass, Waiting};
use uttt::tournament::swiss::{Entrant, Game, Round, Swiss};

/// SplitMix64, so every run simulates the same events.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// CPU time of this thread, in milliseconds.
fn cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn entrants(n: usize, rng: &mut Rng) -> Vec<Entrant> {
    (0..n)
        .map(|i| Entrant {
            id: format!("player{i:05}"),
            rating: 1000.0 + rng.below(1500) as f64,
            withdrawn: false,
        })
        .collect()
}

/// How simulated games end.
#[derive(Clone, Copy)]
enum Results {
    /// 10 % draws, the rest either way.
    Random,
    /// The higher-rated player always wins.
    Favourites,
}

/// Plays `rounds` rounds, each paired by the module; 0.5 % of the players
/// withdraw after each round.
fn simulate(
    mut field: Vec<Entrant>,
    rounds: usize,
    results: Results,
    rng: &mut Rng,
) -> (Vec<Entrant>, Vec<Round>) {
    let rating: std::collections::HashMap<String, f64> =
        field.iter().map(|e| (e.id.clone(), e.rating)).collect();
    let mut history = Vec::new();
    for _ in 0..rounds {
        let pairing = Swiss::new(field.clone(), history.clone())
            .unwrap()
            .pair_next_round()
            .unwrap();
        let mut round = pairing.to_round();
        for g in &mut round.games {
            g.result = Some(match results {
                Results::Random if rng.below(10) == 0 => GameResult::Draw,
                Results::Random => {
                    GameResult::Win(if rng.below(2) == 0 { Seat::X } else { Seat::O })
                }
                Results::Favourites => GameResult::Win(if rating[&g.x] >= rating[&g.o] {
                    Seat::X
                } else {
                    Seat::O
                }),
            });
        }
        history.push(round);
        for e in &mut field {
            e.withdrawn |= rng.below(200) == 0;
        }
    }
    (field, history)
}

/// Pairs the next round from scratch, as the service will.
fn pair(field: &[Entrant], history: &[Round]) -> usize {
    let swiss = Swiss::new(field.to_vec(), history.to_vec()).unwrap();
    swiss.pair_next_round().unwrap().boards.len()
}

/// Prints the median CPU time of pairing every round; returns the worst
/// round (from 1).
fn table(name: &str, field: &[Entrant], history: &[Round]) -> usize {
    println!("{name}: CPU ms per round (median of 11), checking + pairing");
    let mut worst = (0.0, 1);
    for r in 0..=history.len() {
        let mut times: Vec<f64> = (0..11)
            .map(|_| {
                let start = cpu_ms();
                black_box(pair(field, &history[..r]));
                cpu_ms() - start
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[5];
        println!("  round {:>2}: {median:8.2}", r + 1);
        if median > worst.0 {
            worst = (median, r + 1);
        }
    }
    println!("  worst: round {} ({:.2} ms)", worst.1, worst.0);
    worst.1
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
}

/// Tables every round of an event and benchmarks its worst round.
fn event(
    c: &mut Criterion,
    name: &str,
    field: Vec<Entrant>,
    played: usize,
    results: Results,
    rng: &mut Rng,
) {
    let (field, history) = simulate(field, played, results, rng);
    let worst = table(name, &field, &history);
    let mut group = c.benchmark_group("swiss");
    configure(&mut group);
    group.bench_function(format!("{name}/worst_round_{worst}"), |b| {
        b.iter(|| pair(black_box(&field), black_box(&history[..worst - 1])))
    });
    group.finish();
}

fn swiss_events(c: &mut Criterion) {
    let mut rng = Rng(2024);
    let field = entrants(1_000, &mut rng);
    event(
        c,
        "1000_players_random",
        field.clone(),
        9,
        Results::Random,
        &mut rng,
    );
    event(
        c,
        "1000_players_favourites",
        field,
        9,
        Results::Favourites,
        &mut rng,
    );
    let field = entrants(40, &mut rng);
    event(
        c,
        "40_players_30_rounds",
        field,
        29,
        Results::Random,
        &mut rng,
    );
}

/// 1,200 players, two rounds: players 0..600 had X twice against 600..1200;
/// then 200 of those who had O twice withdraw. Of the 1,000 left, 600 must
/// take O next (more than half), so no pairing avoids a third seat in a
/// row: the seat count shows that at once, and the round is paired with
/// the streak rule as a preference.
fn adversarial_seats(c: &mut Criterion) {
    let mut rng = Rng(7);
    let mut field = entrants(1_200, &mut rng);
    let id = |i: usize| format!("player{i:05}");
    let history: Vec<Round> = (0..2)
        .map(|r| Round {
            games: (0..600)
                .map(|i| Game {
                    x: id(i),
                    o: id(600 + (i + r) % 600),
                    result: Some(GameResult::Draw),
                })
                .collect(),
            bye: None,
        })
        .collect();
    for e in &mut field[1_000..] {
        e.withdrawn = true;
    }
    table("1000_players_most_must_take_o", &field, &history);
    let mut group = c.benchmark_group("swiss");
    configure(&mut group);
    group.bench_function("1000_players_most_must_take_o/round_3", |b| {
        b.iter(|| pair(black_box(&field), black_box(&history)))
    });
    group.finish();
}

fn swiss_10000(c: &mut Criterion) {
    let mut rng = Rng(10_000);
    let (field, history) = simulate(entrants(10_000, &mut rng), 9, Results::Random, &mut rng);
    let mut group = c.benchmark_group("swiss");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    group.bench_function("10000_players_random/round_10", |b| {
        b.iter(|| pair(black_box(&field), black_box(&history)))
    });
    group.finish();
}

/// 2,000 players with ten games each behind them, all waiting.
fn arena_pool(c: &mut Criterion) {
    let mut rng = Rng(99);
    let n = 2_000;
    let players: Vec<arena::Entrant> = (0..n)
        .map(|i| arena::Entrant {
            id: format!("player{i:05}"),
            rating: 1000.0 + rng.below(1500) as f64,
            withdrawn: false,
        })
        .collect();
    let mut games = Vec::new();
    for round in 0..10 {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (k, p) in order.chunks(2).enumerate() {
            let result = match rng.below(10) {
                0 => GameResult::Draw,
                1..=5 => GameResult::Win(Seat::X),
                _ => GameResult::Win(Seat::O),
            };
            games.push(arena::Game {
                x: players[p[0]].id.clone(),
                o: players[p[1]].id.clone(),
                x_rating: players[p[0]].rating,
                o_rating: players[p[1]].rating,
                x_berserk: rng.below(5) == 0,
                o_berserk: rng.below(5) == 0,
                finished: Some(arena::Finished {
                    result,
                    at: round * 60_000 + k as i64,
                }),
            });
        }
    }
    let arena = Arena::new(players.clone(), games.clone(), 3_600_000).unwrap();
    let waiting: Vec<Waiting> = players
        .iter()
        .map(|p| Waiting {
            id: p.id.clone(),
            since: 600_000 + rng.below(60_000) as i64,
        })
        .collect();
    let pool = arena.pool(&waiting).unwrap();
    let pass = PoolPass {
        now: 700_000,
        ends_at: 3_600_000,
        active_players: n,
    };
    let start = cpu_ms();
    let pairs = arena::pair_pool(&pool, &pass).unwrap();
    println!(
        "arena pool of {n}: {} pairs in {:.2} ms of CPU (first pass)",
        pairs.len(),
        cpu_ms() - start
    );
    let mut group = c.benchmark_group("arena");
    configure(&mut group);
    group.bench_function("pool_2000/pair", |b| {
        b.iter(|| arena::pair_pool(black_box(&pool), black_box(&pass)).unwrap())
    });
    group.bench_function("pool_2000/standings_and_pair", |b| {
        b.iter(|| {
            let arena = Arena::new(players.clone(), games.clone(), 3_600_000).unwrap();
            let pool = arena.pool(black_box(&waiting)).unwrap();
            arena::pair_pool(&pool, &pass).unwrap()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    swiss_events,
    adversarial_seats,
    swiss_10000,
    arena_pool
);
criterion_main!(benches);
