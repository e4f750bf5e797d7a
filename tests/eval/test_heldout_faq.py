"""The held-out set (tests/eval/heldout-faq/) is well formed. Nothing here runs GRACE on
it: its results are only reported, in aggregate, never asserted or looked into."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agent.evaluation import CaseKind, load_cases
from agent.evaluation.scoring import contains

HELDOUT = Path(__file__).parent / "heldout-faq"


def test_the_held_out_set_has_thirty_cases_or_more_of_every_kind_it_needs() -> None:
    cases = load_cases(HELDOUT / "cases.jsonl")
    kinds = Counter(c.kind for c in cases)
    assert len(cases) >= 30
    assert kinds[CaseKind.ANSWERABLE] >= 20
    assert kinds[CaseKind.MULTI] >= 3
    assert kinds[CaseKind.UNANSWERABLE] >= 5


def test_every_expected_value_is_in_the_file_the_case_names() -> None:
    for case in load_cases(HELDOUT / "cases.jsonl"):
        if case.kind in (CaseKind.UNANSWERABLE, CaseKind.AMBIGUOUS):
            assert not case.source and not case.expected, case.id
            continue
        texts = [(HELDOUT / "kb" / name).read_text(encoding="utf-8") for name in case.source]
        # a multi case needs every value; otherwise the first is quoted, the rest are
        # other ways an answer may write it
        wanted = case.expected if case.kind is CaseKind.MULTI else case.expected[:1]
        for expected in wanted:
            assert any(contains(text, expected) for text in texts), (case.id, expected)


def test_the_readme_says_it_is_held_out() -> None:
    text = (HELDOUT / "README.md").read_text(encoding="utf-8")
    assert "held out" in text and "never" in text
