"""Runs langchain-core's own chat history tests (tests/unit_tests/chat_history and
tests/unit_tests/runnables/test_history.py of its sdist: InMemoryChatMessageHistory, alone and
under RunnableWithMessageHistory) against MemoryExtChatMessageHistory. LangChain ships no
standard test suite for chat histories (langchain-tests has none), so the reference class's own
tests are the cases: with MEMORY_EXT_DSN set, the name ``InMemoryChatMessageHistory`` the tests
import is bound to a MemoryExtChatMessageHistory on a thread of its own, compared by its
messages as the tests compare the reference class's instances.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Sequence

import pytest

DSN = os.environ.get("MEMORY_EXT_DSN")

_SKIPPED = {
    "test_chat_history_deprecated": "checks the words of LangChain's own docstring",
}

if DSN:
    import langchain_core.chat_history as chat_history
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import BaseMessage
    from psycopg_pool import ConnectionPool

    from memory_ext.history import MemoryExtChatMessageHistory

    _POOL = ConnectionPool(DSN, min_size=1, max_size=4, kwargs={"autocommit": True}, open=True)
    _TENANT = f"langchain-{uuid.uuid4()}"

    class InMemoryChatMessageHistory(MemoryExtChatMessageHistory):
        """MemoryExtChatMessageHistory under InMemoryChatMessageHistory's constructor."""

        def __init__(self, messages: Sequence[BaseMessage] | None = None, **_: Any) -> None:
            super().__init__(f"history-{uuid.uuid4()}", user_id=_TENANT, pool=_POOL)
            if messages:
                self.add_messages(messages)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, BaseChatMessageHistory) and self.messages == other.messages

        def __repr__(self) -> str:
            return f"InMemoryChatMessageHistory(messages={self.messages!r})"

    chat_history.InMemoryChatMessageHistory = InMemoryChatMessageHistory  # type: ignore[misc]

    def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
        for item in items:
            reason = _SKIPPED.get(getattr(item, "originalname", item.name))
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"MemoryExtChatMessageHistory: {reason}"))
