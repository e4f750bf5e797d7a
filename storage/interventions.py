"""Intervention claims (SPEC §5): answering or expiring a question a run waits on.

Each claim is one conditional UPDATE on the `interventions` table — the authority on an
intervention's status — so exactly one of any number of concurrent callers, in this
process or another, wins; the others learn who did. The run's JSON may still say
"pending" after a claim: storage/run_rows.py overlays the table's status on load.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from agent.ports import ClaimResult
from agent.schemas import (
    InterventionAnswer,
    InterventionRequest,
    InterventionStatus,
    RunStatus,
    utcnow,
)
from storage.db import retried_write
from storage.run_rows import PENDING, load_state, request_from_row
from storage.sql import SqlStore, rowcount
from storage.tables import InterventionRow, RunRow


def claim_refusal(row: InterventionRow | None, run_id: str) -> ClaimResult:
    if row is None or row.run_id != run_id:
        return ClaimResult(claimed=False, reason="unknown intervention")
    if row.status == InterventionStatus.ANSWERED.value:
        who = row.answered_by or "someone"
        return ClaimResult(
            claimed=False, answered_by=row.answered_by, reason=f"already answered by {who}"
        )
    return ClaimResult(claimed=False, answered_by=row.answered_by, reason=row.status)


async def _close(
    session: AsyncSession,
    intervention_id: str,
    conditions: list[ColumnElement[bool]],
    **values: object,
) -> bool:
    """The claim itself: one conditional UPDATE of a still-pending intervention; True for
    the one caller whose statement changed it."""
    result = await session.execute(
        update(InterventionRow)
        .where(
            InterventionRow.intervention_id == intervention_id,
            InterventionRow.status == PENDING,
            *conditions,
        )
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return rowcount(result) == 1


class SqlInterventions(SqlStore):
    """The `claim_intervention` part of `agent.ports.RunStore`, expiry for the sweeper,
    and the questions the Slack layer looks up."""

    @retried_write
    async def claim_intervention(
        self, run_id: str, intervention_id: str, answer: InterventionAnswer
    ) -> ClaimResult:
        async with self._sessions.begin() as session:
            claimed = await _close(
                session,
                intervention_id,
                [InterventionRow.run_id == run_id],
                status=InterventionStatus.ANSWERED.value,
                answered_by=answer.user,
                answer_json=answer.model_dump_json(),
                answered_at=utcnow(),
            )
            if claimed:
                state = await load_state(session, run_id)
                return ClaimResult(
                    claimed=True, state=state, answered_by=answer.user, reason="claimed"
                )
            row = await session.get(InterventionRow, intervention_id)
            return claim_refusal(row, run_id)

    @retried_write
    async def claim_expiry(self, *, intervention_id: str, now: datetime) -> bool:
        """Expire a still-pending intervention whose time is up; True for the one winner.

        Answers are accepted until this succeeds, so a thread hears exactly one outcome.
        """
        async with self._sessions.begin() as session:
            return await _close(
                session,
                intervention_id,
                [InterventionRow.expires_at.is_not(None), InterventionRow.expires_at <= now],
                status=InterventionStatus.EXPIRED.value,
            )

    async def stranded_interventions(self, before: datetime) -> list[InterventionRequest]:
        """Questions answered (or expired) before `before` whose run is still PAUSED on
        them: the process that claimed them died before it moved the run on."""
        other = aliased(InterventionRow)
        still_pending = (
            select(other.intervention_id)
            .where(other.run_id == RunRow.run_id, other.status == PENDING)
            .exists()
        )
        answered = (InterventionRow.status == InterventionStatus.ANSWERED.value) & (
            InterventionRow.answered_at <= before
        )
        expired = (InterventionRow.status == InterventionStatus.EXPIRED.value) & (
            InterventionRow.expires_at <= before
        )
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .join(RunRow, RunRow.run_id == InterventionRow.run_id)
                .where(RunRow.status == RunStatus.PAUSED.value, ~still_pending, answered | expired)
                .order_by(InterventionRow.created_at, InterventionRow.intervention_id)
            )
            return [request_from_row(row) for row in rows]

    async def due_interventions(self, now: datetime) -> list[InterventionRequest]:
        """Pending interventions whose expiry time has passed, oldest deadline first."""
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .where(InterventionRow.status == PENDING, InterventionRow.expires_at <= now)
                .order_by(InterventionRow.expires_at, InterventionRow.intervention_id)
            )
            return [request_from_row(row) for row in rows]

    async def next_expiry(self) -> datetime | None:
        """When the next pending intervention expires: how long an expiry sweeper may sleep."""
        async with self._reads.begin() as session:
            return await session.scalar(
                select(func.min(InterventionRow.expires_at)).where(
                    InterventionRow.status == PENDING
                )
            )

    async def intervention_rows(self, run_id: str) -> list[InterventionRequest]:
        async with self._reads.begin() as session:
            rows = await session.scalars(
                select(InterventionRow)
                .where(InterventionRow.run_id == run_id)
                .order_by(InterventionRow.created_at, InterventionRow.intervention_id)
            )
            return [request_from_row(row) for row in rows]

    async def get_intervention(self, intervention_id: str) -> InterventionRequest | None:
        async with self._reads.begin() as session:
            row = await session.get(InterventionRow, intervention_id)
            return request_from_row(row) if row else None
