//! A player's move over the pipelined connections (`store::pipelined`):
//! the locked read, [`play::play_quick`] on the row, and the two writes.
//! Nearly every move needs no more. One that does (a possible safe retry, a
//! lapsed clock, a game it ends) is rolled back and played by [`play::play`]
//! on the pool's connections, as is every move when the pipeline has no
//! connection to give.

use crate::store::pipelined::Pipeline;
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
    let (mut row, seating) = match lease.begin_locked(id).await {
        Ok(Some(found)) => found,
        Ok(None) => return Some(refuse(&mut lease, Error::NotFound("match")).await),
        Err(e) => {
            tracing::warn!(error = %e, "a pipelined read failed; the move takes the pool's connections");
            return None;
        }
    };
    let read = row.version;
    match play::play_quick(&mut row, player, ply, choice, lag, now) {
        Err(refusal) => Some(refuse(&mut lease, refusal).await),
        Ok(Quick::Slow) => {
            if let Err(e) = lease.rollback().await {
                tracing::warn!(error = %e, "a pipelined rollback failed");
            }
            None
        }
        Ok(Quick::Write(stored)) => match lease.write_and_commit(&stored, &row, read).await {
            Ok(true) => Some(play::active_snapshot(row, seating).map(MoveOutcome::Applied)),
            // The row changed after the read: judge the move again.
            Ok(false) => None,
            Err(e) => Some(Err(e.into())),
        },
    }
}

/// Ends the read's transaction and answers with `refusal`.
async fn refuse(
    lease: &mut crate::store::pipelined::Lease<'_>,
    refusal: Error,
) -> Result<MoveOutcome> {
    if let Err(e) = lease.rollback().await {
        tracing::warn!(error = %e, "a pipelined rollback failed");
    }
    Err(refusal)
}
