"""A replica frozen inside a transaction does not block the others for good (PostgreSQL).

A process stopped between its UPDATE and its COMMIT keeps its session "idle in
transaction", holding the row lock; without a server-side limit every other replica's
write to that row waits for as long as the process stays frozen. This was seen as a hang
of the frozen-worker lease test."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from agent.schemas import RunStatus
from storage.db import make_engine
from storage.errors import DatabaseUnreachableError
from storage.run_store import SqlRunStore
from tests.samples import make_state


@pytest.mark.parametrize("db_backend", ["postgresql"])
async def test_a_transaction_left_open_is_ended_and_its_row_lock_freed(db_url: str) -> None:
    frozen = make_engine(db_url, idle_in_transaction_timeout_s=1.0)
    other = make_engine(db_url)
    try:
        state = make_state()
        await SqlRunStore(other).save(state)
        connection = await frozen.connect()
        transaction = await connection.begin()
        await connection.execute(
            text("UPDATE runs SET status = :s WHERE run_id = :r"),
            {"s": RunStatus.FAILED.value, "r": state.run_id},
        )
        # ... and the process freezes here. Another replica's write to the same row:
        async with other.begin() as writer:
            result = await asyncio.wait_for(
                writer.execute(
                    text("UPDATE runs SET status = :s WHERE run_id = :r"),
                    {"s": RunStatus.CANCELLED.value, "r": state.run_id},
                ),
                timeout=30,
            )
            assert result.rowcount == 1
        # The frozen one wakes: its transaction is gone, nothing of it is written.
        with pytest.raises(DatabaseUnreachableError):
            await transaction.commit()
        await connection.close()
        async with other.connect() as reader:
            status = await reader.scalar(
                text("SELECT status FROM runs WHERE run_id = :r"), {"r": state.run_id}
            )
        assert status == RunStatus.CANCELLED.value
    finally:
        await frozen.dispose()
        await other.dispose()


@pytest.mark.parametrize("db_backend", ["postgresql"])
async def test_the_limit_is_set_on_every_connection(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        async with engine.connect() as connection:
            shown = await connection.scalar(text("SHOW idle_in_transaction_session_timeout"))
        assert shown == "10s"
    finally:
        await engine.dispose()
