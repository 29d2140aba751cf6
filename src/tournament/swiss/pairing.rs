//! Swiss pairing, Dutch-style (RULES.md, "Tournaments").
//!
//! The rules, in the order they give way when they cannot all hold:
//! 1. every active (not withdrawn) player is paired once or has the bye, and
//!    the bye goes to a player who has not had one while any active player has
//!    not (when all have, the lowest-ranked gets a second one);
//! 2. no two players meet twice;
//! 3. nobody gets the same seat in three games in a row (byes skipped);
//! 4. the bye goes to the lowest-ranked player it can go to under 1-3;
//! 5. the Dutch preferences: score groups from the top; players who floated
//!    down into a group meet its highest players first; the top half of a
//!    group meets the bottom half in order; a player left over floats to the
//!    next group (preferring one who did not float down last round, and
//!    meeting one who did not float up last round); pairs whose seat
//!    preferences clash come after those that do not.
//!
//! 1-3 are hard whenever any pairing satisfies them: the pairing keeps a
//! perfect matching of the players still to pair in the graph of allowed
//! pairs (no rematch, no seat streak of three), and takes each Dutch choice
//! only if the rest can still be matched (one augmenting-path search in
//! [`Matcher`]). So the greedy Dutch pass never paints itself into a corner
//! and never backtracks. When no pairing avoids seat streaks, the streak rule
//! becomes a preference; when no pairing avoids rematches (more rounds than
//! the field supports), the fewest possible rematches are made (a maximum
//! matching of the pairs that are not rematches, the rest paired by rank).
//!
//! Seats: a player who had the same seat in their last two games gets the
//! other; then X to the one who had X fewer times; then to the one who had O
//! last; then to the one who had O in the latest game where their seats
//! differed; then, on odd boards, to the higher-ranked player (round 1: board
//! 1's higher-rated player is X, board 2's is O, and so on).
//!
//! Over 400 lines: the pairing rules above are one ordered search over the
//! same score groups; cutting it would spread one rule set over files.

use std::cmp::Ordering;

use super::{Board, Float, Pairing, Swiss};
use crate::rules::Seat;
use crate::tournament::matching::Matcher;

/// Bye candidates tried one by one before the whole set is mapped.
const QUICK_BYE_TRIES: usize = 8;

/// A round's pairs (local indices, lower first) and its bye.
type Paired = (Vec<(usize, usize)>, Option<usize>);

/// Which pairs the matching may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// No rematch, no seat streak of three.
    Strict,
    /// No rematch.
    NoRematch,
}

/// The active players in pairing order (score, then rating, then id): a
/// player's "local" index is their rank in it.
struct Field<'a> {
    swiss: &'a Swiss,
    /// Local index → entrant index.
    entrant: Vec<usize>,
    /// Score in half points.
    score: Vec<u32>,
    /// Previous opponents among the active players (local indices).
    met: Vec<Vec<usize>>,
    /// The seat a player must get to avoid a third in a row.
    must: Vec<Option<Seat>>,
    /// The seat that would continue a player's alternation.
    pref: Vec<Option<Seat>>,
    had_bye: Vec<bool>,
}

impl<'a> Field<'a> {
    fn new(swiss: &'a Swiss) -> Field<'a> {
        let records = &swiss.records;
        let entrants = &swiss.entrants;
        let mut entrant: Vec<usize> = (0..entrants.len())
            .filter(|&i| !entrants[i].withdrawn)
            .collect();
        entrant.sort_by(|&a, &b| {
            records[b]
                .half_points
                .cmp(&records[a].half_points)
                .then(entrants[b].rating.total_cmp(&entrants[a].rating))
                .then_with(|| entrants[a].id.cmp(&entrants[b].id))
        });
        let mut local = vec![usize::MAX; entrants.len()];
        for (l, &e) in entrant.iter().enumerate() {
            local[e] = l;
        }
        let mut field = Field {
            swiss,
            score: Vec::with_capacity(entrant.len()),
            met: Vec::with_capacity(entrant.len()),
            must: Vec::with_capacity(entrant.len()),
            pref: Vec::with_capacity(entrant.len()),
            had_bye: Vec::with_capacity(entrant.len()),
            entrant,
        };
        for &e in &field.entrant {
            let rec = &records[e];
            field.score.push(rec.half_points);
            field.met.push(
                rec.games
                    .iter()
                    .map(|g| local[g.opponent])
                    .filter(|&l| l != usize::MAX)
                    .collect(),
            );
            let must = match rec.games[..] {
                [.., a, b] if a.seat == b.seat => Some(b.seat.other()),
                _ => None,
            };
            field.must.push(must);
            field.pref.push(must.or(rec.seats.last.map(Seat::other)));
            field.had_bye.push(rec.byes > 0);
        }
        field
    }

    fn len(&self) -> usize {
        self.entrant.len()
    }

    fn float(&self, v: usize) -> Float {
        self.swiss.records[self.entrant[v]].float
    }

    fn meetings(&self, a: usize, b: usize) -> usize {
        self.met[a].iter().filter(|&&o| o == b).count()
    }

    fn streak_clash(&self, a: usize, b: usize) -> bool {
        self.must[a].is_some() && self.must[a] == self.must[b]
    }

    fn legal(&self, tier: Tier, a: usize, b: usize) -> bool {
        !self.met[a].contains(&b) && (tier == Tier::NoRematch || !self.streak_clash(a, b))
    }

    /// 0: seat preferences agree; 1: they clash; 2: one would get a third
    /// seat in a row.
    fn class(&self, a: usize, b: usize) -> u8 {
        if self.streak_clash(a, b) {
            2
        } else if self.pref[a].is_some() && self.pref[a] == self.pref[b] {
            1
        } else {
            0
        }
    }

    /// Whether `a` gets X against `b` on board `board` (from 1).
    fn a_gets_x(&self, a: usize, b: usize, board: usize) -> bool {
        match (self.must[a], self.must[b]) {
            (Some(sa), sb) if sb != Some(sa) => return sa == Seat::X,
            (sa, Some(sb)) if sa != Some(sb) => return sb == Seat::O,
            _ => {}
        }
        let (ra, rb) = (
            &self.swiss.records[self.entrant[a]],
            &self.swiss.records[self.entrant[b]],
        );
        match ra.seats.x_order(&rb.seats) {
            Ordering::Less => return true,
            Ordering::Greater => return false,
            Ordering::Equal => {}
        }
        let back = ra.games.iter().rev().zip(rb.games.iter().rev());
        for (ga, gb) in back {
            if ga.seat != gb.seat {
                return ga.seat == Seat::O;
            }
        }
        // Identical histories (round 1): alternate down the boards.
        (a < b) == (board % 2 == 1)
    }
}

pub(super) fn pair(swiss: &Swiss) -> Pairing {
    let field = Field::new(swiss);
    let n = field.len();
    // Bye candidates, lowest-ranked first.
    let mut bye_order: Vec<usize> = (0..n).rev().filter(|&v| !field.had_bye[v]).collect();
    if bye_order.is_empty() {
        bye_order = (0..n).rev().collect();
    }
    let (pairs, bye) = [Tier::Strict, Tier::NoRematch]
        .into_iter()
        .find_map(|tier| dutch(&field, tier, &bye_order))
        .unwrap_or_else(|| fewest_rematches(&field, &bye_order));
    finish(&field, swiss.rounds.len() as u32 + 1, pairs, bye)
}

/// The Dutch pass in `tier`, or `None` when no pairing fits the tier.
fn dutch(field: &Field<'_>, tier: Tier, bye_order: &[usize]) -> Option<Paired> {
    let n = field.len();
    let edge = |a: usize, b: usize| field.legal(tier, a, b);
    // In the strict tier the players who must get one seat can be at most
    // half of those paired (they cannot meet each other): a cheap test
    // before any search, and the usual reason the tier fails.
    let must = |seat| field.must.iter().filter(|&&s| s == Some(seat)).count();
    let (must_x, must_o) = (must(Seat::X), must(Seat::O));
    let balanced = |bye: Option<usize>| {
        tier == Tier::NoRematch || {
            let less = |seat, count: usize| {
                count - usize::from(bye.is_some_and(|c| field.must[c] == Some(seat)))
            };
            let paired = n - usize::from(bye.is_some());
            2 * less(Seat::X, must_x) <= paired && 2 * less(Seat::O, must_o) <= paired
        }
    };
    let even = n.is_multiple_of(2);
    if (even && !balanced(None)) || (!even && !bye_order.iter().any(|&c| balanced(Some(c)))) {
        return None;
    }
    let mut m = Matcher::new(n);
    let free = m.maximize(&edge);
    let bye = if even {
        if free != 0 {
            return None;
        }
        None
    } else {
        if free != 1 {
            return None;
        }
        // Try the lowest-ranked candidates one by one (a short search each
        // in a dense field); past a few, map every possible bye at once.
        let quick = bye_order.iter().copied().take(QUICK_BYE_TRIES);
        let c = match quick
            .clone()
            .find(|&c| balanced(Some(c)) && m.remove_exposable(c, &edge))
        {
            Some(c) => c,
            None => {
                let exposable = m.exposable(&edge);
                bye_order
                    .iter()
                    .copied()
                    .skip(QUICK_BYE_TRIES)
                    .find(|&c| exposable[c] && m.remove_exposable(c, &edge))?
            }
        };
        Some(c)
    };
    let mut pass = Dutch {
        field,
        tier,
        m,
        paired: vec![false; n],
        pairs: Vec::with_capacity(n / 2),
        left: n,
        must_x: field.must.iter().filter(|&&s| s == Some(Seat::X)).count(),
        must_o: field.must.iter().filter(|&&s| s == Some(Seat::O)).count(),
    };
    if let Some(c) = bye {
        pass.take(c);
    }
    pass.run();
    Some((pass.pairs, bye))
}

struct Dutch<'f, 'a> {
    field: &'f Field<'a>,
    tier: Tier,
    /// A perfect matching of the players not yet paired.
    m: Matcher,
    paired: Vec<bool>,
    pairs: Vec<(usize, usize)>,
    /// Players not yet paired, and how many of them must get X / O.
    left: usize,
    must_x: usize,
    must_o: usize,
}

impl Dutch<'_, '_> {
    fn take(&mut self, v: usize) {
        self.paired[v] = true;
        self.left -= 1;
        match self.field.must[v] {
            Some(Seat::X) => self.must_x -= 1,
            Some(Seat::O) => self.must_o -= 1,
            None => {}
        }
    }

    /// A cheap necessary condition in the strict tier: players who must get
    /// X cannot meet each other, so they may be at most half of those left.
    fn seats_can_work(&self, a: usize, b: usize) -> bool {
        if self.tier != Tier::Strict {
            return true;
        }
        let count = |seat| {
            usize::from(self.field.must[a] == Some(seat))
                + usize::from(self.field.must[b] == Some(seat))
        };
        let left = self.left - 2;
        2 * (self.must_x - count(Seat::X)) <= left && 2 * (self.must_o - count(Seat::O)) <= left
    }

    fn try_pair(&mut self, a: usize, b: usize) -> bool {
        let (field, tier) = (self.field, self.tier);
        if !field.legal(tier, a, b) || !self.seats_can_work(a, b) {
            return false;
        }
        if !self.m.try_pair(a, b, &|u, v| field.legal(tier, u, v)) {
            return false;
        }
        self.take(a);
        self.take(b);
        self.pairs.push((a.min(b), a.max(b)));
        true
    }

    /// Pairs `a` with the first candidate that keeps the rest pairable,
    /// taking candidates whose seat preferences agree with `a`'s first.
    fn pick(&mut self, a: usize, candidates: &[usize]) -> bool {
        for class in 0..3 {
            for &b in candidates {
                if b != a
                    && !self.paired[b]
                    && self.field.class(a, b) == class
                    && self.try_pair(a, b)
                {
                    return true;
                }
            }
        }
        false
    }

    fn run(&mut self) {
        let field = self.field;
        let n = field.len();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for v in 0..n {
            if self.paired[v] {
                continue;
            }
            match groups.last_mut() {
                Some(g) if field.score[g[0]] == field.score[v] => g.push(v),
                _ => groups.push(vec![v]),
            }
        }
        let mut carry: Vec<usize> = Vec::new();
        let mut candidates: Vec<usize> = Vec::new();
        let last_group = groups.len().saturating_sub(1);
        for (gi, residents) in groups.into_iter().enumerate() {
            let mut next: Vec<usize> = Vec::new();
            // Players who floated down meet the group's highest players
            // first, those who did not float up last round before those who did.
            for &a in &carry {
                if self.paired[a] {
                    continue;
                }
                candidates.clear();
                candidates.extend(
                    residents
                        .iter()
                        .copied()
                        .filter(|&r| field.float(r) != Float::Up),
                );
                candidates.extend(
                    residents
                        .iter()
                        .copied()
                        .filter(|&r| field.float(r) == Float::Up),
                );
                if !self.pick(a, &candidates) {
                    next.push(a);
                }
            }
            let mut rest: Vec<usize> = residents.into_iter().filter(|&r| !self.paired[r]).collect();
            if gi != last_group && rest.len() % 2 == 1 {
                // The lowest who did not float down last round floats down.
                let f = rest
                    .iter()
                    .rposition(|&r| field.float(r) != Float::Down)
                    .unwrap_or(rest.len() - 1);
                next.push(rest.remove(f));
            }
            let half = rest.len() / 2;
            let (s1, s2) = rest.split_at(half);
            for (i, &a) in s1.iter().enumerate() {
                if self.paired[a] {
                    continue;
                }
                candidates.clear();
                candidates.extend_from_slice(&s2[i..]);
                candidates.extend(s2[..i].iter().rev());
                if self.pick(a, &candidates) {
                    continue;
                }
                // Exchange: meet the lowest of the top half still free.
                candidates.clear();
                candidates.extend(s1[i + 1..].iter().rev());
                self.pick(a, &candidates);
            }
            // Whoever is left pairs within the group if possible, else floats.
            let left: Vec<usize> = rest.iter().copied().filter(|&r| !self.paired[r]).collect();
            for (k, &a) in left.iter().enumerate() {
                if !self.paired[a] && !self.pick(a, &left[k + 1..]) {
                    next.push(a);
                }
            }
            next.sort_unstable();
            carry = next;
        }
        // Still unpaired after the last group: the matching says they can be
        // paired among themselves.
        for k in 0..carry.len() {
            let a = carry[k];
            if self.paired[a] || self.pick(a, &carry[k + 1..]) {
                continue;
            }
            // Unreachable while the matching is right: its partner is among them.
            debug_assert!(false, "the matching left {a} without a partner");
            if let Some(b) = self.m.mate(a) {
                let _ = self.try_pair(a, b);
            }
        }
    }
}

/// When every pairing has a rematch: a maximum matching of the pairs that
/// are not rematches (so the fewest rematches), the rest paired by rank.
fn fewest_rematches(
    field: &Field<'_>,
    bye_order: &[usize],
) -> (Vec<(usize, usize)>, Option<usize>) {
    let n = field.len();
    let edge = |a: usize, b: usize| field.legal(Tier::NoRematch, a, b);
    let bye = (n % 2 == 1).then(|| {
        if n > 64 {
            // Rematches are forced only when the rounds approach the field
            // size; keep this search for the small fields where that happens.
            return bye_order[0];
        }
        let mut best = (usize::MAX, bye_order[0]);
        for &c in bye_order {
            let mut m = Matcher::new(n);
            m.remove(c);
            let free = m.maximize(&edge);
            if free < best.0 {
                best = (free, c);
            }
        }
        best.1
    });
    let mut m = Matcher::new(n);
    if let Some(c) = bye {
        m.remove(c);
    }
    m.maximize(&edge);
    let mut pairs: Vec<(usize, usize)> = (0..n)
        .filter_map(|v| m.mate(v).filter(|&u| u > v).map(|u| (v, u)))
        .collect();
    let free = m.free();
    let mut done = vec![false; n];
    for (k, &a) in free.iter().enumerate() {
        if done[a] {
            continue;
        }
        let best = free[k + 1..]
            .iter()
            .copied()
            .filter(|&b| !done[b])
            .min_by_key(|&b| (field.meetings(a, b), field.class(a, b), b));
        if let Some(b) = best {
            done[a] = true;
            done[b] = true;
            pairs.push((a, b));
        }
    }
    (pairs, bye)
}

/// Orders the boards (highest-ranked player first) and seats each pair.
fn finish(
    field: &Field<'_>,
    round: u32,
    mut pairs: Vec<(usize, usize)>,
    bye: Option<usize>,
) -> Pairing {
    pairs.sort_unstable();
    let id = |v: usize| field.swiss.entrants[field.entrant[v]].id.clone();
    let boards = pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| {
            let (x, o) = if field.a_gets_x(a, b, k + 1) {
                (a, b)
            } else {
                (b, a)
            };
            Board {
                number: k as u32 + 1,
                x: id(x),
                o: id(o),
            }
        })
        .collect();
    Pairing {
        round,
        boards,
        bye: bye.map(id),
    }
}
