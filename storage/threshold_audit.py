"""The record of threshold changes (0010) and the per-voter vote count a rate limit
reads. A change row is written in the same transaction as the change itself
(storage/feedback.py), so a change is never stored without its record."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, true

from agent.config import Thresholds
from agent.feedback_quorum import ThresholdChange
from agent.schemas import utcnow
from storage.sql import SqlStore
from storage.tables import FeedbackRow, ThresholdChangeRow


def change_row(
    name: str, *, changed_by: str, run_id: str | None, reason: str, old: Thresholds, new: Thresholds
) -> ThresholdChangeRow:
    return ThresholdChangeRow(
        name=name,
        changed_by=changed_by,
        run_id=run_id,
        reason=reason,
        old_silent=old.silent,
        old_notify=old.notify,
        old_confirm=old.confirm,
        new_silent=new.silent,
        new_notify=new.notify,
        new_confirm=new.confirm,
        changed_at=utcnow(),
    )


def _change_of(row: ThresholdChangeRow) -> ThresholdChange:
    """A stored change as the record callers get (no ORM row leaves storage)."""
    return ThresholdChange(
        changed_by=row.changed_by,
        changed_at=row.changed_at,
        reason=row.reason,
        before=Thresholds(silent=row.old_silent, notify=row.old_notify, confirm=row.old_confirm),
        after=Thresholds(silent=row.new_silent, notify=row.new_notify, confirm=row.new_confirm),
        run_id=row.run_id,
    )


class SqlThresholdAudit(SqlStore):
    """Reads only: the rows are written by storage/feedback.py (`change_row`)."""

    async def recent(self, limit: int = 5, *, name: str | None = None) -> list[ThresholdChange]:
        """The newest changes first (of the thresholds named `name`, when given)."""
        query = (
            select(ThresholdChangeRow)
            .where(ThresholdChangeRow.name == name if name is not None else true())
            .order_by(ThresholdChangeRow.changed_at.desc(), ThresholdChangeRow.id.desc())
            .limit(limit)
        )
        return [_change_of(r) for r in await self._read_all(query)]

    async def votes_since(self, user_id: str, since: datetime) -> int:
        """How many votes `user_id` cast (or changed) since `since`."""
        query = select(func.count()).where(
            FeedbackRow.user_id == user_id, FeedbackRow.updated_at >= since
        )
        async with self._reads.begin() as session:
            return int(await session.scalar(query) or 0)
