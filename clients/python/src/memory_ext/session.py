"""The OpenAI Agents SDK's ``Session`` over memory_ext's sessions (docs/api.md "Sessions").

A session is a thread of the tenant's recall memory: its items come back exactly as added, and
they are also messages, found by ``conversation_search`` and counted by ``context_usage`` like
any conversation. Used as ``SQLiteSession`` is::

    session = MemoryExtSession("conversation-1", dsn="postgresql://...", user_id="alice")
    result = await Runner.run(agent, "Hi", session=session)

Calls run in a thread (as ``SQLiteSession``'s do), each in a transaction of its own that names
its tenant, so the session works from any event loop and from ``Runner.run_sync``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings, resolve_session_limit
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from memory_ext._db import Connector

try:  # the SDK's own wrapper: an add or a pop the caller cancels still completes or fails whole
    from agents.memory.session import _await_mutation
except ImportError:  # pragma: no cover - older SDKs
    async def _await_mutation(awaitable):  # type: ignore[no-redef]
        return await awaitable

try:
    from agents.memory.session_settings import coerce_session_settings
except ImportError:  # pragma: no cover - older SDKs
    def coerce_session_settings(s):  # type: ignore[no-redef]
        return s if isinstance(s, SessionSettings) else SessionSettings(**s)


class MemoryExtSession(SessionABC):
    """Conversation history for the Agents SDK, kept by memory_ext for one tenant.

    Give ``dsn`` (a connection is opened on first use and kept until :meth:`close`), ``conn`` (a
    psycopg ``Connection`` in autocommit mode, shared under a lock) or ``pool`` (a
    ``ConnectionPool``). ``defer_embedding=True``: items are stored without waiting for their
    vectors, which the extension's backfill adds (the built-in model takes about 10 ms an item;
    until then ``conversation_search`` finds them by keyword only).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str,
        dsn: str | None = None,
        conn: psycopg.Connection | None = None,
        pool: ConnectionPool | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        defer_embedding: bool = False,
    ) -> None:
        self._db = Connector(user_id=user_id, dsn=dsn, conn=conn, pool=pool, what="this session",
                             defer_embedding=defer_embedding)
        self.session_id = session_id
        self.user_id = user_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )

    def _call(self, sql: str, *args: Any) -> Any:
        return self._db.call(type(self).__name__, sql, args)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        n = resolve_session_limit(limit, self.session_settings)
        items = await asyncio.to_thread(self._call, "SELECT session_get_items(%s, %s, tenant.t) FROM {tenant}", self.session_id, n)
        return list(items or [])

    async def add_items(self, items: list[Any]) -> None:
        if self._db.closed:  # before the empty-list return, as SQLiteSession
            raise RuntimeError(f"{type(self).__name__} is closed")
        if not items:
            return
        await _await_mutation(asyncio.to_thread(
            self._call, "SELECT session_add_items(%s, %s, tenant.t) FROM {tenant}", self.session_id, Jsonb(list(items))))

    async def pop_item(self) -> Any | None:
        return await _await_mutation(asyncio.to_thread(self._call, "SELECT session_pop_item(%s, tenant.t) FROM {tenant}", self.session_id))

    async def clear_session(self) -> None:
        await _await_mutation(asyncio.to_thread(self._call, "SELECT session_clear(%s, tenant.t) FROM {tenant}", self.session_id))

    def close(self) -> None:
        """Closes the connection the session opened itself (a given one is the caller's)."""
        self._db.close()
