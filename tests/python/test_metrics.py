"""The gateway's `/metrics` (docs/mcp.md "Metrics"): scraped before and after a workload of
known calls, every counter moved by exactly the calls made — requests and latency per method
and tool, errors by kind, authentication failures by surface, a tenant's throttled calls — and
the scrape itself needs its own token, beside `/mcp` or on an address of its own. Real
processes and sockets; the exposition is parsed as Prometheus's text format.

Run by `scripts/test.sh client`, after tests/python/test_mcp_limits.py (whose helpers it uses):
    MEMORY_EXT_TEST_DSN=... MEMORY_MCP_BIN=$CARGO_TARGET_DIR/debug/memory-mcp python3 tests/python/test_metrics.py
"""

import re
import sys
import time
import urllib.error
import urllib.request

from test_mcp import ALICE, ALICE_TOKEN, BOB_TOKEN, HttpGateway, free_port, run_tests, setup
from test_mcp_limits import PARTIAL_HEADERS, call, post, raw

METRICS_TOKEN = "metrics-scraper-token-0123456789"
SERIES = re.compile(r'^([a-z_]+)(\{(.*)\})? (\S+)$')


def parse(text):
    """{(name, frozenset of label pairs): value} of an exposition; checks its comment lines."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) memory_mcp_[a-z_]+ ", line), line
            continue
        m = SERIES.match(line)
        assert m, f"not a series line: {line!r}"
        labels = frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def scrape(url, token=METRICS_TOKEN):
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers["Content-Type"]
        return parse(r.read().decode())


def value(series, name, **labels):
    return series.get((name, frozenset(labels.items())), 0.0)


def delta(before, after, name, **labels):
    return value(after, name, **labels) - value(before, name, **labels)


def metrics_url(g):
    return g.url.rsplit("/", 1)[0] + "/metrics"


def test_counters_move_by_exactly_the_calls_made():
    with HttpGateway(metrics={"token": METRICS_TOKEN}, limits={"pool_size": 5}) as g:
        url = metrics_url(g)
        before = scrape(url)
        for i in range(2):
            status, _, body = post(g, ALICE_TOKEN, {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {}})
            assert status == 200 and "result" in body, (status, body)
        for i in range(3):
            status, _, body = call(g, ALICE_TOKEN, "archival_insert", {"content": f"metrics fact {i}"}, id=10 + i)
            assert status == 200 and not body["result"].get("isError"), body
        # A tool error (the model's mistake: no such memory), an unknown tool, a bad token, a
        # malformed message.
        status, _, body = call(g, ALICE_TOKEN, "memory_replace", {"block": "no_such_block", "old": "a", "new": "b"}, id=20)
        assert status == 200 and body["result"]["isError"], body
        status, _, body = call(g, ALICE_TOKEN, "no_such_tool", {}, id=21)
        assert body["error"]["code"] == -32602, body
        status, _, _ = post(g, "not-a-token-of-anyone-at-all", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert status == 401
        status, _, _ = post(g, BOB_TOKEN, b"{not json")
        assert status == 400
        after = scrape(url)

        assert delta(before, after, "memory_mcp_requests_total", method="tools/list", tool="") == 2
        assert delta(before, after, "memory_mcp_requests_total", method="tools/call", tool="archival_insert") == 3
        assert delta(before, after, "memory_mcp_requests_total", method="tools/call", tool="memory_replace") == 1
        # A name no tool has is counted as "unknown", never as a label the client made up.
        assert delta(before, after, "memory_mcp_requests_total", method="tools/call", tool="unknown") == 1
        assert not any(n == "memory_mcp_requests_total" and ("tool", "no_such_tool") in l for n, l in after)
        assert delta(before, after, "memory_mcp_request_duration_seconds_count", method="tools/call", tool="archival_insert") == 3
        assert delta(before, after, "memory_mcp_request_duration_seconds_bucket", method="tools/call", tool="archival_insert", le="+Inf") == 3
        assert delta(before, after, "memory_mcp_request_duration_seconds_sum", method="tools/call", tool="archival_insert") > 0
        assert delta(before, after, "memory_mcp_errors_total", kind="tool_error") == 1
        assert delta(before, after, "memory_mcp_errors_total", kind="unknown_tool") == 1
        assert delta(before, after, "memory_mcp_errors_total", kind="unauthorized") == 1
        assert delta(before, after, "memory_mcp_errors_total", kind="invalid_request") == 1
        assert delta(before, after, "memory_mcp_auth_failures_total", surface="mcp") == 1
        # Nothing else moved: every counter's total change is the calls above.
        moved = sum(after[k] - before.get(k, 0) for k in after if k[0] == "memory_mcp_requests_total")
        assert moved == 2 + 3 + 1 + 1, moved
        errors = sum(after[k] - before.get(k, 0) for k in after if k[0] == "memory_mcp_errors_total")
        assert errors == 4, errors
        assert value(after, "memory_mcp_pool_max") == 5
        assert value(after, "memory_mcp_pool_connections", state="in_use") + \
            value(after, "memory_mcp_pool_connections", state="idle") <= 5

        # The scrape needs its token; a refused scrape is counted as well.
        for token in (None, ALICE_TOKEN, "wrong-metrics-token-000000"):
            try:
                scrape(url, token)
                raise AssertionError(f"scraped with {token!r}")
            except urllib.error.HTTPError as e:
                assert e.code == 401, e.code
        assert value(scrape(url), "memory_mcp_auth_failures_total", surface="metrics") == \
            value(after, "memory_mcp_auth_failures_total", surface="metrics") + 3


def test_a_throttled_call_is_counted_for_its_tenant():
    # One turn per tenant, a short wait for it: a request that has sent its headers but not its
    # body holds Alice's turn, so her next call is refused with 429 at once.
    limits = {"tenant_concurrency": 1, "queue_timeout_ms": 200, "body_timeout_ms": 5000}
    with HttpGateway(metrics={"token": METRICS_TOKEN}, limits=limits) as g:
        url = metrics_url(g)
        before = scrape(url)
        holder = raw(g.port, PARTIAL_HEADERS + f"Authorization: Bearer {ALICE_TOKEN}\r\nContent-Length: 100\r\n\r\n".encode())
        try:
            time.sleep(0.3)
            status, headers, _ = call(g, ALICE_TOKEN, "archival_search", {"query": "x"})
            assert status == 429 and headers["Retry-After"] == "1", status
            # Bob's turn is his own.
            status, _, _ = call(g, BOB_TOKEN, "archival_search", {"query": "x"})
            assert status == 200, status
        finally:
            holder.close()
        after = scrape(url)
        assert delta(before, after, "memory_mcp_throttled_total", tenant=ALICE) == 1
        assert sum(after[k] - before.get(k, 0) for k in after if k[0] == "memory_mcp_throttled_total") == 1
        assert delta(before, after, "memory_mcp_errors_total", kind="throttled") == 1


def test_metrics_on_an_address_of_their_own():
    port = free_port()
    with HttpGateway(metrics={"token": METRICS_TOKEN, "listen": f"127.0.0.1:{port}"}) as g:
        # Not beside /mcp ...
        try:
            urllib.request.urlopen(urllib.request.Request(metrics_url(g), headers={"Authorization": f"Bearer {METRICS_TOKEN}"}), timeout=10)
            raise AssertionError("/metrics served beside /mcp")
        except urllib.error.HTTPError as e:
            assert e.code == 404, e.code
        deadline = time.time() + 10
        while True:
            try:
                series = scrape(f"http://127.0.0.1:{port}/metrics")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.time() < deadline, "the metrics address did not open"
                time.sleep(0.1)
        assert ("memory_mcp_pool_max", frozenset()) in series
    # Without "metrics" in the configuration there is no /metrics at all.
    with HttpGateway() as g:
        try:
            urllib.request.urlopen(metrics_url(g), timeout=10)
            raise AssertionError("/metrics served without a metrics token configured")
        except urllib.error.HTTPError as e:
            assert e.code == 404, e.code


def test_the_dashboard_and_exporter_files_name_only_series_that_exist():
    """docs/monitoring: every gateway series the Grafana dashboard plots is one /metrics has,
    and every memory.stats() metric it plots is one the function produces."""
    import json
    import os
    from test_mcp import admin
    here = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "monitoring")
    dash = json.load(open(os.path.join(here, "grafana-dashboard.json")))
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert len(exprs) >= 16, len(exprs)
    with HttpGateway(metrics={"token": METRICS_TOKEN}) as g:
        with urllib.request.urlopen(urllib.request.Request(
                metrics_url(g), headers={"Authorization": f"Bearer {METRICS_TOKEN}"}), timeout=10) as r:
            exposition = r.read().decode()
    served = set(re.findall(r"^# TYPE (memory_mcp_[a-z_]+) ", exposition, re.M))
    for e in exprs:
        for name in re.findall(r"memory_mcp_[a-z_]+", e):
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            assert base in served, (name, e)
    source = admin.execute("SELECT prosrc FROM pg_proc WHERE oid = 'memory.stats'::regproc").fetchone()[0]
    for e in exprs:
        for metric in re.findall(r'metric="([a-z_]+)"', e):
            assert f"'{metric}'" in source, (metric, e)
    exporter = open(os.path.join(here, "postgres_exporter.yaml")).read()
    assert "SELECT tenant, metric, label, value FROM memory.stats()" in exporter
    cols = [d.name for d in admin.execute("SELECT * FROM memory.stats() LIMIT 0").description]
    assert cols == ["tenant", "metric", "label", "value"], cols


def main():
    setup()
    return run_tests(globals(), " (gateway metrics)")


if __name__ == "__main__":
    sys.exit(main())
