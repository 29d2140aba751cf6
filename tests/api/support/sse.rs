//! Event streams of a test server.

use super::app::TestApp;
use crate::common::sse::EventStream;

impl EventStream {
    /// Opens `path` as an event stream (token in the query string, as browsers do).
    pub async fn open(
        app: &TestApp,
        path: &str,
        token: &str,
        last_event_id: Option<i32>,
    ) -> EventStream {
        EventStream::open_at(&app.address, &app.client, path, token, last_event_id).await
    }
}
