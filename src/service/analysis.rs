//! Engine analysis of finished matches: asking for one and reading it. The
//! work itself is `worker::analysis`; the judging is the pure
//! `cpu::analysis`.
//!
//! An analysis is stored once per match (`analyses`): a second request for
//! a match that has one gets it as it is. What is stored is the evaluation
//! of each position done so far; plies, judgements and accuracies are
//! derived from it on reading, so progress shows as it is made.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::cpu::analysis::{PositionEval, review};
use crate::rules::{Depth, Square};
use crate::store::analyses::{self as store, AnalysisRow, DONE, QUEUED};
use crate::store::matches as match_store;

use super::accounts::{Player, Role};
use super::matches::record::{MatchRecord, seat_str};
use super::{ConflictCode, Context, Error, Result};

/// The stored evaluation of one position (compact: stored for every ply).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StoredEval {
    /// The side to move's winning chance, 0..=1.
    pub w: f32,
    /// The best move's flat square index (`None` when the match is over).
    pub b: Option<u16>,
}

impl StoredEval {
    /// The stored form of an evaluation.
    pub fn new(eval: PositionEval) -> StoredEval {
        StoredEval {
            // Three decimals are all a client is shown.
            w: (eval.win * 1000.0).round() / 1000.0,
            b: eval
                .best
                .and_then(|square| u16::try_from(square.index()).ok()),
        }
    }

    fn eval(self, depth: Depth) -> PositionEval {
        PositionEval {
            win: self.w,
            best: self.b.and_then(|b| Square::new(depth, usize::from(b))),
        }
    }
}

/// Parses the stored evaluations.
///
/// # Errors
/// `Internal` for text that is not a list of evaluations (a corrupt row).
pub fn parse_result(text: &str) -> Result<Vec<StoredEval>> {
    serde_json::from_str(text)
        .map_err(|e| Error::Internal(format!("stored analysis is not readable: {e}")))
}

/// Renders evaluations for storage.
pub fn render_result(evals: &[StoredEval]) -> String {
    // Serialising plain numbers cannot fail.
    serde_json::to_string(evals).unwrap_or_else(|_| "[]".to_owned())
}

/// How far an analysis has come.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Progress {
    /// Moves judged so far.
    pub plies_done: u32,
    /// Moves of the match.
    pub plies_total: u32,
}

/// The analysis of one move.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlyAnalysis {
    /// Moves before this one.
    pub ply: u32,
    /// `x` or `o`: who moved.
    pub seat: &'static str,
    /// The move played, root first.
    #[schema(example = json!([4, 0]))]
    pub address: Vec<u8>,
    /// X's winning chance before the move, 0..=1 (a draw counts half).
    pub win_x: f64,
    /// The CPU's move in that position.
    #[schema(example = json!([4, 4]))]
    pub best: Vec<u8>,
    /// The mover's winning chance with the CPU's move, 0..=1.
    pub best_win: f64,
    /// The mover's winning chance lost by the move played: `best_win` minus
    /// their chance after it, at least 0; 0 when it is the CPU's move.
    pub loss: f64,
    /// `best` (the CPU's move), `good` (loss < 0.10), `inaccuracy` (< 0.20),
    /// `mistake` (< 0.30) or `blunder`.
    #[schema(example = "good")]
    pub judgement: &'static str,
}

/// Each side's accuracy.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Accuracy {
    /// X's accuracy, 0..=100.
    pub x: f64,
    /// O's accuracy, 0..=100.
    pub o: f64,
}

/// An analysis as clients read it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AnalysisView {
    /// The match.
    pub match_id: String,
    /// `queued`, `running` or `done`.
    #[schema(example = "done")]
    pub status: String,
    /// Moves judged so far, of all.
    pub progress: Progress,
    /// The moves judged so far, in order.
    pub plies: Vec<PlyAnalysis>,
    /// Each side's accuracy over its moves judged so far (100 for a side
    /// with none): the mean of `103.1668·e^(−4.354·loss) − 3.1668`, clamped to 0..=100.
    pub accuracy: Accuracy,
}

/// A queued analysis.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Queued {
    /// `queued`, or `running` when a worker already has it.
    #[schema(example = "queued")]
    pub status: String,
    /// Analyses a worker takes before this one (0: next, or running).
    pub position: u32,
}

/// What a request for an analysis found.
#[derive(Debug, Clone)]
pub enum Requested {
    /// Waiting or running.
    Pending(Queued),
    /// Done before: the analysis itself.
    Done(Box<AnalysisView>),
}

fn round3(value: f32) -> f64 {
    (f64::from(value) * 1000.0).round() / 1000.0
}

fn round1(value: f32) -> f64 {
    (f64::from(value) * 10.0).round() / 10.0
}

/// Renders a stored analysis of a match at `depth` with `moves`.
///
/// # Errors
/// A corrupt row.
pub fn render(row: &AnalysisRow, depth: Depth, moves: &[Square]) -> Result<AnalysisView> {
    let evals: Vec<PositionEval> = parse_result(&row.result)?
        .into_iter()
        .map(|e| e.eval(depth))
        .collect();
    let reviewed = review(moves, &evals);
    let address = |square: Square| square.to_address(depth).coords().to_vec();
    let plies = reviewed
        .plies
        .iter()
        .map(|p| PlyAnalysis {
            ply: p.ply,
            seat: seat_str(p.seat),
            address: address(p.square),
            win_x: round3(p.win_x),
            best: address(p.best),
            best_win: round3(p.best_win),
            loss: round3(p.loss),
            judgement: p.judgement.as_str(),
        })
        .collect();
    Ok(AnalysisView {
        match_id: row.match_id.clone(),
        status: row.status.clone(),
        progress: Progress {
            plies_done: u32::try_from(row.plies_done).unwrap_or(0),
            plies_total: u32::try_from(row.plies_total).unwrap_or(0),
        },
        plies,
        accuracy: Accuracy {
            x: round1(reviewed.accuracy_x),
            o: round1(reviewed.accuracy_o),
        },
    })
}

/// Loads a match's analysis row with the match's depth and moves.
async fn load(ctx: &Context, id: String) -> Result<(match_store::MatchRow, Option<AnalysisRow>)> {
    ctx.db
        .run(move |conn| -> Result<_> {
            let row = match_store::get(conn, &id)?.ok_or(Error::NotFound("match"))?;
            let analysis = store::get(conn, &id)?;
            Ok((row, analysis))
        })
        .await
}

/// Asks for the analysis of a finished match, as one of its players or an
/// admin: queues it unless it exists (an analysis is computed once).
///
/// # Errors
/// `NotFound`; `Forbidden` for anyone else; `match_not_finished` while it is
/// played; `RateLimited` when the queue (shared by all instances) is full.
pub async fn request(ctx: &Context, player: &Player, id: String) -> Result<Requested> {
    let (row, _) = load(ctx, id).await?;
    if row.seat_of(&player.id).is_none() && player.role != Role::Admin {
        return Err(Error::Forbidden(
            "only the match's players or an admin may ask for its analysis",
        ));
    }
    if row.is_active() {
        return Err(Error::conflict(
            ConflictCode::MatchNotFinished,
            "the match is still being played; ask for its analysis once it is over",
            Some(("match_id", row.id.to_string())),
        ));
    }
    let (now, limit) = (ctx.time.now_ms(), i64::from(ctx.config.analysis.queue));
    let (match_id, plies, by) = (row.id.to_string(), row.ply, player.id.clone());
    // Two requests at once: the second insert fails on the key and its
    // retry finds the first one's row.
    let mut attempt = 0;
    let found = loop {
        let (match_id, by) = (match_id.clone(), by.clone());
        let outcome = ctx
            .db
            .write(move |conn| -> Result<AnalysisRow> {
                if let Some(existing) = store::get(conn, &match_id)? {
                    return Ok(existing);
                }
                if store::count_waiting(conn)? >= limit {
                    return Err(Error::RateLimited {
                        retry_after_secs: 30,
                    });
                }
                let row = AnalysisRow {
                    match_id,
                    status: QUEUED.to_owned(),
                    plies_done: 0,
                    plies_total: plies,
                    result: "[]".to_owned(),
                    requested_by: Some(by),
                    claimed_by: None,
                    claimed_at: None,
                    created_at: now,
                    updated_at: now,
                };
                store::insert(conn, &row)?;
                Ok(row)
            })
            .await;
        match outcome {
            Err(Error::Internal(_)) if attempt == 0 => attempt += 1,
            other => break other?,
        }
    };
    if found.status == DONE {
        let (_, moves) = row.decode()?;
        return Ok(Requested::Done(Box::new(render(
            &found,
            row.depth()?,
            &moves,
        )?)));
    }
    ctx.signals.analysis.notify_one();
    let position = if found.status == QUEUED {
        let found = found.clone();
        ctx.db
            .run(move |conn| store::queued_before(conn, &found))
            .await?
    } else {
        0
    };
    Ok(Requested::Pending(Queued {
        status: found.status,
        position: u32::try_from(position).unwrap_or(u32::MAX),
    }))
}

/// The analysis of a match, as far as it has come.
///
/// # Errors
/// `NotFound` for an unknown match or one nobody asked to analyse.
pub async fn get(ctx: &Context, id: String) -> Result<AnalysisView> {
    let (row, analysis) = load(ctx, id).await?;
    let analysis = analysis.ok_or(Error::NotFound("analysis"))?;
    let (_, moves) = row.decode()?;
    render(&analysis, row.depth()?, &moves)
}
