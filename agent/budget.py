"""The request budget of the step being executed.

A step may make several model calls (an answer, then its evaluation), and each call
retries on its own. Without a shared budget, a service that keeps failing would cost a
step one full set of retries per call. The executor opens a budget per step; the call
layer spends one unit per request and retries only while units are left. A call's first
request is always made, so a step that needs two calls makes them both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

STEP_REQUESTS = 4
"""At most this many requests per step once the service starts failing."""


@dataclass
class RequestBudget:
    left: int

    def spend(self) -> None:
        self.left -= 1

    @property
    def may_retry(self) -> bool:
        return self.left > 0


_current: ContextVar[RequestBudget | None] = ContextVar("grace_request_budget", default=None)


@contextmanager
def step_budget(requests: int = STEP_REQUESTS) -> Iterator[RequestBudget]:
    """Open the budget for the step running in this task (and the tasks it starts)."""
    budget = RequestBudget(left=requests)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def current_budget() -> RequestBudget | None:
    """The budget of the step this code runs for; None outside a step (no limit)."""
    return _current.get()
