"""Engine construction, schema migration and write retries.

SQLite is the default (one file, WAL) and PostgreSQL works by URL alone (`postgres://`,
`postgresql://` and `postgresql+asyncpg://` all mean asyncpg). Every failure of the
engine — a missing driver, an unreachable server, a failed statement or migration —
comes out as a `storage.errors.StorageError` with one line saying what to do. The SQLite
engine is set up so that every transaction takes the write lock up front
(`BEGIN IMMEDIATE`): with pysqlite's own transaction handling a SELECT runs outside the
transaction and read-then-write loses updates, while a deferred `BEGIN` that later
upgrades to a write fails with "database is locked" under load (STACK_NOTES).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from sqlalchemy import Connection, event, text
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.engine.interfaces import ExceptionContext
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    InvalidRequestError,
    NoSuchModuleError,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from storage.errors import (
    DatabaseBusyError,
    DatabaseDamagedError,
    DatabaseUnreachableError,
    DatabaseURLError,
    MigrationError,
    StorageError,
    connect_error,
    driver_error,
    first_line,
    is_transient,
    statement_error,
    where,
)

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


UNGATED = "grace_ungated"
"""Execution option marking writes a Slack ack waits for: they never wait at a
`WriteGate` (`grace serve`'s worker stores the requests it acks itself this way)."""


def ungated(engine: AsyncEngine) -> AsyncEngine:
    """The same engine and pool, for writes that must not yield to a `WriteGate`."""
    return engine.execution_options(**{UNGATED: True})


_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}
_ALIASES = {"postgres": "postgresql"}


def database_url(url: str | URL) -> URL:
    """`url` parsed, with the asyncio driver GRACE uses when it names none: `sqlite://` →
    aiosqlite, `postgres://` and `postgresql://` → asyncpg (the spelling hosting
    providers hand out). Other backends are refused with a `DatabaseURLError`."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseURLError(
            f"The database URL is not one ({first_line(exc)}): set GRACE_DATABASE_URL to "
            "sqlite+aiosqlite:///PATH or postgresql://USER:PASSWORD@HOST:5432/DATABASE."
        ) from None
    backend, _, driver = parsed.drivername.partition("+")
    backend = _ALIASES.get(backend, backend)
    if backend not in _DRIVERS:
        raise DatabaseURLError(
            f"GRACE keeps its data in SQLite or PostgreSQL, not {backend!r}: set "
            "GRACE_DATABASE_URL to sqlite+aiosqlite:///PATH or "
            "postgresql://USER:PASSWORD@HOST:5432/DATABASE."
        )
    return parsed.set(drivername=f"{backend}+{driver}" if driver else _DRIVERS[backend])


def make_engine(url: str | URL, **kwargs: Any) -> AsyncEngine:
    """An async engine configured for safe concurrent use of `url`.

    Extra keyword arguments go to `create_async_engine` (e.g. `echo=True`), but for
    `idle_in_transaction_timeout_s` (PostgreSQL; default
    `POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_S`). A driver that is not installed raises
    `MissingDriverError` here; connection and statement failures raise `StorageError`s
    when they happen.
    """
    parsed = database_url(url)
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
        kwargs.setdefault("pool_pre_ping", True)
        engine = _create(parsed, **kwargs)
        _configure_postgresql(engine)
        _translate_errors(engine)
        return engine

    path = _sqlite_file(parsed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Created here, owner-only; SQLite gives its -wal and -shm files the same mode.
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    connect_args = {"timeout": SQLITE_BUSY_TIMEOUT_S, **kwargs.pop("connect_args", {})}
    engine = _create(parsed, connect_args=connect_args, **kwargs)
    _configure_sqlite(engine)
    _translate_errors(engine)
    return engine


def _create(url: URL, **kwargs: Any) -> AsyncEngine:
    try:
        return create_async_engine(url, **kwargs)
    except (NoSuchModuleError, ImportError, InvalidRequestError) as exc:
        # An unknown driver name, a driver that is not installed, or a synchronous one.
        raise driver_error(url, exc) from None


def _translate_errors(engine: AsyncEngine) -> None:
    """Make the engine raise `StorageError`s: on connecting (its own hook, because a
    refused TCP connection is an OSError SQLAlchemy does not wrap) and on statements.

    Left alone: constraint violations (the stores turn them into domain outcomes),
    pre-ping failures (SQLAlchemy reconnects on them) and non-database exceptions such
    as cancellation."""
    url = engine.url

    @event.listens_for(engine.sync_engine, "do_connect")
    def _connect(dialect: Dialect, _record: Any, cargs: Any, cparams: Any) -> Any:
        try:
            return dialect.connect(*cargs, **cparams)
        except Exception as exc:
            raise connect_error(url, exc) from exc

    @event.listens_for(engine.sync_engine, "handle_error")
    def _statement(context: ExceptionContext) -> StorageError | None:
        error = context.sqlalchemy_exception
        if context.is_pre_ping or isinstance(error, IntegrityError):
            return None
        if isinstance(error, DBAPIError):
            return statement_error(url, error, disconnected=context.is_disconnect)
        if isinstance(context.original_exception, OSError):
            return DatabaseUnreachableError(
                f"Lost the connection to the database {where(url)} "
                f"({first_line(context.original_exception)}): check that the server is up.",
            )
        return None


def _configure_postgresql(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # `grace serve`'s worker: a write transaction begins once the front's inbox
        # writes are through (`WriteGate`); reads and ungated writes never wait.
        options = connection.get_execution_options()
        if _yielding_to is not None and not options.get(READ_ONLY) and not options.get(UNGATED):
            _yielding_to.wait_until_lowered()


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
        options = connection.get_execution_options()
        if options.get(READ_ONLY):
            connection.exec_driver_sql("BEGIN")
        else:
            if _yielding_to is not None and not options.get(UNGATED):
                _yielding_to.wait_until_lowered()
            connection.exec_driver_sql("BEGIN IMMEDIATE")


class WriteGate:
    """Which of two processes sharing one database writes first.

    SQLite has one write lock, and a writer that finds it taken sleeps and tries again
    (the busy timeout) instead of queueing: a process that writes often — `grace
    serve`'s worker, driving hundreds of runs — can keep one that writes rarely but must
    not wait — the front, whose inbox write the ack waits for — out for a second and
    more. PostgreSQL queues nothing of the sort, but on a small machine the server's
    processes working for the worker's hundreds of runs took the processor from the
    front's inserts (an ack waited 100-200 ms for its batch while runs worked). The gate
    is one byte of memory both processes map (a memfd the front creates and hands to the
    worker): the front raises it while its writes wait or run (`first`; a count, as
    PostgreSQL writes several batches at once), and the worker begins no write
    transaction while it is raised (`yield_writes_to`; at most `MAX_YIELD_S` at a time,
    in case the front died with it raised). A transaction already open is never held
    up: it only ends sooner."""

    MAX_YIELD_S = 1.0
    POLL_S = 0.002

    def __init__(self, fd: int) -> None:
        import mmap

        self.fd = fd
        self._memory = mmap.mmap(fd, 1)

    @classmethod
    def create(cls) -> WriteGate | None:
        """A new gate, or None where memfds do not exist (not Linux): no ordering then."""
        if not hasattr(os, "memfd_create"):
            return None
        # Close-on-exec (the default, MFD_CLOEXEC): no other child gets it; the worker
        # does, through `pass_fds`, which makes it inheritable in that child only.
        fd = os.memfd_create("grace-write-gate")
        os.ftruncate(fd, 1)
        return cls(fd)

    @property
    def raised(self) -> bool:
        return self._memory[0] != 0

    @contextlib.contextmanager
    def first(self) -> Iterator[None]:
        """Raise the gate for the block: the other process's next write waits. Blocks
        may overlap (one process, one thread: the byte counts them); the gate is lowered
        when the last one ends."""
        self._memory[0] = min(self._memory[0] + 1, 255)
        try:
            yield
        finally:
            self._memory[0] = max(self._memory[0] - 1, 0)

    def wait_until_lowered(self) -> None:
        """From SQLAlchemy's synchronous `begin` hook, inside the async engine's greenlet:
        wait (on the event loop, not blocking it) while the gate is raised."""
        if not self.raised:
            return
        from sqlalchemy.util import await_only

        deadline = time.monotonic() + self.MAX_YIELD_S
        while self.raised and time.monotonic() < deadline:
            await_only(asyncio.sleep(self.POLL_S))


_yielding_to: WriteGate | None = None


def yield_writes_to(gate: WriteGate | None) -> None:
    """From now on, this process's write transactions wait while `gate` is raised
    (`grace serve`'s worker, for its front)."""
    global _yielding_to
    _yielding_to = gate


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
    recognised by one read, without loading Alembic. Raises `StorageError`: unreachable,
    damaged, or `MigrationError` when the upgrade itself fails (nothing is changed then).
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
    except (DatabaseUnreachableError, DatabaseBusyError, DatabaseDamagedError, DatabaseURLError):
        raise
    except Exception as exc:
        raise MigrationError(
            f"Could not bring the database {where(engine.url)} to schema {revision} "
            f"({_reason(exc)}); nothing was changed: check that its user may create and "
            "alter tables, and that this GRACE is not older than the database."
        ) from exc
    finally:
        await engine.dispose()


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__ if isinstance(exc, StorageError) else None
    return first_line(cause) if cause is not None else first_line(exc)


def head_revision() -> str:
    """The latest revision, read from the file names: every revision id is its file's
    name, and the names sort in order (tests/storage/test_migrations.py checks both)."""
    return max(p.stem for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py"))


async def _stored_revision(engine: AsyncEngine) -> str | None:
    """The revision recorded in the database; None when there is none to read."""
    try:
        async with reader(engine).connect() as connection:
            rows = (await connection.execute(text("SELECT version_num FROM alembic_version"))).all()
    except (DatabaseUnreachableError, DatabaseURLError):
        raise
    except StorageError:  # no table yet: a new database (or one the upgrade will report on)
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


# --------------------------------------------------------------------------- write faults

WRITE_RETRY_DEADLINE_S = 900.0
"""How long a write keeps retrying a database that is locked or unreachable."""
WRITE_STALL_S = 8.0
"""A write waiting this long means the database is not taking writes: /healthz degrades."""


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
