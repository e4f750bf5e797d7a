"""Statistics on a small known dataset (storage/stats.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import insert

from agent.schemas import (
    InterventionAction,
    InterventionAnswer,
    RunState,
    RunStatus,
    TokenUsage,
    utcnow,
)
from storage.ledger import SqlUsageLedger
from storage.run_store import SqlRunStore
from storage.tables import UsageRow
from tests.samples import make_state


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
