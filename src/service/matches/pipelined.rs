//! A player's move over the pipelined connections (`store::pipelined`):
//! the read, [`play::play_quick`] on the row, and the guarded write. Nearly
//! every move needs no more. One that does (a possible safe retry, a lapsed
//! clock, a game it ends), or whose row changed between the read and the
//! write, is played by [`play::play`] under the row's lock on the pool's
//! connections, as is every move when the pipeline has no connection to give.

use crate::store::pipelined::{Guard, Pipeline};
use crate::time::Millis;

use super::super::{Error, Result};
use super::play::{self, Choice, MoveOutcome, Quick};
use super::record::PlayerId;

/// Plays `player`'s move on match `id` over the pipeline; `None` when it
/// is for [`play::play`] to play (nothing was written then).
pub(super) async fn play(
    pipeline: &Pipeline,
    id: &str,
    player: &PlayerId,
    ply: u32,
    choice: &Choice,
    lag: Option<Millis>,
    now: Millis,
) -> Option<Result<MoveOutcome>> {
    let mut lease = match pipeline.lease().await {
        Ok(lease) => lease,
        Err(e) => {
            tracing::warn!(error = %e, "no pipelined connection; the move takes the pool's");
            return None;
        }
    };
    let (mut row, seating) = match lease.read(id).await {
        Ok(Some(found)) => found,
        Ok(None) => return Some(Err(Error::NotFound("match"))),
        Err(e) => {
            tracing::warn!(error = %e, "a pipelined read failed; the move takes the pool's connections");
            return None;
        }
    };
    let guard = Guard::of(&row);
    match play::play_quick(&mut row, player, ply, choice, lag, now) {
        Err(refusal) => Some(Err(refusal)),
        Ok(Quick::Slow) => None,
        Ok(Quick::Write(stored)) => match lease.write(&stored, &row, &guard).await {
            Ok(true) => Some(play::active_snapshot(row, seating).map(MoveOutcome::Applied)),
            // The row changed after the read: judge the move again, locked.
            Ok(false) => None,
            // Whether it was written is unknown: judged again, a written
            // move is a safe retry, answered with its state.
            Err(e) => {
                tracing::warn!(error = %e, "a pipelined write's connection failed; the move takes the pool's");
                None
            }
        },
    }
}
