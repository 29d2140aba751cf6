//! The bot's view of the server: the public HTTP API at `--server`, with a
//! bearer token kept fresh. Nothing here reaches into the server's code: a
//! bot in another language does the same with any HTTP client.
//!
//! Tokens (API.md, "Accounts"): access tokens are short-lived JWTs
//! (`UTTT_ACCESS_TOKEN_TTL_SECS`, 15 minutes by default); refresh tokens
//! live a month but rotate, each working once. Given a refresh token the
//! bot exchanges it for a new pair whenever the access token nears its
//! end, so it runs for as long as it keeps running; given an access token
//! it runs until that expires.
//!
//! Over 400 lines: one typed function per endpoint the bot calls, each
//! short, behind the one session that renews the tokens.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use awc::http::Method;
use futures_util::StreamExt as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::sse;

/// How long an ordinary call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stream may stay silent: the server sends a keep-alive comment
/// at least every 15 seconds, so a longer silence is a lost connection.
const STREAM_SILENCE: Duration = Duration::from_secs(45);
/// Largest body read.
const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// One reply, read whole.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body as JSON (`Null` when empty or not JSON).
    pub body: Value,
}

impl Reply {
    /// The problem `code` of an error reply.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as `T`, or an error naming the call when the status is not 2xx.
    ///
    /// # Errors
    /// A non-2xx status, or a body that is not a `T`.
    pub fn into_json<T: DeserializeOwned>(self, what: &str) -> anyhow::Result<T> {
        if !self.ok() {
            bail!("{what}: HTTP {} {}", self.status, self.body);
        }
        serde_json::from_value(self.body).with_context(|| format!("{what}: unexpected body"))
    }
}

/// Where the bot's token came from.
#[derive(Debug, Clone)]
pub enum Credential {
    /// An access token (a JWT): used until it expires.
    Access(String),
    /// A refresh token: exchanged for a pair at once and whenever the access
    /// token nears its end. With a file, each new refresh token is written
    /// back to it, so a restarted bot continues the same session.
    Refresh {
        /// The refresh token.
        token: String,
        /// Where to keep the latest refresh token.
        file: Option<PathBuf>,
    },
}

impl Credential {
    /// An access token has the three dot-separated parts of a JWT; a
    /// refresh token is one opaque word.
    pub fn from_token(token: &str, file: Option<PathBuf>) -> Credential {
        let token = token.trim().to_owned();
        if token.split('.').count() == 3 {
            Credential::Access(token)
        } else {
            Credential::Refresh { token, file }
        }
    }
}

#[derive(Debug)]
struct Tokens {
    access: String,
    refresh: Option<String>,
    /// When to refresh; `None` with an access token only.
    renew_at: Option<Instant>,
}

/// The server's API with the bot's session.
pub struct Api {
    base: String,
    client: awc::Client,
    tokens: RefCell<Tokens>,
    /// One refresh at a time: a refresh token works once, and spending it
    /// twice would end the session.
    refreshing: tokio::sync::Mutex<()>,
    file: Option<PathBuf>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// When to renew a pair whose access token lives `ttl`: a quarter of its
/// life (at most a minute) before it ends.
pub fn renew_after(ttl: Duration) -> Duration {
    ttl.saturating_sub((ttl / 4).min(Duration::from_secs(60)))
}

impl Api {
    /// The API of the server at `server` (`http://host:port`), logged in with `credential`.
    ///
    /// # Errors
    /// An `https` URL (this client speaks plain HTTP only), or a refresh
    /// token the server refuses.
    pub async fn connect(server: &str, credential: Credential) -> anyhow::Result<Api> {
        let server = server.trim_end_matches('/');
        if !server.starts_with("http://") {
            bail!(
                "--server must be an http:// URL (the reference bot speaks plain HTTP; reach an https server through a local proxy), not {server}"
            );
        }
        let client = awc::Client::builder()
            .timeout(CALL_TIMEOUT)
            .add_default_header((
                "User-Agent",
                concat!("uttt-bot/", env!("CARGO_PKG_VERSION")),
            ))
            .finish();
        let (tokens, file) = match credential {
            Credential::Access(access) => (
                Tokens {
                    access,
                    refresh: None,
                    renew_at: None,
                },
                None,
            ),
            Credential::Refresh { token, file } => (
                Tokens {
                    access: String::new(),
                    refresh: Some(token),
                    renew_at: Some(Instant::now()),
                },
                file,
            ),
        };
        let api = Api {
            base: format!("{server}/api/v1"),
            client,
            tokens: RefCell::new(tokens),
            refreshing: tokio::sync::Mutex::new(()),
            file,
        };
        if api.tokens.borrow().refresh.is_some() {
            api.refresh(None).await?;
        }
        Ok(api)
    }

    /// Exchanges the refresh token for a new pair, unless another task just
    /// did (the access token is no longer `rejected` and not due).
    async fn refresh(&self, rejected: Option<&str>) -> anyhow::Result<()> {
        let _turn = self.refreshing.lock().await;
        let (refresh, due) = {
            let t = self.tokens.borrow();
            let due = t.renew_at.is_some_and(|at| at <= Instant::now())
                || rejected.is_some_and(|r| r == t.access);
            (t.refresh.clone(), due)
        };
        if !due {
            return Ok(());
        }
        let Some(refresh) = refresh else {
            return Err(Fatal(
                "the access token was refused (expired?); give the bot a refresh token so it can renew its session".into(),
            )
            .into());
        };
        let reply = self
            .send(
                Method::POST,
                "/auth/refresh",
                Some(&json!({ "refresh_token": refresh })),
                None,
            )
            .await?;
        if reply.status == 401 {
            return Err(Fatal(format!(
                "the server refused the refresh token ({}): log in again and pass the new refresh token",
                reply.code()
            ))
            .into());
        }
        let body: Value = reply.into_json("refreshing the session")?;
        let access = body["access_token"].as_str().unwrap_or_default().to_owned();
        let next = body["refresh_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if access.is_empty() || next.is_empty() {
            bail!("refreshing the session: no token pair in {body}");
        }
        let ttl = Duration::from_secs(body["expires_in"].as_u64().unwrap_or(60));
        if let Some(file) = &self.file {
            write_token(file, &next)?;
        }
        *self.tokens.borrow_mut() = Tokens {
            access,
            refresh: Some(next),
            renew_at: Some(Instant::now() + renew_after(ttl)),
        };
        tracing::debug!(ttl_secs = ttl.as_secs(), "session refreshed");
        Ok(())
    }

    /// The access token, renewed first when it is due.
    async fn token(&self) -> anyhow::Result<String> {
        let due = self
            .tokens
            .borrow()
            .renew_at
            .is_some_and(|at| at <= Instant::now());
        if due {
            self.refresh(None).await?;
        }
        Ok(self.tokens.borrow().access.clone())
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> anyhow::Result<Reply> {
        let url = format!("{}{path}", self.base);
        let mut req = self.client.request(method.clone(), &url);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let sent = match body {
            Some(body) => req.send_json(body).await,
            None => req.send().await,
        };
        let mut res = sent.map_err(|e| anyhow!("{method} {url}: {e}"))?;
        let bytes = res
            .body()
            .limit(BODY_LIMIT)
            .await
            .map_err(|e| anyhow!("{method} {url}: reading the reply: {e}"))?;
        Ok(Reply {
            status: res.status().as_u16(),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        })
    }

    /// Calls `method path` (under `/api/v1`) with the session; a refused
    /// access token is renewed and the call sent once more.
    ///
    /// # Errors
    /// The server cannot be reached, or the session cannot be renewed.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Reply> {
        let token = self.token().await?;
        let reply = self.send(method.clone(), path, body, Some(&token)).await?;
        if reply.status != 401 {
            return Ok(reply);
        }
        self.refresh(Some(&token)).await?;
        let token = self.token().await?;
        self.send(method, path, body, Some(&token)).await
    }

    /// `GET path`.
    ///
    /// # Errors
    /// As [`Api::call`].
    pub async fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.call(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    ///
    /// # Errors
    /// As [`Api::call`].
    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Reply> {
        self.call(Method::POST, path, Some(body)).await
    }

    /// Opens the event stream at `path`, resuming after `last_event_id`.
    ///
    /// # Errors
    /// The server cannot be reached or answers something else than a stream
    /// (the reply is in the error).
    pub async fn stream(&self, path: &str, last_event_id: Option<&str>) -> anyhow::Result<Stream> {
        let mut token = self.token().await?;
        for attempt in 0..2 {
            let url = format!("{}{path}", self.base);
            let mut req = self
                .client
                .get(&url)
                .bearer_auth(&token)
                .insert_header(("Accept", "text/event-stream"));
            if let Some(id) = last_event_id {
                req = req.insert_header(("Last-Event-ID", id));
            }
            let mut res = req.send().await.map_err(|e| anyhow!("GET {url}: {e}"))?;
            let status = res.status().as_u16();
            if status == 200 {
                return Ok(Stream {
                    response: res,
                    parser: sse::Parser::default(),
                    ready: std::collections::VecDeque::new(),
                });
            }
            if status == 401 && attempt == 0 {
                self.refresh(Some(&token)).await?;
                token = self.token().await?;
                continue;
            }
            let body = res.body().limit(BODY_LIMIT).await.unwrap_or_default();
            return Err(StreamRefused {
                status,
                body: String::from_utf8_lossy(&body).into_owned(),
            }
            .into());
        }
        bail!("GET {path}: the session was refused twice")
    }
}

/// A stream the server would not open (the status says why).
#[derive(Debug, thiserror::Error)]
#[error("the server refused the stream: HTTP {status} {body}")]
pub struct StreamRefused {
    /// HTTP status.
    pub status: u16,
    /// The problem body.
    pub body: String,
}

/// An error the bot cannot carry on after: its session is over, or it may
/// not do what it was asked to.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Fatal(pub String);

/// An open event stream.
pub struct Stream {
    response: awc::ClientResponse,
    parser: sse::Parser,
    ready: std::collections::VecDeque<sse::Event>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").finish_non_exhaustive()
    }
}

impl Stream {
    /// The next event; `None` once the stream ended or went silent for too long.
    pub async fn next(&mut self) -> Option<sse::Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let chunk = tokio::time::timeout(STREAM_SILENCE, self.response.next())
                .await
                .ok()??
                .ok()?;
            self.ready.extend(self.parser.push(&chunk));
        }
    }
}

/// Writes the latest refresh token to `file` (through a temporary file, so
/// a crash leaves the old token or the new one, never half of one).
fn write_token(file: &std::path::Path, token: &str) -> anyhow::Result<()> {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, format!("{token}\n"))
        .and_then(|()| std::fs::rename(&tmp, file))
        .with_context(|| format!("writing the refresh token to {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwts_are_access_tokens_and_other_words_refresh_tokens() {
        assert!(matches!(
            Credential::from_token("aaa.bbb.ccc", None),
            Credential::Access(t) if t == "aaa.bbb.ccc"
        ));
        assert!(matches!(
            Credential::from_token(" Zm9vYmFy_-x \n", None),
            Credential::Refresh { token, .. } if token == "Zm9vYmFy_-x"
        ));
    }

    #[test]
    fn a_pair_is_renewed_before_its_access_token_ends() {
        assert_eq!(
            renew_after(Duration::from_secs(900)),
            Duration::from_secs(840)
        );
        assert_eq!(
            renew_after(Duration::from_secs(65)),
            Duration::from_millis(48_750)
        );
        assert_eq!(renew_after(Duration::ZERO), Duration::ZERO);
    }
}
