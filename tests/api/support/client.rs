//! HTTP calls to a test server: whole replies, and registered players.

use awc::http::StatusCode;
use awc::http::header::HeaderMap;
use serde_json::{Value, json};

use super::app::TestApp;

/// One HTTP response, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
    /// Body as text.
    pub text: String,
}

impl Reply {
    /// The problem `code` of an error body.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, showing the body when it differs.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Reply {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        self
    }

    /// Asserts an error status and code, and that the body is problem+json.
    #[track_caller]
    pub fn expect_problem(&self, status: u16, code: &str) -> &Reply {
        self.expect(status);
        assert_eq!(
            self.code(),
            code,
            "unexpected problem code; body: {}",
            self.text
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{}",
            self.text
        );
        self
    }
}

/// A registered player with a session.
#[derive(Debug, Clone)]
pub struct Player {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Password.
    pub password: String,
    /// Access token.
    pub token: String,
    /// Refresh token.
    pub refresh: String,
}

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
        let method = awc::http::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, self.url(path));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        for (k, v) in headers {
            req = req.insert_header((*k, *v));
        }
        let sent = match body {
            Some(text) => req.content_type("application/json").send_body(text).await,
            None => req.send().await,
        };
        let mut res = sent.unwrap_or_else(|e| panic!("request to {path} failed: {e}"));
        let bytes = res.body().limit(64 * 1024 * 1024).await.expect("body");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Reply {
            status: res.status(),
            headers: res.headers().clone(),
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        }
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
        let password = "correct horse battery";
        let reply = self
            .post(
                "/api/v1/auth/register",
                &json!({"username": username, "password": password}),
                None,
            )
            .await;
        reply.expect(201);
        Player {
            id: reply.body["player"]["id"].as_str().expect("id").to_owned(),
            username: username.to_owned(),
            password: password.to_owned(),
            token: reply.body["access_token"]
                .as_str()
                .expect("token")
                .to_owned(),
            refresh: reply.body["refresh_token"]
                .as_str()
                .expect("refresh")
                .to_owned(),
        }
    }
}
