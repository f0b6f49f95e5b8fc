"""Moving in from LangGraph's Postgres classes and the Agents SDK's SQLite sessions
(docs/migrating.md), for ``memory-ext import --from-langgraph-postgres`` and
``--from-agents-sqlite`` (cli.py).

LangGraph: the tables ``langgraph-checkpoint-postgres`` creates (``checkpoints``,
``checkpoint_blobs``, ``checkpoint_writes``, ``store``, ``store_vectors``) are read as they are,
whatever migration the database is at (each row as ``to_jsonb``, so a column a later migration
added is simply absent), and written as the sections of a memory_export document
(``checkpoint_steps``, ``checkpoint_blobs``, ``checkpoint_writes``, ``store_items``,
``store_vectors``) through ``memory_import``: the write path's checks, ids kept, a second run
changes nothing. The source database is only read.

Agents SDK: ``SQLiteSession``'s file (tables ``agent_sessions`` and ``agent_messages``), every
session's items in order through ``session_add_items``, each session once (an idempotency key
made of the session and its items).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from typing import Any, Iterator

import psycopg
from psycopg.types.json import Jsonb

from memory_ext._db import tenant_rows

#: The namespace of the ids made for store rows, so that a second run finds the first's rows.
_IDS = uuid.UUID("6f1d5a52-8d0e-4f55-9a3c-0b7e1c2d3e4f")


def _id(*parts: str) -> str:
    return str(uuid.uuid5(_IDS, "\x00".join(parts)))


#: Rows per memory_import call: one document stays far below what one jsonb value holds.
CHUNK = 2000


def _rows(src: psycopg.Connection, table: str, order: str) -> Iterator[dict[str, Any]]:
    exists = src.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]
    if not exists:
        return
    with src.cursor(name=f"read_{table}") as cur:
        cur.itersize = CHUNK
        cur.execute(f"SELECT to_jsonb(t) FROM {table} t ORDER BY {order}")  # noqa: S608 (fixed names)
        for (row,) in cur:
            yield row


def _text_at(value: Any, path: str) -> str | None:
    """The text LangGraph embedded for ``path`` (its index ``fields``): ``$`` is the whole value."""
    if path in ("$", ""):
        return json.dumps(value, ensure_ascii=False)
    cur: Any = value
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    if cur is None:
        return None
    return cur if isinstance(cur, str) else json.dumps(cur, ensure_ascii=False)


def langgraph_document(src: psycopg.Connection, keep_dims: int | None = None) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """memory_export documents (in chunks) of a LangGraph Postgres database, each with notes."""
    def step(r: dict[str, Any]) -> dict[str, Any]:
        out = {k: r.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata")}
        out["checkpoint_ns"] = out["checkpoint_ns"] or ""
        out["metadata"] = out["metadata"] or {}
        ts = (r.get("checkpoint") or {}).get("ts")
        if ts:
            out["created_at"] = ts
        return out

    def blob(r: dict[str, Any]) -> dict[str, Any]:
        return {k: r.get(k) for k in ("thread_id", "checkpoint_ns", "channel", "version", "type", "blob")}

    def write(r: dict[str, Any]) -> dict[str, Any]:
        out = {k: r.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob")}
        out["task_path"] = r.get("task_path") or ""
        return out

    for table, section, order, conv in (
        ("checkpoints", "checkpoint_steps", "thread_id, checkpoint_ns, checkpoint_id", step),
        ("checkpoint_blobs", "checkpoint_blobs", "thread_id, checkpoint_ns, channel, version", blob),
        ("checkpoint_writes", "checkpoint_writes", "thread_id, checkpoint_ns, checkpoint_id, task_id, idx", write),
    ):
        batch: list[dict[str, Any]] = []
        for r in _rows(src, table, order):
            batch.append(conv(r))
            if len(batch) == CHUNK:
                yield {section: batch}, []
                batch = []
        if batch:
            yield {section: batch}, []

    values: dict[tuple[str, str], Any] = {}
    batch = []
    for r in _rows(src, "store", "prefix, key"):
        item = {"id": _id(r["prefix"], r["key"]), "namespace": r["prefix"].split("."), "key": r["key"], "value": r["value"],
                "created_at": r.get("created_at"), "updated_at": r.get("updated_at")}
        if r.get("ttl_minutes") and r.get("expires_at"):
            item["ttl"] = f"{r['ttl_minutes']} minutes"
            item["expires_at"] = r["expires_at"]
        values[(r["prefix"], r["key"])] = r["value"]
        batch.append(item)
        if len(batch) == CHUNK:
            yield {"store_items": batch}, []
            batch = []
    if batch:
        yield {"store_items": batch}, []

    kept = reembedded = no_text = 0
    batch = []
    for r in _rows(src, "store_vectors", "prefix, key, field_name"):
        value = values.get((r["prefix"], r["key"]))
        text = _text_at(value, r["field_name"]) if value is not None else None
        if not text:
            no_text += 1
            continue
        row: dict[str, Any] = {"id": _id(r["prefix"], r["key"], r["field_name"]), "namespace": r["prefix"].split("."),
                               "key": r["key"], "field": r["field_name"], "text": text}
        emb = r.get("embedding")
        dims = len(json.loads(emb)) if isinstance(emb, str) else None
        if keep_dims and dims == keep_dims:
            row["embedding"] = emb
            row["embedding_model"] = "client"
            kept += 1
        else:
            reembedded += 1
        batch.append(row)
        if len(batch) == CHUNK:
            yield {"store_vectors": batch}, []
            batch = []
    notes = []
    if kept:
        notes.append(f"{kept} store vectors kept as your own (dimension {keep_dims}): configure MemoryExtStore with index={{'dims': {keep_dims}, 'embed': <the same model>}}")
    if reembedded:
        notes.append(f"{reembedded} store vectors re-embedded by memory_ext's model"
                     + (f" (their dimension is not {keep_dims})" if keep_dims else " (pass --keep-vectors DIMS to keep vectors of your own model)"))
    if no_text:
        notes.append(f"{no_text} store vectors whose field no longer holds text: not imported")
    yield ({"store_vectors": batch} if batch else {}), notes


def import_langgraph(dst: psycopg.Connection, user_id: str, source_dsn: str, keep_dims: int | None = None) -> dict[str, Any]:
    """Every checkpoint and store item of the LangGraph database at ``source_dsn`` into tenant
    ``user_id``, in one transaction of ``dst``. Returns rows inserted and skipped by section, notes."""
    inserted: dict[str, int] = {}
    skipped: dict[str, int] = {}
    notes: list[str] = []
    with psycopg.connect(source_dsn) as src, dst.transaction():
        src.read_only = True
        for doc, more in langgraph_document(src, keep_dims):
            notes.extend(more)
            if not doc:
                continue
            answer = tenant_rows(dst, user_id, "SELECT memory_import(%s, %s) FROM {tenant}",
                                 (Jsonb(doc), Jsonb({"format": "memory_ext"})))[0][0]
            for k, v in (answer.get("inserted") or {}).items():
                inserted[k] = inserted.get(k, 0) + v
            for k, v in (answer.get("skipped") or {}).items():
                skipped[k] = skipped.get(k, 0) + v
            for n in answer.get("notes") or []:
                if n not in notes:
                    notes.append(n)
    return {"inserted": inserted, "skipped": skipped, "notes": notes, "format": "langgraph_postgres"}


def import_agents_sqlite(dst: psycopg.Connection, user_id: str, path: str,
                         sessions_table: str = "agent_sessions", messages_table: str = "agent_messages") -> dict[str, Any]:
    """Every session of an Agents SDK ``SQLiteSession`` file into tenant ``user_id``, items in
    order, in one transaction. Returns sessions and items added, and notes."""
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ids = [r[0] for r in src.execute(f"SELECT session_id FROM {sessions_table} ORDER BY created_at, session_id")]  # noqa: S608
        extra = [r[0] for r in src.execute(
            f"SELECT DISTINCT session_id FROM {messages_table} WHERE session_id NOT IN (SELECT session_id FROM {sessions_table})")]  # noqa: S608
        added = 0
        unreadable = 0
        with dst.transaction():
            for sid in ids + extra:
                items = []
                for (data,) in src.execute(f"SELECT message_data FROM {messages_table} WHERE session_id = ? ORDER BY id", (sid,)):  # noqa: S608
                    try:
                        items.append(json.loads(data))
                    except (TypeError, ValueError):
                        unreadable += 1
                if not items:
                    continue
                key = "agents-sqlite:" + hashlib.sha256(json.dumps([sid, items], sort_keys=True).encode()).hexdigest()[:32]
                tenant_rows(dst, user_id, "SELECT session_add_items(%s, %s, tenant.t, %s) FROM {tenant}",
                            (sid, Jsonb(items), key))
                added += len(items)
    finally:
        src.close()
    notes = []
    if unreadable:
        notes.append(f"{unreadable} items that are not JSON: not imported (the SDK could not read them either)")
    return {"inserted": {"sessions": len(ids) + len(extra), "items": added}, "notes": notes, "format": "agents_sqlite"}
