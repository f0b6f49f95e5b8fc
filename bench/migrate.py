"""Import speed (docs/migrating.md "Speed"): a 100,000-memory mem0 list through one
memory_import, and a LangGraph Postgres database of 10,000 checkpoints (1,000 threads of ten
steps, written by PostgresSaver itself) through ``memory-ext import --from-langgraph-postgres``.
Rows per second, to bench/results/migrate.{json,md}.

    python bench/migrate.py --dsn "host=... user=postgres" --out bench/results
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb

ap = argparse.ArgumentParser()
ap.add_argument("--dsn", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--memories", type=int, default=100_000)
ap.add_argument("--threads", type=int, default=1000)
ap.add_argument("--steps", type=int, default=10)
a = ap.parse_args()

admin = psycopg.connect(a.dsn, autocommit=True)
for db in ("memory_bench_mg", "memory_bench_lg"):
    admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {db}")
dst_dsn = psycopg.conninfo.make_conninfo(a.dsn, dbname="memory_bench_mg")
src_dsn = psycopg.conninfo.make_conninfo(a.dsn, dbname="memory_bench_lg")
dst = psycopg.connect(dst_dsn, autocommit=True)
dst.execute("CREATE EXTENSION memory_ext CASCADE")
results = {}

# mem0: memories as get_all returns them, a few users and categories, some expiring.
topics = ["hiking", "tea", "budget", "Lisbon", "piano", "deadline", "cats", "football", "sushi", "Python"]
mem0 = {"results": [{
    "id": str(uuid.UUID(int=i + 1)), "memory": f"User {i % 97} mentioned {topics[i % 10]} on day {i} in talk {i // 7}",
    "user_id": "bench", "agent_id": f"agent-{i % 5}", "categories": [topics[(i * 7) % 10].lower()],
    "metadata": {"n": i}, "created_at": "2025-05-01T10:00:00Z", "updated_at": "2025-05-02T10:00:00Z",
    **({"expiration_date": "2030-01-01"} if i % 50 == 0 else {})} for i in range(a.memories)]}
t = time.perf_counter()
answer = dst.execute("SELECT memory_import(%s, %s)", (Jsonb(mem0), Jsonb({"remap": {"user_id": "bench"}}))).fetchone()[0]
s = time.perf_counter() - t
assert answer["inserted"]["memories"] == a.memories, answer
waiting = dst.execute("SELECT count(*) FROM memory.items WHERE user_id = 'bench' AND embedding IS NULL").fetchone()[0]
results["mem0"] = {"memories": a.memories, "seconds": round(s, 1), "rows_per_s": round(a.memories / s),
                   "embedded_in_import": a.memories - waiting, "left_to_the_worker": waiting,
                   "embedding_provider": dst.execute("SHOW memory_ext.embedding_provider").fetchone()[0]}
print("mem0:", results["mem0"], flush=True)
# The same list with a remote embedding model: nothing is embedded within the import (nothing an
# application calls waits on a remote model), so this is the rows' own cost.
dst.execute("SET memory_ext.embedding_provider = 'openai'")
for m in mem0["results"]:
    m["id"] = str(uuid.UUID(int=int(uuid.UUID(m["id"])) + 10**9))
t = time.perf_counter()
answer = dst.execute("SELECT memory_import(%s, %s)", (Jsonb(mem0), Jsonb({"remap": {"user_id": "bench-rows"}}))).fetchone()[0]
s = time.perf_counter() - t
dst.execute("RESET memory_ext.embedding_provider")
assert answer["inserted"]["memories"] == a.memories, answer
results["mem0_rows"] = {"memories": a.memories, "seconds": round(s, 1), "rows_per_s": round(a.memories / s)}
print("mem0 rows only:", results["mem0_rows"], flush=True)

# LangGraph: PostgresSaver writes the checkpoints, as an application would.
from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402

with PostgresSaver.from_conn_string(src_dsn) as saver:
    saver.setup()
    for th in range(a.threads):
        cfg = {"configurable": {"thread_id": f"t{th}", "checkpoint_ns": ""}}
        for st in range(a.steps):
            ck = empty_checkpoint()
            ck["channel_values"] = {"messages": [f"step {st} of thread {th}"] * 3, "count": st}
            ck["channel_versions"] = {"messages": str(st + 1), "count": str(st + 1)}
            cfg = saver.put(cfg, ck, {"step": st, "source": "loop"}, ck["channel_versions"])
            saver.put_writes(cfg, [("messages", f"pending {st}")], task_id=f"task-{st}")
with psycopg.connect(src_dsn) as c:
    rows = {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")}
t = time.perf_counter()
r = subprocess.run([sys.executable, "-m", "memory_ext", "import", "--dsn", dst_dsn, "--user-id", "bench-lg",
                    "--from-langgraph-postgres", src_dsn], capture_output=True, text=True)
s = time.perf_counter() - t
assert r.returncode == 0, r.stderr
got = json.loads(r.stdout)
assert got["inserted"]["checkpoint_steps"] == rows["checkpoints"], got
total = sum(rows.values())
results["langgraph"] = {"checkpoints": rows["checkpoints"], "blobs": rows["checkpoint_blobs"], "writes": rows["checkpoint_writes"],
                        "seconds": round(s, 1), "rows_per_s": round(total / s)}
print("langgraph:", results["langgraph"], flush=True)

os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, "migrate.json"), "w") as f:
    json.dump(results, f, indent=2)
m, lg = results["mem0"], results["langgraph"]
with open(os.path.join(a.out, "migrate.md"), "w") as f:
    f.write(f"""# Import speed (bench/migrate.py)

| source | rows | seconds | rows/s | notes |
|---|---|---|---|---|
| mem0 list, one memory_import | {m['memories']:,} memories | {m['seconds']} | {m['rows_per_s']:,} | embedding provider {m['embedding_provider']}: {m['embedded_in_import']:,} embedded within the import, {m['left_to_the_worker']:,} left to the worker |
| the same list, remote embedding model (the worker embeds) | {results['mem0_rows']['memories']:,} memories | {results['mem0_rows']['seconds']} | {results['mem0_rows']['rows_per_s']:,} | the rows' own cost: checks, screening, insert, BM25 statistics |
| LangGraph Postgres, `memory-ext import --from-langgraph-postgres` | {lg['checkpoints']:,} checkpoints, {lg['blobs']:,} blobs, {lg['writes']:,} writes | {lg['seconds']} | {lg['rows_per_s']:,} | read with to_jsonb, written through memory_import in chunks of 2,000 rows, one transaction |
""")
print(open(os.path.join(a.out, "migrate.md")).read())
