"""memory_ext for Python agent frameworks: the extension's SQL functions behind the frameworks'
own memory interfaces. Every call names its tenant inside its own transaction
(``set_config('memory_ext.user_id', ..., true)``), so pooled connections carry nothing over.

- :class:`MemoryExtStore` / :class:`AsyncMemoryExtStore`: LangGraph ``BaseStore`` over the
  extension's store (``store_*``; docs/api.md "Store").
- :class:`MemoryExtSaver` / :class:`AsyncMemoryExtSaver`: LangGraph checkpointers over the
  extension's checkpoints (``checkpoint_*``; docs/api.md "Checkpoints").
- :class:`MemoryExtSession`: the OpenAI Agents SDK's ``Session`` over ``session_*``.
- :class:`MemoryExtChatMessageHistory`: LangChain's ``BaseChatMessageHistory`` over a thread of
  recall memory.
- :func:`memory_tools`: the agent tools (``memory_tools`` / ``memory_tool_call``) as tool
  definitions and a dispatcher, for code that calls a model SDK directly.

Each framework is an optional dependency, imported when its class is asked for.
"""

from memory_ext._db import REQUIRED_VERSION, VersionError

try:  # the installed distribution's version (pyproject.toml, written by scripts/version.sh)
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("memory-ext")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

_LAZY = {
    "MemoryExtStore": "store",
    "AsyncMemoryExtStore": "store",
    "SERVER_EMBEDDINGS": "store",
    "MemoryExtSaver": "checkpoint",
    "AsyncMemoryExtSaver": "checkpoint",
    "MemoryExtSession": "session",
    "MemoryExtChatMessageHistory": "history",
    "memory_tools": "tools",
    "MemoryTools": "tools",
}

__all__ = ["REQUIRED_VERSION", "VersionError", *_LAZY]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"memory_ext.{module}"), name)
