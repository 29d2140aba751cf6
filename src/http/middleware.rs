//! Cross-cutting request handling: the request span (without the query
//! string, which may carry an access token), metrics with an access log line,
//! the rule that every error body is problem+json, the refusal of U+0000 in
//! a request's target, and the client's address behind the server's own
//! proxies.

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::{Error, ResponseError};
use tracing::Span;
use tracing_actix_web::RootSpanBuilder;

use super::problem::{PROBLEM_JSON, Problem};
use crate::config::ProxyTrust;
use crate::metrics::Metrics;

/// Builds the span of each request.
#[derive(Debug, Clone, Copy)]
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        tracing::info_span!(
            "http",
            http.method = %request.method(),
            http.route = %request.match_pattern().unwrap_or_else(|| "unmatched".into()),
            // The path only: `?access_token=` must never reach a log.
            http.path = %request.path(),
            http.status = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        let status = match outcome {
            Ok(res) => res.status(),
            Err(err) => err.as_response_error().status_code(),
        };
        span.record("http.status", status.as_u16());
    }
}

/// Records the request in `metrics` and writes the access log line.
pub fn observe(metrics: &Metrics, method: &str, route: &str, status: u16, started: Instant) {
    let elapsed = started.elapsed();
    metrics.observe_request(method, route, status, elapsed);
    let ms = elapsed.as_secs_f64() * 1000.0;
    if status >= 500 {
        tracing::warn!(http.status = status, latency_ms = ms, "request failed");
    } else {
        tracing::info!(http.status = status, latency_ms = ms, "request");
    }
}

/// Replaces the body of an error response that is not problem+json (those
/// made by actix itself: unknown method, unreadable request…) with one.
pub fn problem_bodies(res: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let is_problem = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if is_problem {
        return res;
    }
    let allow = res.headers().get(header::ALLOW).cloned();
    let problem = if status == actix_web::http::StatusCode::NOT_FOUND {
        Problem::no_route(res.request().path())
    } else {
        Problem::for_status(status)
    };
    let (req, _) = res.into_parts();
    let mut response = problem.error_response();
    if let Some(allow) = allow {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    ServiceResponse::new(req, response)
}

/// The refusal of a request whose target holds U+0000 (`%00`), made before
/// any route reads it: PostgreSQL refuses the character in text, so a name or an id
/// holding it would fail there as a database error instead of being found
/// wanting. In the path nothing has such a name: 404 `not_found`; in the
/// query: 422 `validation_failed`, naming the parameter.
pub fn nul_refusal(req: &ServiceRequest) -> Option<Problem> {
    const NUL: &str = "%00";
    let problem = if req.uri().path().contains(NUL) {
        Problem::no_route(req.path())
    } else if let Some(query) = req.uri().query().filter(|q| q.contains(NUL)) {
        let name = query
            .split('&')
            .find(|pair| pair.contains(NUL))
            .and_then(|pair| pair.split('=').next())
            .filter(|name| !name.is_empty() && !name.contains(NUL))
            .unwrap_or("query");
        Problem::validation(&[crate::service::FieldError::new(
            name,
            super::json::NUL_MESSAGE,
        )])
    } else {
        return None;
    };
    Some(problem)
}

/// One hop of `X-Forwarded-For`: an address, with or without a port
/// (`203.0.113.7`, `203.0.113.7:4711`, `2001:db8::1`, `[2001:db8::1]:443`).
fn parse_hop(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// The client's address, from the peer address and the `X-Forwarded-For`
/// header values (in the order received), under `trust`.
///
/// Every hop left of the ones the server's own proxies appended is whatever
/// the client chose to send, so it is never believed:
/// - [`ProxyTrust::None`]: the peer, whatever the header says;
/// - [`ProxyTrust::Hops`]`(n)`: the `n`-th hop from the right, the address
///   the outermost of the `n` proxies saw (fewer hops than `n`: the leftmost,
///   as all of them were appended by the proxies);
/// - [`ProxyTrust::Addresses`]: when the peer is one of the proxies, the
///   rightmost hop that is not (all of them proxies: the leftmost); when the
///   peer is not a proxy, the header is ignored.
///
/// A hop that is not an address gives the peer's address.
pub fn client_ip(
    peer: Option<IpAddr>,
    forwarded_for: &[&str],
    trust: &ProxyTrust,
) -> Option<IpAddr> {
    let hops: Vec<&str> = forwarded_for
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    match trust {
        ProxyTrust::None => peer,
        ProxyTrust::Hops(n) => {
            let Some(last) = hops.len().checked_sub(1) else {
                return peer;
            };
            let index = last.saturating_sub(n.saturating_sub(1));
            parse_hop(hops[index]).or(peer)
        }
        ProxyTrust::Addresses(proxies) => {
            let trusted = |ip: IpAddr| proxies.iter().any(|net| net.contains(ip));
            if !peer.is_some_and(trusted) {
                return peer;
            }
            for hop in hops.iter().rev() {
                match parse_hop(hop) {
                    Some(ip) if trusted(ip) => continue,
                    Some(ip) => return Some(ip),
                    None => return peer,
                }
            }
            hops.first().and_then(|h| parse_hop(h)).or(peer)
        }
    }
}

/// The key a client address is rate-limited under: the address itself for
/// IPv4, its /64 network for IPv6 (one subscriber usually holds a whole /64,
/// so single IPv6 addresses would be fresh buckets for the asking).
pub fn rate_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::IpNet;
    use proptest::prelude::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    const PEER: &str = "10.0.0.2";

    #[test]
    fn without_trust_the_header_is_ignored() {
        let got = client_ip(Some(ip(PEER)), &["1.2.3.4"], &ProxyTrust::None);
        assert_eq!(got, Some(ip(PEER)));
    }

    #[test]
    fn one_hop_takes_what_the_proxy_appended_not_what_the_client_sent() {
        let trust = ProxyTrust::Hops(1);
        let peer = Some(ip(PEER));
        assert_eq!(
            client_ip(peer, &["203.0.113.7"], &trust),
            Some(ip("203.0.113.7"))
        );
        assert_eq!(
            client_ip(peer, &["6.6.6.6, 7.7.7.7", "203.0.113.7"], &trust),
            Some(ip("203.0.113.7")),
            "spoofed hops and a second header line"
        );
        assert_eq!(client_ip(peer, &[], &trust), peer, "no header: the peer");
        assert_eq!(client_ip(peer, &["6.6.6.6, garbage"], &trust), peer);
        assert_eq!(
            client_ip(peer, &["[2001:db8::1]:443"], &trust),
            Some(ip("2001:db8::1"))
        );
        assert_eq!(
            client_ip(peer, &["203.0.113.7:5000"], &trust),
            Some(ip("203.0.113.7"))
        );
    }

    #[test]
    fn two_hops_take_the_second_from_the_right() {
        let trust = ProxyTrust::Hops(2);
        let peer = Some(ip(PEER));
        assert_eq!(
            client_ip(peer, &["6.6.6.6, 203.0.113.7, 10.0.0.9"], &trust),
            Some(ip("203.0.113.7"))
        );
        // Straight to the inner proxy: one hop, all of it the proxies'.
        assert_eq!(
            client_ip(peer, &["203.0.113.7"], &trust),
            Some(ip("203.0.113.7"))
        );
    }

    #[test]
    fn trusted_addresses_are_skipped_from_the_right() {
        let trust = ProxyTrust::Addresses(vec![
            IpNet::parse("10.0.0.0/8").unwrap(),
            IpNet::parse("192.168.5.5").unwrap(),
        ]);
        let peer = Some(ip(PEER));
        assert_eq!(
            client_ip(
                peer,
                &["6.6.6.6, 203.0.113.7, 192.168.5.5, 10.1.1.1"],
                &trust
            ),
            Some(ip("203.0.113.7"))
        );
        assert_eq!(
            client_ip(peer, &["10.9.9.9, 192.168.5.5"], &trust),
            Some(ip("10.9.9.9")),
            "every hop a proxy: the leftmost"
        );
        // A peer that is not a proxy: its header is not believed.
        let stranger = Some(ip("203.0.113.99"));
        assert_eq!(client_ip(stranger, &["1.2.3.4"], &trust), stranger);
    }

    #[test]
    fn ipv6_clients_share_a_bucket_per_64() {
        assert_eq!(rate_key(ip("203.0.113.7")), "203.0.113.7");
        assert_eq!(rate_key(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
        assert_eq!(
            rate_key(ip("2001:db8:1:2:aaaa::1")),
            rate_key(ip("2001:db8:1:2:ffff:1:2:3"))
        );
        assert_ne!(
            rate_key(ip("2001:db8:1:2::1")),
            rate_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(rate_key(ip("::ffff:203.0.113.7")), "203.0.113.7");
    }

    fn any_header_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
                "[0-9a-f:]{2,20}",
                "[ -~]{0,12}",
                Just(",".to_owned()),
            ],
            0..6,
        )
        .prop_map(|parts| parts.join(","))
    }

    proptest! {
        /// Whatever a client puts in the header, with n proxies in front the
        /// address the outermost proxy saw is the one taken.
        #[test]
        fn spoofed_hops_never_change_the_address(
            spoofed in proptest::collection::vec(any_header_text(), 0..3),
            n in 1usize..4,
            client in any::<[u8; 4]>(),
        ) {
            let client = IpAddr::from(client);
            // The outermost proxy appends the client; each inner one the proxy before it.
            let mut appended = vec![client.to_string()];
            for i in 1..n {
                appended.push(format!("10.0.0.{i}"));
            }
            let mut header: Vec<&str> = spoofed.iter().map(String::as_str).collect();
            let line = appended.join(", ");
            header.push(&line);
            let peer = Some(ip(PEER));
            prop_assert_eq!(client_ip(peer, &header, &ProxyTrust::Hops(n)), Some(client));
            let proxies = ProxyTrust::Addresses(vec![IpNet::parse("10.0.0.0/8").unwrap()]);
            if !IpNet::parse("10.0.0.0/8").unwrap().contains(client) {
                prop_assert_eq!(client_ip(peer, &header, &proxies), Some(client));
            }
        }
    }
}
