"""Runs and their versions (storage/runs.py): round trips, compare-and-set saves,
queries, read-change-write and the audit trail, also under real concurrency (a second
engine on the same database stands in for a second process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.ports import RunConflictError, RunEvent, RunEventType
from agent.schemas import RunState, RunStatus, ThreadKey, TokenUsage, utcnow
from storage.db import make_engine
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore
from tests.samples import make_state


@pytest.fixture
async def other_store(db_url: str) -> AsyncIterator[SqlRunStore]:
    """A second 'process': its own engine on the same database."""
    engine = make_engine(db_url)
    yield SqlRunStore(engine)
    await engine.dispose()


async def _count(engine: AsyncEngine, sql: str) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(text(sql))).scalar_one())


async def test_round_trip_keeps_everything(store: SqlRunStore) -> None:
    state = make_state(replans=2)
    await store.save(state)

    loaded = await store.load(state.run_id)

    assert loaded == state
    assert loaded is not None
    assert loaded.version == 1
    assert loaded.plan is not None and [s.step_id for s in loaded.plan.steps] == [1, 2]
    assert set(loaded.step_results) == {1, 2}
    assert loaded.step_results[1].sources[0].source == "hr/leave.md"
    assert loaded.replan_count == 2
    assert loaded.pending is not None and loaded.pending.confidence is not None
    assert loaded.query.endswith("有給休暇は何日？")


async def test_save_updates_in_place_and_counts_versions(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    state.status = RunStatus.RUNNING
    state.final_answer = "20 days"
    await store.save(state)

    loaded = await store.load(state.run_id)
    assert loaded is not None
    assert (loaded.status, loaded.final_answer, loaded.version) == (RunStatus.RUNNING, "20 days", 2)
    assert await store.load("missing") is None


async def test_queries_by_status_channel_and_thread(store: SqlRunStore) -> None:
    base = utcnow() - timedelta(hours=1)
    old = make_state(thread_ts="1.1", status=RunStatus.ANSWERED, created_at=base)
    follow_up = make_state(
        thread_ts="1.1", status=RunStatus.RUNNING, created_at=base + timedelta(minutes=5)
    )
    elsewhere = make_state(
        thread_ts="2.2",
        channel_id="C2",
        status=RunStatus.RUNNING,
        created_at=base + timedelta(minutes=1),
    )
    for state in (old, follow_up, elsewhere):
        await store.save(state)

    latest = await store.latest_run_in_thread(
        ThreadKey(team_id="T1", channel_id="C1", thread_ts="1.1")
    )
    assert latest is not None and latest.run_id == follow_up.run_id
    assert await store.latest_run_in_thread(ThreadKey(channel_id="C9", thread_ts="x")) is None

    newest_first = await store.runs.list_runs()
    assert [s.run_id for s in newest_first] == [follow_up.run_id, elsewhere.run_id, old.run_id]
    assert [s.run_id for s in await store.runs.list_runs(channel_id="C2")] == [elsewhere.run_id]
    assert [s.run_id for s in await store.runs.list_runs(status=RunStatus.ANSWERED)] == [old.run_id]
    assert len(await store.runs.list_runs(limit=2)) == 2
    running = await store.runs_with_status(RunStatus.RUNNING)
    assert [s.run_id for s in running] == [elsewhere.run_id, follow_up.run_id]


async def test_mutate_reads_and_writes_in_one_go(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)

    def cancel(s: RunState) -> None:
        s.status = RunStatus.CANCELLED

    changed = await store.mutate(state.run_id, cancel)

    assert changed is not None and changed.status is RunStatus.CANCELLED
    assert changed.version == 2
    assert await store.mutate("missing", cancel) is None
    assert (await store.get_intervention(state.interventions[0].intervention_id)) is not None


async def test_the_audit_trail_is_written_with_each_transition(store: SqlRunStore) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    for event in (RunEventType.RUN_STARTED, RunEventType.PLAN_CREATED):
        await store.save(state, RunEvent(type=event, run_id=state.run_id, message=event.value))
    await store.save(state)  # a save with no transition to record
    state.status = RunStatus.ANSWERED
    await store.save(state, RunEvent(type=RunEventType.ANSWER_READY, run_id=state.run_id))
    other = make_state(thread_ts="2.0")
    await store.save(other, RunEvent(type=RunEventType.RUN_STARTED, run_id=other.run_id))

    events = await store.events(state.run_id)
    assert [(e.seq, e.event_type, e.status) for e in events] == [
        (1, "run_started", "running"),
        (2, "plan_created", "running"),
        (4, "answer_ready", "answered"),
    ]
    assert events[1].message == "plan_created"
    assert [e.seq for e in await store.events(other.run_id)] == [1]


async def test_a_refused_save_leaves_no_audit_record(store: SqlRunStore) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    await store.save(state, RunEvent(type=RunEventType.RUN_STARTED, run_id=state.run_id))
    stale = state.model_copy(deep=True)
    await store.save(state, RunEvent(type=RunEventType.RUN_CANCELLED, run_id=state.run_id))
    with pytest.raises(RunConflictError):
        await store.save(stale, RunEvent(type=RunEventType.ANSWER_READY, run_id=state.run_id))
    assert [e.event_type for e in await store.events(state.run_id)] == [
        "run_started",
        "run_cancelled",
    ]


async def test_a_stale_copy_is_refused_and_nothing_is_written(
    store: SqlRunStore, other_store: SqlRunStore
) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    await store.save(state)
    mine = await store.load(state.run_id)
    theirs = await other_store.load(state.run_id)
    assert mine is not None and theirs is not None and mine.version == 1

    theirs.status = RunStatus.CANCELLED
    theirs.error = "cancelled by U_ADMIN"
    await other_store.save(theirs)
    mine.final_answer = "a late answer"
    with pytest.raises(RunConflictError) as conflict:
        await store.save(mine)

    assert (conflict.value.expected, conflict.value.stored) == (1, 2)
    assert mine.version == 1, "a refused save leaves the caller's copy as it was"
    stored = await store.load(state.run_id)
    assert stored is not None
    assert (stored.status, stored.final_answer) == (RunStatus.CANCELLED, "")


async def test_a_new_run_cannot_take_an_existing_id(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    clash = make_state()
    clash.run_id = state.run_id
    with pytest.raises(RunConflictError):
        await store.save(clash)
    stored = await store.load(state.run_id)
    assert stored is not None and stored.version == 1


async def test_of_many_writers_holding_one_version_exactly_one_succeeds(
    store: SqlRunStore, other_store: SqlRunStore
) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    await store.save(state)
    copies = [await (store, other_store)[i % 2].load(state.run_id) for i in range(10)]

    async def write(i: int) -> bool:
        copy = copies[i]
        assert copy is not None
        copy.worker = f"host:{i}:token"
        try:
            await (store, other_store)[i % 2].save(copy)
        except RunConflictError:
            return False
        return True

    outcomes = await asyncio.gather(*(write(i) for i in range(10)))

    assert outcomes.count(True) == 1
    winner = outcomes.index(True)
    stored = await store.load(state.run_id)
    assert stored is not None
    assert (stored.version, stored.worker) == (2, f"host:{winner}:token")


async def test_fifty_busy_runs_lose_nothing(engine: AsyncEngine, other_engine: AsyncEngine) -> None:
    saves, spend = 10, TokenUsage(input_tokens=100, output_tokens=20, calls=1, cost_usd=0.001)

    async def one_run(index: int) -> str:
        current = engine if index % 2 else other_engine
        store, ledger = SqlRunStore(current), SqlUsageLedger(current)
        state = make_state(thread_ts=f"{index}.0", status=RunStatus.RUNNING)
        for step in range(saves):
            state.user_inputs.append(f"input {step}")
            await store.save(state, RunEvent(type=RunEventType.STEP_FINISHED, run_id=state.run_id))
            await ledger.record(state.run_id, spend, "offline")
            await asyncio.sleep(0)
        state.status = RunStatus.ANSWERED
        await store.save(state)
        return state.run_id

    run_ids = await asyncio.gather(*(one_run(i) for i in range(50)))

    assert await _count(engine, "SELECT count(*) FROM runs") == 50
    assert await _count(engine, "SELECT count(*) FROM runs WHERE version = 11") == 50
    assert await _count(engine, "SELECT count(*) FROM runs WHERE status = 'answered'") == 50
    assert await _count(engine, "SELECT count(*) FROM usage_ledger") == 500
    assert await _count(engine, "SELECT count(*) FROM run_events") == 500
    assert await _count(engine, "SELECT max(seq) FROM run_events") == 10
    store = SqlRunStore(engine)
    loaded = await store.load(run_ids[7])
    assert loaded is not None and len(loaded.user_inputs) == 1 + saves
    spent = await SqlUsageLedger(engine).spent_since(utcnow() - timedelta(hours=1))
    assert spent == pytest.approx(0.5)


async def test_read_then_write_increments_lose_nothing(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    state = make_state(with_intervention=False)
    await store.save(state)
    stores = [store, SqlRunStore(other_engine)]

    def bump(s: RunState) -> None:
        s.failure_count += 1

    await asyncio.gather(*(stores[i % 2].mutate(state.run_id, bump) for i in range(200)))

    loaded = await store.load(state.run_id)
    assert loaded is not None
    assert loaded.failure_count == 200
    assert loaded.version == 201
