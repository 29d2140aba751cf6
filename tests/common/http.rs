//! HTTP calls to a running server by URL, shared by the API tests and the
//! multi-process tests: whole replies, and registered players.

use awc::http::StatusCode;
use awc::http::header::HeaderMap;
use serde_json::{Value, json};

/// The password every registered test player has.
pub const PASSWORD: &str = "correct horse battery";

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
        assert_eq!(
            self.body["status"],
            u64::from(status),
            "a problem's `status` is its HTTP status; body: {}",
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

/// Sends a request to `url` with raw body text (as JSON), a bearer token and
/// extra headers, and reads the whole reply.
///
/// # Errors
/// The server cannot be reached or the reply cannot be read (a crashed instance).
pub async fn send(
    client: &awc::Client,
    method: &str,
    url: &str,
    body: Option<String>,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<Reply, String> {
    let method = awc::http::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = client.request(method, url);
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
    let mut res = sent.map_err(|e| format!("request to {url} failed: {e}"))?;
    let bytes = res
        .body()
        .limit(64 * 1024 * 1024)
        .await
        .map_err(|e| format!("reading the reply from {url} failed: {e}"))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(Reply {
        status: res.status(),
        headers: res.headers().clone(),
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    })
}

/// Sends a JSON request to `url`; `None` when the server cannot be reached.
pub async fn try_call(
    client: &awc::Client,
    method: &str,
    url: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> Option<Reply> {
    send(client, method, url, body.map(Value::to_string), token, &[])
        .await
        .ok()
}

/// GETs `url`: the body of a 200 reply; `None` for another status or when
/// the server cannot be reached.
pub async fn get_ok(client: &awc::Client, url: &str, token: Option<&str>) -> Option<Value> {
    try_call(client, "GET", url, None, token)
        .await
        .filter(|r| r.status == 200)
        .map(|r| r.body)
}

/// Registers `username` with [`PASSWORD`] on the server at `base`.
pub async fn register(client: &awc::Client, base: &str, username: &str) -> Player {
    let reply = send(
        client,
        "POST",
        &format!("{base}/api/v1/auth/register"),
        Some(json!({"username": username, "password": PASSWORD}).to_string()),
        None,
        &[],
    )
    .await
    .unwrap_or_else(|e| panic!("register {username}: {e}"));
    reply.expect(201);
    Player {
        id: reply.body["player"]["id"].as_str().expect("id").to_owned(),
        username: username.to_owned(),
        password: PASSWORD.to_owned(),
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
