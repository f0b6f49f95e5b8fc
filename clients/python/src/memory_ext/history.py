"""LangChain's ``BaseChatMessageHistory`` over a thread of memory_ext's recall memory.

Each message is stored through the session functions (docs/api.md "Sessions") as a Chat
Completions message (role, text, tool calls, tool call id), so recall sees it as any
conversation (``conversation_search``, ``context_messages``, compaction), with LangChain's own
form of it beside (``lc``), so that it comes back exactly as it was added. A message of the
thread written another way (``message_append``, an Agents SDK session) comes back as the
LangChain message of its role.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Sequence

import psycopg
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from memory_ext._db import Connector

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _item(m: BaseMessage) -> dict[str, Any]:
    """A LangChain message as a session item."""
    item: dict[str, Any] = {"role": _ROLES.get(m.type, "assistant"), "content": m.text}
    if isinstance(m, AIMessage) and m.tool_calls:
        item["tool_calls"] = [
            {"id": c.get("id") or "", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("args") or {})}}
            for c in m.tool_calls
        ]
    if isinstance(m, ToolMessage):
        item["tool_call_id"] = m.tool_call_id
    if m.name:
        item["name"] = m.name
    item["lc"] = message_to_dict(m)
    return item


def _message(item: dict[str, Any]) -> BaseMessage:
    """A session item as a LangChain message: its own form when it has one."""
    lc = item.get("lc")
    if isinstance(lc, dict):
        return messages_from_dict([lc])[0]
    role = item.get("role")
    content = item.get("content")
    text = content if isinstance(content, str) else json.dumps(content) if content is not None else ""
    if role == "user":
        return HumanMessage(content=text)
    if role in ("system", "developer"):
        return SystemMessage(content=text)
    if role == "tool":
        return ToolMessage(content=text, tool_call_id=str(item.get("tool_call_id") or ""))
    if item.get("type") == "function_call_output":
        return ToolMessage(content=str(item.get("output") or ""), tool_call_id=str(item.get("call_id") or ""))
    return AIMessage(content=text)


class MemoryExtChatMessageHistory(BaseChatMessageHistory):
    """The messages of one thread (``session_id``) of a tenant (``user_id``).

    Give ``dsn`` (a connection opened on first use and kept until :meth:`close`), ``conn`` (a
    psycopg ``Connection`` in autocommit mode) or ``pool`` (a ``ConnectionPool``);
    ``defer_embedding=True`` leaves the messages' vectors to the extension's backfill::

        history = MemoryExtChatMessageHistory("thread-1", user_id="alice", dsn=DSN)
        chain = RunnableWithMessageHistory(model, lambda sid: MemoryExtChatMessageHistory(
            sid, user_id="alice", dsn=DSN))
    """

    def __init__(self, session_id: str, *, user_id: str, dsn: str | None = None,
                 conn: psycopg.Connection | None = None, pool: ConnectionPool | None = None,
                 defer_embedding: bool = False) -> None:
        self._db = Connector(user_id=user_id, dsn=dsn, conn=conn, pool=pool, what="this history",
                             defer_embedding=defer_embedding)
        self.session_id = session_id
        self.user_id = user_id

    def _call(self, sql: str, *args: Any) -> Any:
        return self._db.call(type(self).__name__, sql, args)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        items = self._call("SELECT session_get_items(%s, NULL, tenant.t) FROM {tenant}", self.session_id) or []
        return [_message(i) for i in items]

    @messages.setter
    def messages(self, value: Sequence[BaseMessage]) -> None:
        # What InMemoryChatMessageHistory allows (history.messages = [...]): the thread replaced.
        self.clear()
        self.add_messages(value)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """All of them in one call: all are stored or none."""
        if messages:
            self._call("SELECT session_add_items(%s, %s, tenant.t) FROM {tenant}", self.session_id, Jsonb([_item(m) for m in messages]))

    def clear(self) -> None:
        self._call("SELECT session_clear(%s, tenant.t) FROM {tenant}", self.session_id)

    async def aget_messages(self) -> list[BaseMessage]:
        return await asyncio.to_thread(lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, list(messages))

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)

    def close(self) -> None:
        """Closes the connection the history opened itself (a given one is the caller's)."""
        self._db.close()
