"""Fitting the confidence map on scored cases, and judging a fit only on cases it never saw.

A map is fitted on the evidence features of evaluated answers (`CaseRecord.features`),
labelled by whether each answer held the expected fact (`CaseRecord.answer_correct`).
Figures measured on the cases a map was fitted on are optimistic by construction, so the
fit is judged **leave one set out**: for every set, a map fitted on all the *other* sets
scores it. `cross_validate` does that with any way of scoring a set under a map (re-running
its questions, in `bench/calibrate.py`), and reports in-sample figures beside it.

Pure: nothing here runs a question; the scorer passed in does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from agent.confidence import (
    CALIBRATIONS,
    Calibration,
    Link,
    _feature_value,
    _sigmoid,
    calibrated,
)
from agent.config import Thresholds
from agent.evaluation.cases import CaseKind
from agent.evaluation.metrics import EvalMetrics, compute_metrics
from agent.evaluation.records import CaseRecord

FEATURES: tuple[str, ...] = tuple(CALIBRATIONS["offline"].weights)
"""The features the shipped offline map weighs: a refit keeps the same ones."""

DEFAULT_L2 = 1.5
"""Ridge penalty on the weights (not the intercept) of a single fit (`grace calibrate`);
the shipped map's penalty is chosen by `fit_nested` instead."""

L2_GRID: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
"""The penalties `fit_nested` chooses from (roughly log-spaced, fixed before any fit)."""

WRONG_BUDGET = 0.03
"""The confidently-wrong goal (docs/quality.md): at most this share of the questions
answered at SILENT/NOTIFY without the expected fact."""


class CalibrationDataError(ValueError):
    """Too little to fit on: no answer with features, or only right or only wrong ones."""


@dataclass(frozen=True)
class Example:
    """One answer as the fit sees it: its feature values (in `FEATURES` order) and
    whether it was right."""

    case_id: str
    x: tuple[float, ...]
    right: bool


def examples(records: Sequence[CaseRecord], features: Sequence[str] = FEATURES) -> list[Example]:
    """The fit's examples: every final answer that carries evidence features, whichever
    way its confidence was computed (answers quoted from a person's reply, and runs
    without an answer, carry nothing to learn)."""
    out: list[Example] = []
    for record in records:
        found = record.features
        if (
            not record.has_final_answer
            or "answer_coverage" not in found
            or found.get("from_person")
        ):
            continue
        if found.get("verified"):
            continue  # the saved answer's fixed weight, not evidence features
        x = tuple(_feature_value(name, found) for name in features)
        out.append(Example(case_id=record.id, x=x, right=record.answer_correct))
    return out


def fit_calibration(
    records: Sequence[CaseRecord],
    *,
    features: Sequence[str] = FEATURES,
    l2: float = DEFAULT_L2,
    iterations: int = 50,
) -> Calibration:
    """The L2-regularised logistic regression of right-or-wrong on the answers' features
    (the intercept is not penalised), solved exactly by Newton's method: the map to ship
    or to store. Raises `CalibrationDataError` without both right and wrong answers."""
    rows = examples(records, features)
    labels = [e.right for e in rows]
    if not rows or all(labels) or not any(labels):
        raise CalibrationDataError(
            f"cannot fit on {len(rows)} answers with {sum(labels)} right: "
            "the fit needs both right and wrong answers"
        )
    theta = _newton(
        [((1.0, *e.x), e.right) for e in rows],
        start=[0.0] * (len(features) + 1),
        penalty=[0.0] + [l2] * len(features),
        iterations=iterations,
        tolerance=1e-9,
    )
    return Calibration(
        intercept=round(theta[0], 3),
        weights={name: round(w, 3) for name, w in zip(features, theta[1:], strict=True)},
    )


def fit_link(
    scores: Sequence[tuple[float, bool]], edges: Sequence[float], iterations: int = 100
) -> Link | None:
    """Platt scaling: the logistic regression of right-or-wrong on a map's log-odds
    (`scores`: log-odds and whether the answer was right), solved by Newton's method.
    None when there is nothing to learn from (only right or only wrong answers)."""
    labels = [right for _, right in scores]
    if not scores or all(labels) or not any(labels):
        return None
    try:
        slope, offset = _newton(
            [((z, 1.0), right) for z, right in scores],
            start=[1.0, 0.0],
            penalty=[0.0, 0.0],
            iterations=iterations,
            tolerance=1e-10,
        )
    except CalibrationDataError:
        return None  # every log-odds alike: no slope to learn
    return Link(slope=round(slope, 3), offset=round(offset, 3), edges=tuple(edges))


def _newton(
    rows: Sequence[tuple[Sequence[float], bool]],
    *,
    start: Sequence[float],
    penalty: Sequence[float],
    iterations: int,
    tolerance: float,
) -> list[float]:
    """The θ of a logistic regression of right-or-wrong on σ(θ · x), with a ridge
    penalty per coefficient (0: none), solved by Newton's method from `start` until no
    step moves a coefficient by `tolerance`: the map's fit and the link's share it. Raises
    `CalibrationDataError` when the data leave the fit without a unique solution."""
    width = len(start)
    theta = list(start)
    for _ in range(iterations):
        gradient = [c * t for c, t in zip(penalty, theta, strict=True)]
        hessian = [[penalty[i] if i == j else 0.0 for j in range(width)] for i in range(width)]
        for x, right in rows:
            p = _sigmoid(sum(t * v for t, v in zip(theta, x, strict=True)))
            for i in range(width):
                gradient[i] += (p - right) * x[i]
                for j in range(width):
                    hessian[i][j] += p * (1.0 - p) * x[i] * x[j]
        step = _solve(hessian, gradient)
        theta = [t - s for t, s in zip(theta, step, strict=True)]
        if max(abs(s) for s in step) < tolerance:
            break
    return theta


@dataclass(frozen=True)
class Candidate:
    """One penalty as the inner leave-one-set-out saw it (on the training sets only)."""

    l2: float
    cases: int
    confidently_wrong: int
    """Records whose out-of-fold score (link applied) is at NOTIFY or above, wrong."""
    one_fact: int
    """One-fact (answerable) records at NOTIFY or above, right."""
    log_odds: tuple[tuple[float, bool], ...]
    """The out-of-fold log-odds of the map alone (not capped by `missing_name`) and
    whether each answer was right: what the link is fitted on, if this penalty is
    chosen."""


@dataclass(frozen=True)
class NestedFit:
    calibration: Calibration
    """Fitted on every given set with the chosen penalty, the chosen link on top."""
    chosen: Candidate
    candidates: tuple[Candidate, ...]


def _logit_examples(records: Sequence[CaseRecord], calibration: Calibration) -> list[Example]:
    """Examples whose score is the map's own (not capped by `missing_name`), as log-odds."""
    return [
        Example(case_id=e.case_id, x=(calibration.log_odds(found),), right=e.right)
        for e, found in _with_features(records)
        if not found.get("missing_name")
    ]


def _with_features(records: Sequence[CaseRecord]) -> list[tuple[Example, dict[str, float]]]:
    by_id = {r.id: r.features for r in records}
    return [(e, by_id[e.case_id]) for e in examples(records)]


def _score(record: CaseRecord, calibration: Calibration) -> float | None:
    """The record's confidence under `calibration` (the `missing_name` cap included),
    without running it again; None for a record without an answer from evidence."""
    found = record.features
    if not record.has_final_answer or "answer_coverage" not in found:
        return None
    return calibrated(found, "offline", {"offline": calibration})


def inner_candidate(
    sets: Mapping[str, Sequence[CaseRecord]], l2: float, thresholds: Thresholds
) -> Candidate:
    """Leave one of `sets` out at a time, fit on the others with `l2`, and score it by its
    records' features (no run again); count what the levels would do: confidently wrong
    and one-fact right at NOTIFY or above. A link fitted on these out-of-fold log-odds
    would change no level (`Link`), so the counts are the map's own and only the chosen
    penalty's link is fitted (`fit_nested`)."""
    held: list[tuple[CaseRecord, Calibration]] = []
    pooled: list[Example] = []
    for fold in leave_one_set_out(sets):
        without = fit_calibration(fold.train, l2=l2)
        rows = sets[fold.held_out]
        held.extend((r, without) for r in rows)
        pooled.extend(_logit_examples(rows, without))
    wrong = one = 0
    for record, without in held:
        score = _score(record, without)
        if score is None or score < thresholds.notify:
            continue
        wrong += not record.answer_correct
        one += record.answer_correct and record.kind is CaseKind.ANSWERABLE
    return Candidate(
        l2=l2,
        cases=len(held),
        confidently_wrong=wrong,
        one_fact=one,
        log_odds=tuple((e.x[0], e.right) for e in pooled),
    )


def fit_nested(
    sets: Mapping[str, Sequence[CaseRecord]],
    *,
    grid: Sequence[float] = L2_GRID,
    budget: float = WRONG_BUDGET,
    thresholds: Thresholds | None = None,
) -> NestedFit:
    """The map to ship, every choice made on `sets` alone by leaving one of them out at a
    time (`inner_candidate`): the penalty whose out-of-fold answers get the most one-fact
    questions right at NOTIFY or above while the confidently wrong stay within `budget`
    of the questions (the goals; ties go to the stronger penalty; if none stays within,
    the fewest confidently wrong), and that penalty's `Link`. Then the map is fitted on
    every set with that penalty and carries that link.

    The penalty sets which answers go out without a person looking (the levels); the link
    makes the score say how often they are right, and changes no level. Chosen by
    log loss instead, the penalty comes out weak (0.1–0.25): calibrated, but more wrong
    answers cross NOTIFY (docs/quality.md)."""
    t = thresholds or Thresholds()
    candidates = tuple(inner_candidate(sets, l2, t) for l2 in grid)
    within = [c for c in candidates if c.confidently_wrong <= budget * c.cases]
    if within:
        chosen = max(within, key=lambda c: (c.one_fact, c.l2))
    else:
        chosen = min(candidates, key=lambda c: (c.confidently_wrong, -c.l2))
    base = fit_calibration([r for rows in sets.values() for r in rows], l2=chosen.l2)
    link = fit_link(chosen.log_odds, (t.confirm, t.notify, t.silent))
    return NestedFit(
        calibration=base.model_copy(update={"link": link}),
        chosen=chosen,
        candidates=candidates,
    )


Fitter = Callable[[Sequence[CaseRecord]], Calibration]
SetFitter = Callable[[Mapping[str, Sequence[CaseRecord]]], Calibration]
"""Fits on the training sets kept apart, for choices made inside them (`fit_nested`)."""
Scorer = Callable[[str, Calibration], Awaitable[Sequence[CaseRecord]]]
"""Scores the named set under a map: its cases' records as they come out with that map."""


@dataclass(frozen=True)
class Fold:
    """One leave-one-set-out split: fit on `train` (every other set), score `held_out`."""

    held_out: str
    train: tuple[CaseRecord, ...]


def leave_one_set_out(sets: Mapping[str, Sequence[CaseRecord]]) -> list[Fold]:
    """One fold per set; a fold's training records never include the scored set's."""
    if len(sets) < 2:
        raise CalibrationDataError("leaving one set out needs at least two sets")
    return [
        Fold(
            held_out=name,
            train=tuple(r for other, rows in sets.items() if other != name for r in rows),
        )
        for name in sets
    ]


def folds(records: Sequence[CaseRecord], k: int) -> dict[str, list[CaseRecord]]:
    """One case file cut into `k` named folds (every k-th record, so each fold mixes the
    file's kinds as the file does), to cross-validate on a single set with
    `cross_validate` when there are no separate sets to leave out."""
    if not 2 <= k <= len(records):
        raise CalibrationDataError(f"cannot cut {len(records)} cases into {k} folds")
    return {f"fold {i + 1}": list(records[i::k]) for i in range(k)}


class Figures(BaseModel):
    """The quality figures of one set (or the pooled sets) under one map."""

    cases: int
    one_fact: int
    """Answerable cases right at SILENT/NOTIFY (the devsets' rule)."""
    one_fact_n: int
    silent_right: int
    silent_n: int
    notify_right: int
    notify_n: int
    """Final answers of the cases whose first stop was NOTIFY, and how many were right."""
    confidently_wrong: int
    auroc: float | None
    ece: float | None
    recall_hits: int
    recall_n: int
    """recall@5 over the one-fact (answerable) cases that name a source."""
    held_back: int
    held_back_n: int
    """Questions the documents cannot answer that were not answered at SILENT/NOTIFY."""

    @classmethod
    def of(cls, metrics: EvalMetrics) -> Figures:
        one = metrics.per_kind["answerable"]
        unanswerable = metrics.per_kind["unanswerable"]
        silent, notify = metrics.per_level["silent"], metrics.per_level["notify"]
        return cls(
            cases=metrics.cases,
            one_fact=one.correct,
            one_fact_n=one.n,
            silent_right=silent.right,
            silent_n=silent.answers,
            notify_right=notify.right,
            notify_n=notify.answers,
            confidently_wrong=metrics.confidently_wrong,
            auroc=metrics.auroc,
            ece=metrics.ece,
            recall_hits=one.recall_hits,
            recall_n=one.recall_n,
            held_back=unanswerable.correct,
            held_back_n=unanswerable.n,
        )


class SetResult(BaseModel):
    name: str
    in_sample: Figures
    """Scored under the map fitted on every set, this one included."""
    out_of_sample: Figures
    """Scored under the map fitted on every other set."""
    fitted_without: Calibration
    """The map that scored it out of sample."""


class CrossValidation(BaseModel):
    sets: list[SetResult]
    pooled_in_sample: Figures
    pooled_out_of_sample: Figures
    """Every set's out-of-sample records together (AUROC and ECE over all of them)."""
    fitted_on_all: Calibration
    """The map to ship: fitted on every set."""


async def cross_validate(
    sets: Mapping[str, Sequence[CaseRecord]],
    score: Scorer,
    fit: Fitter = fit_calibration,
    *,
    fit_sets: SetFitter | None = None,
) -> CrossValidation:
    """Fit on all sets and score each (in sample); then, for each set, fit on the others
    and score it (out of sample). `sets` are records that carry features (from runs under
    any map); `score` produces a set's records under a given map. With `fit_sets`, each
    fit is given the training sets apart (and `fit` is not used), so that what it chooses
    it chooses on them alone."""

    def fit_on(names: Sequence[str]) -> Calibration:
        if fit_sets is not None:
            return fit_sets({name: sets[name] for name in names})
        return fit([r for name in names for r in sets[name]])

    on_all = fit_on(list(sets))
    inside: dict[str, list[CaseRecord]] = {}
    outside: dict[str, list[CaseRecord]] = {}
    results: list[SetResult] = []
    for fold in leave_one_set_out(sets):
        without = fit_on([name for name in sets if name != fold.held_out])
        inside[fold.held_out] = list(await score(fold.held_out, on_all))
        outside[fold.held_out] = list(await score(fold.held_out, without))
        results.append(
            SetResult(
                name=fold.held_out,
                in_sample=Figures.of(compute_metrics(inside[fold.held_out])),
                out_of_sample=Figures.of(compute_metrics(outside[fold.held_out])),
                fitted_without=without,
            )
        )
    return CrossValidation(
        sets=results,
        pooled_in_sample=Figures.of(compute_metrics([r for v in inside.values() for r in v])),
        pooled_out_of_sample=Figures.of(compute_metrics([r for v in outside.values() for r in v])),
        fitted_on_all=on_all,
    )


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix · x = vector, by Gaussian elimination with partial pivoting (the
    matrix is small, symmetric and positive definite)."""
    n = len(vector)
    a = [[*row, v] for row, v in zip(matrix, vector, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        if abs(a[col][col]) < 1e-12:
            raise CalibrationDataError("the features are degenerate: no unique fit")
        for row in range(col + 1, n):
            factor = a[row][col] / a[col][col]
            for k in range(col, n + 1):
                a[row][k] -= factor * a[col][k]
    x = [0.0] * n
    for row in reversed(range(n)):
        x[row] = (a[row][n] - sum(a[row][k] * x[k] for k in range(row + 1, n))) / a[row][row]
    return x
