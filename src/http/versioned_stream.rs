//! One server-sent event stream of a versioned record (a match's state, a
//! tournament): the record on connect, then every newer version published on
//! its channel, in order, each as event `EVENT` with `id` = its version. A
//! resync notice (messages may have been lost) re-reads the record; comments
//! keep proxies from closing an idle stream; a shutdown or the end of the
//! token's session closes it with a frame telling the client what to do.

use std::collections::VecDeque;
use std::convert::Infallible;

use actix_web::HttpResponse;
use actix_web::web::{self, Bytes};
use futures_util::stream;

use super::events::{KEEP_ALIVE, RETRY_MS, SHUTDOWN_FRAME, sse_response};
use super::stream_guard::StreamGuard;
use crate::broker::{Notice, Subscription};
use crate::service::{Context, matches};

/// What a versioned stream shows, and how it reads it again after a resync.
pub(super) trait Source {
    /// The name of the stream's events.
    const EVENT: &'static str;

    /// The current record as `(version, JSON)`; `None` when it cannot be read
    /// now (the source logs why and the stream goes on).
    async fn current(&self, ctx: &Context) -> Option<(i32, String)>;
}

struct VersionedStream<S> {
    ctx: web::Data<Context>,
    source: S,
    subscription: Subscription,
    sent: i32,
    pending: VecDeque<Bytes>,
    keep_alive: tokio::time::Interval,
    closing: bool,
    guard: StreamGuard,
}

/// Streams `source` from `initial` on, skipping versions up to `sent` (the
/// client's `Last-Event-ID`).
pub(super) fn respond<S: Source + 'static>(
    ctx: web::Data<Context>,
    source: S,
    subscription: Subscription,
    guard: StreamGuard,
    sent: i32,
    initial: Option<(i32, String)>,
) -> HttpResponse {
    let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
    keep_alive.reset();
    let mut state = VersionedStream {
        ctx,
        source,
        subscription,
        sent,
        pending: VecDeque::from([Bytes::from(format!("retry: {RETRY_MS}\n\n"))]),
        keep_alive,
        closing: false,
        guard,
    };
    if let Some((version, json)) = initial {
        // A `Last-Event-ID` past the record's version is none this record
        // sent (a client that kept one id across matches, or a database
        // restored to an earlier point): start again from the current state,
        // or the stream would stay silent until the record caught up.
        if version < state.sent {
            state.sent = 0;
        }
        state.push(version, &json);
    }
    let body = stream::unfold(state, |mut s| async move {
        let bytes = s.next().await?;
        Some((Ok::<_, Infallible>(bytes), s))
    });
    sse_response(body)
}

impl<S: Source> VersionedStream<S> {
    fn frame(version: i32, json: &str) -> Bytes {
        Bytes::from(format!(
            "event: {}\nid: {version}\ndata: {json}\n\n",
            S::EVENT
        ))
    }

    fn push(&mut self, version: i32, json: &str) {
        if version > self.sent {
            self.sent = version;
            self.pending.push_back(Self::frame(version, json));
        }
    }

    /// Waits for the next bytes to send; `None` ends the stream.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(bytes) = self.pending.pop_front() {
                return Some(bytes);
            }
            if self.closing {
                return None;
            }
            tokio::select! {
                () = self.ctx.shutdown.wait() => {
                    // The instance is going away: ask the client to reconnect soon (to another instance).
                    self.closing = true;
                    return Some(Bytes::from_static(SHUTDOWN_FRAME));
                }
                // The token expired or the session was revoked.
                frame = self.guard.ended() => {
                    self.closing = true;
                    return Some(frame);
                }
                notice = matches::next_notice(&mut self.subscription) => match notice? {
                    Notice::Message(payload) => {
                        if let Some((version, json)) = matches::parse_payload(&payload) {
                            self.push(version, json);
                        }
                    }
                    Notice::Resync => {
                        if let Some((version, json)) = self.source.current(&self.ctx).await {
                            self.push(version, &json);
                        }
                    }
                },
                _ = self.keep_alive.tick() => {
                    return Some(Bytes::from_static(b": keep-alive\n\n"));
                }
            }
        }
    }
}
