"""Verified answers kept in step in two places: the database row (the record of truth)
and the knowledge base's searchable copy. Saving writes the row, then the copy (and
takes the row back if the copy cannot be written, so nothing is listed that is never
found); removing deletes both. Used by the Slack button, `/grace forget` and
`grace verified`."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent.knowledge.verified import VerifiedIndex, index_verified, unindex_verified
from agent.ports import VerifiedAnswer, VerifiedAnswers
from agent.schemas import utcnow


def new_answer_id() -> str:
    """A short id a person can type: `/grace forget 1a2b3c4d`."""
    return secrets.token_hex(4)


@dataclass
class VerifiedKeeper:
    """The verified answers of one deployment: the store, the knowledge base, and how
    long a saved answer counts as strong."""

    store: VerifiedAnswers
    index: VerifiedIndex
    review_days: float = 180.0

    async def save(
        self,
        *,
        question: str,
        answer: str,
        verified_by: str,
        verified_by_name: str,
        permalink: str | None = None,
        run_id: str | None = None,
        now: datetime | None = None,
        team_id: str | None = None,
    ) -> tuple[VerifiedAnswer, bool]:
        """Save and index it; (the answer, True) — or, when the run's answer was saved
        already, (that one, False) and nothing changes."""
        at = now or utcnow()
        record = VerifiedAnswer(
            answer_id=new_answer_id(),
            question=question.strip(),
            answer=answer.strip(),
            verified_by=verified_by,
            verified_by_name=verified_by_name,
            verified_at=at,
            review_by=at + timedelta(days=self.review_days),
            permalink=permalink,
            run_id=run_id,
            team_id=team_id,
        )
        kept = await self.store.add(record)
        if kept.answer_id != record.answer_id:
            return kept, False
        try:
            await index_verified(self.index, kept)
        except BaseException:
            await self.store.remove(kept.answer_id)
            raise
        return kept, True

    async def recent(self, *, limit: int = 100) -> list[VerifiedAnswer]:
        return await self.store.recent(limit=limit)

    async def remove(self, answer_id: str) -> bool:
        """Delete the row and the searchable copy; False when no such answer is stored
        (a copy left by an earlier failure is removed all the same)."""
        removed = await self.store.remove(answer_id)
        chunks = await unindex_verified(self.index, answer_id)
        return removed or chunks > 0
