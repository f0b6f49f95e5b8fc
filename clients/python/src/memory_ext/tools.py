"""The agent tools for code that calls a model SDK directly (docs/api.md "Agent tools").

``memory_tools(...)`` gives what a request needs and a dispatcher for what the model answers,
bound to one tenant, agent and thread::

    tools = memory_tools(dsn=DSN, user_id="alice", agent_id="assistant", thread_id="t1")
    system = "You are helpful.\\n\\n" + tools.prompt()
    tools.append("user", user_text)   # the thread's recall memory: conversation_search finds it
    reply = client.chat.completions.create(model=..., messages=messages, tools=tools.definitions)
    messages += [reply.choices[0].message] + tools.handle(reply.choices[0].message.tool_calls)

Every call is one SQL call (``memory_tools``, ``memory_prompt``, ``compile_core_blocks``,
``memory_tool_call``) in a transaction of its own for the tenant. A tool call the model gets wrong
comes back as the tool's error text (``is_error``), which the model can act on; nothing is
written by it.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from memory_ext._db import Connector


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a dict or of an SDK object (the OpenAI and Anthropic SDKs return objects)."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


class MemoryTools:
    """Tool definitions, memory instructions and a dispatcher for one agent of one tenant."""

    def __init__(self, *, user_id: str, agent_id: str, thread_id: str | None = None,
                 format: str = "openai", tools: Sequence[str] | None = None, dsn: str | None = None,
                 conn: psycopg.Connection | None = None, pool: ConnectionPool | None = None) -> None:
        self._db = Connector(user_id=user_id, dsn=dsn, conn=conn, pool=pool, what="these tools")
        self.user_id = user_id
        self.agent_id = agent_id
        self.thread_id = thread_id
        self.format = format
        self.tools = list(tools) if tools is not None else None
        self._definitions: list[dict[str, Any]] | None = None
        # The agent exists from here on (memory_agent creates it with its default blocks).
        self._call("SELECT memory_agent(%s, tenant.t) FROM {tenant}", agent_id)

    def _call(self, sql: str, *args: Any) -> Any:
        return self._db.call("MemoryTools", sql, args)

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """The request's tools, in the format asked for (``openai``, ``anthropic`` or ``mcp``)."""
        if self._definitions is None:
            self._definitions = self._call("SELECT memory_tools(%s, %s, %s) FROM {tenant}", self.agent_id, self.format,
                                           self.tools)
        return self._definitions

    @property
    def names(self) -> set[str]:
        """The names of the tools offered (a call to another name is not this dispatcher's)."""
        out = set()
        for d in self.definitions:
            fn = d.get("function") if isinstance(d.get("function"), dict) else d
            out.add(fn.get("name"))
        return out

    def prompt(self, *, blocks: bool = True) -> str:
        """The memory instructions for the system prompt, naming exactly these tools, and (by
        default) the agent's core memory blocks as they are now."""
        text = self._call("SELECT memory_prompt(%s, NULL, %s) FROM {tenant}", self.agent_id, self.tools) or ""
        if blocks:
            text += "\n\n" + (self._call("SELECT compile_core_blocks(%s) FROM {tenant}", self.agent_id) or "")
        return text

    def append(self, role: str, content: str, *, tool_calls: Any = None, tool_call_id: str | None = None,
               name: str | None = None) -> dict[str, Any]:
        """Keeps a message of the conversation in the thread's recall memory (``message_append``:
        role system, user, assistant or tool), where ``conversation_search`` finds it later. The
        thread is started by its first message: tool calls in a thread need one before them."""
        if self.thread_id is None:
            raise ValueError("these tools have no thread_id: messages are kept in a thread")
        return self._call("SELECT message_append(%s, %s, %s, tenant.t, tool_calls => %s, tool_call_id => %s, name => %s) "
                          "FROM {tenant}",
                          self.thread_id, role, content, Jsonb(tool_calls) if tool_calls else None,
                          tool_call_id, name)

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """Runs one tool call as the agent, in the thread: ``{content, is_error}``. ``arguments``
        is the model's JSON text or the object parsed from it."""
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError as e:
                return {"content": f"the arguments are not valid JSON: {e}", "is_error": True}
        return self._call("SELECT memory_tool_call(%s, %s, %s, %s) FROM {tenant}", self.agent_id, self.thread_id, name,
                          Jsonb(arguments if arguments is not None else {}))

    def handle(self, tool_calls: Iterable[Any] | None) -> list[dict[str, Any]]:
        """The Chat Completions ``tool`` messages answering a reply's ``tool_calls`` (dicts or
        the OpenAI SDK's objects), in order: one for every call, as the API requires before the
        next request, so a call to a tool not offered here is answered with an error text."""
        out = []
        for c in tool_calls or []:
            fn = _get(c, "function")
            name = _get(fn, "name")
            answer = self._unknown(name) if name not in self.names else self.call(name, _get(fn, "arguments"))
            out.append({"role": "tool", "tool_call_id": _get(c, "id"), "content": answer["content"]})
        return out

    def handle_anthropic(self, content: Iterable[Any] | None) -> list[dict[str, Any]]:
        """The Messages API ``tool_result`` blocks answering the ``tool_use`` blocks of a reply's
        content (dicts or the Anthropic SDK's objects), in order: one for every ``tool_use``, a
        tool not offered here answered with an error text."""
        out = []
        for block in content or []:
            if _get(block, "type") != "tool_use":
                continue
            name = _get(block, "name")
            answer = self._unknown(name) if name not in self.names else self.call(name, _get(block, "input"))
            out.append({"type": "tool_result", "tool_use_id": _get(block, "id"), "content": answer["content"],
                        "is_error": bool(answer.get("is_error"))})
        return out

    def _unknown(self, name: Any) -> dict[str, Any]:
        """The answer to a call of a tool that is not offered: an error the model can act on."""
        shown = str(name)[:100] if name is not None else ""
        return {"content": f"Error: there is no tool named {shown!r}. The tools are: {', '.join(self.names)}.",
                "is_error": True}

    def close(self) -> None:
        self._db.close()


def memory_tools(*, user_id: str, agent_id: str, thread_id: str | None = None, format: str = "openai",
                 tools: Sequence[str] | None = None, dsn: str | None = None,
                 conn: psycopg.Connection | None = None, pool: ConnectionPool | None = None) -> MemoryTools:
    """:class:`MemoryTools` for one agent of one tenant (give one of ``dsn``, ``conn``, ``pool``)."""
    return MemoryTools(user_id=user_id, agent_id=agent_id, thread_id=thread_id, format=format, tools=tools,
                       dsn=dsn, conn=conn, pool=pool)
