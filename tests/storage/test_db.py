"""Engine URLs (storage/db.py): the spellings of PostgreSQL URLs that hosting providers
hand out work as they are, and SQLite's plain `sqlite://` too."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from storage.db import database_url, make_engine, migrate
from storage.run_store import SqlRunStore
from tests.samples import make_state


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("postgres://u:p@h:5433/d", "postgresql+asyncpg://u:p@h:5433/d"),
        ("postgresql://u:p@h/d", "postgresql+asyncpg://u:p@h/d"),
        ("postgresql+asyncpg://u@h/d", "postgresql+asyncpg://u@h/d"),
        ("postgres+asyncpg://u@h/d", "postgresql+asyncpg://u@h/d"),
        ("sqlite:////tmp/x/grace.db", "sqlite+aiosqlite:////tmp/x/grace.db"),
        ("sqlite+aiosqlite:////tmp/x/grace.db", "sqlite+aiosqlite:////tmp/x/grace.db"),
    ],
)
def test_urls_get_grace_s_asyncio_driver(given: str, used: str) -> None:
    assert database_url(given).render_as_string(hide_password=False) == used


@pytest.mark.parametrize("db_backend", ["postgresql"])
@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
async def test_a_postgres_url_without_a_driver_is_used_as_it_is(
    fresh_db_url: str, scheme: str
) -> None:
    url = make_url(fresh_db_url).set(drivername=scheme).render_as_string(hide_password=False)
    assert url.startswith(f"{scheme}://")
    await migrate(url)
    engine = make_engine(url)
    try:
        store = SqlRunStore(engine)
        state = make_state()
        await store.save(state)
        assert await store.load(state.run_id) == state
    finally:
        await engine.dispose()
