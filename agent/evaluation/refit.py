"""`grace calibrate`: a team fits the confidence map on its own questions.

The cases are run once under the map in force ("before"); the map is then fitted on
their answers and judged **k-fold**: the cases are cut into folds, and each fold is run
again under a map fitted on the *other* folds ("after", out of sample). The map to store
is the one fitted on every case. Nothing here runs a question or stores anything: the
scorer passed in runs the cases, the caller stores the fit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from pydantic import BaseModel

from agent.confidence import MODEL_FACTORS, Calibration, FittedCalibration
from agent.evaluation.calibration import (
    DEFAULT_L2,
    FEATURES,
    CalibrationDataError,
    cross_validate,
    examples,
    fit_calibration,
    folds,
)
from agent.evaluation.metrics import LEVELS, EvalMetrics, LevelScore, compute_metrics
from agent.evaluation.records import CaseRecord

MIN_CASES = 30
"""Fewer cases than this give folds of a handful of answers: no figure would mean much."""
MIN_EACH = 2
"""Right and wrong answers needed at least: with one wrong answer, the fold holding it
would be fitted on right answers only."""
DEFAULT_FOLDS = 5

CaseScorer = Callable[[Sequence[str], Calibration], Awaitable[Sequence[CaseRecord]]]
"""Runs the cases with these ids under a map: their records as they come out with it."""


def features_for(provider: str) -> tuple[str, ...]:
    """What a provider's map weighs: the offline map's evidence features; a model that
    judges its own answers (Gemini) also gets its self-evaluation, coverage and search
    quality (`MODEL_FACTORS`), fitted the same way."""
    return FEATURES if provider == "offline" else (*FEATURES, *MODEL_FACTORS)


def check_cases(count: int) -> None:
    """Refuse a case file too small to fit and cross-validate on (before running it)."""
    if count < MIN_CASES:
        raise CalibrationDataError(
            f"The case file has {count} case{'s' if count != 1 else ''}; calibrating needs at "
            f"least {MIN_CASES} questions with known answers, asked the way your team asks "
            "them. Add cases and run it again."
        )


def check_answers(records: Sequence[CaseRecord], provider: str) -> None:
    """Refuse answers that hold nothing to learn: no wrong ones, or no right ones."""
    rows = examples(records, features_for(provider))
    right = sum(e.right for e in rows)
    wrong = len(rows) - right
    if wrong < MIN_EACH or right < MIN_EACH:
        missing = "wrong" if wrong < MIN_EACH else "right"
        raise CalibrationDataError(
            f"Nothing to learn from: of {len(rows)} answers, {right} were right and {wrong} "
            f"wrong; the fit needs at least {MIN_EACH} {missing} answers to tell right from "
            "wrong (and to check itself on cases it was not fitted on). Add cases the "
            f"documents answer {'less' if missing == 'wrong' else 'more'} plainly, or "
            "questions they cannot answer, and run it again."
        )


class Summary(BaseModel):
    """The figures `grace calibrate` prints for one map."""

    answers: int
    auroc: float | None
    ece: float | None
    confidently_wrong: int
    per_level: dict[str, LevelScore]
    """Cases whose first stop was at each level, their final answers and how many were right."""

    @classmethod
    def of(cls, metrics: EvalMetrics) -> Summary:
        return cls(
            answers=metrics.answers,
            auroc=metrics.auroc,
            ece=metrics.ece,
            confidently_wrong=metrics.confidently_wrong,
            per_level={k: v for k, v in metrics.per_level.items() if k in LEVELS or v.n},
        )


class Refit(BaseModel):
    """What `grace calibrate` found: the map to store, and how it does against the map in
    force on these cases, out of sample."""

    fit: FittedCalibration
    before: Summary
    """The map in force, on every case (it was not fitted on them)."""
    after: Summary
    """Each fold under the map fitted on the other folds, pooled."""
    in_sample: Summary
    """Each fold under the map fitted on every case: optimistic, shown for comparison."""
    right: int
    wrong: int


async def refit(
    records: Sequence[CaseRecord],
    score: CaseScorer,
    *,
    provider: str,
    cases_file: str,
    k: int = DEFAULT_FOLDS,
    l2: float = DEFAULT_L2,
    now: datetime,
) -> Refit:
    """Fit the provider's map on `records` (the cases as run under the map in force) and
    cross-validate it over `k` folds with `score`. Raises `CalibrationDataError` when the
    records hold too little to learn from."""
    check_cases(len(records))
    check_answers(records, provider)
    features = features_for(provider)
    rows = {e.case_id: e.right for e in examples(records, features)}
    # wrong answers first, then right ones, then the rest: every k-th record then spreads
    # each kind over the folds, so every fold's training cases hold both
    ordered = sorted(records, key=lambda r: (r.id not in rows, rows.get(r.id, False)))
    sets = folds(ordered, min(k, len(ordered)))
    runs: dict[tuple[str, str], list[CaseRecord]] = {}

    async def score_fold(name: str, calibration: Calibration) -> list[CaseRecord]:
        done = list(await score([r.id for r in sets[name]], calibration))
        runs[(name, calibration.model_dump_json())] = done
        return done

    def fit(train: Sequence[CaseRecord]) -> Calibration:
        return fit_calibration(train, features=features, l2=l2)

    result = await cross_validate(sets, score_fold, fit=fit)
    on_all = result.fitted_on_all.model_dump_json()
    inside = [r for name in sets for r in runs[(name, on_all)]]
    outside = [r for s in result.sets for r in runs[(s.name, s.fitted_without.model_dump_json())]]
    right = sum(rows.values())
    return Refit(
        fit=FittedCalibration(
            provider=provider,
            calibration=result.fitted_on_all,
            fitted_at=now,
            cases_file=cases_file,
            cases=len(records),
            answers=len(rows),
            folds=len(sets),
        ),
        before=Summary.of(compute_metrics(records)),
        after=Summary.of(compute_metrics(outside)),
        in_sample=Summary.of(compute_metrics(inside)),
        right=right,
        wrong=len(rows) - right,
    )
