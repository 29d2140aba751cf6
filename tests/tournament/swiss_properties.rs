//! Property tests over random Swiss tournaments: random fields, results,
//! draws and withdrawals; every round's pairing is checked against RULES.md
//! with checks that recompute everything from the raw rounds (brute force on
//! small fields, the Tutte matrix on large ones).

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use uttt::rules::Seat;
use uttt::tournament::GameResult;
use uttt::tournament::swiss::{Entrant, Pairing, Round, Swiss};

use super::support::{
    self, Allowed, Chances, Facts, Rng, alternative_exists, brute_perfect, bye_candidates,
    problems, random_entrants, simulate,
};

/// Everything RULES.md says about one round's pairing.
fn check_round(entrants: &[Entrant], history: &[Round], pairing: &Pairing, rng: &mut Rng) {
    let facts = Facts::of(entrants, history);
    let ranked = facts.ranked(entrants);
    let round = history.len() + 1;
    let ctx = format!("round {round}, {} active: {pairing:?}", ranked.len());

    // Everyone active plays once or has the bye; nobody else is paired.
    let mut seen = HashSet::new();
    for (k, b) in pairing.boards.iter().enumerate() {
        assert_eq!(b.number as usize, k + 1, "{ctx}");
        assert!(
            seen.insert(b.x.clone()) && seen.insert(b.o.clone()),
            "plays twice: {ctx}"
        );
    }
    if let Some(bye) = &pairing.bye {
        assert!(seen.insert(bye.clone()), "bye and a game: {ctx}");
    }
    let active: HashSet<String> = ranked.iter().cloned().collect();
    assert_eq!(seen, active, "exactly the active players: {ctx}");
    assert_eq!(pairing.bye.is_some(), ranked.len() % 2 == 1, "{ctx}");
    assert_eq!(pairing.round as usize, round);

    // Byes go to distinct players while any active player has had none.
    if let Some(bye) = &pairing.bye
        && ranked.iter().any(|p| facts.byes[p] == 0)
    {
        assert_eq!(facts.byes[bye], 0, "second bye: {ctx}");
    }

    // No rematch and no third seat in a row while an alternative exists.
    let (rematches, streaks) = problems(&facts, pairing);
    if ranked.len() <= 12 {
        exhaustive(&facts, &ranked, pairing, rematches, streaks, rng, &ctx);
    } else {
        if rematches > 0 {
            assert!(
                !alternative_exists(&facts, &ranked, Allowed::NoRematch, rng),
                "avoidable rematch: {ctx}"
            );
        }
        if streaks > 0 {
            assert!(
                !alternative_exists(&facts, &ranked, Allowed::Strict, rng),
                "avoidable streak: {ctx}"
            );
        }
    }
    // Dirac: with every player short of at most round-1 opponents among m,
    // a rematch-free pairing exists while round ≤ m/2.
    let m = ranked.len() - ranked.len() % 2;
    if round <= m / 2 {
        assert_eq!(rematches, 0, "{ctx}");
    }

    // Seats: the streak rule, then fewer X, then O last.
    for b in &pairing.boards {
        let (mx, mo) = (facts.must(&b.x), facts.must(&b.o));
        if mx != mo {
            assert!(
                mx != Some(Seat::O) && mo != Some(Seat::X),
                "seat streak rule: {b:?} {ctx}"
            );
            continue;
        }
        let count_x = |p: &str| facts.seats[p].iter().filter(|&&s| s == Seat::X).count();
        let last_o = |p: &str| facts.seats[p].last() == Some(&Seat::O);
        assert!(
            count_x(&b.x) <= count_x(&b.o),
            "fewer X gets X: {b:?} {ctx}"
        );
        if count_x(&b.x) == count_x(&b.o) {
            assert!(last_o(&b.x) || !last_o(&b.o), "O last gets X: {b:?} {ctx}");
        }
    }
}

/// Small fields: compare with the best pairing found by trying everything.
fn exhaustive(
    facts: &Facts,
    ranked: &[String],
    pairing: &Pairing,
    rematches: usize,
    streaks: usize,
    rng: &mut Rng,
    ctx: &str,
) {
    let strict = alternative_exists(facts, ranked, Allowed::Strict, rng);
    let no_rematch = alternative_exists(facts, ranked, Allowed::NoRematch, rng);
    let kind = if strict {
        assert_eq!((rematches, streaks), (0, 0), "{ctx}");
        Some(Allowed::Strict)
    } else if no_rematch {
        assert_eq!(rematches, 0, "{ctx}");
        Some(Allowed::NoRematch)
    } else {
        assert_eq!(
            rematches,
            fewest_rematches(facts, ranked),
            "fewest rematches: {ctx}"
        );
        None
    };
    // The bye goes to the lowest-ranked player it can go to.
    if let (Some(kind), Some(bye)) = (kind, &pairing.bye) {
        let ok = |a: &str, b: &str| facts.allowed(kind, a, b);
        let expected = bye_candidates(facts, ranked).into_iter().find(|c| {
            let rest: Vec<String> = ranked.iter().filter(|p| p != &c).cloned().collect();
            brute_perfect(&rest, &ok)
        });
        assert_eq!(Some(bye), expected.as_ref(), "lowest-ranked bye: {ctx}");
    }
}

/// The fewest rematches of any pairing (bye by the rule), trying everything.
fn fewest_rematches(facts: &Facts, ranked: &[String]) -> usize {
    fn go(left: &mut Vec<String>, facts: &Facts) -> usize {
        let Some(a) = left.pop() else { return 0 };
        let mut best = usize::MAX;
        for i in 0..left.len() {
            let b = left.remove(i);
            let cost = usize::from(facts.met.contains(&(a.clone(), b.clone())));
            best = best.min(cost + go(left, facts));
            left.insert(i, b);
        }
        left.push(a);
        best
    }
    if ranked.len().is_multiple_of(2) {
        return go(&mut ranked.to_vec(), facts);
    }
    bye_candidates(facts, ranked)
        .iter()
        .map(|c| {
            go(
                &mut ranked.iter().filter(|p| p != &c).cloned().collect(),
                facts,
            )
        })
        .min()
        .unwrap_or(0)
}

/// Scores and tiebreaks recomputed from the games alone.
fn check_standings(entrants: &[Entrant], rounds: &[Round]) {
    let facts = Facts::of(entrants, rounds);
    let standings = Swiss::new(entrants.to_vec(), rounds.to_vec())
        .unwrap()
        .standings();
    assert_eq!(standings.len(), entrants.len());
    let score = |p: &str| f64::from(facts.half_points[p]) / 2.0;
    let mut buchholz: HashMap<&str, f64> = HashMap::new();
    let mut sb: HashMap<&str, f64> = HashMap::new();
    let mut wdl: HashMap<&str, [u32; 3]> = HashMap::new();
    for e in entrants {
        let bye_bonus = f64::from(facts.byes[&e.id]) * score(&e.id);
        buchholz.insert(&e.id, bye_bonus);
        sb.insert(&e.id, 0.0);
        wdl.insert(&e.id, [0; 3]);
    }
    for g in rounds.iter().flat_map(|r| &r.games) {
        let Some(result) = g.result else { continue };
        for (me, them, seat) in [(&g.x, &g.o, Seat::X), (&g.o, &g.x, Seat::O)] {
            *buchholz.get_mut(me.as_str()).unwrap() += score(them);
            let (gain, slot) = match result {
                GameResult::Draw => (0.5, 1),
                GameResult::Win(w) if w == seat => (1.0, 0),
                GameResult::Win(_) => (0.0, 2),
            };
            *sb.get_mut(me.as_str()).unwrap() += gain * score(them);
            wdl.get_mut(me.as_str()).unwrap()[slot] += 1;
        }
    }
    for s in &standings {
        let [w, d, l] = wdl[s.id.as_str()];
        // Every score is the sum of the player's results (and byes).
        let byes = facts.byes[&s.id];
        assert_eq!(
            s.score,
            f64::from(w) + 0.5 * f64::from(d) + f64::from(byes),
            "{s:?}"
        );
        assert_eq!(s.score, score(&s.id));
        assert_eq!(
            (s.wins, s.draws, s.losses, s.games, s.byes),
            (w, d, l, w + d + l, byes),
            "{s:?}"
        );
        assert_eq!(s.buchholz, buchholz[s.id.as_str()], "Buchholz of {s:?}");
        assert_eq!(
            s.sonneborn_berger,
            sb[s.id.as_str()],
            "Sonneborn-Berger of {s:?}"
        );
        let e = entrants.iter().find(|e| e.id == s.id).unwrap();
        assert_eq!((s.withdrawn, s.rating), (e.withdrawn, e.rating));
    }
    for (k, pair) in standings.windows(2).enumerate() {
        let key = |s: &uttt::tournament::swiss::Standing| {
            (s.score, s.buchholz, s.sonneborn_berger, s.rating)
        };
        let (a, b) = (key(&pair[0]), key(&pair[1]));
        assert!(a >= b, "standings order at {k}: {pair:?}");
        assert_eq!(
            pair[1].rank == pair[0].rank,
            a == b,
            "shared rank only on a full tie: {pair:?}"
        );
        if a != b {
            assert_eq!(pair[1].rank as usize, k + 2);
        }
    }
}

fn run(n: usize, rounds: usize, seed: u64, draw: u64, withdraw: u64) {
    let mut rng = Rng::new(seed);
    let entrants = random_entrants(n, &mut rng);
    let chances = Chances { draw, withdraw };
    let (entrants, history) = simulate(entrants, rounds, chances, &mut rng, check_round);
    check_standings(&entrants, &history);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// 2–200 players, 1–11 rounds.
    #[test]
    fn random_tournaments_pair_by_the_rules(
        n in 2usize..=200,
        rounds in 1usize..=11,
        seed in any::<u64>(),
        draw in 0u64..=40,
        withdraw in 0u64..=6,
    ) {
        run(n, rounds, seed, draw, withdraw);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Small fields played for as many rounds as they have players and
    /// more: few legal opponents, forced rematches, every player with a bye;
    /// checked against the best pairing found by trying everything.
    #[test]
    fn small_fields_pair_as_well_as_trying_everything(
        n in 2usize..=13,
        extra in 0usize..=4,
        seed in any::<u64>(),
        draw in 0u64..=50,
        withdraw in 0u64..=10,
    ) {
        run(n, (n + extra).min(30), seed, draw, withdraw);
    }

    /// Histories not made by the pairing (random opponents, seats and byes):
    /// seat streaks everywhere, so the streak rule often has to give way,
    /// and the pairing must find the pairings that avoid it when they exist.
    #[test]
    fn random_histories_pair_by_the_rules(
        n in 2usize..=120,
        rounds in 0usize..=8,
        seed in any::<u64>(),
        withdraw in 0u64..=30,
    ) {
        let mut rng = Rng::new(seed);
        let mut entrants = random_entrants(n, &mut rng);
        let history = support::random_history(&entrants, rounds, &mut rng);
        // Withdrawing mostly players who had O twice leaves a field where
        // many must get O: sometimes more than half, and then somebody must
        // get a third seat in a row however the round is paired.
        let facts = Facts::of(&entrants, &history);
        for e in &mut entrants {
            let odds = if facts.must(&e.id) == Some(Seat::X) { 3 * withdraw } else { withdraw / 2 };
            e.withdrawn = rng.chance(odds);
        }
        let pairing = Swiss::new(entrants.clone(), history.clone()).unwrap().pair_next_round().unwrap();
        check_round(&entrants, &history, &pairing, &mut rng);
    }

    /// The order of the entrants does not change the pairing.
    #[test]
    fn the_pairing_does_not_depend_on_the_input_order(n in 2usize..=40, rounds in 0usize..=8, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let entrants = random_entrants(n, &mut rng);
        let chances = Chances { draw: 20, withdraw: 3 };
        let (entrants, history) = simulate(entrants, rounds, chances, &mut rng, |_, _, _, _| {});
        let mut shuffled = entrants.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let a = Swiss::new(entrants, history.clone()).unwrap().pair_next_round().unwrap();
        let b = Swiss::new(shuffled, history).unwrap().pair_next_round().unwrap();
        prop_assert_eq!(a, b);
    }
}

/// A big event played through: the shape the benchmark times.
#[test]
fn a_1000_player_event_pairs_ten_rounds_by_the_rules() {
    run(1000, 10, 2024, 10, 1);
}
