"""Fitting the confidence map, and leave-one-set-out (agent/evaluation/calibration.py), on
made-up case records."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import pytest

from agent.confidence import Calibration, Link
from agent.config import Thresholds
from agent.evaluation import CaseKind, CaseRecord
from agent.evaluation.calibration import (
    FEATURES,
    CalibrationDataError,
    cross_validate,
    examples,
    fit_calibration,
    fit_link,
    fit_nested,
    folds,
    inner_candidate,
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


def level(score: float, edges: Sequence[float] = (0.4, 0.7, 0.9)) -> int:
    return sum(score >= edge for edge in edges)


def test_a_link_never_changes_a_level() -> None:
    steep = Link(slope=2.0, offset=0.5, edges=(0.4, 0.7, 0.9))
    flat = Link(slope=0.5, offset=-0.5, edges=(0.4, 0.7, 0.9))
    for step in range(-60, 61):
        z = step / 10
        base = 1.0 / (1.0 + math.exp(-z))
        assert level(steep.apply(z)) == level(base), z
        assert level(flat.apply(z)) == level(base), z
    # an answer the map puts at NOTIFY is lifted, but stays under SILENT
    z = math.log(0.8 / 0.2)
    assert 0.8 < steep.apply(z) < 0.9
    assert steep.apply(math.log(0.88 / 0.12)) == pytest.approx(0.899)
    # a weaker link lowers it, but not under NOTIFY
    assert 0.7 <= flat.apply(z) < 0.8
    # above the last edge nothing holds it back
    z = math.log(0.95 / 0.05)
    assert steep.apply(z) > 0.95


def test_a_map_without_a_link_keeps_its_own_probability() -> None:
    plain = Calibration(intercept=0.5, weights={"answer_coverage": 1.0})
    assert plain.probability({"answer_coverage": 1.0}) == pytest.approx(1 / (1 + math.exp(-1.5)))
    linked = plain.model_copy(update={"link": Link(slope=1.0, offset=0.0, edges=())})
    assert linked.probability({"answer_coverage": 1.0}) == plain.probability(
        {"answer_coverage": 1.0}
    )


def test_the_link_learns_that_a_map_is_under_confident() -> None:
    rng = random.Random(4)
    scores = []
    for _ in range(400):
        z = rng.uniform(-3, 3)
        # right with probability σ(2z): the map's z says half of the true log-odds
        scores.append((z, rng.random() < 1 / (1 + math.exp(-2 * z))))
    link = fit_link(scores, (0.4, 0.7, 0.9))
    assert link is not None
    assert 1.6 < link.slope < 2.5
    assert abs(link.offset) < 0.4
    assert fit_link([(0.3, True), (1.0, True)], (0.7,)) is None


def made_up_sets() -> dict[str, list[CaseRecord]]:
    """Four sets whose wrong answers' coverage overlaps the right ones': a weak penalty
    answers more, and more wrongly."""
    sets: dict[str, list[CaseRecord]] = {}
    for seed, name in enumerate(("a", "b", "c", "d")):
        rng = random.Random(seed)
        rows = []
        for i in range(30):
            right = rng.random() < 0.6
            coverage = min(1.0, max(0.0, (0.8 if right else 0.5) + rng.uniform(-0.35, 0.35)))
            rows.append(record(f"{name}-{i}", right, coverage=coverage))
        sets[name] = rows
    return sets


GRID = (0.01, 0.3, 1.0, 3.0, 10.0)


def test_the_nested_fit_answers_most_within_the_wrong_answer_budget() -> None:
    sets = made_up_sets()
    fitted = fit_nested(sets, grid=GRID, budget=0.05)
    seen = [(c.l2, c.confidently_wrong, c.one_fact) for c in fitted.candidates]
    assert seen == [(0.01, 8, 34), (0.3, 3, 26), (1.0, 0, 20), (3.0, 0, 0), (10.0, 0, 0)]
    assert all(c.cases == 120 for c in fitted.candidates)
    # 0.01 answers most but is wrong 8 times in 120, over 5 %: 0.3 answers most within it
    assert fitted.chosen.l2 == 0.3
    assert fitted.calibration.link == fit_link(fitted.chosen.log_odds, (0.4, 0.7, 0.9))
    assert fitted.calibration.link is not None
    base = fit_calibration([r for rows in sets.values() for r in rows], l2=0.3)
    assert (fitted.calibration.intercept, fitted.calibration.weights) == (
        base.intercept,
        base.weights,
    )
    # with none within the budget, the fewest confidently wrong, then the strongest penalty
    assert fit_nested(sets, grid=GRID, budget=-1.0).chosen.l2 == 10.0


def test_an_inner_candidate_counts_what_the_levels_would_do() -> None:
    sets = made_up_sets()
    candidate = inner_candidate(sets, 1.0, Thresholds())
    # counted with the map alone: the link fitted on its out-of-fold log-odds moves no level
    link = fit_link(candidate.log_odds, (0.4, 0.7, 0.9))
    assert link is not None
    held: list[tuple[CaseRecord, float]] = []
    for fold in leave_one_set_out(sets):
        without = fit_calibration(fold.train, l2=1.0).model_copy(update={"link": link})
        held += [(r, without.probability(r.features)) for r in sets[fold.held_out]]
    at_notify = [(r, p) for r, p in held if p >= 0.7]
    assert candidate.confidently_wrong == sum(not r.answer_correct for r, _ in at_notify)
    assert candidate.one_fact == sum(r.answer_correct for r, _ in at_notify)


async def test_a_set_fitter_is_given_the_training_sets_apart() -> None:
    sets = {name: made_up_set(name, 8, seed) for seed, name in enumerate(("a", "b", "c"))}
    given: list[tuple[str, ...]] = []

    def fit_sets(train: Mapping[str, Sequence[CaseRecord]]) -> Calibration:
        given.append(tuple(train))
        return Calibration(intercept=0.0, weights={})

    async def score(name: str, calibration: Calibration) -> list[CaseRecord]:
        return sets[name]

    await cross_validate(sets, score, fit_sets=fit_sets)
    assert given == [("a", "b", "c"), ("b", "c"), ("a", "c"), ("a", "b")]
