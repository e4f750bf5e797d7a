"""Background work after the ack: every agent run is a tracked task, so shutdown (and
tests) can wait for in-flight work instead of dropping it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class TaskRunner:
    """At most `limit` pieces of work run at once: a burst of questions queues up instead
    of starving the event loop that must ack Slack's next requests within 3 s."""

    def __init__(self, limit: int = 4) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._slots = asyncio.Semaphore(limit)

    def spawn(self, work: Coroutine[Any, Any, Any], *, name: str = "grace") -> asyncio.Task[Any]:
        task = asyncio.create_task(self._guard(work, name), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, work: Coroutine[Any, Any, Any], name: str) -> Any:
        try:
            async with self._slots:
                return await work
        except Exception:
            log.exception("background task failed", extra={"task": name})
            return None

    async def idle(self) -> None:
        """Wait until no task is running, including tasks spawned meanwhile."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def __len__(self) -> int:
        return len(self._tasks)
