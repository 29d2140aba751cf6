//! Arena tournaments (RULES.md, "Tournaments", Arena): free players are
//! paired continuously until the end time.
//!
//! - Scoring: [`score_game`] (win 2, draw 1, loss 0; after two wins in a row a
//!   player is on fire: wins 4 and draws 2 until a game that is not a win; a
//!   berserk win scores one more). Games that end after the arena's end time
//!   score nothing and do not count in the standings at all (they still count
//!   for ratings, which are not this module's business).
//! - Standings: [`Arena::standings`], by points, then performance, then rating,
//!   recomputed from the games; or [`standings_of`] from each player's running
//!   [`Tally`] (what the server keeps per entrant, updated by [`Tally::record`]
//!   as each game ends), which gives the same lines.
//! - Pairing: [`pair_pool`] pairs the players waiting in the pool; build its
//!   input with [`Arena::pool`] or [`pool_of`].
//! - Berserk: [`berserk_left`].
//!
//! Over 400 lines: one concept (an arena's pool, pairing, scoring and berserk)
//! whose parts share the pool's private state; split it when a second pairing
//! rule arrives.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::matching::Matcher;
use super::{GameResult, Outcome, PlayerId, SeatHistory};
use crate::clock::TimeControl;
use crate::rules::Seat;
use crate::time::Millis;

/// A player registered in the arena.
#[derive(Debug, Clone, PartialEq)]
pub struct Entrant {
    /// The player's id.
    pub id: PlayerId,
    /// The player's rating now (the last tiebreak, and the order of players
    /// without games).
    pub rating: f64,
    /// Withdrawn (or paused): not paired while set; may come back.
    pub withdrawn: bool,
}

/// How and when a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// The result.
    pub result: GameResult,
    /// When it ended (epoch milliseconds).
    pub at: Millis,
}

/// One arena game.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    /// The player seated X.
    pub x: PlayerId,
    /// The player seated O.
    pub o: PlayerId,
    /// X's rating when the game started (for O's performance).
    pub x_rating: f64,
    /// O's rating when the game started (for X's performance).
    pub o_rating: f64,
    /// X went berserk.
    pub x_berserk: bool,
    /// O went berserk.
    pub o_berserk: bool,
    /// `None` while the game is being played.
    pub finished: Option<Finished>,
}

/// Points for a win, a draw and a loss, before streaks and berserk.
pub const POINTS: [u32; 3] = [2, 1, 0];
/// Wins in a row that put a player on fire.
pub const FIRE_AFTER: u32 = 2;

/// What one game scored for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scored {
    /// Points the game scored.
    pub points: u32,
    /// Wins in a row after the game.
    pub streak: u32,
}

/// Scores one game for a player who had `streak` wins in a row before it.
#[must_use]
pub fn score_game(streak: u32, outcome: Outcome, berserk: bool) -> Scored {
    let fire = if streak >= FIRE_AFTER { 2 } else { 1 };
    match outcome {
        Outcome::Win => Scored {
            points: POINTS[0] * fire + u32::from(berserk),
            streak: streak + 1,
        },
        Outcome::Draw => Scored {
            points: POINTS[1] * fire,
            streak: 0,
        },
        Outcome::Loss => Scored {
            points: POINTS[2],
            streak: 0,
        },
    }
}

/// One player's running arena totals: everything the standings and the
/// pool need, kept per entrant so a pairing pass never rereads the games.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Tournament points.
    pub points: u32,
    /// Games that count (finished by the end time).
    pub games: u32,
    /// Games won (that count).
    pub wins: u32,
    /// Games drawn (that count).
    pub draws: u32,
    /// Games lost (that count).
    pub losses: u32,
    /// Counted games in which the player went berserk.
    pub berserks: u32,
    /// Wins in a row at the end of the counted games.
    pub streak: u32,
    /// Sum over the counted games of the opponent's rating ± 500.
    pub performance_sum: f64,
    /// Seats of all finished games.
    pub seats: SeatHistory,
    /// The opponent of the latest finished game.
    pub last_opponent: Option<PlayerId>,
    /// When the latest finished game ended.
    pub last_end: Option<Millis>,
}

/// One finished game as one of its players saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ending<'a> {
    /// The player's seat.
    pub seat: Seat,
    /// The opponent.
    pub opponent: &'a str,
    /// The opponent's rating (for performance).
    pub opponent_rating: f64,
    /// The game's result.
    pub result: GameResult,
    /// The player went berserk.
    pub berserk: bool,
    /// When it ended.
    pub at: Millis,
    /// The arena's end time: a game that ended later scores nothing.
    pub ends_at: Millis,
}

impl Tally {
    /// Records the player's next finished game (games must come in the order
    /// they ended, as one player's games do); returns the points it scored,
    /// `None` when it ended after the arena's end and does not count.
    pub fn record(&mut self, e: &Ending<'_>) -> Option<u32> {
        self.seats.record(e.seat);
        self.last_opponent = Some(e.opponent.to_owned());
        self.last_end = Some(self.last_end.map_or(e.at, |t| t.max(e.at)));
        if e.at > e.ends_at {
            return None;
        }
        let outcome = e.result.for_seat(e.seat);
        let scored = score_game(self.streak, outcome, e.berserk);
        self.streak = scored.streak;
        self.points += scored.points;
        self.games += 1;
        self.berserks += u32::from(e.berserk);
        let bonus = match outcome {
            Outcome::Win => {
                self.wins += 1;
                500.0
            }
            Outcome::Draw => {
                self.draws += 1;
                0.0
            }
            Outcome::Loss => {
                self.losses += 1;
                -500.0
            }
        };
        self.performance_sum += e.opponent_rating + bonus;
        Some(scored.points)
    }
}

/// Why a berserk was refused (API.md: 409 `berserk_not_allowed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BerserkRefused {
    /// Berserk needs a clock time control.
    #[error("berserk needs a clock time control")]
    NoClock,
    /// The player has already moved.
    #[error("berserk is allowed only before your first move")]
    AlreadyMoved,
    /// The player is already berserk.
    #[error("already berserk")]
    AlreadyBerserk,
}

/// The time a player who goes berserk has left: half of what their clock
/// shows now, `left` (`None`: untouched, the initial bank). Their clock may
/// be running (it runs from the match's start for X, and O may go berserk on
/// their first turn), so what it shows is halved, not the initial bank: one
/// who thought for 100 s of 3 minutes keeps 40 s, rather than losing on
/// time at once.
///
/// RULES.md says berserk halves the player's own clock and nothing more, so
/// the increment stays: the match keeps one time control for both seats
/// (Lichess also drops the berserk player's increment; we do not).
///
/// # Errors
/// Not a clock control, the player has moved, or is already berserk.
pub fn berserk_left(
    time_control: &TimeControl,
    left: Option<Millis>,
    has_moved: bool,
    already_berserk: bool,
) -> Result<Millis, BerserkRefused> {
    let TimeControl::Clock { initial_ms, .. } = *time_control else {
        return Err(BerserkRefused::NoClock);
    };
    if already_berserk {
        return Err(BerserkRefused::AlreadyBerserk);
    }
    if has_moved {
        return Err(BerserkRefused::AlreadyMoved);
    }
    Ok(left.unwrap_or(initial_ms).max(0) / 2)
}

/// Why arena input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArenaError {
    /// Two entrants share an id.
    #[error("entrant {0} is listed twice")]
    DuplicateEntrant(PlayerId),
    /// A rating is not a finite number.
    #[error("{0} has a rating that is not a finite number")]
    InvalidRating(PlayerId),
    /// A game or the pool names a player who is not an entrant.
    #[error("{0} is not an entrant")]
    UnknownPlayer(PlayerId),
    /// A game seats a player against themself.
    #[error("{0} is seated on both sides of a game")]
    SelfGame(PlayerId),
    /// A player is in the pool twice.
    #[error("{0} is in the pool twice")]
    DuplicateInPool(PlayerId),
}

/// One line of the arena standings (API.md `GET /tournaments/{id}/standings`).
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// 1 for the leader; players tied on points, performance and rating share
    /// a rank (1, 2, 2, 4).
    pub rank: u32,
    /// The player.
    pub id: PlayerId,
    /// The entrant's rating, as given.
    pub rating: f64,
    /// Tournament points.
    pub points: u32,
    /// Games that count (finished by the end time).
    pub games: u32,
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
    /// Games in which the player went berserk.
    pub berserks: u32,
    /// Withdrawn (or paused) now.
    pub withdrawn: bool,
    /// Average of (opponent's rating + 500 for a win, − 500 for a loss, + 0
    /// for a draw) over the games that count; `None` without games.
    pub performance: Option<f64>,
    /// Wins in a row at the end of the counted games.
    pub streak: u32,
    /// On fire: the next win scores double.
    pub fire: bool,
    /// Seats of all finished games (for the seat rule).
    pub seats: SeatHistory,
    /// The opponent of the latest finished game (for the rematch rule).
    pub last_opponent: Option<PlayerId>,
}

/// Points each player scored in one game (`None`: the game does not count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GamePoints {
    /// The index of the game in the input.
    pub game: usize,
    /// X's points.
    pub x: Option<u32>,
    /// O's points.
    pub o: Option<u32>,
}

/// An arena's entrants and games, checked.
#[derive(Debug, Clone)]
pub struct Arena {
    entrants: Vec<Entrant>,
    games: Vec<Game>,
    ends_at: Millis,
    /// `(x, o)` entrant indices per game.
    seats: Vec<(usize, usize)>,
}

impl Arena {
    /// Checks the entrants and the games (any order) of an arena that ends
    /// at `ends_at`.
    ///
    /// # Errors
    /// Duplicate entrants, a rating that is not finite, a game naming an
    /// unknown player or the same player twice.
    pub fn new(
        entrants: Vec<Entrant>,
        games: Vec<Game>,
        ends_at: Millis,
    ) -> Result<Arena, ArenaError> {
        let mut index = HashMap::with_capacity(entrants.len());
        for (i, e) in entrants.iter().enumerate() {
            if !e.rating.is_finite() {
                return Err(ArenaError::InvalidRating(e.id.clone()));
            }
            if index.insert(e.id.clone(), i).is_some() {
                return Err(ArenaError::DuplicateEntrant(e.id.clone()));
            }
        }
        let mut seats = Vec::with_capacity(games.len());
        for g in &games {
            let find = |id: &PlayerId| {
                index
                    .get(id)
                    .copied()
                    .ok_or_else(|| ArenaError::UnknownPlayer(id.clone()))
            };
            let (x, o) = (find(&g.x)?, find(&g.o)?);
            if x == o {
                return Err(ArenaError::SelfGame(g.x.clone()));
            }
            if !g.x_rating.is_finite() || !g.o_rating.is_finite() {
                return Err(ArenaError::InvalidRating(if g.x_rating.is_finite() {
                    g.o.clone()
                } else {
                    g.x.clone()
                }));
            }
            seats.push((x, o));
        }
        Ok(Arena {
            entrants,
            games,
            ends_at,
            seats,
        })
    }

    /// The entrants, as given.
    #[must_use]
    pub fn entrants(&self) -> &[Entrant] {
        &self.entrants
    }

    /// How many entrants are not withdrawn (for [`PoolPass::active_players`]).
    #[must_use]
    pub fn active_players(&self) -> usize {
        self.entrants.iter().filter(|e| !e.withdrawn).count()
    }

    /// Finished games in the order they ended (input order on ties).
    fn finished_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.games.len())
            .filter(|&g| self.games[g].finished.is_some())
            .collect();
        order.sort_by_key(|&g| self.games[g].finished.map(|f| f.at));
        order
    }

    /// Every entrant's tally and every finished game's points, replaying
    /// the finished games in the order they ended.
    fn replay(&self) -> (Vec<Tally>, Vec<GamePoints>) {
        let mut tallies = vec![Tally::default(); self.entrants.len()];
        let points = self
            .finished_order()
            .into_iter()
            .filter_map(|g| {
                let game = &self.games[g];
                let f = game.finished?;
                let (x, o) = self.seats[g];
                let mut end = |me: usize, them: usize, seat, their_rating, berserk| {
                    tallies[me].record(&Ending {
                        seat,
                        opponent: &self.entrants[them].id,
                        opponent_rating: their_rating,
                        result: f.result,
                        berserk,
                        at: f.at,
                        ends_at: self.ends_at,
                    })
                };
                Some(GamePoints {
                    game: g,
                    x: end(x, o, Seat::X, game.o_rating, game.x_berserk),
                    o: end(o, x, Seat::O, game.x_rating, game.o_berserk),
                })
            })
            .collect();
        (tallies, points)
    }

    /// The points of every finished game for each of its players, in the
    /// order the games ended (the arena's score sheet; the standings' points
    /// are their sums).
    #[must_use]
    pub fn game_points(&self) -> Vec<GamePoints> {
        self.replay().1
    }

    /// Each entrant's tally (in entrant order) after every finished game.
    #[must_use]
    pub fn tallies(&self) -> Vec<Tally> {
        self.replay().0
    }

    /// The standings now (games in progress and games that ended after the
    /// end time do not count).
    #[must_use]
    pub fn standings(&self) -> Vec<Standing> {
        let mut lines = lines_of(self.entrants.iter().cloned().zip(self.tallies()));
        rank(&mut lines);
        lines
    }

    /// The pool entries for the players waiting now (withdrawn ones are left
    /// out), from the current standings.
    ///
    /// # Errors
    /// A waiting player who is not an entrant.
    pub fn pool(&self, waiting: &[Waiting]) -> Result<Vec<PoolEntry>, ArenaError> {
        pool_of(&self.standings(), waiting)
    }
}

/// Sorts standings lines by points, then performance, then rating (then id,
/// for a stable order) and numbers their ranks; full ties share a rank.
fn rank(lines: &mut [Standing]) {
    let key = |a: &Standing, b: &Standing| -> Ordering {
        b.points
            .cmp(&a.points)
            .then_with(|| match (a.performance, b.performance) {
                (Some(pa), Some(pb)) => pb.total_cmp(&pa),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then(b.rating.total_cmp(&a.rating))
    };
    lines.sort_by(|a, b| key(a, b).then_with(|| a.id.cmp(&b.id)));
    for pos in 0..lines.len() {
        lines[pos].rank = if pos > 0 && key(&lines[pos - 1], &lines[pos]) == Ordering::Equal {
            lines[pos - 1].rank
        } else {
            pos as u32 + 1
        };
    }
}

/// The standings from each entrant's running [`Tally`]: the same lines as
/// [`Arena::standings`] over the games the tallies recorded.
///
/// # Errors
/// Duplicate entrants, or a rating that is not a finite number.
pub fn standings_of(entrants: Vec<(Entrant, Tally)>) -> Result<Vec<Standing>, ArenaError> {
    let mut seen = HashMap::with_capacity(entrants.len());
    for (e, t) in &entrants {
        if !e.rating.is_finite() || !t.performance_sum.is_finite() {
            return Err(ArenaError::InvalidRating(e.id.clone()));
        }
        if seen.insert(e.id.as_str(), ()).is_some() {
            return Err(ArenaError::DuplicateEntrant(e.id.clone()));
        }
    }
    let mut lines = lines_of(entrants);
    rank(&mut lines);
    Ok(lines)
}

/// Unranked standings lines from entrants and their tallies.
fn lines_of(entrants: impl IntoIterator<Item = (Entrant, Tally)>) -> Vec<Standing> {
    entrants
        .into_iter()
        .map(|(e, t)| Standing {
            rank: 0,
            rating: e.rating,
            points: t.points,
            games: t.games,
            wins: t.wins,
            draws: t.draws,
            losses: t.losses,
            berserks: t.berserks,
            withdrawn: e.withdrawn,
            performance: (t.games > 0).then(|| t.performance_sum / f64::from(t.games)),
            streak: t.streak,
            fire: t.streak >= FIRE_AFTER,
            seats: t.seats,
            last_opponent: t.last_opponent,
            id: e.id,
        })
        .collect()
}

/// The pool entries for the players waiting now (withdrawn ones are left
/// out), from the standings.
///
/// # Errors
/// A waiting player who is not in the standings.
pub fn pool_of(standings: &[Standing], waiting: &[Waiting]) -> Result<Vec<PoolEntry>, ArenaError> {
    let line: HashMap<&str, &Standing> = standings.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut pool = Vec::with_capacity(waiting.len());
    for w in waiting {
        let s = *line
            .get(w.id.as_str())
            .ok_or_else(|| ArenaError::UnknownPlayer(w.id.clone()))?;
        if s.withdrawn {
            continue;
        }
        pool.push(PoolEntry {
            id: w.id.clone(),
            rank: s.rank,
            seats: s.seats,
            last_opponent: s.last_opponent.clone(),
            waiting_since: w.since,
        });
    }
    Ok(pool)
}

/// A player waiting in the pool, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The player.
    pub id: PlayerId,
    /// When they entered the pool.
    pub since: Millis,
}

/// What the pairing needs to know about one waiting player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolEntry {
    /// The player.
    pub id: PlayerId,
    /// Current rank in the standings (1 is the leader).
    pub rank: u32,
    /// Seats so far.
    pub seats: SeatHistory,
    /// The opponent of their latest game.
    pub last_opponent: Option<PlayerId>,
    /// When they entered the pool: when someone must wait, the latest arrival does.
    pub waiting_since: Millis,
}

/// The moment and the arena a pairing pass runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolPass {
    /// The time of the pass.
    pub now: Millis,
    /// The arena's end: from then on no game starts.
    pub ends_at: Millis,
    /// Entrants not withdrawn, waiting or playing. With only two, they may
    /// meet again at once (nobody else will ever be free for them).
    pub active_players: usize,
}

/// One new arena game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaPairing {
    /// The player seated X.
    pub x: PlayerId,
    /// The player seated O.
    pub o: PlayerId,
}

/// Widest rank window the pairing looks across in a large pool (small pools
/// are searched whole).
const WINDOW: usize = 6;
/// Pools up to this size are paired optimally over all pairings.
const EXACT_UP_TO: usize = 12;

/// Pairs the waiting players (RULES.md): closest ranks first; never the two
/// players of someone's latest game again, unless they are the arena's only
/// active players; as many pairs as possible; when someone must wait, the
/// latest arrival waits (on equal arrival times the ranks decide). X goes to
/// the player who had X fewer times, then to the one who had O last, then to
/// the lower-ranked one. No pairing at or after the end time.
///
/// It is a dynamic programme over the pool in rank order (each player paired
/// within [`WINDOW`] places, or anywhere in pools of up to [`EXACT_UP_TO`]),
/// minimising, in order: players left waiting, how early the ones left had
/// arrived (for each, how many arrived after them), the sum of rank
/// differences; then augmenting paths (Edmonds) from the players still
/// waiting make the number of games the largest possible, so nobody waits
/// while a pairing exists that would seat them.
///
/// # Errors
/// A player listed twice.
pub fn pair_pool(pool: &[PoolEntry], pass: &PoolPass) -> Result<Vec<ArenaPairing>, ArenaError> {
    let mut seen = HashMap::with_capacity(pool.len());
    for (i, p) in pool.iter().enumerate() {
        if seen.insert(p.id.as_str(), i).is_some() {
            return Err(ArenaError::DuplicateInPool(p.id.clone()));
        }
    }
    if pass.now >= pass.ends_at || pool.len() < 2 {
        return Ok(Vec::new());
    }
    let mut order: Vec<usize> = (0..pool.len()).collect();
    order.sort_by(|&a, &b| {
        pool[a]
            .rank
            .cmp(&pool[b].rank)
            .then_with(|| pool[a].id.cmp(&pool[b].id))
    });
    let n = order.len();
    let at: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(pos, &i)| (pool[i].id.as_str(), pos))
        .collect();
    let last: Vec<Option<usize>> = order
        .iter()
        .map(|&i| {
            pool[i]
                .last_opponent
                .as_deref()
                .and_then(|id| at.get(id).copied())
        })
        .collect();
    let rematch_ok = pass.active_players <= 2;
    let allowed = |a: usize, b: usize| rematch_ok || (last[a] != Some(b) && last[b] != Some(a));
    let rank = |pos: usize| u64::from(pool[order[pos]].rank);
    // Leaving someone out costs more the earlier they arrived: the number
    // of players who arrived after them.
    let mut arrivals: Vec<Millis> = pool.iter().map(|p| p.waiting_since).collect();
    arrivals.sort_unstable();
    let wait_cost: Vec<u64> = order
        .iter()
        .map(|&i| (n - arrivals.partition_point(|&t| t <= pool[i].waiting_since)) as u64)
        .collect();

    let window = if n <= EXACT_UP_TO { n - 1 } else { WINDOW };
    let masks = 1usize << window;
    type Cost = (u32, u64, u64);
    let mut best: Vec<Cost> = vec![(0, 0, 0); (n + 1) * masks];
    // 0: skip (taken or left waiting); k: pair with the player k places down.
    let mut choice: Vec<u8> = vec![0; n * masks];
    for i in (0..n).rev() {
        for mask in 0..masks {
            let next = |m: usize| best[(i + 1) * masks + (m >> 1)];
            let (cost, pick) = if mask & 1 == 1 {
                (next(mask), 0)
            } else {
                let mut c = next(mask);
                c = (c.0 + 1, c.1 + wait_cost[i], c.2);
                let mut pick = 0;
                for k in 1..=window {
                    let j = i + k;
                    if j >= n {
                        break;
                    }
                    if mask >> k & 1 == 1 || !allowed(i, j) {
                        continue;
                    }
                    let rest = next(mask | 1 << k);
                    let here = (rest.0, rest.1, rest.2 + rank(j) - rank(i));
                    if here < c {
                        c = here;
                        pick = k as u8;
                    }
                }
                (c, pick)
            };
            best[i * masks + mask] = cost;
            choice[i * masks + mask] = pick;
        }
    }
    // Follow the choices, then make the pairing maximum: augmenting paths
    // from the players left waiting change only the pairs along each path.
    let mut matcher = Matcher::new(n);
    let mut mask = 0usize;
    for i in 0..n {
        let k = usize::from(choice[i * masks + mask]);
        if k > 0 {
            matcher.pair(i, i + k);
            mask |= 1 << k;
        }
        mask >>= 1;
    }
    matcher.augment_free(&allowed);
    let partner: Vec<Option<usize>> = (0..n).map(|i| matcher.mate(i)).collect();
    Ok((0..n)
        .filter_map(|i| partner[i].filter(|&j| j > i).map(|j| (i, j)))
        .map(|(hi, lo)| {
            let (a, b) = (&pool[order[hi]], &pool[order[lo]]);
            // X: fewer X, then O last, then the lower-ranked player.
            let (x, o) = if a.seats.x_order(&b.seats) == Ordering::Less {
                (a, b)
            } else {
                (b, a)
            };
            ArenaPairing {
                x: x.id.clone(),
                o: o.id.clone(),
            }
        })
        .collect())
}
