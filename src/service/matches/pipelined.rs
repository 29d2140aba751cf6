//! A player's move over the pipelined connections (`store::pipelined`):
//! [`play::play_quick`] on the row as this instance last wrote it, if it
//! is remembered, else on a fresh read, then the guarded write. Nearly
//! every move needs no more. One that does (a possible safe retry, a lapsed
//! clock, the end of a rated or tournament game), or whose row changed
//! between the read and the write, is played by [`play::play`] under the
//! row's lock on the pool's connections, as is every move when the
//! pipeline has no connection to give.

use crate::metrics::Metrics;
use crate::store::matches::MatchRow;
use crate::store::pipelined::{Guard, Lease, Pipeline};
use crate::time::Millis;

use super::super::{Error, Result};
use super::play::{self, Choice, MoveOutcome, Quick};
use super::record::{Controller, MatchRecord, PlayerId};

/// One move to judge: who plays what, when.
pub(super) struct Move<'a> {
    /// The mover.
    pub player: &'a PlayerId,
    /// The ply the mover saw.
    pub ply: u32,
    /// The square.
    pub choice: &'a Choice,
    /// The lag the mover's client reported.
    pub lag: Option<Millis>,
    /// The server's time of the move.
    pub now: Millis,
}

/// What a guarded write of a judged move came to.
enum Written {
    /// Written: the move's outcome (boxed: the other variants are empty).
    Done(Box<Result<MoveOutcome>>),
    /// The row had changed: nothing written.
    Stale,
    /// The connection was lost: whether it was written is unknown.
    Unknown,
}

/// Plays `mv` on match `id` over the pipeline; `None` when it is for
/// [`play::play`] to play (nothing was written then).
pub(super) async fn play(
    pipeline: &Pipeline,
    metrics: &Metrics,
    id: &str,
    mv: &Move<'_>,
) -> Option<Result<MoveOutcome>> {
    if pipeline.is_closed() {
        // The server is stopping: its moves take the pool's connections.
        return None;
    }
    let mut lease = match pipeline.lease().await {
        Ok(lease) => lease,
        Err(e) => {
            tracing::warn!(error = %e, "no pipelined connection; the move takes the pool's");
            return None;
        }
    };
    // The remembered row is a guess: only its write tells it was right. A
    // refusal is judged again on a fresh read. A move that needs more than
    // the row goes to the locked path at once, which reads the row itself:
    // whatever the row now is, that path judges it right.
    if let Some(mut row) = pipeline.recall(id) {
        let guard = Guard::of(&row);
        match judge(&mut row, mv) {
            Ok(Quick::Write(stored)) => {
                match write(&mut lease, pipeline, &stored, row, &guard).await {
                    Written::Done(outcome) => {
                        metrics.count("moves_remembered");
                        return Some(*outcome);
                    }
                    Written::Stale => {}
                    Written::Unknown => return None,
                }
            }
            Ok(Quick::Slow) => return None,
            Err(_) => {}
        }
    }
    let mut row = match lease.read(id).await {
        Ok(Some(found)) => found,
        Ok(None) => return Some(Err(Error::NotFound("match"))),
        Err(e) => {
            tracing::warn!(error = %e, "a pipelined read failed; the move takes the pool's connections");
            return None;
        }
    };
    let guard = Guard::of(&row);
    let read = row.clone();
    match judge(&mut row, mv) {
        Err(refusal) => {
            // Judged on it, the next move need not read it again (a refused
            // move, played out of turn, say, took the remembered row).
            remember(pipeline, &read);
            Some(Err(refusal))
        }
        Ok(Quick::Slow) => None,
        Ok(Quick::Write(stored)) => match write(&mut lease, pipeline, &stored, row, &guard).await {
            Written::Done(outcome) => Some(*outcome),
            // The row changed after the read: judge the move again, locked.
            // Lost: judged again, a written move is a safe retry, answered with its state.
            Written::Stale | Written::Unknown => None,
        },
    }
}

fn judge(row: &mut MatchRow, mv: &Move<'_>) -> Result<Quick> {
    play::play_quick(row, mv.player, mv.ply, mv.choice, mv.lag, mv.now)
}

/// Writes the move `stored` judged on `row` (as it was when `guard` was
/// taken), and remembers the row written when its next move is a player's.
async fn write(
    lease: &mut Lease<'_>,
    pipeline: &Pipeline,
    stored: &crate::store::matches::MoveRow,
    row: MatchRow,
    guard: &Guard,
) -> Written {
    match lease.write(stored, &row, guard).await {
        Ok(Some(seating)) => {
            remember(pipeline, &row);
            Written::Done(Box::new(
                play::snapshot_without_ratings(row, seating).map(MoveOutcome::Applied),
            ))
        }
        Ok(None) => Written::Stale,
        Err(e) => {
            tracing::warn!(error = %e, "a pipelined write's connection failed; the move takes the pool's");
            Written::Unknown
        }
    }
}

/// Remembers `row`, as committed (written or read just now), for the next
/// move of its match when that move is a player's. (A CPU's turn is written by a CPU worker,
/// which would leave the remembered row stale.)
pub(super) fn remember(pipeline: &Pipeline, row: &MatchRow) {
    let players_turn = !row.awaiting_cpu
        && row
            .to_move_seat()
            .is_some_and(|seat| row.controller(seat) == Controller::Human);
    if players_turn && row.is_active() {
        pipeline.remember(row.clone());
    }
}
