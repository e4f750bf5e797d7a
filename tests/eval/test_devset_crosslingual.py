"""The cross-lingual development set (tests/eval/devset-crosslingual/): its case file
loads, every question is in another language than the file that answers it, and every
expected string is in a file the case names."""

from __future__ import annotations

from pathlib import Path

from agent.evaluation import CaseKind, load_cases
from agent.knowledge.tokenize import contains_japanese

DEVSET = Path(__file__).parent / "devset-crosslingual"


def test_the_set_loads_with_the_counts_its_readme_gives() -> None:
    cases = load_cases(DEVSET / "cases.jsonl")
    assert len(cases) == 36
    assert {c.kind for c in cases} == {CaseKind.ANSWERABLE}
    japanese = [c for c in cases if contains_japanese(c.q)]
    assert (len(cases) - len(japanese), len(japanese)) == (25, 11)


def test_each_question_is_answered_in_the_other_language() -> None:
    kb = DEVSET / "kb"
    for case in load_cases(DEVSET / "cases.jsonl"):
        texts = [(kb / name).read_text(encoding="utf-8").casefold() for name in case.source]
        assert contains_japanese(case.q) != contains_japanese(texts[0]), case.id
        assert case.expect_any[0].casefold() in texts[0], case.id
        for expected in case.expect_any:
            assert any(expected.casefold() in t for t in texts), (case.id, expected)
