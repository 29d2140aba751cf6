//! The challenge worker: expires pending challenges nobody answered within
//! their 60 seconds and tells both players (`challenge_expired`). Reading a
//! challenge past its time also shows it expired, so this only has to be
//! timely, not exact.

use crate::service::{Context, Result, challenges};

/// Challenges expired per transaction.
const CHUNK: i64 = 200;

/// Expires every pending challenge whose time ran out; returns how many.
///
/// # Errors
/// Store failures.
pub async fn tick(ctx: &Context) -> Result<usize> {
    let mut total = 0;
    loop {
        let n = challenges::expire_due(ctx, CHUNK).await?;
        total += n;
        if n < CHUNK as usize {
            return Ok(total);
        }
    }
}
