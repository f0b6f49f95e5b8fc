"""What the psycopg test scripts share: ordinary roles acting for a tenant, and the runners that
print the closing "N passed, M failed" line scripts/test.sh and CI read."""

import os
import sys
import traceback

import psycopg


def ordinary_role(dsn, role):
    """`role`: LOGIN, no superuser, no BYPASSRLS, allowed to connect to the test database."""
    with psycopg.connect(dsn, autocommit=True) as a:
        if not a.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            a.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        db = a.execute("SELECT current_database()").fetchone()[0]
        a.execute(f'GRANT CONNECT ON DATABASE "{db}" TO {role}')


def connect_as(dsn, role, user):
    """A connection of `role` (made an ordinary role first) acting for tenant `user`."""
    ordinary_role(dsn, role)
    conn = psycopg.connect(dsn + f" user={role}", autocommit=True)
    conn.execute("SELECT set_config('memory_ext.user_id', %s, false)", (user,))
    return conn


def run_tests(namespace, suffix=""):
    """Runs every `test_*` function of `namespace` in order, reports each, returns the exit
    status (every failure is reported before the run fails). `TESTS="name other"` in the
    environment runs only the tests whose names contain one of the words (by hand, while
    working on one)."""
    tests = [(n, f) for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    only = os.environ.get("TESTS", "").split()
    if only:
        tests = [(n, f) for n, f in tests if any(w in n for w in only)]
    failed = 0
    for name, f in tests:
        try:
            f()
            print(f"ok   {name}")
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{len(tests) - failed} passed, {failed} failed{suffix}")
    return 1 if failed else 0


def run_checks(main, label, checks):
    """Runs a script whose `main` asserts as it goes: `label: N passed, 0 failed`, or the
    first failed assertion and exit status 1."""
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        print(f"{label}: 0 passed, 1 failed")
        sys.exit(1)
    print(f"{label}: {checks} passed, 0 failed")
