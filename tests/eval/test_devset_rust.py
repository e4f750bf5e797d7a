"""A development set (tests/eval/devset-rust/), formerly the held-out one: Rust toolchain
documents, questions written before GRACE ever answered them. Fixes were later made from
its misses, so it is no longer held out, and `python -m bench.calibrate` fits on it.

Only the properties that hold on it are asserted; the README's "How good is it?" section
gives the figures that do not (one-fact answers, unanswerable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.eval.reports import eval_report, kind_counts, records

RUST = Path(__file__).parent / "devset-rust"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One in-process `grace eval --json` run on the set, shared by the tests below."""
    return eval_report(tmp_path_factory, RUST)


def test_the_whole_set_is_scored(report: dict[str, object]) -> None:
    assert kind_counts(report) == {
        "answerable": 15, "multi": 3, "unanswerable": 5, "ambiguous": 4,
        "contradictory": 3, "all": 30,
    }  # fmt: skip


def test_nothing_the_documents_cannot_answer_or_that_they_dispute_is_answered_silently(
    report: dict[str, object],
) -> None:
    for kind in ("unanswerable", "contradictory"):
        silent = [r["id"] for r in records(report, kind) if r["level"] == "silent"]
        assert silent == [], (kind, silent)


def test_vague_questions_ask_or_escalate(report: dict[str, object]) -> None:
    vague = records(report, "ambiguous")
    held = [r for r in vague if r["level"] in {"asked", "escalate"}]
    assert len(held) >= 0.6 * len(vague)


def test_the_right_document_is_found_and_confidence_separates_right_from_wrong(
    report: dict[str, object],
) -> None:
    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    assert metrics["recall_at_5"] >= 0.9
    assert metrics["auroc"] >= 0.8


def test_confidently_wrong_answers_stay_rare(report: dict[str, object]) -> None:
    # The goal is at most 5 %; this set measures 1 of 30 (3 %) since the calibration was
    # refitted with long reference pages (devset-extra), 2 before; this keeps it there.
    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    assert metrics["confidently_wrong"] <= 1, metrics["confidently_wrong_ids"]
