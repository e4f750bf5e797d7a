"""The fitted confidence maps `grace calibrate` stores: one per provider, replaced by the
next fit, forgotten by a reset, and what the composition root scores with."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.confidence import CALIBRATIONS, Calibration, FittedCalibration, in_force
from agent.ports import CalibrationStore
from storage.calibrations import SqlCalibrationStore


def fit(provider: str, intercept: float, *, when: datetime, cases: int = 40) -> FittedCalibration:
    return FittedCalibration(
        provider=provider,
        calibration=Calibration(
            intercept=intercept, weights={"answer_coverage": 1.25, "llm_self_eval": -0.5}
        ),
        fitted_at=when,
        cases_file="team/cases.jsonl",
        cases=cases,
        answers=cases - 3,
        folds=5,
    )


async def test_a_fit_round_trips_and_the_next_one_replaces_it(engine: AsyncEngine) -> None:
    store = SqlCalibrationStore(engine)
    assert isinstance(store, CalibrationStore)
    assert await store.load() == [] and await store.get("offline") is None

    first = fit("offline", -1.5, when=datetime(2026, 11, 1, 9, 30, tzinfo=UTC))
    gemini = fit("gemini", 0.25, when=datetime(2026, 11, 2, 10, 0, tzinfo=UTC), cases=31)
    await store.save(first)
    await store.save(gemini)
    assert await store.get("offline") == first
    assert await store.load() == [gemini, first]  # by provider

    second = fit("offline", -2.0, when=datetime(2026, 11, 3, 8, 0, tzinfo=UTC), cases=60)
    await store.save(second)
    assert await store.get("offline") == second
    assert len(await store.load()) == 2


async def test_a_reset_forgets_one_provider_and_the_shipped_map_applies_again(
    engine: AsyncEngine,
) -> None:
    store = SqlCalibrationStore(engine)
    await store.save(fit("offline", -1.5, when=datetime(2026, 11, 1, tzinfo=UTC)))
    await store.save(fit("gemini", 0.25, when=datetime(2026, 11, 1, tzinfo=UTC)))

    maps = in_force(await store.load())
    assert maps["offline"].intercept == -1.5 and maps["gemini"].intercept == 0.25

    assert await store.reset("offline") is True
    assert await store.reset("offline") is False  # nothing left to forget
    maps = in_force(await store.load())
    assert maps["offline"] == CALIBRATIONS["offline"]  # the shipped one
    assert maps["gemini"].intercept == 0.25
