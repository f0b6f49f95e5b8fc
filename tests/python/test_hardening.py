"""Hardening checks that need a real server around them: its log, its environment, two
connections at once. Run by `scripts/test.sh client` (the server was started with
RUST_BACKTRACE=1 in its environment on purpose):
    MEMORY_EXT_TEST_DSN=... MEMORY_EXT_TEST_PGDATA=/var/tmp/... python3 tests/python/test_hardening.py

Each test failed on 0.1.0:
  * an error from Rust carried a Rust backtrace (build paths) to the client in its DETAIL;
  * `ALTER SYSTEM` + reload wrote an API key into the server log;
  * a tenant inserting a large message into another tenant's thread locked that thread for
    seconds before row-level security refused the row.
"""

import os
import sys
import threading
import time
import uuid

import psycopg
from pgtest import connect_as, run_tests
from psycopg import errors

DSN = os.environ["MEMORY_EXT_TEST_DSN"]
PGDATA = os.environ.get("MEMORY_EXT_TEST_PGDATA")
STANDIN = os.environ.get("MEMORY_EXT_STANDIN", "http://127.0.0.1:61480")
ROLE = "me_hardening"


def admin():
    return psycopg.connect(DSN, autocommit=True)


def tenant(user):
    return connect_as(DSN, ROLE, user)


def test_no_backtrace_reaches_a_client():
    with admin() as c:
        env = c.execute("SELECT 1").fetchone()  # the backend is alive after each error too
        calls = [
            "SELECT memory_write('{}')",
            "SELECT memory_query('{\"query\": \"\"}')",
            "SELECT block_append('nobody', 'human', 'x')",
            "SELECT memory_write((repeat('[', 200) || repeat(']', 200))::jsonb)",
        ]
        for q in calls:
            try:
                c.execute(q)
                raise AssertionError(f"{q} did not fail")
            except psycopg.Error as e:
                detail = e.diag.message_detail or ""
                context = e.diag.context or ""
                assert e.sqlstate != "XX000", f"{q}: internal error {e}"
                for leak in ("backtrace", ".rs:", "rustc", "/src/"):
                    assert leak not in detail and leak not in context, f"{q}: {leak!r} in {detail!r} {context!r}"
        assert env == (1,)


def test_api_keys_stay_out_of_the_server_log():
    if not PGDATA:
        print("  (skipped: MEMORY_EXT_TEST_PGDATA not set)")
        return
    secret = "sk-hardening-" + uuid.uuid4().hex
    with admin() as c:
        for name in ("memory_ext.llm_api_key", "memory_ext.embedding_api_key"):
            c.execute(f"ALTER SYSTEM SET {name} = '{secret}'")
        c.execute("SELECT pg_reload_conf()")
        time.sleep(1.5)
    # A new session reads the key from the file: it reaches the endpoint (the stand-in's
    # echo-auth model answers 401 with the Authorization header, which the error redacts).
    with admin() as c:
        shown = c.execute("SHOW memory_ext.llm_api_key").fetchone()[0]
        settings = c.execute(
            "SELECT string_agg(setting, ',') FROM pg_settings WHERE name LIKE 'memory_ext.%api_key'").fetchone()[0]
        c.execute("SET memory_ext.embedding_provider = 'openai'")
        c.execute(f"SET memory_ext.embedding_url = '{STANDIN}/v1'")
        c.execute("SET memory_ext.embedding_model = 'echo-auth'")
        try:
            c.execute("SELECT memory_embed('x')")
            sent = "no error"
        except psycopg.Error as e:
            sent = str(e)
    with admin() as c:
        for name in ("memory_ext.llm_api_key", "memory_ext.embedding_api_key"):
            c.execute(f"ALTER SYSTEM RESET {name}")
        c.execute("SELECT pg_reload_conf()")
    log = open(os.path.join(PGDATA, "server.log"), errors="replace").read()
    assert secret not in log, "the API key is in the server log"
    assert shown == "********", shown
    assert "Bearer [redacted]" in sent and secret not in sent, sent
    assert secret not in (settings or ""), settings


def test_a_message_for_another_tenant_does_not_lock_its_thread():
    victim = "victim-" + uuid.uuid4().hex[:8]
    with admin() as a:
        a.execute("SELECT set_config('memory_ext.user_id', %s, false)", (victim,))
        a.execute("SELECT message_append('v-thread', 'user', 'hello')")
    attacker = tenant("attacker-" + uuid.uuid4().hex[:8])
    big = "word " * 3_000_000  # ~15 MB: counting its tokens took seconds after the thread was locked
    outcome = {}

    def attack():
        try:
            attacker.execute(
                "INSERT INTO memory.messages (user_id, thread_id, role, content) VALUES (%s, 'v-thread', 'user', %s)",
                (victim, big))
            outcome["attack"] = "inserted"
        except psycopg.Error as e:
            outcome["attack"] = e.sqlstate

    conflicts = 0
    probes = 0
    with admin() as probe:
        t = threading.Thread(target=attack)
        t.start()
        while t.is_alive():
            try:
                with probe.transaction():
                    probe.execute("SELECT 1 FROM memory.threads WHERE user_id = %s AND thread_id = 'v-thread' FOR UPDATE NOWAIT",
                                  (victim,))
                probes += 1
            except errors.LockNotAvailable:
                conflicts += 1
            time.sleep(0.005)
        t.join()
    attacker.close()
    assert outcome.get("attack") == "42501", outcome
    assert conflicts == 0, f"the victim's thread was locked during {conflicts} of {conflicts + probes} probes"


def test_another_tenants_ids_answer_like_ids_that_do_not_exist():
    """Naming another tenant's agent, thread, memory, file or detail gives exactly the answer a
    made-up id gives: nothing tells a prober that the id exists."""
    owner = "owner-" + uuid.uuid4().hex[:8]
    with admin() as a:
        a.execute("SELECT set_config('memory_ext.user_id', %s, false)", (owner,))
        a.execute("SELECT memory_agent('secret-agent', %s)", (owner,))
        a.execute("SELECT message_append('secret-thread', 'user', 'hello there')")
        mid = a.execute("""SELECT memory_write('{"text": "The owner hides the key under the mat.", "thread_id": "secret-thread"}') ->> 'id'""").fetchone()[0]
        a.execute("SELECT memory_file_write('secret/notes.md', 'private')")
        key = a.execute("SELECT memory_ref_store('private log', 'a log') ->> 'key'").fetchone()[0]
    real = {"agent": "secret-agent", "thread": "secret-thread", "memory": mid, "path": "secret/notes.md", "key": key}
    fake = {"agent": "nosuch-agent", "thread": "nosuch-thread", "memory": str(uuid.uuid4()),
            "path": "secret/nothing.md", "key": key[:-4] + "zzzz"}
    calls = [
        ("SELECT compile_core_blocks(%s)", "agent"),
        ("SELECT block_append(%s, 'human', 'x')", "agent"),
        ("SELECT block_replace(%s, 'human', 'a', 'b')", "agent"),
        ("SELECT memory_delta(%s, 0)", "thread"),
        ("SELECT context_usage(%s, 8192)", "thread"),
        ("SELECT needs_compaction(%s, 8192)", "thread"),
        ("SELECT count(*) FROM conversation_search(%s, 'hello')", "thread"),
        ("SELECT count(*) FROM context_messages(%s)", "thread"),
        ("SELECT compact_thread(%s)", "thread"),
        ("SELECT memory_query(jsonb_build_object('query', 'key', 'thread_id', %s::text))", "thread"),
        ("SELECT memory_forget(%s::uuid)", "memory"),
        ("SELECT memory_restore(%s::uuid)", "memory"),
        ("SELECT count(*) FROM memory_history(%s::uuid)", "memory"),
        ("SELECT memory_write(jsonb_build_object('id', %s::text, 'text', 'changed'))", "memory"),
        ("SELECT memory_file_read(%s)", "path"),
        ("SELECT memory_file_edit(%s, 'private', 'public')", "path"),
        ("SELECT memory_file_delete(%s)", "path"),
        ("SELECT count(*) FROM memory_file_ls(%s)", "path"),
        ("SELECT memory_ref_get(%s)", "key"),
    ]
    prober = tenant("prober-" + uuid.uuid4().hex[:8])
    differ = []
    for q, kind in calls:
        answers = []
        for ids in (real, fake):
            try:
                v = prober.execute(q, (ids[kind],)).fetchone()[0]
                a = ("ok", str(v).replace(ids[kind], "<id>"))
            except psycopg.Error as e:
                a = (e.sqlstate, str(e).split("\n")[0].replace(ids[kind], "<id>"))
            answers.append(a)
        if answers[0] != answers[1]:
            differ.append((q, answers))
    prober.close()
    with admin() as a:
        a.execute("SELECT set_config('memory_ext.user_id', %s, false)", (owner,))
        intact = a.execute("""SELECT (SELECT value FROM memory.blocks WHERE agent_id = 'secret-agent' AND label = 'human'),
                                     (SELECT state FROM memory.items WHERE id = %s::uuid),
                                     (SELECT content FROM memory.files WHERE path = 'secret/notes.md')""", (mid,)).fetchone()
    assert not differ, f"answers that tell another tenant's ids apart: {differ}"
    assert intact == ("", "active", "private"), intact

def main():
    sys.exit(run_tests(globals()))


if __name__ == "__main__":
    main()
