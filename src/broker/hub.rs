//! Local fan-out of channel messages to the subscribers of this process.
//! Both brokers deliver through a hub: the in-process one directly, the Redis
//! one from its subscription connection, which holds a Redis subscription
//! exactly for the channels the hub has local subscribers on (the hub tells
//! it when a channel's last subscriber leaves).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::Stream;
use tokio::sync::broadcast;

/// Messages a subscriber may miss before it is told to resynchronise.
const CHANNEL_CAPACITY: usize = 64;

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A published payload.
    Message(Arc<str>),
    /// Messages may have been lost (a slow reader, or the broker reconnected):
    /// reload the current state from the database.
    Resync,
}

/// The subscribers of this process, by channel.
#[derive(Debug, Default)]
pub struct Hub {
    channels: Mutex<HashMap<String, broadcast::Sender<Notice>>>,
    /// Told each channel whose last local subscriber left.
    idle: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    /// Messages that reached this process (see [`Hub::note_received`]).
    received: AtomicU64,
}

impl Hub {
    /// A hub that sends the name of each channel whose last local subscriber
    /// left to `idle` (where the Redis broker unsubscribes from it).
    pub fn with_idle(idle: tokio::sync::mpsc::UnboundedSender<String>) -> Hub {
        Hub {
            idle: Some(idle),
            ..Hub::default()
        }
    }

    /// Whether `channel` has local subscribers.
    pub fn is_watched(&self, channel: &str) -> bool {
        let channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        channels.contains_key(channel)
    }

    /// The channels with local subscribers.
    pub fn watched(&self) -> Vec<String> {
        let channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        channels.keys().cloned().collect()
    }

    /// Counts one message that reached this process.
    pub fn note_received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    /// Messages that reached this process so far.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// Registers a local subscriber of `channel`.
    pub fn subscribe(self: &Arc<Self>, channel: &str) -> Subscription {
        let mut channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        let sender = channels
            .entry(channel.to_owned())
            .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0);
        Subscription {
            receiver: tokio_stream_shim::Receiver::new(sender.subscribe()),
            hub: Arc::clone(self),
            channel: channel.to_owned(),
        }
    }

    /// Delivers `notice` to the local subscribers of `channel`; whether it has any.
    pub fn deliver(&self, channel: &str, notice: Notice) -> bool {
        let channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        match channels.get(channel) {
            Some(sender) => {
                // No receivers left is fine: the last one is just going away.
                let _ = sender.send(notice);
                true
            }
            None => false,
        }
    }

    /// Tells every local subscriber to resynchronise.
    pub fn resync_all(&self) {
        let channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        for sender in channels.values() {
            let _ = sender.send(Notice::Resync);
        }
    }

    fn release(&self, channel: &str) {
        let mut channels = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        if channels
            .get(channel)
            .is_some_and(|s| s.receiver_count() == 0)
        {
            channels.remove(channel);
            if let Some(idle) = &self.idle {
                // The receiving task is gone only when the broker is.
                let _ = idle.send(channel.to_owned());
            }
        }
    }

    /// Number of channels with local subscribers.
    #[cfg(test)]
    fn channel_count(&self) -> usize {
        self.channels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }
}

/// A live subscription to one channel; a stream of [`Notice`]s.
pub struct Subscription {
    receiver: tokio_stream_shim::Receiver,
    hub: Arc<Hub>,
    channel: String,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl Stream for Subscription {
    type Item = Notice;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notice>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.receiver.close();
        self.hub.release(&self.channel);
    }
}

/// A broadcast receiver as a stream, turning lag into [`Notice::Resync`].
mod tokio_stream_shim {
    use super::Notice;
    use futures_util::Stream;
    use futures_util::future::BoxFuture;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::sync::broadcast;
    use tokio::sync::broadcast::error::RecvError;

    type Recv = BoxFuture<'static, (Option<Notice>, broadcast::Receiver<Notice>)>;

    pub struct Receiver {
        pending: Option<Recv>,
    }

    fn recv(mut rx: broadcast::Receiver<Notice>) -> Recv {
        Box::pin(async move {
            let item = match rx.recv().await {
                Ok(notice) => Some(notice),
                Err(RecvError::Lagged(_)) => Some(Notice::Resync),
                Err(RecvError::Closed) => None,
            };
            (item, rx)
        })
    }

    impl Receiver {
        pub fn new(rx: broadcast::Receiver<Notice>) -> Self {
            Receiver {
                pending: Some(recv(rx)),
            }
        }

        pub fn close(&mut self) {
            self.pending = None;
        }
    }

    impl Stream for Receiver {
        type Item = Notice;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notice>> {
            let Some(fut) = self.pending.as_mut() else {
                return Poll::Ready(None);
            };
            match fut.as_mut().poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready((item, rx)) => {
                    self.pending = item.as_ref().map(|_| recv(rx));
                    Poll::Ready(item)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test]
    async fn a_subscriber_receives_what_is_delivered_after_it_subscribed() {
        let hub = Arc::new(Hub::default());
        hub.deliver("m", Notice::Message("before".into()));
        let mut sub = hub.subscribe("m");
        hub.deliver("other", Notice::Message("elsewhere".into()));
        hub.deliver("m", Notice::Message("after".into()));
        assert_eq!(sub.next().await, Some(Notice::Message("after".into())));
    }

    #[tokio::test]
    async fn a_slow_subscriber_is_told_to_resync() {
        let hub = Arc::new(Hub::default());
        let mut sub = hub.subscribe("m");
        for i in 0..CHANNEL_CAPACITY + 5 {
            hub.deliver("m", Notice::Message(i.to_string().into()));
        }
        assert_eq!(sub.next().await, Some(Notice::Resync));
    }

    #[tokio::test]
    async fn dropping_the_last_subscriber_forgets_the_channel_and_says_so() {
        let (tx, mut idle) = tokio::sync::mpsc::unbounded_channel();
        let hub = Arc::new(Hub::with_idle(tx));
        let a = hub.subscribe("m");
        let b = hub.subscribe("m");
        let other = hub.subscribe("n");
        drop(a);
        assert_eq!(hub.channel_count(), 2);
        assert!(hub.is_watched("m"));
        assert!(idle.try_recv().is_err(), "m still has a subscriber");
        drop(b);
        assert_eq!(hub.channel_count(), 1);
        assert!(!hub.is_watched("m"));
        assert_eq!(idle.try_recv().ok().as_deref(), Some("m"));
        assert_eq!(hub.watched(), ["n"]);
        drop(other);
        assert_eq!(idle.try_recv().ok().as_deref(), Some("n"));
    }
}
