"""Metrics over evaluated cases: per kind, per level, calibration (AUROC, ECE), the
seed's GraceMetrics, timing and retrieval recall. Pure functions of the records.

"Answers" below are the final answers (after Proceed where the run paused); an answer
is *right* when it holds the expected fact (`CaseRecord.answer_correct`; answers to
unanswerable and ambiguous questions are never right).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from agent.evaluation.cases import CaseKind
from agent.evaluation.records import CaseRecord

LEVELS = ("silent", "notify", "confirm", "escalate", "asked", "failed")
BINS = 10


class KindScore(BaseModel):
    n: int = 0
    correct: int = 0
    rate: float | None = None
    recall_n: int = 0
    """Cases of this kind that name `source` files."""
    recall_hits: int = 0
    recall_at_5: float | None = None


class LevelScore(BaseModel):
    """Cases whose first stop was at this level, and how many of their final answers
    were right."""

    n: int = 0
    answers: int = 0
    right: int = 0
    rate: float | None = None
    """right / answers."""


class ReliabilityBin(BaseModel):
    lower: float
    upper: float
    n: int
    mean_confidence: float | None
    accuracy: float | None


class GraceMetrics(BaseModel):
    """The seed's GraceMetrics (user_satisfaction needs people, so it is not here)."""

    plan_generation_rate: float | None = None
    """Cases for which a plan was made / cases."""
    completion_rate: float | None = None
    """Cases whose run reached an answer (after approval and Proceed) / cases."""
    confidence_accuracy: float | None = None
    """Pearson correlation of overall confidence with answer-right, over all answers."""
    false_positive_rate: float | None = None
    """SILENT/NOTIFY first-stop answers that are wrong / SILENT/NOTIFY first-stop answers."""
    unnecessary_hitl_rate: float | None = None
    """Answerable and multi cases that paused for a person (confirm, escalate, ask_user)
    whose Proceed answer was right anyway / such paused cases (None without Proceed)."""
    replan_success_rate: float | None = None
    """Cases that replanned before the first stop and were then right for their kind /
    cases that replanned."""
    avg_replan_count: float | None = None
    """Replans before the first stop, per case."""
    avg_cost_usd: float | None = None
    tokens_per_correct: float | None = None
    """All tokens spent / cases right for their kind."""


class EvalMetrics(BaseModel):
    cases: int
    correct: int
    accuracy: float | None
    per_kind: dict[str, KindScore]
    confidently_wrong: int
    confidently_wrong_rate: float | None
    confidently_wrong_ids: list[str] = Field(default_factory=list)
    per_level: dict[str, LevelScore]
    answers: int
    """Final answers with a confidence: what AUROC, ECE and the diagram are over."""
    auroc: float | None
    ece: float | None
    reliability: list[ReliabilityBin]
    grace: GraceMetrics
    mean_seconds: float | None
    p95_seconds: float | None
    recall_n: int
    recall_hits: int
    recall_at_5: float | None


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Probability that a random right answer scores above a random wrong one (ties
    count half); None unless both kinds are present."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    ordered = sorted(scores)
    ranks: dict[float, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[i]:
            j += 1
        ranks[ordered[i]] = (i + j) / 2 + 1  # average 1-based rank of the tied run
        i = j + 1
    rank_sum = sum(ranks[s] for s in pos)
    u = rank_sum - len(pos) * (len(pos) + 1) / 2
    return u / (len(pos) * len(neg))


def reliability_bins(
    scores: Sequence[float], labels: Sequence[bool], bins: int = BINS
) -> list[ReliabilityBin]:
    """Equal-width confidence bins [0, 0.1), …, [0.9, 1.0]."""
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for s, y in zip(scores, labels, strict=True):
        index = min(bins - 1, max(0, int(s * bins)))
        members[index].append((s, y))
    out = []
    for k, group in enumerate(members):
        out.append(
            ReliabilityBin(
                lower=round(k / bins, 4),
                upper=round((k + 1) / bins, 4),
                n=len(group),
                mean_confidence=round(fmean(s for s, _ in group), 4) if group else None,
                accuracy=round(sum(y for _, y in group) / len(group), 4) if group else None,
            )
        )
    return out


def expected_calibration_error(
    scores: Sequence[float], labels: Sequence[bool], bins: int = BINS
) -> float | None:
    """Σ over bins of (bin size / N) · |accuracy − mean confidence|."""
    if not scores:
        return None
    total = len(scores)
    ece = 0.0
    for b in reliability_bins(scores, labels, bins):
        if b.n and b.accuracy is not None and b.mean_confidence is not None:
            ece += b.n / total * abs(b.accuracy - b.mean_confidence)
    return ece


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 2:
        return None
    mx, my = fmean(xs), fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0–100)."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return ordered[index]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def compute_metrics(records: Sequence[CaseRecord], *, proceed: bool = True) -> EvalMetrics:
    per_kind: dict[str, KindScore] = {}
    for kind in [*(k.value for k in CaseKind), "all"]:
        group = [r for r in records if kind in ("all", r.kind.value)]
        with_source = [r for r in group if r.recall_hit is not None]
        hits = sum(1 for r in with_source if r.recall_hit)
        correct = sum(1 for r in group if r.correct)
        per_kind[kind] = KindScore(
            n=len(group),
            correct=correct,
            rate=rate(correct, len(group)),
            recall_n=len(with_source),
            recall_hits=hits,
            recall_at_5=rate(hits, len(with_source)),
        )

    levels = list(LEVELS) + sorted({r.level for r in records} - set(LEVELS))
    per_level: dict[str, LevelScore] = {}
    for level in levels:
        group = [r for r in records if r.level == level]
        answered = [r for r in group if r.has_final_answer]
        right = sum(1 for r in answered if r.answer_correct)
        per_level[level] = LevelScore(
            n=len(group), answers=len(answered), right=right, rate=rate(right, len(answered))
        )

    scored = [r for r in records if r.has_final_answer and r.final_confidence is not None]
    scores = [float(r.final_confidence or 0.0) for r in scored]
    labels = [r.answer_correct for r in scored]

    wrong = [r.id for r in records if r.confidently_wrong]
    alone = [r for r in records if r.status == "answered" and r.level in ("silent", "notify")]
    paused_answerable = [
        r
        for r in records
        if r.kind in (CaseKind.ANSWERABLE, CaseKind.MULTI)
        and r.pause in ("confirm", "escalate", "ask_user")
    ]
    replanned = [r for r in records if r.replans > 0]
    correct_cases = [r for r in records if r.correct]
    times = [r.seconds for r in records]
    n = len(records)
    grace = GraceMetrics(
        plan_generation_rate=rate(sum(r.plan_generated for r in records), n),
        completion_rate=rate(sum(r.has_final_answer for r in records), n),
        confidence_accuracy=_round(pearson(scores, [float(y) for y in labels])),
        false_positive_rate=rate(sum(not r.answer_correct for r in alone), len(alone)),
        unnecessary_hitl_rate=(
            rate(sum(r.answer_correct for r in paused_answerable), len(paused_answerable))
            if proceed
            else None
        ),
        replan_success_rate=rate(sum(r.correct for r in replanned), len(replanned)),
        avg_replan_count=_round(fmean(r.replans for r in records)) if records else None,
        avg_cost_usd=round(fmean(r.cost_usd for r in records), 6) if records else None,
        tokens_per_correct=(
            round(sum(r.tokens for r in records) / len(correct_cases), 1) if correct_cases else None
        ),
    )
    total = per_kind["all"]
    return EvalMetrics(
        cases=n,
        correct=total.correct,
        accuracy=total.rate,
        per_kind=per_kind,
        confidently_wrong=len(wrong),
        confidently_wrong_rate=rate(len(wrong), n),
        confidently_wrong_ids=wrong,
        per_level=per_level,
        answers=len(scored),
        auroc=_round(auroc(scores, labels)),
        ece=_round(expected_calibration_error(scores, labels)),
        reliability=reliability_bins(scores, labels),
        grace=grace,
        mean_seconds=_round(fmean(times)) if times else None,
        p95_seconds=_round(percentile(times, 95)),
        recall_n=total.recall_n,
        recall_hits=total.recall_hits,
        recall_at_5=total.recall_at_5,
    )
