"""LangGraph's ``BaseStore`` over memory_ext's store (docs/api.md "Store").

Every batch of operations is one ``store_batch`` call in one transaction, for the tenant the
store was made for. Semantic search, as LangGraph's stores configure it with ``index``:

- ``index=None`` (the default): no vectors, as LangGraph's own stores without an index config;
- ``index={"embed": SERVER_EMBEDDINGS, "fields": [...]}``: the extension embeds with its own
  model (the built-in one by default; no model runs in your process);
- ``index={"dims": n, "embed": <Embeddings or function>, "fields": [...]}``: your model embeds
  here and the vectors are stored with the item (LangGraph's ``PostgresStore`` way).
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any, AsyncIterator, Iterable, Iterator

import psycopg
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore
from langgraph.store.base.embed import ensure_embeddings, get_text_at_path
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from memory_ext._db import VERSION_SQL, atenant_rows, check_version, tenant_rows

#: ``index={"embed": SERVER_EMBEDDINGS}``: vectors from the extension's own embedding model.
SERVER_EMBEDDINGS = "memory_ext"

_BATCH_SQL = "SELECT store_batch(%s, tenant.t) FROM {tenant}"


def _time(v: Any) -> datetime:
    return datetime.fromisoformat(v) if isinstance(v, str) else v


def _item(a: dict[str, Any]) -> Item:
    return Item(
        value=a["value"],
        key=a["key"],
        namespace=tuple(a["namespace"]),
        created_at=_time(a["created_at"]),
        updated_at=_time(a["updated_at"]),
    )


def _search_item(a: dict[str, Any]) -> SearchItem:
    return SearchItem(
        namespace=tuple(a["namespace"]),
        key=a["key"],
        value=a["value"],
        created_at=_time(a["created_at"]),
        updated_at=_time(a["updated_at"]),
        score=a.get("score"),
    )


class _Base:
    supports_ttl = True

    def __init__(
        self,
        conn: Any,
        *,
        user_id: str,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if not user_id:
            raise ValueError("user_id is required: the tenant every call of this store acts for")
        self.conn = conn
        self.user_id = user_id
        self.index_config = index
        self.ttl_config = ttl
        self.embeddings = None
        self.fields: list[str] = ["$"]
        if index is not None:
            self.fields = list(index.get("fields") or ["$"])
            embed = index.get("embed", SERVER_EMBEDDINGS)
            if embed != SERVER_EMBEDDINGS:
                self.embeddings = ensure_embeddings(embed)

    # -- operations to store_batch's JSON --------------------------------------------------

    def _refresh(self, asked: bool | None) -> bool:
        if asked is not None:
            return asked
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _ttl(self, ttl: Any) -> float | None:
        if ttl is NOT_PROVIDED:
            return (self.ttl_config or {}).get("default_ttl")
        return ttl

    def _paths(self, op: PutOp) -> list[str] | None:
        """The paths a put indexes, or None for no vectors."""
        if self.index_config is None or op.index is False:
            return None
        return list(op.index) if op.index else self.fields

    def _texts(self, op: PutOp, paths: list[str]) -> list[tuple[str, str]]:
        """(field, text) as the extension names them (memory_core::store::to_embed)."""
        out = []
        for path in paths:
            for i, t in enumerate(get_text_at_path(op.value, path)):
                if t.strip():
                    out.append((path if i == 0 else f"{path}#{i}", t))
        return out

    def _json(self, op: Op, vectors: dict[int, Any], i: int) -> dict[str, Any]:
        if isinstance(op, GetOp):
            return {"op": "get", "namespace": list(op.namespace), "key": op.key,
                    "refresh_ttl": self._refresh(op.refresh_ttl)}
        if isinstance(op, PutOp):
            if op.value is None:
                return {"op": "delete", "namespace": list(op.namespace), "key": op.key}
            paths = self._paths(op)
            out = {"op": "put", "namespace": list(op.namespace), "key": op.key, "value": op.value,
                   "index": paths if paths is not None else False, "ttl": self._ttl(op.ttl)}
            if i in vectors:
                out["embeddings"] = vectors[i]
            return out
        if isinstance(op, SearchOp):
            out = {"op": "search", "namespace_prefix": list(op.namespace_prefix), "filter": op.filter,
                   "limit": op.limit, "offset": op.offset, "refresh_ttl": self._refresh(op.refresh_ttl)}
            if op.query and self.index_config is not None:
                if i in vectors:
                    out["query_embedding"] = vectors[i]
                else:
                    out["query"] = op.query
            return out
        if isinstance(op, ListNamespacesOp):
            prefix, suffix = [], []
            for c in op.match_conditions or ():
                (prefix if c.match_type == "prefix" else suffix).extend(c.path)
            return {"op": "list_namespaces", "prefix": prefix, "suffix": suffix,
                    "max_depth": op.max_depth, "limit": op.limit, "offset": op.offset}
        raise ValueError(f"unknown operation {op!r}")

    def _to_embed(self, ops: list[Op]) -> tuple[list[str], list[tuple[int, str | None]], list[tuple[int, str]]]:
        """Texts to embed here (client-side embeddings only): documents (by op and field) and
        queries (by op)."""
        docs: list[str] = []
        doc_keys: list[tuple[int, str | None]] = []
        queries: list[tuple[int, str]] = []
        if self.embeddings is None:
            return docs, doc_keys, queries
        for i, op in enumerate(ops):
            if isinstance(op, PutOp) and op.value is not None:
                paths = self._paths(op)
                for field, text in self._texts(op, paths or []):
                    docs.append(text)
                    doc_keys.append((i, field))
            elif isinstance(op, SearchOp) and op.query:
                queries.append((i, op.query))
        return docs, doc_keys, queries

    def _payload(self, ops: list[Op], doc_keys, doc_vecs, queries, query_vecs) -> list[dict[str, Any]]:
        """store_batch's operations, with the vectors computed here (by op: a put's per field,
        a search's query vector)."""
        vectors: dict[int, Any] = {}
        for (i, field), v in zip(doc_keys, doc_vecs):
            vectors.setdefault(i, {})[field] = list(v)
        for (i, _), v in zip(queries, query_vecs):
            vectors[i] = list(v)
        return [self._json(op, vectors, i) for i, op in enumerate(ops)]

    @staticmethod
    def _results(ops: list[Op], answers: list[Any]) -> list[Result]:
        out: list[Result] = []
        for op, a in zip(ops, answers):
            if isinstance(op, GetOp):
                out.append(_item(a) if a else None)
            elif isinstance(op, SearchOp):
                out.append([_search_item(x) for x in a or []])
            elif isinstance(op, ListNamespacesOp):
                out.append([tuple(ns) for ns in a or []])
            else:
                out.append(None)
        return out


class _NoLock:
    """A pool's connections are each the caller's own: nothing to wait for."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: Any) -> None:
        return None

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_: Any) -> None:
        return None


class MemoryExtStore(_Base, BaseStore):
    """A LangGraph store whose items live in memory_ext, for one tenant (``user_id``).

    ``conn`` is a psycopg ``Connection`` or ``ConnectionPool``; or use :meth:`from_conn_string`
    as you would ``PostgresStore.from_conn_string``.
    """

    def __init__(self, conn: Any, **kwargs: Any) -> None:
        super().__init__(conn, **kwargs)
        self._lock = threading.Lock() if not isinstance(conn, ConnectionPool) else _NoLock()


    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        user_id: str,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        pool_config: dict[str, Any] | None = None,
    ) -> Iterator["MemoryExtStore"]:
        if pool_config is not None:
            with ConnectionPool(conn_string, open=True, **pool_config) as pool:
                store = cls(pool, user_id=user_id, index=index, ttl=ttl)
                store.setup()
                yield store
        else:
            with psycopg.connect(conn_string, autocommit=True) as conn:
                store = cls(conn, user_id=user_id, index=index, ttl=ttl)
                store.setup()
                yield store

    def setup(self) -> None:
        """Checks the extension is there and recent enough (it owns its tables: nothing to
        migrate here)."""
        if isinstance(self.conn, ConnectionPool):
            with self.conn.connection() as c:
                row = c.execute(VERSION_SQL).fetchone()
        else:
            row = self.conn.execute(VERSION_SQL).fetchone()
        check_version(row[0] if row else None)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if not ops:
            return []
        docs, doc_keys, queries = self._to_embed(ops)
        doc_vecs = self.embeddings.embed_documents(docs) if docs else []
        query_vecs = [self.embeddings.embed_query(q) for _, q in queries] if queries else []
        payload = self._payload(ops, doc_keys, doc_vecs, queries, query_vecs)
        # One connection serves one statement at a time: callers on other threads wait here (a
        # pool hands each its own connection). The batch is one statement that names its tenant
        # (memory_ext._db.tenant_rows).
        with self._lock:
            answers = tenant_rows(self.conn, self.user_id, _BATCH_SQL, (Jsonb(payload),))[0][0]
        return self._results(ops, answers)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def sweep_ttl(self) -> int:
        """Expired items are never returned; memory_purge (the extension's worker) deletes
        them. Nothing to do here: 0."""
        return 0

    def start_ttl_sweeper(self, *args: Any, **kwargs: Any) -> None:
        """The extension's worker sweeps; kept for ``PostgresStore``'s interface."""

    def stop_ttl_sweeper(self, *args: Any, **kwargs: Any) -> bool:
        return True


class AsyncMemoryExtStore(_Base, AsyncBatchedBaseStore):
    """:class:`MemoryExtStore` on psycopg's ``AsyncConnection`` / ``AsyncConnectionPool``.
    Made inside a running event loop (its connections belong to it). As LangGraph's
    ``AsyncPostgresStore``, operations issued in the same tick are sent as one batch, and the
    synchronous methods work from other threads (not from the loop itself)."""

    def __init__(self, conn: Any, **kwargs: Any) -> None:
        _Base.__init__(self, conn, **kwargs)
        AsyncBatchedBaseStore.__init__(self)
        self._lock = asyncio.Lock() if not isinstance(conn, AsyncConnectionPool) else _NoLock()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        user_id: str,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        pool_config: dict[str, Any] | None = None,
    ) -> AsyncIterator["AsyncMemoryExtStore"]:
        if pool_config is not None:
            async with AsyncConnectionPool(conn_string, open=False, **pool_config) as pool:
                store = cls(pool, user_id=user_id, index=index, ttl=ttl)
                await store.setup()
                yield store
        else:
            async with await psycopg.AsyncConnection.connect(conn_string, autocommit=True) as conn:
                store = cls(conn, user_id=user_id, index=index, ttl=ttl)
                await store.setup()
                yield store

    async def setup(self) -> None:
        if isinstance(self.conn, AsyncConnectionPool):
            async with self.conn.connection() as c:
                row = await (await c.execute(VERSION_SQL)).fetchone()
        else:
            row = await (await self.conn.execute(VERSION_SQL)).fetchone()
        check_version(row[0] if row else None)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if not ops:
            return []
        docs, doc_keys, queries = self._to_embed(ops)
        doc_vecs = await self.embeddings.aembed_documents(docs) if docs else []
        query_vecs = [await self.embeddings.aembed_query(q) for _, q in queries] if queries else []
        payload = self._payload(ops, doc_keys, doc_vecs, queries, query_vecs)
        # One connection serves one statement at a time: concurrent tasks wait here (a pool
        # hands each its own connection).
        async with self._lock:
            answers = (await atenant_rows(self.conn, self.user_id, _BATCH_SQL, (Jsonb(payload),)))[0][0]
        return self._results(ops, answers)

    async def sweep_ttl(self) -> int:
        return 0

    async def start_ttl_sweeper(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def stop_ttl_sweeper(self, *args: Any, **kwargs: Any) -> bool:
        return True
