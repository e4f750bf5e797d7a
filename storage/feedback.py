"""Feedback and the confidence thresholds it moves: a 👍/👎 vote and the threshold
change it causes, in one transaction; the recent window of votes; the stored thresholds.

Votes are serialised where they touch the thresholds — SQLite's `BEGIN IMMEDIATE`
(storage/db.py), a transaction-scoped advisory lock on PostgreSQL — so each vote reads
the thresholds the previous one stored and what a voter is told is what was stored:
no lost updates under a burst of clicks, in one process or several.

Who counts is decided when the window is read: only votes by the run's asker or by an
approver (unless everyone counts). Other votes are kept, never counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, or_, select, text, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from agent.config import Thresholds
from agent.schemas import utcnow
from storage.db import retried_write
from storage.sql import SqlStore, rowcount
from storage.tables import FeedbackRow, RunRow, ThresholdsRow
from storage.threshold_audit import change_row

DEFAULT_THRESHOLDS_NAME = "default"
TEAM_PREFIX = "team:"
"""Thresholds learned from one Slack workspace's votes only (OAuth mode): `team:<id>`."""


def team_thresholds_name(team_id: str) -> str:
    return f"{TEAM_PREFIX}{team_id}"


Adjust = Callable[[Thresholds, list[tuple[float, bool, str]]], tuple[Thresholds, str] | None]
"""(current thresholds, counted votes oldest first as (confidence, 👍, voter)) → (new
thresholds, why) or None."""

_PG_FEEDBACK_LOCK_KEY = 0x6772616366  # serialises votes across PostgreSQL replicas


@dataclass(frozen=True)
class Voters:
    """Whose votes move the thresholds: the run's asker and `approvers`, or everyone."""

    approvers: tuple[str, ...] = ()
    everyone: bool = False

    def counts(self, user_id: str, asker: str | None) -> bool:
        return self.everyone or user_id == asker or user_id in self.approvers

    def clause(self) -> ColumnElement[bool]:
        if self.everyone:
            return true()
        return or_(FeedbackRow.user_id == RunRow.asker, FeedbackRow.user_id.in_(self.approvers))


@dataclass(frozen=True)
class VoteOutcome:
    first: bool
    """The user's first vote on this run (False: it replaced their earlier one)."""
    counted: bool
    thresholds: Thresholds
    """As stored once this vote committed."""
    change: str | None
    """Why the thresholds moved, when this vote moved them."""


def _thresholds(row: ThresholdsRow) -> Thresholds:
    return Thresholds(silent=row.silent, notify=row.notify, confirm=row.confirm)


def _threshold_values(thresholds: Thresholds) -> dict[str, object]:
    return {
        "silent": thresholds.silent,
        "notify": thresholds.notify,
        "confirm": thresholds.confirm,
        "updated_at": utcnow(),
    }


class SqlFeedback(SqlStore):
    """Votes, the window of recent ones, and the thresholds they move."""

    async def vote(
        self,
        *,
        run_id: str,
        user_id: str,
        confidence: float,
        was_correct: bool,
        voters: Voters,
        window: int,
        default: Thresholds,
        adjust: Adjust,
        fetch: int | None = None,
        team_id: str | None = None,
    ) -> VoteOutcome:
        """Store the vote (one per person per run: a new vote replaces the old one) and,
        when it counts, let `adjust` move the thresholds from the newest `fetch` (default
        `window`) counted votes; a change is recorded with it (storage/threshold_audit.py).
        With `team_id`, that team's own thresholds, moved by votes on its runs only."""
        name = team_thresholds_name(team_id) if team_id is not None else DEFAULT_THRESHOLDS_NAME
        async with self._sessions.begin() as session:
            if self._engine.dialect.name == "postgresql":
                await session.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_FEEDBACK_LOCK_KEY}
                )
            first = await self._upsert(session, run_id, user_id, confidence, was_correct)
            stored = await session.get(ThresholdsRow, name)
            current = _thresholds(stored) if stored is not None else default
            asker = await session.scalar(select(RunRow.asker).where(RunRow.run_id == run_id))
            if not voters.counts(user_id, asker):
                return VoteOutcome(first=first, counted=False, thresholds=current, change=None)
            rows = await session.execute(
                select(FeedbackRow.confidence, FeedbackRow.was_correct, FeedbackRow.user_id)
                .join(RunRow, RunRow.run_id == FeedbackRow.run_id)
                .where(voters.clause())
                .where(RunRow.team_id == team_id if team_id is not None else true())
                .order_by(FeedbackRow.created_at.desc(), FeedbackRow.id.desc())
                .limit(fetch or window)
            )
            history = [(float(c), bool(ok), str(who)) for c, ok, who in rows][::-1]
            moved = adjust(current, history)
            if moved is None or moved[0] == current:
                return VoteOutcome(first=first, counted=True, thresholds=current, change=None)
            new, why = moved
            await session.execute(self._upsert_thresholds(new, name))
            session.add(
                change_row(
                    name,
                    changed_by=user_id,
                    run_id=run_id,
                    reason=why,
                    old=current,
                    new=new,
                )
            )
            return VoteOutcome(first=first, counted=True, thresholds=new, change=why)

    async def recent_feedback(
        self, limit: int = 10, *, team_id: str | None = None
    ) -> list[tuple[float, bool]]:
        """The last `limit` (confidence, was_correct) pairs, oldest first; with `team_id`,
        votes on that Slack workspace's runs only."""
        query = select(FeedbackRow.confidence, FeedbackRow.was_correct)
        if team_id is not None:
            query = query.where(
                FeedbackRow.run_id.in_(select(RunRow.run_id).where(RunRow.team_id == team_id))
            )
        async with self._reads.begin() as session:
            rows = await session.execute(
                query.order_by(FeedbackRow.created_at.desc(), FeedbackRow.id.desc()).limit(limit)
            )
            return [(float(c), bool(ok)) for c, ok in rows][::-1]

    async def load_thresholds(self) -> Thresholds | None:
        """The stored thresholds; None until a vote (or `save_thresholds`) stored some."""
        async with self._reads.begin() as session:
            row = await session.get(ThresholdsRow, DEFAULT_THRESHOLDS_NAME)
            return _thresholds(row) if row is not None else None

    @retried_write
    async def save_thresholds(self, thresholds: Thresholds) -> None:
        async with self._sessions.begin() as session:
            await session.execute(self._upsert_thresholds(thresholds))

    async def load_team_thresholds(self) -> dict[str, Thresholds]:
        """Every team's own thresholds, by team id (OAuth mode)."""
        query = select(ThresholdsRow).where(ThresholdsRow.name.startswith(TEAM_PREFIX))
        async with self._reads.begin() as session:
            rows = (await session.scalars(query)).all()
        return {row.name.removeprefix(TEAM_PREFIX): _thresholds(row) for row in rows}

    def _upsert_thresholds(
        self, thresholds: Thresholds, name: str = DEFAULT_THRESHOLDS_NAME
    ) -> Any:
        values = _threshold_values(thresholds)
        stmt = self._insert(ThresholdsRow).values(name=name, **values)
        return stmt.on_conflict_do_update(index_elements=[ThresholdsRow.name], set_=values)

    @staticmethod
    async def _upsert(
        session: AsyncSession, run_id: str, user_id: str, confidence: float, was_correct: bool
    ) -> bool:
        now = utcnow()
        changed = await session.execute(
            update(FeedbackRow)
            .where(FeedbackRow.run_id == run_id, FeedbackRow.user_id == user_id)
            .values(confidence=confidence, was_correct=was_correct, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        if rowcount(changed) == 1:
            return False
        session.add(
            FeedbackRow(
                run_id=run_id,
                user_id=user_id,
                confidence=confidence,
                was_correct=was_correct,
                created_at=now,
                updated_at=now,
            )
        )
        await session.flush()
        return True
