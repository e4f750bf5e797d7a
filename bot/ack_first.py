"""Acks before background work: agent runs share the event loop that must ack Slack.

A run's steps hold the loop for milliseconds at a time (ranking passages, building
blocks); with a few runs working, a burst of requests waits behind step after step,
and the acks of the next burst slow down several-fold. So background work is stepped
by `AckFirst.run`: before each step it resumes, it waits while a Slack request is being
acknowledged (at most `max_wait` seconds a step, so a steady flood of requests slows the
agents down but never stops them). The requests themselves (and the inbox writer they
wait for) are never held back.

A step is never held back while its task holds a database connection: a paused holder
of SQLite's write lock (or of a pooled connection) would make the inbox write the ack
waits for wait in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")

MAX_WAIT_SECONDS = 1.0
"""The longest a background step waits for acks (Slack's ack deadline is 3 s)."""


class AckFirst:
    def __init__(self, max_wait: float = MAX_WAIT_SECONDS) -> None:
        self.max_wait = max_wait
        self._acking = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._holders: dict[Any, asyncio.Task[Any]] = {}
        """Pooled connection (its pool record) → the task that checked it out."""

    @property
    def acking(self) -> int:
        """Requests being acknowledged now."""
        return self._acking

    @contextlib.contextmanager
    def ack(self) -> Iterator[None]:
        """Around the handling of one Slack request, until its response is ready."""
        self._acking += 1
        try:
            yield
        finally:
            self._acking -= 1
            if not self._acking:
                waiters, self._waiters = self._waiters, []
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)

    def watch(self, engine: AsyncEngine) -> None:
        """Know which tasks hold a connection of `engine` (those are never held back)."""
        pool = engine.sync_engine.pool

        # Keyed by the pooled connection: it may be returned by another task (SQLAlchemy
        # closes an async session in a shielded task of its own).
        @event.listens_for(pool, "checkout")
        def _out(_dbapi: Any, record: Any, _proxy: Any) -> None:
            task = _current_task()
            if task is not None:
                self._holders[record] = task

        @event.listens_for(pool, "checkin")
        def _in(_dbapi: Any, record: Any) -> None:
            self._holders.pop(record, None)

    async def _wait_for_acks(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(self.max_wait):
                await waiter
        except TimeoutError:
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def _hold_back(self) -> bool:
        if not self._acking:
            return False
        task = asyncio.current_task()
        return all(holder is not task for holder in self._holders.values())

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Drive `work` step by step (as its task would), yielding to acks between steps.

        Cancellation reaches `work` as it would without this: through the future it
        waits on, or thrown in when the task was cancelled between steps."""
        error: BaseException | None = None
        while True:
            if error is None and self._hold_back():
                try:
                    await self._wait_for_acks()
                except asyncio.CancelledError as exc:
                    error = exc
            try:
                yielded = work.send(None) if error is None else work.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            error = None
            try:
                if yielded is None:
                    await asyncio.sleep(0)  # a bare `yield`: give the loop one turn
                else:
                    # What a task does with a future its coroutine yields: take over the
                    # wait (the flag says "yielded by await"; awaiting it again needs it
                    # cleared), then resume the coroutine, which reads the outcome itself.
                    yielded._asyncio_future_blocking = False
                    await yielded
            except asyncio.CancelledError as exc:
                if yielded is None or not yielded.cancelled():
                    error = exc  # the task was cancelled, not the future: tell `work`
            except BaseException:  # `work` reads it from the future itself
                pass


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop: a connection returned from another thread
        return None
