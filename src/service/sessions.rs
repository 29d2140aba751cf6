//! Login sessions (refresh-token families) as event streams see them: a
//! stream belongs to the session of the access token that opened it, and
//! ends when that session is revoked (logout, or a reused refresh token),
//! told through the broker so it works whichever instance holds the stream.

use crate::broker::Subscription;
use crate::store::refresh_tokens;

use super::{Context, Result};

/// The channel on which a session's revocation is announced.
pub fn channel(session_id: &str) -> String {
    format!("session:{session_id}")
}

/// Tells every open stream of the session, on any instance, that it is
/// revoked. Best effort: a stream that misses it resynchronises (and checks
/// the database), and ends at its token's expiry anyway.
pub async fn announce_revoked(ctx: &Context, session_id: &str) {
    if let Err(err) = ctx
        .broker
        .publish(&channel(session_id), "revoked".into())
        .await
    {
        tracing::warn!(error = %err, "could not announce a revoked session");
    }
}

/// Subscribes to the revocation of a session.
///
/// # Errors
/// Broker failures.
pub async fn subscribe(ctx: &Context, session_id: &str) -> Result<Subscription> {
    Ok(ctx.broker.subscribe(&channel(session_id)).await?)
}

/// Whether the session was revoked.
///
/// # Errors
/// Store failures.
pub async fn is_revoked(ctx: &Context, session_id: &str) -> Result<bool> {
    let id = session_id.to_owned();
    Ok(ctx
        .db
        .run(move |conn| refresh_tokens::family_revoked(conn, &id))
        .await?)
}
