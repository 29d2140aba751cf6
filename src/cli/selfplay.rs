//! `uttt selfplay`: two CPU players play each other, both colours evenly,
//! and the score of the first comes with a 95% Wilson interval. Needs no
//! database.
//!
//! Just over 400 lines: the option parsing, the game loop on two threads and
//! the table it prints belong to the one command.

use std::fmt;
use std::io::Write;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::cpu::{self, Budget, Level, Rng, Settings};
use crate::rules::{Depth, Position, Seat, Status};

/// A player of selfplay: a level, or textbook UCT with a fixed number of iterations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Contestant {
    /// A CPU level, as in matches (no clock).
    Level(Level),
    /// `uctN`: plain UCT (`c = √2`, random playouts, no tactics), N iterations.
    Uct(u32),
    /// `mctsN` or `mctsNcX`: the levels' search with N iterations and, when
    /// given, exploration constant X (for tuning the levels).
    Search {
        /// Iterations per move.
        iterations: u32,
        /// The exploration constant; the levels' when `None`.
        exploration: Option<f32>,
    },
}

/// A contestant that is neither `1`..=`5` nor `uctN`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected a level 1..=5, uctN (plain UCT with N iterations) or mctsN[cX], not {0:?}")]
pub struct ContestantError(String);

impl FromStr for Contestant {
    type Err = ContestantError;

    fn from_str(text: &str) -> Result<Contestant, ContestantError> {
        let error = || ContestantError(text.to_owned());
        if let Some(iterations) = text.strip_prefix("uct") {
            return match iterations.parse() {
                Ok(n) if n > 0 => Ok(Contestant::Uct(n)),
                _ => Err(error()),
            };
        }
        if let Some(rest) = text.strip_prefix("mcts") {
            let (iterations, exploration) = match rest.split_once('c') {
                Some((n, c)) => (n, Some(c.parse().map_err(|_| error())?)),
                None => (rest, None),
            };
            return match iterations.parse() {
                Ok(iterations) if iterations > 0 => Ok(Contestant::Search {
                    iterations,
                    exploration,
                }),
                _ => Err(error()),
            };
        }
        let number = text.strip_prefix("level").unwrap_or(text);
        number
            .parse()
            .ok()
            .and_then(Level::new)
            .map(Contestant::Level)
            .ok_or_else(error)
    }
}

impl fmt::Display for Contestant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Contestant::Level(level) => write!(f, "level {}", level.get()),
            Contestant::Uct(iterations) => write!(f, "uct{iterations}"),
            Contestant::Search {
                iterations,
                exploration: None,
            } => write!(f, "mcts{iterations}"),
            Contestant::Search {
                iterations,
                exploration: Some(c),
            } => write!(f, "mcts{iterations}c{c}"),
        }
    }
}

impl Contestant {
    fn settings(self, position: &Position) -> Settings {
        match self {
            Contestant::Level(level) => cpu::level_settings(position, level, None),
            Contestant::Uct(iterations) => Settings::plain_uct(iterations),
            Contestant::Search {
                iterations,
                exploration,
            } => {
                let mut settings = Settings::with_budget(Budget::iterations(iterations));
                if let Some(c) = exploration {
                    settings.exploration = c;
                }
                settings
            }
        }
    }
}

/// Arguments of `uttt selfplay`.
#[derive(Clone, Debug, clap::Args)]
pub struct SelfplayArgs {
    /// Player A: a level 1..=5, uctN (plain UCT, N iterations), or mctsN[cX]
    /// (the levels' search, N iterations, exploration X).
    #[arg(long)]
    pub a: Contestant,
    /// Player B, as A.
    #[arg(long)]
    pub b: Contestant,
    /// Games to play; A is X in the even-numbered ones.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// Depth of the board tree, 1..=4.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub depth: u8,
    /// Games played at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub threads: u32,
    /// Seed of the whole run; each move's seed derives from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print a line per finished game.
    #[arg(long)]
    pub progress: bool,
}

/// One finished game.
#[derive(Clone, Copy, Debug)]
struct Played {
    game: u32,
    a_seat: Seat,
    status: Status,
    plies: u32,
    /// Thinking time and moves of A and of B.
    think: [(Duration, u32); 2],
}

impl Played {
    /// A's score: 1 win, ½ draw, 0 loss.
    fn score(&self) -> f64 {
        match self.status.winner() {
            Some(seat) if seat == self.a_seat => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

fn play_game(args: &SelfplayArgs, depth: Depth, game: u32) -> Played {
    let a_seat = if game.is_multiple_of(2) {
        Seat::X
    } else {
        Seat::O
    };
    let mut seeds = Rng::new(args.seed ^ u64::from(game).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut position = Position::new(depth);
    let mut think = [(Duration::ZERO, 0); 2];
    while !position.status().is_over() {
        let side = usize::from(position.turn() != a_seat);
        let contestant = [args.a, args.b][side];
        let started = Instant::now();
        let report = cpu::think(
            &position,
            &contestant.settings(&position),
            seeds.next_u64(),
            &started,
        );
        think[side].0 += started.elapsed();
        think[side].1 += 1;
        let Some(square) = report.square else { break };
        if position.play_square(square).is_err() {
            // Never expected: the search plays legal moves only. Scored as
            // a loss for the side that tried it.
            let status = Status::Won(position.turn().other());
            return Played {
                game,
                a_seat,
                status,
                plies: position.ply(),
                think,
            };
        }
    }
    Played {
        game,
        a_seat,
        status: position.status(),
        plies: position.ply(),
        think,
    }
}

/// A's wins, draws and losses over games given as (A's seat, the winner),
/// counting only the games where A sat in `seat` when one is given.
#[must_use]
pub fn tally(
    games: impl IntoIterator<Item = (Seat, Option<Seat>)>,
    seat: Option<Seat>,
) -> [u32; 3] {
    let mut wdl = [0u32; 3];
    for (a_seat, winner) in games {
        if seat.is_some_and(|s| s != a_seat) {
            continue;
        }
        wdl[match winner {
            Some(w) if w == a_seat => 0,
            Some(_) => 2,
            None => 1,
        }] += 1;
    }
    wdl
}

/// The 95% Wilson score interval of a mean score `p` over `n` games.
///
/// Draws count as half a win; treating each game's score as a Bernoulli
/// trial is slightly conservative when there are draws.
#[must_use]
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    const Z: f64 = 1.959_964;
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Plays the games and prints A's wins, draws and losses with the interval,
/// per colour too, and the mean thinking time per move of each side.
///
/// # Errors
/// A failed write to `out`.
pub fn run(args: &SelfplayArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let depth = Depth::new(args.depth)?;
    writeln!(
        out,
        "selfplay at depth {}: A = {} vs B = {}, {} games, {} thread(s), seed {}",
        depth.get(),
        args.a,
        args.b,
        args.games,
        args.threads,
        args.seed
    )
    .context("writing the selfplay result")?;
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::channel();
    let mut results = Vec::new();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..args.threads {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    let Ok(game) = u32::try_from(game) else { break };
                    if game >= args.games || sender.send(play_game(args, depth, game)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for played in receiver {
            if args.progress {
                let result = match played.score() {
                    1.0 => "A wins",
                    0.0 => "B wins",
                    _ => "draw",
                };
                writeln!(
                    out,
                    "game {:>4}: A is {}, {result} after {} plies",
                    played.game, played.a_seat, played.plies
                )?;
            }
            results.push(played);
        }
        Ok(())
    })?;
    results.sort_by_key(|played| played.game);
    summarise(&results, started.elapsed(), out)
}

fn summarise(results: &[Played], wall: Duration, out: &mut impl Write) -> anyhow::Result<()> {
    let tally = |seat| tally(results.iter().map(|p| (p.a_seat, p.status.winner())), seat);
    let [wins, draws, losses] = tally(None);
    let n = results.len() as f64;
    let score = (f64::from(wins) + f64::from(draws) / 2.0) / n.max(1.0);
    let (low, high) = wilson(score, n);
    writeln!(
        out,
        "A wins {wins}, draws {draws}, losses {losses}: A scores {:.1}% (95% Wilson interval {:.1}%–{:.1}%)",
        100.0 * score,
        100.0 * low,
        100.0 * high
    )?;
    let [xw, xd, xl] = tally(Some(Seat::X));
    let [ow, od, ol] = tally(Some(Seat::O));
    writeln!(
        out,
        "A as X: {xw}/{xd}/{xl}, A as O: {ow}/{od}/{ol} (wins/draws/losses)"
    )?;
    let mean_ms = |side: usize| {
        let (time, moves) = results.iter().fold((Duration::ZERO, 0), |(t, m), p| {
            (t + p.think[side].0, m + p.think[side].1)
        });
        time.as_secs_f64() * 1e3 / f64::from(moves.max(1))
    };
    let plies: u32 = results.iter().map(|p| p.plies).sum();
    writeln!(
        out,
        "mean {:.1} plies a game; thinking per move: A {:.2} ms, B {:.2} ms; {:.1} s in all",
        f64::from(plies) / n.max(1.0),
        mean_ms(0),
        mean_ms(1),
        wall.as_secs_f64()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Contestant, SelfplayArgs, run, tally, wilson};
    use crate::cpu::Level;
    use crate::rules::Seat;

    #[test]
    fn tally_counts_a_s_results_overall_and_per_seat() {
        let games = [
            (Seat::X, Some(Seat::X)),
            (Seat::O, Some(Seat::X)),
            (Seat::O, None),
            (Seat::X, Some(Seat::O)),
            (Seat::O, Some(Seat::O)),
        ];
        assert_eq!(tally(games, None), [2, 1, 2]);
        assert_eq!(tally(games, Some(Seat::X)), [1, 0, 1]);
        assert_eq!(tally(games, Some(Seat::O)), [1, 1, 1]);
    }

    #[test]
    fn contestants_parse_as_levels_or_plain_uct() {
        assert_eq!("3".parse(), Ok(Contestant::Level(Level::new(3).unwrap())));
        assert_eq!("level5".parse(), Ok(Contestant::Level(Level::MAX)));
        assert_eq!("uct1000".parse(), Ok(Contestant::Uct(1000)));
        assert!("6".parse::<Contestant>().is_err());
        assert!("uct".parse::<Contestant>().is_err());
        assert!("uct0".parse::<Contestant>().is_err());
        assert_eq!(
            "mcts3000c0.7".parse(),
            Ok(Contestant::Search {
                iterations: 3000,
                exploration: Some(0.7)
            })
        );
        assert_eq!(
            "mcts500".parse::<Contestant>().map(|c| c.to_string()),
            Ok("mcts500".to_owned())
        );
    }

    #[test]
    fn wilson_interval_matches_the_textbook_values() {
        let (low, high) = wilson(0.5, 100.0);
        assert!((low - 0.4038).abs() < 1e-3 && (high - 0.5962).abs() < 1e-3);
        let (low, high) = wilson(1.0, 60.0);
        assert!((low - 0.9398).abs() < 1e-3 && high == 1.0);
    }

    #[test]
    fn selfplay_prints_the_score_with_its_interval() {
        let args = SelfplayArgs {
            a: Contestant::Level(Level::new(2).unwrap()),
            b: Contestant::Uct(20),
            games: 4,
            depth: 1,
            threads: 2,
            seed: 3,
            progress: true,
        };
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("game ")).count(), 4);
        assert!(text.contains("95% Wilson interval"), "{text}");
        assert!(text.contains("A as X: "), "{text}");
    }
}
