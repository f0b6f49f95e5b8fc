"""LangGraph's checkpointer over memory_ext's checkpoints (docs/api.md "Checkpoints").

The extension keeps each thread's checkpoint history (``checkpoint_put``, ``checkpoint_list``,
...); this module only turns LangGraph's objects into those functions' arguments and back. As
LangGraph's ``PostgresSaver`` does, channel values that are JSON scalars stay in the checkpoint
document and the others are serialized by the saver's ``serde`` into blobs, stored once per
channel version.

Which tenant a call acts for, the same way for every method: a saver made with ``user_id`` acts
for that tenant only (a config whose ``configurable["user_id"]`` names another is refused); a
saver made without one serves many tenants, and each call names its own:
``configurable["user_id"]`` in the config, or ``user_id=`` for the methods that take no config
(``delete_thread``, ``delete_for_runs``, ``copy_thread``, ``prune``). A call that names no
tenant on a saver that has none is refused (``ValueError``): a deletion that silently deletes
nothing, in some other tenant, is a privacy defect. Every call runs in a transaction of its own
that names its tenant (``set_config(..., true)``), so a pooled connection carries nothing to
its next user.
"""

from __future__ import annotations

import asyncio
import random
import threading
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any, AsyncIterator, Iterator, Sequence

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from memory_ext._db import VERSION_SQL, atenant_rows, check_version, tenant_rows

# Each a statement that names its tenant (memory_ext._db.tenant_rows: the {tenant} FROM item).
_PUT = "SELECT checkpoint_put(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::bytea[], tenant.t) FROM {tenant}"
_PUT_WRITES = ("SELECT checkpoint_put_writes(%s, %s, %s, %s, %s, %s::int[], %s, %s, %s::bytea[], %s, tenant.t) "
               "FROM {tenant}")
_COLUMNS = ("c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata, "
            "c.channel_values, c.pending_writes")
_GET = f"SELECT {_COLUMNS} FROM {{tenant}}, LATERAL checkpoint_get(%s, %s, %s, tenant.t) c"
_LIST = f"SELECT {_COLUMNS} FROM {{tenant}}, LATERAL checkpoint_list(%s, %s, %s, %s, %s, %s, tenant.t) c"
_DELETE_THREAD = "SELECT checkpoint_delete_thread(%s, tenant.t) FROM {tenant}"
_DELETE_RUNS = "SELECT checkpoint_delete_runs(%s, tenant.t) FROM {tenant}"
_COPY = "SELECT checkpoint_copy_thread(%s, %s, tenant.t) FROM {tenant}"
_PRUNE = "SELECT checkpoint_prune(%s, %s, tenant.t) FROM {tenant}"


def _scalar(v: Any) -> bool:
    """Whether a channel value stays in the checkpoint document (JSON scalars that jsonb can
    hold: a string with a NUL character goes to a blob instead)."""
    if isinstance(v, str):
        return "\x00" not in v
    return v is None or isinstance(v, (int, float, bool))


class _Base(BaseCheckpointSaver[str]):
    def __init__(self, conn: Any, *, user_id: str | None = None,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        if user_id is not None and not str(user_id):
            raise ValueError("user_id must not be empty: the tenant this saver acts for, or None for many")
        self.conn = conn
        self.user_id = str(user_id) if user_id is not None else None

    def _tenant(self, config: RunnableConfig | None, user_id: str | None = None) -> str:
        """The tenant of a call: named by its config (or ``user_id=``), else the saver's."""
        named = ((config or {}).get("configurable") or {}).get("user_id") or user_id
        named = str(named) if named else None
        if self.user_id is not None:
            if named is not None and named != self.user_id:
                raise ValueError(
                    f"this saver acts for user_id {self.user_id!r}, and the call names {named!r}: "
                    "make a saver without user_id to serve many tenants")
            return self.user_id
        if named is None:
            raise ValueError(
                "this saver has no user_id, and the call names no tenant: put user_id in "
                "config[\"configurable\"] (or pass user_id= to delete_thread, delete_for_runs, "
                "copy_thread, prune)")
        return named

    # -- LangGraph's objects to the functions' arguments -----------------------------------

    def _put_args(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                  new_versions: ChannelVersions) -> tuple[tuple[Any, ...], RunnableConfig]:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = conf.get("checkpoint_ns", "") or ""
        parent = conf.get("checkpoint_id")
        doc = dict(checkpoint)
        values = dict(doc.get("channel_values") or {})
        blobs = {k: values.pop(k) for k in list(values) if not _scalar(values[k])}
        doc["channel_values"] = values
        channels, versions, types, data = [], [], [], []
        for k, ver in new_versions.items():
            if k not in blobs:
                continue
            t, b = self.serde.dumps_typed(blobs[k])
            channels.append(k)
            versions.append(str(ver))
            types.append(t)
            data.append(b)
        md = get_serializable_checkpoint_metadata(config, metadata)
        args = (thread_id, ns, checkpoint["id"], parent, Jsonb(doc), Jsonb(md), channels, versions, types, data)
        next_config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}
        }
        if "user_id" in conf:
            next_config["configurable"]["user_id"] = conf["user_id"]
        return args, next_config

    def _writes_args(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                     task_path: str) -> tuple[Any, ...]:
        conf = config["configurable"]
        idx, channels, types, data = [], [], [], []
        for i, (channel, value) in enumerate(writes):
            t, b = self.serde.dumps_typed(value)
            idx.append(WRITES_IDX_MAP.get(channel, i))
            channels.append(channel)
            types.append(t)
            data.append(b)
        # LangGraph's special writes (errors, interrupts, resumes) replace an earlier one.
        replace = all(w[0] in WRITES_IDX_MAP for w in writes)
        return (str(conf["thread_id"]), conf.get("checkpoint_ns", "") or "", conf["checkpoint_id"], task_id,
                task_path, idx, channels, types, data, replace)

    def _list_args(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
                   before: RunnableConfig | None, limit: int | None) -> tuple[Any, ...]:
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        return (str(thread_id) if thread_id is not None else None, conf.get("checkpoint_ns"),
                get_checkpoint_id(config) if config else None, Jsonb(filter) if filter else None,
                get_checkpoint_id(before) if before else None, int(limit) if limit is not None else None)

    @staticmethod
    def _get_args(config: RunnableConfig) -> tuple[Any, ...]:
        conf = config["configurable"]
        return (str(conf["thread_id"]), conf.get("checkpoint_ns", "") or "", get_checkpoint_id(config))

    # -- rows to LangGraph's objects ---------------------------------------------------------

    def _tuple(self, row: Sequence[Any], user_id: str | None) -> CheckpointTuple:
        thread_id, ns, cid, parent, doc, md, blobs, writes = row
        values = dict(doc.get("channel_values") or {})
        for channel, t, b in blobs or []:
            t = bytes(t).decode()
            if t != "empty":
                values[bytes(channel).decode()] = self.serde.loads_typed((t, bytes(b) if b is not None else b""))
        extra = {"user_id": user_id} if user_id else {}
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid, **extra}},
            checkpoint={**doc, "channel_values": values},
            metadata=md,
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent, **extra}}
                if parent else None
            ),
            pending_writes=[
                (bytes(task).decode(), bytes(ch).decode(), self.serde.loads_typed((bytes(t).decode(), bytes(b))))
                for task, ch, t, b in writes or []
            ],
        )

    @staticmethod
    def _user_in(config: RunnableConfig | None) -> str | None:
        uid = ((config or {}).get("configurable") or {}).get("user_id")
        return str(uid) if uid else None

    def get_next_version(self, current: str | None, channel: None) -> str:
        # PostgresSaver's versions: a zero-padded counter (so they sort), then a random part.
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


class MemoryExtSaver(_Base):
    """A LangGraph checkpointer whose checkpoints live in memory_ext.

    ``conn`` is a psycopg ``Connection`` (autocommit) or ``ConnectionPool``; or use
    :meth:`from_conn_string` as you would ``PostgresSaver.from_conn_string``. The async
    methods run the sync ones in a thread; in async code use :class:`AsyncMemoryExtSaver`.
    """

    def __init__(self, conn: Any, *, user_id: str | None = None,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(conn, user_id=user_id, serde=serde)
        # One connection serves one transaction at a time (a pool hands each its own).
        self.lock = threading.Lock() if not isinstance(conn, ConnectionPool) else None

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, *, user_id: str | None = None,
                         pool_config: dict[str, Any] | None = None) -> Iterator["MemoryExtSaver"]:
        if pool_config is not None:
            with ConnectionPool(conn_string, open=True, **pool_config) as pool:
                saver = cls(pool, user_id=user_id)
                saver.setup()
                yield saver
        else:
            with psycopg.connect(conn_string, autocommit=True) as conn:
                saver = cls(conn, user_id=user_id)
                saver.setup()
                yield saver

    def setup(self) -> None:
        """Checks that the extension is there and recent enough (it owns the tables: nothing
        to migrate here, unlike ``PostgresSaver.setup``)."""
        with self._locked():
            if isinstance(self.conn, ConnectionPool):
                with self.conn.connection() as c:
                    row = c.execute(VERSION_SQL).fetchone()
            else:
                row = self.conn.execute(VERSION_SQL).fetchone()
        check_version(row[0] if row else None)

    def _locked(self) -> Any:
        return self.lock if self.lock is not None else nullcontext()

    def _rows(self, user_id: str, sql: str, args: tuple[Any, ...]) -> list[Any]:
        with self._locked():
            return tenant_rows(self.conn, user_id, sql, args)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows = self._rows(self._tenant(config), _GET, self._get_args(config))
        return self._tuple(rows[0], self._user_in(config)) if rows else None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        rows = self._rows(self._tenant(config), _LIST, self._list_args(config, filter, before, limit))
        user = self._user_in(config)
        for row in rows:
            yield self._tuple(row, user)

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        args, next_config = self._put_args(config, checkpoint, metadata, new_versions)
        self._rows(self._tenant(config), _PUT, args)
        return next_config

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        if writes:
            self._rows(self._tenant(config), _PUT_WRITES, self._writes_args(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str, *, user_id: str | None = None) -> None:
        self._rows(self._tenant(None, user_id), _DELETE_THREAD, (str(thread_id),))

    def delete_for_runs(self, run_ids: Sequence[str], *, user_id: str | None = None) -> None:
        self._rows(self._tenant(None, user_id), _DELETE_RUNS, ([str(r) for r in run_ids],))

    def copy_thread(self, source_thread_id: str, target_thread_id: str, *, user_id: str | None = None) -> None:
        self._rows(self._tenant(None, user_id), _COPY, (str(source_thread_id), str(target_thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest",
              user_id: str | None = None) -> None:
        self._rows(self._tenant(None, user_id), _PRUNE, ([str(t) for t in thread_ids], strategy))

    # The async interface, for graphs run with ainvoke on a sync saver.
    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args, **kwargs))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._run(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        rows = await self._run(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for t in rows:
            yield t

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await self._run(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await self._run(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str, *, user_id: str | None = None) -> None:
        await self._run(self.delete_thread, thread_id, user_id=user_id)

    async def adelete_for_runs(self, run_ids: Sequence[str], *, user_id: str | None = None) -> None:
        await self._run(self.delete_for_runs, run_ids, user_id=user_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str, *,
                           user_id: str | None = None) -> None:
        await self._run(self.copy_thread, source_thread_id, target_thread_id, user_id=user_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest",
                     user_id: str | None = None) -> None:
        await self._run(self.prune, thread_ids, strategy=strategy, user_id=user_id)


class AsyncMemoryExtSaver(_Base):
    """:class:`MemoryExtSaver` on psycopg's ``AsyncConnection`` / ``AsyncConnectionPool``, as
    ``AsyncPostgresSaver``. Its sync methods work from other threads (not from the loop)."""

    def __init__(self, conn: Any, *, user_id: str | None = None,
                 serde: SerializerProtocol | None = None) -> None:
        super().__init__(conn, user_id=user_id, serde=serde)
        self.lock = asyncio.Lock() if not isinstance(conn, AsyncConnectionPool) else None
        self.loop = asyncio.get_running_loop()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, *, user_id: str | None = None,
                               pool_config: dict[str, Any] | None = None
                               ) -> AsyncIterator["AsyncMemoryExtSaver"]:
        if pool_config is not None:
            async with AsyncConnectionPool(conn_string, open=False, **pool_config) as pool:
                saver = cls(pool, user_id=user_id)
                await saver.setup()
                yield saver
        else:
            async with await psycopg.AsyncConnection.connect(conn_string, autocommit=True) as conn:
                saver = cls(conn, user_id=user_id)
                await saver.setup()
                yield saver

    async def setup(self) -> None:
        async with self._locked():
            if isinstance(self.conn, AsyncConnectionPool):
                async with self.conn.connection() as c:
                    row = await (await c.execute(VERSION_SQL)).fetchone()
            else:
                row = await (await self.conn.execute(VERSION_SQL)).fetchone()
        check_version(row[0] if row else None)

    def _locked(self) -> Any:
        return self.lock if self.lock is not None else nullcontext()

    async def _rows(self, user_id: str, sql: str, args: tuple[Any, ...]) -> list[Any]:
        async with self._locked():
            return await atenant_rows(self.conn, user_id, sql, args)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows = await self._rows(self._tenant(config), _GET, self._get_args(config))
        return self._tuple(rows[0], self._user_in(config)) if rows else None

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        rows = await self._rows(self._tenant(config), _LIST, self._list_args(config, filter, before, limit))
        user = self._user_in(config)
        for row in rows:
            yield self._tuple(row, user)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        args, next_config = self._put_args(config, checkpoint, metadata, new_versions)
        await self._rows(self._tenant(config), _PUT, args)
        return next_config

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        if writes:
            await self._rows(self._tenant(config), _PUT_WRITES, self._writes_args(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str, *, user_id: str | None = None) -> None:
        await self._rows(self._tenant(None, user_id), _DELETE_THREAD, (str(thread_id),))

    async def adelete_for_runs(self, run_ids: Sequence[str], *, user_id: str | None = None) -> None:
        await self._rows(self._tenant(None, user_id), _DELETE_RUNS, ([str(r) for r in run_ids],))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str, *, user_id: str | None = None) -> None:
        await self._rows(self._tenant(None, user_id), _COPY, (str(source_thread_id), str(target_thread_id)))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest",
                     user_id: str | None = None) -> None:
        await self._rows(self._tenant(None, user_id), _PRUNE, ([str(t) for t in thread_ids], strategy))

    # The sync interface, from threads other than the loop's (as AsyncPostgresSaver's).
    def _sync(self, coro: Any) -> Any:
        try:
            if asyncio.get_running_loop() is self.loop:
                raise asyncio.InvalidStateError(
                    "Synchronous calls to AsyncMemoryExtSaver are only allowed from a different thread; "
                    "in the loop's thread use the async methods (await saver.aget_tuple(...))")
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self.aget_tuple(config))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]
        yield from self._sync(collect())

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._sync(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        return self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str, *, user_id: str | None = None) -> None:
        return self._sync(self.adelete_thread(thread_id, user_id=user_id))

    def delete_for_runs(self, run_ids: Sequence[str], *, user_id: str | None = None) -> None:
        return self._sync(self.adelete_for_runs(run_ids, user_id=user_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str, *,
                    user_id: str | None = None) -> None:
        return self._sync(self.acopy_thread(source_thread_id, target_thread_id, user_id=user_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest",
              user_id: str | None = None) -> None:
        return self._sync(self.aprune(thread_ids, strategy=strategy, user_id=user_id))
