//! What every event stream must respect besides its events: it ends when
//! the access token that opened it expires (with `retry`, so the client
//! reconnects with a fresh token) and when its session is revoked (logout or
//! a reused refresh token, announced through the broker), and it holds one
//! of its player's stream slots — at most `UTTT_STREAMS_PER_PLAYER` open
//! streams per player across all instances — while it is open.

use std::time::Duration;

use actix_web::web::Bytes;
use futures_util::StreamExt;

use super::problem::Problem;
use crate::broker::{Notice, SharedBroker, Subscription};
use crate::service::tokens::{Claims, wall_clock_secs};
use crate::service::{Context, Error, sessions};

/// How long a stream slot's lease lasts without renewal; a crashed
/// instance's streams stop counting after this.
const SLOT_LEASE: Duration = Duration::from_secs(45);
/// How often an open stream renews its slot.
const SLOT_RENEW: Duration = Duration::from_secs(15);
/// What a client refused a slot waits before trying again.
const FULL_RETRY_SECS: u64 = 5;

/// Sent when the token that opened the stream expires: reconnect (with a fresh token) in a second.
pub const EXPIRED_FRAME: &[u8] =
    b"retry: 1000\n: the access token expired; reconnect with a fresh one\n\n";
/// Sent when the stream's session is revoked: the client must log in again.
pub const REVOKED_FRAME: &[u8] = b"event: session_revoked\ndata: {}\n\n";

/// The slot set of a player's streams.
fn slot_key(player_id: &str) -> String {
    format!("streams:{player_id}")
}

/// Renews `slot` in the slot set `key` every `every`, for `lease` each time,
/// until the task is aborted. A task of its own, not a branch of the
/// stream's polling: a client that stops reading stops the polling but
/// still holds its connection, so its slot must go on counting.
fn spawn_renewal(
    broker: SharedBroker,
    key: String,
    slot: String,
    every: Duration,
    lease: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut renew = tokio::time::interval(every);
        renew.reset();
        loop {
            renew.tick().await;
            if let Err(err) = broker.acquire(&key, &slot, u32::MAX, lease).await {
                tracing::debug!(error = %err, "stream slot renewal failed");
            }
        }
    })
}

/// The obligations of one open stream (see the module documentation).
pub struct StreamGuard {
    ctx: Context,
    player_id: String,
    slot: String,
    session_id: String,
    expires_at: tokio::time::Instant,
    session: Subscription,
    renewal: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for StreamGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamGuard")
            .field("player_id", &self.player_id)
            .finish_non_exhaustive()
    }
}

impl StreamGuard {
    /// Checks that the token's session is live and takes one of the
    /// player's stream slots.
    ///
    /// # Errors
    /// 401 for a revoked session; 429 `rate_limited` when the player already
    /// has the most open streams allowed; 503 when the broker is down.
    pub async fn open(
        ctx: &Context,
        player_id: &str,
        claims: &Claims,
    ) -> Result<StreamGuard, Problem> {
        // Subscribe before checking, so a revocation in between is not missed.
        let session = sessions::subscribe(ctx, &claims.sid).await?;
        if sessions::is_revoked(ctx, &claims.sid).await? {
            return Err(Error::Unauthorized("the session of this token was ended").into());
        }
        let slot = crate::ids::record_id();
        let held = ctx
            .broker
            .acquire(
                &slot_key(player_id),
                &slot,
                ctx.config.caps.streams,
                SLOT_LEASE,
            )
            .await
            .map_err(Error::from)?;
        if !held {
            return Err(Error::RateLimited {
                retry_after_secs: FULL_RETRY_SECS,
            }
            .into());
        }
        let left_ms = (claims.exp.saturating_mul(1000))
            .saturating_sub(wall_clock_secs().saturating_mul(1000));
        let renewal = spawn_renewal(
            ctx.broker.clone(),
            slot_key(player_id),
            slot.clone(),
            SLOT_RENEW,
            SLOT_LEASE,
        );
        Ok(StreamGuard {
            ctx: ctx.clone(),
            player_id: player_id.to_owned(),
            slot,
            session_id: claims.sid.clone(),
            expires_at: tokio::time::Instant::now() + Duration::from_millis(left_ms),
            session,
            renewal,
        })
    }

    /// Resolves with the last frame to send when the stream must end: the
    /// token expired, or the session was revoked. Safe to drop and call
    /// again (every branch is cancel-safe).
    pub async fn ended(&mut self) -> Bytes {
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(self.expires_at) => {
                    return Bytes::from_static(EXPIRED_FRAME);
                }
                notice = self.session.next() => match notice {
                    Some(Notice::Message(_)) => return Bytes::from_static(REVOKED_FRAME),
                    // Announcements may have been lost: ask the database.
                    Some(Notice::Resync) => {
                        if sessions::is_revoked(&self.ctx, &self.session_id).await.unwrap_or(false) {
                            return Bytes::from_static(REVOKED_FRAME);
                        }
                    }
                    // The broker is going away; expiry still ends the stream.
                    None => {
                        tokio::time::sleep_until(self.expires_at).await;
                        return Bytes::from_static(EXPIRED_FRAME);
                    }
                },
            }
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.renewal.abort();
        // The slot goes back as soon as the stream is gone; if this cannot
        // run (no runtime at exit), its lease ends by itself.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let broker = self.ctx.broker.clone();
            let (key, slot) = (slot_key(&self.player_id), std::mem::take(&mut self.slot));
            handle.spawn(async move {
                if let Err(err) = broker.release_slot(&key, &slot).await {
                    tracing::debug!(error = %err, "stream slot release failed");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::memory::MemoryBroker;

    #[tokio::test]
    async fn a_slot_is_renewed_while_nobody_polls_its_stream() {
        let broker: SharedBroker = MemoryBroker::new();
        let (key, lease) = ("streams:p", Duration::from_secs(1));
        assert!(broker.acquire(key, "first", 1, lease).await.unwrap());
        let every = Duration::from_millis(100);
        let renewal = spawn_renewal(broker.clone(), key.into(), "first".into(), every, lease);
        // Well past the lease, with nothing polling a stream: still held.
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        let second = broker.acquire(key, "second", 1, lease).await.unwrap();
        assert!(!second, "the renewed slot still counts against the cap");
        // Once the stream is gone (the task aborted), the lease runs out.
        renewal.abort();
        tokio::time::sleep(Duration::from_millis(1_300)).await;
        assert!(broker.acquire(key, "second", 1, lease).await.unwrap());
    }
}
