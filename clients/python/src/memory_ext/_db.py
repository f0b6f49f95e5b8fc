"""Connections, tenancy and the extension's version, shared by the adapters."""

from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

#: The memory_ext release this package is written for (its version is the package's).
REQUIRED_VERSION = "0.12.0"


class VersionError(RuntimeError):
    """The database's memory_ext is missing or older than this package needs."""


def _parse(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def check_version(found: str | None) -> None:
    if found is None:
        raise VersionError(
            f"memory_ext is not installed in this database: CREATE EXTENSION memory_ext CASCADE "
            f"(this package needs {REQUIRED_VERSION} or later)"
        )
    if _parse(found) < _parse(REQUIRED_VERSION):
        raise VersionError(
            f"memory_ext {found} is installed; this package needs {REQUIRED_VERSION} or later: "
            f"install the newer extension and run ALTER EXTENSION memory_ext UPDATE"
        )


VERSION_SQL = "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'"

Conn = psycopg.Connection | ConnectionPool
AConn = psycopg.AsyncConnection | AsyncConnectionPool


# One statement that names its tenant first: the FROM item sets memory_ext.user_id for the
# statement's own transaction (set_config(..., true)), and the call takes the tenant from it
# (`tenant.t`), so the setting is made before the call runs and is gone when it ends. On an
# autocommit connection that is one round trip instead of four (BEGIN, set_config, the call,
# COMMIT). OFFSET 0 keeps the planner from folding the FROM item into the call's query: it runs
# first, as its own scan. SQL passed to tenant_rows names the place of this FROM item with
# {tenant}.
_TENANT_FROM = "(SELECT set_config('memory_ext.user_id', %s, true) AS t OFFSET 0) tenant"
# The same, and the statement's writes left to the backfill for their vectors
# (memory_ext.embed_on_write off for this transaction only: docs/operations.md).
_TENANT_FROM_DEFERRED = ("(SELECT set_config('memory_ext.user_id', %s, true) AS t, "
                         "set_config('memory_ext.embed_on_write', 'off', true) AS e OFFSET 0) tenant")


def _tenant_sql(sql: str, args: tuple[Any, ...] | list[Any], user_id: str,
                defer_embedding: bool = False) -> tuple[str, list[Any]]:
    at = sql.index("{tenant}")
    a = list(args)
    a.insert(sql[:at].count("%s"), user_id)
    return sql.replace("{tenant}", _TENANT_FROM_DEFERRED if defer_embedding else _TENANT_FROM), a


def _one_statement(c: Any) -> bool:
    return bool(c.autocommit) and c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def tenant_rows(conn: Conn, user_id: str, sql: str, args: tuple[Any, ...] | list[Any],
                defer_embedding: bool = False) -> list[Any]:
    """The rows of `sql` (with its {tenant} FROM item) run for `user_id`: as one statement on
    an autocommit connection, otherwise inside a transaction (or savepoint) of its own."""
    q, a = _tenant_sql(sql, args, user_id, defer_embedding)

    def run(c: psycopg.Connection) -> list[Any]:
        if _one_statement(c):
            return c.execute(q, a).fetchall()
        with c.transaction():
            return c.execute(q, a).fetchall()

    if isinstance(conn, ConnectionPool):
        with conn.connection() as c:
            return run(c)
    return run(conn)


async def atenant_rows(conn: AConn, user_id: str, sql: str, args: tuple[Any, ...] | list[Any]) -> list[Any]:
    q, a = _tenant_sql(sql, args, user_id)

    async def run(c: psycopg.AsyncConnection) -> list[Any]:
        if _one_statement(c):
            return await (await c.execute(q, a)).fetchall()
        async with c.transaction():
            return await (await c.execute(q, a)).fetchall()

    if isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as c:
            return await run(c)
    return await run(conn)


def _version(conn: Conn) -> str | None:
    if isinstance(conn, ConnectionPool):
        with conn.connection() as c:
            row = c.execute(VERSION_SQL).fetchone()
    else:
        row = conn.execute(VERSION_SQL).fetchone()
    return row[0] if row else None


class Connector:
    """The connection of an adapter that makes one call at a time (a session, a chat history):
    ``dsn`` (opened on first use, kept, closed by :meth:`close`), ``conn`` (a psycopg
    ``Connection`` in autocommit mode, shared under a lock) or ``pool`` (a ``ConnectionPool``).
    Each call is a transaction of its own for ``user_id``; the first checks the version."""

    def __init__(self, *, user_id: str, dsn: str | None = None, conn: psycopg.Connection | None = None,
                 pool: ConnectionPool | None = None, what: str = "this object",
                 defer_embedding: bool = False) -> None:
        if not user_id:
            raise ValueError(f"user_id is required: the tenant {what} belongs to")
        if sum(x is not None for x in (dsn, conn, pool)) != 1:
            raise ValueError("give one of dsn, conn or pool")
        self.user_id = user_id
        self.defer_embedding = defer_embedding
        self._dsn, self._conn, self._pool = dsn, conn, pool
        self._own = dsn is not None
        self._lock = threading.Lock()
        self._checked = False
        self.closed = False

    def _connection(self, name: str) -> Conn:
        if self._pool is not None:
            return self._pool
        if self.closed:
            raise RuntimeError(f"{name} is closed")
        if self._conn is None or (self._own and self._conn.closed):
            self._conn = psycopg.connect(self._dsn, autocommit=True)  # type: ignore[arg-type]
        return self._conn

    def call(self, name: str, sql: str, args: tuple[Any, ...]) -> Any:
        """The first column of the one row `sql` answers (`name` names the caller in errors);
        `sql` is a tenant statement (tenant_rows: its {tenant} FROM item)."""
        # A shared connection serves one statement at a time; a pool's are each the caller's.
        with self._lock if self._pool is None else nullcontext():
            conn = self._connection(name)
            if not self._checked:
                check_version(_version(conn))
                self._checked = True
            rows = tenant_rows(conn, self.user_id, sql, args, self.defer_embedding)
        return rows[0][0] if rows else None

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._own and self._conn is not None:
                self._conn.close()
                self._conn = None
