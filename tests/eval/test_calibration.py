"""Fitting the confidence map, and leave-one-set-out (agent/evaluation/calibration.py), on
made-up case records."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from agent.confidence import Calibration
from agent.evaluation import CaseKind, CaseRecord
from agent.evaluation.calibration import (
    FEATURES,
    CalibrationDataError,
    cross_validate,
    examples,
    fit_calibration,
    folds,
    leave_one_set_out,
)


def record(
    case_id: str,
    right: bool,
    *,
    coverage: float = 0.5,
    answered: bool = True,
    level: str = "notify",
    **extra: float,
) -> CaseRecord:
    """An answered one-fact case whose answer has `coverage` as its answer_coverage."""
    return CaseRecord(
        id=case_id,
        kind=CaseKind.ANSWERABLE,
        question="q",
        status="answered" if answered else "paused",
        level=level if answered else "confirm",
        answer="a" if answered else "",
        final_status="answered" if answered else "paused",
        final_answer="a" if answered else "",
        final_confidence=0.5 if answered else None,
        answer_correct=right,
        correct=right and level in ("silent", "notify"),
        confidently_wrong=not right and level in ("silent", "notify"),
        features={"answer_coverage": coverage, "calibrated": 0.5, **extra},
    )


def made_up_set(prefix: str, n: int, seed: int) -> list[CaseRecord]:
    """Answers whose coverage tells right from wrong, with some noise."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        right = i % 2 == 0
        coverage = min(1.0, max(0.0, (0.75 if right else 0.3) + rng.uniform(-0.25, 0.25)))
        rows.append(record(f"{prefix}-{i}", right, coverage=coverage))
    return rows


def test_a_fold_never_trains_on_the_set_it_scores() -> None:
    sets = {name: made_up_set(name, 6, seed) for seed, name in enumerate(("en", "ja", "man"))}
    folds = leave_one_set_out(sets)
    assert [f.held_out for f in folds] == ["en", "ja", "man"]
    for fold in folds:
        trained = {r.id for r in fold.train}
        scored = {r.id for r in sets[fold.held_out]}
        assert not trained & scored
        assert trained == {
            r.id for name, rows in sets.items() if name != fold.held_out for r in rows
        }


def test_one_set_cannot_be_left_out() -> None:
    with pytest.raises(CalibrationDataError):
        leave_one_set_out({"only": made_up_set("only", 4, 0)})


async def test_each_set_is_scored_out_of_sample_by_a_map_fitted_without_it() -> None:
    sets = {name: made_up_set(name, 8, seed) for seed, name in enumerate(("a", "b", "c"))}
    trained_on: list[set[str]] = []

    def fit(records: Sequence[CaseRecord]) -> Calibration:
        trained_on.append({r.id for r in records})
        # the map's intercept names the fit, so the scorer can tell which one it got
        return Calibration(intercept=float(len(trained_on) - 1), weights={})

    scored: list[tuple[str, set[str]]] = []

    async def score(name: str, calibration: Calibration) -> list[CaseRecord]:
        scored.append((name, trained_on[int(calibration.intercept)]))
        return sets[name]

    result = await cross_validate(sets, score, fit=fit)

    everything = {r.id for rows in sets.values() for r in rows}
    assert trained_on[0] == everything  # the in-sample map
    out_of_sample = [(name, ids) for name, ids in scored if ids != everything]
    assert [name for name, _ in out_of_sample] == ["a", "b", "c"]
    for name, ids in out_of_sample:
        assert not ids & {r.id for r in sets[name]}, name
        assert ids == everything - {r.id for r in sets[name]}
    assert [s.name for s in result.sets] == ["a", "b", "c"]
    assert result.pooled_out_of_sample.cases == 24
    assert result.sets[0].in_sample.one_fact_n == 8


def test_the_fit_learns_which_way_a_feature_points() -> None:
    rows = made_up_set("x", 60, 1)
    fitted = fit_calibration(rows)
    assert set(fitted.weights) == set(FEATURES)
    assert fitted.weights["answer_coverage"] > 0
    high = fitted.probability({"answer_coverage": 0.9})
    low = fitted.probability({"answer_coverage": 0.2})
    assert high > 0.5 > low


def test_a_stronger_penalty_shrinks_the_weights() -> None:
    rows = made_up_set("x", 60, 2)
    loose = fit_calibration(rows, l2=0.1).weights["answer_coverage"]
    tight = fit_calibration(rows, l2=10.0).weights["answer_coverage"]
    assert 0 < tight < loose


def test_only_answers_scored_from_evidence_are_examples() -> None:
    rows = [
        record("kept", True),
        record("no-answer", True, answered=False),
        record("from-person", True, from_person=1.0),
        record("weighted-mean", False).model_copy(update={"features": {"base": 0.4}}),
    ]
    assert [e.case_id for e in examples(rows)] == ["kept"]


def test_nothing_to_learn_from_is_refused() -> None:
    with pytest.raises(CalibrationDataError):
        fit_calibration([record(f"r{i}", True) for i in range(5)])
    with pytest.raises(CalibrationDataError):
        fit_calibration([])


def test_one_case_file_is_cut_into_folds_that_share_no_case() -> None:
    rows = made_up_set("one", 11, 3)
    cut = folds(rows, 3)
    assert list(cut) == ["fold 1", "fold 2", "fold 3"]
    ids = [r.id for fold in cut.values() for r in fold]
    assert sorted(ids) == sorted(r.id for r in rows) and len(set(ids)) == len(ids)
    for fold in leave_one_set_out(cut):
        assert not {r.id for r in fold.train} & {r.id for r in cut[fold.held_out]}
    with pytest.raises(CalibrationDataError):
        folds(rows, 1)
    with pytest.raises(CalibrationDataError):
        folds(rows[:2], 3)
