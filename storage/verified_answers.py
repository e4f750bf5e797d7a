"""Verified answers (issue 19): `agent.ports.VerifiedAnswers` on SQL. The table is the
record of truth; the knowledge base keeps a searchable copy (agent/knowledge/verified.py,
kept in step by bot/service/verified.py)."""

from __future__ import annotations

from sqlalchemy import Select, delete, select

from agent.ports import VerifiedAnswer
from storage.db import retried_write
from storage.sql import SqlStore, rowcount
from storage.tables import VerifiedAnswerRow


def _record(row: VerifiedAnswerRow) -> VerifiedAnswer:
    return VerifiedAnswer.model_validate(row, from_attributes=True)


def _of_run(run_id: str) -> Select[tuple[VerifiedAnswerRow]]:
    return select(VerifiedAnswerRow).where(VerifiedAnswerRow.run_id == run_id)


class SqlVerifiedAnswers(SqlStore):
    """Add, read, list and remove verified answers; one per run."""

    @retried_write
    async def add(self, answer: VerifiedAnswer) -> VerifiedAnswer:
        """Store it; when its run already has one (a second click), that one is returned
        and nothing is stored."""
        values = answer.model_dump()
        stmt = self._insert(VerifiedAnswerRow).values(**values).on_conflict_do_nothing()
        async with self._sessions.begin() as session:
            result = await session.execute(stmt)
            if rowcount(result) == 1 or answer.run_id is None:
                return answer
            return _record((await session.scalars(_of_run(answer.run_id))).one())

    async def get(self, answer_id: str) -> VerifiedAnswer | None:
        async with self._reads.begin() as session:
            row = await session.get(VerifiedAnswerRow, answer_id)
        return _record(row) if row is not None else None

    async def for_run(self, run_id: str) -> VerifiedAnswer | None:
        async with self._reads.begin() as session:
            row = (await session.scalars(_of_run(run_id))).one_or_none()
        return _record(row) if row is not None else None

    async def recent(self, *, limit: int = 100) -> list[VerifiedAnswer]:
        """The newest first."""
        query = (
            select(VerifiedAnswerRow)
            .order_by(VerifiedAnswerRow.verified_at.desc(), VerifiedAnswerRow.answer_id)
            .limit(limit)
        )
        async with self._reads.begin() as session:
            rows = (await session.execute(query)).scalars().all()
        return [_record(row) for row in rows]

    @retried_write
    async def remove(self, answer_id: str) -> bool:
        stmt = delete(VerifiedAnswerRow).where(VerifiedAnswerRow.answer_id == answer_id)
        async with self._sessions.begin() as session:
            return rowcount(await session.execute(stmt)) == 1
