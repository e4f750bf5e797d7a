"""Suite-wide fixtures, and the databases the storage, durable and fault tests run on."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import make_engine, migrate
from tests.databases import BACKENDS, Cluster, create_database, drop_database, sqlite_url

pytest_plugins = ["tests.fakes.gemini_fixtures", "tests.ordering"]

DB_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Settings read the process environment: start a test from an empty one."""
    for key in list(os.environ):
        if key.startswith(("GRACE_", "GOOGLE_", "SLACK_", "QDRANT_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return monkeypatch


@pytest.fixture
async def sqlite_engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A migrated SQLite database of the test's own, disposed after it."""
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """An admin URL of a PostgreSQL server, started for this session when none is given."""
    cluster = Cluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(params=BACKENDS)
def db_backend(request: pytest.FixtureRequest) -> str:
    """Runs the test once per database: SQLite, then PostgreSQL."""
    return str(request.param)


@pytest.fixture
def fresh_db_url(db_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of its own on `db_backend`, not yet migrated."""
    if db_backend == "sqlite":
        yield sqlite_url(tmp_path / "db")
        return
    admin_url: str = request.getfixturevalue("postgres_admin_url")
    url = asyncio.run(create_database(admin_url))
    try:
        yield url
    finally:
        asyncio.run(drop_database(admin_url, url))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "db(name, reason): the test runs on this database only (e.g. it locks the SQLite file)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Label each test with the database it runs on, for the summary (and `-k`)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        db = callspec.params.get("db_backend") if callspec is not None else None
        marker = item.get_closest_marker("db")
        if marker is not None:
            db = marker.args[0]
        if db is not None:
            item.user_properties.append(("db", db))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """ "Databases: 120 tests on SQLite (120 passed), 96 on PostgreSQL (…)"."""
    outcome_of: dict[tuple[str, str], str] = {}
    for outcome, reports in terminalreporter.stats.items():
        for report in reports:
            db = dict(getattr(report, "user_properties", ())).get("db")
            if db is None or not hasattr(report, "nodeid"):
                continue
            key = (str(db), report.nodeid)
            previous = outcome_of.get(key, "passed")
            if outcome in ("failed", "error") or previous in ("failed", "error"):
                outcome_of[key] = "failed"
            elif outcome in ("passed", "skipped", "xfailed", "xpassed"):
                outcome_of[key] = outcome if previous == "passed" else previous
    if not outcome_of:
        return
    per_db: dict[str, Counter[str]] = {}
    for (db, _), outcome in outcome_of.items():
        per_db.setdefault(db, Counter())[outcome] += 1
    parts = []
    for db, outcomes in sorted(per_db.items()):
        detail = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        parts.append(f"{sum(outcomes.values())} on {DB_NAMES.get(db, db)} ({detail})")
    terminalreporter.write_sep("-", "databases")
    terminalreporter.write_line("Tests per database: " + "; ".join(parts))
