"""Who an event speaks for, and how many runs may start: the guard against bot loops.

A message from a bot (any `bot_id`, the `bot_message` subtype) or from no one (no `user`)
never starts or resumes a run unless the bot is named in `allowed_bots` — two bots that
answer each other would otherwise loop, and the offline model costs nothing, so no cost
limit would stop them. `RunLimiter` caps the new runs per thread and per person in a
sliding minute; the one who hits the cap is told once per window, not on every message.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


def is_from_a_bot(event: Mapping[str, Any]) -> bool:
    """True for an event a bot sent, or one with no user at all."""
    user = event.get("user")
    return (
        bool(event.get("bot_id"))
        or event.get("subtype") == "bot_message"
        or not isinstance(user, str)
        or not user
    )


def sender(event: Mapping[str, Any], allowed_bots: Collection[str]) -> str | None:
    """The user id an event speaks for, or None when it must not reach a run: a bot not
    in `allowed_bots`, or no user. An allowed bot speaks as its user id (else bot id)."""
    user = event.get("user")
    if not is_from_a_bot(event):
        return str(user)
    bot_id = event.get("bot_id")
    named = {str(v) for v in (bot_id, user) if isinstance(v, str) and v}
    if named and named & set(allowed_bots):
        return str(user) if isinstance(user, str) and user else str(bot_id)
    return None


Scope = Literal["thread", "user"]


@dataclass(frozen=True)
class Refusal:
    scope: Scope
    limit: int
    tell: bool
    """True for the first refusal of this window: the one that gets a reply."""

    @property
    def text(self) -> str:
        if self.scope == "thread":
            return (
                f"This thread has started {self.limit} questions in the last minute, my "
                "limit; please wait a minute before asking the next one here."
            )
        return (
            f"You have asked me {self.limit} questions in the last minute, my limit; "
            "please wait a minute before the next one."
        )


@dataclass
class RunLimiter:
    """New runs per thread and per person in a sliding window (one process's count)."""

    per_thread: int = 5
    per_user: int = 10
    window: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _starts: dict[tuple[Scope, str], deque[float]] = field(
        default_factory=lambda: defaultdict(deque)
    )
    _told: dict[tuple[Scope, str], float] = field(default_factory=dict)

    max_keys: int = 10_000
    """Past this many threads and people tracked, those idle for a window are forgotten."""

    def admit(self, thread: str, user: str) -> Refusal | None:
        """None (and the start counted) when a run may start; else why not."""
        now = self.clock()
        if len(self._starts) > self.max_keys:
            self._forget_idle(now)
        checks: tuple[tuple[Scope, str, int], ...] = (
            ("thread", thread, self.per_thread),
            ("user", user, self.per_user),
        )
        for scope, key, limit in checks:
            starts = self._starts[(scope, key)]
            while starts and starts[0] <= now - self.window:
                starts.popleft()
            if len(starts) >= limit:
                told_at = self._told.get((scope, key))
                tell = told_at is None or told_at <= now - self.window
                if tell:
                    self._told[(scope, key)] = now
                return Refusal(scope=scope, limit=limit, tell=tell)
        for scope, key, _ in checks:
            self._starts[(scope, key)].append(now)
        return None

    def _forget_idle(self, now: float) -> None:
        idle = [
            k for k, starts in self._starts.items() if not starts or starts[-1] <= now - self.window
        ]
        for key in idle:
            del self._starts[key]
            self._told.pop(key, None)
