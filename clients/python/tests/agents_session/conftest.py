"""Runs the OpenAI Agents SDK's own session tests (tests/memory of its sdist) against
MemoryExtSession: with MEMORY_EXT_DSN set, the name ``SQLiteSession`` that the tests import from
``agents`` is bound to a MemoryExtSession taking SQLiteSession's arguments. Each database path
is a tenant of its own (two SQLite files are two databases; ":memory:" is one per session), so
what the tests keep apart stays apart. Without MEMORY_EXT_DSN the tests run as published, on
SQLite: clients/python/tests/run.sh runs them both ways.

The cases that look inside SQLite itself (its files, locks, connections and threads, rows
written to it directly) cannot run on another store: SKIPPED lists them with the reason.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

DSN = os.environ.get("MEMORY_EXT_DSN")

_SQLITE_ONLY = "looks inside SQLite itself (its files, locks, connections or rows written with sqlite3)"
_SKIPPED = {
    "test_sqlite_session_close_closes_worker_thread_connections": _SQLITE_ONLY,
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": _SQLITE_ONLY,
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": _SQLITE_ONLY,
    "test_sqlite_session_keeps_connections_of_live_worker_threads": _SQLITE_ONLY,
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": _SQLITE_ONLY,
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": _SQLITE_ONLY,
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": _SQLITE_ONLY,
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": _SQLITE_ONLY,
    "test_sqlite_session_file_lock_is_shared_across_instances": _SQLITE_ONLY,
    "test_sqlite_session_failed_clear_session_rolls_back": _SQLITE_ONLY,
    "test_sqlite_session_failed_pop_item_releases_write_lock": _SQLITE_ONLY,
    "test_sqlite_session_rollback_failure_evicts_connection": _SQLITE_ONLY,
    "test_sqlite_session_close_retries_quarantined_connection": _SQLITE_ONLY,
    "test_sqlite_session_failed_add_items_releases_write_lock": _SQLITE_ONLY,
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": _SQLITE_ONLY,
}

if DSN:
    import agents
    import agents.memory

    from memory_ext.session import MemoryExtSession

    class SQLiteSession(MemoryExtSession):
        """MemoryExtSession under SQLiteSession's constructor."""

        def __init__(self, session_id: str, db_path: Any = ":memory:", sessions_table: str = "agent_sessions",
                     messages_table: str = "agent_messages", session_settings: Any = None) -> None:
            where = str(db_path) if str(db_path) != ":memory:" else f":memory:{uuid.uuid4()}"
            tenant = "agents-" + hashlib.sha256(str(Path(where)).encode()).hexdigest()[:24]
            super().__init__(session_id, dsn=DSN, user_id=tenant, session_settings=session_settings)

    agents.SQLiteSession = SQLiteSession  # type: ignore[misc]
    agents.memory.SQLiteSession = SQLiteSession  # type: ignore[misc]

    def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
        for item in items:
            reason = _SKIPPED.get(item.originalname if hasattr(item, "originalname") else item.name)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"MemoryExtSession: {reason}"))
