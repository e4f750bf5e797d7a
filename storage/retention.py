"""Retention: forgetting finished runs, and the Slack text stored with them, after a while.

What a run keeps of what people wrote — the question and answer (`runs`, its whole
state), the questions put to people and their replies (`interventions`), its audit
trail (`run_events`), where its Slack messages are (`message_refs`), its outbox row
(`deliveries`) and the Slack requests received (`inbox`) — goes once the run is older
than the cut-off. Kept: runs still working or waiting for a person (planning, running,
paused: deleting them would lose a question someone is about to answer), runs whose
Slack messages are still being delivered (the outbox has not caught up nor given up),
and the rows that hold no text — 👍/👎 votes (`feedback`, which the thresholds learn
from) and model usage (`usage_ledger`, which the cost reports sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, or_, select

from storage.db import retried_write
from storage.inbox import SqlInbox
from storage.outbox import GAVE_UP
from storage.sql import SqlStore, rowcount
from storage.tables import (
    DeliveryRow,
    ExpertReminderRow,
    InterventionRow,
    MessageRefRow,
    RunEventRow,
    RunRow,
)

FINISHED = ("answered", "cancelled", "failed")
"""`RunStatus` values of runs nobody works on or waits for any more."""
BATCH = 500
"""Runs deleted per transaction: short transactions, whatever the backlog."""


@dataclass(frozen=True)
class Purged:
    """How many rows one purge removed."""

    runs: int = 0
    interventions: int = 0
    events: int = 0
    message_refs: int = 0
    deliveries: int = 0
    inbox: int = 0

    def __add__(self, other: Purged) -> Purged:
        return Purged(
            runs=self.runs + other.runs,
            interventions=self.interventions + other.interventions,
            events=self.events + other.events,
            message_refs=self.message_refs + other.message_refs,
            deliveries=self.deliveries + other.deliveries,
            inbox=self.inbox + other.inbox,
        )


class SqlRetention(SqlStore):
    async def purge(self, *, before: datetime) -> Purged:
        """Forget every finished run last changed before `before`, with its rows, and
        every handled Slack request received before it. Batched; returns the counts."""
        total = Purged()
        while True:
            batch = await self._purge_runs(before)
            total += batch
            if batch.runs < BATCH:
                break
        inbox = SqlInbox(self.engine, health=self.health)
        return total + Purged(inbox=await inbox.prune(before=before))

    async def _purgeable(self, before: datetime) -> list[str]:
        delivered = or_(
            DeliveryRow.run_id.is_(None),
            DeliveryRow.delivered_version >= DeliveryRow.wanted_version,
            DeliveryRow.next_attempt_at >= GAVE_UP,
        )
        query = (
            select(RunRow.run_id)
            .outerjoin(DeliveryRow, DeliveryRow.run_id == RunRow.run_id)
            .where(and_(RunRow.status.in_(FINISHED), RunRow.updated_at < before, delivered))
            .order_by(RunRow.updated_at)
            .limit(BATCH)
        )
        async with self._reads() as session:
            return list((await session.scalars(query)).all())

    @retried_write
    async def _purge_runs(self, before: datetime) -> Purged:
        run_ids = await self._purgeable(before)
        if not run_ids:
            return Purged()
        async with self._sessions.begin() as session:
            # Re-checked and locked in the deleting transaction (SQLite: the whole file
            # is, BEGIN IMMEDIATE): a run changed meanwhile stays.
            locked = await session.scalars(
                select(RunRow.run_id)
                .where(
                    RunRow.run_id.in_(run_ids),
                    RunRow.status.in_(FINISHED),
                    RunRow.updated_at < before,
                )
                .with_for_update()
            )
            ids = list(locked.all())
            counts: dict[str, int] = {}
            tables: dict[
                str, type[InterventionRow | RunEventRow | MessageRefRow | DeliveryRow | RunRow]
            ] = {
                "interventions": InterventionRow,
                "events": RunEventRow,
                "message_refs": MessageRefRow,
                "deliveries": DeliveryRow,
                "runs": RunRow,  # last: the interventions' foreign key points at it
            }
            for name, table in tables.items():
                result = await session.execute(
                    delete(table)
                    .where(table.run_id.in_(ids))
                    .execution_options(synchronize_session=False)
                )
                counts[name] = rowcount(result)
            await session.execute(  # which escalations were reminded: ids only, not counted
                delete(ExpertReminderRow)
                .where(ExpertReminderRow.run_id.in_(ids))
                .execution_options(synchronize_session=False)
            )
        return Purged(**counts)
