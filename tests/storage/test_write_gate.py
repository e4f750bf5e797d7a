"""Two processes on one database (`grace serve`'s front and worker), SQLite and
PostgreSQL alike: while the front's gate is raised, the worker's write transactions do
not begin; reads never wait; a gate left raised holds a write up for at most
`MAX_YIELD_S`; and overlapping raises (PostgreSQL's batches written side by side) keep it
raised until the last one ends."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import READ_ONLY, WriteGate, reader, yield_writes_to
from storage.inbox import InboxItem, SqlInbox

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd: Linux only")


@pytest.fixture
def gate() -> Iterator[WriteGate]:
    made = WriteGate.create()
    assert made is not None
    seen = WriteGate(os.dup(made.fd))  # the worker's mapping of the same memory
    yield_writes_to(seen)
    try:
        yield made
    finally:
        yield_writes_to(None)
        os.close(made.fd)
        os.close(seen.fd)


def _began_at(engine: AsyncEngine) -> list[float]:
    began: list[float] = []

    @event.listens_for(engine.sync_engine, "begin")
    def _record(connection: Connection) -> None:  # after the gate's hook (registered later)
        if not connection.get_execution_options().get(READ_ONLY):  # writes only
            began.append(time.monotonic())

    return began


class _Watched(WriteGate):
    """The worker's side of the gate, saying when a write reached it."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self.reached = asyncio.Event()

    def wait_until_lowered(self) -> None:
        self.reached.set()
        super().wait_until_lowered()


async def test_a_write_begins_only_once_the_gate_is_lowered(
    engine: AsyncEngine, gate: WriteGate
) -> None:
    began = _began_at(engine)
    watched = _Watched(os.dup(gate.fd))
    yield_writes_to(watched)  # the fixture's teardown resets it
    lowered: list[float] = []
    with gate.first():
        assert gate.raised

        async def write() -> None:
            async with engine.begin() as connection:
                await connection.execute(text("CREATE TABLE t (x INTEGER)"))

        writing = asyncio.create_task(write())
        # The write is at the gate (its hook runs on from here without yielding, up to
        # its wait) before the gate is lowered: it was held, not merely late.
        try:
            await asyncio.wait_for(watched.reached.wait(), timeout=5)
        finally:
            os.close(watched.fd)
        assert not began
        async with reader(engine).begin() as connection:  # reads do not wait
            assert (await connection.execute(text("SELECT 1"))).scalar() == 1
        assert not began
        lowered.append(time.monotonic())
    await asyncio.wait_for(writing, timeout=5)
    assert not gate.raised
    assert began and began[-1] >= lowered[0]


async def test_a_gate_left_raised_holds_a_write_up_for_a_bounded_time(
    engine: AsyncEngine, gate: WriteGate
) -> None:
    started = time.monotonic()
    with gate.first():
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (x INTEGER)"))
    waited = time.monotonic() - started
    assert WriteGate.MAX_YIELD_S <= waited < WriteGate.MAX_YIELD_S + 5


async def test_an_inbox_write_does_not_wait_at_the_gate(
    engine: AsyncEngine, gate: WriteGate
) -> None:
    """The worker stores the requests the front forwards (slash commands, clicks) before
    it acks them: that write skips the gate, even one left raised."""
    inbox = SqlInbox(engine)
    item = InboxItem(kind="command", payload={"x": 1}, event_id="Ev1")
    with gate.first():
        started = time.monotonic()
        ids = await inbox.add([item])
        waited = time.monotonic() - started
        assert gate.raised
    assert ids[0] is not None
    assert waited < WriteGate.MAX_YIELD_S, waited


def test_overlapping_raises_keep_the_gate_raised_until_the_last_ends(gate: WriteGate) -> None:
    with gate.first():
        with gate.first():
            assert gate.raised
        assert gate.raised, "a batch still in flight"
    assert not gate.raised
