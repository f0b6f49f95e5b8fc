"""memory_ext through Python's psycopg 3, the way an agent backend written in Python uses it.

Run by `scripts/test.sh client` against the throwaway test server:
    MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=61433 user=postgres dbname=..." python3 tests/python/test_psycopg.py

No test framework: each `test_*` function runs in order on a fresh tenant; any failure makes the
exit status 1. What is checked: jsonb requests and responses as Python dicts, supplied
embeddings as Python lists, memory_search rows as Python types, SQLSTATEs as psycopg exception
classes, atomicity after an error, the delta header once, blocks and memory_context.
"""

import os
import sys
import threading
import time
import uuid

import psycopg
from pgtest import connect_as, run_tests
from psycopg import errors
from psycopg.types.json import Jsonb

DSN = os.environ.get("MEMORY_EXT_TEST_DSN")
ROLE = "me_py"


def admin():
    return psycopg.connect(DSN, autocommit=True)


def tenant():
    """An ordinary role (no BYPASSRLS) acting for a fresh tenant."""
    user = "py-" + uuid.uuid4().hex[:12]
    return connect_as(DSN, ROLE, user), user


def write(c, **req):
    return c.execute("SELECT memory_write(%s)", (Jsonb(req),)).fetchone()[0]


def query(c, **req):
    return c.execute("SELECT memory_query(%s)", (Jsonb(req),)).fetchone()[0]


def unit(v):
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def vec(seed):
    """A deterministic 384-d unit vector (the active built-in model's size)."""
    return unit([((i * 7919 + seed * 104729) % 997) / 997.0 - 0.5 for i in range(384)])


def test_write_and_query_round_trip_as_python_objects():
    c, user = tenant()
    r = write(c, text="Ana prefers green tea over coffee.", category="preferences", importance=4,
              tags=["drinks"], thread_id="t1")
    assert r["event"] == "created", r
    assert isinstance(r["id"], str)
    q = query(c, query="what does Ana drink", top_k=3, **{"return": "full"})
    assert isinstance(q, dict), type(q)
    assert q["items"], q
    item = q["items"][0]
    # Full mode's text is the bullet: the event date, the category, the text (docs/api.md).
    day = item["happened_at"][:10]
    assert item["text"] == f"({day}) [preferences] Ana prefers green tea over coffee.", item
    assert item["tags"] == ["drinks"] and item["importance"] == 4, item
    assert isinstance(q["used_tokens"], int) and q["used_tokens"] > 0, q


def test_supplied_embedding_as_a_python_list():
    c, _ = tenant()
    a = write(c, text="The staging cluster runs Postgres 15.", embedding=vec(1))
    write(c, text="Lena booked a concert for Friday night.", embedding=vec(2))
    q = query(c, query="database version", embedding=vec(1), top_k=1)
    assert [i["id"] for i in q["items"]] == [a["id"]], q
    # Wrong size: 22023 naming the field, and nothing was written.
    before = c.execute("SELECT count(*) FROM memory.items").fetchone()[0]
    try:
        write(c, text="Too short a vector.", embedding=[0.1, 0.2])
        raise AssertionError("expected an error")
    except errors.InvalidParameterValue as e:
        assert "embedding" in str(e), str(e)
    assert c.execute("SELECT count(*) FROM memory.items").fetchone()[0] == before


def test_errors_arrive_as_their_sqlstate_classes():
    c, _ = tenant()
    cases = [
        ({"text": "   "}, errors.InvalidParameterValue, "22023"),
        ({"text": "x" * 300}, errors.StringDataRightTruncation, "22001"),
        ({"text": "ok", "importance": 9}, errors.InvalidParameterValue, "22023"),
        ({"text": "ok", "user_id": "someone-else"}, errors.InsufficientPrivilege, "42501"),
    ]
    for req, cls, state in cases:
        try:
            c.execute("SELECT memory_write(%s)", (Jsonb(req),))
            raise AssertionError(f"expected {state} for {req}")
        except cls as e:
            assert e.sqlstate == state, (req, e.sqlstate)
    try:
        query(c, query="x", top_k=0)
        raise AssertionError("expected 22023")
    except errors.InvalidParameterValue as e:
        assert "top_k" in str(e), str(e)


def test_a_failed_batch_writes_nothing():
    c, _ = tenant()
    batch = [{"text": "First of the batch."}, {"text": "Second of the batch."}, {"text": ""}]
    try:
        c.execute("SELECT memory_write_batch(%s)", (Jsonb(batch),))
        raise AssertionError("expected 22023")
    except errors.InvalidParameterValue:
        pass
    assert c.execute("SELECT count(*) FROM memory.items").fetchone()[0] == 0


def test_allowlist_rejection_names_the_category():
    c, _ = tenant()
    c.execute("SELECT memory_configure(%s)", (Jsonb({
        "categories": [{"name": "tasks"}, {"name": "health"}],
        "allowlists": {"planner": ["tasks"]},
    }),))
    write(c, text="Ship the report on Monday.", category="tasks")
    write(c, text="Ben is allergic to peanuts.", category="health")
    q = query(c, query="Monday report peanuts", agent="planner", top_k=5)
    assert {i["category"] for i in q["items"]} == {"tasks"}, q
    try:
        query(c, query="peanuts", agent="planner", categories=["health"])
        raise AssertionError("expected 42501")
    except errors.InsufficientPrivilege as e:
        assert "health" in str(e), str(e)


def test_memory_search_rows_have_python_types():
    import datetime
    c, _ = tenant()
    write(c, text="Hiro is learning Rust on weekends.", category="goals")
    rows = c.execute("SELECT * FROM memory_search('Rust weekends', top_k => 3)").fetchall()
    assert rows, rows
    id_, kind, category, text, score, importance, updated_at, happened_at = rows[0]
    assert isinstance(id_, uuid.UUID) and kind == "semantic" and category == "goals", rows[0]
    assert text == "Hiro is learning Rust on weekends." and isinstance(score, float), rows[0]
    assert isinstance(updated_at, datetime.datetime) and updated_at.tzinfo is not None, rows[0]
    assert isinstance(happened_at, datetime.datetime) and happened_at.tzinfo is not None, rows[0]


def test_delta_header_once_then_not_again():
    c, _ = tenant()
    write(c, text="The team moved standup to 9:30.", thread_id="th", category="tasks")
    first = query(c, query="standup", thread_id="th")
    assert first["header"] and first["header"].startswith("Memory updates since rev 0"), first
    again = query(c, query="standup", thread_id="th")
    assert again["header"] is None, again
    assert again["revision"] == first["revision"], (first, again)


def test_blocks_and_memory_context_for_a_prompt():
    c, user = tenant()
    agent = "py-agent-" + uuid.uuid4().hex[:8]
    c.execute("SELECT memory_agent(%s, %s, %s, %s)", (agent, user, "I am a helpful planner.", "Name: Ana"))
    c.execute("SELECT block_append(%s, 'human', %s)", (agent, "Likes green tea."))
    write(c, text="Ana's sister's birthday is on June 3.", category="relationships", agent_id=agent)
    ctx = c.execute("SELECT memory_context(%s, %s, %s, 2048)", (agent, "th-ctx", "sister birthday")).fetchone()[0]
    assert ctx.startswith("<memory_blocks>"), ctx[:80]
    assert "Likes green tea." in ctx and "[MEMORY CONTEXT]" in ctx, ctx
    assert "June 3" in ctx, ctx



def test_detail_files_and_compaction_as_python_objects():
    c, user = tenant()
    output = "".join(f"tests/test_{i}.py::test_case PASSED\n" for i in range(200))
    output += "FAILED tests/test_x.py::test_y - AssertionError\n"
    line = c.execute("SELECT memory_capture(%s, %s, 100, thread_id => %s)",
                     ("pytest -q", output, "py-t")).fetchone()[0]
    assert line.startswith("Command 'pytest -q' executed. Output stored in [MemoryRef: cmd_pytest_q - "), line
    assert "Status: Failed." in line and "AssertionError" in line, line
    page = c.execute("SELECT memory_ref_get('cmd_pytest_q', 0, 10)").fetchone()[0]
    assert page == {"content": output[:10], "offset": 0, "next_offset": 10, "total": len(output)}, page
    w = c.execute("SELECT memory_file_write(%s, %s, tags => %s)",
                  ("notes/py.md", "# Python notes\nUse psycopg 3.", ["python"])).fetchone()[0]
    assert w["event"] == "created" and w["chars"] == 29, w
    rows = c.execute("SELECT path, title, tags, chars FROM memory_file_ls('notes')").fetchall()
    assert rows == [("notes/py.md", "Python notes", ["python"], 29)], rows
    try:
        c.execute("SELECT memory_file_write('../x.md', 'y')")
        raise AssertionError("a path with .. was accepted")
    except errors.InvalidParameterValue:
        pass
    for i in range(12):
        c.execute("SELECT message_append('py-t', %s, %s)", ("user" if i % 2 == 0 else "assistant", f"Message {i} about packing for Porto."))
    out = c.execute("SELECT compact_thread('py-t', 4)").fetchone()[0]
    assert out["summarized"] == 8 and out["kept"] == 4 and out["method"] == "extractive", out
    assert len(out["summary"].split()) <= 100, out
    ctx = c.execute("SELECT role, is_summary FROM context_messages('py-t')").fetchall()
    assert ctx[0] == ("system", True) and len(ctx) == 5, ctx


def test_concurrent_repeats_of_a_keyed_write_write_once():
    """Eight connections send the same keyed call at the same moment (docs/api.md
    "Idempotency"): one writes, the others wait for it and get its answer."""
    user = "py-" + uuid.uuid4().hex[:12]
    conns = [connect_as(DSN, ROLE, user) for _ in range(8)]
    calls = [
        ("SELECT message_append('py-idem', 'user', 'Twins at the door.', %s, idempotency_key => 'm-1')", (user,)),
        ("SELECT memory_write(%s)", (Jsonb({"text": "Pia waters the ferns on Sundays.", "idempotency_key": "w-1"}),)),
        ("SELECT session_add_items('py-idem', %s, idempotency_key => 's-1')",
         (Jsonb([{"role": "assistant", "content": "Which ferns?"}]),)),
    ]
    for sql, args in calls:
        barrier = threading.Barrier(len(conns))
        answers, errs = [], []

        def call(c):
            try:
                barrier.wait()
                answers.append(c.execute(sql, args).fetchone()[0])
            except Exception as e:  # noqa: BLE001 - reported below
                errs.append(e)

        ts = [threading.Thread(target=call, args=(c,)) for c in conns]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert not errs, errs
        assert len(answers) == 8 and all(a == answers[0] for a in answers), answers
    # Counted as the administrator: on Citus an ordinary role's session tenant does not reach
    # the workers' row policies for a plain table read (the API's own reads are routed).
    c = admin()
    n = c.execute("SELECT count(*) FROM memory.messages WHERE user_id = %s AND thread_id = 'py-idem'", (user,)).fetchone()[0]
    assert n == 2, f"{n} messages for two keys"
    n = c.execute("SELECT count(*) FROM memory.items WHERE user_id = %s AND text LIKE 'Pia waters%%'", (user,)).fetchone()[0]
    h = c.execute("SELECT count(*) FROM memory.history WHERE user_id = %s AND event = 'ADD' AND entity = 'item'", (user,)).fetchone()[0]
    assert (n, h) == (1, 1), (n, h)
    for x in conns:
        x.close()


def test_a_flagged_memory_approved_from_four_connections_at_once_is_written_once():
    """Screening's flag (docs/api.md "Screening"): a contact's email address holds the memory
    as a proposal; four connections approve it at the same moment; one write, one decision."""
    user = "py-" + uuid.uuid4().hex[:12]
    conns = [connect_as(DSN, ROLE, user) for _ in range(4)]
    c = conns[0]
    c.execute("SELECT memory_configure(%s)", (Jsonb({"categories": [{"name": "contact", "screen": {"email": "flag"}}]}),))
    r = write(c, text="Noor answers at noor.h@example.org.", category="contact")
    assert r["event"] == "proposed" and r["policy"] == "flag" and r["flagged"] == ["email"], r
    pid = r["proposal_id"]
    barrier = threading.Barrier(len(conns))
    answers, errs = [], []

    def approve(x):
        try:
            barrier.wait()
            answers.append(x.execute("SELECT memory_approve(%s)", (pid,)).fetchone()[0])
        except errors.InvalidParameterValue as e:
            errs.append(e)

    ts = [threading.Thread(target=approve, args=(x,)) for x in conns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert len(answers) == 1 and len(errs) == 3, (answers, errs)
    assert answers[0]["status"] == "approved", answers
    a = admin()
    n = a.execute("SELECT count(*) FROM memory.items WHERE user_id = %s AND text LIKE 'Noor answers%%'", (user,)).fetchone()[0]
    assert n == 1, f"{n} memories for one approval"
    for x in conns:
        x.close()


def test_parallel_puts_of_one_store_key_leave_one_item_and_every_event():
    """Eight connections put the same store key at once (docs/api.md "Store"): one item holds
    one of their documents, with its own vectors only; history has one ADD and seven UPDATEs."""
    user = "py-" + uuid.uuid4().hex[:12]
    conns = [connect_as(DSN, ROLE, user) for _ in range(8)]
    barrier = threading.Barrier(len(conns))
    errs = []

    def put(i, x):
        try:
            barrier.wait()
            x.execute("SELECT store_put('{prefs}', 'drink', %s, index => '[\"text\", \"alt\"]')",
                      (Jsonb({"text": f"Drink number {i}", "alt": f"alt {i}"}),))
        except Exception as e:  # noqa: BLE001 - reported below
            errs.append(e)

    ts = [threading.Thread(target=put, args=(i, x)) for i, x in enumerate(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errs, errs
    a = admin()
    rows = a.execute("SELECT value ->> 'text' FROM memory.store_items WHERE user_id = %s", (user,)).fetchall()
    assert len(rows) == 1, rows
    vecs = a.execute("SELECT text FROM memory.store_vectors WHERE user_id = %s ORDER BY field", (user,)).fetchall()
    n = rows[0][0].split()[-1]
    assert vecs == [(f"alt {n}",), (f"Drink number {n}",)], (rows, vecs)
    events = dict(a.execute("SELECT event, count(*) FROM memory.history WHERE user_id = %s AND entity = 'store' GROUP BY 1",
                            (user,)).fetchall())
    assert events == {"ADD": 1, "UPDATE": 7}, events
    for x in conns:
        x.close()


def test_a_retry_after_the_connection_died_mid_call_writes_once():
    """The client sends a keyed call and drops its connection before the answer (it cannot know
    whether the call committed), then retries on a new connection until it gets an answer."""
    c, user = tenant()
    answers = {}
    for i in range(20):
        key = f"m-{i}"
        sql = ("SELECT message_append('py-retry', 'user', %s, idempotency_key => %s)")
        args = (f"Retried message {i}.", key)
        dying = connect_as(DSN, ROLE, user)
        # The call goes out; the connection is gone before its answer (every other call while
        # the server is still running it, the rest as soon as it is sent).
        dying.pgconn.send_query_params(
            b"SELECT message_append('py-retry', 'user', $1, idempotency_key => $2)",
            [args[0].encode(), key.encode()])
        dying.pgconn.flush()
        if i % 2:
            time.sleep(0.02)
        dying.pgconn.finish()
        for _ in range(3):
            answers[key] = c.execute(sql, args).fetchone()[0]
    rows = admin().execute("SELECT content, count(*) FROM memory.messages WHERE user_id = %s AND thread_id = 'py-retry' GROUP BY 1",
                           (user,)).fetchall()
    assert len(rows) == 20 and all(n == 1 for _, n in rows), rows
    seqs = sorted(a["seq"] for a in answers.values())
    assert seqs == list(range(1, 21)), seqs


def main():
    if not DSN:
        print("MEMORY_EXT_TEST_DSN is not set", file=sys.stderr)
        return 2
    return run_tests(globals(), f" (psycopg {psycopg.__version__})")


if __name__ == "__main__":
    sys.exit(main())
