"""Alembic environment for GRACE's storage.

Used two ways: `storage.db.migrate()` hands in an open connection (inside its own
transaction), and the `alembic` command line builds an engine from the URL
(`sqlalchemy.url` in an ini file, or `GRACE_DATABASE_URL`).
"""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy import Connection

from storage.db import make_engine
from storage.tables import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    url = url or os.environ.get("GRACE_DATABASE_URL")
    if not url:
        raise RuntimeError("no database URL: set GRACE_DATABASE_URL or sqlalchemy.url")
    return str(url)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine(url: str) -> None:
    engine = make_engine(url)
    try:
        # One transaction around the whole upgrade: SQLite DDL is transactional too
        # once SQLAlchemy owns the BEGIN.
        async with engine.begin() as connection:
            await connection.run_sync(_run)
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(_run_with_own_engine(_url()))


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
