"""Whose 👍/👎 may move the shared thresholds, and how a change is remembered.

The thresholds decide for everyone when GRACE answers silently and when it asks a
person first, so no one person may move them alone: the window the adjuster reads
holds at most `ceil(window / quorum)` votes per voter (their newest), and it moves the
thresholds only once it is full and holds votes of at least `quorum` distinct people.
One member voting on fourteen of their own answers fills a third of the window at most
and is one voter: nothing moves. (Approvers are not exempt: a lone approver is still
one person; `quorum = 1` restores the old, single-person behaviour for a solo install.)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent.config import Thresholds

Vote = tuple[float, bool, str]
"""(the answer's confidence, 👍, who voted)."""


@dataclass(frozen=True)
class FeedbackQuorum:
    quorum: int = 3

    def per_voter(self, size: int) -> int:
        """How many of one person's votes the window may hold."""
        return max(1, math.ceil(size / max(1, self.quorum)))

    def fetch(self, size: int) -> int:
        """How many recent counted votes to read to fill a window of `size` fairly."""
        return size * max(1, self.quorum) * 4

    def window(self, votes: Sequence[Vote], size: int) -> list[tuple[float, bool]] | None:
        """The window the adjuster may read (oldest first) from counted votes (oldest
        first), or None when it is not full or holds fewer than `quorum` voters."""
        taken: list[Vote] = []
        per_voter: Counter[str] = Counter()
        cap = self.per_voter(size)
        for vote in reversed(votes):
            if per_voter[vote[2]] >= cap:
                continue
            per_voter[vote[2]] += 1
            taken.append(vote)
            if len(taken) == size:
                break
        if len(taken) < size or len(per_voter) < self.quorum:
            return None
        return [(confidence, ok) for confidence, ok, _ in reversed(taken)]


@dataclass(frozen=True)
class ThresholdChange:
    """One change of the shared thresholds: who cast the vote that moved them, when,
    why, and from what to what."""

    changed_by: str
    changed_at: datetime
    reason: str
    before: Thresholds
    after: Thresholds
    run_id: str | None = None
