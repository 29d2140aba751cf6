//! The analysis worker: evaluates every position of a finished match with
//! the CPU, one analysis at a time per instance, storing each position as it
//! is done (that is the progress clients see, and where another instance
//! carries on if this one stops: its lease lapses and the row is claimable
//! again).
//!
//! Live CPU moves come first: the worker does not start a position while
//! this instance is searching for one, and a search that starts meanwhile
//! cuts the position short (it is evaluated again afterwards).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::cpu::analysis::{self, PositionEval};
use crate::cpu::{Budget, Stopwatch};
use crate::rules::{Position, Square};
use crate::service::analysis::{StoredEval, parse_result, render_result};
use crate::service::matches::record::MatchRecord;
use crate::service::{Context, Error, Result, Signals};
use crate::store::analyses::{self as store};
use crate::store::matches as match_store;

/// How often the worker looks for queued analyses when nothing woke it.
pub const POLL_EVERY: Duration = Duration::from_secs(1);
/// How often it looks again whether live CPU moves are still being searched.
const YIELD_EVERY: Duration = Duration::from_millis(20);

/// An analysis this instance holds.
#[derive(Debug)]
pub struct Job {
    /// The match.
    pub match_id: String,
    moves: Vec<Square>,
    evals: Vec<StoredEval>,
    /// The position before move `evals.len()`.
    position: Position,
}

impl Job {
    /// Positions evaluated so far (the match has `moves + 1`).
    pub fn positions_done(&self) -> usize {
        self.evals.len()
    }

    /// Whether every position is evaluated.
    pub fn is_done(&self) -> bool {
        self.evals.len() > self.moves.len()
    }

    fn plies_done(&self) -> i32 {
        i32::try_from(self.evals.len().saturating_sub(1).min(self.moves.len())).unwrap_or(0)
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A position was evaluated and stored.
    Stored,
    /// A live CPU move started during the search: nothing stored, the
    /// position is evaluated again next step.
    Yielded,
    /// Another instance holds the analysis now (this one's lease lapsed).
    Lost,
}

/// A stopwatch that jumps to the end of any budget once a live CPU search
/// is running on this instance, remembering that it did.
struct Yielding {
    started: Instant,
    signals: Arc<Signals>,
    yielded: Cell<bool>,
}

impl Stopwatch for Yielding {
    fn elapsed(&self) -> Duration {
        if self.signals.cpu_searches.load(Ordering::SeqCst) > 0 {
            self.yielded.set(true);
            return Duration::MAX;
        }
        self.started.elapsed()
    }
}

/// Claims the oldest claimable analysis for this instance and loads its
/// match; `None` when there is none.
///
/// # Errors
/// Store failures; a corrupt match record.
pub async fn claim(ctx: &Context) -> Result<Option<Job>> {
    let (now, lease) = (ctx.time.now_ms(), lease_ms(ctx));
    let instance = ctx.instance.to_string();
    let claimed = ctx
        .db
        .write(move |conn| -> Result<_> {
            let Some(row) = store::claim(conn, &instance, now, lease)? else {
                return Ok(None);
            };
            let found = match_store::get(conn, &row.match_id)?;
            Ok(Some((row, found)))
        })
        .await?;
    let Some((row, found)) = claimed else {
        return Ok(None);
    };
    let found =
        found.ok_or_else(|| Error::Internal(format!("analysed match {} is gone", row.match_id)))?;
    let (_, moves) = found.decode()?;
    let depth = found.depth()?;
    let evals = parse_result(&row.result)?;
    let done = evals.len().min(moves.len() + 1);
    let position = Position::replay(depth, &moves[..done.min(moves.len())]).map_err(|e| {
        Error::Internal(format!(
            "analysed match {} does not replay: {e:?}",
            row.match_id
        ))
    })?;
    Ok(Some(Job {
        match_id: row.match_id,
        moves,
        evals: evals[..done].to_vec(),
        position,
    }))
}

fn lease_ms(ctx: &Context) -> i64 {
    i64::try_from(ctx.config.analysis.lease().as_millis()).unwrap_or(i64::MAX)
}

/// Evaluates the next position of `job` within the configured time and
/// stores it (the last one marks the analysis done).
///
/// # Errors
/// Store failures; a failed search task.
pub async fn step(ctx: &Context, job: &mut Job) -> Result<Step> {
    let Some(ply) = (!job.is_done()).then_some(job.evals.len()) else {
        return Ok(Step::Stored);
    };
    let position = job.position.clone();
    let budget = Budget {
        iterations: u32::MAX,
        time: ctx.config.analysis.per_position,
    };
    let seed = super::cpu::seed(&job.match_id, i32::try_from(ply).unwrap_or(i32::MAX));
    let signals = ctx.signals.clone();
    let searched = tokio::task::spawn_blocking(move || {
        let watch = Yielding {
            started: Instant::now(),
            signals,
            yielded: Cell::new(false),
        };
        let eval = analysis::evaluate(&position, budget, seed, &watch);
        (!watch.yielded.get()).then(|| PositionEval::from(eval))
    })
    .await
    .map_err(|e| Error::Internal(format!("analysis search failed: {e}")))?;
    let Some(eval) = searched else {
        return Ok(Step::Yielded);
    };
    job.evals.push(StoredEval::new(eval));
    if let Some(&square) = job.moves.get(ply) {
        job.position
            .play_square(square)
            .map_err(|e| Error::Internal(format!("analysed move {ply} is illegal: {e:?}")))?;
    }
    let (id, instance, now) = (
        job.match_id.clone(),
        ctx.instance.to_string(),
        ctx.time.now_ms(),
    );
    let (plies_done, result, done) = (job.plies_done(), render_result(&job.evals), job.is_done());
    let held = ctx
        .db
        .write(move |conn| {
            store::save_progress(conn, &id, &instance, plies_done, &result, done, now)
        })
        .await?;
    Ok(if held { Step::Stored } else { Step::Lost })
}

/// Waits while this instance searches for live CPU moves; false when the
/// instance is shutting down.
async fn wait_for_live_moves(ctx: &Context) -> bool {
    while ctx.signals.cpu_searches.load(Ordering::SeqCst) > 0 {
        if ctx.shutdown.is_triggered() {
            return false;
        }
        tokio::time::sleep(YIELD_EVERY).await;
    }
    !ctx.shutdown.is_triggered()
}

/// Claims one analysis and works on it until it is done, lost to another
/// instance, or the instance shuts down (another instance then takes it
/// over once the lease lapses); returns whether it claimed one.
///
/// # Errors
/// Store failures; a corrupt match record.
pub async fn tick(ctx: &Context) -> Result<bool> {
    let Some(mut job) = claim(ctx).await? else {
        return Ok(false);
    };
    while !job.is_done() {
        if !wait_for_live_moves(ctx).await {
            break;
        }
        if step(ctx, &mut job).await? == Step::Lost {
            tracing::info!(match_id = %job.match_id, "analysis taken over by another instance");
            break;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Depth;

    #[test]
    fn the_stopwatch_ends_the_search_once_a_live_move_is_searched() {
        let signals = Arc::new(Signals::default());
        let watch = Yielding {
            started: Instant::now(),
            signals: signals.clone(),
            yielded: Cell::new(false),
        };
        assert!(watch.elapsed() < Duration::from_secs(60));
        assert!(!watch.yielded.get());
        signals.cpu_searches.fetch_add(1, Ordering::SeqCst);
        assert_eq!(watch.elapsed(), Duration::MAX);
        assert!(watch.yielded.get());
        // A search under it stops at once, whatever its time budget.
        let position = Position::new(Depth::new(2).unwrap());
        let budget = Budget {
            iterations: u32::MAX,
            time: Duration::from_secs(3600),
        };
        let eval = analysis::evaluate(&position, budget, 1, &watch);
        assert_eq!(eval.iterations, 0);
    }
}
