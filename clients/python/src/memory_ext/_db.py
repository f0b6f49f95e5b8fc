"""Connections, tenancy and the extension's version, shared by the adapters."""

from __future__ import annotations

from contextlib import asynccontextmanager, contextmanager
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
