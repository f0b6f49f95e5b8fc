"""memory_ext for Python agent frameworks: the extension's SQL functions behind the frameworks'
own memory interfaces. Every call names its tenant inside its own transaction
(``set_config('memory_ext.user_id', ..., true)``), so pooled connections carry nothing over.

- :class:`MemoryExtStore` / :class:`AsyncMemoryExtStore`: LangGraph ``BaseStore`` over the
  extension's store (``store_*``; docs/api.md "Store").
"""

from memory_ext._db import REQUIRED_VERSION, VersionError

__all__ = ["REQUIRED_VERSION", "VersionError", "MemoryExtStore", "AsyncMemoryExtStore", "SERVER_EMBEDDINGS"]
__version__ = "0.12.0"


def __getattr__(name):
    # LangGraph is an optional dependency: imported when its classes are asked for.
    if name in ("MemoryExtStore", "AsyncMemoryExtStore", "SERVER_EMBEDDINGS"):
        from memory_ext import store

        return getattr(store, name)
    raise AttributeError(name)
