//! HTTP calls to a test server by path (the shared client of `tests/common`).

use serde_json::Value;

use super::app::TestApp;
use crate::common::http::{self, Player, Reply};

impl TestApp {
    /// Sends a request with an optional JSON body and bearer token.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> Reply {
        self.call_raw(method, path, body.map(Value::to_string), token, &[])
            .await
    }

    /// Sends raw body text with extra headers.
    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        token: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        http::send(&self.client, method, &self.url(path), body, token, headers)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// GET with a token.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.call("GET", path, None, token).await
    }

    /// POST a JSON body with a token.
    pub async fn post(&self, path: &str, body: &Value, token: Option<&str>) -> Reply {
        self.call("POST", path, Some(body), token).await
    }

    /// Registers `username` with a fixed password.
    pub async fn register(&self, username: &str) -> Player {
        http::register(&self.client, &self.address, username).await
    }
}
