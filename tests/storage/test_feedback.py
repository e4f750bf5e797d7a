"""Votes, the window of recent ones and the thresholds they move (storage/feedback.py)."""

from __future__ import annotations

import asyncio

from agent.config import Thresholds
from storage.db import make_engine
from storage.feedback import SqlFeedback, Voters
from storage.run_store import SqlRunStore


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
