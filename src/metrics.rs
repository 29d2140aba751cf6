//! A small Prometheus registry: request counts and latency by route and
//! status, plus named counters the services bump. Rendered in the text
//! exposition format at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Debug, Default)]
struct Latency {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Debug, Default)]
struct Inner {
    requests: BTreeMap<(String, String, u16), u64>,
    latency: BTreeMap<(String, String), Latency>,
    counters: BTreeMap<&'static str, u64>,
}

/// The registry of one instance.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    /// Records one finished HTTP request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *inner
            .requests
            .entry((method.to_owned(), route.to_owned(), status))
            .or_default() += 1;
        let secs = elapsed.as_secs_f64();
        let latency = inner
            .latency
            .entry((method.to_owned(), route.to_owned()))
            .or_default();
        latency.count += 1;
        latency.sum += secs;
        for (bucket, bound) in latency.buckets.iter_mut().zip(BUCKETS) {
            if secs <= bound {
                *bucket += 1;
            }
        }
    }

    /// Adds one to a named counter (`uttt_<name>_total`).
    pub fn count(&self, name: &'static str) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *inner.counters.entry(name).or_default() += 1;
    }

    /// The value of a named counter.
    pub fn counter(&self, name: &'static str) -> u64 {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.counters.get(name).copied().unwrap_or(0)
    }

    /// The registry in the Prometheus text format.
    pub fn render(&self) -> String {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        out.push_str(
            "# HELP uttt_http_requests_total HTTP requests by method, route and status.\n",
        );
        out.push_str("# TYPE uttt_http_requests_total counter\n");
        for ((method, route, status), n) in &inner.requests {
            let _ = writeln!(
                out,
                "uttt_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                escape(route)
            );
        }
        out.push_str("# HELP uttt_http_request_duration_seconds Time to the response head.\n");
        out.push_str("# TYPE uttt_http_request_duration_seconds histogram\n");
        for ((method, route), l) in &inner.latency {
            let labels = format!("method=\"{method}\",route=\"{}\"", escape(route));
            for (bound, n) in BUCKETS.iter().zip(l.buckets) {
                let _ = writeln!(
                    out,
                    "uttt_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "uttt_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                l.count
            );
            let _ = writeln!(
                out,
                "uttt_http_request_duration_seconds_sum{{{labels}}} {}",
                l.sum
            );
            let _ = writeln!(
                out,
                "uttt_http_request_duration_seconds_count{{{labels}}} {}",
                l.count
            );
        }
        for (name, n) in &inner.counters {
            let _ = writeln!(
                out,
                "# TYPE uttt_{name}_total counter\nuttt_{name}_total {n}"
            );
        }
        out
    }
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_and_status() {
        let m = Metrics::default();
        m.observe_request("GET", "/api/v1/me", 200, Duration::from_millis(3));
        m.observe_request("GET", "/api/v1/me", 200, Duration::from_millis(30));
        m.observe_request("GET", "/api/v1/me", 401, Duration::from_millis(1));
        m.count("moves");
        let text = m.render();
        assert!(
            text.contains(
                "uttt_http_requests_total{method=\"GET\",route=\"/api/v1/me\",status=\"200\"} 2"
            ),
            "{text}"
        );
        assert!(text.contains("status=\"401\"} 1"));
        assert!(text.contains("uttt_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/v1/me\",le=\"0.005\"} 2"));
        assert!(text.contains(
            "uttt_http_request_duration_seconds_count{method=\"GET\",route=\"/api/v1/me\"} 3"
        ));
        assert!(text.contains("uttt_moves_total 1"));
    }
}
