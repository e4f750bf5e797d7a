"""The inbox (dedupe on event id and on the message), the outbox (claims, backoff, a dead
holder) and write retries through a locked database."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.schemas import RunState, ThreadKey, utcnow
from storage import db
from storage.inbox import InboxItem, SqlInbox
from storage.outbox import GAVE_UP, SqlDeliveries
from storage.run_store import SqlRunStore
from tests.databases import create_database, drop_database, sqlite_url


def _item(event_id: str, ts: str | None) -> InboxItem:
    key = f"T1:C1:{ts}" if ts else None
    return InboxItem(event_id=event_id, kind="question", payload={"t": "\ud800"}, message_key=key)


async def test_the_inbox_takes_a_message_once_whatever_its_event_id(engine: AsyncEngine) -> None:
    inbox = SqlInbox(engine)
    first = await inbox.add([_item("Ev1", "1.1"), _item("Ev2", "1.1"), _item("Ev1", "2.2")])
    again = await inbox.add([_item("Ev1", None), _item("Ev3", "3.3")])

    assert first[0] is not None and first[1:] == [None, None]
    assert again[0] is None and again[1] is not None
    pending = await inbox.pending()
    assert [e.event_id for e in pending] == ["Ev1", "Ev3"]
    assert pending[0].payload == {"t": "\ud800"}, "a lone surrogate survives the round trip"
    assert await inbox.done(pending[0].id) is True
    assert await inbox.done(pending[0].id) is False
    assert [e.event_id for e in await inbox.pending()] == ["Ev3"]


async def test_an_inbox_row_is_taken_over_only_from_the_holder_that_was_read(
    engine: AsyncEngine,
) -> None:
    inbox = SqlInbox(engine)
    soon = utcnow() + timedelta(seconds=60)
    [entry_id] = await inbox.add([_item("Ev1", "1.1")], owner="a", claimed_until=soon)
    [entry] = await inbox.pending()
    assert entry.id == entry_id and entry.owner == "a" and entry.claimed_until == soon

    # two replicas race for the row they both read: exactly one wins
    wins = await asyncio.gather(
        inbox.claim(entry, owner="b", until=soon), inbox.claim(entry, owner="c", until=soon)
    )
    assert sorted(wins) == [False, True]
    [now_held] = await inbox.pending()
    assert now_held.owner in {"b", "c"}

    # only the holder renews; a done row is no longer claimable
    later = soon + timedelta(seconds=30)
    assert await inbox.renew([entry_id], owner="a", until=later) == 0
    assert await inbox.renew([entry_id], owner=now_held.owner or "", until=later) == 1
    assert (await inbox.pending())[0].claimed_until == later
    assert await inbox.claim(now_held, owner="d", until=later) is False, "stale read"
    assert await inbox.done(entry_id) is True
    fresh = now_held.model_copy(update={"claimed_until": later})
    assert await inbox.claim(fresh, owner="d", until=later) is False, "done rows stay done"


async def _slack_run(store: SqlRunStore) -> RunState:
    state = RunState(query="q", asker="U1", thread=ThreadKey(channel_id="C1", thread_ts="1.5"))
    await store.save(state)
    return state


async def test_a_saved_slack_run_is_owed_a_delivery_claimed_by_one_holder(
    engine: AsyncEngine,
) -> None:
    store, deliveries = SqlRunStore(engine), SqlDeliveries(engine)
    state = await _slack_run(store)
    await store.save(RunState(query="cli", asker="me"))  # not a Slack run: owed nothing
    until = utcnow() + timedelta(seconds=60)

    assert [d.run_id for d in await deliveries.due()] == [state.run_id]
    claim = await deliveries.claim(state.run_id, owner="w1", until=until)
    assert claim is not None and claim.attempts == 1
    assert await deliveries.claim(state.run_id, owner="w2", until=until) is None
    assert await deliveries.claim(state.run_id, owner="w2", until=until, dead_owner="w1")

    await deliveries.failed(
        state.run_id, owner="w2", error="HTTP 500", retry_at=utcnow() + timedelta(hours=1),
        first_failed_at=utcnow(),
    )  # fmt: skip
    assert await deliveries.claim(state.run_id, owner="w1", until=until) is None, "backoff"
    assert [d.run_id for d in await deliveries.undelivered(channel_id="C1")] == [state.run_id]

    await deliveries.failed(
        state.run_id, owner="w2", error="x", retry_at=utcnow(), first_failed_at=utcnow()
    )  # not w2's any more: nothing changes
    await store.save(state)  # a new version while it waits
    delivery = await deliveries.get(state.run_id)
    assert delivery is not None and delivery.wanted_version == 2 and not delivery.gave_up


async def test_delivered_clears_the_entry_and_a_given_up_one_stays_listed(
    engine: AsyncEngine,
) -> None:
    store, deliveries = SqlRunStore(engine), SqlDeliveries(engine)
    done, lost = await _slack_run(store), await _slack_run(store)
    until = utcnow() + timedelta(seconds=60)
    assert await deliveries.claim(done.run_id, owner="w", until=until)
    await deliveries.delivered(done.run_id, owner="w", version=done.version)
    assert await deliveries.claim(lost.run_id, owner="w", until=until)
    await deliveries.failed(
        lost.run_id, owner="w", error="gave up", retry_at=GAVE_UP, first_failed_at=utcnow()
    )

    assert await deliveries.due() == []
    listed = await deliveries.undelivered()
    assert [d.run_id for d in listed] == [lost.run_id] and listed[0].gave_up


async def _until_degraded(store: SqlRunStore) -> None:
    """Wait (10 s at most) until the store's writes report the database unavailable: a
    write has failed past its busy timeout, or has been waiting `stall` seconds."""
    for _ in range(500):
        if store.health.problem() is not None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the blocked write never reported the database unavailable")


@pytest.mark.db("sqlite", reason="SQLite's file lock and busy timeout; PostgreSQL: next test")
async def test_a_write_waits_out_a_database_locked_past_its_busy_timeout(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path)
    await db.migrate(url)
    engine = db.make_engine(url, connect_args={"timeout": 0.2})  # a short busy timeout
    store = SqlRunStore(engine, health=db.WriteHealth(stall=0.5))
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        other = sqlite3.connect(tmp_path / "grace.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        locked.set()
        release.wait(10)
        other.execute("ROLLBACK")
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        locked.wait(5)
        saving = asyncio.create_task(_slack_run(store))
        await _until_degraded(store)
        assert not saving.done(), "the write keeps waiting (it neither failed nor finished)"
        assert store.health.problem() == "database unavailable"
        release.set()
        state = await asyncio.wait_for(saving, 10)
    finally:
        release.set()
        holder.join()
    assert store.health.problem() is None
    assert (await store.load(state.run_id)) is not None
    await engine.dispose()


@pytest.mark.db("postgresql", reason="PostgreSQL's side of the locked-database test above")
async def test_a_write_waits_out_a_locked_table_on_postgresql(postgres_admin_url: str) -> None:
    """PostgreSQL has no busy timeout: a write meeting another transaction's table lock
    waits, and /healthz's health reports it until the lock goes."""
    url = await create_database(postgres_admin_url)
    engine = db.make_engine(url)
    try:
        await db.migrate(url)
        store = SqlRunStore(engine, health=db.WriteHealth(stall=0.5))
        async with engine.connect() as holder:
            lock = await holder.begin()
            await holder.execute(text("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE"))
            saving = asyncio.create_task(_slack_run(store))
            await _until_degraded(store)
            assert not saving.done(), "the write waits for the lock"
            assert store.health.problem() == "database unavailable"
            await lock.rollback()
        state = await asyncio.wait_for(saving, 10)
        assert store.health.problem() is None
        assert (await store.load(state.run_id)) is not None
    finally:
        await engine.dispose()
        await drop_database(postgres_admin_url, url)
