"""The licence-text development set (tests/eval/devset-docs/): its case file loads, its
counts are what its README says, and every expected string is in the file it names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agent.evaluation import CaseKind, load_cases

DEVSET = Path(__file__).parent / "devset-docs"


def test_the_set_loads_with_the_counts_its_readme_gives() -> None:
    cases = load_cases(DEVSET / "cases.jsonl")
    assert Counter(c.kind for c in cases) == {
        CaseKind.ANSWERABLE: 22,
        CaseKind.MULTI: 4,
        CaseKind.UNANSWERABLE: 6,
        CaseKind.AMBIGUOUS: 4,
        CaseKind.CONTRADICTORY: 3,
    }
    assert len({c.id for c in cases}) == len(cases)


def test_every_expected_string_is_in_a_source_file_and_the_current_one_first() -> None:
    kb = DEVSET / "kb"
    for case in load_cases(DEVSET / "cases.jsonl"):
        texts = [(kb / name).read_text(encoding="utf-8").casefold() for name in case.source]
        for expected in [*case.expect_any, *case.expect_all]:
            assert any(expected.casefold() in t for t in texts), (case.id, expected)
        if case.kind is CaseKind.CONTRADICTORY:
            assert case.current is not None
            assert case.current.casefold() in texts[0], case.id  # the current file first
            assert len(case.source) == 2, case.id  # and the older copy after it
        if case.kind is CaseKind.UNANSWERABLE:
            assert case.source == [] and case.expect_any == []
