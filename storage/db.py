"""Engine construction and schema migration.

SQLite is the default (one file, WAL) and PostgreSQL works by URL alone. The SQLite
engine is set up so that every transaction takes the write lock up front
(`BEGIN IMMEDIATE`): with pysqlite's own transaction handling a SELECT runs outside the
transaction and read-then-write loses updates, while a deferred `BEGIN` that later
upgrades to a write fails with "database is locked" under load (STACK_NOTES).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from sqlalchemy import Connection, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

# Alembic (and what it pulls in: Mako, Pygments, …) is imported only when a database is
# behind the code's schema: a start-up on an up-to-date database reads one row instead.
if TYPE_CHECKING:
    from alembic.config import Config

_log = logging.getLogger(__name__)
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30.0
POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_S = 10.0
"""PostgreSQL ends a session that sits inside a transaction, sending nothing, for longer.
Our transactions are a few statements with no waiting in between; a replica frozen in the
middle of one (SIGSTOP, a paused VM, a swap storm) would otherwise hold its row locks
for as long as it stays frozen, and every other replica's takeover of its runs would
wait on them. Its transaction is rolled back; when it wakes, its commit fails."""
_PG_MIGRATION_LOCK_KEY = 0x6772616365  # "grace": serialises replicas migrating at once


def default_database_url(data_dir: Path) -> str:
    return f"sqlite+aiosqlite:///{data_dir}/grace.db"


def is_sqlite(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _sqlite_file(url: URL) -> Path | None:
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


READ_ONLY = "grace_read_only"
"""Execution option marking an engine (or connection) that only reads."""


def reader(engine: AsyncEngine) -> AsyncEngine:
    """The same engine and pool, for transactions that only read."""
    return engine.execution_options(**{READ_ONLY: True})


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An async engine configured for safe concurrent use of `url`.

    Extra keyword arguments go to `create_async_engine` (e.g. `echo=True`), but for
    `idle_in_transaction_timeout_s` (PostgreSQL; default
    `POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_S`).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        idle_s = kwargs.pop("idle_in_transaction_timeout_s", POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_S)
        connect_args = dict(kwargs.pop("connect_args", {}))
        setting = f"{round(idle_s * 1000)}"
        if parsed.get_driver_name() == "asyncpg":
            server = {"idle_in_transaction_session_timeout": setting}
            connect_args["server_settings"] = {**server, **connect_args.get("server_settings", {})}
        else:  # psycopg and other libpq drivers take server settings as `options`
            options = f"-c idle_in_transaction_session_timeout={setting}"
            connect_args["options"] = f"{connect_args.get('options', '')} {options}".strip()
        kwargs["connect_args"] = connect_args
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        return create_async_engine(parsed, **kwargs)

    path = _sqlite_file(parsed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Created here, owner-only; SQLite gives its -wal and -shm files the same mode.
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    connect_args = {"timeout": SQLITE_BUSY_TIMEOUT_S, **kwargs.pop("connect_args", {})}
    engine = create_async_engine(parsed, connect_args=connect_args, **kwargs)
    _configure_sqlite(engine)
    return engine


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # SQLAlchemy, not the driver, decides where transactions start and end.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            _enable_wal(cursor)
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # Writers take the write lock up front (no lost read-then-write updates); readers
        # use a deferred transaction, which under WAL never waits for a writer.
        if connection.get_execution_options().get(READ_ONLY):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


@retry(
    retry=retry_if_exception(lambda exc: "locked" in str(exc).lower()),
    stop=stop_after_attempt(20),
    wait=wait_random_exponential(multiplier=0.01, max=0.5),
    reraise=True,
)
def _enable_wal(cursor: Any) -> None:
    """WAL is a property of the file, set once. Switching needs an exclusive lock and
    SQLite does not wait for it (no busy timeout), so processes opening a brand-new
    database at the same moment retry instead of failing with "database is locked"."""
    cursor.execute("PRAGMA journal_mode")
    if str(cursor.fetchone()[0]).lower() != "wal":
        cursor.execute("PRAGMA journal_mode=WAL")


def alembic_config(url: str) -> Config:
    """An Alembic config built in code: no alembic.ini needed, works from an installed wheel.

    The URL travels in `attributes`, not in the ini options, so `%` in a password is safe.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = url
    return config


async def migrate(url: str, *, revision: str = "head") -> None:
    """Bring the database at `url` to `revision` (default: the latest schema).

    The upgrade runs inside one transaction on our own engine, so two processes that
    start at once serialise on it (SQLite's write lock, a PostgreSQL advisory lock) and
    the second finds nothing left to do. A database already at the latest revision is
    recognised by one read, without loading Alembic.
    """
    engine = make_engine(url)
    try:
        if revision == "head" and await _stored_revision(engine) == head_revision():
            return
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK_KEY}
                )
            await connection.run_sync(_upgrade, url, revision)
    finally:
        await engine.dispose()


def head_revision() -> str:
    """The latest revision, read from the file names: every revision id is its file's
    name, and the names sort in order (tests/storage/test_migrations.py checks both)."""
    return max(p.stem for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py"))


async def _stored_revision(engine: AsyncEngine) -> str | None:
    """The revision recorded in the database; None when there is none to read."""
    try:
        async with reader(engine).connect() as connection:
            rows = (await connection.execute(text("SELECT version_num FROM alembic_version"))).all()
    except DBAPIError:  # no table yet: a new database
        return None
    return str(rows[0][0]) if len(rows) == 1 else None


def _upgrade(connection: Connection, url: str, revision: str) -> None:
    from alembic import command

    config = alembic_config(url)
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def current_revision(url: str) -> str | None:
    """The schema revision the database is at (None when never migrated)."""
    from alembic.runtime.migration import MigrationContext

    def _read(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_read)
    finally:
        await engine.dispose()


def run_sync_migrate(url: str, *, revision: str = "head") -> None:
    """`migrate` for synchronous callers (a CLI command, a container entrypoint)."""
    asyncio.run(migrate(url, revision=revision))


# --------------------------------------------------------------------------- write faults

WRITE_RETRY_DEADLINE_S = 900.0
"""How long a write keeps retrying a database that is locked or unreachable."""
WRITE_STALL_S = 8.0
"""A write waiting this long means the database is not taking writes: /healthz degrades."""

_TRANSIENT_WORDS = ("locked", "busy", "unable to open", "disk i/o", "connection", "closed")


def is_transient(exc: BaseException) -> bool:
    """A database fault worth waiting out (locked, busy, connection lost), not a bug or a
    constraint violation."""
    if isinstance(exc, IntegrityError):
        return False
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, OperationalError | InterfaceError | OSError):
        return any(word in str(exc).lower() for word in _TRANSIENT_WORDS) or isinstance(
            exc, OSError
        )
    return False


class WriteHealth:
    """Whether the database is taking writes, as seen by the writes themselves: degraded
    while a write has failed since the last success, or one has waited `stall` seconds."""

    def __init__(self, stall: float = WRITE_STALL_S) -> None:
        self.stall = stall
        self._started: dict[int, float] = {}
        self._next = 0
        self._failing = False

    def begin(self) -> int:
        self._next += 1
        self._started[self._next] = time.monotonic()
        return self._next

    def end(self, token: int, *, ok: bool) -> None:
        self._started.pop(token, None)
        self._failing = not ok

    def problem(self) -> str | None:
        """A short reason for /healthz, or None when writes go through."""
        now = time.monotonic()
        if self._failing or any(now - t >= self.stall for t in self._started.values()):
            return "database unavailable"
        return None


P = ParamSpec("P")
R = TypeVar("R")


class HasHealth(Protocol):
    health: WriteHealth


def retried_write(
    method: Callable[Concatenate[Any, P], Awaitable[R]],
) -> Callable[Concatenate[Any, P], Awaitable[R]]:
    """Retry a store method whose transaction failed on a transient fault, with backoff,
    for up to `WRITE_RETRY_DEADLINE_S`, instead of dropping the work. Each attempt is a
    whole new transaction; the owner's `health` reports the fault meanwhile."""

    @functools.wraps(method)
    async def wrapper(self: HasHealth, *args: P.args, **kwargs: P.kwargs) -> R:
        deadline = time.monotonic() + WRITE_RETRY_DEADLINE_S
        delay = 0.05
        while True:
            token = self.health.begin()
            try:
                result = await method(self, *args, **kwargs)
            except Exception as exc:
                self.health.end(token, ok=not is_transient(exc))
                if not is_transient(exc) or time.monotonic() >= deadline:
                    raise
                _log.warning(
                    "database write failed (%s); retrying in %.1f s",
                    type(exc).__name__,
                    delay,
                    extra={"operation": method.__name__},
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            self.health.end(token, ok=True)
            return result

    return wrapper
