"""`make bench agents` (scripts/bench.sh): what 0.9.0's bounds cost and buy, on the bench server.

1. gateway: another tenant's latency while one tenant floods a `memory-mcp http` gateway with
   32 concurrent heavy `conversation_search` calls: with the default per-tenant limit
   (`tenant_concurrency` 4) and with it set to the pool size (16: no per-tenant limit, as 0.8.0
   served), each beside the same calls with no flood.
2. worker: another tenant's episode latency behind one tenant's 200 run ends (the worker
   pointed at this database), and how long the flood took.
3. backend: a new connection's first `memory_embed` and `memory_query` against its second, and a
   backend's memory (Pss, private) after them: with the model the postmaster preloaded, and
   with a model path the postmaster did not load (each backend loads its own, as before 0.9.0).

    python3 bench/agents.py --dsn DSN --out bench/results [--suites gateway,worker,backend]
Needs MEMORY_MCP_BIN (a release memory-mcp) for the gateway suite.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

import psycopg

ROLE = "memory_bench_agents"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def ms(xs):
    return {"p50": round(pct(xs, 50) * 1e3, 2), "p95": round(pct(xs, 95) * 1e3, 2), "n": len(xs)}


def admin(dsn):
    return psycopg.connect(dsn, autocommit=True)


def setup_role(a):
    a.execute(f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN "
              f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOBYPASSRLS; END IF; END$$")
    db = a.execute("SELECT current_database()").fetchone()[0]
    a.execute(f'GRANT CONNECT ON DATABASE "{db}" TO {ROLE}')


def as_tenant(a, user, q, *params):
    with a.transaction():
        a.execute("SELECT set_config('memory_ext.user_id', %s, true)", (user,))
        return a.execute(q, params).fetchall()


# -- gateway ------------------------------------------------------------------------------------

def gateway(dsn):
    a = admin(dsn)
    setup_role(a)
    flood, other = "bench-flood", "bench-quiet"
    for user, n in ((flood, 5000), (other, 50)):
        as_tenant(a, user, "SELECT memory_agent(%s, %s, 'I help.', 'Name: X')", f"agent-{user}", user)
        have = as_tenant(a, user, "SELECT count(*) FROM memory.messages WHERE user_id = %s", user)[0][0]
        if have < n:
            as_tenant(a, user, "SELECT count(message_append(%s, CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END, "
                      "'Message ' || i || ': we talked about the garden, the tomatoes, the bees and the weather.', %s)) "
                      "FROM generate_series(%s::int, %s::int) i", f"thread-{user}", user, have + 1, n)
    results = {}
    for label, limits in (("per-tenant limit (default: 4 of 16)", {}),
                          ("no per-tenant limit (16 of 16, as 0.8.0)", {"tenant_concurrency": 16})):
        port = free_port()
        cfg = {"dsn": dsn + f" user={ROLE}", "listen": f"127.0.0.1:{port}", "limits": limits, "tenants": [
            {"token": f"{u}-token-0123456789", "user_id": u, "agent_id": f"agent-{u}", "thread_id": f"thread-{u}"}
            for u in (flood, other)]}
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(cfg, f)
        f.close()
        proc = subprocess.Popen([os.environ["MEMORY_MCP_BIN"], "http", "--config", f.name],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(port)
            url = f"http://127.0.0.1:{port}/mcp"
            call = lambda user, q: post(url, f"{user}-token-0123456789", "conversation_search", {"query": q})
            for _ in range(5):
                call(other, "tomatoes")
            quiet = [timed(lambda: call(other, "tomatoes")) for _ in range(40)]
            stop = threading.Event()
            flood_stats = {"ok": 0, "429": 0}

            def flooder():
                while not stop.is_set():
                    status = call(flood, "what did we say about the weather and the bees in the garden")
                    flood_stats["ok" if status == 200 else "429"] += 1
            threads = [threading.Thread(target=flooder) for _ in range(32)]
            for t in threads:
                t.start()
            time.sleep(2)
            during = [timed(lambda: call(other, "tomatoes")) for _ in range(40)]
            stop.set()
            for t in threads:
                t.join()
            results[label] = {"quiet": ms(quiet), "during_flood": ms(during), "flood_calls": flood_stats}
        finally:
            proc.terminate()
            proc.wait()
            os.unlink(f.name)
    return results


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port):
    deadline = time.time() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            return
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def post(url, token, name, arguments):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


# -- worker -------------------------------------------------------------------------------------

def worker(dsn):
    a = admin(dsn)
    db = a.execute("SELECT current_database()").fetchone()[0]
    for name, value in (("memory_ext.database", db), ("memory_ext.worker_jobs", "episodes"),
                        ("memory_ext.worker_naptime", "1s"), ("memory_ext.run_idle_timeout", "0")):
        a.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    a.execute("SELECT pg_reload_conf()")
    deadline = time.time() + 60
    while not a.execute("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'memory_ext worker' "
                        "AND datname = current_database())").fetchone()[0]:
        assert time.time() < deadline, "the worker did not come to this database"
        time.sleep(0.5)
    run = str(int(time.time()))
    flood, other = f"bench-runs-{run}", f"bench-one-{run}"
    for user, n in ((flood, 200), (other, 1)):
        as_tenant(a, user, "SELECT count(message_append(%s || '-t' || i, 'user', 'We planned the garden, part ' || i || '.', %s)) + "
                  "count(message_append(%s || '-t' || i, 'assistant', 'Noted the garden plan, part ' || i || '.', %s)) "
                  "FROM generate_series(1, %s::int) i", user, user, user, user, n)
    with a.transaction():
        a.execute("SELECT run_end(%s || '-t' || i) FROM generate_series(1, 200) i ORDER BY i", (flood,))
        a.execute("SELECT run_end(%s || '-t1')", (other,))
    started = time.time()
    other_at = flood_at = None
    while other_at is None or flood_at is None:
        assert time.time() - started < 1800, "the runs were not ended in 30 minutes"
        if other_at is None and a.execute("SELECT count(*) FROM memory.run_ends WHERE user_id = %s", (other,)).fetchone()[0] == 0:
            other_at = time.time() - started
        if flood_at is None and a.execute("SELECT count(*) FROM memory.run_ends WHERE user_id = %s", (flood,)).fetchone()[0] == 0:
            flood_at = time.time() - started
        time.sleep(0.1)
    for name in ("memory_ext.database", "memory_ext.worker_jobs", "memory_ext.worker_naptime", "memory_ext.run_idle_timeout"):
        a.execute(f"ALTER SYSTEM RESET {name}")
    a.execute("SELECT pg_reload_conf()")
    return {"other_tenant_episode_s": round(other_at, 2), "flood_of_200_done_s": round(flood_at, 2),
            "runs_per_s": round(201 / flood_at, 2)}


# -- backend ------------------------------------------------------------------------------------

def backend(dsn):
    a = admin(dsn)
    share = a.execute("SELECT setting FROM pg_config WHERE name = 'SHAREDIR'").fetchone()[0]
    own = tempfile.mkdtemp(prefix="memory_ext_model_")
    os.chmod(own, 0o755)
    link = os.path.join(own, "all-MiniLM-L6-v2")
    os.symlink(os.path.join(share, "extension/memory_ext/models/all-MiniLM-L6-v2"), link)
    out = {}
    for label, setting in (("preloaded in the postmaster (0.9.0)", None),
                           ("loaded by each backend (as before 0.9.0)", link)):
        firsts, seconds, qfirsts, qseconds, pss, private = [], [], [], [], [], []
        for _ in range(10):
            c = psycopg.connect(dsn, autocommit=True)
            if setting:
                c.execute("SELECT set_config('memory_ext.model_path', %s, false)", (setting,))
            pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
            firsts.append(timed(lambda: c.execute("SELECT memory_embed('a new connection')").fetchone()))
            seconds.append(timed(lambda: c.execute("SELECT memory_embed('its second call')").fetchone()))
            c.execute("SET memory_ext.user_id = 'bench-backend'")
            qfirsts.append(timed(lambda: c.execute("""SELECT memory_query('{"query": "what does Ana drink?"}')""").fetchone()))
            qseconds.append(timed(lambda: c.execute("""SELECT memory_query('{"query": "where does Sam live?"}')""").fetchone()))
            roll = {l.split(":")[0]: int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup").read().splitlines()[1:]
                    if l.endswith("kB")}
            pss.append(roll["Pss"] / 1024)
            private.append((roll["Private_Clean"] + roll["Private_Dirty"]) / 1024)
            c.close()
        out[label] = {"embed_first": ms(firsts), "embed_second": ms(seconds), "query_first": ms(qfirsts),
                      "query_second": ms(qseconds), "pss_mb": round(statistics.median(pss), 1),
                      "private_mb": round(statistics.median(private), 1)}
    os.unlink(link)
    os.rmdir(own)
    return out


def markdown(r):
    lines = ["# Agent surfaces under load (0.9.0): gateway fairness, worker fairness, new backends", "",
             f"Release build, {os.cpu_count()} cores, all on 127.0.0.1 (`bench/agents.py`).", ""]
    if "gateway" in r:
        lines += ["## Another tenant's latency while one tenant floods the gateway", "",
                  "32 clients of one tenant loop `conversation_search` over a 5,000-message thread through "
                  "`memory-mcp http`; another tenant's `conversation_search` over 50 messages, 40 calls one after "
                  "another, without and during the flood (ms).", "",
                  "| gateway | quiet p50 | quiet p95 | during flood p50 | during flood p95 | flood calls served / 429 |",
                  "|---|---|---|---|---|---|"]
        for label, v in r["gateway"].items():
            lines.append(f"| {label} | {v['quiet']['p50']} | {v['quiet']['p95']} | {v['during_flood']['p50']} | "
                         f"{v['during_flood']['p95']} | {v['flood_calls']['ok']} / {v['flood_calls']['429']} |")
        lines.append("")
    if "worker" in r:
        w = r["worker"]
        lines += ["## Another tenant's episode behind one tenant's 200 run ends", "",
                  "200 `run_end`s of one tenant and then one of another, committed together; the worker "
                  "(naptime 1 s, no LLM: extractive episodes) serves this database.", "",
                  f"- the other tenant's run ended after **{w['other_tenant_episode_s']} s**;",
                  f"- the 200 runs of the flood after {w['flood_of_200_done_s']} s ({w['runs_per_s']} runs/s).", ""]
    if "backend" in r:
        lines += ["## A new connection's first call, and a backend's memory", "",
                  "Ten new connections each: the first and second `memory_embed` and `memory_query` (ms), and "
                  "the backend's proportional and private memory after them (MB, median, /proc/PID/smaps_rollup).", "",
                  "| model | embed 1st p50 / p95 | embed 2nd p50 / p95 | query 1st p50 / p95 | query 2nd p50 / p95 | Pss MB | private MB |",
                  "|---|---|---|---|---|---|---|"]
        for label, v in r["backend"].items():
            lines.append(f"| {label} | {v['embed_first']['p50']} / {v['embed_first']['p95']} | "
                         f"{v['embed_second']['p50']} / {v['embed_second']['p95']} | "
                         f"{v['query_first']['p50']} / {v['query_first']['p95']} | "
                         f"{v['query_second']['p50']} / {v['query_second']['p95']} | {v['pss_mb']} | {v['private_mb']} |")
        lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dsn", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--suites", default="gateway,worker,backend")
    args = p.parse_args()
    r = {}
    for s in args.suites.split(","):
        print(f"==> agents: {s}", flush=True)
        r[s] = {"gateway": gateway, "worker": worker, "backend": backend}[s](args.dsn)
        print(json.dumps(r[s], indent=1), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "agents.json"), "w") as f:
        json.dump(r, f, indent=1)
    with open(os.path.join(args.out, "agents.md"), "w") as f:
        f.write(markdown(r))


if __name__ == "__main__":
    main()
