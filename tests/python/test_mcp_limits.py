"""The MCP gateway under clients it does not control (docs/mcp.md "Limits"): slow and partial
connections, oversized and slow bodies, protocol mistakes, one tenant flooding while another
works, many parallel tool calls on one memory file, configuration mistakes found at start-up,
a start-up failure told to a stdio client, the core blocks as a resource, and a shutdown that
does not wait on half-open connections. Real processes, real sockets, the official Python MCP
SDK where a client would use it.

Run by `scripts/test.sh client`, after tests/python/test_mcp.py (whose helpers it uses):
    MEMORY_EXT_TEST_DSN=... MEMORY_MCP_BIN=$CARGO_TARGET_DIR/debug/memory-mcp python3 tests/python/test_mcp_limits.py
"""

import asyncio
import json
import os
import signal
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from mcp import Client, StdioServerParameters
from test_mcp import (ALICE, ALICE_TOKEN, BIN, BOB, BOB_TOKEN, GATEWAY_DSN, HttpGateway, admin, run_tests,
                      setup, sql, text)


def post(g, token, message, headers=None, timeout=30):
    """One JSON-RPC message POSTed with `token`: (HTTP status, headers, parsed body or None)."""
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    req = urllib.request.Request(g.url, data=data, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
            return r.status, r.headers, json.loads(body) if body else None
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, e.headers, json.loads(body) if body else None
        except ValueError:
            return e.code, e.headers, body


def call(g, token, name, arguments, id=1):
    return post(g, token, {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})


def raw(port, data):
    """A socket that has sent `data` and nothing more."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if data:
        s.sendall(data)
    return s


def closed_within(s, seconds):
    """Whether the server closes `s` within `seconds` (reads until EOF or the deadline)."""
    s.settimeout(0.2)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if s.recv(65536) == b"":
                return True
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


MEMORY_TOOL = ["memory", "archival_search"]
PARTIAL_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def closed_among(socks, seconds):
    """The sockets of `socks` the server has closed within `seconds`, watched all at once."""
    closed, open_ = set(), set(socks)
    deadline = time.time() + seconds
    while open_ and time.time() < deadline:
        ready, _, _ = select.select(list(open_), [], [], max(0.0, deadline - time.time()))
        for s in ready:
            try:
                gone = s.recv(65536) == b""
            except (ConnectionResetError, BrokenPipeError):
                gone = True
            if gone:
                closed.add(s)
                open_.discard(s)
    return closed


def test_slow_and_idle_connections_are_bounded_and_closed():
    # header_timeout_ms leaves room for a loaded machine: opening the 60 sockets once took
    # over 3 s in CI, and a kept connection timed out inside the window that counts refusals.
    limits = {"header_timeout_ms": 6000, "max_connections": 40, "max_unauthenticated": 20}
    with HttpGateway(limits) as g:
        # The start-up probe (GET /healthz) was itself an unauthenticated connection: the server
        # frees its slot when the connection's task ends, a moment after the probe has read the
        # answer, so on a busy machine the first of the 60 could find 19 free slots and 41 were
        # refused (seen once in a full `make test`). Give it that moment.
        time.sleep(0.5)
        started = time.time()
        socks = [raw(g.port, PARTIAL_HEADERS) for _ in range(60)]
        # Past the cap of connections not yet authenticated, a connection is closed at once:
        # 40 of the 60 (whichever the server took last), well before the header timeout. All
        # are watched together, so a busy machine's scheduling does not decide the count.
        refused = closed_among(socks, max(0.2, 1.5 - (time.time() - started)))
        assert len(refused) == 40, f"{len(refused)} of the 40 connections over the cap were closed at once"
        # The ones within the cap are closed when their headers do not come in time.
        kept = [s for s in socks if s not in refused]
        assert len(closed_among(kept, 9)) == 20, "a partial request outlived header_timeout_ms"
        for s in socks:
            s.close()
        # An idle keep-alive connection is closed after the same time.
        idle = raw(g.port, None)
        assert closed_within(idle, 8), "an idle connection stayed open"
        # And the server still serves.
        status, _, body = call(g, ALICE_TOKEN, "archival_search", {"query": "bees"})
        assert status == 200 and "result" in body, (status, body)


def test_bodies_are_capped_before_buffering_and_timed():
    limits = {"max_body_bytes": 65536, "body_timeout_ms": 1000}
    with HttpGateway(limits) as g:
        # Declared too large: refused before a byte of the body is read.
        s = raw(g.port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ALICE_TOKEN.encode()
                + b"\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n")
        s.settimeout(5)
        assert s.recv(200).startswith(b"HTTP/1.1 413"), "a declared 100 MB body was not refused"
        s.close()
        # Streamed in chunks past the cap: refused when the cap is crossed.
        status, _, body = post(g, ALICE_TOKEN, b'{"x": "' + b"y" * 200_000 + b'"}')
        assert status == 413, (status, body)
        # A body that stops coming: 408 after body_timeout_ms.
        s = raw(g.port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ALICE_TOKEN.encode()
                + b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
        s.settimeout(5)
        started = time.time()
        assert s.recv(200).startswith(b"HTTP/1.1 408"), "a stalled body was not timed out"
        assert time.time() - started < 4
        s.close()


def test_protocol_mistakes_get_the_json_rpc_errors_of_the_specification():
    with HttpGateway(allowed_origins=["https://app.example.com"]) as g:
        status, _, body = post(g, ALICE_TOKEN, b"{not json")
        assert status == 400 and body["error"]["code"] == -32700 and body["id"] is None, (status, body)
        status, _, body = post(g, ALICE_TOKEN, [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
        assert status == 400 and body["error"]["code"] == -32600, (status, body)
        for params in ({"name": 5}, {"name": "archival_search", "arguments": "query=bees"}, None):
            status, _, body = post(g, ALICE_TOKEN, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
            assert body["error"]["code"] == -32602 and body["id"] == 7, (params, status, body)
        status, _, body = call(g, ALICE_TOKEN, "no_such_tool", {})
        assert body["error"]["code"] == -32602 and "Unknown tool" in body["error"]["message"], body
        # Origin: loopback pages and the configured origin may call; another may not (403).
        for origin, want in (("http://localhost:5173", 200), ("https://app.example.com", 200),
                             ("https://evil.example", 403)):
            status, _, _ = call(g, ALICE_TOKEN, "archival_search", {"query": "bees"}) if origin is None else \
                post(g, ALICE_TOKEN, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": {"name": "archival_search", "arguments": {"query": "bees"}}},
                     headers={"Origin": origin})
            assert status == want, (origin, status)
        # Two Host headers are refused.
        s = raw(g.port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nAuthorization: Bearer "
                + ALICE_TOKEN.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        s.settimeout(5)
        assert s.recv(200).startswith(b"HTTP/1.1 400"), "two Host headers were accepted"
        s.close()
        # A NUL character in the arguments (jsonb cannot hold one) is told in the model's terms.
        status, _, body = call(g, ALICE_TOKEN, "archival_insert", {"content": "a\u0000b"})
        result = body["result"]
        assert result["isError"] and "NUL" in result["content"][0]["text"], body
        assert "unsupported Unicode escape" not in result["content"][0]["text"], body


def start(config):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(config, f)
    f.close()
    try:
        return subprocess.run([BIN, "http", "--config", f.name, "--listen", "127.0.0.1:0"],
                              capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)


def test_configuration_mistakes_fail_the_start():
    p = start({"dsn": GATEWAY_DSN, "tenants": [
        {"token": f" {ALICE_TOKEN} ", "user_id": ALICE, "agent_id": f"agent-{ALICE}"}]})
    assert p.returncode == 1 and "spaces" in p.stderr, (p.returncode, p.stderr)
    p = start({"dsn": GATEWAY_DSN, "tenants": [
        {"token": ALICE_TOKEN, "user_id": ALICE, "agent_id": f"agent-{ALICE}"},
        {"token": BOB_TOKEN, "user_id": BOB, "agent_id": "no-such-agent"}]})
    assert p.returncode == 1 and "no-such-agent" in p.stderr, (p.returncode, p.stderr)


def test_a_stdio_start_up_failure_reaches_the_client():
    params = StdioServerParameters(command=BIN, args=["stdio", "--user", ALICE, "--agent", "no-such-agent"],
                                   env={**os.environ, "MEMORY_MCP_DSN": GATEWAY_DSN})

    def messages(e):
        """The messages of an exception and, for a group (anyio's task groups), of its members."""
        inner = getattr(e, "exceptions", None)
        return [m for x in inner for m in messages(x)] if inner else [str(e)]

    async def main():
        try:
            async with Client(params) as c:
                await c.list_tools()
        except Exception as e:  # the SDK's error for a failed initialize
            return " | ".join(messages(e))
        return None

    said = asyncio.run(main())
    assert said and "no-such-agent" in said and "cannot start" in said, said


def test_core_blocks_are_a_resource_that_follows_edits():
    async def main(g):
        http = __import__("httpx2").AsyncClient(headers={"Authorization": f"Bearer {ALICE_TOKEN}"})
        from mcp.client.streamable_http import streamable_http_client
        async with Client(streamable_http_client(g.url, http_client=http)) as c:
            listed = await c.list_resources()
            assert [str(r.uri) for r in listed.resources] == ["memory://core-blocks"], listed
            before = (await c.read_resource("memory://core-blocks")).contents[0].text
            assert "<memory_blocks>" in before and "Likes marmalade" not in before, before
            r = await c.call_tool("memory_append", {"block": "human", "content": "Likes marmalade."})
            assert not r.is_error, text(r)
            after = (await c.read_resource("memory://core-blocks")).contents[0].text
            assert "Likes marmalade." in after, after
    with HttpGateway() as g:
        asyncio.run(main(g))


def test_one_tenant_cannot_starve_another():
    """Alice's calls wait on a lock the test holds: two hold her turns, the rest of her flood is
    answered 429 with Retry-After, and Bob is served meanwhile. Released, hers complete."""
    sql(ALICE, "SELECT memory_file_write('memories/locked.md', 'a b c d e f g h', NULL, NULL, NULL, %s)", ALICE)
    limits = {"tenant_concurrency": 2, "queue_timeout_ms": 500}
    with HttpGateway(limits, alice_tools=MEMORY_TOOL) as g:
        holder = __import__("psycopg").connect(admin.info.dsn)
        holder.execute("SELECT 1 FROM memory.files WHERE user_id = %s AND path = 'memories/locked.md' FOR UPDATE", (ALICE,))
        results = [None] * 8

        def flood(i):
            results[i] = call(g, ALICE_TOKEN, "memory", {"command": "str_replace", "path": "/memories/locked.md",
                                                         "old_str": "abcdefgh"[i], "new_str": str(i)}, id=i)
        threads = [threading.Thread(target=flood, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        # Alice's flood is queued or refused; Bob is served now, while it lasts.
        status, _, body = call(g, BOB_TOKEN, "archival_search", {"query": "bees"})
        assert status == 200 and "result" in body, (status, body)
        refused = [r for r in results if r is not None and r[0] == 429]
        assert len(refused) == 6, [r and r[0] for r in results]
        assert all(r[1].get("Retry-After") == "1" for r in refused)
        holder.rollback()
        holder.close()
        for t in threads:
            t.join()
        served = [r for r in results if r[0] == 200]
        assert len(served) == 2 and all(not r[2]["result"]["isError"] for r in served), served
    # A call's SQL runs at most statement_timeout_ms; then the model is told, in words.
    with HttpGateway({"statement_timeout_ms": 500}, alice_tools=MEMORY_TOOL) as g:
        holder = __import__("psycopg").connect(admin.info.dsn)
        holder.execute("SELECT 1 FROM memory.files WHERE user_id = %s AND path = 'memories/locked.md' FOR UPDATE", (ALICE,))
        status, _, body = call(g, ALICE_TOKEN, "memory", {"command": "insert", "path": "/memories/locked.md",
                                                          "insert_line": 0, "insert_text": "x"})
        holder.rollback()
        holder.close()
        result = body["result"]
        assert result["isError"] and "took longer than the server allows" in result["content"][0]["text"], body


def test_parallel_tool_calls_through_the_gateway_all_land():
    sql(ALICE, "SELECT memory_file_write('memories/parallel.md', 'head', NULL, NULL, NULL, %s)", ALICE)
    with HttpGateway(alice_tools=MEMORY_TOOL) as g:
        results = [None] * 32
        gate = threading.Barrier(32)

        def insert(i):
            gate.wait()
            results[i] = call(g, ALICE_TOKEN, "memory", {"command": "insert", "path": "/memories/parallel.md",
                                                         "insert_line": 1, "insert_text": f"edit-{i}"}, id=i)
        threads = [threading.Thread(target=insert, args=(i,)) for i in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    acked = [i for i, r in enumerate(results) if r[0] == 200 and not r[2]["result"]["isError"]]
    content = sql(ALICE, "SELECT content FROM memory.files WHERE user_id = %s AND path = 'memories/parallel.md'", ALICE)[0]
    lost = [i for i in acked if f"edit-{i}\n" not in content]
    assert not lost, f"acknowledged and lost: {lost}"
    assert len(acked) == 32, [r[0] for r in results]


def test_shutdown_does_not_wait_on_half_open_connections():
    for sig in (signal.SIGTERM, signal.SIGINT):
        with HttpGateway({"shutdown_grace_ms": 1000}) as g:
            socks = [raw(g.port, PARTIAL_HEADERS) for _ in range(5)]
            socks.append(raw(g.port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                             + ALICE_TOKEN.encode() + b"\r\nContent-Length: 500\r\n\r\n{"))
            time.sleep(0.3)
            started = time.time()
            g.proc.send_signal(sig)
            g.proc.wait(timeout=15)
            took = time.time() - started
            assert took < 8, f"{sig!r}: stopping took {took:.1f} s"
            for s in socks:
                s.close()


INSPECT_RW, INSPECT_RO = "inspect-rw-token-0123456789abcdef", "inspect-ro-token-0123456789abcdef"
METRICS_TOKEN = "limits-metrics-token-0123456789"


def inspect_gateway(limits=None, **settings):
    """A gateway with a read-write and a read-only inspector token for alice, and /metrics."""
    return HttpGateway(limits, extra_tenants=[
        {"token": INSPECT_RW, "user_id": ALICE, "agent_id": f"agent-{ALICE}", "name": "ops", "inspect": "read-write"},
        {"token": INSPECT_RO, "user_id": ALICE, "agent_id": f"agent-{ALICE}", "name": "viewer", "inspect": "read"},
    ], metrics={"token": METRICS_TOKEN}, **settings)


def http(g, method, path, body=None, headers=None):
    """One request on a connection of its own: (status, headers, body bytes)."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", g.port, timeout=30)
    h = dict(headers or {})
    if isinstance(body, dict):
        body = urllib.parse.urlencode(body).encode()
        h.setdefault("Content-Type", "application/x-www-form-urlencoded")
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    out = (r.status, r.headers, r.read())
    c.close()
    return out


def login(g, token):
    """A new inspector session: (cookie header, CSRF token), or the refusal's status."""
    status, headers, _ = http(g, "POST", "/inspect/login", {"token": token})
    if status != 303:
        return status
    cookie = headers["Set-Cookie"].split(";")[0]
    _, _, page = http(g, "GET", "/inspect/", headers={"Cookie": cookie})
    import re
    csrf = re.search(rb'name="csrf" value="([0-9a-f]+)"', page).group(1).decode()
    return cookie, csrf


def test_half_sent_bodies_on_any_route_cannot_lock_the_gateway_out():
    """0.13.0: connections that send a route's headers and then a body a byte at a time
    held the unauthenticated slots for good when the route was not /mcp (/inspect/login,
    /metrics), locking every new client out of the whole gateway. Every route has the body's
    time now, and an unauthenticated connection is closed past header + body timeouts."""
    limits = {"max_unauthenticated": 8, "header_timeout_ms": 1500, "body_timeout_ms": 1500}
    with inspect_gateway(limits) as g:
        heads = [b"POST /inspect/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 1000\r\n\r\nt",
                 b"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nt",
                 b"POST /inspect/memories/x/forget HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nt"]
        socks = [raw(g.port, heads[i % 3]) for i in range(8)]
        stop = threading.Event()

        def trickle():
            while not stop.is_set():
                for s in socks:
                    try:
                        s.send(b"o")
                    except OSError:
                        pass
                stop.wait(0.3)
        t = threading.Thread(target=trickle)
        t.start()
        try:
            # Every slow connection is answered or closed within the two timeouts (3 s), however
            # long it keeps sending.
            started = time.time()
            gone = closed_among(socks, 8)
            assert len(gone) == 8, f"{8 - len(gone)} half-sent connections outlived header + body timeouts"
            assert time.time() - started < 7
            # And a new client is served on every route.
            assert urllib.request.urlopen(f"http://127.0.0.1:{g.port}/healthz", timeout=5).status == 200
            status, _, _ = http(g, "GET", "/inspect/login")
            assert status == 200, status
            status, _, body = call(g, ALICE_TOKEN, "archival_search", {"query": "bees"})
            assert status == 200 and "result" in body, (status, body)
        finally:
            stop.set()
            t.join()
            for s in socks:
                s.close()
        # A body over the cap on a route that is not /mcp: 413 from its Content-Length.
        s = raw(g.port, b"POST /inspect/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 104857600\r\n\r\n")
        s.settimeout(5)
        assert s.recv(200).startswith(b"HTTP/1.1 413"), "a declared 100 MB login form was not refused"
        s.close()


def test_every_route_but_healthz_needs_a_host_of_the_allow_list():
    """DNS rebinding (0.13.0): the Host allow-list guards /inspect/* and /metrics as /mcp;
    the inspector's Origin check compares with configured names, never with the Host sent."""
    with inspect_gateway(allowed_hosts=["memory.example.com"]) as g:
        evil = {"Host": "evil.example.net"}
        assert http(g, "GET", "/inspect/login", headers=evil)[0] == 403
        assert http(g, "POST", "/inspect/login", {"token": INSPECT_RW},
                    headers={**evil, "Origin": "http://evil.example.net"})[0] == 403
        assert http(g, "GET", "/metrics", headers={**evil, "Authorization": f"Bearer {METRICS_TOKEN}"})[0] == 403
        assert http(g, "GET", "/healthz", headers=evil)[0] == 200
        assert http(g, "GET", "/inspect/login", headers={"Host": "memory.example.com:8808"})[0] == 200
        assert http(g, "GET", "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})[0] == 200
        # The server's configured name is its own origin; a page elsewhere is not.
        ok = http(g, "POST", "/inspect/login", {"token": INSPECT_RW},
                  headers={"Host": "memory.example.com", "Origin": "https://memory.example.com"})
        assert ok[0] == 303, ok[0]
        other = http(g, "POST", "/inspect/login", {"token": INSPECT_RW},
                     headers={"Host": "127.0.0.1", "Origin": "http://attacker.example.org"})
        assert other[0] == 403, other[0]


def test_inspector_logins_are_limited_per_address_and_sessions_per_token():
    with inspect_gateway() as g:
        # Logging out is a change: it needs the CSRF token.
        cookie, csrf = login(g, INSPECT_RW)
        assert http(g, "POST", "/inspect/logout", {}, headers={"Cookie": cookie})[0] == 403
        assert http(g, "GET", "/inspect/", headers={"Cookie": cookie})[0] == 200, "a logout without CSRF took effect"
        assert http(g, "POST", "/inspect/logout", {"csrf": csrf}, headers={"Cookie": cookie})[0] == 303
        assert http(g, "GET", "/inspect/", headers={"Cookie": cookie})[0] == 303, "logged out, still in"
        # A read token's logins push out its own sessions, never the read-write one's.
        rw, _ = login(g, INSPECT_RW)
        first_ro, _ = login(g, INSPECT_RO)
        for _ in range(40):
            login(g, INSPECT_RO)
        assert http(g, "GET", "/inspect/", headers={"Cookie": rw})[0] == 200, "a read token's logins evicted another token's session"
        assert http(g, "GET", "/inspect/", headers={"Cookie": first_ro})[0] == 303, "sessions of one token are not bounded"
        # Wrong tokens from one address: 401 for the first ten, then 429 with Retry-After, the
        # right token included, while sessions already made keep working.
        codes = [http(g, "POST", "/inspect/login", {"token": f"wrong-{i}"})[0] for i in range(60)]
        assert codes[:10] == [401] * 10 and set(codes[10:]) == {429}, codes
        status, headers, _ = http(g, "POST", "/inspect/login", {"token": INSPECT_RW})
        assert status == 429 and int(headers["Retry-After"]) >= 1, status
        assert http(g, "GET", "/inspect/", headers={"Cookie": rw})[0] == 200


def test_bearer_tokens_are_taken_exactly():
    """A token with spaces around it is not the token (the configuration file refuses such
    tokens; requests did not)."""
    with inspect_gateway() as g:
        # (Spaces after the value are not part of an HTTP header's value: the parser drops them.)
        for bad in (f"Bearer  {ALICE_TOKEN}", f"Bearer \t{ALICE_TOKEN}", f"Bearer {ALICE_TOKEN} x"):
            status, _, _ = post(g, ALICE_TOKEN, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                headers={"Authorization": bad})
            assert status == 401, (bad, status)
        assert http(g, "GET", "/metrics", headers={"Authorization": f"Bearer  {METRICS_TOKEN}"})[0] == 401
        status, _, body = post(g, ALICE_TOKEN, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert status == 200, (status, body)


def test_hostile_requests_on_every_route_get_no_internal_error():
    """The gateway's doors under a fixed-seed stream of hostile requests (0.13.0's red team,
    as a test): every route, every method, Host, Origin, token, cookie and CSRF variants, bodies
    of garbage, JSON-RPC and forms. No answer is a 500, the process stays up, and a real call
    works afterwards. Prints the count of each status."""
    import http.client as hc
    import random
    rnd = random.Random(45)
    with inspect_gateway(allowed_hosts=["memory.example.com"], limits={"max_body_bytes": 65536}) as g:
        cookie, csrf = login(g, INSPECT_RW)
        ro_cookie, ro_csrf = login(g, INSPECT_RO)
        junk = ["", "%00", "../../etc/passwd", "\u202e", "a" * 3000, "<script>", "00000000-0000-0000-0000-000000000000",
                "'; DROP TABLE memory.items; --", "%2e%2e%2f", "😀", "%ff%fe"]
        def path():
            j = lambda: urllib.parse.quote(rnd.choice(junk), safe="")
            return rnd.choice([
                "/mcp", "/mcp/", "/healthz", "/metrics", "/inspect", "/inspect/", "/inspect/login", "/inspect/logout",
                f"/inspect/memories/{j()}", f"/inspect/memories/{j()}/{rnd.choice(['forget', 'restore', 'edit', j()])}",
                "/inspect/memories?q=" + j(), f"/inspect/blocks/{j()}", f"/inspect/blocks/{j()}/{j()}",
                "/inspect/threads/" + j(), "/inspect/files/view?path=" + j(), "/inspect/export/download",
                f"/inspect/proposals/{j()}/{rnd.choice(['approve', 'reject', j()])}", "/inspect/assets/" + j(),
                "/" + j(), "/inspect/" + j()])
        def headers():
            h = {}
            h["Host"] = rnd.choice(["127.0.0.1", f"127.0.0.1:{g.port}", "localhost", "[::1]", "memory.example.com",
                                    "evil.example.net", "", "127.0.0.1, evil", "a" * 300])
            if rnd.random() < 0.4:
                h["Origin"] = rnd.choice(["http://127.0.0.1", "https://memory.example.com", "http://evil.example.net", "null", ""])
            if rnd.random() < 0.5:
                h["Authorization"] = rnd.choice([f"Bearer {ALICE_TOKEN}", f"Bearer {METRICS_TOKEN}", f"Bearer {BOB_TOKEN} ",
                                                 "Bearer", "Basic xyz", "Bearer " + "x" * 5000, f"bearer {ALICE_TOKEN}"])
            if rnd.random() < 0.5:
                h["Cookie"] = rnd.choice([cookie, ro_cookie, "memory_inspect=" + "0" * 64, "memory_inspect=", "a=b; " + cookie])
            if rnd.random() < 0.3:
                h["Content-Type"] = rnd.choice(["application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data"])
            return h
        def body():
            return rnd.choice([
                None, b"", os.urandom(rnd.randint(1, 2000)),
                json.dumps({"jsonrpc": "2.0", "id": rnd.randint(0, 9), "method": rnd.choice(["tools/call", "tools/list", "initialize", "x"]),
                            "params": {"name": rnd.choice(["archival_search", "memory", "nope", 7]), "arguments": {"query": rnd.choice(junk)}}}).encode(),
                urllib.parse.urlencode({"csrf": rnd.choice([csrf, ro_csrf, "", "x"]), "value": rnd.choice(junk), "token": rnd.choice([INSPECT_RW, "x"])}).encode(),
                b"[" * 200 + b"]" * 200, b'{"jsonrpc": "2.0", "method": "tools/call", "params": []}'])
        statuses = {}
        for i in range(1500):
            c = hc.HTTPConnection("127.0.0.1", g.port, timeout=30)
            try:
                method = rnd.choice(["GET", "POST", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"])
                h = headers()
                host = h.pop("Host")
                c.putrequest(method, path(), skip_host=True, skip_accept_encoding=True)
                if host:
                    c.putheader("Host", host)
                for k, v in h.items():
                    c.putheader(k, v)
                b = body()
                if b is not None:
                    c.putheader("Content-Length", str(len(b)))
                c.endheaders(b)
                status = c.getresponse().status
            except (hc.HTTPException, ConnectionError, socket.timeout) as e:
                status = type(e).__name__
            finally:
                c.close()
            statuses[status] = statuses.get(status, 0) + 1
            assert status != 500, f"request {i} got 500"
        print(f"    {sum(statuses.values())} hostile requests: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str)))
        assert g.proc.poll() is None, "the gateway died"
        assert urllib.request.urlopen(f"http://127.0.0.1:{g.port}/healthz", timeout=5).status == 200
        status, _, body = call(g, ALICE_TOKEN, "archival_search", {"query": "bees"})
        assert status == 200 and "result" in body, (status, body)
        status, _, _ = http(g, "GET", "/inspect/login")
        assert status == 200, status


def main():
    setup()
    return run_tests(globals(), " (MCP gateway limits)")


if __name__ == "__main__":
    sys.exit(main())
