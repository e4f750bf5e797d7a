"""Retention (issue 23 point 4): a purge forgets finished runs and the Slack text stored
with them — questions put to people, audit trail, message refs, outbox row, handled
inbox requests — and keeps runs still working, waiting for a person, or whose Slack
messages are not delivered yet; votes and usage (no text) stay."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.ports import RunEvent, RunEventType
from agent.schemas import RunStatus, utcnow
from storage.inbox import InboxItem, SqlInbox
from storage.outbox import SqlDeliveries
from storage.retention import Purged, SqlRetention
from storage.run_store import SqlRunStore
from storage.tables import (
    DeliveryRow,
    FeedbackRow,
    InterventionRow,
    MessageRefRow,
    RunEventRow,
    RunRow,
)
from tests.samples import make_state


async def _count(engine: AsyncEngine, table: type, run_id: str) -> int:
    async with engine.connect() as connection:
        query = select(func.count()).select_from(table).where(table.run_id == run_id)
        return int((await connection.execute(query)).scalar_one())


async def _delivered(deliveries: SqlDeliveries, run_id: str, version: int) -> None:
    claimed = await deliveries.claim(run_id, owner="w1", until=utcnow() + timedelta(minutes=1))
    assert claimed is not None
    await deliveries.delivered(run_id, owner="w1", version=version)


async def test_a_purge_forgets_finished_runs_and_keeps_the_rest(
    engine: AsyncEngine, store: SqlRunStore
) -> None:
    deliveries = SqlDeliveries(engine)
    runs = {}
    for ts, status in [
        ("1.1", RunStatus.ANSWERED),
        ("2.2", RunStatus.FAILED),
        ("3.3", RunStatus.PAUSED),
        ("4.4", RunStatus.RUNNING),
        ("5.5", RunStatus.ANSWERED),  # its answer is not in Slack yet
    ]:
        state = make_state(thread_ts=ts, status=status, with_intervention=ts in ("1.1", "3.3"))
        await store.save(state, RunEvent(type=RunEventType.RUN_STARTED, run_id=state.run_id))
        await store.set_message_ref(run_id=state.run_id, kind="plan", channel_id="C1", ts=ts)
        if ts != "5.5":
            await _delivered(deliveries, state.run_id, state.version)
        runs[ts] = state.run_id
    async with engine.begin() as connection:  # a 👍 on the answered run
        now = utcnow()
        await connection.execute(
            insert(FeedbackRow).values(
                run_id=runs["1.1"], user_id="U1", confidence=0.8, was_correct=True,
                created_at=now, updated_at=now,
            )
        )  # fmt: skip
    inbox = SqlInbox(engine)
    [handled, waiting] = await inbox.add(
        [
            InboxItem(event_id="Ev1", kind="question", payload={"text": "秘密"}, message_key=None),
            InboxItem(event_id="Ev2", kind="question", payload={"text": "later"}, message_key=None),
        ]
    )
    assert handled is not None and waiting is not None
    assert await inbox.done(handled)

    purged = await SqlRetention(engine).purge(before=utcnow() + timedelta(seconds=1))

    assert purged == Purged(
        runs=2, interventions=1, events=2, message_refs=2, deliveries=2, inbox=1
    )
    for gone in ("1.1", "2.2"):
        assert await store.load(runs[gone]) is None
        for table in (InterventionRow, RunEventRow, MessageRefRow, DeliveryRow):
            assert await _count(engine, table, runs[gone]) == 0, table
    for kept in ("3.3", "4.4", "5.5"):
        assert await store.load(runs[kept]) is not None, kept
        assert await _count(engine, RunEventRow, runs[kept]) == 1
        assert await _count(engine, MessageRefRow, runs[kept]) == 1
    assert await _count(engine, InterventionRow, runs["3.3"]) == 1
    assert await _count(engine, FeedbackRow, runs["1.1"]) == 1, "votes hold no text"
    assert [e.event_id for e in await inbox.pending()] == ["Ev2"]


async def test_a_purge_keeps_what_changed_after_the_cut_off(
    engine: AsyncEngine, store: SqlRunStore
) -> None:
    state = make_state(status=RunStatus.ANSWERED, with_intervention=False)
    await store.save(state)
    retention = SqlRetention(engine)

    assert await retention.purge(before=utcnow() - timedelta(days=1)) == Purged()
    assert await store.load(state.run_id) is not None
    assert await _count(engine, RunRow, state.run_id) == 1
