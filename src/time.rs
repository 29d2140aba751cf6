//! The server's sense of time, injected so that clock and drop-out tests can
//! advance it instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, the unit every stored time uses.
pub type Millis = i64;

/// Where the server reads the current time.
pub trait TimeSource: Send + Sync + std::fmt::Debug {
    /// The current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> Millis;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemTime;

impl TimeSource for SystemTime {
    fn now_ms(&self) -> Millis {
        Utc::now().timestamp_millis()
    }
}

/// A clock that only moves when told to; tests share it with the server.
#[derive(Debug)]
pub struct ManualTime {
    now: AtomicI64,
}

impl ManualTime {
    /// A manual clock standing at `start_ms`.
    pub fn new(start_ms: Millis) -> Arc<ManualTime> {
        Arc::new(ManualTime {
            now: AtomicI64::new(start_ms),
        })
    }

    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance(&self, ms: Millis) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `ms`.
    pub fn set(&self, ms: Millis) {
        self.now.store(ms, Ordering::SeqCst);
    }
}

impl TimeSource for ManualTime {
    fn now_ms(&self) -> Millis {
        self.now.load(Ordering::SeqCst)
    }
}

/// A measured duration in milliseconds, for logs.
pub fn ms_of(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Formats epoch milliseconds as an RFC 3339 UTC string (`2026-12-02T13:47:20.123Z`).
pub fn rfc3339(ms: Millis) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Parses an RFC 3339 string into epoch milliseconds.
///
/// # Errors
/// Returns `None` when the text is not an RFC 3339 time.
pub fn parse_rfc3339(text: &str) -> Option<Millis> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc).timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_milliseconds() {
        let ms = 1_796_219_240_123;
        let text = rfc3339(ms);
        assert!(text.ends_with('Z'), "{text}");
        assert_eq!(parse_rfc3339(&text), Some(ms));
    }

    #[test]
    fn manual_time_moves_only_when_told() {
        let clock = ManualTime::new(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(250);
        assert_eq!(clock.now_ms(), 1_250);
        clock.set(5);
        assert_eq!(clock.now_ms(), 5);
    }
}
