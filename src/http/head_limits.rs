//! Limits on request heads, answered with problem+json.
//!
//! actix-http answers a request line it cannot parse (a URI over 64 KiB) or
//! a head over its buffer with a bare 400 or 431 before any application code
//! runs, so those answers cannot be given a body there. Each connection is
//! therefore read through [`Guarded`], which watches the bytes of every
//! request head as they pass: a request line longer than
//! [`MAX_REQUEST_LINE`] is refused with 414 `uri_too_long`, and a head longer
//! than [`MAX_HEAD`] or with more than [`MAX_HEADERS`] header lines with 431
//! `headers_too_large`. The refused head is never handed on; the answer is
//! written after whatever responses were still being written, and the
//! connection is closed.
//!
//! Bodies are skipped by `Content-Length`; after a chunked body the
//! connection is no longer watched (the API takes no chunked bodies, and
//! actix's own limits still apply there).
//!
//! Just over 400 lines, a quarter of them its unit tests.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The longest request line (method, target, version).
pub const MAX_REQUEST_LINE: usize = 8 * 1024;
/// The longest request head (request line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header lines (actix-http parses at most 96).
pub const MAX_HEADERS: usize = 96;
/// Bytes of a header line kept to recognise `Content-Length` and `Transfer-Encoding`.
const KEPT: usize = 64;

/// Why a head was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The request line is over [`MAX_REQUEST_LINE`]: 414 `uri_too_long`.
    UriTooLong,
    /// The head is over [`MAX_HEAD`] or has too many headers: 431 `headers_too_large`.
    HeadersTooLarge,
}

impl Refusal {
    /// The whole HTTP/1.1 response, problem+json, closing the connection.
    pub fn response(self) -> Vec<u8> {
        let (status, reason, code, title, detail) = match self {
            Refusal::UriTooLong => (
                414,
                "URI Too Long",
                "uri_too_long",
                "URI too long",
                format!("the request line is longer than {MAX_REQUEST_LINE} bytes"),
            ),
            Refusal::HeadersTooLarge => (
                431,
                "Request Header Fields Too Large",
                "headers_too_large",
                "Headers too large",
                format!(
                    "the request head is longer than {MAX_HEAD} bytes or has more than {MAX_HEADERS} headers"
                ),
            ),
        };
        let body = serde_json::json!({
            "type": format!("urn:uttt:problem:{code}"),
            "title": title,
            "status": status,
            "detail": detail,
            "code": code,
        })
        .to_string();
        format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a head; `started` once the request line has begun.
    Head { started: bool },
    /// Skipping this many body bytes.
    Body(u64),
    /// No longer watching (after a chunked body or an unreadable length).
    Passthrough,
}

/// Watches the bytes of one connection (pure: fed what is read).
#[derive(Debug, Clone)]
pub struct HeadScanner {
    state: State,
    line_len: usize,
    head_len: usize,
    headers: usize,
    kept: Vec<u8>,
    content_length: Option<u64>,
    chunked: bool,
}

impl Default for HeadScanner {
    fn default() -> Self {
        HeadScanner {
            state: State::Head { started: false },
            line_len: 0,
            head_len: 0,
            headers: 0,
            kept: Vec::with_capacity(KEPT),
            content_length: None,
            chunked: false,
        }
    }
}

impl HeadScanner {
    /// Feeds the next bytes read. Returns how many of them may be handed on,
    /// and the refusal when the rest breaks a limit (none may follow it).
    pub fn feed(&mut self, bytes: &[u8]) -> (usize, Option<Refusal>) {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Passthrough => return (bytes.len(), None),
                State::Body(left) => {
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len() - i);
                    i += take;
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        State::Head { started: false }
                    } else {
                        State::Body(left)
                    };
                }
                State::Head { started } => {
                    let b = bytes[i];
                    self.head_len += 1;
                    if self.head_len > MAX_HEAD {
                        return (i, Some(Refusal::HeadersTooLarge));
                    }
                    if b == b'\n' {
                        if let Some(refusal) = self.end_line(started) {
                            return (i, Some(refusal));
                        }
                    } else if b != b'\r' {
                        self.line_len += 1;
                        if !started && self.line_len > MAX_REQUEST_LINE {
                            return (i, Some(Refusal::UriTooLong));
                        }
                        if self.kept.len() < KEPT {
                            self.kept.push(b.to_ascii_lowercase());
                        }
                    }
                    i += 1;
                }
            }
        }
        (bytes.len(), None)
    }

    /// A line of the head ended.
    fn end_line(&mut self, started: bool) -> Option<Refusal> {
        let empty = self.line_len == 0;
        if !started {
            // Empty lines before a request line are allowed (RFC 9112, 2.2).
            if !empty {
                self.state = State::Head { started: true };
            }
        } else if empty {
            self.state = if self.chunked {
                State::Passthrough
            } else {
                match self.content_length {
                    Some(n) if n > 0 => State::Body(n),
                    _ => State::Head { started: false },
                }
            };
            self.head_len = 0;
            self.headers = 0;
            self.content_length = None;
            self.chunked = false;
        } else {
            self.headers += 1;
            if self.headers > MAX_HEADERS {
                return Some(Refusal::HeadersTooLarge);
            }
            self.read_header();
        }
        self.line_len = 0;
        self.kept.clear();
        None
    }

    fn read_header(&mut self) {
        if let Some(value) = self.kept.strip_prefix(b"content-length:") {
            let parsed = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            match parsed {
                Some(n) => self.content_length = Some(n),
                // Unreadable (or cut short): stop watching rather than misjudge the body.
                None => self.chunked = true,
            }
        } else if self.kept.starts_with(b"transfer-encoding:") {
            self.chunked = true;
        }
    }
}

/// A connection whose request heads are held to the limits above.
#[derive(Debug)]
pub struct Guarded<T> {
    inner: T,
    scanner: HeadScanner,
    /// The refusal to write before closing, and how much of it is written.
    refused: Option<(Vec<u8>, usize)>,
}

impl<T> Guarded<T> {
    /// Watches `inner`.
    pub fn new(inner: T) -> Guarded<T> {
        Guarded {
            inner,
            scanner: HeadScanner::default(),
            refused: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Refused: the server sees the end of the input, finishes what it
        // was writing and shuts the connection down (which writes the refusal).
        if self.refused.is_some() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let (pass, refusal) = this.scanner.feed(&buf.filled()[before..]);
        if let Some(refusal) = refusal {
            buf.set_filled(before + pass);
            tracing::info!(
                http.status = if refusal == Refusal::UriTooLong {
                    414
                } else {
                    431
                },
                "request head refused before routing"
            );
            this.refused = Some((refusal.response(), 0));
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some((response, written)) = &mut this.refused {
            while *written < response.len() {
                let n = std::task::ready!(
                    Pin::new(&mut this.inner).poll_write(cx, &response[*written..])
                )?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                *written += n;
            }
            std::task::ready!(Pin::new(&mut this.inner).poll_flush(cx))?;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scan(chunks: &[&[u8]]) -> (usize, Option<Refusal>) {
        let mut s = HeadScanner::default();
        let mut passed = 0;
        for chunk in chunks {
            let (n, refusal) = s.feed(chunk);
            passed += n;
            if refusal.is_some() {
                return (passed, refusal);
            }
        }
        (passed, None)
    }

    #[test]
    fn ordinary_requests_pass_whole() {
        let req = b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\r\n\r\n";
        assert_eq!(scan(&[req]), (req.len(), None));
        let post = b"POST /api/v1/auth/login HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
        let both = [post.as_slice(), req.as_slice()].concat();
        assert_eq!(scan(&[&both]), (both.len(), None));
    }

    #[test]
    fn a_long_request_line_is_refused_without_handing_it_on() {
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(100 * 1024));
        let (passed, refusal) = scan(&[long.as_bytes()]);
        assert_eq!(refusal, Some(Refusal::UriTooLong));
        assert_eq!(passed, MAX_REQUEST_LINE);
        // The second request of a kept-alive connection is watched too.
        let first = b"GET / HTTP/1.1\r\n\r\n";
        let (passed, refusal) = scan(&[first, long.as_bytes()]);
        assert_eq!(refusal, Some(Refusal::UriTooLong));
        assert_eq!(passed, first.len() + MAX_REQUEST_LINE);
    }

    #[test]
    fn a_long_body_line_is_not_a_request_line() {
        let body = "x".repeat(20 * 1024);
        let req = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(scan(&[req.as_bytes()]).1, None);
    }

    #[test]
    fn big_heads_and_many_headers_are_refused() {
        let many: String = (0..100).map(|i| format!("X-{i}: 1\r\n")).collect();
        let req = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(scan(&[req.as_bytes()]).1, Some(Refusal::HeadersTooLarge));
        let huge = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "b".repeat(70 * 1024));
        assert_eq!(scan(&[huge.as_bytes()]).1, Some(Refusal::HeadersTooLarge));
    }

    #[test]
    fn the_refusal_is_a_problem_document() {
        let text = String::from_utf8(Refusal::UriTooLong.response()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 "));
        assert!(head.contains("content-type: application/problem+json"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["code"], "uri_too_long");
        assert_eq!(problem["status"], 414);
    }

    proptest! {
        /// However the bytes are split into reads, the verdict and the
        /// number of bytes handed on are the same.
        #[test]
        fn splitting_never_changes_the_verdict(
            path_len in 0usize..12_000,
            body_len in 0usize..3_000,
            cuts in proptest::collection::vec(0usize..20_000, 0..8),
        ) {
            let req = format!(
                "POST /{} HTTP/1.1\r\nContent-Length: {body_len}\r\n\r\n{}GET / HTTP/1.1\r\n\r\n",
                "p".repeat(path_len),
                "b".repeat(body_len)
            );
            let bytes = req.as_bytes();
            let whole = scan(&[bytes]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                chunks.push(&bytes[start..c]);
                start = c;
            }
            prop_assert_eq!(scan(&chunks), whole);
            prop_assert_eq!(whole.1.is_some(), path_len + 1 + "POST  HTTP/1.1".len() > MAX_REQUEST_LINE);
        }
    }
}
