"""The durable inbox: what Slack sent us, stored before we acknowledge it.

A row is written (a batch at a time: one atomic INSERT) before the
ack leaves, so a process that dies after the ack leaves the request behind for the next
one. Slack's event id and the message itself (team:channel:ts) are both unique, so a
retry, or the same message under a second event id, is refused by the database —
whichever process receives it.

A row is claimed by the worker that processes it until `claimed_until` (renewed while it
works), so replicas sharing one database never process the same request twice at once.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import (
    ARRAY,
    DateTime,
    Integer,
    Select,
    String,
    Text,
    TextClause,
    bindparam,
    delete,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.types import TypeEngine

from agent.schemas import utcnow
from storage.db import WriteGate, WriteHealth, retried_write, ungated
from storage.sql import SqlStore, rowcount
from storage.tables import InboxRow

PENDING = "pending"
DONE = "done"
PARALLEL_ADDS_POSTGRESQL = 3
"""Batches `add` may have in flight at once on PostgreSQL: an ack waits for its own batch
only, not also for the one in flight when it arrived (each batch has a connection of its
own from the pool: the pool's default 5 leave room for the front's reads)."""
ROWS_PER_STATEMENT = 1000
"""Rows in one INSERT on SQLite: 9 parameters each stays far below its limit (32,766
parameters); the intake writes batches of at most 200."""

_COLUMNS: dict[str, TypeEngine[Any]] = {
    "event_id": String(),
    "message_key": String(),
    "kind": String(),
    "payload_json": Text(),
    "status": String(),
    "attempts": Integer(),
    "created_at": DateTime(timezone=True),
    "owner": String(),
    "claimed_until": DateTime(timezone=True),
}
"""The columns `add` fills, with their types (`_UNNEST_INSERT`; generic types: a
`grace ask` on SQLite does not load the PostgreSQL dialect)."""
_UNNEST_INSERT: TextClause = text(
    f"INSERT INTO {InboxRow.__tablename__} ({', '.join(_COLUMNS)}) "
    f"SELECT * FROM unnest({', '.join(f':{name}' for name in _COLUMNS)}) "
    "ON CONFLICT DO NOTHING RETURNING id, event_id, message_key"
).bindparams(*(bindparam(name, type_=ARRAY(kind)) for name, kind in _COLUMNS.items()))
"""PostgreSQL: a batch of any size as one statement with one array per column. Its text
is the same for every batch, so the driver prepares it once per connection; a multi-row
`VALUES (…), (…)` has a text of its own for each batch size (a PREPARE round trip, and a
plan for up to 1,800 parameters, for most batches of a burst) and costs more to build."""


def _utc(value: datetime | None) -> datetime | None:
    """An aware UTC datetime (naive ones are taken to be UTC), as `UTCDateTime` binds it."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class InboxItem(BaseModel):
    """One request to take in."""

    model_config = ConfigDict(frozen=True)

    event_id: str
    kind: str
    payload: dict[str, Any]
    message_key: str | None = None


class InboxEntry(BaseModel):
    """A stored request still to be processed."""

    id: int
    event_id: str
    kind: str
    payload: dict[str, Any]
    attempts: int
    created_at: datetime
    owner: str | None = None
    claimed_until: datetime | None = None


class SqlInbox(SqlStore):
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        health: WriteHealth | None = None,
        first: WriteGate | None = None,
    ) -> None:
        super().__init__(engine, health=health)
        self._first = first
        """`grace serve`'s front: `add` goes before the worker's writes."""
        self._adds = ungated(engine)
        """An ack waits for `add`: in the worker (the requests the front forwards) it does
        not yield to the front's gate, and it runs on the same pool."""
        postgresql = engine.dialect.name == "postgresql"
        self._one_statement_adds = (
            self._adds.execution_options(isolation_level="AUTOCOMMIT") if postgresql else None
        )
        """PostgreSQL: a batch is one statement (`_UNNEST_INSERT`), sent alone in
        autocommit — atomic and committed (durable) before the server answers, like
        BEGIN + INSERT + COMMIT but one round trip instead of three, each of which waits
        for the front's event loop during a burst."""
        self.parallel_adds = PARALLEL_ADDS_POSTGRESQL if postgresql else 1
        """How many `add` batches the intake may have in flight at once: one on SQLite,
        whose single write lock would only make a second batch wait (by polling) for the
        first; `PARALLEL_ADDS_POSTGRESQL` where transactions run side by side."""

    def going_first(self) -> contextlib.AbstractContextManager[None]:
        """Raise the gate (`grace serve`'s front; elsewhere nothing) for the block: the
        other process begins no write transaction meanwhile. The intake holds it from a
        request's arrival until its batch is written, so the lock is free by then."""
        return self._first.first() if self._first is not None else contextlib.nullcontext()

    @retried_write
    async def add(
        self,
        items: Sequence[InboxItem],
        *,
        owner: str | None = None,
        claimed_until: datetime | None = None,
    ) -> list[int | None]:
        """Store a batch atomically, claimed by `owner` (the process that will
        process it): the new row's id for each item taken, None for a duplicate (same
        event id, or same message under another id)."""
        if not items:
            return []
        rows = _rows(items, utcnow(), owner, claimed_until)
        # One statement for the whole batch (one per row made a burst's ack wait on
        # hundreds of round trips). A refused row returns nothing, so the new rows are
        # matched to their items by (event id, message key); rows are taken in order, so
        # within a batch the first item with an event id or message key wins.
        with self.going_first():
            if self._one_statement_adds is not None:  # PostgreSQL
                stored = await self._insert_arrays(rows)
            else:
                stored = await self._insert_rows(rows)
        # pop: a repeat of the same item in the batch gets None (it was not stored twice)
        return [stored.pop((item.event_id, item.message_key), None) for item in items]

    async def _insert_arrays(self, rows: list[dict[str, Any]]) -> dict[tuple[str, str | None], int]:
        """PostgreSQL: the batch as `_UNNEST_INSERT`, sent alone in autocommit."""
        # The same statement text for every batch size: one array per column.
        columns: dict[str, list[Any]] = {name: [row[name] for row in rows] for name in rows[0]}
        columns["created_at"] = [_utc(value) for value in columns["created_at"]]
        columns["claimed_until"] = [_utc(value) for value in columns["claimed_until"]]
        assert self._one_statement_adds is not None
        async with self._one_statement_adds.begin() as connection:
            result = await connection.execute(_UNNEST_INSERT, columns)
            return {(row.event_id, row.message_key): row.id for row in result}

    async def _insert_rows(self, rows: list[dict[str, Any]]) -> dict[tuple[str, str | None], int]:
        """SQLite: the batch as multi-row INSERTs in one transaction."""
        stmt = (
            self._insert(InboxRow)
            .on_conflict_do_nothing()
            .returning(InboxRow.id, InboxRow.event_id, InboxRow.message_key)
        )
        stored: dict[tuple[str, str | None], int] = {}
        async with self._adds.begin() as connection:
            # A list of rows on a Core connection: SQLAlchemy's "insertmanyvalues" sends
            # them as one INSERT … VALUES (…), (…) per `ROWS_PER_STATEMENT` rows, from
            # one cached compiled statement (a `.values(rows)` statement is compiled anew
            # every time: tens of milliseconds for 200 rows).
            result = await connection.execute(
                stmt.execution_options(insertmanyvalues_page_size=ROWS_PER_STATEMENT), rows
            )
            for row in result:
                stored[(row.event_id, row.message_key)] = row.id
        return stored

    async def pending(
        self, *, before: datetime | None = None, limit: int = 100
    ) -> list[InboxEntry]:
        """Requests not yet processed (taken in before `before`), oldest first."""
        query = select(InboxRow).where(InboxRow.status == PENDING)
        if before is not None:
            query = query.where(InboxRow.created_at <= before)
        return await self._entries(query.order_by(InboxRow.id).limit(limit))

    async def pending_among(self, entry_ids: Sequence[int]) -> list[InboxEntry]:
        """Those of `entry_ids` still to be processed, oldest first: the rows another
        process (`grace serve`'s front) just stored for this one."""
        if not entry_ids:
            return []
        query = select(InboxRow).where(InboxRow.id.in_(list(entry_ids)), InboxRow.status == PENDING)
        return await self._entries(query.order_by(InboxRow.id))

    async def _entries(self, query: Select[tuple[InboxRow]]) -> list[InboxEntry]:
        async with self._reads.begin() as session:
            return [
                InboxEntry(
                    id=row.id,
                    event_id=row.event_id,
                    kind=row.kind,
                    payload=json.loads(row.payload_json),
                    attempts=row.attempts,
                    created_at=row.created_at,
                    owner=row.owner,
                    claimed_until=row.claimed_until,
                )
                for row in await session.scalars(query)
            ]

    @retried_write
    async def claim(self, entry: InboxEntry, *, owner: str, until: datetime) -> bool:
        """Take `entry` over from whoever held it when it was read (compare-and-set on
        that holder and claim): False when another process got there first."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(InboxRow)
                .where(
                    InboxRow.id == entry.id,
                    InboxRow.status == PENDING,
                    InboxRow.owner.is_not_distinct_from(entry.owner),
                    InboxRow.claimed_until.is_not_distinct_from(entry.claimed_until),
                )
                .values(owner=owner, claimed_until=until)
                .execution_options(synchronize_session=False)
            )
            return rowcount(result) == 1

    @retried_write
    async def renew(self, entry_ids: Sequence[int], *, owner: str, until: datetime) -> int:
        """Extend `owner`'s claims on the rows it is still working on."""
        if not entry_ids:
            return 0
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(InboxRow)
                .where(
                    InboxRow.id.in_(list(entry_ids)),
                    InboxRow.owner == owner,
                    InboxRow.status == PENDING,
                )
                .values(claimed_until=until)
                .execution_options(synchronize_session=False)
            )
            return rowcount(result)

    @retried_write
    async def attempt(self, entry_id: int) -> None:
        """Count a processing attempt (a request that keeps failing is given up on)."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(InboxRow)
                .where(InboxRow.id == entry_id)
                .values(attempts=InboxRow.attempts + 1)
                .execution_options(synchronize_session=False)
            )

    @retried_write
    async def done(self, entry_id: int, status: str = DONE) -> bool:
        """Mark a request processed; False when it already was (by another process)."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(InboxRow)
                .where(InboxRow.id == entry_id, InboxRow.status == PENDING)
                .values(status=status, done_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            return rowcount(result) == 1

    @retried_write
    async def prune(self, *, before: datetime) -> int:
        """Forget processed requests older than `before` (Slack stops retrying after minutes)."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(InboxRow)
                .where(InboxRow.status != PENDING, InboxRow.created_at < before)
                .execution_options(synchronize_session=False)
            )
            return rowcount(result)


def _rows(
    items: Sequence[InboxItem], now: datetime, owner: str | None, claimed_until: datetime | None
) -> list[dict[str, Any]]:
    """The batch's new rows, pending and claimed by `owner`: one definition for both
    databases' inserts."""
    return [
        {
            "event_id": item.event_id,
            "message_key": item.message_key,
            "kind": item.kind,
            "payload_json": json.dumps(item.payload),  # ASCII: a lone surrogate survives
            "status": PENDING,
            "attempts": 0,
            "created_at": now,
            "owner": owner,
            "claimed_until": claimed_until,
        }
        for item in items
    ]
