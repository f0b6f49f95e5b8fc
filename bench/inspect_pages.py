"""`scripts/bench.sh inspect` (part of `make bench`; not named inspect.py, which would shadow the standard
library's inspect module for the script): the memory inspector's pages for a tenant with 100,000
memories, timed on the server. The goal (docs/inspector.md): every page under 500 ms of server
time.

The tenant: 100,000 memories of every kind over 90 days (random 384-d vectors of the active
model, 1% superseded and 1% forgotten, 30 categories, tags), 50 threads of 200 messages with a
compaction summary each, 3 agents with blocks, 200 memory files, 20 proposals. Loaded by SQL in a
database of its own (the history and statistics triggers run as for any insert).

Each page is asked for 20 times by one logged-in client through `memory-mcp http` (release
build); the figure is the page's `Server-Timing` (the gateway's time from the request to the
response: the SQL call and the HTML), p50, p95 and max in ms, and the bytes sent. The export
download is timed too, though it is a file, not a page.

    python bench/inspect_pages.py --dsn DSN --bin target/release/memory-mcp --out bench/results
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import psycopg

TENANT = "inspect-100k"
AGENT = "agent-0"
N = 100_000
RUNS = 20


def load(dsn: str) -> dict:
    c = psycopg.connect(dsn, autocommit=True)
    c.execute("SELECT set_config('memory_ext.user_id', %s, false)", (TENANT,))
    have = c.execute("SELECT count(*) FROM memory.items WHERE user_id = %s", (TENANT,)).fetchone()[0]
    if have < N:
        t = time.time()
        for a in range(3):
            c.execute("SELECT memory_agent(%s, %s, 'I help.', 'Name: Dana.')", (f"agent-{a}", TENANT))
        # The active model, registered by one write.
        c.execute("""SELECT memory_write('{"text": "Dana likes long walks.", "category": "hobbies"}')""")
        model, dims = c.execute("""SELECT embedding_model, vector_dims(embedding) FROM memory.items
                                   WHERE user_id = %s AND embedding IS NOT NULL LIMIT 1""", (TENANT,)).fetchone()
        for th in range(50):
            c.execute("INSERT INTO memory.threads (user_id, thread_id, agent_id) VALUES (%s, %s, 'agent-0')",
                      (TENANT, f"thread-{th}"))
            c.execute("""INSERT INTO memory.messages (user_id, thread_id, seq, role, content)
                         SELECT %s, %s, g, CASE WHEN g %% 2 = 1 THEN 'user' ELSE 'assistant' END,
                                'Message ' || g || ' about the garden, the trip to Lisbon and the quarterly report.'
                         FROM generate_series(1, 200) g""", (TENANT, f"thread-{th}"))
            c.execute("SELECT compact_thread(%s, 20)", (f"thread-{th}",))
        # The memories: INSERT ... SELECT in batches of 10,000 (the triggers run per row).
        for b in range(0, N - 1, 10_000):
            c.execute(f"""
                INSERT INTO memory.items (user_id, kind, category, text, importance, tags, thread_id, actor_id,
                                          embedding, embedding_model, happened_at, created_at, updated_at)
                SELECT %s, (ARRAY['semantic','semantic','semantic','episodic','archival','insight','procedural'])[1 + g %% 7],
                       'category_' || (g %% 30), 'Dana fact number ' || g || ' about ' ||
                       (ARRAY['tea','hiking','Lisbon','the report','her sister','music','the garden'])[1 + g %% 7],
                       1 + g %% 5, ARRAY['tag' || (g %% 50)], CASE WHEN g %% 3 = 0 THEN 'thread-' || (g %% 50) END,
                       CASE WHEN g %% 4 = 0 THEN 'dana' END,
                       (SELECT array_agg(random() - 0.5) FROM generate_series(1, {dims}) WHERE g > 0)::vector, %s,
                       now() - (g %% 90) * interval '1 day', now() - (g %% 90) * interval '1 day',
                       now() - (g %% 90) * interval '1 day'
                FROM generate_series(%s::int, %s::int) g""", (TENANT, model, b + 1, min(b + 10_000, N - 1)))
        # 1% forgotten, 1% superseded (by the next memory).
        c.execute("""UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + interval '30 days'
                     WHERE user_id = %s AND text LIKE 'Dana fact number %%00 %%'""", (TENANT,))
        c.execute("""UPDATE memory.items o SET state = 'superseded', valid_until = now(),
                            superseded_by = (SELECT n.id FROM memory.items n WHERE n.user_id = o.user_id
                                             AND n.id <> o.id AND n.state = 'active' AND n.created_at >= o.created_at
                                             ORDER BY n.created_at LIMIT 1)
                     WHERE o.user_id = %s AND o.state = 'active' AND o.text LIKE 'Dana fact number %%50 %%'""",
                  (TENANT,))
        for f in range(200):
            c.execute("SELECT memory_file_write(%s, %s, %s)",
                      (f"notes/{f % 10}/file-{f}.md", f"# File {f}\nDana's notes on the garden and Lisbon, part {f}.\n" * 20,
                       f"Notes {f}"))
        for p in range(20):
            c.execute("SELECT memory_write(jsonb_build_object('text', 'Dana lives in city ' || %s::text, "
                      "'category', 'city', 'source', 'inferred'))", (p,))
        c.execute("ANALYZE")
        # scripts/bench.sh keeps a database with this mark, and makes one without it afresh.
        c.execute(f"COMMENT ON DATABASE {c.info.dbname} IS 'memory_ext inspect bench: loaded'")
        print(f"loaded {N} memories for {TENANT} in {time.time() - t:.0f} s")
    ids = {
        "memory": c.execute("""SELECT id FROM memory.items WHERE user_id = %s AND state = 'active'
                               ORDER BY updated_at DESC LIMIT 1""", (TENANT,)).fetchone()[0],
        "superseded": c.execute("""SELECT id FROM memory.items WHERE user_id = %s AND state = 'superseded'
                                   LIMIT 1""", (TENANT,)).fetchone()[0],
    }
    c.close()
    return ids


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ids = load(a.dsn)
    role = "memory_inspect_bench"
    with psycopg.connect(a.dsn, autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            c.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        db = c.execute("SELECT current_database()").fetchone()[0]
        c.execute(f'GRANT CONNECT ON DATABASE "{db}" TO {role}')
    token = "bench-inspect-token-0123456789"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"dsn": a.dsn + f" user={role}", "tenants": [
        {"token": token, "user_id": TENANT, "agent_id": AGENT, "name": "bench", "inspect": "read"}]}, cfg)
    cfg.close()
    proc = subprocess.Popen([a.bin, "http", "--config", cfg.name, "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
        try:
            opener.open(urllib.request.Request(base + "/inspect/login", method="POST",
                                               data=urllib.parse.urlencode({"token": token}).encode()))
        except urllib.error.HTTPError as e:
            assert e.code == 303, e.code
        pages = [
            ("overview", "/inspect/"),
            ("memories: newest 50", "/inspect/memories"),
            ("memories: filtered (kind, category, tags)", "/inspect/memories?kind=semantic&category=category_7&tags=tag7"),
            ("memories: superseded, page 3", "/inspect/memories?state=superseded&page=2"),
            ("memories: search with explain", "/inspect/memories?q=" + urllib.parse.quote("what did Dana say about Lisbon")),
            ("memory", f"/inspect/memories/{ids['memory']}"),
            ("memory: superseded, with its chain", f"/inspect/memories/{ids['superseded']}"),
            ("core blocks", f"/inspect/blocks/{AGENT}"),
            ("threads", "/inspect/threads"),
            ("thread (200 messages)", "/inspect/threads/thread-7"),
            ("files", "/inspect/files"),
            ("files: search and grep", "/inspect/files?q=garden&grep=part%201"),
            ("file", "/inspect/files/view?path=notes/3/file-13.md"),
            ("proposals", "/inspect/proposals"),
            ("export download (a file, not a page)", "/inspect/export/download"),
        ]
        rows = []
        for name, path in pages:
            times, size = [], 0
            for i in range(RUNS if "export" not in name else 3):
                with opener.open(base + path, timeout=120) as r:
                    body = r.read()
                    assert r.status == 200, (path, r.status)
                    size = len(body)
                    times.append(float(re.search(r"app;dur=([0-9.]+)", r.headers["Server-Timing"]).group(1)))
            times.sort()
            row = {"page": name, "path": path, "p50_ms": round(statistics.median(times), 1),
                   "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1), "max_ms": round(times[-1], 1),
                   "bytes": size}
            rows.append(row)
            print(row)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        os.unlink(cfg.name)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "inspect.json"), "w") as f:
        json.dump({"tenant_memories": N, "runs": RUNS, "pages": rows}, f, indent=1)
    pages_only = [r for r in rows if "export" not in r["page"]]
    with open(os.path.join(a.out, "inspect.md"), "w") as f:
        f.write(f"# Inspector pages for a tenant with {N:,} memories (release build, {time.strftime('%Y-%m-%d')})\n\n")
        f.write("Server time (the gateway's `Server-Timing`: SQL and HTML) over "
                f"{RUNS} requests each, one client (bench/inspect_pages.py). Goal: every page under 500 ms.\n\n")
        f.write("| page | p50 ms | p95 ms | max ms | bytes |\n| --- | ---: | ---: | ---: | ---: |\n")
        for r in rows:
            f.write(f"| {r['page']} | {r['p50_ms']} | {r['p95_ms']} | {r['max_ms']} | {r['bytes']:,} |\n")
        worst = max(pages_only, key=lambda r: r["max_ms"])
        f.write(f"\nSlowest page at its worst: {worst['page']}, {worst['max_ms']} ms "
                f"({'under' if worst['max_ms'] < 500 else 'OVER'} 500 ms).\n")


if __name__ == "__main__":
    main()
