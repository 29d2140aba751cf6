//! Property tests for arenas: random pools against the rules (and against
//! trying every pairing on small pools), and whole random arenas played
//! second by second with points recomputed from the games.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use uttt::clock::TimeControl;
use uttt::rules::Seat;
use uttt::tournament::arena::{
    Arena, ArenaPairing, BerserkRefused, Ending, Entrant, Finished, Game, PoolEntry, PoolPass,
    Tally, Waiting, berserk_left, pair_pool, pool_of, standings_of,
};
use uttt::tournament::{GameResult, SeatHistory};

use super::support::{Rng, tutte_rank};

fn random_pool(n: usize, rng: &mut Rng) -> (Vec<PoolEntry>, PoolPass) {
    let ids: Vec<String> = (0..n).map(|i| format!("q{i:02}")).collect();
    let hub = rng.chance(30);
    let pool = ids
        .iter()
        .map(|id| {
            let x_games = rng.below(5) as u32;
            let o_games = rng.below(5) as u32;
            let last = match rng.below(3) {
                0 if x_games > 0 => Some(Seat::X),
                1 if o_games > 0 => Some(Seat::O),
                _ => None,
            };
            // Hub pools: many players just played the same one.
            let hub = hub && rng.chance(60);
            let last_opponent = match if hub { 10 } else { rng.below(10) } {
                10 => Some(ids[0].clone()).filter(|o| o != id),
                0..=5 => Some(ids[rng.below(n as u64) as usize].clone()).filter(|o| o != id),
                6 => Some("outsider".to_string()),
                _ => None,
            };
            PoolEntry {
                id: id.clone(),
                rank: 1 + rng.below(2 * n as u64) as u32,
                seats: SeatHistory {
                    x_games,
                    o_games,
                    last,
                },
                last_opponent,
                waiting_since: rng.below(4) as i64,
            }
        })
        .collect();
    let active_players = if n == 2 && rng.chance(50) {
        2
    } else {
        n + rng.below(3) as usize
    };
    (
        pool,
        PoolPass {
            now: 100,
            ends_at: 1000,
            active_players,
        },
    )
}

fn may_meet(a: &PoolEntry, b: &PoolEntry, pass: &PoolPass) -> bool {
    pass.active_players <= 2
        || (a.last_opponent.as_deref() != Some(&b.id) && b.last_opponent.as_deref() != Some(&a.id))
}

/// (players left waiting, for each of them how many arrived later, sum of
/// rank differences): what the pairing minimises, in that order.
fn cost(pool: &[PoolEntry], paired: &[(usize, usize)]) -> (usize, usize, u64) {
    let mut left: HashSet<usize> = (0..pool.len()).collect();
    let mut distance = 0;
    for &(a, b) in paired {
        left.remove(&a);
        left.remove(&b);
        distance += u64::from(pool[a].rank.abs_diff(pool[b].rank));
    }
    let later = |i: usize| {
        pool.iter()
            .filter(|p| p.waiting_since > pool[i].waiting_since)
            .count()
    };
    (left.len(), left.iter().map(|&i| later(i)).sum(), distance)
}

/// The least cost over every pairing, trying everything.
fn best_cost(pool: &[PoolEntry], pass: &PoolPass) -> (usize, usize, u64) {
    fn go(
        i: usize,
        used: &mut Vec<bool>,
        pairs: &mut Vec<(usize, usize)>,
        pool: &[PoolEntry],
        pass: &PoolPass,
    ) -> (usize, usize, u64) {
        if i == pool.len() {
            return cost(pool, pairs);
        }
        if used[i] {
            return go(i + 1, used, pairs, pool, pass);
        }
        let mut best = go(i + 1, used, pairs, pool, pass);
        used[i] = true;
        for j in i + 1..pool.len() {
            if !used[j] && may_meet(&pool[i], &pool[j], pass) {
                used[j] = true;
                pairs.push((i, j));
                best = best.min(go(i + 1, used, pairs, pool, pass));
                pairs.pop();
                used[j] = false;
            }
        }
        used[i] = false;
        best
    }
    go(0, &mut vec![false; pool.len()], &mut Vec::new(), pool, pass)
}

/// The rules every pool pairing keeps.
fn check_pool_pairing(
    pool: &[PoolEntry],
    pass: &PoolPass,
    pairing: &[ArenaPairing],
) -> Vec<(usize, usize)> {
    let at: HashMap<&str, usize> = pool
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();
    let mut busy = HashSet::new();
    let mut paired = Vec::new();
    for g in pairing {
        let (x, o) = (at[g.x.as_str()], at[g.o.as_str()]);
        assert!(
            busy.insert(x) && busy.insert(o),
            "a player in two games: {pairing:?}"
        );
        let (px, po) = (&pool[x], &pool[o]);
        assert!(
            may_meet(px, po, pass),
            "immediate rematch {g:?} with another pairing possible"
        );
        // X: fewer X, then O last, then the lower-ranked.
        match px.seats.x_order(&po.seats) {
            Ordering::Greater => {
                panic!("X to the one with more X or without O last: {g:?} {px:?} {po:?}")
            }
            Ordering::Equal => assert!(
                (px.rank, &px.id) > (po.rank, &po.id),
                "X to the lower-ranked: {g:?}"
            ),
            Ordering::Less => {}
        }
        paired.push((x.min(o), x.max(o)));
    }
    if pass.now >= pass.ends_at {
        assert!(pairing.is_empty(), "a game started at or after the end");
        return paired;
    }
    // Nobody waits beside a possible opponent.
    let idle: Vec<usize> = (0..pool.len()).filter(|i| !busy.contains(i)).collect();
    for (k, &a) in idle.iter().enumerate() {
        for &b in &idle[k + 1..] {
            assert!(
                !may_meet(&pool[a], &pool[b], pass),
                "{} and {} both left waiting",
                pool[a].id,
                pool[b].id
            );
        }
    }
    paired
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn berserk_halves_whatever_the_clock_shows(
        initial in 10_000i64..=10_800_000,
        spent_per_mille in 0i64..=1000,
        increment in 0i64..=60_000,
    ) {
        let tc = TimeControl::clock(initial, increment).unwrap();
        let left = initial - initial * spent_per_mille / 1000;
        let halved = berserk_left(&tc, Some(left), false, false).unwrap();
        // Half, rounded down: never more than was left, never a flag while time was left.
        prop_assert!(halved * 2 == left || halved * 2 + 1 == left, "{left} -> {halved}");
        prop_assert!(halved <= left);
        prop_assert!(left < 2 || halved > 0);
        prop_assert_eq!(berserk_left(&tc, Some(left), true, false), Err(BerserkRefused::AlreadyMoved));
    }

    #[test]
    fn random_pools_pair_by_the_rules(n in 0usize..=60, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let (pool, pass) = random_pool(n, &mut rng);
        let pairing = pair_pool(&pool, &pass).unwrap();
        let paired = check_pool_pairing(&pool, &pass, &pairing);
        // As many games as any pairing gives.
        let most = tutte_rank(n, &|a, b| may_meet(&pool[a], &pool[b], &pass), &mut rng) / 2;
        prop_assert_eq!(pairing.len(), most, "not the most games: {:?}", pairing);
        if n <= 9 {
            prop_assert_eq!(cost(&pool, &paired), best_cost(&pool, &pass), "not the best pairing: {:?}", pairing);
        }
        let late = PoolPass { now: pass.ends_at, ..pass };
        prop_assert!(pair_pool(&pool, &late).unwrap().is_empty());
    }
}

/// An independent scorer: each player's counted games in the order they
/// ended, with streaks and berserk.
fn recount(entrants: &[Entrant], games: &[Game], ends_at: i64) -> HashMap<String, u32> {
    let mut points: HashMap<String, u32> = entrants.iter().map(|e| (e.id.clone(), 0)).collect();
    for e in entrants {
        let mut results = Vec::new();
        for g in games {
            let Some(f) = g.finished.filter(|f| f.at <= ends_at) else {
                continue;
            };
            let (seat, berserk) = if g.x == e.id {
                (Seat::X, g.x_berserk)
            } else if g.o == e.id {
                (Seat::O, g.o_berserk)
            } else {
                continue;
            };
            let score = match f.result {
                GameResult::Draw => 1,
                GameResult::Win(w) if w == seat => 2,
                GameResult::Win(_) => 0,
            };
            results.push((f.at, score, berserk));
        }
        results.sort_by_key(|r| r.0);
        let mut streak = 0;
        let mut total = 0;
        for (_, score, berserk) in results {
            let fire = streak >= 2;
            total += match score {
                2 => (if fire { 4 } else { 2 }) + u32::from(berserk),
                1 => {
                    if fire {
                        2
                    } else {
                        1
                    }
                }
                _ => 0,
            };
            streak = if score == 2 { streak + 1 } else { 0 };
        }
        points.insert(e.id.clone(), total);
    }
    points
}

/// A whole arena, second by second: players wait, get paired, play games
/// of random length, sometimes withdraw and come back.
fn play_arena(n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let ends_at = 300;
    let mut entrants: Vec<Entrant> = (0..n)
        .map(|i| Entrant {
            id: format!("a{i:02}"),
            rating: 1200.0 + (rng.below(30) * 20) as f64,
            withdrawn: false,
        })
        .collect();
    let rating: HashMap<String, f64> = entrants.iter().map(|e| (e.id.clone(), e.rating)).collect();
    let mut games: Vec<Game> = Vec::new();
    let mut ends: Vec<i64> = Vec::new();
    // Free since; absent while playing.
    let mut free: HashMap<String, i64> = entrants.iter().map(|e| (e.id.clone(), 0)).collect();
    // Kept here, independently of the module: latest opponent, X and O counts.
    let mut last: HashMap<String, String> = HashMap::new();
    let mut seats: HashMap<String, (u32, u32)> = HashMap::new();
    // Running totals, recorded as each game ends (as the server keeps them).
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    let mut now = 0;
    while now <= ends_at || games.iter().any(|g| g.finished.is_none()) {
        for (g, &end) in games.iter_mut().zip(&ends) {
            if g.finished.is_none() && end == now {
                let result = match rng.below(10) {
                    0..=1 => GameResult::Draw,
                    2..=5 => GameResult::Win(Seat::X),
                    _ => GameResult::Win(Seat::O),
                };
                g.finished = Some(Finished { result, at: now });
                for (me, them, seat, berserk, their_rating) in [
                    (&g.x, &g.o, Seat::X, g.x_berserk, g.o_rating),
                    (&g.o, &g.x, Seat::O, g.o_berserk, g.x_rating),
                ] {
                    tallies.entry(me.clone()).or_default().record(&Ending {
                        seat,
                        opponent: them,
                        opponent_rating: their_rating,
                        result,
                        berserk,
                        at: now,
                        ends_at,
                    });
                }
                free.insert(g.x.clone(), now);
                free.insert(g.o.clone(), now);
                last.insert(g.x.clone(), g.o.clone());
                last.insert(g.o.clone(), g.x.clone());
                seats.entry(g.x.clone()).or_default().0 += 1;
                seats.entry(g.o.clone()).or_default().1 += 1;
            }
        }
        for e in &mut entrants {
            if rng.chance(1) {
                e.withdrawn = !e.withdrawn;
            }
        }
        let arena = Arena::new(entrants.clone(), games.clone(), ends_at).unwrap();
        let mut waiting: Vec<Waiting> = free
            .iter()
            .map(|(id, &since)| Waiting {
                id: id.clone(),
                since,
            })
            .collect();
        waiting.sort_by(|a, b| a.id.cmp(&b.id));
        let pool = arena.pool(&waiting).unwrap();
        // The running totals give the standings and the pool the games give.
        let tallied = standings_of(
            entrants
                .iter()
                .map(|e| (e.clone(), tallies.get(&e.id).cloned().unwrap_or_default()))
                .collect(),
        )
        .unwrap();
        assert_eq!(tallied, arena.standings(), "at {now}");
        assert_eq!(pool_of(&tallied, &waiting).unwrap(), pool, "at {now}");
        assert!(
            pool.iter()
                .all(|p| !entrants.iter().any(|e| e.id == p.id && e.withdrawn))
        );
        let pass = PoolPass {
            now,
            ends_at,
            active_players: arena.active_players(),
        };
        let pairing = pair_pool(&pool, &pass).unwrap();
        check_pool_pairing(&pool, &pass, &pairing);
        if now >= ends_at {
            assert!(pairing.is_empty(), "a game started after the end");
        }
        for p in &pairing {
            // Paired players come from the pool, so from the free players:
            // nobody is in two games at once.
            assert!(free.remove(&p.x).is_some() && free.remove(&p.o).is_some());
            let again = last.get(&p.x) == Some(&p.o) || last.get(&p.o) == Some(&p.x);
            assert!(
                !again || pass.active_players <= 2,
                "immediate rematch {p:?}"
            );
            let x_count = |id: &String| seats.get(id).map_or(0, |s| s.0);
            assert!(x_count(&p.x) <= x_count(&p.o), "X to who had X less: {p:?}");
            games.push(Game {
                x: p.x.clone(),
                o: p.o.clone(),
                x_rating: rating[&p.x],
                o_rating: rating[&p.o],
                x_berserk: rng.chance(20),
                o_berserk: rng.chance(20),
                finished: None,
            });
            ends.push(now + 1 + rng.below(25) as i64);
        }
        now += 1;
    }
    // Points: the sum of the games' points, and recomputed independently.
    let arena = Arena::new(entrants.clone(), games.clone(), ends_at).unwrap();
    let sheet = arena.game_points();
    let standings = arena.standings();
    let expected = recount(&entrants, &games, ends_at);
    for s in &standings {
        let from_sheet: u32 = sheet
            .iter()
            .map(|gp| {
                let g = &games[gp.game];
                if g.x == s.id {
                    gp.x.unwrap_or(0)
                } else if g.o == s.id {
                    gp.o.unwrap_or(0)
                } else {
                    0
                }
            })
            .sum();
        assert_eq!(s.points, from_sheet, "{s:?}");
        assert_eq!(s.points, expected[&s.id], "{s:?}");
    }
    for gp in &sheet {
        let f = games[gp.game].finished.unwrap();
        assert_eq!(gp.x.is_some(), f.at <= ends_at);
        assert_eq!(gp.o.is_some(), f.at <= ends_at);
    }
    for pair in standings.windows(2) {
        assert!(pair[0].points >= pair[1].points);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_arenas_score_every_game_and_pair_by_the_rules(n in 2usize..=40, seed in any::<u64>()) {
        play_arena(n, seed);
    }
}
