//! Hand-checked Swiss examples: RULES.md's lines, one small tournament each.

use uttt::rules::Seat;
use uttt::tournament::GameResult::{self, Draw, Win};
use uttt::tournament::swiss::{Entrant, Pairing, Round, Swiss, SwissError};

use super::support::{entrant, game};

const X: GameResult = Win(Seat::X);
const O: GameResult = Win(Seat::O);

/// `p1` … `pn` rated 2000, 1900, … (listed in a scrambled order: the input
/// order must not matter).
fn field(n: usize) -> Vec<Entrant> {
    let mut e: Vec<Entrant> = (1..=n)
        .map(|i| entrant(&format!("p{i}"), 2100.0 - 100.0 * i as f64))
        .collect();
    e.reverse();
    e.rotate_left(n / 3);
    e
}

fn withdrawn(id: &str) -> Entrant {
    Entrant {
        withdrawn: true,
        ..entrant(id, 1000.0)
    }
}

fn pair(entrants: Vec<Entrant>, rounds: Vec<Round>) -> Pairing {
    Swiss::new(entrants, rounds)
        .unwrap()
        .pair_next_round()
        .unwrap()
}

/// The boards as `(x, o)` names.
fn boards(p: &Pairing) -> Vec<(&str, &str)> {
    p.boards
        .iter()
        .map(|b| (b.x.as_str(), b.o.as_str()))
        .collect()
}

/// The pairs, each sorted, for comparisons that ignore seats.
fn pairs(p: &Pairing) -> Vec<[&str; 2]> {
    let mut v: Vec<[&str; 2]> = p
        .boards
        .iter()
        .map(|b| {
            let mut pair = [b.x.as_str(), b.o.as_str()];
            pair.sort_unstable();
            pair
        })
        .collect();
    v.sort_unstable();
    v
}

fn round(games: &[(&str, &str, GameResult)], bye: Option<&str>) -> Round {
    Round {
        games: games.iter().map(|&(x, o, r)| game(x, o, r)).collect(),
        bye: bye.map(str::to_string),
    }
}

#[test]
fn round_one_pairs_the_top_half_against_the_bottom_half_by_rating_alternating_seats() {
    let p = pair(field(8), Vec::new());
    assert_eq!(p.round, 1);
    assert_eq!(p.bye, None);
    // Board 1: the higher-rated player is X; board 2: O; and so on.
    assert_eq!(
        boards(&p),
        [("p1", "p5"), ("p6", "p2"), ("p3", "p7"), ("p8", "p4")]
    );
    assert_eq!(
        p.boards.iter().map(|b| b.number).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
}

#[test]
fn the_bye_goes_to_the_lowest_ranked_player_who_has_not_had_one() {
    let entrants = field(5);
    let r1 = pair(entrants.clone(), Vec::new());
    assert_eq!(r1.bye.as_deref(), Some("p5"), "round 1: the lowest-rated");
    assert_eq!(pairs(&r1), [["p1", "p3"], ["p2", "p4"]]);

    // The favourites win: p1, p2 and p5 (bye) have 1, p3 and p4 have 0.
    let h1 = vec![round(&[("p1", "p3", X), ("p4", "p2", O)], Some("p5"))];
    let r2 = pair(entrants.clone(), h1.clone());
    assert_eq!(
        r2.bye.as_deref(),
        Some("p4"),
        "the lowest-ranked, p4, has not had one"
    );
    // The top group p1, p2, p5 is odd; p5's bye was a float down, so p2
    // floats instead and meets the top of the next group.
    assert_eq!(pairs(&r2), [["p1", "p5"], ["p2", "p3"]]);

    // p2 and p5 lose: scores p1 2, p2 1, p4 1 (bye), p5 1, p3 1.
    let mut h2 = h1;
    h2.push(round(&[("p5", "p1", O), ("p3", "p2", X)], Some("p4")));
    let r3 = pair(entrants, h2);
    assert_eq!(
        r3.bye.as_deref(),
        Some("p3"),
        "p4 and p5 have had theirs; p3 is the lowest left"
    );
}

#[test]
fn a_player_left_over_in_a_score_group_floats_down_to_the_next() {
    let entrants = field(6);
    let r1 = pair(entrants.clone(), Vec::new());
    assert_eq!(boards(&r1), [("p1", "p4"), ("p5", "p2"), ("p3", "p6")]);
    let h = vec![round(
        &[("p1", "p4", X), ("p5", "p2", O), ("p3", "p6", X)],
        None,
    )];
    let r2 = pair(entrants, h);
    // Winners p1 p2 p3: p3 floats down and meets the highest of the losers.
    assert_eq!(pairs(&r2), [["p1", "p2"], ["p3", "p4"], ["p5", "p6"]]);
    // Seats: X to whoever had X fewer times.
    assert_eq!(boards(&r2), [("p2", "p1"), ("p4", "p3"), ("p6", "p5")]);
}

#[test]
fn a_choice_that_would_force_a_rematch_further_down_is_not_taken() {
    // {p2, p3} × {p5, p6} have all met; p1 and p4 have met. The Dutch first
    // choices p1–p5 then p2–p4 would leave p3–p6, a rematch.
    let mut entrants = field(6);
    entrants.push(withdrawn("w1"));
    entrants.push(withdrawn("w2"));
    let h = vec![
        round(
            &[("p2", "p5", Draw), ("p3", "p6", Draw), ("p1", "p4", Draw)],
            None,
        ),
        round(
            &[
                ("p6", "p2", Draw),
                ("p5", "p3", Draw),
                ("w1", "p1", Draw),
                ("w2", "p4", Draw),
            ],
            None,
        ),
    ];
    let p = pair(entrants, h);
    assert_eq!(pairs(&p), [["p1", "p5"], ["p2", "p3"], ["p4", "p6"]]);
    // p1 and p5 had X once each; p1 had O last. p2 and p3 have the same
    // history: board 2 gives the higher-ranked O. p4 had O twice.
    assert_eq!(boards(&p), [("p1", "p5"), ("p3", "p2"), ("p4", "p6")]);
}

#[test]
fn withdrawn_players_are_not_paired_and_nobody_meets_twice() {
    let mut entrants = field(4);
    let h = vec![
        round(&[("p1", "p3", X), ("p4", "p2", O)], None),
        round(&[("p2", "p1", Draw), ("p3", "p4", Draw)], None),
    ];
    // Only p1–p4 and p2–p3 are left that have not met.
    assert_eq!(
        pairs(&pair(entrants.clone(), h.clone())),
        [["p1", "p4"], ["p2", "p3"]]
    );
    entrants
        .iter_mut()
        .find(|e| e.id == "p2")
        .unwrap()
        .withdrawn = true;
    let p = pair(entrants, h);
    assert_eq!(pairs(&p), [["p1", "p4"]]);
    assert_eq!(p.bye.as_deref(), Some("p3"));
}

/// Two active players with the given seat histories (against withdrawn
/// fillers, all draws), paired against each other.
fn seats_between(a: &[Seat], b: &[Seat]) -> (String, String) {
    let mut entrants = vec![entrant("a", 1500.0), entrant("b", 1500.0)];
    let mut rounds = Vec::new();
    for r in 0..a.len().max(b.len()) {
        let mut games = Vec::new();
        for (who, seats) in [("a", a), ("b", b)] {
            if let Some(&seat) = seats.get(r) {
                let filler = format!("f{who}{r}");
                entrants.push(withdrawn(&filler));
                games.push(match seat {
                    Seat::X => game(who, &filler, Draw),
                    Seat::O => game(&filler, who, Draw),
                });
            }
        }
        rounds.push(Round { games, bye: None });
    }
    let p = pair(entrants, rounds);
    (p.boards[0].x.clone(), p.boards[0].o.clone())
}

#[test]
fn seats_x_goes_to_who_had_x_fewer_times() {
    use Seat::{O as SO, X as SX};
    assert_eq!(seats_between(&[SO, SX, SO], &[SX, SX, SO]).0, "a");
    assert_eq!(seats_between(&[SX, SX, SO], &[SO, SX, SO]).0, "b");
}

#[test]
fn seats_then_x_goes_to_who_had_o_last() {
    use Seat::{O as SO, X as SX};
    assert_eq!(seats_between(&[SX, SO], &[SO, SX]).0, "a");
    assert_eq!(seats_between(&[SO, SX], &[SX, SO]).0, "b");
}

#[test]
fn seats_nobody_gets_the_same_seat_three_games_in_a_row() {
    use Seat::{O as SO, X as SX};
    // a had X fewer times, but X twice running: a gets O.
    assert_eq!(seats_between(&[SO, SO, SX, SX], &[SX, SX, SO, SX]).1, "a");
    // b had O twice running: b gets X although b had X more often.
    assert_eq!(seats_between(&[SO, SX, SO], &[SX, SX, SO, SO]).0, "b");
}

#[test]
fn seats_pairs_change_so_that_nobody_gets_a_third_seat_in_a_row() {
    use Seat::{O as SO, X as SX};
    // Top group: t1, t2 both had X twice; bottom: u1, u2 both had O twice.
    // The score groups would pair t1–t2 and u1–u2; only t–u pairs avoid a
    // third seat in a row, so both t float down and meet the u in order.
    let mut entrants = vec![
        entrant("t1", 1900.0),
        entrant("t2", 1800.0),
        entrant("u1", 1700.0),
        entrant("u2", 1600.0),
    ];
    let mut rounds = Vec::new();
    for r in 0..2 {
        let mut games = Vec::new();
        for (who, seat, result) in [("t1", SX, X), ("t2", SX, X), ("u1", SO, X), ("u2", SO, X)] {
            let filler = format!("f{who}{r}");
            entrants.push(withdrawn(&filler));
            games.push(match seat {
                Seat::X => game(who, &filler, result),
                Seat::O => game(&filler, who, result),
            });
        }
        rounds.push(Round { games, bye: None });
    }
    let p = pair(entrants, rounds);
    assert_eq!(pairs(&p), [["t1", "u1"], ["t2", "u2"]]);
    assert_eq!(boards(&p), [("u1", "t1"), ("u2", "t2")]);
}

#[test]
fn standings_rank_by_score_then_buchholz_then_sonneborn_berger_then_rating() {
    let entrants = vec![
        entrant("a", 1500.0),
        entrant("b", 1600.0),
        entrant("c", 1400.0),
        entrant("d", 1700.0),
    ];
    let rounds = vec![
        round(&[("a", "b", X), ("c", "d", Draw)], None),
        round(&[("c", "a", Draw), ("d", "b", O)], None),
    ];
    let s = Swiss::new(entrants, rounds).unwrap().standings();
    let got: Vec<(&str, u32, f64, f64, f64)> = s
        .iter()
        .map(|l| {
            (
                l.id.as_str(),
                l.rank,
                l.score,
                l.buchholz,
                l.sonneborn_berger,
            )
        })
        .collect();
    // Scores a 1.5, b 1, c 1, d 0.5; Buchholz 2 for everyone; SB: a beat b
    // (1) and drew c (½·1); c drew d (½·½) and a (½·1.5); b beat d (½).
    assert_eq!(
        got,
        [
            ("a", 1, 1.5, 2.0, 1.5),
            ("c", 2, 1.0, 2.0, 1.0),
            ("b", 3, 1.0, 2.0, 0.5),
            ("d", 4, 0.5, 2.0, 0.5)
        ]
    );
    let a = &s[0];
    assert_eq!(
        (a.games, a.wins, a.draws, a.losses, a.byes, a.withdrawn),
        (2, 1, 1, 0, 0, false)
    );
}

#[test]
fn standings_count_a_bye_as_an_opponent_with_the_players_own_score() {
    let entrants = vec![
        entrant("a", 1500.0),
        entrant("b", 1600.0),
        entrant("c", 1400.0),
    ];
    let rounds = vec![round(&[("a", "b", X)], Some("c"))];
    let s = Swiss::new(entrants, rounds).unwrap().standings();
    let got: Vec<(&str, u32, f64, f64)> = s
        .iter()
        .map(|l| (l.id.as_str(), l.rank, l.score, l.buchholz))
        .collect();
    assert_eq!(
        got,
        [("c", 1, 1.0, 1.0), ("a", 2, 1.0, 0.0), ("b", 3, 0.0, 1.0)]
    );
    assert_eq!((s[0].games, s[0].byes), (0, 1));
}

#[test]
fn standings_share_a_rank_only_on_a_full_tie_and_skip_games_in_progress() {
    let entrants = vec![
        entrant("a", 1500.0),
        entrant("b", 1500.0),
        entrant("c", 1500.0),
        entrant("d", 1500.0),
    ];
    let mut r = round(&[("a", "b", Draw), ("c", "d", Draw)], None);
    let s = Swiss::new(entrants.clone(), vec![r.clone()])
        .unwrap()
        .standings();
    assert!(s.iter().all(|l| l.rank == 1), "{s:?}");
    r.games[1].result = None;
    let s = Swiss::new(entrants, vec![r]).unwrap().standings();
    let got: Vec<(&str, u32, u32)> = s.iter().map(|l| (l.id.as_str(), l.rank, l.games)).collect();
    assert_eq!(got, [("a", 1, 1), ("b", 1, 1), ("c", 3, 0), ("d", 3, 0)]);
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let e = field(4);
    let dup = vec![entrant("p1", 1500.0), entrant("p1", 1400.0)];
    assert_eq!(
        Swiss::new(dup, vec![]).unwrap_err(),
        SwissError::DuplicateEntrant("p1".into())
    );
    let nan = vec![entrant("p1", f64::NAN)];
    assert_eq!(
        Swiss::new(nan, vec![]).unwrap_err(),
        SwissError::InvalidRating("p1".into())
    );
    let unknown = vec![round(&[("p1", "zz", X)], None)];
    assert!(matches!(
        Swiss::new(e.clone(), unknown),
        Err(SwissError::UnknownPlayer { round: 1, .. })
    ));
    let twice = vec![
        round(&[("p1", "p2", X)], None),
        round(&[("p1", "p3", X), ("p4", "p1", X)], None),
    ];
    assert_eq!(
        Swiss::new(e.clone(), twice).unwrap_err(),
        SwissError::PlayedTwice {
            round: 2,
            player: "p1".into()
        }
    );
    let bye_and_game = vec![round(&[("p1", "p2", X)], Some("p2"))];
    assert!(matches!(
        Swiss::new(e.clone(), bye_and_game),
        Err(SwissError::PlayedTwice { .. })
    ));
    let self_game = vec![round(&[("p3", "p3", X)], None)];
    assert!(matches!(
        Swiss::new(e.clone(), self_game),
        Err(SwissError::PlayedTwice { .. })
    ));
    let mut running = round(&[("p1", "p2", X), ("p3", "p4", X)], None);
    running.games[0].result = None;
    let swiss = Swiss::new(e, vec![running]).unwrap();
    assert_eq!(
        swiss.pair_next_round().unwrap_err(),
        SwissError::RoundInProgress { round: 1 }
    );
}

#[test]
fn tiny_fields_pair_what_they_can() {
    assert_eq!(pair(vec![], vec![]).boards, []);
    let one = pair(vec![entrant("solo", 1500.0)], vec![]);
    assert_eq!((one.boards.len(), one.bye.as_deref()), (0, Some("solo")));
    // Two players who have met must meet again: a rematch beats no game.
    let e = vec![entrant("a", 1500.0), entrant("b", 1400.0)];
    let p = pair(e, vec![round(&[("a", "b", X)], None)]);
    assert_eq!(boards(&p), [("b", "a")]);
}

#[test]
fn the_bye_goes_up_the_ranking_as_far_as_it_must() {
    // t01–t11 won twice as X (each must take O next); b01–b10 lost with X
    // then O. Twenty-one players: the bye must go to a t, or eleven players
    // needing O would share ten boards. The lowest-ranked ten are all b.
    let mut entrants = Vec::new();
    let mut rounds = vec![Round::default(), Round::default()];
    for i in 1..=21 {
        let (id, won) = if i <= 11 {
            (format!("t{i:02}"), true)
        } else {
            (format!("b{:02}", i - 11), false)
        };
        entrants.push(entrant(&id, 2200.0 - 10.0 * i as f64));
        for (r, round) in rounds.iter_mut().enumerate() {
            let filler = format!("f{i}-{r}");
            entrants.push(withdrawn(&filler));
            let as_x = won || r == 0;
            let result = if won {
                X
            } else if as_x {
                O
            } else {
                X
            };
            round.games.push(if as_x {
                game(&id, &filler, result)
            } else {
                game(&filler, &id, result)
            });
        }
    }
    let p = pair(entrants, rounds);
    assert_eq!(p.bye.as_deref(), Some("t11"));
    for b in &p.boards {
        assert!(b.x.starts_with('b') && b.o.starts_with('t'), "{b:?}");
    }
}
