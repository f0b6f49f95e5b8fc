"""``memory-ext`` (or ``python -m memory_ext``): a tenant's memory in and out of a database.

    memory-ext export --dsn DSN --user-id ann > ann.json
    memory-ext import --dsn DSN --user-id bob ann.json        # a memory_export document
    memory-ext import --dsn DSN --user-id bob --format mem0 mem0-export.json
    memory-ext import --dsn DSN --user-id bob --remap '{"thread_ids": {"t1": "t9"}}' ann.json

``import`` calls ``memory_import`` (docs/api.md "Import"): the document goes in whole or not at
all, and importing it again changes nothing. It prints the function's answer (rows inserted and
skipped by section, notes). ``export`` prints ``memory_export``'s document. Both act as the
tenant they name, in a transaction of their own.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

import psycopg
from psycopg.types.json import Jsonb

from memory_ext._db import check_version, tenant_rows, VERSION_SQL


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
    im = sub.add_parser("import", help="bring a document into a tenant (memory_import)")
    im.add_argument("--dsn", required=True)
    im.add_argument("--user-id", required=True, help="the tenant the rows go into")
    im.add_argument("--format", choices=["memory_ext", "mem0", "letta_af"],
                    help="the document's format (told from the document when absent)")
    im.add_argument("--remap", help='JSON: {"agent_ids": {...}, "thread_ids": {...}}')
    im.add_argument("file", help="the document (- for standard input)")
    args = ap.parse_args(argv)

    try:
        with _connect(args.dsn) as conn:
            if args.command == "export":
                doc = tenant_rows(conn, args.user_id, "SELECT memory_export(tenant.t) FROM {tenant}", ())[0][0]
                json.dump(doc, sys.stdout, ensure_ascii=False)
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
    except (psycopg.Error, ValueError, OSError) as e:
        state = getattr(getattr(e, "diag", None), "sqlstate", None)
        print(f"memory-ext: {e}" + (f" (SQLSTATE {state})" if state else ""), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
