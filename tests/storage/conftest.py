"""Every storage test gets a fresh database, migrated to head: the real thing, no mocks.

SQLite files always; PostgreSQL too when `GRACE_TEST_POSTGRES_URL` points at a server
(an admin URL such as `postgresql+asyncpg://postgres@127.0.0.1:5432/postgres`): each
test then also runs against a throw-away database created on it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from storage.db import make_engine, migrate
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore

POSTGRES_ADMIN_URL = os.environ.get("GRACE_TEST_POSTGRES_URL", "")
BACKENDS = ["sqlite", *(["postgresql"] if POSTGRES_ADMIN_URL else [])]


async def _postgres_database(name: str, *, drop: bool) -> None:
    admin = create_async_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            if drop:
                await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            else:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/db/grace.db"
        await migrate(url)
        yield url
        return
    name = f"grace_test_{uuid.uuid4().hex[:12]}"
    await _postgres_database(name, drop=False)
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        await migrate(url)
        yield url
    finally:
        await _postgres_database(name, drop=True)


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(db_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def store(engine: AsyncEngine) -> SqlRunStore:
    return SqlRunStore(engine)


@pytest.fixture
def ledger(engine: AsyncEngine) -> SqlUsageLedger:
    return SqlUsageLedger(engine)
