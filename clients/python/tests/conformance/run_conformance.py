"""langgraph-checkpoint-conformance (PyPI), as published, against MemoryExtSaver and
AsyncMemoryExtSaver: every capability it tests (base and extended). Exits non-zero unless every
capability is detected and passes.
    python run_conformance.py DSN
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import psycopg
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from memory_ext import AsyncMemoryExtSaver, MemoryExtSaver

DSN = sys.argv[1]


@checkpointer_test(name="AsyncMemoryExtSaver")
async def async_saver():
    # A tenant of its own per capability suite: what another suite left is not seen.
    async with AsyncMemoryExtSaver.from_conn_string(DSN, user_id=f"conformance-{uuid.uuid4()}") as saver:
        yield saver


@checkpointer_test(name="AsyncMemoryExtSaver (pool)")
async def async_pool_saver():
    async with AsyncMemoryExtSaver.from_conn_string(DSN, user_id=f"conformance-{uuid.uuid4()}",
                                                    pool_config={"min_size": 1, "max_size": 4,
                                                                 "kwargs": {"autocommit": True}}) as saver:
        yield saver


@checkpointer_test(name="MemoryExtSaver")
async def sync_saver():
    with MemoryExtSaver.from_conn_string(DSN, user_id=f"conformance-{uuid.uuid4()}") as saver:
        yield saver


async def main() -> int:
    failed = 0
    for reg in (async_saver, async_pool_saver, sync_saver):
        report = await validate(reg, progress=ProgressCallbacks.default())
        report.print_report()
        missing = [c for c, r in report.results.items() if not r.detected]
        if not report.passed_all() or missing:
            print(f"{reg.name}: not every capability passed (undetected: {missing})")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
