"""Remembered knowledge sources in the database (`agent.sources.SourceCatalog`), so every
replica's `grace sync` sees the same list, and the lease that lets one replica at a time
run the scheduled sync.

A source is kept whole as JSON (`KnowledgeSource`: options, file memos, page validators):
nothing queries inside it, and it changes shape with the ingester, not with the schema.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select, update

from agent.errors import InvalidInputError
from agent.schemas import utcnow
from agent.sources import KnowledgeSource, source_id
from storage.db import retried_write
from storage.sql import SqlStore, rowcount
from storage.tables import KnowledgeSourceRow, TaskLeaseRow

__all__ = ["SqlSourceCatalog"]


class SqlSourceCatalog(SqlStore):
    """`SourceCatalog` on the `knowledge_sources` table; `take_lease` on `task_leases`."""

    async def get(self, location: str) -> KnowledgeSource | None:
        async with self._reads.begin() as session:
            row = await session.get(KnowledgeSourceRow, source_id(location))
        if row is None or row.location != location:
            return None
        return KnowledgeSource.model_validate_json(row.body)

    async def list(self) -> list[KnowledgeSource]:
        async with self._reads.begin() as session:
            rows = (await session.scalars(select(KnowledgeSourceRow.body))).all()
        sources = [KnowledgeSource.model_validate_json(body) for body in rows]
        return sorted(sources, key=lambda source: source.added_at)

    @retried_write
    async def save(self, source: KnowledgeSource) -> None:
        """Add the source, or replace the one with the same location."""
        now = utcnow()
        values = {
            "location": source.location,
            "kind": source.kind.value,
            "body": source.model_dump_json(),
            "updated_at": now,
        }
        async with self._sessions.begin() as session:
            known = await session.get(KnowledgeSourceRow, source.id)
            if known is not None and known.location != source.location:
                raise InvalidInputError(
                    f"cannot remember {source.location}: its id {source.id} is taken by "
                    f"{known.location}; remove that source first"
                )
            stmt = self._insert(KnowledgeSourceRow).values(
                source_id=source.id, added_at=source.added_at, **values
            )
            stmt = stmt.on_conflict_do_update(
                index_elements=[KnowledgeSourceRow.source_id], set_=values
            )
            await session.execute(stmt)

    @retried_write
    async def remove(self, location: str) -> bool:
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(KnowledgeSourceRow).where(
                    KnowledgeSourceRow.source_id == source_id(location),
                    KnowledgeSourceRow.location == location,
                )
            )
        return rowcount(result) == 1

    @retried_write
    async def take_lease(self, name: str, owner: str, *, until: datetime) -> bool:
        """Hold the lease `name` until `until`: True when it was free, expired or already
        `owner`'s; False while another owner holds it. Atomic on both backends."""
        now = utcnow()
        async with self._sessions.begin() as session:
            inserted = await session.execute(
                self._insert(TaskLeaseRow)
                .values(name=name, owner=owner, until=until)
                .on_conflict_do_nothing(index_elements=[TaskLeaseRow.name])
            )
            if rowcount(inserted) == 1:
                return True
            taken = await session.execute(
                update(TaskLeaseRow)
                .where(
                    TaskLeaseRow.name == name,
                    (TaskLeaseRow.until <= now) | (TaskLeaseRow.owner == owner),
                )
                .values(owner=owner, until=until)
                .execution_options(synchronize_session=False)
            )
            return rowcount(taken) == 1

    @retried_write
    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up early (the job is done), if `owner` still holds it."""
        async with self._sessions.begin() as session:
            await session.execute(
                delete(TaskLeaseRow).where(TaskLeaseRow.name == name, TaskLeaseRow.owner == owner)
            )
