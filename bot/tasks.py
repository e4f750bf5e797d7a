"""Background work after the ack: every agent run is a tracked task, so shutdown (and
tests) can wait for in-flight work instead of dropping it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from bot.ack_first import AckFirst

log = logging.getLogger(__name__)


class TaskRunner:
    """Background work in two lanes, each with a few slots, so a burst of Slack requests
    queues up instead of starving the event loop that must ack the next ones within 3 s:

    - the agent lane (`limit`): runs, resumes, clicks — anything that may take a while;
    - the intake lane (`intake_limit`): taking a new question in (dedupe, store the run,
      queue it on the agent lane). It never waits behind busy agents, so a question is
      stored within moments of its ack even when every agent slot is taken.

    Both lanes step their work through `acks` (see `bot/ack_first.py`): while a Slack
    request is being acknowledged, background work waits between its steps.
    """

    def __init__(self, limit: int = 4, *, intake_limit: int = 2) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._agent_slots = asyncio.Semaphore(limit)
        self._intake_slots = asyncio.Semaphore(intake_limit)
        self._closing = False
        self.acks = AckFirst()

    def spawn(
        self, work: Coroutine[Any, Any, Any], *, name: str = "grace", intake: bool = False
    ) -> asyncio.Task[Any]:
        """Run `work` in the background, in the intake lane when `intake`."""
        slots = self._intake_slots if intake else self._agent_slots
        task = asyncio.create_task(self._guard(work, name, slots), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(
        self, work: Coroutine[Any, Any, Any], name: str, slots: asyncio.Semaphore
    ) -> Any:
        try:
            async with slots:
                if self._closing and slots is self._agent_slots:
                    return None  # shutting down: never started (a run stays stored)
                return await self.acks.run(work)
        except Exception:
            log.exception("background task failed", extra={"task": name})
            return None
        finally:
            work.close()  # no-op once it ran; silences "never awaited" when it did not

    async def shutdown(self, grace: float) -> int:
        """Start no more agent work; give what is running `grace` seconds to finish, then
        cancel it. Returns how many tasks were cancelled."""
        self._closing = True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self.idle()
        left = list(self._tasks)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        return len(left)

    async def idle(self) -> None:
        """Wait until no task is running, including tasks spawned meanwhile."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def __len__(self) -> int:
        return len(self._tasks)
