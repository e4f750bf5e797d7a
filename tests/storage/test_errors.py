"""Database failures come out of storage as `StorageError`s with one line saying what to
do (storage/errors.py, raised by the engine of storage/db.py): a refused connection, a
driver that is not installed, a URL GRACE cannot use, a damaged file, a failed
migration. Nothing is patched: each failure is the real one."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from storage.db import make_engine, migrate
from storage.errors import (
    INSTALL_POSTGRES,
    DatabaseDamagedError,
    DatabaseUnreachableError,
    DatabaseURLError,
    MigrationError,
    MissingDriverError,
    StorageError,
)
from storage.run_store import SqlRunStore
from tests.durable.helpers import free_port


def one_line(error: StorageError) -> str:
    assert error.message == str(error)
    assert "\n" not in error.message and error.message.strip() == error.message
    return error.message


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+asyncpg"])
async def test_an_unreachable_server_names_host_and_port(scheme: str) -> None:
    port = free_port()
    url = f"{scheme}://grace:secret@127.0.0.1:{port}/grace"
    with pytest.raises(DatabaseUnreachableError) as caught:
        await migrate(url)
    message = one_line(caught.value)
    assert f"127.0.0.1:{port}" in message and "running" in message
    assert "secret" not in message
    assert caught.value.transient and not caught.value.bad_input

    engine = make_engine(url)  # and a store's call, not only start-up
    try:
        with pytest.raises(DatabaseUnreachableError):
            await SqlRunStore(engine).load("r1")
    finally:
        await engine.dispose()


def test_a_driver_that_is_not_installed_says_how_to_install_one() -> None:
    with pytest.raises(MissingDriverError) as caught:
        make_engine("postgresql+nosuchdriver://grace@127.0.0.1:5432/grace")
    message = one_line(caught.value)
    assert "nosuchdriver" in message and INSTALL_POSTGRES in message
    assert INSTALL_POSTGRES == "pip install 'grace-slack[postgres]'"
    assert caught.value.bad_input


def test_a_synchronous_driver_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MissingDriverError) as caught:
        make_engine(f"sqlite+pysqlite:///{tmp_path}/grace.db")
    assert "pysqlite" in one_line(caught.value)


@pytest.mark.parametrize("url", ["mysql://grace@db/grace", "not a url at all"])
def test_a_url_grace_cannot_use_is_refused_in_one_line(url: str) -> None:
    with pytest.raises(DatabaseURLError) as caught:
        make_engine(url)
    message = one_line(caught.value)
    assert "GRACE_DATABASE_URL" in message and caught.value.bad_input


@pytest.mark.db("sqlite", reason="a damaged file is SQLite's failure")
async def test_a_damaged_file_is_named_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "grace.db"
    path.write_bytes(b"\x00garbage" * 4096)
    with pytest.raises(DatabaseDamagedError) as caught:
        await migrate(f"sqlite:///{path}")
    message = one_line(caught.value)
    assert str(path) in message and "backup" in message and caught.value.bad_input


async def test_a_database_from_a_newer_grace_fails_to_migrate(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("UPDATE alembic_version SET version_num = '9999_x'"))
    finally:
        await engine.dispose()
    with pytest.raises(MigrationError) as caught:
        await migrate(db_url)
    message = one_line(caught.value)
    assert "9999_x" in message and "older" in message
