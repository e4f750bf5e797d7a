"""Database failures as one error type of ours, each a single line saying what to do.

Callers (the command line, start-up) catch `StorageError` instead of SQLAlchemy's and the
drivers' exceptions, and show `message` as it is: no traceback, no password. The engine
(storage/db.py) raises these itself — from its connect hook and its error hook — so every
store, the inbox and the outbox included, speaks this one language.

`transient` says whether waiting can help (locked, busy, connection lost): writes retry
those (`storage.db.retried_write`). `bad_input` says the operator must change something
(URL, driver, a damaged file) rather than try again: the command line exits with 2.
"""

from __future__ import annotations

from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError

INSTALL_POSTGRES = "pip install 'grace-slack[postgres]'"
"""The extra that brings the PostgreSQL driver (asyncpg): pyproject.toml's `postgres`."""

_DAMAGED = ("file is not a database", "malformed", "not a database", "file is encrypted")
_TRANSIENT_WORDS = ("locked", "busy", "unable to open", "disk i/o", "connection", "closed")


class StorageError(Exception):
    """A database problem; `message` is one line fit to show a person."""

    transient = False
    bad_input = False

    def __init__(self, message: str, *, transient: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        if transient is not None:
            self.transient = transient


class DatabaseURLError(StorageError):
    """The database URL cannot work: unparsable, a backend GRACE does not support."""

    bad_input = True


class MissingDriverError(DatabaseURLError):
    """The URL's driver is not installed (or is not an asyncio driver)."""


class DatabaseUnreachableError(StorageError):
    """The server cannot be reached, or the connection to it was lost."""

    transient = True


class DatabaseBusyError(StorageError):
    """Locked or busy past the wait: another process holds it."""

    transient = True


class DatabaseDamagedError(StorageError):
    """The SQLite file is damaged or is not a GRACE database."""

    bad_input = True


class MigrationError(StorageError):
    """The schema could not be brought up to date (nothing was changed: one transaction)."""


def where(url: URL) -> str:
    """The database as a person would name it: a file, or host:port/database."""
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    host = url.host or "localhost"
    port = url.port or 5432
    return f"{host}:{port}/{url.database or ''}"


def server(url: URL) -> str:
    """host:port of a database server."""
    return f"{url.host or 'localhost'}:{url.port or 5432}"


def first_line(exc: BaseException) -> str:
    """The driver's own reason, one line, without SQLAlchemy's SQL and background link."""
    origin = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = str(origin).strip().splitlines()
    return lines[0].strip() if lines and lines[0].strip() else type(origin).__name__


def is_transient(exc: BaseException) -> bool:
    """A fault worth waiting out (locked, busy, connection lost), not a bug or a
    constraint violation."""
    if isinstance(exc, StorageError):
        return exc.transient
    if isinstance(exc, IntegrityError):
        return False
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, OSError):
        return True
    if isinstance(exc, OperationalError | InterfaceError):
        return any(word in str(exc).lower() for word in _TRANSIENT_WORDS)
    return False


def connect_error(url: URL, exc: BaseException) -> StorageError:
    """Opening a connection failed: the server is down, the file cannot be opened, the
    login is refused."""
    reason = first_line(exc)
    if url.get_backend_name() == "sqlite":
        if any(marker in reason.lower() for marker in _DAMAGED):
            return damaged(url, reason)
        return StorageError(
            f"Cannot open the SQLite database {where(url)} ({reason}): check that its folder "
            "exists and that GRACE may write there.",
            transient=is_transient(exc),
        )
    if isinstance(exc, OSError):  # refused, no route, unknown host, timed out
        return DatabaseUnreachableError(
            f"Cannot reach PostgreSQL at {server(url)} ({reason}): check that the server is "
            "running and accepts TCP connections there, and that GRACE_DATABASE_URL names "
            "the right host and port."
        )
    return StorageError(
        f"PostgreSQL at {server(url)} refused the connection ({reason}): check the user, "
        "password and database name in GRACE_DATABASE_URL."
    )


def damaged(url: URL, reason: str) -> DatabaseDamagedError:
    return DatabaseDamagedError(
        f"The database {where(url)} is damaged or not a GRACE database ({reason}); "
        "restore it from a backup or move it away to start afresh."
    )


def statement_error(url: URL, exc: DBAPIError, *, disconnected: bool) -> StorageError:
    """A statement (or a commit) failed on an open connection."""
    reason = first_line(exc)
    lowered = reason.lower()
    transient = disconnected or is_transient(exc)
    if url.get_backend_name() == "sqlite" and any(marker in lowered for marker in _DAMAGED):
        return damaged(url, reason)
    if "locked" in lowered or "busy" in lowered:
        return DatabaseBusyError(
            f"The database {where(url)} is busy ({reason}): another process holds it; "
            "GRACE waits and retries its writes."
        )
    if disconnected:
        return DatabaseUnreachableError(
            f"Lost the connection to the database {where(url)} ({reason}): check that the "
            "server is up; GRACE reconnects by itself."
        )
    return StorageError(f"The database {where(url)} failed: {reason}.", transient=transient)


def driver_error(url: URL, exc: BaseException) -> MissingDriverError:
    """The URL names a driver that cannot be loaded (not installed, or not asyncio)."""
    driver = url.get_driver_name()
    backend = url.get_backend_name()
    if backend == "postgresql":
        fix = f"use postgresql://… with asyncpg ({INSTALL_POSTGRES})"
    else:
        fix = "use sqlite+aiosqlite:///PATH or postgresql://USER:PASSWORD@HOST:5432/DATABASE"
    return MissingDriverError(
        f"The database driver {driver!r} for {backend} is not available ({first_line(exc)}): {fix}."
    )
