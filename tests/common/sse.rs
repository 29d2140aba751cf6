//! Server-sent event streams read as a browser reads them, from a server by
//! address (shared by the API tests and the multi-process tests).

use std::time::Duration;

use serde_json::Value;

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `event:` (default `message`).
    pub event: String,
    /// `id:`, if any.
    pub id: Option<String>,
    /// `data:` lines joined.
    pub data: String,
}

/// A client of a `text/event-stream` response.
pub struct EventStream {
    response: awc::ClientResponse,
    buffer: String,
}

impl EventStream {
    /// Opens a stream on the server at `address`.
    pub async fn open_at(
        address: &str,
        client: &awc::Client,
        path: &str,
        token: &str,
        last_event_id: Option<i32>,
    ) -> EventStream {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut req = client
            .get(format!("{address}{path}{sep}access_token={token}"))
            .timeout(Duration::from_secs(3600));
        if let Some(id) = last_event_id {
            req = req.insert_header(("Last-Event-ID", id.to_string()));
        }
        let response = req.send().await.expect("event stream");
        assert_eq!(response.status().as_u16(), 200, "event stream refused");
        assert_eq!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        EventStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame (events and comments), or `None` after `timeout`.
    pub async fn next_frame(&mut self, timeout: Duration) -> Option<String> {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame = self.buffer[..end].to_owned();
                self.buffer.drain(..end + 2);
                return Some(frame);
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.next())
                .await
                .ok()??;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk")));
        }
    }

    /// Whether the server closes the stream within `timeout` (frames before the end are dropped).
    pub async fn closes_within(&mut self, timeout: Duration) -> bool {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.response.next()).await {
                Err(_) => return false,
                Ok(None) => return true,
                Ok(Some(chunk)) => self
                    .buffer
                    .push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk"))),
            }
        }
    }

    /// Everything received and not yet consumed.
    pub fn buffered(&self) -> &str {
        &self.buffer
    }

    /// The next event (skipping comments and `retry:`), or `None` after `timeout`.
    pub async fn next_event(&mut self, timeout: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let frame = self.next_frame(left).await?;
            let mut event = SseEvent {
                event: "message".into(),
                id: None,
                data: String::new(),
            };
            let mut has_data = false;
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event.event = v.to_owned();
                } else if let Some(v) = line.strip_prefix("id: ") {
                    event.id = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(v);
                    has_data = true;
                }
            }
            if has_data {
                return Some(event);
            }
        }
    }

    /// Waits for a `state` event whose state satisfies `wanted`.
    pub async fn state_where(
        &mut self,
        timeout: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let event = self
                .next_event(left)
                .await
                .expect("no matching state event in time");
            if event.event == "state" {
                let state: Value = serde_json::from_str(&event.data).expect("state is JSON");
                assert_eq!(
                    event.id.as_deref(),
                    Some(state["version"].to_string().as_str())
                );
                if wanted(&state) {
                    return state;
                }
            }
        }
    }
}
