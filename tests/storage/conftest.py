"""Every storage test gets a fresh database, migrated to head: the real thing, no mocks.

Each test runs twice, on a SQLite file and on a throw-away PostgreSQL database (see
tests/databases.py for where the PostgreSQL server comes from).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import make_engine, migrate
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore


@pytest.fixture
async def db_url(fresh_db_url: str) -> str:
    await migrate(fresh_db_url)
    return fresh_db_url


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(db_url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def other_engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    """A second 'process': its own engine on the same database."""
    engine = make_engine(db_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def store(engine: AsyncEngine) -> SqlRunStore:
    return SqlRunStore(engine)


@pytest.fixture
def ledger(engine: AsyncEngine) -> SqlUsageLedger:
    return SqlUsageLedger(engine)
