"""On PostgreSQL the intake writes a new batch while an earlier one is still in flight:
a request's ack waits for its own batch only (issue 23 point 7), and each ack still
comes after its row is committed. SQLite keeps one batch at a time (one write lock)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.service.tasks import TaskRunner
from bot.slack.intake import Intake
from bot.slack.items import Question, stored
from storage.db import WriteGate, make_engine, migrate
from storage.inbox import PARALLEL_ADDS_POSTGRESQL, InboxItem, SqlInbox
from storage.tables import InboxRow
from tests.databases import create_database, drop_database, sqlite_url
from tests.durable.helpers import wait_until

BOUND = 10.0
"""Seconds to wait for a signal that comes at once unless the code under test is wrong."""


@pytest.fixture
async def pg_engine(postgres_admin_url: str) -> AsyncIterator[AsyncEngine]:
    url = await create_database(postgres_admin_url)
    try:
        await migrate(url)
        engine = make_engine(url)
        yield engine
        await engine.dispose()
    finally:
        await drop_database(postgres_admin_url, url)


def _question(event_id: str) -> InboxItem:
    item = Question(team="T1", channel="C1", thread_ts=f"{event_id}.0", user="U1", text="hi")
    return stored(item, event_id=event_id)


async def _committed(engine: AsyncEngine, event_id: str) -> int:
    """Rows with `event_id` another connection sees: committed ones only."""
    async with engine.connect() as connection:
        found = await connection.scalar(
            select(func.count()).select_from(InboxRow).where(InboxRow.event_id == event_id)
        )
        return int(found or 0)


async def _waiting_on_a_lock(engine: AsyncEngine) -> bool:
    async with engine.connect() as connection:
        found = await connection.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query ILIKE 'INSERT INTO inbox%'"
            )
        )
        return bool(found)


async def test_a_batch_is_not_held_up_by_the_one_in_flight(pg_engine: AsyncEngine) -> None:
    inbox = SqlInbox(pg_engine)
    assert inbox.parallel_adds == PARALLEL_ADDS_POSTGRESQL > 1
    intake = Intake(
        inbox=inbox,
        tasks=TaskRunner(),
        processors={},
        owner="worker",
        handed_to=lambda _: None,
        ack_wait=BOUND * 3,  # the first request's batch is held up on purpose
    )
    blocker = make_engine(pg_engine.url, idle_in_transaction_timeout_s=120)  # holds one open
    try:
        # Another transaction holds an uncommitted row with the first request's event
        # id: that request's batch waits on it (the unique index) — a batch in flight.
        async with blocker.connect() as holding:
            await SqlInbox(blocker).add([_question("EvHeld")])  # a committed neighbour
            await holding.execute(
                text(
                    "INSERT INTO inbox (event_id, kind, payload_json, status, attempts, "
                    "created_at) VALUES ('EvFirst', 'question', '{}', 'pending', 0, now())"
                )
            )
            first = asyncio.create_task(intake.accept(_question("EvFirst")))
            await wait_until(
                lambda: _waiting_on_a_lock(pg_engine), within=BOUND, what="the first batch to wait"
            )

            # The next request gets a batch of its own and its ack (accept returning)
            # does not wait for the first: its row is committed when it returns.
            assert await asyncio.wait_for(intake.accept(_question("EvSecond")), BOUND)
            assert await _committed(pg_engine, "EvSecond") == 1
            assert not first.done(), "the first batch is still waiting"

            await holding.rollback()  # the other transaction gives up its row
        assert await asyncio.wait_for(first, BOUND), "stored once the way is clear"
        assert await _committed(pg_engine, "EvFirst") == 1
    finally:
        await intake.close()
        await blocker.dispose()


async def test_sqlite_writes_one_batch_at_a_time(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    try:
        assert SqlInbox(engine).parallel_adds == 1
    finally:
        await engine.dispose()


async def test_a_batch_is_one_autocommitted_statement_on_postgresql(pg_engine: AsyncEngine) -> None:
    """No BEGIN and COMMIT round trips around the one INSERT (each waits for the front's
    busy event loop during a burst): the statement commits by itself, and its rows are
    committed when `add` returns; the pooled connection goes back to transactions."""
    seen: list[tuple[str, bool]] = []

    def record(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "inbox" in statement.lower():
            seen.append(
                (statement.split()[0].upper(), connection.connection.dbapi_connection.autocommit)
            )

    event.listen(pg_engine.sync_engine, "before_cursor_execute", record)
    try:
        ids = await SqlInbox(pg_engine).add([_question("EvA"), _question("EvB")])
    finally:
        event.remove(pg_engine.sync_engine, "before_cursor_execute", record)
    assert seen == [("INSERT", True)]
    assert all(i is not None for i in ids)
    assert await _committed(pg_engine, "EvA") == await _committed(pg_engine, "EvB") == 1

    async with pg_engine.connect() as connection:  # the same pool: a transaction again
        await connection.execute(update(InboxRow).values(attempts=7))
        await connection.rollback()
    assert [e.attempts for e in await SqlInbox(pg_engine).pending()] == [0, 0]


async def test_batches_of_every_size_are_one_statement_text_on_postgresql(
    pg_engine: AsyncEngine,
) -> None:
    """The driver prepares a statement once per text: a burst's batches, of whatever
    size, share one (a multi-row VALUES had a text, so a PREPARE round trip, per size)."""
    texts: list[str] = []

    def record(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "inbox" in statement.lower():
            texts.append(statement)

    inbox = SqlInbox(pg_engine)
    event.listen(pg_engine.sync_engine, "before_cursor_execute", record)
    try:
        for size in (1, 7, 200):
            ids = await inbox.add([_question(f"Ev{size}-{n}") for n in range(size)])
            assert all(i is not None for i in ids) and len(set(ids)) == size
    finally:
        event.remove(pg_engine.sync_engine, "before_cursor_execute", record)
    assert len(texts) == 3 and len(set(texts)) == 1
    assert len(await inbox.pending(limit=500)) == 208


async def test_a_burst_read_over_several_turns_of_the_loop_is_one_batch(tmp_path: Path) -> None:
    """Requests reach the intake over several turns of the event loop (as a burst is
    read): they are written as one batch, not the first turn's alone and then the rest."""
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    inserts: list[str] = []

    def record(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO INBOX"):
            inserts.append(statement)

    intake = Intake(
        inbox=SqlInbox(engine), tasks=TaskRunner(), processors={}, handed_to=lambda _: None
    )

    async def arrive(n: int) -> bool:
        for _ in range(n % 5):  # read on the n % 5-th turn of the loop
            await asyncio.sleep(0)
        return await intake.accept(_question(f"EvTurn{n}"))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        taken = await asyncio.wait_for(asyncio.gather(*(arrive(n) for n in range(40))), BOUND)
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
        await intake.close()
        await engine.dispose()
    assert all(taken)
    assert len(inserts) == 1


async def test_the_gate_is_raised_from_a_requests_arrival(tmp_path: Path) -> None:
    """`grace serve`'s front: while the requests of a burst are still being read (the
    batch not cut yet), the worker already begins no write transaction, so the one it
    has open ends meanwhile instead of holding up the batch."""
    gate = WriteGate.create()
    assert gate is not None, "the write gate needs memfd (Linux), which GRACE's front runs on"
    url = sqlite_url(tmp_path)
    await migrate(url)
    engine = make_engine(url)
    intake = Intake(
        inbox=SqlInbox(engine, first=gate),
        tasks=TaskRunner(),
        processors={},
        handed_to=lambda _: None,
    )
    inserts: list[bool] = []

    def record(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO INBOX"):
            inserts.append(gate.raised)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    raised: list[bool] = []
    accepted: list[asyncio.Task[bool]] = []
    try:
        for n in range(20):  # a request per turn of the loop: the batch keeps gathering
            accepted.append(asyncio.create_task(intake.accept(_question(f"EvArrive{n}"))))
            await asyncio.sleep(0)
            raised.append(gate.raised)
        assert not inserts, "still gathering: no batch written yet"
        assert all(await asyncio.wait_for(asyncio.gather(*accepted), BOUND))
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
        await intake.close()
        await engine.dispose()
        os.close(gate.fd)
    assert all(raised[1:]), raised
    assert inserts == [True]
    assert not gate.raised
