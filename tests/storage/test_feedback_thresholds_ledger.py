"""Feedback, thresholds, the cost ledger and the statistics on a small known dataset."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import insert

from agent.config import Thresholds
from agent.ports import UsageLedger
from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    RunState,
    RunStatus,
    TokenUsage,
    utcnow,
)
from storage.db import make_engine
from storage.feedback import SqlFeedback, Voters
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore
from storage.tables import UsageRow
from tests.storage.helpers import make_state


async def record_feedback(
    store: SqlRunStore, *, run_id: str, user_id: str, confidence: float, was_correct: bool
) -> bool:
    """One vote as the bot casts it (storage/feedback.py); True for the user's first on
    the run. Everyone counts and nothing moves the thresholds: only the vote is tested."""
    outcome = await SqlFeedback(store.engine).vote(
        run_id=run_id,
        user_id=user_id,
        confidence=confidence,
        was_correct=was_correct,
        voters=Voters(everyone=True),
        window=10,
        default=Thresholds(),
        adjust=lambda _current, _history: None,
    )
    return outcome.first


async def test_feedback_counts_once_per_user_and_run(store: SqlRunStore) -> None:
    assert await record_feedback(store, run_id="r1", user_id="U1", confidence=0.9, was_correct=True)
    assert not await record_feedback(
        store, run_id="r1", user_id="U1", confidence=0.9, was_correct=True
    )
    assert await record_feedback(store, run_id="r1", user_id="U2", confidence=0.9, was_correct=True)
    assert await record_feedback(store, run_id="r2", user_id="U1", confidence=0.3, was_correct=True)
    # U1 changes their mind about r1: the vote is replaced where it stood.
    assert not await record_feedback(
        store, run_id="r1", user_id="U1", confidence=0.9, was_correct=False
    )

    assert await store.recent_feedback() == [(0.9, False), (0.9, True), (0.3, True)]
    assert await store.recent_feedback(limit=2) == [(0.9, True), (0.3, True)]


async def test_double_clicked_feedback_counts_once(store: SqlRunStore) -> None:
    results = await asyncio.gather(
        *(
            record_feedback(store, run_id="r1", user_id="U1", confidence=0.5, was_correct=True)
            for _ in range(10)
        )
    )
    assert results.count(True) == 1
    assert await store.recent_feedback() == [(0.5, True)]


async def test_thresholds_survive_a_restart(db_url: str, store: SqlRunStore) -> None:
    assert await store.load_thresholds() is None
    await store.save_thresholds(Thresholds(silent=0.95, notify=0.75, confirm=0.45))
    await store.save_thresholds(Thresholds(silent=0.92, notify=0.72, confirm=0.42))
    await store.engine.dispose()

    engine = make_engine(db_url)
    try:
        reloaded = await SqlRunStore(engine).load_thresholds()
    finally:
        await engine.dispose()
    assert reloaded == Thresholds(silent=0.92, notify=0.72, confirm=0.42)


async def test_ledger_sums(ledger: SqlUsageLedger) -> None:
    port: UsageLedger = ledger
    start = utcnow()
    await port.record(
        "r1", TokenUsage(input_tokens=100, output_tokens=10, calls=1, cost_usd=0.01), "m"
    )
    await port.record(
        "r1", TokenUsage(input_tokens=50, output_tokens=5, calls=2, cost_usd=0.02), "m"
    )
    await port.record("r2", TokenUsage(input_tokens=1, output_tokens=1, calls=1, cost_usd=0.5), "m")

    assert await port.spent_since(start - timedelta(seconds=1)) == pytest.approx(0.53)
    assert await port.spent_since(utcnow() + timedelta(seconds=1)) == 0.0
    assert await ledger.run_cost("r1") == pytest.approx(0.03)
    assert await ledger.run_cost("none") == 0.0
    totals = await ledger.totals(start - timedelta(seconds=1))
    assert (totals.input_tokens, totals.output_tokens, totals.calls) == (151, 16, 4)
    assert totals.cost_usd == pytest.approx(0.53)


async def test_stats_on_a_known_dataset(store: SqlRunStore, ledger: SqlUsageLedger) -> None:
    now = utcnow()
    recent = now - timedelta(minutes=10)

    runs: list[RunState] = []

    def run(status: RunStatus, *, replans: int, pause: bool, confidence: float = 0.5) -> None:
        state = make_state(status=status, replans=replans, with_intervention=pause)
        state.created_at = recent
        state.overall_confidence = confidence
        runs.append(state)

    run(RunStatus.ANSWERED, replans=1, pause=True, confidence=0.6)
    run(RunStatus.ANSWERED, replans=0, pause=False, confidence=0.9)
    run(RunStatus.CANCELLED, replans=2, pause=True)
    run(RunStatus.FAILED, replans=1, pause=False)
    run(RunStatus.PAUSED, replans=0, pause=True)
    old = make_state(status=RunStatus.ANSWERED, replans=1)
    old.created_at = now - timedelta(days=2)
    for state in [*runs, old]:
        await store.save(state)
    first = runs[0].interventions[0]
    await store.claim_intervention(
        runs[0].run_id,
        first.intervention_id,
        InterventionAnswer(action=InterventionAction.PROCEED, user="U_ASKER"),
    )
    await ledger.record("x", TokenUsage(cost_usd=0.25), "m")
    await ledger.record("y", TokenUsage(cost_usd=0.5), "m")
    async with store.engine.begin() as connection:  # money spent long ago
        await connection.execute(
            insert(UsageRow).values(
                run_id="z", model="m", cost_usd=9.0, created_at=now - timedelta(days=400)
            )
        )

    stats = await store.stats(since=now - timedelta(hours=1))

    assert stats == {
        "runs": 5,
        "answered": 2,
        "cancelled": 1,
        "failed": 1,
        "paused": 1,
        "running": 0,
        "completion_rate": pytest.approx(0.4),
        "hitl_rate": pytest.approx(0.6),
        "replan_rate": pytest.approx(0.6),
        "replan_success_rate": pytest.approx(1 / 3),
        "avg_confidence": pytest.approx(0.75),
        "cost_usd": pytest.approx(0.75),
    }
    empty = await store.stats(since=now + timedelta(hours=1))
    assert empty["runs"] == 0 and empty["completion_rate"] == 0.0
