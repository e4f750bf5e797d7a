"""The durable outbox: runs whose Slack messages do not yet show their latest state.

`SqlRunStore.save` writes the wanted version in the run's own transaction; a deliverer
claims the row (a lease, so one process at a time brings a run's messages up to date),
renders the messages from the stored run, and records the version it delivered — or
when to try again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import and_, or_, select, update

from agent.schemas import utcnow
from storage.db import retried_write
from storage.sql import SqlStore, rowcount
from storage.tables import DeliveryRow

GAVE_UP = datetime(9999, 1, 1, tzinfo=UTC)
"""`next_attempt_at` of a delivery whose deadline passed: kept for `/grace status`."""


class Delivery(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # read from a `DeliveryRow`

    run_id: str
    owner: str | None = None
    lease_until: datetime | None = None
    channel_id: str
    wanted_version: int
    delivered_version: int
    attempts: int
    next_attempt_at: datetime | None = None
    first_failed_at: datetime | None = None
    last_error: str | None = None

    @property
    def gave_up(self) -> bool:
        return self.next_attempt_at is not None and self.next_attempt_at >= GAVE_UP


class SqlDeliveries(SqlStore):
    @retried_write
    async def claim(
        self, run_id: str, *, owner: str, until: datetime, dead_owner: str | None = None
    ) -> Delivery | None:
        """Take the run's delivery until `until` if it is due (behind, not waiting out a
        backoff, not given up) and nobody else holds it (or only `dead_owner`, a process
        known to be gone);
        `attempts` counts passes since the last success (1: a clean first try)."""
        now = utcnow()
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(DeliveryRow)
                .where(
                    DeliveryRow.run_id == run_id,
                    DeliveryRow.wanted_version > DeliveryRow.delivered_version,
                    or_(DeliveryRow.next_attempt_at.is_(None), DeliveryRow.next_attempt_at <= now),
                    or_(
                        DeliveryRow.owner.is_(None),
                        DeliveryRow.owner == owner,
                        DeliveryRow.owner == (dead_owner or owner),
                        DeliveryRow.lease_until < now,
                    ),
                )
                .values(owner=owner, lease_until=until, attempts=DeliveryRow.attempts + 1)
                .execution_options(synchronize_session=False)
            )
            if rowcount(result) != 1:
                return None
            row = await session.get(DeliveryRow, run_id)
            return Delivery.model_validate(row) if row else None

    async def _update_claimed(self, run_id: str, owner: str, **values: Any) -> None:
        """Update the delivery only while `owner` still holds its claim, releasing it."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(DeliveryRow)
                .where(DeliveryRow.run_id == run_id, DeliveryRow.owner == owner)
                .values(**values, owner=None, lease_until=None, updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )

    @retried_write
    async def delivered(self, run_id: str, *, owner: str, version: int) -> None:
        await self._update_claimed(
            run_id,
            owner,
            delivered_version=version,
            attempts=0,
            next_attempt_at=None,
            first_failed_at=None,
            last_error=None,
        )

    @retried_write
    async def release(self, run_id: str, *, owner: str) -> None:
        """Give the claim up unfinished (shutdown): the next pass searches before posting."""
        await self._update_claimed(run_id, owner)

    @retried_write
    async def failed(
        self, run_id: str, *, owner: str, error: str, retry_at: datetime, first_failed_at: datetime
    ) -> None:
        """Release the claim and say when to try again (`GAVE_UP`: never)."""
        await self._update_claimed(
            run_id,
            owner,
            next_attempt_at=retry_at,
            first_failed_at=first_failed_at,
            last_error=error[:500],
        )

    async def get(self, run_id: str) -> Delivery | None:
        async with self._reads.begin() as session:
            row = await session.get(DeliveryRow, run_id)
            return Delivery.model_validate(row) if row else None

    async def due(self, *, now: datetime | None = None, limit: int = 200) -> list[Delivery]:
        """Deliveries to work on now: behind and not waiting out a backoff (held ones
        too: the caller knows which holders are dead)."""
        now = now or utcnow()
        query = (
            select(DeliveryRow)
            .where(
                DeliveryRow.wanted_version > DeliveryRow.delivered_version,
                or_(DeliveryRow.next_attempt_at.is_(None), DeliveryRow.next_attempt_at <= now),
            )
            .order_by(DeliveryRow.updated_at)
            .limit(limit)
        )
        async with self._reads.begin() as session:
            return [Delivery.model_validate(row) for row in await session.scalars(query)]

    async def undelivered(
        self, *, channel_id: str | None = None, limit: int = 20
    ) -> list[Delivery]:
        """Runs whose messages are behind and have failed at least once (what
        `/grace status` reports), oldest failure first."""
        query = select(DeliveryRow).where(
            and_(
                DeliveryRow.wanted_version > DeliveryRow.delivered_version,
                DeliveryRow.first_failed_at.is_not(None),
            )
        )
        if channel_id is not None:
            query = query.where(DeliveryRow.channel_id == channel_id)
        query = query.order_by(DeliveryRow.first_failed_at).limit(limit)
        async with self._reads.begin() as session:
            return [Delivery.model_validate(row) for row in await session.scalars(query)]
