//! Hand-checked arena examples: points, fire, berserk, the end time,
//! performance, standings order, the pool's pairing rules and berserk clocks.

use uttt::clock::TimeControl;
use uttt::rules::Seat;
use uttt::tournament::arena::{
    Arena, ArenaError, ArenaPairing, BerserkRefused, Entrant, Finished, Game, PoolEntry, PoolPass,
    Waiting, berserk_left, pair_pool, score_game,
};
use uttt::tournament::{GameResult, Outcome, SeatHistory};

const END: i64 = 1_000_000;

fn entrant(id: &str, rating: f64) -> Entrant {
    Entrant {
        id: id.to_string(),
        rating,
        withdrawn: false,
    }
}

/// A game between `x` and `o` (both rated 1500) that ended at `at`.
fn game(x: &str, o: &str, result: GameResult, at: i64) -> Game {
    Game {
        x: x.to_string(),
        o: o.to_string(),
        x_rating: 1500.0,
        o_rating: 1500.0,
        x_berserk: false,
        o_berserk: false,
        finished: Some(Finished { result, at }),
    }
}

/// Games of `hero` against fresh opponents: `W`, `D`, `L` from hero's side,
/// `w` a berserk win. Returns the arena and the points of each game.
fn sheet(results: &str, ends_at: i64) -> (Arena, Vec<Option<u32>>) {
    let mut entrants = vec![entrant("hero", 1500.0)];
    let mut games = Vec::new();
    for (k, c) in results.chars().enumerate() {
        let opp = format!("o{k}");
        entrants.push(entrant(&opp, 1500.0));
        let result = match c {
            'W' | 'w' => GameResult::Win(Seat::X),
            'D' => GameResult::Draw,
            _ => GameResult::Win(Seat::O),
        };
        let mut g = game("hero", &opp, result, 1000 * (k as i64 + 1));
        g.x_berserk = c == 'w';
        games.push(g);
    }
    let arena = Arena::new(entrants, games, ends_at).unwrap();
    let points = arena.game_points().iter().map(|p| p.x).collect();
    (arena, points)
}

fn hero(arena: &Arena) -> uttt::tournament::arena::Standing {
    arena
        .standings()
        .into_iter()
        .find(|s| s.id == "hero")
        .unwrap()
}

#[test]
fn wins_score_two_draws_one_losses_nothing() {
    let (arena, points) = sheet("WDLW", END);
    assert_eq!(points, [Some(2), Some(1), Some(0), Some(2)]);
    let h = hero(&arena);
    assert_eq!(
        (h.points, h.games, h.wins, h.draws, h.losses),
        (5, 4, 2, 1, 1)
    );
}

#[test]
fn two_wins_in_a_row_set_a_player_on_fire_until_a_game_that_is_not_a_win() {
    let (arena, points) = sheet("WWWDWLWW", END);
    // Fire from the third win: 4; a draw on fire: 2, and the fire goes out.
    let expected = [2, 2, 4, 2, 2, 0, 2, 2];
    assert_eq!(points, expected.map(Some));
    let h = hero(&arena);
    assert_eq!((h.points, h.streak, h.fire), (16, 2, true));
    let (arena, _) = sheet("WWWL", END);
    assert_eq!((hero(&arena).streak, hero(&arena).fire), (0, false));
}

#[test]
fn a_berserk_win_scores_one_point_more() {
    let (arena, points) = sheet("wWwDw", END);
    // 2+1, 2, fire: 4+1, fire draw: 2, 2+1.
    assert_eq!(points, [3, 2, 5, 2, 3].map(Some));
    assert_eq!(hero(&arena).berserks, 3);
    assert_eq!(
        score_game(0, Outcome::Draw, true).points,
        1,
        "a berserk draw scores as a draw"
    );
    assert_eq!(score_game(3, Outcome::Loss, true).points, 0);
}

#[test]
fn games_that_end_after_the_end_time_score_nothing() {
    // Games end at 1000, 2000, 3000; the arena ends at 2000.
    let (arena, points) = sheet("WWW", 2000);
    assert_eq!(points, [Some(2), Some(2), None]);
    let h = hero(&arena);
    assert_eq!((h.points, h.games, h.wins, h.fire), (4, 2, 2, true));
}

#[test]
fn performance_is_the_average_opponent_rating_plus_or_minus_500() {
    let entrants = ["a", "b", "c", "d"].map(|id| entrant(id, 1500.0)).to_vec();
    let mut g1 = game("a", "b", GameResult::Win(Seat::X), 1);
    g1.o_rating = 1500.0;
    let mut g2 = game("c", "a", GameResult::Win(Seat::X), 2);
    g2.x_rating = 1600.0;
    let mut g3 = game("a", "d", GameResult::Draw, 3);
    g3.o_rating = 1700.0;
    let arena = Arena::new(entrants, vec![g1, g2, g3], END).unwrap();
    let a = arena.standings().into_iter().find(|s| s.id == "a").unwrap();
    // (1500 + 500 + 1600 − 500 + 1700) / 3
    assert_eq!(a.performance, Some(1600.0));
}

#[test]
fn standings_rank_by_points_then_performance_then_rating() {
    let entrants = vec![
        entrant("strong", 1900.0),
        entrant("weak", 1400.0),
        entrant("idle", 2000.0),
        entrant("idle2", 1000.0),
        entrant("x", 1500.0),
        entrant("y", 1500.0),
    ];
    // strong and weak both win once (2 points); weak beat a higher-rated
    // opponent, so weak's performance is higher.
    let mut g1 = game("strong", "x", GameResult::Win(Seat::X), 1);
    (g1.x_rating, g1.o_rating) = (1900.0, 1200.0);
    let mut g2 = game("weak", "y", GameResult::Win(Seat::X), 2);
    (g2.x_rating, g2.o_rating) = (1400.0, 1800.0);
    let arena = Arena::new(entrants, vec![g1, g2], END).unwrap();
    let s = arena.standings();
    let got: Vec<(&str, u32, u32)> = s
        .iter()
        .map(|l| (l.id.as_str(), l.rank, l.points))
        .collect();
    // x and y: 0 points; y lost to a 1400 (performance 900), x to a 1900
    // (1400). idle players have no performance and come after, by rating.
    assert_eq!(
        got,
        [
            ("weak", 1, 2),
            ("strong", 2, 2),
            ("x", 3, 0),
            ("y", 4, 0),
            ("idle", 5, 0),
            ("idle2", 6, 0)
        ]
    );
}

fn entry(id: &str, rank: u32) -> PoolEntry {
    PoolEntry {
        id: id.to_string(),
        rank,
        seats: SeatHistory::default(),
        last_opponent: None,
        waiting_since: 0,
    }
}

const PASS: PoolPass = PoolPass {
    now: 10,
    ends_at: END,
    active_players: 100,
};

fn pairs(p: &[ArenaPairing]) -> Vec<[&str; 2]> {
    let mut v: Vec<[&str; 2]> = p
        .iter()
        .map(|g| {
            let mut pair = [g.x.as_str(), g.o.as_str()];
            pair.sort_unstable();
            pair
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn the_pool_pairs_the_closest_ranks() {
    let pool: Vec<PoolEntry> = [("a", 1), ("b", 2), ("c", 5), ("d", 6), ("e", 20), ("f", 22)]
        .iter()
        .rev()
        .map(|&(id, r)| entry(id, r))
        .collect();
    let p = pair_pool(&pool, &PASS).unwrap();
    assert_eq!(pairs(&p), [["a", "b"], ["c", "d"], ["e", "f"]]);
}

#[test]
fn the_pool_never_pairs_the_same_two_players_twice_in_a_row_when_another_pairing_is_possible() {
    let mut pool = vec![entry("a", 1), entry("b", 2), entry("c", 3), entry("d", 4)];
    pool[0].last_opponent = Some("b".into());
    let p = pair_pool(&pool, &PASS).unwrap();
    assert_eq!(p.len(), 2);
    assert!(!pairs(&p).contains(&["a", "b"]), "{p:?}");
    // Only one side needs to remember: b's latest game was against a.
    pool[0].last_opponent = None;
    pool[1].last_opponent = Some("a".into());
    assert!(!pairs(&pair_pool(&pool, &PASS).unwrap()).contains(&["a", "b"]));
    // With only a and b waiting, they wait for someone else…
    let two = &pool[..2];
    assert_eq!(pair_pool(two, &PASS).unwrap(), []);
    // …unless nobody else is active in the arena.
    let alone = PoolPass {
        active_players: 2,
        ..PASS
    };
    assert_eq!(pairs(&pair_pool(two, &alone).unwrap()), [["a", "b"]]);
}

#[test]
fn in_an_odd_pool_the_latest_arrival_waits() {
    let mut pool = vec![entry("a", 1), entry("b", 2), entry("c", 3)];
    pool[0].waiting_since = 5;
    let p = pair_pool(&pool, &PASS).unwrap();
    assert_eq!(pairs(&p), [["b", "c"]]);
}

#[test]
fn x_goes_to_who_had_x_less_then_to_who_had_o_last_then_to_the_lower_ranked() {
    let mut a = entry("a", 1);
    let mut b = entry("b", 2);
    let seat = |x, o, last| SeatHistory {
        x_games: x,
        o_games: o,
        last,
    };
    let first = |a: &PoolEntry, b: &PoolEntry| {
        pair_pool(&[a.clone(), b.clone()], &PASS).unwrap()[0]
            .x
            .clone()
    };
    assert_eq!(first(&a, &b), "b", "no history: the lower-ranked gets X");
    a.seats = seat(1, 3, Some(Seat::X));
    b.seats = seat(2, 0, Some(Seat::X));
    assert_eq!(first(&a, &b), "a", "fewer X");
    a.seats = seat(2, 1, Some(Seat::O));
    b.seats = seat(2, 2, Some(Seat::X));
    assert_eq!(first(&a, &b), "a", "same X, O last");
}

#[test]
fn no_game_starts_at_or_after_the_end_time() {
    let pool = vec![entry("a", 1), entry("b", 2)];
    let late = PoolPass { now: END, ..PASS };
    assert_eq!(pair_pool(&pool, &late).unwrap(), []);
    let just_before = PoolPass {
        now: END - 1,
        ..PASS
    };
    assert_eq!(pair_pool(&pool, &just_before).unwrap().len(), 1);
}

#[test]
fn the_pool_comes_from_the_standings_and_leaves_withdrawn_players_out() {
    let mut entrants = ["a", "b", "c", "d"].map(|id| entrant(id, 1500.0)).to_vec();
    entrants[3].withdrawn = true;
    let games = vec![game("a", "b", GameResult::Win(Seat::O), 5)];
    let arena = Arena::new(entrants, games, END).unwrap();
    assert_eq!(arena.active_players(), 3);
    let waiting = ["a", "b", "c", "d"].map(|id| Waiting {
        id: id.into(),
        since: 7,
    });
    let pool = arena.pool(&waiting).unwrap();
    let got: Vec<(&str, u32, Option<&str>, SeatHistory)> = pool
        .iter()
        .map(|e| (e.id.as_str(), e.rank, e.last_opponent.as_deref(), e.seats))
        .collect();
    let x = SeatHistory {
        x_games: 1,
        o_games: 0,
        last: Some(Seat::X),
    };
    let o = SeatHistory {
        x_games: 0,
        o_games: 1,
        last: Some(Seat::O),
    };
    // b won: rank 1; a lost (performance 1000): 2; c: no games: 3.
    assert_eq!(
        got,
        [
            ("a", 2, Some("b"), x),
            ("b", 1, Some("a"), o),
            ("c", 3, None, SeatHistory::default())
        ]
    );
    let pairs = pair_pool(
        &pool,
        &PoolPass {
            now: 10,
            ends_at: END,
            active_players: 3,
        },
    )
    .unwrap();
    // a and b just played and all arrived together: c meets the closer of
    // them in rank, a; c had X fewer times.
    assert_eq!(
        pairs,
        [ArenaPairing {
            x: "c".into(),
            o: "a".into()
        }]
    );
    let stranger = [Waiting {
        id: "zz".into(),
        since: 0,
    }];
    assert_eq!(
        arena.pool(&stranger).unwrap_err(),
        ArenaError::UnknownPlayer("zz".into())
    );
}

#[test]
fn bad_arena_input_is_refused() {
    let e = vec![entrant("a", 1500.0), entrant("b", 1500.0)];
    let twice = vec![entrant("a", 1500.0), entrant("a", 1500.0)];
    assert_eq!(
        Arena::new(twice, vec![], END).unwrap_err(),
        ArenaError::DuplicateEntrant("a".into())
    );
    let stranger = vec![game("a", "zz", GameResult::Draw, 1)];
    assert_eq!(
        Arena::new(e.clone(), stranger, END).unwrap_err(),
        ArenaError::UnknownPlayer("zz".into())
    );
    let alone = vec![game("a", "a", GameResult::Draw, 1)];
    assert_eq!(
        Arena::new(e, alone, END).unwrap_err(),
        ArenaError::SelfGame("a".into())
    );
    let pool = vec![entry("a", 1), entry("a", 1)];
    assert_eq!(
        pair_pool(&pool, &PASS).unwrap_err(),
        ArenaError::DuplicateInPool("a".into())
    );
}

#[test]
fn berserk_halves_the_players_own_clock_before_their_first_move() {
    let tc = TimeControl::TOURNAMENT;
    assert_eq!(berserk_left(&tc, None, false, false), Ok(300_000));
    assert_eq!(berserk_left(&tc, Some(600_000), false, false), Ok(300_000));
    // A running clock halves what it shows: 100 s of 3 minutes thought, 40 s kept.
    let blitz = TimeControl::clock(180_000, 0).unwrap();
    assert_eq!(berserk_left(&blitz, Some(80_000), false, false), Ok(40_000));
    assert_eq!(berserk_left(&blitz, Some(0), false, false), Ok(0));
    // The increment is untouched: it belongs to the match's time control.
    let inc = TimeControl::clock(180_000, 2_000).unwrap();
    assert_eq!(berserk_left(&inc, None, false, false), Ok(90_000));
    assert_eq!(
        berserk_left(&tc, None, true, false),
        Err(BerserkRefused::AlreadyMoved)
    );
    assert_eq!(
        berserk_left(&tc, None, false, true),
        Err(BerserkRefused::AlreadyBerserk)
    );
    let per_turn = TimeControl::per_turn(30_000).unwrap();
    assert_eq!(
        berserk_left(&per_turn, None, false, false),
        Err(BerserkRefused::NoClock)
    );
    assert_eq!(
        berserk_left(&TimeControl::None, None, false, false),
        Err(BerserkRefused::NoClock)
    );
}

#[test]
fn a_player_whose_nearest_ranks_all_just_played_them_still_gets_a_game() {
    // In a big pool the pairing looks a few places around each player first;
    // here the leader's eight nearest all just played the leader.
    let mut pool: Vec<PoolEntry> = (1..=14).map(|r| entry(&format!("r{r:02}"), r)).collect();
    for e in &mut pool[1..9] {
        e.last_opponent = Some("r01".into());
    }
    let p = pair_pool(&pool, &PASS).unwrap();
    assert_eq!(p.len(), 7, "{p:?}");
    let leader = p.iter().find(|g| g.x == "r01" || g.o == "r01").unwrap();
    assert!(
        ["r10", "r11", "r12", "r13", "r14"].contains(&if leader.x == "r01" {
            leader.o.as_str()
        } else {
            leader.x.as_str()
        })
    );
}
