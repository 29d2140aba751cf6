//! Engine analysis of a played match: the CPU evaluates every position, and
//! each move is judged by the winning chance it gave away.
//!
//! Pure, like the rest of the CPU: positions, budgets and seeds come in,
//! numbers come out. The worker that runs it over stored matches is
//! `worker::analysis`.
//!
//! - A **winning chance** is in 0..=1 and counts a draw as half a win: the
//!   search's mean result of its best move (1 win, ½ draw, 0 loss), exact
//!   once the solver proved it. `win_x` is X's chance before a move.
//! - The **loss** of a move is the mover's chance with the best move minus
//!   their chance after the move played (0 when the move played is the best
//!   one, never below 0).
//! - The **judgement** follows the loss, as Lichess does with its winning
//!   chances: the engine's move is `best`; otherwise a loss below
//!   [`INACCURACY`] (0.10) is `good`, below [`MISTAKE`] (0.20) an
//!   `inaccuracy`, below [`BLUNDER`] (0.30) a `mistake`, and from 0.30 on a
//!   `blunder` (such as a move that lets the opponent win at once in an
//!   even position).
//! - The **accuracy** of a side (0..=100) is the mean over its moves of
//!   Lichess's move-accuracy curve `103.1668 · e^(−4.354 · loss) − 3.1668`
//!   (its `−0.04354` per percentage point of winning chance, with loss in
//!   0..=1), clamped to 0..=100: 100 for a move that loses nothing, about 64
//!   at a loss of 0.10, 25 at 0.30, 0 from 0.80 on. A side that made no
//!   move has accuracy 100.

use crate::rules::{Depth, Position, Seat, Square};

use super::budget::{Budget, Stopwatch};
use super::mcts::{self, Evaluation, Settings};

/// A loss of winning chance from which a move is an inaccuracy.
pub const INACCURACY: f32 = 0.10;
/// A loss of winning chance from which a move is a mistake.
pub const MISTAKE: f32 = 0.20;
/// A loss of winning chance from which a move is a blunder.
pub const BLUNDER: f32 = 0.30;

/// How good a move was, by the winning chance it lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Judgement {
    /// The engine's own move.
    Best,
    /// Lost less than [`INACCURACY`].
    Good,
    /// Lost at least [`INACCURACY`], less than [`MISTAKE`].
    Inaccuracy,
    /// Lost at least [`MISTAKE`], less than [`BLUNDER`].
    Mistake,
    /// Lost at least [`BLUNDER`].
    Blunder,
}

impl Judgement {
    /// Every judgement, best first.
    pub const ALL: [Judgement; 5] = [
        Judgement::Best,
        Judgement::Good,
        Judgement::Inaccuracy,
        Judgement::Mistake,
        Judgement::Blunder,
    ];

    /// The judgement of a move that lost `loss` of winning chance;
    /// `engine_move` when it is the move the engine would have played.
    #[must_use]
    pub fn of(loss: f32, engine_move: bool) -> Judgement {
        if engine_move {
            Judgement::Best
        } else if loss >= BLUNDER {
            Judgement::Blunder
        } else if loss >= MISTAKE {
            Judgement::Mistake
        } else if loss >= INACCURACY {
            Judgement::Inaccuracy
        } else {
            Judgement::Good
        }
    }

    /// The name clients read: `best`, `good`, `inaccuracy`, `mistake`, `blunder`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Judgement::Best => "best",
            Judgement::Good => "good",
            Judgement::Inaccuracy => "inaccuracy",
            Judgement::Mistake => "mistake",
            Judgement::Blunder => "blunder",
        }
    }
}

/// What the analysis keeps of one position: enough to judge the move played
/// from it and the one played into it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionEval {
    /// The side to move's winning chance with the best move (0..=1, draws
    /// half); for a finished match, the result for the side that would move.
    pub win: f32,
    /// The best move; `None` when the match is over.
    pub best: Option<Square>,
}

impl From<Evaluation> for PositionEval {
    fn from(eval: Evaluation) -> PositionEval {
        PositionEval {
            win: eval.value.clamp(0.0, 1.0),
            best: eval.square,
        }
    }
}

/// Evaluates `position` for its side to move within `budget` with the
/// levels' search (UCT, one-move tactics, the solver).
///
/// Deterministic for a given seed when the iteration bound is what stops it.
pub fn evaluate(
    position: &Position,
    budget: Budget,
    seed: u64,
    watch: &dyn Stopwatch,
) -> Evaluation {
    let settings = Settings::with_budget(budget);
    match position {
        Position::D1(tree) => mcts::evaluate(tree, &settings, seed, watch),
        Position::D2(tree) => mcts::evaluate(tree, &settings, seed, watch),
        Position::D3(tree) => mcts::evaluate(&**tree, &settings, seed, watch),
        Position::D4(tree) => mcts::evaluate(&**tree, &settings, seed, watch),
    }
}

/// The analysis of one move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlyReview {
    /// Moves before this one.
    pub ply: u32,
    /// Who moved.
    pub seat: Seat,
    /// The move played.
    pub square: Square,
    /// X's winning chance before the move.
    pub win_x: f32,
    /// The engine's move.
    pub best: Square,
    /// The mover's winning chance with the engine's move.
    pub best_win: f32,
    /// The mover's winning chance after the move played.
    pub played_win: f32,
    /// `best_win − played_win`, at least 0; 0 when the move is the engine's.
    pub loss: f32,
    /// The judgement of the loss.
    pub judgement: Judgement,
}

/// The analysis of a match (or of its first plies, while it runs).
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    /// One entry per move judged, in order.
    pub plies: Vec<PlyReview>,
    /// X's accuracy, 0..=100.
    pub accuracy_x: f32,
    /// O's accuracy, 0..=100.
    pub accuracy_o: f32,
}

/// The accuracy (0..=100) of a move that lost `loss` of winning chance.
#[must_use]
pub fn move_accuracy(loss: f32) -> f32 {
    (103.166_8 * (-4.354 * loss.clamp(0.0, 1.0)).exp() - 3.166_8).clamp(0.0, 100.0)
}

/// The mean move accuracy of `losses`; 100 when there are none.
#[must_use]
pub fn accuracy(losses: impl IntoIterator<Item = f32>) -> f32 {
    let (sum, count) = losses.into_iter().fold((0.0_f32, 0_u32), |(sum, n), loss| {
        (sum + move_accuracy(loss), n + 1)
    });
    if count == 0 {
        100.0
    } else {
        (sum / count as f32).clamp(0.0, 100.0)
    }
}

/// The seat that plays move `ply` (X moves first).
#[must_use]
pub fn seat_of_ply(ply: usize) -> Seat {
    if ply.is_multiple_of(2) {
        Seat::X
    } else {
        Seat::O
    }
}

/// Judges `moves` from the evaluations of the positions before them:
/// `evals[k]` is the position before move `k` (and `evals[moves.len()]` the
/// final one). Move `k` is judged once `evals[k + 1]` is there, so a prefix
/// of the evaluations judges a prefix of the moves.
#[must_use]
pub fn review(moves: &[Square], evals: &[PositionEval]) -> Review {
    let mut plies = Vec::with_capacity(moves.len());
    for (ply, pair) in evals.windows(2).enumerate().take(moves.len()) {
        let (before, after) = (pair[0], pair[1]);
        let square = moves[ply];
        let seat = seat_of_ply(ply);
        let best = before.best.unwrap_or(square);
        let best_win = before.win.clamp(0.0, 1.0);
        let played_win = (1.0 - after.win).clamp(0.0, 1.0);
        let engine_move = best == square;
        let loss = if engine_move {
            0.0
        } else {
            (best_win - played_win).max(0.0)
        };
        plies.push(PlyReview {
            ply: u32::try_from(ply).unwrap_or(u32::MAX),
            seat,
            square,
            win_x: if seat == Seat::X {
                best_win
            } else {
                1.0 - best_win
            },
            best,
            best_win,
            played_win,
            loss,
            judgement: Judgement::of(loss, engine_move),
        });
    }
    let side = |seat| {
        accuracy(
            plies
                .iter()
                .filter(move |p: &&PlyReview| p.seat == seat)
                .map(|p| p.loss),
        )
    };
    Review {
        accuracy_x: side(Seat::X),
        accuracy_o: side(Seat::O),
        plies,
    }
}

/// A stopwatch that never moves: searches bound by iterations only.
struct Frozen;

impl Stopwatch for Frozen {
    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// Evaluates every position of the match `moves` at `depth` with
/// `iterations` each (position `k` seeded with `seed + k`) and judges every
/// move: deterministic, for tools and tests (the worker evaluates position
/// by position within a time budget instead, storing its progress).
///
/// # Errors
/// An illegal move list: the index of the first illegal move.
pub fn analyse(
    depth: Depth,
    moves: &[Square],
    iterations: u32,
    seed: u64,
) -> Result<Review, usize> {
    let budget = Budget::iterations(iterations);
    let mut position = Position::new(depth);
    let mut evals = Vec::with_capacity(moves.len() + 1);
    for (ply, &square) in moves.iter().enumerate() {
        evals.push(evaluate(&position, budget, seed.wrapping_add(ply as u64), &Frozen).into());
        position.play_square(square).map_err(|_| ply)?;
    }
    let last = seed.wrapping_add(moves.len() as u64);
    evals.push(evaluate(&position, budget, last, &Frozen).into());
    Ok(review(moves, &evals))
}

#[cfg(test)]
mod tests;
