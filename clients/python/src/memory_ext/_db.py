"""Connections, tenancy and the extension's version, shared by the adapters."""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any, AsyncIterator, Iterator

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
TENANT_SQL = "SELECT set_config('memory_ext.user_id', %s, true)"

Conn = psycopg.Connection | ConnectionPool
AConn = psycopg.AsyncConnection | AsyncConnectionPool


@contextmanager
def tenant_tx(conn: Conn, user_id: str) -> Iterator[psycopg.Cursor[Any]]:
    """A cursor in a transaction of its own that acts for `user_id` (a transaction-local
    setting: gone when the transaction ends, whatever the connection does next)."""
    if isinstance(conn, ConnectionPool):
        with conn.connection() as c, c.transaction(), c.cursor() as cur:
            cur.execute(TENANT_SQL, (user_id,))
            yield cur
    else:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(TENANT_SQL, (user_id,))
            yield cur


@asynccontextmanager
async def atenant_tx(conn: AConn, user_id: str) -> AsyncIterator[psycopg.AsyncCursor[Any]]:
    if isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as c, c.transaction(), c.cursor() as cur:
            await cur.execute(TENANT_SQL, (user_id,))
            yield cur
    else:
        async with conn.transaction(), conn.cursor() as cur:
            await cur.execute(TENANT_SQL, (user_id,))
            yield cur


class Connector:
    """The connection of an adapter that makes one call at a time (a session, a chat history):
    ``dsn`` (opened on first use, kept, closed by :meth:`close`), ``conn`` (a psycopg
    ``Connection`` in autocommit mode, shared under a lock) or ``pool`` (a ``ConnectionPool``).
    Each call is a transaction of its own for ``user_id``; the first checks the version."""

    def __init__(self, *, user_id: str, dsn: str | None = None, conn: psycopg.Connection | None = None,
                 pool: ConnectionPool | None = None, what: str = "this object") -> None:
        if not user_id:
            raise ValueError(f"user_id is required: the tenant {what} belongs to")
        if sum(x is not None for x in (dsn, conn, pool)) != 1:
            raise ValueError("give one of dsn, conn or pool")
        self.user_id = user_id
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
        """The first column of the one row `sql` answers (`name` names the caller in errors)."""
        # A shared connection serves one transaction at a time; a pool's are each the caller's.
        with self._lock if self._pool is None else nullcontext():
            with tenant_tx(self._connection(name), self.user_id) as cur:
                if not self._checked:
                    cur.execute(VERSION_SQL)
                    row = cur.fetchone()
                    check_version(row[0] if row else None)
                    self._checked = True
                cur.execute(sql, args)
                row = cur.fetchone()
        return row[0] if row else None

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self._own and self._conn is not None:
                self._conn.close()
                self._conn = None
