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
import traceback
import uuid

import psycopg
from psycopg import errors

DSN = os.environ["MEMORY_EXT_TEST_DSN"]
PGDATA = os.environ.get("MEMORY_EXT_TEST_PGDATA")
ROLE = "me_hardening"


def admin():
    return psycopg.connect(DSN, autocommit=True)


def tenant(user):
    with admin() as a:
        if not a.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            a.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
        db = a.execute("SELECT current_database()").fetchone()[0]
        a.execute(f'GRANT CONNECT ON DATABASE "{db}" TO {ROLE}')
    c = psycopg.connect(DSN + f" user={ROLE}", autocommit=True)
    c.execute("SELECT set_config('memory_ext.user_id', %s, false)", (user,))
    return c


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
        shown = c.execute("SHOW memory_ext.llm_api_key").fetchone()[0]
        settings = c.execute(
            "SELECT string_agg(setting, ',') FROM pg_settings WHERE name LIKE 'memory_ext.%api_key'").fetchone()[0]
        for name in ("memory_ext.llm_api_key", "memory_ext.embedding_api_key"):
            c.execute(f"ALTER SYSTEM RESET {name}")
        c.execute("SELECT pg_reload_conf()")
    log = open(os.path.join(PGDATA, "server.log"), errors="replace").read()
    assert secret not in log, "the API key is in the server log"
    assert 'memory_ext.llm_api_key" changed to "********"' in log, "no masked reload line in the log"
    assert shown == "********", shown
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


def main():
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    failed = 0
    for name, f in tests:
        try:
            f()
            print(f"ok   {name}")
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
