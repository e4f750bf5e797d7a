"""Exactly-once and no-lost-update guarantees under real concurrency on one SQLite file.

A second engine on the same file stands in for a second process / bot replica: it shares
nothing with the first but the database file.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.ports import RunEvent, RunEventType
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    InterventionStatus,
    RunState,
    RunStatus,
    TokenUsage,
    utcnow,
)
from storage.db import make_engine
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore
from tests.storage.helpers import make_request, make_state


@pytest.fixture
async def other_engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(db_url)
    yield engine
    await engine.dispose()


async def _count(engine: AsyncEngine, sql: str) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(text(sql))).scalar_one())


def _answer(user: str) -> InterventionAnswer:
    return InterventionAnswer(action=InterventionAction.PROCEED, user=user)


async def test_twenty_concurrent_claims_one_winner(store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id

    results = await asyncio.gather(
        *(
            store.claim_intervention(state.run_id, intervention_id, _answer(f"U{i}"))
            for i in range(20)
        )
    )

    winners = [r for r in results if r.claimed]
    assert len(winners) == 1
    winner = winners[0].answered_by
    assert winner is not None
    losers = [r for r in results if not r.claimed]
    assert len(losers) == 19
    assert {r.reason for r in losers} == {f"already answered by {winner}"}
    assert {r.answered_by for r in losers} == {winner}
    row = await store.get_intervention(intervention_id)
    assert row is not None and row.answered_by == winner


async def test_claims_from_two_processes_one_winner(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id
    stores = [store, SqlRunStore(other_engine)]

    results = await asyncio.gather(
        *(
            stores[i % 2].claim_intervention(state.run_id, intervention_id, _answer(f"U{i}"))
            for i in range(20)
        )
    )

    assert sum(r.claimed for r in results) == 1
    winner = next(r.answered_by for r in results if r.claimed)
    assert all(r.reason == f"already answered by {winner}" for r in results if not r.claimed)


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


async def test_twenty_concurrent_dedupes_one_first(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    stores = [store, SqlRunStore(other_engine)]
    results = await asyncio.gather(*(stores[i % 2].mark_processed("Ev42") for i in range(20)))
    assert results.count(True) == 1
    assert results.count(False) == 19


async def test_expiry_sweep_and_answer_race_one_winner(
    store: SqlRunStore, other_engine: AsyncEngine
) -> None:
    now = utcnow()
    state = make_state(with_intervention=False)
    requests = [
        make_request(state.run_id, step_id=i, expires_in=timedelta(minutes=-1), now=now)
        for i in range(10)
    ]
    fresh = make_request(state.run_id, step_id=99, expires_in=timedelta(hours=1), now=now)
    never = make_request(state.run_id, step_id=98, expires_in=None, now=now)
    state.interventions = [*requests, fresh, never]
    await store.save(state)
    sweeper = SqlRunStore(other_engine)

    assert await store.next_expiry() == now - timedelta(minutes=1)
    due = await store.due_interventions(now)
    assert {r.intervention_id for r in due} == {r.intervention_id for r in requests}

    async def race(intervention_id: str) -> tuple[bool, bool]:
        expired, claim = await asyncio.gather(
            sweeper.claim_expiry(intervention_id=intervention_id, now=now),
            store.claim_intervention(state.run_id, intervention_id, _answer("U_ASKER")),
        )
        return expired, claim.claimed

    outcomes = await asyncio.gather(*(race(r.intervention_id) for r in requests))

    assert all(expired != claimed for expired, claimed in outcomes)
    assert await store.due_interventions(now) == []
    assert await store.next_expiry() == fresh.expires_at
    assert not await store.claim_expiry(intervention_id=fresh.intervention_id, now=now)
    assert not await store.claim_expiry(intervention_id=never.intervention_id, now=now)
    statuses = {r.status for r in await store.intervention_rows(state.run_id)}
    assert statuses <= {
        InterventionStatus.ANSWERED,
        InterventionStatus.EXPIRED,
        InterventionStatus.PENDING,
    }
    expired_ids = [r.intervention_id for r, (exp, _) in zip(requests, outcomes, strict=True) if exp]
    for intervention_id in expired_ids:
        late = await store.claim_intervention(state.run_id, intervention_id, _answer("U_LATE"))
        assert (late.claimed, late.reason) == (False, "expired")


REPO_ROOT = Path(__file__).resolve().parents[2]
_CLAIMER = """
import asyncio, sys
from agent.schemas import InterventionAction, InterventionAnswer
from storage.db import make_engine
from storage.run_store import SqlRunStore

async def main(url: str, run_id: str, intervention_id: str, who: str) -> None:
    engine = make_engine(url)
    store = SqlRunStore(engine)
    answers = [InterventionAnswer(action=InterventionAction.PROCEED, user=f"{who}-{i}")
               for i in range(10)]
    results = await asyncio.gather(
        *(store.claim_intervention(run_id, intervention_id, a) for a in answers))
    await engine.dispose()
    print(sum(r.claimed for r in results))

asyncio.run(main(*sys.argv[1:]))
"""


async def test_claims_from_real_processes_one_winner(db_url: str, store: SqlRunStore) -> None:
    state = make_state()
    await store.save(state)
    intervention_id = state.interventions[0].intervention_id

    async def process(who: str) -> int:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CLAIMER,
            db_url,
            state.run_id,
            intervention_id,
            who,
            cwd=REPO_ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return int(out.decode().strip())

    claimed = await asyncio.gather(process("A"), process("B"))

    assert sum(claimed) == 1
    row = await store.get_intervention(intervention_id)
    assert row is not None and row.answered_by is not None
    assert row.answered_by.startswith(("A-", "B-"))
