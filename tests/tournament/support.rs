//! Simulated tournaments and independent checks: everything here recomputes
//! from the raw rounds, without the module's own bookkeeping.

use std::collections::{HashMap, HashSet};

use uttt::rules::Seat;
use uttt::tournament::GameResult;
use uttt::tournament::swiss::{Entrant, Game, Pairing, Round, Swiss};

/// SplitMix64: a small seeded generator, so a failing case replays exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

pub fn entrant(id: &str, rating: f64) -> Entrant {
    Entrant {
        id: id.to_string(),
        rating,
        withdrawn: false,
    }
}

/// `n` entrants `p000`, `p001`, … with random ratings (ties possible).
pub fn random_entrants(n: usize, rng: &mut Rng) -> Vec<Entrant> {
    (0..n)
        .map(|i| entrant(&format!("p{i:03}"), 1200.0 + (rng.below(40) * 25) as f64))
        .collect()
}

/// What happens in a simulated event, in percent.
#[derive(Debug, Clone, Copy)]
pub struct Chances {
    pub draw: u64,
    /// Each active player, after each round.
    pub withdraw: u64,
}

/// Plays random results into a freshly paired round: the higher-rated
/// player wins 60 % of decisive games.
pub fn play(round: &mut Round, ratings: &HashMap<String, f64>, chances: Chances, rng: &mut Rng) {
    for g in &mut round.games {
        g.result = Some(if rng.chance(chances.draw) {
            GameResult::Draw
        } else {
            let x_better = ratings[&g.x] >= ratings[&g.o];
            let favourite_wins = rng.chance(60);
            GameResult::Win(if x_better == favourite_wins {
                Seat::X
            } else {
                Seat::O
            })
        });
    }
}

/// The raw facts of a history, recomputed from the rounds alone.
pub struct Facts {
    pub half_points: HashMap<String, u32>,
    pub met: HashSet<(String, String)>,
    pub seats: HashMap<String, Vec<Seat>>,
    pub byes: HashMap<String, u32>,
}

impl Facts {
    pub fn of(entrants: &[Entrant], rounds: &[Round]) -> Facts {
        let mut f = Facts {
            half_points: entrants.iter().map(|e| (e.id.clone(), 0)).collect(),
            met: HashSet::new(),
            seats: entrants
                .iter()
                .map(|e| (e.id.clone(), Vec::new()))
                .collect(),
            byes: entrants.iter().map(|e| (e.id.clone(), 0)).collect(),
        };
        for r in rounds {
            for g in &r.games {
                f.met.insert((g.x.clone(), g.o.clone()));
                f.met.insert((g.o.clone(), g.x.clone()));
                f.seats.get_mut(&g.x).unwrap().push(Seat::X);
                f.seats.get_mut(&g.o).unwrap().push(Seat::O);
                let (x, o) = match g.result {
                    Some(GameResult::Win(Seat::X)) => (2, 0),
                    Some(GameResult::Win(Seat::O)) => (0, 2),
                    Some(GameResult::Draw) => (1, 1),
                    None => (0, 0),
                };
                *f.half_points.get_mut(&g.x).unwrap() += x;
                *f.half_points.get_mut(&g.o).unwrap() += o;
            }
            if let Some(b) = &r.bye {
                *f.half_points.get_mut(b).unwrap() += 2;
                *f.byes.get_mut(b).unwrap() += 1;
            }
        }
        f
    }

    /// The seat a player must get to avoid a third in a row.
    pub fn must(&self, id: &str) -> Option<Seat> {
        match self.seats[id][..] {
            [.., a, b] if a == b => Some(if b == Seat::X { Seat::O } else { Seat::X }),
            _ => None,
        }
    }

    /// Active players, highest-ranked first (score, rating, id).
    pub fn ranked(&self, entrants: &[Entrant]) -> Vec<String> {
        let mut active: Vec<&Entrant> = entrants.iter().filter(|e| !e.withdrawn).collect();
        active.sort_by(|a, b| {
            self.half_points[&b.id]
                .cmp(&self.half_points[&a.id])
                .then(b.rating.total_cmp(&a.rating))
                .then(a.id.cmp(&b.id))
        });
        active.into_iter().map(|e| e.id.clone()).collect()
    }
}

/// Which pairs an alternative may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// No rematch and no seat streak of three.
    Strict,
    /// No rematch.
    NoRematch,
}

impl Facts {
    pub fn allowed(&self, kind: Allowed, a: &str, b: &str) -> bool {
        if self.met.contains(&(a.to_string(), b.to_string())) {
            return false;
        }
        kind == Allowed::NoRematch || self.must(a).is_none() || self.must(a) != self.must(b)
    }
}

/// Whether the players have a perfect matching, by trying everything.
pub fn brute_perfect(players: &[String], ok: &dyn Fn(&str, &str) -> bool) -> bool {
    fn go(left: &mut Vec<String>, ok: &dyn Fn(&str, &str) -> bool) -> bool {
        let Some(a) = left.pop() else { return true };
        for i in 0..left.len() {
            if ok(&a, &left[i]) {
                let b = left.remove(i);
                if go(left, ok) {
                    left.insert(i, b);
                    left.push(a);
                    return true;
                }
                left.insert(i, b);
            }
        }
        left.push(a);
        false
    }
    players.len().is_multiple_of(2) && go(&mut players.to_vec(), ok)
}

/// Whether the players have a perfect matching (see [`tutte_rank`]).
pub fn tutte_perfect(players: &[String], ok: &dyn Fn(&str, &str) -> bool, rng: &mut Rng) -> bool {
    let n = players.len();
    n.is_multiple_of(2) && tutte_rank(n, &|i, j| ok(&players[i], &players[j]), rng) == n
}

/// Twice the size of a maximum matching of the graph on `0..n`: the rank
/// of its Tutte matrix with random entries modulo a prime (Lovász; too low
/// with probability at most n/p), the best of two independent tries.
#[expect(
    clippy::needless_range_loop,
    reason = "matrix elimination reads best by index"
)]
pub fn tutte_rank(n: usize, ok: &dyn Fn(usize, usize) -> bool, rng: &mut Rng) -> usize {
    const P: u64 = 2_147_483_647;
    let pow = |mut b: u64, mut e: u64| {
        let mut r = 1;
        while e > 0 {
            if e & 1 == 1 {
                r = r * b % P;
            }
            b = b * b % P;
            e >>= 1;
        }
        r
    };
    (0..2)
        .map(|_| {
            let mut m = vec![vec![0u64; n]; n];
            for i in 0..n {
                for j in i + 1..n {
                    if ok(i, j) {
                        let x = 1 + rng.below(P - 1);
                        m[i][j] = x;
                        m[j][i] = P - x;
                    }
                }
            }
            // Gaussian elimination, counting pivots.
            let mut rank = 0;
            for col in 0..n {
                let Some(pivot) = (rank..n).find(|&r| m[r][col] != 0) else {
                    continue;
                };
                m.swap(rank, pivot);
                let inv = pow(m[rank][col], P - 2);
                for r in rank + 1..n {
                    if m[r][col] != 0 {
                        let f = m[r][col] * inv % P;
                        for c in col..n {
                            m[r][c] = (m[r][c] + P - f * m[rank][c] % P) % P;
                        }
                    }
                }
                rank += 1;
            }
            rank
        })
        .max()
        .unwrap_or(0)
}

/// Whether some pairing of the active players (bye by the rule: to a player
/// without one while there is such a player) uses only `kind` pairs.
pub fn alternative_exists(facts: &Facts, ranked: &[String], kind: Allowed, rng: &mut Rng) -> bool {
    let ok = |a: &str, b: &str| facts.allowed(kind, a, b);
    let perfect = |players: &[String], rng: &mut Rng| {
        if players.len() <= 12 {
            brute_perfect(players, &ok)
        } else {
            tutte_perfect(players, &ok, rng)
        }
    };
    if ranked.len().is_multiple_of(2) {
        return perfect(ranked, rng);
    }
    bye_candidates(facts, ranked).iter().any(|c| {
        let rest: Vec<String> = ranked.iter().filter(|p| p != &c).cloned().collect();
        perfect(&rest, rng)
    })
}

/// Who may get the bye, lowest-ranked first.
pub fn bye_candidates(facts: &Facts, ranked: &[String]) -> Vec<String> {
    let fresh: Vec<String> = ranked
        .iter()
        .rev()
        .filter(|p| facts.byes[*p] == 0)
        .cloned()
        .collect();
    if fresh.is_empty() {
        ranked.iter().rev().cloned().collect()
    } else {
        fresh
    }
}

/// The pairing's problems: (rematches, players given a third seat in a row).
pub fn problems(facts: &Facts, pairing: &Pairing) -> (usize, usize) {
    let mut rematches = 0;
    let mut streaks = 0;
    for b in &pairing.boards {
        if facts.met.contains(&(b.x.clone(), b.o.clone())) {
            rematches += 1;
        }
        streaks += usize::from(facts.must(&b.x) == Some(Seat::O));
        streaks += usize::from(facts.must(&b.o) == Some(Seat::X));
    }
    (rematches, streaks)
}

/// Runs a whole event: pairs each round, checks it with `check`, plays it.
/// Returns the entrants (withdrawals applied) and the rounds.
pub fn simulate(
    mut entrants: Vec<Entrant>,
    rounds: usize,
    chances: Chances,
    rng: &mut Rng,
    mut check: impl FnMut(&[Entrant], &[Round], &Pairing, &mut Rng),
) -> (Vec<Entrant>, Vec<Round>) {
    let ratings: HashMap<String, f64> = entrants.iter().map(|e| (e.id.clone(), e.rating)).collect();
    let mut history: Vec<Round> = Vec::new();
    for _ in 0..rounds {
        let swiss = Swiss::new(entrants.clone(), history.clone()).unwrap();
        let pairing = swiss.pair_next_round().unwrap();
        check(&entrants, &history, &pairing, rng);
        let mut round = pairing.to_round();
        play(&mut round, &ratings, chances, rng);
        history.push(round);
        for e in &mut entrants {
            if !e.withdrawn && rng.chance(chances.withdraw) {
                e.withdrawn = true;
            }
        }
    }
    (entrants, history)
}

/// A history not made by the pairing: each round pairs a random 90 % of the
/// players at random, with random results and byes (a player may get
/// several) and seats skewed: a random share of the players take X whenever
/// they can. Seat streaks and lopsided seat counts are everywhere.
pub fn random_history(entrants: &[Entrant], rounds: usize, rng: &mut Rng) -> Vec<Round> {
    let ids: Vec<String> = entrants.iter().map(|e| e.id.clone()).collect();
    // A share of the players lean to X: they take it whenever they can.
    let share = 40 + rng.below(50);
    let leans: HashSet<String> = ids.iter().filter(|_| rng.chance(share)).cloned().collect();
    (0..rounds)
        .map(|_| {
            let mut here: Vec<String> = ids.iter().filter(|_| !rng.chance(10)).cloned().collect();
            for i in (1..here.len()).rev() {
                here.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let bye = (here.len() % 2 == 1).then(|| here.pop()).flatten();
            let games = here
                .chunks(2)
                .map(|p| {
                    let result = match rng.below(3) {
                        0 => GameResult::Draw,
                        1 => GameResult::Win(Seat::X),
                        _ => GameResult::Win(Seat::O),
                    };
                    if leans.contains(&p[1]) && !leans.contains(&p[0]) {
                        game(&p[1], &p[0], result)
                    } else {
                        game(&p[0], &p[1], result)
                    }
                })
                .collect();
            Round { games, bye }
        })
        .collect()
}

/// A finished game, for hand-written histories.
pub fn game(x: &str, o: &str, result: GameResult) -> Game {
    Game {
        x: x.to_string(),
        o: o.to_string(),
        result: Some(result),
    }
}
