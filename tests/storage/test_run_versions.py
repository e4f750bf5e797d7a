"""Optimistic concurrency on runs: a save succeeds only on the version it was loaded at,
so no writer silently overwrites another (a cancel, a worker that took a run over), and
leases are renewed only by the worker that holds them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.ports import RunConflictError
from agent.schemas import InterventionAction, InterventionAnswer, RunStatus, utcnow
from storage.db import make_engine
from storage.run_store import SqlRunStore
from storage.tables import RunRow
from tests.storage.helpers import make_state


@pytest.fixture
async def other_store(db_url: str) -> AsyncIterator[SqlRunStore]:
    """A second 'process': its own engine on the same database."""
    engine = make_engine(db_url)
    yield SqlRunStore(engine)
    await engine.dispose()


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


async def test_only_the_lease_holder_renews_and_renewing_is_not_a_new_version(
    store: SqlRunStore, engine: AsyncEngine
) -> None:
    state = make_state(status=RunStatus.RUNNING, with_intervention=False)
    state.worker = "host:1:holder"
    state.lease_expires_at = utcnow() + timedelta(seconds=30)
    await store.save(state)
    later = utcnow() + timedelta(minutes=5)

    assert await store.renew_lease(state.run_id, "host:2:intruder", later) is False
    assert await store.renew_lease(state.run_id, "host:1:holder", later) is True

    stored = await store.load(state.run_id)
    assert stored is not None
    assert (stored.version, stored.lease_expires_at) == (1, later)
    async with engine.connect() as connection:
        column = await connection.scalar(
            select(RunRow.lease_expires_at).where(RunRow.run_id == state.run_id)
        )
    assert column == later
    state.status = RunStatus.PAUSED  # the holder's save after a renewal still succeeds
    state.worker = state.lease_expires_at = None
    await store.save(state)
    assert await store.renew_lease(state.run_id, "host:1:holder", later) is False
    assert await store.renew_lease("no-such-run", "host:1:holder", later) is False


async def test_stranded_questions_are_closed_ones_a_paused_run_still_waits_on(
    store: SqlRunStore,
) -> None:
    answer = InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER")
    stranded = make_state(thread_ts="1.0")
    moved_on = make_state(thread_ts="2.0")
    untouched = make_state(thread_ts="3.0")
    for state in (stranded, moved_on, untouched):
        await store.save(state)
    for state in (stranded, moved_on):
        assert state.pending is not None
        assert (
            await store.claim_intervention(state.run_id, state.pending.intervention_id, answer)
        ).claimed
    moved_on.status = RunStatus.RUNNING  # its process moved the run on after the claim
    await store.save(moved_on)

    later = utcnow() + timedelta(seconds=1)
    found = await store.stranded_interventions(later)

    assert [(r.run_id, r.status.value) for r in found] == [(stranded.run_id, "answered")]
    assert found[0].answer == answer
    assert await store.stranded_interventions(utcnow() - timedelta(hours=1)) == []
