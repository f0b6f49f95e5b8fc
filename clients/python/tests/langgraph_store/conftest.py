"""LangGraph's own Postgres store tests (the tests/ of langgraph-checkpoint-postgres's sdist on
PyPI, at the version clients/python/tests/run.sh pins) run against memory_ext's store. They
import ``PostgresStore`` / ``AsyncPostgresStore`` and make them with ``from_conn_string``: those
names are bound here, before the tests import them, to thin subclasses of MemoryExtStore /
AsyncMemoryExtStore that take the same arguments. Each test database gets the extension (the
store's tables are the extension's, not migrations of the store) and a view named ``store`` in
the shape the tests' few raw statements read and update (expires_at, updated_at by prefix and
key). Nothing in the tests is edited but the server's address (run.sh)."""

from __future__ import annotations

import sys
import types
from contextlib import asynccontextmanager, contextmanager

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from memory_ext.store import AsyncMemoryExtStore, MemoryExtStore

#: The tenant the tests' stores act for.
TENANT = "langgraph-tests"

_PREPARE = """
CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE;
CREATE OR REPLACE VIEW public.store AS
    SELECT array_to_string(namespace, '.') AS prefix, key, value, created_at, updated_at, expires_at, ttl
    FROM memory.store_items;
"""


def _prepare(conn_string: str) -> None:
    with psycopg.connect(conn_string, autocommit=True) as c:
        c.execute(_PREPARE)


def _index(index):
    """PostgresStore's index config, as ours: the test's embeddings, dims and fields. Vectors
    are compared by cosine similarity whatever ``distance_type`` says (skips.txt)."""
    if index is None:
        return None
    return {k: index[k] for k in ("dims", "embed", "fields") if index.get(k) is not None}


class PostgresStore(MemoryExtStore):
    MIGRATIONS: list = []

    def __init__(self, conn, *, index=None, ttl=None, **_):
        super().__init__(conn, user_id=TENANT, index=_index(index), ttl=ttl)

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string, *, pipeline=False, pool_config=None, index=None, ttl=None):
        _prepare(conn_string)
        if pool_config is not None:
            with ConnectionPool(conn_string, open=True, kwargs={"autocommit": True}, **pool_config) as pool:
                yield cls(pool, index=index, ttl=ttl)
        else:
            with psycopg.connect(conn_string, autocommit=True) as conn:
                yield cls(conn, index=index, ttl=ttl)

    @contextmanager
    def _cursor(self):
        if isinstance(self.conn, ConnectionPool):
            with self.conn.connection() as c, c.cursor(row_factory=dict_row) as cur:
                yield cur
        else:
            with self.conn.cursor(row_factory=dict_row) as cur:
                yield cur


class AsyncPostgresStore(AsyncMemoryExtStore):
    MIGRATIONS: list = []

    def __init__(self, conn, *, index=None, ttl=None, **_):
        super().__init__(conn, user_id=TENANT, index=_index(index), ttl=ttl)

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string, *, pipeline=False, pool_config=None, index=None, ttl=None):
        _prepare(conn_string)
        if pool_config is not None:
            async with AsyncConnectionPool(conn_string, open=False, kwargs={"autocommit": True}, **pool_config) as pool:
                yield cls(pool, index=index, ttl=ttl)
        else:
            async with await psycopg.AsyncConnection.connect(conn_string, autocommit=True) as conn:
                yield cls(conn, index=index, ttl=ttl)

    @asynccontextmanager
    async def _cursor(self):
        if isinstance(self.conn, AsyncConnectionPool):
            async with self.conn.connection() as c, c.cursor(row_factory=dict_row) as cur:
                yield cur
        else:
            async with self.conn.cursor(row_factory=dict_row) as cur:
                yield cur


def _unsupported(*_a, **_k):
    raise NotImplementedError("a PostgresStore internal: memory_ext has no such helper (skips.txt)")


_store_pg = types.ModuleType("langgraph.store.postgres")
_store_pg.PostgresStore = PostgresStore
_store_pg.AsyncPostgresStore = AsyncPostgresStore
_store_pg_base = types.ModuleType("langgraph.store.postgres.base")
_store_pg_base._escape_like_literal = _unsupported
_store_pg_base._namespace_match_pattern = _unsupported
_cp_pg = types.ModuleType("langgraph.checkpoint.postgres")
_cp_pg._ainternal = types.SimpleNamespace(get_connection=_unsupported)
sys.modules.setdefault("langgraph.store.postgres", _store_pg)
sys.modules.setdefault("langgraph.store.postgres.base", _store_pg_base)
sys.modules.setdefault("langgraph.checkpoint.postgres", _cp_pg)


# Cases that cannot apply, skipped with their reason (reported by pytest -rs; everything else
# must pass).
_SKIP = {
    "test_escape_like_literal": "a PostgresStore internal (LIKE escaping): memory_ext keeps namespaces as arrays",
    "test_namespace_match_pattern": "a PostgresStore internal (regex over dot-joined namespaces): memory_ext keeps arrays",
    "test_nonnull_migrations": "PostgresStore's own migrations: memory_ext's tables come with the extension and its upgrade scripts",
    "test_abatch_uses_single_pool_checkout": "monkeypatches PostgresStore's internal _ainternal.get_connection",
    "test_omit_expired_disabled_preserves_expired_rows": "memory_ext never returns an expired item; PostgresStore "
    "with omit_expired off returns one until its sweeper deletes it",
}
_OTHER_DISTANCES = ("l2", "inner_product", "hamming")


def _params(item):
    spec = getattr(item, "callspec", None)
    for v in (spec.params.values() if spec else ()):
        yield from (v if isinstance(v, tuple) else (v,))


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        reason = _SKIP.get(item.originalname)
        if reason is None and any(p in _OTHER_DISTANCES for p in _params(item)):
            reason = "memory_ext scores by cosine similarity only (distance_type l2, inner_product, hamming are PostgresStore options)"
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
