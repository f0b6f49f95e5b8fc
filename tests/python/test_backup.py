"""Backups of a memory_ext database: pg_dump and pg_restore round trips lose and double nothing.

Run by `scripts/test.sh backup` against the throwaway test server:
    MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=61433 user=postgres dbname=memory_ext_backup" \
    MEMORY_EXT_PGBIN=/usr/lib/postgresql/15/bin python3 tests/python/test_backup.py

The source database gets every kind of row through the API (tests/data/rows.sql, plus a second
tenant, the built-in model's vectors and the worker's bookkeeping). It is then dumped
  * in custom format by a superuser, restored with pg_restore;
  * in plain format by a superuser, restored with psql;
  * in custom format by an ordinary backup role (LOGIN, BYPASSRLS, pg_read_all_data: no
    superuser), restored with pg_restore by a superuser (creating memory_ext needs one);
then once more after its indexes moved to half precision (custom format); and each restored
database must hold exactly the source's rows, table by table (every table
of schema memory but the change feed's, compared as multisets both ways, which is EXCEPT ALL in
both directions; the feed is not dumped and a restore starts a new one, which refuses the
source's cursors),
have the same indexes (the per-model HNSW indexes are made at run time and are not in the
dump), and answer memory_query and memory_search exactly as the source does.
"""

import os
import subprocess
from collections import Counter

import psycopg
from pgtest import run_checks

DSN = os.environ["MEMORY_EXT_TEST_DSN"]
PGBIN = os.environ.get("MEMORY_EXT_PGBIN", "/usr/lib/postgresql/15/bin")
PARAMS = dict(p.split("=", 1) for p in DSN.split())
SOURCE = PARAMS["dbname"]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def connect(db, **kw):
    return psycopg.connect(f"host={PARAMS['host']} port={PARAMS['port']} user=postgres dbname={db}", autocommit=True, **kw)


def pg(tool, *args, user="postgres", stdin=None):
    cmd = [os.path.join(PGBIN, tool), "-h", PARAMS["host"], "-p", PARAMS["port"], "-U", user, *args]
    r = subprocess.run(cmd, input=stdin, capture_output=True)
    if r.returncode != 0 or (tool == "pg_restore" and r.stderr):
        raise AssertionError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
    return r.stdout


def fill():
    """Every kind of row, for two tenants, with vectors from the built-in model."""
    sql = open(os.path.join(ROOT, "tests", "data", "rows.sql")).read()
    with connect(SOURCE) as c:
        for stmt in sql.split(";\n"):
            stmt = "\n".join(l for l in stmt.splitlines() if not l.startswith("\\") and not l.startswith("--"))
            if stmt.strip():
                c.execute(stmt)
        c.execute("SET memory_ext.user_id = 'backup-other'")
        c.execute("""SELECT memory_write_batch('[{"text": "Bo keeps bees on the roof."},
                                                   {"text": "Bo sells honey at the Saturday market.", "thread_id": "bo-t"}]')""")
        c.execute("SELECT message_append('bo-t', 'user', 'How much honey did we sell?')")
        # A superseded memory (0.5.0): its state, validity end and link survive the round trip.
        c.execute("""SELECT memory_write(jsonb_build_object('text', 'Bo sells honey online now.', 'thread_id', 'bo-t',
                         'supersedes', (SELECT id FROM memory.items WHERE text LIKE 'Bo sells honey at%')))""")
        # Extraction, a consent proposal and an ended run (0.6.0): watermark, daily usage, the
        # proposal and the queued run_end survive the round trip.
        c.execute("SELECT message_append('bo-t', 'user', 'Please remember that the hives are blue.', name => 'Bo')")
        c.execute("SELECT memory_extract('bo-t')")
        c.execute("""SELECT memory_write('{"text": "Bo lives in Ghent.", "category": "city", "source": "inferred"}')""")
        c.execute("SELECT run_end('bo-t', 'bo-run', 4000)")
        # A summary with two versions (0.13.0): definitions, answers and history survive.
        c.execute("""SELECT memory_summary_define('bees', 'What does Bo do with bees?')""")
        c.execute("SELECT memory_summary_refresh('bees')")
        c.execute("SELECT memory_summary_refresh('bees')")
        c.execute("RESET memory_ext.user_id")
        c.execute("SELECT memory_worker_run('ttl_sweep')")
        c.execute("SELECT memory_ttl_sweep()")
        c.execute("SELECT memory_purge()")
        counts = c.execute("""SELECT (SELECT count(*) FROM memory.items), (SELECT count(*) FROM memory.history),
                                     (SELECT count(*) FROM memory.embedding_models),
                                     (SELECT count(*) FROM memory.items WHERE embedding IS NOT NULL)""").fetchone()
    assert counts[0] >= 6 and counts[1] >= 6 and counts[2] >= 1 and counts[3] >= 6, counts
    with connect(SOURCE) as c:
        new = c.execute("""SELECT (SELECT count(*) FROM memory.extractions), (SELECT count(*) FROM memory.extraction_usage),
                                  (SELECT count(*) FROM memory.proposals), (SELECT count(*) FROM memory.run_ends),
                                  (SELECT count(*) FROM memory.summaries), (SELECT count(*) FROM memory.summary_versions)""").fetchone()
    assert all(n >= 1 for n in new), new
    return counts


def tables(db):
    with connect(db) as c:
        return [r[0] for r in c.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = 'memory'::regnamespace AND relkind = 'r' ORDER BY relname")]


def rows(db, table):
    with connect(db) as c:
        return Counter(r[0] for r in c.execute(f"SELECT t::text FROM memory.{table} t"))


def indexes(db):
    with connect(db) as c:
        return sorted(r[0] for r in c.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'memory' ORDER BY 1"))


def answers(db):
    """What the API answers; run after the row comparison (retrieval updates access counts)."""
    with connect(db) as c:
        c.execute("SET memory_ext.user_id = 'upgrade-user'")
        q = c.execute("""SELECT memory_query('{"query": "What does Ana like to drink?", "top_k": 3, "return": "full"}')""").fetchone()[0]
        s = c.execute("SELECT array_agg(text ORDER BY score DESC, text) FROM memory_search('Porto trip', top_k => 3)").fetchone()[0]
        b = c.execute("SELECT label, value, version FROM memory.blocks WHERE agent_id = 'up-agent' ORDER BY label").fetchall()
        c.execute("SET memory_ext.user_id = 'backup-other'")
        o = c.execute("""SELECT memory_query('{"query": "honey sales", "top_k": 2}')""").fetchone()[0]
    for item in q["items"] + o["items"]:
        item.pop("score", None)  # floats: compared below by order, which is what a user sees
    return q, s, b, o


# The change feed and its epoch belong to the cluster that wrote them (sql/changes.sql): not in
# the dump. A restored database starts a feed of its own, and a cursor of the source's is
# refused rather than read against another cluster's transaction ids.
CLUSTER_LOCAL = {"changes", "feed"}


def compare_feed(source, restored, label):
    with connect(source) as c:
        epoch = c.execute("SELECT epoch FROM memory.feed").fetchone()[0]
    src = rows(source, "changes")
    assert sum(src.values()) > 0, f"{label}: the source has no change feed to leave behind"
    assert not (src & rows(restored, "changes")), f"{label}: the source's change feed was restored"
    with connect(restored) as c:
        new = c.execute("SELECT epoch FROM memory.feed").fetchone()[0]
        assert new != epoch, f"{label}: the restored database kept the source's feed epoch"
        c.execute("SET memory_ext.user_id = 'upgrade-user'")
        try:
            c.execute("SELECT memory_changes(%s)", (f"{epoch}.1.1",))
            raise AssertionError(f"{label}: a cursor of the source's feed was accepted")
        except psycopg.Error as e:
            assert e.sqlstate == "22023" and "before a restore" in str(e), (label, e.sqlstate, str(e))


def compare(source, restored, label):
    st, rt = tables(source), tables(restored)
    assert st == rt, f"{label}: tables differ: {set(st) ^ set(rt)}"
    compare_feed(source, restored, label)
    total = 0
    for t in st:
        if t in CLUSTER_LOCAL:
            continue
        a, b = rows(source, t), rows(restored, t)
        missing, extra = a - b, b - a
        assert not missing and not extra, (
            f"{label}: memory.{t}: {sum(missing.values())} rows missing, {sum(extra.values())} extra; "
            f"e.g. {list(missing)[:1]} {list(extra)[:1]}")
        total += sum(a.values())
    si, ri = indexes(source), indexes(restored)
    assert si == ri, f"{label}: indexes differ: {sorted(set(si) ^ set(ri))[:5]}"
    hnsw = sum("USING hnsw" in i for i in ri)
    assert hnsw >= 3, f"{label}: per-model HNSW indexes not rebuilt ({hnsw})"
    print(f"{label}: {len(st)} tables, {total} rows equal both ways; {len(ri)} indexes equal, {hnsw} HNSW")


def recreate(db):
    with connect("postgres") as c:
        c.execute(f"DROP DATABASE IF EXISTS {db}")
        c.execute(f"CREATE DATABASE {db}")


def main():
    counts = fill()
    print(f"source: {counts[0]} memories, {counts[1]} history rows, {counts[2]} model(s), {counts[3]} vectors")

    dumps = {}
    dumps["custom"] = pg("pg_dump", "-Fc", SOURCE)
    dumps["plain"] = pg("pg_dump", "-Fp", SOURCE)
    with connect(SOURCE) as c:
        c.execute("DROP ROLE IF EXISTS memory_backup")
        c.execute("CREATE ROLE memory_backup LOGIN BYPASSRLS IN ROLE pg_read_all_data")
    dumps["role"] = pg("pg_dump", "-Fc", SOURCE, user="memory_backup")

    restored = {}
    for kind, dump in dumps.items():
        db = f"{SOURCE}_restored_{kind}"
        recreate(db)
        if kind == "plain":
            pg("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, stdin=dump)
        else:
            pg("pg_restore", "-d", db, stdin=dump)
        compare(SOURCE, db, f"{kind} dump")
        restored[kind] = db

    expected = answers(SOURCE)
    for kind, db in restored.items():
        got = answers(db)
        assert got == expected, f"{kind} dump: the API answers differently:\n{got}\n!=\n{expected}"
    print(f"memory_query, memory_search and blocks answer identically on {len(restored)} restored databases")

    # Half precision (docs/operations.md "Half precision"): the source's indexes moved online
    # by memory_embedding_reindex's statements, then dumped and restored: the registry brings
    # back halfvec indexes (not in the dump, like every per-model index), and the answers are
    # the source's.
    with connect(SOURCE) as c:
        for (stmt,) in c.execute("SELECT statement FROM memory_embedding_reindex('half') ORDER BY step").fetchall():
            c.execute(stmt)
        half = c.execute("SELECT count(*) FROM memory.embedding_models WHERE index_type = 'halfvec'").fetchone()[0]
        assert half >= 1, "no model moved to half precision"
    db = f"{SOURCE}_restored_half"
    recreate(db)
    pg("pg_restore", "-d", db, stdin=pg("pg_dump", "-Fc", SOURCE))
    compare(SOURCE, db, "half-precision dump")
    assert any("halfvec_cosine_ops" in i for i in indexes(db)), "half-precision dump: no halfvec index restored"
    got, expected = answers(db), answers(SOURCE)
    assert got == expected, f"half-precision dump: the API answers differently:\n{got}\n!=\n{expected}"
    print(f"half precision: {half} model(s) moved online; restored with their halfvec indexes, same answers")


if __name__ == "__main__":
    run_checks(main, "backup", 4)
