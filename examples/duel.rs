//! Duel: our CPU against the MIT crate `ai-ultimate-tictactoe` 0.2 (or
//! against another of our settings) in-process, at equal time per move.
//!
//! Games come in pairs from the same random opening, A as X in the first
//! and as O in the second; two games run at once (`--threads`). Prints A's
//! wins, draws and losses and its score with a 95% Wilson interval.
//!
//! ```text
//! cargo run --release --example duel -- --a level5 --b ab-max --ms 100 --games 400 --openings 2
//! cargo run --release --example duel -- --a level5 --b old5 --depth 3 --ms 100 --games 60
//! cargo run --release --example duel -- --a level5:c=0.8,solver=0 --b puct-max --games 40
//! ```
//!
//! Players:
//! - `level1` … `level5`: our levels, thinking `--ms` a move (their
//!   iteration bounds still apply); `old5`: level 5 as it was before the
//!   strength work of issue 22 ([`Settings::baseline`]). Either may take
//!   overrides after a colon: `c=0.8` (exploration), `tactics=0|1`,
//!   `solver=0|1`, `playout=random|decisive|greedy|careful`, `iters=N`, `reuse=0|1`, `prior=N`
//!   (keep the search tree between moves: on for the levels, off for `old5`).
//! - `ab-NAME`: their alpha-beta preset NAME (`beginner`, `easy`, `medium`,
//!   `hard`, `expert`, `max`); `puct-NAME`: their learned-policy PUCT
//!   preset. `max` thinks `--ms` a move with its node or simulation limit
//!   lifted; the lower presets keep their limits and think at most `--ms`.
//!   Depth 2 only.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ai_ultimate_tictactoe as other;
use uttt::cli::selfplay::{tally, wilson};
use uttt::cpu::{self, Budget, Level, Playout, Rng, Settings, openings::random_openings};
use uttt::rules::{Depth, Position, Seat, Square, Status};

/// One side of the duel.
#[derive(Clone, Debug)]
enum Player {
    /// Our search with these settings (the budget's time is set per move).
    Ours { name: String, settings: OurSettings },
    /// Their alpha-beta with these options.
    AlphaBeta {
        name: String,
        options: other::SearchOptions,
    },
    /// Their PUCT with these options.
    Puct {
        name: String,
        options: other::MctsOptions,
    },
}

/// Our settings, before the depth and the time are known.
#[derive(Clone, Copy, Debug)]
enum OurSettings {
    /// A level, with overrides.
    Level(Level, Overrides),
    /// [`Settings::baseline`], with overrides.
    Baseline(Overrides),
}

/// Overrides of our settings given after a colon.
#[derive(Clone, Copy, Debug, Default)]
struct Overrides {
    exploration: Option<f32>,
    tactics: Option<bool>,
    solver: Option<bool>,
    playout: Option<Playout>,
    iterations: Option<u32>,
    reuse: Option<bool>,
    prior: Option<u8>,
}

impl Overrides {
    fn parse(text: &str) -> Result<Overrides, String> {
        let mut o = Overrides::default();
        for item in text.split(',').filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, not {item:?}"))?;
            let flag = || match value {
                "0" | "false" | "off" => Ok(false),
                "1" | "true" | "on" => Ok(true),
                _ => Err(format!("expected 0 or 1 for {key}, not {value:?}")),
            };
            match key {
                "c" => o.exploration = Some(value.parse().map_err(|_| format!("bad c {value:?}"))?),
                "tactics" => o.tactics = Some(flag()?),
                "solver" => o.solver = Some(flag()?),
                "playout" => {
                    o.playout = Some(match value {
                        "random" => Playout::Random,
                        "decisive" => Playout::Decisive,
                        "greedy" => Playout::Greedy,
                        "careful" => Playout::Careful,
                        _ => {
                            return Err(format!(
                                "playout is random, decisive, greedy or careful, not {value:?}"
                            ));
                        }
                    });
                }
                "reuse" => o.reuse = Some(flag()?),
                "prior" => {
                    o.prior = Some(value.parse().map_err(|_| format!("bad prior {value:?}"))?);
                }
                "iters" => {
                    o.iterations = Some(value.parse().map_err(|_| format!("bad iters {value:?}"))?);
                }
                _ => return Err(format!("unknown override {key:?}")),
            }
        }
        Ok(o)
    }

    fn apply(self, settings: &mut Settings) {
        if let Some(c) = self.exploration {
            settings.exploration = c;
        }
        if let Some(t) = self.tactics {
            settings.tactics = t;
        }
        if let Some(s) = self.solver {
            settings.solver = s;
        }
        if let Some(p) = self.playout {
            settings.playout = p;
        }
        if let Some(n) = self.iterations {
            settings.budget.iterations = n;
        }
        if let Some(n) = self.prior {
            settings.prior = n;
        }
    }
}

fn preset_name(name: &str) -> &str {
    if name == "max" { "maximum" } else { name }
}

impl Player {
    fn parse(text: &str, ms: u32) -> Result<Player, String> {
        let name = text.to_owned();
        if let Some(preset) = text.strip_prefix("ab-") {
            let mut options = other::search_preset(preset_name(preset))
                .ok_or_else(|| format!("no alpha-beta preset {preset:?}"))?
                .options;
            if preset_name(preset) == "maximum" {
                options.node_limit = u64::MAX;
                options.soft_time_ms = ms;
            } else {
                options.soft_time_ms = options.soft_time_ms.min(ms);
            }
            return Ok(Player::AlphaBeta { name, options });
        }
        if let Some(preset) = text.strip_prefix("puct-") {
            let mut options = other::mcts_preset(preset_name(preset))
                .ok_or_else(|| format!("no PUCT preset {preset:?}"))?
                .options;
            if preset_name(preset) == "maximum" {
                options.max_simulations = u32::MAX;
                options.soft_time_ms = ms;
            } else {
                options.soft_time_ms = options.soft_time_ms.min(ms);
            }
            return Ok(Player::Puct { name, options });
        }
        let (base, rest) = text.split_once(':').unwrap_or((text, ""));
        let overrides = Overrides::parse(rest)?;
        let settings = if base == "old5" {
            OurSettings::Baseline(overrides)
        } else {
            let level = base
                .strip_prefix("level")
                .and_then(|n| n.parse().ok())
                .and_then(Level::new)
                .ok_or_else(|| format!("unknown player {text:?}"))?;
            OurSettings::Level(level, overrides)
        };
        Ok(Player::Ours { name, settings })
    }

    fn name(&self) -> &str {
        match self {
            Player::Ours { name, .. }
            | Player::AlphaBeta { name, .. }
            | Player::Puct { name, .. } => name,
        }
    }

    fn is_ours(&self) -> bool {
        matches!(self, Player::Ours { .. })
    }
}

/// A player's state during one game.
enum Engine {
    /// Our settings, and the searcher that keeps its tree between moves
    /// when tree reuse is on.
    Ours(Settings, Option<Box<cpu::Searcher>>),
    AlphaBeta(Box<other::Searcher>, other::SearchOptions),
    Puct(Box<other::MctsSearcher>, other::MctsOptions),
}

impl Engine {
    fn new(player: &Player, depth: Depth, ms: u32) -> Engine {
        match player {
            Player::Ours { settings, .. } => {
                // The levels keep their tree between moves; `old5` did not.
                let (mut s, overrides, reuse) = match *settings {
                    OurSettings::Level(level, o) => (
                        cpu::level_settings(&Position::new(depth), level, None),
                        o,
                        true,
                    ),
                    OurSettings::Baseline(o) => {
                        (Settings::baseline(Budget::iterations(u32::MAX)), o, false)
                    }
                };
                s.budget.time = Duration::from_millis(u64::from(ms));
                overrides.apply(&mut s);
                let searcher = overrides.reuse.unwrap_or(reuse).then(Box::default);
                Engine::Ours(s, searcher)
            }
            Player::AlphaBeta { options, .. } => {
                Engine::AlphaBeta(Box::new(other::Searcher::new()), *options)
            }
            Player::Puct { options, .. } => {
                Engine::Puct(Box::new(other::MctsSearcher::new()), *options)
            }
        }
    }

    fn choose(&mut self, ours: &Position, theirs: other::Position, seed: u64) -> Option<Square> {
        let depth = ours.depth();
        let from_theirs =
            |m: other::Move| Square::new(depth, usize::from(m.board() * 9 + m.cell()));
        match self {
            Engine::Ours(settings, searcher) => {
                let started = Instant::now();
                match searcher {
                    Some(searcher) => searcher.think(ours, settings, seed, &started).square,
                    None => cpu::think(ours, settings, seed, &started).square,
                }
            }
            Engine::AlphaBeta(searcher, options) => searcher
                .search(theirs, *options)
                .best_move
                .and_then(from_theirs),
            Engine::Puct(searcher, options) => {
                let mut options = *options;
                options.seed = seed;
                searcher
                    .search(theirs, options)
                    .best_move
                    .and_then(from_theirs)
            }
        }
    }
}

/// The move of `square` (depth 2) in the other crate's terms.
fn to_theirs(square: Square) -> other::Move {
    let index = square.index();
    // Depth 2 squares are below 81.
    other::Move::new((index / 9) as u8, (index % 9) as u8)
}

struct Args {
    a: Player,
    b: Player,
    ms: u32,
    games: u32,
    openings: u32,
    depth: Depth,
    threads: u32,
    seed: u64,
    progress: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut raw: Vec<(String, String)> = Vec::new();
    let mut progress = false;
    let mut it = std::env::args().skip(1);
    while let Some(key) = it.next() {
        if key == "--progress" {
            progress = true;
            continue;
        }
        let key = key
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {key:?}"))?
            .to_owned();
        let value = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
        raw.push((key, value));
    }
    let get = |key: &str| {
        raw.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let num = |key: &str, default: u64| -> Result<u64, String> {
        get(key).map_or(Ok(default), |v| {
            v.parse().map_err(|_| format!("bad --{key} {v:?}"))
        })
    };
    for (key, _) in &raw {
        if ![
            "a", "b", "ms", "games", "openings", "depth", "threads", "seed",
        ]
        .contains(&key.as_str())
        {
            return Err(format!("unknown option --{key}"));
        }
    }
    let ms = u32::try_from(num("ms", 100)?).map_err(|_| "--ms too large".to_owned())?;
    let depth = Depth::new(u8::try_from(num("depth", 2)?).unwrap_or(0))
        .map_err(|_| "--depth is 1..=4".to_owned())?;
    let a = Player::parse(get("a").ok_or("--a is required")?, ms)?;
    let b = Player::parse(get("b").ok_or("--b is required")?, ms)?;
    if depth.get() != 2 && !(a.is_ours() && b.is_ours()) {
        return Err("the other crate plays depth 2 only".to_owned());
    }
    Ok(Args {
        a,
        b,
        ms,
        games: u32::try_from(num("games", 100)?)
            .map_err(|_| "--games too large")?
            .max(1),
        openings: u32::try_from(num("openings", 2)?).map_err(|_| "--openings too large")?,
        depth,
        threads: u32::try_from(num("threads", 2)?)
            .map_err(|_| "--threads too large")?
            .max(1),
        seed: num("seed", 1)?,
        progress,
    })
}

/// One finished game, from A's side.
struct Played {
    game: u32,
    a_seat: Seat,
    status: Status,
    plies: u32,
    /// Thinking time and moves of A and of B.
    think: [(Duration, u32); 2],
}

impl Played {
    fn score(&self) -> f64 {
        match self.status.winner() {
            Some(seat) if seat == self.a_seat => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

fn play_game(args: &Args, opening: &[Square], game: u32) -> Played {
    let a_seat = if game.is_multiple_of(2) {
        Seat::X
    } else {
        Seat::O
    };
    let mut engines = [
        Engine::new(&args.a, args.depth, args.ms),
        Engine::new(&args.b, args.depth, args.ms),
    ];
    let mut seeds = Rng::new(args.seed ^ u64::from(game).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut ours = Position::new(args.depth);
    let mut theirs = other::Position::start();
    let mut think = [(Duration::ZERO, 0); 2];
    let play = |ours: &mut Position, theirs: &mut other::Position, square: Square| {
        if ours.play_square(square).is_err() {
            return false;
        }
        if args.depth.get() == 2 {
            match theirs.play(to_theirs(square)) {
                Ok(next) => *theirs = next,
                Err(_) => return false,
            }
        }
        true
    };
    for &square in opening {
        // Openings are legal lines (tested); both boards follow them.
        assert!(play(&mut ours, &mut theirs, square), "illegal opening");
    }
    while !ours.status().is_over() {
        let side = usize::from(ours.turn() != a_seat);
        let started = Instant::now();
        let square = engines[side].choose(&ours, theirs, seeds.next_u64());
        think[side].0 += started.elapsed();
        think[side].1 += 1;
        let legal = square.is_some_and(|sq| play(&mut ours, &mut theirs, sq));
        if !legal {
            eprintln!(
                "game {game}: {} played an illegal move {square:?}",
                [&args.a, &args.b][side].name()
            );
            let status = Status::Won(ours.turn().other());
            return Played {
                game,
                a_seat,
                status,
                plies: ours.ply(),
                think,
            };
        }
    }
    Played {
        game,
        a_seat,
        status: ours.status(),
        plies: ours.ply(),
        think,
    }
}

fn summary(args: &Args, results: &[Played], wall: Duration) -> String {
    let tally = |seat| tally(results.iter().map(|p| (p.a_seat, p.status.winner())), seat);
    let [w, d, l] = tally(None);
    let n = results.len() as f64;
    let score = (f64::from(w) + f64::from(d) / 2.0) / n.max(1.0);
    let (low, high) = wilson(score, n);
    let [xw, xd, xl] = tally(Some(Seat::X));
    let [ow, od, ol] = tally(Some(Seat::O));
    let mean_ms = |side: usize| {
        let (t, m) = results.iter().fold((Duration::ZERO, 0), |(t, m), p| {
            (t + p.think[side].0, m + p.think[side].1)
        });
        t.as_secs_f64() * 1e3 / f64::from(m.max(1))
    };
    let plies: u32 = results.iter().map(|p| p.plies).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A = {} vs B = {}, depth {}, {} ms a move, {} games, {} opening plies, seed {}",
        args.a.name(),
        args.b.name(),
        args.depth.get(),
        args.ms,
        results.len(),
        args.openings,
        args.seed
    );
    let _ = writeln!(
        out,
        "A: W {w} D {d} L {l}: score {:.1}% (95% Wilson {:.1}%–{:.1}%)",
        100.0 * score,
        100.0 * low,
        100.0 * high
    );
    let _ = writeln!(
        out,
        "A as X: {xw}/{xd}/{xl}, A as O: {ow}/{od}/{ol} (W/D/L)"
    );
    let _ = writeln!(
        out,
        "mean {:.1} plies; thinking a move: A {:.1} ms, B {:.1} ms; {:.0} s in all",
        f64::from(plies) / n.max(1.0),
        mean_ms(0),
        mean_ms(1),
        wall.as_secs_f64()
    );
    out
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("duel: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pairs = args.games.div_ceil(2) as usize;
    let openings = random_openings(args.depth, args.openings, pairs, args.seed);
    if openings.is_empty() {
        eprintln!("duel: no opening of {} plies", args.openings);
        return ExitCode::FAILURE;
    }
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::channel();
    let mut results = Vec::new();
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            let sender = sender.clone();
            let (next, args, openings) = (&next, &args, &openings);
            scope.spawn(move || {
                loop {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    let Ok(game) = u32::try_from(game) else { break };
                    if game >= args.games {
                        break;
                    }
                    let opening = &openings[(game / 2) as usize % openings.len()];
                    if sender.send(play_game(args, opening, game)).is_err() {
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
                eprintln!(
                    "game {:>4}: A is {}, {result} after {} plies",
                    played.game, played.a_seat, played.plies
                );
            }
            results.push(played);
        }
    });
    results.sort_by_key(|p| p.game);
    print!("{}", summary(&args, &results, started.elapsed()));
    ExitCode::SUCCESS
}
