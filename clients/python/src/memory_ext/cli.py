"""``memory-ext`` (or ``python -m memory_ext``): a tenant's memory in and out of a database.

    memory-ext export --dsn DSN --user-id ann > ann.json
    memory-ext import --dsn DSN --user-id bob ann.json        # a memory_export document
    memory-ext import --dsn DSN --user-id bob --format mem0 mem0-export.json
    memory-ext import --dsn DSN --user-id bob --remap '{"thread_ids": {"t1": "t9"}}' ann.json
    memory-ext import --dsn DSN --user-id bob --from-langgraph-postgres "postgresql://old-db"
    memory-ext import --dsn DSN --user-id bob --from-agents-sqlite conversations.db
    memory-ext export --dsn DSN --user-id ann --format letta_af > ann.af

``import`` calls ``memory_import`` (docs/api.md "Import"): the document goes in whole or not at
all, and importing it again changes nothing. It prints the function's answer (rows inserted and
skipped by section, notes). ``export`` prints ``memory_export``'s document. Both act as the
tenant they name, in a transaction of their own. ``--from-langgraph-postgres`` and
``--from-agents-sqlite`` read those frameworks' own storage (migrate.py); ``export --format``
writes Letta's agent file or mem0's list (docs/migrating.md).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any, Sequence

import psycopg
from psycopg.types.json import Jsonb

from memory_ext._db import check_version, tenant_rows, VERSION_SQL
from memory_ext import migrate


def _connect(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True)
    row = conn.execute(VERSION_SQL).fetchone()
    check_version(row[0] if row else None)
    return conn


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memory-ext", description="memory_ext: export and import a tenant's memory")
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="print a tenant's memory_export document")
    ex.add_argument("--dsn", required=True)
    ex.add_argument("--user-id", required=True)
    ex.add_argument("--format", choices=["memory_ext", "letta_af", "mem0"], default="memory_ext",
                    help="memory_ext (default), a Letta agent file, or mem0's list")
    im = sub.add_parser("import", help="bring a document into a tenant (memory_import)")
    im.add_argument("--dsn", required=True)
    im.add_argument("--user-id", required=True, help="the tenant the rows go into")
    im.add_argument("--format", choices=["memory_ext", "mem0", "letta_af"],
                    help="the document's format (told from the document when absent)")
    im.add_argument("--remap", help='JSON: {"agent_ids": {...}, "thread_ids": {...}}')
    im.add_argument("--from-langgraph-postgres", metavar="DSN",
                    help="read the tables of LangGraph's PostgresSaver and PostgresStore at DSN")
    im.add_argument("--keep-vectors", type=int, metavar="DIMS",
                    help="with --from-langgraph-postgres: keep store vectors of this dimension as your own")
    im.add_argument("--from-agents-sqlite", metavar="FILE",
                    help="read the Agents SDK's SQLiteSession file")
    im.add_argument("file", nargs="?", help="the document (- for standard input)")
    args = ap.parse_args(argv)

    try:
        with _connect(args.dsn) as conn:
            if args.command == "export":
                doc = tenant_rows(conn, args.user_id, "SELECT memory_export(tenant.t, %s) FROM {tenant}",
                                  (args.format,))[0][0]
                json.dump(doc, sys.stdout, ensure_ascii=False)
                sys.stdout.write("\n")
                return 0
            sources = [x for x in (args.file, args.from_langgraph_postgres, args.from_agents_sqlite) if x]
            if len(sources) != 1:
                ap.error("import reads one of: a FILE, --from-langgraph-postgres DSN, --from-agents-sqlite FILE")
            if args.from_langgraph_postgres:
                answer = migrate.import_langgraph(conn, args.user_id, args.from_langgraph_postgres, args.keep_vectors)
            elif args.from_agents_sqlite:
                answer = migrate.import_agents_sqlite(conn, args.user_id, args.from_agents_sqlite)
            if not args.file:
                json.dump(answer, sys.stdout, ensure_ascii=False, indent=2, default=str)
                sys.stdout.write("\n")
                return 0
            text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
            document: Any = json.loads(text)
            options: dict[str, Any] = {}
            if args.format:
                options["format"] = args.format
            if args.remap:
                options["remap"] = json.loads(args.remap)
            answer = tenant_rows(conn, args.user_id, "SELECT memory_import(%s, %s) FROM {tenant}",
                                 (Jsonb(document), Jsonb(options)))[0][0]
            json.dump(answer, sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
            return 0
    except (psycopg.Error, ValueError, OSError, sqlite3.Error) as e:
        state = getattr(getattr(e, "diag", None), "sqlstate", None)
        print(f"memory-ext: {e}" + (f" (SQLSTATE {state})" if state else ""), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
