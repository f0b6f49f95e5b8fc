//! `GET /metrics`: what the gateway did, in Prometheus's text format (version 0.0.4), for the
//! people who run it (docs/mcp.md "Metrics"). Counters and latency histograms per MCP method
//! and tool, errors by kind, authentication failures, each tenant's throttled calls, the
//! inspector's pages, and the database pool's state at the time of the scrape.
//!
//! # Why by hand
//! The format is a few lines per series, and the gateway's series are few and fixed in kind; a
//! metrics library would bring a registry, its macros and its own locking for what a mutex over
//! two maps does here. Tested by `cargo test -p memory_gateway` and, through a real scrape, by
//! tests/python/test_mcp_limits.py.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds: a tool call is one SQL call, milliseconds
/// when all is well; the top buckets catch a slow model endpoint or a statement timeout.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// A series: a metric's name and its labels, in order.
type Key = (&'static str, Vec<(&'static str, String)>);

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

#[derive(Default)]
struct Series {
    counters: BTreeMap<Key, u64>,
    histograms: BTreeMap<Key, Histogram>,
}

/// Every series of this process.
pub struct Metrics(Mutex<Series>);

/// Help texts, one per metric name, written before the metric's first series.
const HELP: &[(&str, &str, &str)] = &[
    (
        "memory_mcp_requests_total",
        "counter",
        "MCP requests answered, by JSON-RPC method and tool (tools/call).",
    ),
    (
        "memory_mcp_request_duration_seconds",
        "histogram",
        "Time to answer an MCP request, by method and tool.",
    ),
    (
        "memory_mcp_errors_total",
        "counter",
        "Requests that failed, by kind (HTTP refusals, JSON-RPC errors, tool errors, SQL errors).",
    ),
    (
        "memory_mcp_auth_failures_total",
        "counter",
        "Requests refused for a missing or unknown token, by surface (mcp, inspect, metrics).",
    ),
    (
        "memory_mcp_throttled_total",
        "counter",
        "Calls refused with 429 because their tenant had too many at once, by tenant.",
    ),
    (
        "memory_mcp_inspect_requests_total",
        "counter",
        "Inspector pages and actions served, by page and HTTP status.",
    ),
    (
        "memory_mcp_inspect_duration_seconds",
        "histogram",
        "Server time of an inspector page or action, by page.",
    ),
    (
        "memory_mcp_subscriptions_total",
        "counter",
        "Resource subscriptions made (resources/subscribe and subscriptions/listen).",
    ),
    (
        "memory_mcp_notifications_total",
        "counter",
        "Notifications sent to subscribed clients, by kind (resources_updated).",
    ),
    (
        "memory_mcp_webhook_posts_total",
        "counter",
        "Webhook posts, by result (delivered; failed, to be tried again; dead_letter, given up).",
    ),
    (
        "memory_mcp_pool_connections",
        "gauge",
        "Database connections of the gateway's pool, by state (in_use, idle).",
    ),
    (
        "memory_mcp_pool_max",
        "gauge",
        "The pool's size (limits.pool_size).",
    ),
    (
        "memory_mcp_pool_waiting",
        "gauge",
        "Requests waiting for a database connection.",
    ),
];

pub fn global() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| Metrics(Mutex::new(Series::default())))
}

fn labels(l: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    l.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

impl Metrics {
    pub fn inc(&self, name: &'static str, l: &[(&'static str, &str)]) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *s.counters.entry((name, labels(l))).or_default() += 1;
    }

    pub fn observe(&self, name: &'static str, l: &[(&'static str, &str)], took: Duration) {
        let secs = took.as_secs_f64();
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let h = s.histograms.entry((name, labels(l))).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                h.counts[i] += 1;
            }
        }
        h.sum += secs;
        h.count += 1;
    }

    /// The exposition: every series, then the pool's gauges as given.
    pub fn render(&self, pool: &PoolState) -> String {
        let s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for (name, kind, help) in HELP {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            match *kind {
                "counter" => {
                    for ((n, l), v) in s.counters.iter().filter(|((n, _), _)| n == name) {
                        let _ = writeln!(out, "{n}{} {v}", fmt_labels(l, None));
                    }
                }
                "histogram" => {
                    for ((n, l), h) in s.histograms.iter().filter(|((n, _), _)| n == name) {
                        for (i, b) in BUCKETS.iter().enumerate() {
                            let le = format!("{b}");
                            let _ = writeln!(
                                out,
                                "{n}_bucket{} {}",
                                fmt_labels(l, Some(&le)),
                                h.counts[i]
                            );
                        }
                        let _ =
                            writeln!(out, "{n}_bucket{} {}", fmt_labels(l, Some("+Inf")), h.count);
                        let _ = writeln!(out, "{n}_sum{} {}", fmt_labels(l, None), h.sum);
                        let _ = writeln!(out, "{n}_count{} {}", fmt_labels(l, None), h.count);
                    }
                }
                _ => {
                    let v: Vec<(String, usize)> = match *name {
                        "memory_mcp_pool_connections" => vec![
                            ("{state=\"in_use\"}".into(), pool.in_use),
                            ("{state=\"idle\"}".into(), pool.idle),
                        ],
                        "memory_mcp_pool_max" => vec![(String::new(), pool.max)],
                        _ => vec![(String::new(), pool.waiting)],
                    };
                    for (l, n) in v {
                        let _ = writeln!(out, "{name}{l} {n}");
                    }
                }
            }
        }
        out
    }
}

/// The database pool at the time of a scrape (deadpool's status).
pub struct PoolState {
    pub in_use: usize,
    pub idle: usize,
    pub max: usize,
    pub waiting: usize,
}

/// `{a="x",b="y"}`, values escaped as the format asks (backslash, quote, line feed).
fn fmt_labels(l: &[(&'static str, String)], le: Option<&str>) -> String {
    let mut parts: Vec<String> = l
        .iter()
        .map(|(k, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{k}=\"{v}\"")
        })
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_histograms_and_escaping() {
        let m = Metrics(Mutex::new(Series::default()));
        m.inc(
            "memory_mcp_requests_total",
            &[("method", "tools/call"), ("tool", "memory_append")],
        );
        m.inc(
            "memory_mcp_requests_total",
            &[("method", "tools/call"), ("tool", "memory_append")],
        );
        m.inc("memory_mcp_throttled_total", &[("tenant", "a\"b\\c\nd")]);
        m.observe(
            "memory_mcp_request_duration_seconds",
            &[("method", "tools/list"), ("tool", "")],
            Duration::from_millis(3),
        );
        let pool = PoolState {
            in_use: 1,
            idle: 2,
            max: 16,
            waiting: 0,
        };
        let text = m.render(&pool);
        assert!(text.contains(
            "memory_mcp_requests_total{method=\"tools/call\",tool=\"memory_append\"} 2\n"
        ));
        assert!(text.contains("memory_mcp_throttled_total{tenant=\"a\\\"b\\\\c\\nd\"} 1\n"));
        // 3 ms: not in the 1 ms or 2.5 ms buckets, in the 5 ms one and every one above.
        assert!(text.contains("memory_mcp_request_duration_seconds_bucket{method=\"tools/list\",tool=\"\",le=\"0.0025\"} 0\n"));
        assert!(text.contains("memory_mcp_request_duration_seconds_bucket{method=\"tools/list\",tool=\"\",le=\"0.005\"} 1\n"));
        assert!(text.contains("memory_mcp_request_duration_seconds_bucket{method=\"tools/list\",tool=\"\",le=\"+Inf\"} 1\n"));
        assert!(text.contains(
            "memory_mcp_request_duration_seconds_count{method=\"tools/list\",tool=\"\"} 1\n"
        ));
        assert!(text.contains("memory_mcp_pool_connections{state=\"idle\"} 2\n"));
        assert!(text.contains("# TYPE memory_mcp_pool_max gauge\nmemory_mcp_pool_max 16\n"));
    }
}
