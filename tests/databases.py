"""The databases the storage, durable and fault tests run on: SQLite files, and a
PostgreSQL cluster with one throw-away database per test.

`scripts/test.sh` starts the cluster and exports `GRACE_TEST_POSTGRES_URL` (an admin
URL); a plain `pytest` without it starts one itself with the same script
(`scripts/postgres.sh`) and stops it at the end. Either way no PostgreSQL test skips.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

BACKENDS = ("sqlite", "postgresql")
ADMIN_URL_VARIABLE = "GRACE_TEST_POSTGRES_URL"
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres.sh"


class Cluster:
    """A PostgreSQL server for this test session: the one named by the environment, or
    a throw-away one started (and later stopped) here."""

    def __init__(self) -> None:
        self.admin_url = os.environ.get(ADMIN_URL_VARIABLE, "")
        self._dir: Path | None = None

    def start(self) -> str:
        if self.admin_url:
            return self.admin_url
        # Directly under /tmp: as root the cluster runs as another user, who cannot
        # reach pytest's private tmp directories.
        self._dir = Path(tempfile.gettempdir()) / f"grace-pg-{uuid.uuid4().hex[:12]}"
        result = subprocess.run(
            ["bash", str(SCRIPT), "start", str(self._dir)],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(
                "the PostgreSQL tests need a PostgreSQL server and none could be started "
                f"({SCRIPT.name} start failed). Install PostgreSQL (apt-get install "
                f"postgresql) or set {ADMIN_URL_VARIABLE} to an admin URL such as "
                "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres.\n"
                f"{result.stderr[-2000:]}"
            )
        self.admin_url = result.stdout.strip().splitlines()[-1]
        return self.admin_url

    def stop(self) -> None:
        if self._dir is not None:
            subprocess.run(["bash", str(SCRIPT), "stop", str(self._dir)], timeout=120, check=False)
            self._dir = None


async def _admin(admin_url: str, statement: str) -> None:
    admin = create_async_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await admin.dispose()


async def create_database(admin_url: str) -> str:
    """A new empty database on the cluster; its URL."""
    name = f"grace_test_{uuid.uuid4().hex[:12]}"
    await _admin(admin_url, f'CREATE DATABASE "{name}"')
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


async def drop_database(admin_url: str, url: str) -> None:
    name = make_url(url).database
    await _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def fresh_database(admin_url: str) -> AsyncIterator[str]:
    """A database of its own on the admin URL's server, dropped afterwards (benches)."""
    url = await create_database(admin_url)
    try:
        yield url
    finally:
        await drop_database(admin_url, url)


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory.resolve()}/grace.db"
