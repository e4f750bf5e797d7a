"""What every store class shares: the engine, a session factory for writes and one for
reads (storage/db.py `reader`), the write-health monitor, and the dialect's upsert."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import CursorResult, Select
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from storage.db import WriteHealth, reader
from storage.tables import Base

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql

    Upsert = sqlite.Insert | postgresql.Insert


_T = TypeVar("_T")


def dialect_insert(engine: AsyncEngine, model: type[Base]) -> Upsert:
    """An INSERT that knows ON CONFLICT: the two backends spell it the same way."""
    name = engine.dialect.name
    if name == "sqlite":
        return sqlite.insert(model)
    if name == "postgresql":
        # Loaded with a PostgreSQL engine anyway; not on every SQLite start-up.
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(model)
    raise NotImplementedError(f"storage supports sqlite and postgresql, not {name}")


def rowcount(result: Any) -> int:
    return cast(CursorResult[Any], result).rowcount


class SqlStore:
    """Base of the stores: each public method is one short transaction, committed before
    it returns; `health` (shared by the stores of one process) tells /healthz whether
    writes go through."""

    def __init__(self, engine: AsyncEngine, *, health: WriteHealth | None = None) -> None:
        self._engine = engine
        self.health = health or WriteHealth()
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._reads = async_sessionmaker(reader(engine), expire_on_commit=False)

    @property
    def engine(self) -> AsyncEngine:
        return self._engine

    def _insert(self, model: type[Base]) -> Upsert:
        return dialect_insert(self._engine, model)

    async def _read_all(self, query: Select[tuple[_T]]) -> list[_T]:
        """The first column of every row a read-only `query` returns."""
        async with self._reads.begin() as session:
            return list(await session.scalars(query))
