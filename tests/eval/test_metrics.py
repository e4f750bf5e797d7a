"""Scoring and metrics on hand-made records whose values can be worked out on paper."""

from __future__ import annotations

import pytest

from agent.evaluation import CaseKind, CaseRecord, EvalCase, compute_metrics
from agent.evaluation.metrics import auroc, expected_calibration_error, pearson, percentile
from agent.evaluation.scoring import (
    answer_correct,
    case_correct,
    confidently_wrong,
    contains,
    normalise,
    recall_hit,
)


def record(
    level: str,
    *,
    kind: CaseKind = CaseKind.ANSWERABLE,
    status: str | None = None,
    answer: str = "",
    final: str | None = None,
    confidence: float | None = None,
    right: bool = False,
    correct: bool = False,
    pause: str | None = None,
    replans: int = 0,
    seconds: float = 0.1,
) -> CaseRecord:
    status = status or ("answered" if level in ("silent", "notify") else "paused")
    final_answer = answer if final is None else final
    return CaseRecord(
        id=f"r{level}{confidence}",
        kind=kind,
        question="q",
        status=status,
        level=level,
        pause=pause,
        answer=answer,
        final_status="answered" if final_answer else status,
        final_answer=final_answer,
        final_confidence=confidence,
        answer_correct=right,
        correct=correct,
        replans=replans,
        seconds=seconds,
        plan_generated=True,
    )


def test_auroc_by_hand() -> None:
    # right answers score 0.9 and 0.7, wrong ones 0.8 and 0.6: 3 of 4 pairs ordered
    assert auroc([0.9, 0.8, 0.7, 0.6], [True, False, True, False]) == pytest.approx(0.75)
    assert auroc([0.9, 0.1], [True, False]) == pytest.approx(1.0)
    assert auroc([0.1, 0.9], [True, False]) == pytest.approx(0.0)
    assert auroc([0.5, 0.5, 0.5], [True, False, True]) == pytest.approx(0.5)  # ties count half
    assert auroc([0.4, 0.6], [True, True]) is None


def test_expected_calibration_error_by_hand() -> None:
    # bin [0.9, 1]: confidence 0.95, half right → 0.45 · 2/4; bin [0.1, 0.2): 0.15 · 2/4
    scores = [0.95, 0.95, 0.15, 0.15]
    labels = [True, False, False, False]
    assert expected_calibration_error(scores, labels) == pytest.approx(0.3)
    assert expected_calibration_error([1.0, 1.0], [True, True]) == pytest.approx(0.0)
    assert expected_calibration_error([], []) is None


def test_percentile_and_correlation() -> None:
    assert percentile([float(v) for v in range(1, 21)], 95) == 19.0
    assert percentile([3.0, 1.0, 2.0], 95) == 3.0
    assert percentile([], 95) is None
    assert pearson([0.2, 0.4, 0.6], [0.0, 0.0, 1.0]) == pytest.approx(0.8660254)
    assert pearson([0.5, 0.5], [0.0, 1.0]) is None


def test_matching_ignores_case_width_and_thousands_separators() -> None:
    assert normalise("Ｔｅｎ ＤＡＹＳ ２，０００円") == "ten days 2000円"
    assert contains("New hires may spend up to $1,500.", "$1500")
    assert contains("入社6か月後に10日付与", "１０日")
    assert not contains("up to $1,500", "$150")  # a number is not part of a longer one
    assert not contains("15 business days", "5 business days")
    assert not contains("version 2.5", "2")
    assert contains("30 days.", "30 days") and contains("(30)", "30")


def test_each_kind_is_scored_by_its_rule() -> None:
    fact = EvalCase(id="a", kind=CaseKind.ANSWERABLE, q="q", expect_any=["$250", "250 dollars"])
    assert case_correct(fact, record("silent", answer="It is $250."))
    assert case_correct(fact, record("notify", answer="250 Dollars"))
    assert not case_correct(fact, record("confirm", final="It is $250."))
    assert not case_correct(fact, record("silent", answer="It is $300."))

    multi = EvalCase(id="m", kind=CaseKind.MULTI, q="q", expect_all=["$50", "$75"])
    both = "Internet $50, phone $75."
    assert case_correct(multi, record("confirm", status="answered", answer=both))
    assert not case_correct(multi, record("escalate", status="answered", answer=both))
    assert not case_correct(multi, record("silent", answer="Internet $50."))

    none = EvalCase(id="u", kind=CaseKind.UNANSWERABLE, q="q")
    assert case_correct(none, record("escalate", pause="escalate"))
    assert case_correct(none, record("confirm", status="answered", answer="not found"))
    assert not case_correct(none, record("notify", answer="Ulaanbaatar"))
    assert not answer_correct(none, "anything at all")

    vague = EvalCase(id="b", kind=CaseKind.AMBIGUOUS, q="q")
    assert case_correct(vague, record("asked", pause="ask_user"))
    assert case_correct(vague, record("escalate", pause="escalate"))
    assert not case_correct(vague, record("confirm", pause="confirm"))

    stale = EvalCase(
        id="c", kind=CaseKind.CONTRADICTORY, q="q", expect_any=["16", "12"], current="16 weeks"
    )
    assert case_correct(stale, record("notify", answer="16 weeks (2024); 12 weeks (2019)"))
    assert case_correct(stale, record("confirm", pause="confirm", final="16 weeks"))
    assert not case_correct(stale, record("silent", answer="16 weeks"))
    assert not case_correct(stale, record("notify", answer="12 weeks"))
    assert answer_correct(stale, "16 weeks") and not answer_correct(stale, "12 weeks")

    assert confidently_wrong(fact, record("notify", answer="$300"))
    assert not confidently_wrong(fact, record("confirm", status="answered", answer="$300"))
    assert confidently_wrong(vague, record("silent", answer="November 15"))


def test_recall_looks_for_any_source_file_among_the_top_five() -> None:
    case = EvalCase(id="a", kind=CaseKind.ANSWERABLE, q="q", expect_any=["x"], source=["b.md"])
    assert recall_hit(case, ["a.md", "b.md"]) is True
    assert recall_hit(case, ["a.md"]) is False
    assert recall_hit(case.model_copy(update={"source": []}), ["a.md"]) is None


def test_metrics_over_records() -> None:
    records = [
        record("silent", answer="ok", confidence=0.95, right=True, correct=True),
        record("silent", answer="bad", confidence=0.9, right=False),
        record("notify", answer="ok", confidence=0.75, right=True, correct=True, replans=2),
        record("confirm", pause="confirm", final="ok", confidence=0.5, right=True, seconds=0.3),
        record("escalate", pause="escalate", kind=CaseKind.UNANSWERABLE, correct=True),
    ]
    records[1].confidently_wrong = True
    m = compute_metrics(records)
    assert (m.cases, m.correct, m.accuracy) == (5, 3, 0.6)
    assert m.per_kind["answerable"].n == 4 and m.per_kind["answerable"].correct == 2
    assert m.per_kind["unanswerable"].rate == 1.0
    assert m.per_kind["multi"].n == 0 and m.per_kind["multi"].rate is None
    level = {k: (v.n, v.answers, v.right, v.rate) for k, v in m.per_level.items()}
    assert level["silent"] == (2, 2, 1, 0.5)
    assert level["notify"] == (1, 1, 1, 1.0)
    assert level["confirm"] == (1, 1, 1, 1.0)
    assert level["escalate"] == (1, 0, 0, None)
    assert level["asked"] == (0, 0, 0, None)
    assert m.answers == 4
    # right answers 0.95, 0.75, 0.5 vs the wrong 0.9: only 0.95 ranks above it
    assert m.auroc == pytest.approx(1 / 3, abs=1e-4)
    assert (m.confidently_wrong, m.confidently_wrong_rate) == (1, 0.2)
    assert m.grace.false_positive_rate == pytest.approx(1 / 3, abs=1e-4)
    assert m.grace.unnecessary_hitl_rate == 1.0  # the confirm pause was right anyway
    assert m.grace.replan_success_rate == 1.0
    assert m.grace.avg_replan_count == pytest.approx(0.4)
    assert m.grace.completion_rate == 0.8
    assert m.grace.plan_generation_rate == 1.0
    assert m.p95_seconds == pytest.approx(0.3)
    assert m.mean_seconds == pytest.approx(0.14)
    assert sum(b.n for b in m.reliability) == 4
    assert compute_metrics(records, proceed=False).grace.unnecessary_hitl_rate is None
