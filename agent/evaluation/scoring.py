"""Whether an answer holds the expected fact, and whether a case went right for its kind.

Matching is a case-insensitive substring test after NFKC normalisation (full-width and
half-width forms compare equal) with thousands separators dropped ("2,000" = "2000"); a
number must not be part of a longer number.
"""

from __future__ import annotations

import re
import unicodedata

from agent.evaluation.cases import CaseKind, EvalCase
from agent.evaluation.records import CaseRecord

_THOUSANDS = re.compile(r"(?<=\d),(?=\d)")
ANSWER_LEVELS = frozenset({"silent", "notify"})
"""Levels at which the bot answers on its own (no human looks first)."""


def normalise(text: str) -> str:
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text)).casefold()


def contains(answer: str, expected: str) -> bool:
    """`expected` occurs in `answer`, and a number is not part of a longer one
    ("5 days" is not found in "15 days", "$150" not in "$1,500")."""
    needle = normalise(expected).strip()
    if not needle:
        return False
    pattern = re.escape(needle)
    if needle[0].isdigit():
        pattern = r"(?<![\d.])" + pattern
    if needle[-1].isdigit():
        pattern += r"(?!\d|[.]\d)"
    return re.search(pattern, normalise(answer)) is not None


def answer_correct(case: EvalCase, answer: str) -> bool:
    """The answer holds the expected fact. Nothing is right for a question that has no
    answer in the documents (unanswerable) or no single answer (ambiguous)."""
    if not answer or case.kind in (CaseKind.UNANSWERABLE, CaseKind.AMBIGUOUS):
        return False
    expected = case.expected
    if not expected:
        return False
    if case.kind is CaseKind.MULTI:
        return all(contains(answer, e) for e in expected)
    return any(contains(answer, e) for e in expected)


def answered_alone(record: CaseRecord) -> bool:
    """It answered at SILENT or NOTIFY: nobody was asked before the answer was shown."""
    return record.status == "answered" and record.level in ANSWER_LEVELS


def case_correct(case: EvalCase, record: CaseRecord) -> bool:
    """The devsets' rule for the case's kind, judged at the run's first stop (the answer
    after Proceed counts only for contradictory cases, which must pause or notify)."""
    if case.kind is CaseKind.ANSWERABLE:
        return answered_alone(record) and answer_correct(case, record.answer)
    if case.kind is CaseKind.MULTI:
        return (
            record.status == "answered"
            and record.level != "escalate"
            and answer_correct(case, record.answer)
        )
    if case.kind is CaseKind.UNANSWERABLE:
        return not answered_alone(record)
    if case.kind is CaseKind.AMBIGUOUS:
        return record.level in ("asked", "escalate")
    return record.level != "silent" and answer_correct(case, record.final_answer)


def confidently_wrong(case: EvalCase, record: CaseRecord) -> bool:
    """Answered on its own (SILENT/NOTIFY) without the expected fact."""
    return answered_alone(record) and not answer_correct(case, record.answer)


def recall_hit(case: EvalCase, top: list[str]) -> bool | None:
    """A passage from one of the case's source files is among `top`; None when the case
    names no source."""
    if not case.source:
        return None
    wanted = {normalise(s) for s in case.source}
    return any(normalise(name) in wanted for name in top)
